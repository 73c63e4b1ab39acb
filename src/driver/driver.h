/* driver.h: turning generated C into an artifact with the system C compiler.
**
** The driver is independent of code generation: it receives a C file and
** builds a shared library, a static library or an object file from it (or
** copies it), linking the runtime that relayc carries inside its own binary
** (driver/embedded.h). Programs run without a shell (posix_spawnp), so no
** argument is ever reinterpreted by one. Everything temporary lives in one
** private directory that is removed afterwards, also on failure.
**
** Errors: the small functions write one line into a caller buffer
** (err, errlen), as file_read_all does; driver_build reports into a Diag,
** because a failing C compiler's message (returned verbatim) can be long.
** Library code never prints and never exits.
**
** Thread safety: no global state. driver_spawn creates its pipe with
** FD_CLOEXEC set right after pipe(), so a program started concurrently by
** another thread may, in a narrow window, inherit the write end (it then
** only delays the end of the output until that program exits). A process
** that sets SIGCHLD to SIG_IGN cannot collect exit statuses (waitpid fails
** with ECHILD); relayc does not. */
#ifndef RLY_DRIVER_H
#define RLY_DRIVER_H

#include "base/common.h"
#include "base/diag.h"
#include "base/strbuf.h"

/* {==== Running programs ====} */

/* Runs argv[0] with the arguments argv (NULL-terminated), without a shell:
** argv[0] is looked up in PATH unless it contains a '/'. Its standard input
** is /dev/null; its standard output and standard error go into one pipe
** that is read until end of file (so any amount of output is fine) and
** appended to output (NULL: read and discarded). Returns the exit status
** (0..255), or 128 + N when a signal N killed the program, as shells report
** it. Returns -1 when the program could not be started or waited for, with
** a message in err: "cannot run 'cc': No such file or directory". */
int driver_spawn(const char *const argv[], StrBuf *output, char *err, size_t errlen);

/* A list of malloc'd strings; usable with vec.h's macros. */
typedef struct ArgList {
  char **data;
  int len, cap;
} ArgList;

/* Appends a copy of s. */
void arglist_push(ArgList *l, const char *s);
/* Frees the strings and the array; the list is empty afterwards. */
void arglist_free(ArgList *l);

/* Splits s (NULL = "") into words at whitespace and appends copies of them
** to out, honouring simple shell quoting: '...' keeps everything inside
** literally; "..." keeps everything inside, where \" and \\ stand for " and
** \; outside quotes, \c stands for c. Quotes may join parts of one word
** (-DNAME='"x y"' is one word -DNAME="x y"). No expansion of any kind
** ($VAR, ~, globs). Returns false on an unterminated quote or a trailing
** backslash, with a message in err; out may then hold some words (the
** caller frees it either way). */
bool driver_split_args(const char *s, ArgList *out, char *err, size_t errlen);

/* {==== Files and directories ====} */

/* Creates a new private directory "$TMPDIR/relayc-XXXXXX" (mode 0700;
** /tmp when TMPDIR is unset or empty). Returns its path (malloc'd, caller
** frees; remove it with driver_rmtree), or NULL with a message in err. */
char *driver_tmpdir_new(char *err, size_t errlen);

/* Removes the directory dir and everything inside it. Symbolic links are
** never followed: a link inside dir is removed as a link, whatever it
** points to, and when dir itself is a symbolic link nothing is removed and
** false is returned. Removal goes on past a failure (as much as possible is
** removed); returns false when anything could not be removed, with the
** first failure in err. Directories nested deeper than 256 levels are not
** entered (an error). */
bool driver_rmtree(const char *dir, char *err, size_t errlen);

/* Copies the file src to dst (created with mode 0666 less the umask, or
** truncated). Returns false with a message in err on failure. */
bool driver_copy_file(const char *src, const char *dst, char *err, size_t errlen);

/* Creates the directory path and any missing parents (mode 0777 less the
** umask); an existing directory is fine. Returns false with a message in
** err on failure. */
bool driver_mkdirs(const char *path, char *err, size_t errlen);

/* Writes the files relayc carries (driver/embedded.h) under dir, creating
** the directories they need: dir/include/relayc/runtime.h,
** dir/include/dlpack/dlpack.h and dir/lib/librelayc_runtime.a, so that
** -Idir/include compiles generated code and dir/lib/librelayc_runtime.a
** links it. Existing files are replaced. Returns false with a message in
** err on failure (files written so far stay). */
bool driver_write_runtime(const char *dir, char *err, size_t errlen);

/* {==== Building artifacts ====} */

typedef enum EmitKind {
  EMIT_SO,   /* shared library: cc -shared -fPIC, the runtime linked in */
  EMIT_A,    /* static library: the generated object plus every runtime object */
  EMIT_OBJ,  /* object file (-c): link it with librelayc_runtime.a and -lm */
  EMIT_C,    /* the C source itself (and its header), copied */
} EmitKind;

/* opt_level for -Os. */
enum { DRIVER_OPT_SIZE = 4 };

