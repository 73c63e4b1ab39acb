/* codegen.h: a prepared Relay module to C.
**
** codegen_module emits one C file and its header from a module that the
** compile entry point (src/driver/compile.c) has prepared: typed, with
** definitions only (no expression), after DeadCodeElimination,
** ToANormalForm and WrapPrimitives, so that every operator call is the
** body of a Primitive function:
** - every Relay function (globals and function literals, lambda-lifted)
**   becomes a C function with one signature (rlyrt_fn); a function literal
**   becomes a closure: its code plus the values of its free variables; a
**   closure bound by a recursive let calls itself through `self`;
** - calls in tail position to the function itself, or to a global of the
**   same group of mutually tail-calling globals, become jumps: loops run in
**   constant C stack;
** - match becomes a switch over the constructor tag, then the clauses
**   that can match that constructor in order;
** - every Primitive function becomes a kernel (lower/lower.h);
** - constants are one aligned binary blob (a string literal, which C
**   compilers read quickly; or, for big models built for the host, a file
**   the assembler includes with .incbin: codegen_module_ext), and static
**   tensor objects pointing into it; a constant weight a GEMM reads packed
**   is stored packed (consts.c);
** - a module description (rlyrt_module_info): every global with its Relay
**   type, an argument checker per function, the constructors by name;
** - NAME_module() and, in a shared library (RLYRT_SHARED_MODULE defined),
**   rlyrt_module_entry(); a typed entry point NAME_FN(const DLTensor *...,
**   DLTensor *out...) for every global whose parameters and result are
**   tensors (or a tuple of tensors) of static shape.
** The output is deterministic: the same module gives the same bytes. */
#ifndef RLY_CODEGEN_H
#define RLY_CODEGEN_H

#include "base/diag.h"
#include "base/strbuf.h"
#include "ir/ir.h"

/* What codegen_module learns about each kernel it emits (for the build
** description and --profile): malloc'd strings. */
typedef struct KernelDesc {
  char *ops;       /* "nn.dense, add, nn.bias_add" */
  char *shape;     /* "(1, 64)", "(1, 128) x4" */
  char *schedule;  /* from the lowering's comment: "GEMV float32"; "reference" */
} KernelDesc;

typedef struct KernelDescs {
  KernelDesc *data;
  int len, cap;
} KernelDescs;

typedef struct CodegenOptions {
  const char *name;      /* a C identifier: prefix of the exported symbols, and the module's name */
  const SourceMap *sm;   /* names source positions in run-time errors (may be NULL) */
  /* What the build is for (the header says it; zeroes: an unnamed
  ** version, the default target, level 0, no fusion, no profiling). */
  const char *version;   /* relayc's version */
  const char *target;    /* NULL or "": the default (run-time ISA dispatch); "native"; a triple */
  const char *isa;       /* native: the extensions the C compiler enables, space-separated (NULL: unknown) */
  int opt_level;         /* the passes' level, 0..3 */
  bool opt_size;         /* the C is compiled with -Os (the passes of level 2): the summary says so */
  bool fuse;             /* FuseOps ran */
  bool profile;          /* time every kernel (rlyrt_kernel_record) */
  int threads;           /* the kernels' default thread count (--threads): N >= 1; 0 (not given): 1;
                            below 0: one per CPU. rlyrt_module_set_threads changes it. */
  StrBuf *summary;       /* NULL, or receives the build description (lines of text) */
  KernelDescs *kernels;  /* set by codegen_module for its own use: callers leave it NULL */
} CodegenOptions;

/* Appends to out the ISA extensions ("avx2 fma avx512f", GCC's -m names)
** that the predefined macros in predefined (`cc -dM -E` output) enable. */
void codegen_isa_names(const char *predefined, StrBuf *out);

/* True for a --target that compiles with -march=native. */
bool codegen_target_native(const CodegenOptions *o);

/* True when name can be a module name (a C identifier, at most 64 bytes). */
bool codegen_name_ok(const char *name);

/* Emits the text of NAME.c (appended to c) and NAME.h (to h) for m,
** prepared as above (new types and ids may be added to m's arena; its
** nodes are not changed). Returns false, appending nothing, after
** reporting errors to d (constructs the back end does not support). */
bool codegen_module(Module *m, const CodegenOptions *o, StrBuf *c, StrBuf *h, Diag *d);

#endif
