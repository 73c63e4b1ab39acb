/* relayc/relayc.h: the compiler as a library.
**
** One compilation is an rly_compiler: give it options and the program's
** sources (Relay text files or text in memory, read in order as one
** module, as `relayc build a.relay b.relay` does), optionally a .params
** file whose entries replace @main's parameters of the same names, then
** call rly_compile. It parses, infers types, runs the back end's passes
** and emits the text of NAME.c and NAME.h (see docs/design.md, "Code
** generation"): building them with a C compiler against the runtime
** (relayc/runtime.h) gives the module.
**
** Errors in the program are diagnostics, collected and printed as a
** compiler prints them ("FILE:LINE:COL: error: message", the source line,
** a caret). Nothing here prints, exits or aborts on bad input. The types
** are opaque; every string returned is borrowed from the compiler and
** valid until the next call that changes it, or rly_compiler_free.
** Compilers share nothing: several may run at once on different threads. */
#ifndef RELAYC_RELAYC_H
#define RELAYC_RELAYC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rly_compiler rly_compiler;

/* relayc's version; rly_version() returns it too. */
#define RLY_VERSION "0.1.0"
const char *rly_version(void);

/* A new compiler with the default options (module name "model",
** optimisation level 2). NULL when memory runs out. */
rly_compiler *rly_compiler_new(void);
/* Frees c and everything it returned. NULL is a no-op. */
void rly_compiler_free(rly_compiler *c);

/* Nonzero when name can be a module name: a C identifier of at most 64
** characters, not starting with "rlyrt". */
int rly_name_ok(const char *name);

/* {==== Options ====} */

/* The module's name: the prefix of the generated C symbols (NAME_module,
** NAME_main) and of the header's macros. Returns 0, or -1 (name kept)
** when rly_name_ok(name) is 0. */
int rly_set_name(rly_compiler *c, const char *name);
/* The optimisation level, 0 to 3: which of the back end's passes run.
** (The C compiler's level is the caller's choice.) RLY_OPT_SIZE runs the
** passes of level 2 and has the build summary say -Os, for a caller that
** compiles the C with -Os. Returns 0, or -1 (level kept) for any other
** value. */
#define RLY_OPT_SIZE 4
int rly_set_opt_level(rly_compiler *c, int level);
/* Fusion on (1, the default from level 1) or off (0): off, every operator
** call is its own kernel, as at level 0. */
void rly_set_fuse(rly_compiler *c, int on);
/* Profiling on (1) or off (0, the default): on, every kernel is timed into
** a record (relayc/runtime.h: rlyrt_kernel_record) that the module's
** build description (NAME_module_build()) lists; off, the C has no timing
** code at all. */
void rly_set_profile(rly_compiler *c, int on);
/* The module's default kernel thread count (relayc build --threads): n
** from 1 (the default: no thread is started) to RLY_MAX_THREADS, or 0: one
** per CPU the process may run on when the module runs. Kernels with
** enough work (large GEMMs, GEMVs, elementwise loops, reductions) split
** it over that many threads, with the same results for any count; the
** runtime's rlyrt_module_set_threads changes it for a loaded module.
** Returns 0, or -1 (count kept) outside 0..RLY_MAX_THREADS. */
#define RLY_MAX_THREADS 256 /* the runtime's RLYRT_MAX_THREADS */
int rly_set_threads(rly_compiler *c, int n);
/* What the C will be built for, as the C compiler will be told (the
** header says it; NULL or "": the default, baseline x86-64 with run-time
** ISA dispatch in the kernels). "native" (-march=native) also makes the
** module record the ISA extensions it is compiled for and check them when
** it is loaded; isa (NULL: unknown) lists them for the header. Anything
** else is a target triple. */
void rly_set_target(rly_compiler *c, const char *target, const char *isa);

/* {==== Input ====} */

/* Reads the file at path ("-": standard input, named "<stdin>" in
** messages) as the next source of the module. Returns 0, or -1 when it
** cannot be read: rly_message says why, and rly_compile will fail. */
int rly_add_file(rly_compiler *c, const char *path);
/* Adds len bytes of text (copied) as the next source, named name in
** messages. Returns 0. */
int rly_add_text(rly_compiler *c, const char *name, const char *text, size_t len);
/* Binds @main's parameters to the entries of the .params file at path
** (read by rly_compile; its errors are diagnostics). NULL: none. */
void rly_set_params_file(rly_compiler *c, const char *path);

/* {==== Compiling ====} */

/* Compiles the sources as one module. Returns 0 when the C and header
** texts are ready; -1 after errors: in the program (rly_error_count > 0,
** rly_diagnostics), or in the inputs (no source, a file that could not be
** read: rly_message). Compiling again redoes the whole work. */
int rly_compile(rly_compiler *c);

/* The text of NAME.c and of NAME.h after a successful rly_compile (""
** otherwise); *len (when len is not NULL) receives the length. */
const char *rly_c_text(const rly_compiler *c, size_t *len);
const char *rly_h_text(const rly_compiler *c, size_t *len);

/* What the last successful rly_compile built, one fact a line: relayc's
** version, the target, the levels (fusion, profiling), the number of
** kernels by schedule ("" after a failure). NAME.h begins with it. */
const char *rly_build_summary(const rly_compiler *c);

/* The diagnostics of the last rly_compile as the command line prints them
** (errors, warnings and notes with their source excerpts; "" for none). */
const char *rly_diagnostics(const rly_compiler *c);
/* The number of errors among them. */
int rly_error_count(const rly_compiler *c);
/* Why the last failed call on c failed when the reason is not a
** diagnostic (a file that cannot be read, no input); "" otherwise. */
const char *rly_message(const rly_compiler *c);

#ifdef __cplusplus
}
#endif

#endif
