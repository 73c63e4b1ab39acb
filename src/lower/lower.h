/* lower.h: from a Primitive function (one kernel) to C.
**
** A Primitive function is a function literal with the attribute
** Primitive=1 whose body computes with operators only: one operator call
** on its parameters, or a fused group (calls on the parameters and on each
** other, nested or through `%0 = ...;` bindings or let, with constants,
** tuples and projections; lower/group.c). Type inference has run: the
** parameters, the body and every call in it carry their types.
**
** Every kernel has one C signature:
**   static rlyrt_status NAME(rlyrt_object *const *args, rlyrt_object **out)
** args are the function's parameters in order (borrowed: tensors, or tuples
** of tensors where a parameter has a tuple type); *out receives the result
** (owned: a new tensor, or a new tuple of tensors). When *out is not NULL on
** entry, it is a tensor of the result's exact type (a buffer in a planned
** workspace, with the static refcount) and the kernel leaves its result
** there: it writes into it (loops) or copies its result into it
** (reference kernels). On failure the kernel
** returns the status with the thread's message set, prefixed by the
** source position `where` ("model.relay:3:10", rlyrt_error_at), and leaks
** nothing.
**
** Two ways to implement a kernel:
** - lower_loops: C loops, when a schedule of lower/schedules.def takes the
**   group (static shapes, dtypes the schedule supports): float32 dense and
**   batch_matmul as GEMV or packed GEMM with the group's elementwise tail
**   as epilogue (lower/gemm.c), elementwise/broadcast chains as one loop
**   (lower/elemwise.c; float32 exp, tanh and sigmoid through the
**   vectorizable functions of lower/fastmath.c, within a few ulps of the
**   reference kernels), single table operators (lower/lower.def), take with
**   a scalar index and split as slice copies (lower/select.c);
** - lower_reference: calls of the runtime's reference kernels
**   (runtime/kernels), one per call of the group, with the attributes and
**   the result types as static data. Works for every group whose operators
**   have a kernel in the runtime.
** The code generator tries lower_loops first. */
#ifndef RLY_LOWER_H
#define RLY_LOWER_H

#include "base/strbuf.h"
#include "ir/ir.h"

/* Appends the kernel NAME for fn to out and returns true; returns false and
** appends nothing when fn has no loop lowering (an operator without an
** entry, a dynamic shape, an unsupported dtype). Deterministic: the same fn
** gives the same text. */
bool lower_loops(StrBuf *out, const char *name, const Expr *fn, const char *where);

/* Appends the kernel NAME for fn as calls of the reference kernels to out
** (one call, or the group's calls in turn, intermediates released after
** their last use).
** Needs the prototypes of the reference kernels it calls: it appends them,
** each once per Lowering, to decls. Returns false with a message in err
** when fn cannot be compiled (an operator without a reference kernel, a
** result that is not a tensor or a tuple of tensors). */
typedef struct Lowering Lowering;
Lowering *lowering_new(void);
void lowering_free(Lowering *L);
bool lower_reference(Lowering *L, StrBuf *decls, StrBuf *out, const char *name, const Expr *fn, const char *where,
                     char *err, size_t errlen);

/* GEMM weights packed at build time (lower/gemm.c). A kernel call whose
** arguments is_const[i] are constants of the module (fn has nparams
** parameters): when fn is a float32 nn.conv2d GEMM whose filter is one of
** them (lower/conv.c), or a packed GEMM (float32 dense or batch_matmul
** with more than the GEMV's rows) whose B operand is one of them and is
** read by nothing else in fn, appends a kernel that reads B already packed
** (panels LOWER_PACK_NR columns wide over the whole reduction, zero-padded
** at the edge; lower_prepack), describes the packing in *p and returns
** true; otherwise returns false and appends nothing (p->param = -1). The
** caller passes the packed constant as argument p->param. */
enum { LOWER_PACK_NR = 32 };
typedef struct LowerPrepack {
  int param;                /* the argument read packed; -1: none */
  int64_t q, k, n;          /* B's batches (1 when broadcast), reduction, columns */
  int64_t b_sq, b_sk, b_sj; /* element strides: B(q, l, j) = data[q * b_sq + l * b_sk + j * b_sj] */
  int64_t pw;               /* the panels' width; 0: LOWER_PACK_NR */
  int64_t pad;              /* > 0: the columns padded with zeros to a multiple of pad (of pw) */
  int64_t kc;               /* > 0: the reduction in blocks of kc rows, each block's panels together */
  int wino;                 /* m > 0: B is a conv2d's 3x3 filter [n][k][3][3] whose Winograd transform
                               for F(m x m, 3 x 3) is packed instead, as q = (m + 2)^2 batches (lower/winograd.c) */
  bool alt;                 /* the kernel also reads B packed with pw = alt_pw (no pad, no kc), as one more
                               argument after the call's (lower/conv.c: an AVX2 kernel of other tiles) */
  int64_t alt_pw;
} LowerPrepack;
bool lower_loops_prepacked(StrBuf *out, const char *name, const Expr *fn, const char *where, const bool *is_const,
                           LowerPrepack *p);
/* The bytes of B (float32, the constant's data) packed as p says:
** float[q][ceil(n / PW)][k][PW] (PW: p->pw or 32; a Winograd filter
** float[ceil(n / PW)][q][k][PW], each panel's points together; with
** p->kc, each batch float[ceil(k / KC)][ceil(n / PW)][kcb][PW], kcb = KC
** but for a shorter last block: the panels one block of the reduction
** reads, one run of memory), malloc'ed, *nbytes long. A conv2d's filter (lower/conv.c) is packed the same way as the B
** of W's transpose per group, in panels of 12 filters. */
void *lower_prepack(const LowerPrepack *p, const void *b, size_t *nbytes);

/* Scalars. When fn's operands and result are 0-d tensors that
** lower_loops handles, appends the statements that compute the result
** from the operands given as C expressions ops[i] (of each operand's
** element type) and store it into the C lvalue dest (of the result's
** element type), at the given indentation; returns false (appending
** nothing) otherwise. The code generator keeps such scalars in C locals. */
bool lower_scalar(StrBuf *out, const Expr *fn, const char *const *ops, const char *dest, int indent);
/* The C type of one element of dtype t ("float", "int32_t", "uint8_t" for
** bool), or NULL for dtypes loops do not handle. */
const char *lower_scalar_ctype(DType t);

/* Appends the C string literal of the n bytes at s (quotes, escapes). */
void lower_cstring(StrBuf *out, const char *s, size_t n);

#endif