typedef struct BuildOptions {
  EmitKind emit;
  const char *cc;           /* the C compiler, run from PATH unless it has a '/'; NULL = "cc" */
  const char *ar;           /* the archiver for EMIT_A; NULL = "ar" */
  const char *cflags;       /* extra flags, split by driver_split_args; NULL = none */
  int opt_level;            /* 0..3: -O0..-O3; DRIVER_OPT_SIZE: -Os */
  const char *target;       /* NULL: the compiler's default; "native": -march=native;
                            ** anything else is a triple passed as --target=TRIPLE */
  const char *keep_source;  /* NULL, or a directory that receives a copy of the C file
                            ** (and its header); created when missing */
  StrBuf *commands;         /* NULL, or receives every command run, one line each,
                            ** quoted for a POSIX shell (for --verbose output) */
} BuildOptions;

/* Fills o with the defaults: EMIT_SO, cc "cc", ar "ar", -O2, no cflags,
** no target, no kept source, no command log. */
void driver_options_init(BuildOptions *o);

/* "so", "a", "obj", "c" -> the kind; returns false for any other name. */
bool driver_emit_parse(const char *name, EmitKind *kind);
/* The kind an output path asks for by its extension (.so, .a, .o, .c);
** returns false when the extension is none of these. */
bool driver_emit_from_path(const char *path, EmitKind *kind);
/* "so", "a", "obj" or "c". */
const char *driver_emit_name(EmitKind kind);

/* Builds out from the C file c_file as o->emit says. A header next to
** c_file with the same stem (model.c -> model.h) is found by the C
** compiler through the usual #include "model.h", and is copied along with
** the C file wherever the C file is copied (keep_source, EMIT_C: into the
** output's directory, under its own name). So is a constants' file
** model.blob (driver/compile_ext.h), which the C includes with the
** assembler's .incbin "model.blob": every compile then also gets
** -Wa,-I<c_file's directory> (a directory with a comma in its name is an
** error), so that the assembler finds it and copies it into the object.
**
** Every compile runs
**   CC -std=c11 -Wall -Wextra -Wno-misleading-indentation -O<n> [-march=native | --target=T] -fPIC
**      -I<tmp>/include ... c_file CFLAGS ...
** where <tmp> is a private temporary directory holding the embedded runtime
** (driver_write_runtime). Warnings are enabled so that warnings in generated
** code are seen, but never turned into errors for a user's build.
**   EMIT_SO:  ... -DRLYRT_SHARED_MODULE -fvisibility=hidden
**             -Wl,--exclude-libs,ALL -shared -o out c_file CFLAGS
**             <tmp>/lib/librelayc_runtime.a -lm
**             (the library exports rlyrt_module_entry only: its copy of the
**             runtime stays private, so two models load into one process)
**   EMIT_OBJ: ... -c -o out c_file CFLAGS (the object alone still needs the
**             runtime library and -lm to link)
**   EMIT_A:   ... -c -o <tmp>/obj/STEM.o c_file CFLAGS; then the members of
**             the embedded runtime library are extracted (in process, from
**             the bytes relayc carries, under unique names) and
**             AR rcs out STEM.o <runtime objects>, so that a user links one
**             library (plus -lm). An existing out is replaced, not updated.
**   EMIT_C:   c_file is copied to out.
** For EMIT_A and EMIT_OBJ the header is also copied next to out.
** Objects are position independent so that any artifact can go into a
** shared library. A triple target needs a compiler that understands
** --target (clang); for gcc, name a cross compiler with o->cc instead. The
** embedded runtime is built for the machine relayc runs on, so EMIT_SO and
** EMIT_A for another target fail to link (EMIT_OBJ and EMIT_C work).
**
** Returns true on success. On failure returns false with an error in d:
** "cannot run 'cc': No such file or directory", or "the C compiler failed
** with exit status 1:\n" followed by the compiler's own output verbatim
** (less its final newline), or a file error. The temporary directory is
** removed in every case; failing to remove it is a warning in d. */
bool driver_build(const BuildOptions *o, const char *c_file, const char *out, Diag *d);

/* {==== What was built, where the time went (report.c) ====} */

/* The ISA extensions cc (NULL: "cc") enables with -march=native and the
** flags cflags (NULL: none), space-separated ("avx2 fma avx512f"), read
** from its predefined macros (cc -march=native -dM -E). Returns false
** (out unchanged) when the compiler cannot tell. */
bool driver_native_isa(const char *cc, const char *cflags, StrBuf *out);

struct rlyrt_module_build;

/* Prints where the time of a profiled module went: one row per kernel
** that ran (its operators, result shape, schedule, calls, total ms, mean
** us, share of total_ms), most expensive first, then the time outside
** kernels (control flow: total_ms less the kernels' time) and the total.
** runs: the number of calls total_ms covers. */
void driver_print_profile(FILE *f, const struct rlyrt_module_build *b, double total_ms, long runs);

#endif
