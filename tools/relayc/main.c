/* main.c: the relayc command line. Parses arguments, calls the compiler
** library, prints diagnostics and decides the exit status:
**   0 success, 1 an error in the user's input, 2 a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <pthread.h>

#include "base/diag.h"
#include "base/file.h"
#include "driver/compile_ext.h"
#include "driver/driver.h"
#include "base/strbuf.h"
#include "interp/interp.h"
#include "ir/ir.h"
#include "onnx/onnx.h"
#include "relayc/relayc.h"
#include "relayc/runtime.h"
#include "syntax/metadata.h"
#include "syntax/parser.h"
#include "types/infer.h"

#define RELAYC_VERSION "0.1.0" /* also RLY_VERSION in relayc/relayc.h; cmake/install.cmake reads this line */

enum { EXIT_USER = 1, EXIT_USAGE = 2 };

static const char usage_main[] =
    "relayc " RELAYC_VERSION ": an ahead-of-time compiler for Relay (TVM's functional IR)\n"
    "\n"
    "usage: relayc <command> [options] FILE...\n"
    "\n"
    "commands:\n"
    "  check FILE...  parse, resolve every name, infer the types, report the errors\n"
    "  fmt FILE...    print the module in canonical Relay text\n"
    "  build FILE...  compile to a shared library, a static library, an object or C\n"
    "  run FILE...    run a function, compiled (or --interp: interpreted), or of a\n"
    "                 library built by 'relayc build'\n"
    "  import MODEL.onnx  write an ONNX model as Relay text\n"
    "  help [CMD]     show help for a command\n"
    "\n"
    "FILE is Relay text (format v0.0.5, with an optional #[metadata] section),\n"
    "or an ONNX model (a FILE named *.onnx: imported first, as 'relayc import'\n"
    "would write it); '-' reads standard input. Several FILEs are read, in order, as one module\n"
    "(as TVM imports its prelude into a module): see 'relayc help check'.\n"
    "Run 'relayc help CMD' or 'relayc CMD --help' for a command's options.\n"
    "Exit status: 0 success, 1 errors in the input, 2 usage.\n";

/* How several input files combine; every command that reads Relay text
** says it. */
#define HELP_FILES                                                                  \
  "Several FILEs are one module, read in order (as TVM imports its prelude\n"     \
  "into a module): the types, constructors and definitions of every file are\n"  \
  "visible in all of them, so nat.relay may use Cons and @hd of prelude.relay.\n" \
  "A name defined in two files is an error that shows both places. Each file\n"   \
  "that holds definitions starts with its own #[version = \"0.0.5\"]; a\n"        \
  "meta[relay.Constant][i] refers to its own file's #[metadata] section. An\n"    \
  "expression file given with other files is the module's @main (its free\n"     \
  "variables are @main's parameters). Diagnostics name the file they are in.\n"

static const char usage_check[] =
    "usage: relayc check [--print] [--params FILE.params] FILE...\n"
    "\n"
    "Parses the module, resolves every name (variables, globals, operators,\n"
    "constructors, types, metadata constants) and infers the type of every\n"
    "expression: operator shapes and dtypes, polymorphic functions, ADTs,\n"
    "if/match (match must be exhaustive), references. Errors are printed as\n"
    "FILE:LINE:COL: error: MESSAGE with the source line; several are reported\n"
    "in one run, at most 20 (then a 'too many errors' line). A file that is\n"
    "not text (a NUL byte, or mostly control characters or bytes that are not\n"
    "UTF-8) gets one error: FILE: error: not a Relay text file (...).\n"
    "\n"
    HELP_FILES
    "\n"
    "options:\n"
    "  --print         print the typed module, /* ty=... */ on every binding\n"
    "  --params FILE   bind @main's parameters to the tensors of a .params file\n"
    "                  (by name, as TVM's bind_params_by_name does)\n"
    "  -h, --help      show this help\n";

static const char usage_fmt[] =
    "usage: relayc fmt [--params FILE.params] [-o OUT] FILE...\n"
    "\n"
    "Prints the module in canonical Relay text: type definitions, then\n"
    "definitions, each sorted by name; graph-normal form (%0 = ...;); only\n"
    "non-default operator attributes; tensor constants in a #[metadata]\n"
    "section. Printing is idempotent and the result parses back to the same\n"
    "module.\n"
    "\n"
    "With several FILEs, fmt prints the one merged module, as TVM prints a\n"
    "module with its prelude imported: every file's definitions in one text\n"
    "with one #[metadata] section, which parses alone. To format files one at\n"
    "a time, run fmt on each (a file that uses another file's names cannot be\n"
    "formatted alone).\n"
    "\n"
    HELP_FILES
    "\n"
    "options:\n"
    "  -o OUT          write to OUT instead of standard output\n"
    "  --params FILE   bind @main's parameters to the tensors of a .params file\n"
    "  -h, --help      show this help\n";


static const char usage_build[] =
    "usage: relayc build FILE... -o OUT [--emit so|a|obj|c] [--name NAME] [-O0..3|-Os] [--no-fuse]\n"
    "                    [--cc CC] [--cflags \"FLAGS\"] [--target TRIPLE|native]\n"
    "                    [--keep-source DIR] [--params FILE.params] [--profile] [--stats]\n"
    "                    [--threads N] [-v]\n"
    "\n"
    "Compiles the module to C and builds it with the system C compiler: every Relay\n"
    "function becomes a C function, every group of fused operator calls a kernel\n"
    "(from -O1; at -O0 or with --no-fuse, every operator call). The result\n"
    "needs nothing but the runtime, which relayc links into it (.so, .a) or\n"
    "which you link (-lrelayc_runtime for .o and .c).\n"
    "\n"
    "  OUT.so   a shared library: load it with rlyrt_module_load, or run it\n"
    "           with 'relayc run OUT.so'\n"
    "  OUT.a    a static library (model and runtime); NAME.h is written next\n"
    "           to it: NAME_module() and a typed entry point NAME_FN(...) for\n"
    "           each function whose parameters and result are static tensors\n"
    "  OUT.o    an object file (NAME.h next to it)\n"
    "  OUT.c    the generated C (NAME.h next to it)\n"
    "\n"
    HELP_FILES
    "\n"
    "options:\n"
    "  -o OUT             the output; its extension picks the kind unless --emit\n"
    "  --emit KIND        so, a, obj or c\n"
    "  --name NAME        the module's name and C prefix (default: OUT's name\n"
    "                     without directory, extension and a leading 'lib')\n"
    "  -O0 .. -O3, -Os    the optimisation level (default -O2): the C compiler's,\n"
    "                     and the passes': -O0 neither simplifies, folds nor fuses\n"
    "  --no-fuse          every operator call its own kernel (no FuseOps)\n"
    "  --cc CC            the C compiler (default: cc)\n"
    "  --cflags FLAGS     extra flags for the C compiler (split like a shell\n"
    "                     would, without expansions)\n"
    "  --target T         native (-march=native; the module records the CPU\n"
    "                     extensions it needs and refuses to load without them)\n"
    "                     or a triple (--target=T, clang)\n"
    "  --keep-source DIR  also write the generated NAME.c and NAME.h into DIR\n"
    "                     (and NAME.blob, the constants, when they are there)\n"
    "  --params FILE      bind @main's parameters to a .params file\n"
    "  --profile          time every kernel ('relayc run --profile' prints where\n"
    "                     the time went); without it the C has no timing code\n"
    "  --threads N        the module's default kernel thread count (default 1:\n"
    "                     no thread is started; 0: one per CPU the program may\n"
    "                     run on). Large GEMMs, GEMVs, elementwise loops and\n"
    "                     reductions split their work over N threads, with the\n"
    "                     same results for any N; 'relayc run --threads' and\n"
    "                     rlyrt_module_set_threads change it\n"
    "  --stats            print on stdout the fused groups, each kernel's\n"
    "                     operators, result shape and schedule, the workspace\n"
    "                     sizes, the constants' bytes and the time of each phase\n"
    "                     (parse, metadata, infer, passes, codegen, write, C\n"
    "                     compiler, total)\n"
    "  -v, --verbose      print what is built (version, target, levels, kernels\n"
    "                     by schedule) and every command run\n"
    "  -h, --help         show this help\n"
    "\n"
    "Constants of 1 MiB or more (the weights of a model) do not go into the C\n"
    "as text for .so, .a and .o: they are written to NAME.blob next to the\n"
    "temporary NAME.c, which includes them with the assembler's .incbin (ELF\n"
    "targets), so the C compiler never reads them. The artifact holds them and\n"
    "needs nothing else. OUT.c always carries them inline.\n"
    "\n"
    "Kernels of one shape share one body. A big model's kernel bodies are\n"
    "compiled in parts at the same time, one C compiler per CPU (at most 16,\n"
    "each part at least 128 KB of C), and the parts linked (.so, .o) or\n"
    "archived (.a) together; the environment variable RELAYC_JOBS=N sets the\n"
    "CPUs to use (1: the C file compiled whole). A shared library of more than\n"
    "16 MB of constants is linked with gold, else lld, where PATH has one\n"
    "(RELAYC_LD=default keeps the C compiler's own linker).\n";

static const char usage_run[] =
    "usage: relayc run MODEL... [--interp] [--function NAME] [--input NAME=FILE.npy ...]\n"
    "                  [--output FILE.npy|DIR] [--repeat N] [--params FILE.params]\n"
    "                  [-O0..3|-Os] [--no-fuse] [--cc CC] [--cflags \"FLAGS\"] [--profile]\n"
    "                  [--threads N]\n"
    "\n"
    "Runs a function of MODEL (default @main) and prints its result readably, or\n"
    "writes it with --output. MODEL is Relay text, one file or several (one\n"
    "module, see below), compiled to a temporary shared library first (or run by\n"
    "the reference interpreter with --interp), or one shared library built by\n"
    "'relayc build'. Each parameter of the function is given by name with\n"
    "--input (%x is x); its dtype and shape must agree with the parameter's\n"
    "type. For an expression file, the inputs bind its free variables. The\n"
    "options may come before, between or after the files.\n"
    "\n"    HELP_FILES
    "\n"
    "options:\n"
    "  --interp              use the reference interpreter instead of compiling\n"
    "  --function NAME       the global to call (default main)\n"
    "  --input NAME=FILE     a .npy file for the parameter NAME (repeatable)\n"
    "  --output PATH         a tensor result to PATH (.npy); a tuple result to\n"
    "                        the directory PATH as 0.npy, 1.npy, ... (nested:\n"
    "                        1_0.npy; an ONNX model's outputs by their names)\n"
    "  --repeat N            run N more times after one warm-up and end with\n"
    "                        time_ms: median=M min=A max=B n=N\n"
    "  --params FILE         bind @main's parameters to a .params file\n"
    "  --profile             after the result, where the time went (the --repeat\n"
    "                        runs after the warm-up, else the one run): a\n"
    "                        row per kernel (ops, shape, schedule, calls, total ms,\n"
    "                        mean us, share), the control flow between kernels\n"
    "                        and the total; a library must be built with --profile\n"
    "  --threads N           the kernels' thread count for this run (default: the\n"
    "                        module's, 1 unless built with --threads; 0: one per\n"
    "                        CPU); the results do not depend on it\n"
    "  -O0 .. -O3, -Os, --no-fuse, --cc, --cflags\n"
    "                        how to compile Relay text (as for relayc build)\n"
    "  -h, --help            show this help\n";

typedef struct Options {
  const char **files;  /* the input files, in order (argc entries at most) */
  int nfiles;
  const char *output;
  const char *params;
  bool print;
  /* run */
  bool interp;
  const char *function;
  const char **inputs; /* NAME=FILE, argc entries at most */
  int ninputs;
  long repeat;
  /* build (and compiled run) */
  const char *emit, *name, *cc, *cflags, *target, *keep_source;
  int opt_level; /* -1: default */
  bool no_fuse;
  bool verbose;
  bool profile;
  bool stats;
  int threads; /* --threads: -1 when not given, 0 one per CPU */
} Options;

static int usage_error(const char *cmd_usage, const char *fmt, const char *arg) {
  fprintf(stderr, "relayc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n%s", cmd_usage);
  return EXIT_USAGE;
}

static void options_free(Options *o) {
  free(o->files);
  free(o->inputs);
}

/* Is the file b the same as a ("-" twice, or one file by two names)? */
static bool same_file(const char *a, const char *b) {
  if (strcmp(a, b) == 0) return true;
  struct stat sa, sb;
  if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0 || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Parses the options of a command. Returns -1 to go on, else an exit
** status; the caller calls options_free either way. */
static int parse_options(int argc, char **argv, const char *usage, bool allow_output, Options *o) {
  memset(o, 0, sizeof *o);
  o->opt_level = -1;
  o->threads = -1;
  bool is_run = usage == usage_run, is_build = usage == usage_build;
  o->files = rly_xcalloc((size_t)argc + 1, sizeof(char *));
  if (is_run) o->inputs = rly_xcalloc((size_t)argc + 1, sizeof(char *));
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if ((is_run || is_build) && a[0] == '-' && a[1] == 'O' && ((a[2] >= '0' && a[2] <= '3') || a[2] == 's') &&
               !a[3]) {
      o->opt_level = a[2] == 's' ? DRIVER_OPT_SIZE : a[2] - '0';
    } else if ((is_run || is_build) && strcmp(a, "--no-fuse") == 0) {
      o->no_fuse = true;
    } else if ((is_run || is_build) && strcmp(a, "--profile") == 0) {
      o->profile = true;
    } else if ((is_run || is_build) && strcmp(a, "--threads") == 0) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a value", a);
      const char *v = argv[++i];
      char *end;
      long n = strtol(v, &end, 10);
      if (!*v || *end || n < 0 || n > RLY_MAX_THREADS)
        return usage_error(usage, "--threads needs a count from 0 (one per CPU) to 256, not '%s'", v);
      o->threads = (int)n;
    } else if ((is_run || is_build) && (strcmp(a, "--cc") == 0 || strcmp(a, "--cflags") == 0)) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a value", a);
      if (a[3] == 'c') o->cc = argv[++i];
      else o->cflags = argv[++i];
    } else if (is_build && (strcmp(a, "--emit") == 0 || strcmp(a, "--name") == 0 || strcmp(a, "--target") == 0 ||
                            strcmp(a, "--keep-source") == 0)) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 'e') o->emit = v;
      else if (a[2] == 'n') o->name = v;
      else if (a[2] == 't') o->target = v;
      else o->keep_source = v;
    } else if (is_build && (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0)) {
      o->verbose = true;
    } else if (is_build && strcmp(a, "--stats") == 0) {
      o->stats = true;
    } else if (strcmp(a, "--params") == 0 || strncmp(a, "--params=", 9) == 0) {
      if (a[8] == '=') o->params = a + 9;
      else if (i + 1 < argc) o->params = argv[++i];
      else return usage_error(usage, "option '%s' needs a file name", a);
    } else if (!allow_output && !is_run && strcmp(a, "--print") == 0) {
      o->print = true;
    } else if (is_run && strcmp(a, "--interp") == 0) {
      o->interp = true;
    } else if (is_run && (strcmp(a, "--function") == 0 || strcmp(a, "--input") == 0 ||
                          strcmp(a, "--output") == 0 || strcmp(a, "--repeat") == 0)) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a value", a);
      const char *v = argv[++i];
      if (a[2] == 'f') o->function = v;
      else if (a[2] == 'o') o->output = v;
      else if (a[2] == 'i') {
        if (!strchr(v, '=') || v[0] == '=') return usage_error(usage, "--input needs NAME=FILE.npy, not '%s'", v);
        o->inputs[o->ninputs++] = v;
      } else {
        char *end;
        o->repeat = strtol(v, &end, 10);
        if (*end || o->repeat < 1 || o->repeat > 1000000) return usage_error(usage, "--repeat needs a count from 1 to 1000000, not '%s'", v);
      }
    } else if ((allow_output || is_build) && strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a file name", a);
      o->output = argv[++i];
    } else if (a[0] == '-' && a[1] != 0) {
      return usage_error(usage, "unknown option '%s'", a);
    } else {
      for (int k = 0; k < o->nfiles; k++)
        if (same_file(o->files[k], a)) return usage_error(usage, "input file '%s' is given twice", a);
      o->files[o->nfiles++] = a;
    }
  }
  if (!o->nfiles) return usage_error(usage, "no input file%s", "");
  if (is_build && !o->output) return usage_error(usage, "no output: give it with -o OUT%s", "");
  return -1;
}

/* What messages call the program: its file, or "the module" of several. */
static const char *module_label(const Options *o) { return o->nfiles == 1 ? o->files[0] : "the module"; }

/* Reads the files, parses them as one module and binds parameters.
** Returns the module, or NULL after I/O errors (printed, one per file that
** cannot be read) or errors in d (the caller prints them). */
static Module *load(const Options *o, SourceMap *sm, Diag *d) {
  char err[512];
  uint32_t *ids = rly_xcalloc((size_t)o->nfiles, sizeof *ids);
  bool read_all = true;
  for (int i = 0; i < o->nfiles; i++) {
    size_t len;
    char *text = file_read_all(o->files[i], &len, err, sizeof err);
    if (!text) {
      fprintf(stderr, "relayc: %s\n", err);
      read_all = false;
      continue;
    }
    if (onnx_is_model_path(o->files[i])) {
      ids[i] = onnx_add_source(sm, o->files[i], text, len, d);
      if (!ids[i]) read_all = false;
      continue;
    }
    ids[i] = srcmap_add(sm, strcmp(o->files[i], "-") == 0 ? "<stdin>" : o->files[i], text, len);
  }
  Module *m = read_all ? parse_module_files(sm, ids, o->nfiles, d) : NULL;
  free(ids);
  if (m && o->params) {
    char *empty = rly_xcalloc(1, 1);
    uint32_t pf = srcmap_add(sm, o->params, empty, 0);
    ParamEntry *entries = NULL;
    int n = params_read(o->params, m, &entries, d, pf);
    Span at = {pf, 0, 0, 0};
    if (n < 0 || !bind_params(m, entries, n, d, at)) {
      module_free(m);
      m = NULL;
    }
  }
  return m;
}

static int cmd_check(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, usage_check, false, &o);
  if (rc >= 0) {
    options_free(&o);
    return rc;
  }
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Module *m = load(&o, &sm, &d);
  rc = EXIT_USER;
  if (m && ty_infer_module(m, &d)) {
    rc = 0;
    if (o.print) {
      StrBuf out = {0};
      PrintOptions popt = {.show_types = true, .show_metadata = true};
      ir_print_module(&out, m, &popt);
      fwrite(out.data, 1, out.len, stdout);
      sb_free(&out);
    }
  }
  diag_print(&d, stderr);
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
  options_free(&o);
  return rc;
}

static int cmd_fmt(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, usage_fmt, true, &o);
  if (rc >= 0) {
    options_free(&o);
    return rc;
  }
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Module *m = load(&o, &sm, &d);
  diag_print(&d, stderr);
  rc = EXIT_USER;
  if (m) {
    StrBuf out = {0};
    PrintOptions popt = {.show_types = false, .show_metadata = true};
    ir_print_module(&out, m, &popt);
    FILE *f = o.output ? fopen(o.output, "wb") : stdout;
    if (!f) {
      fprintf(stderr, "relayc: cannot write '%s': %s\n", o.output, strerror(errno));
    } else {
      bool ok = fwrite(out.data, 1, out.len, f) == out.len;
      if (o.output) ok = fclose(f) == 0 && ok;
      else ok = fflush(f) == 0 && ok;
      if (!ok) fprintf(stderr, "relayc: cannot write '%s'\n", o.output ? o.output : "<stdout>");
      else rc = 0;
    }
    sb_free(&out);
  }
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
  options_free(&o);
  return rc;
}


/* {==== relayc run ====} */

static const char *type_text(StrBuf *sb, const Type *t) {
  sb_clear(sb);
  ir_print_type(sb, t);
  return sb_str(sb);
}

/* Does tensor t fit parameter type ty? */
static bool fits(const rlyrt_tensor *t, const Type *ty) {
  if (!ty || ty->kind != TYPE_TENSOR) return false;
  DLDataType dt = {ty->u.tensor.dtype.code, ty->u.tensor.dtype.bits, ty->u.tensor.dtype.lanes};
  if (!rlyrt_dtype_eq(dt, t->dl.dtype) || ty->u.tensor.ndim != t->dl.ndim) return false;
  for (int i = 0; i < t->dl.ndim; i++)
    if (ty->u.tensor.shape[i] != RLY_DIM_ANY && ty->u.tensor.shape[i] != t->dl.shape[i]) return false;
  return true;
}

/* Is the Relay type text that of a tensor (a .npy file can give it)? */
static bool tensor_type_text(const char *ty) {
  DType dt;
  return strncmp(ty, "Tensor[", 7) == 0 || dtype_parse(ty, strlen(ty), &dt);
}

/* Binds the --input files to the parameters names[0..n-1] (Relay types
** types[i]) of fname, loading each .npy file. With ir (the interpreter)
** the dtype and shape are checked here against ir[i]; compiled calls check
** them at the module's entry. Returns false after printing. */
static bool bind_inputs(const Options *o, const char *fname, const char *const *names, const char *const *types,
                        const Type *const *ir, int n, rlyrt_object **vals) {
  bool ok = true;
  for (int k = 0; k < o->ninputs; k++) {
    const char *eq = strchr(o->inputs[k], '=');
    size_t nlen = (size_t)(eq - o->inputs[k]);
    int j = -1;
    for (int i = 0; i < n; i++)
      if (strlen(names[i]) == nlen && memcmp(names[i], o->inputs[k], nlen) == 0) j = i;
    if (j < 0) {
      StrBuf list = {0};
      for (int i = 0; i < n; i++) sb_printf(&list, "%s%s", i ? ", " : "", names[i]);
      fprintf(stderr, "relayc: unknown input '%.*s': the parameters of %s are: %s\n", (int)nlen, o->inputs[k], fname,
              n ? sb_str(&list) : "(none)");
      sb_free(&list);
      ok = false;
      continue;
    }
    if (vals[j]) {
      fprintf(stderr, "relayc: input '%.*s' is given twice\n", (int)nlen, o->inputs[k]);
      ok = false;
      continue;
    }
    if (!tensor_type_text(types[j])) {
      fprintf(stderr, "relayc: parameter '%s' has type %s, which cannot be given as a .npy input\n", names[j],
              types[j]);
      ok = false;
      continue;
    }
    rlyrt_tensor *t = NULL;
    if (rlyrt_npy_load(eq + 1, &t) != RLYRT_OK) {
      fprintf(stderr, "relayc: input '%.*s': %s\n", (int)nlen, o->inputs[k], rlyrt_last_error());
      ok = false;
      continue;
    }
    if (ir && !fits(t, ir[j])) {
      char text[1024];
      fprintf(stderr, "relayc: input '%.*s': %s expects %s, but %s holds %s\n", (int)nlen, o->inputs[k], fname,
              types[j], eq + 1, rlyrt_tensor_type_text(t, text, sizeof text));
      rlyrt_release(&t->obj);
      ok = false;
      continue;
    }
    vals[j] = &t->obj;
  }
  for (int i = 0; i < n && ok; i++)
    if (!vals[i]) {
      fprintf(stderr, "relayc: missing input '%s' (%s): give it with --input %s=FILE.npy\n", names[i], types[i],
              names[i]);
      ok = false;
    }
  return ok;
}

/* With an ONNX model: its outputs' names, which name the files of a tuple
** result's fields (NAME.npy, other characters than [A-Za-z0-9_.-] as '_'). */
static char **g_output_names;
static int g_noutput_names;

/* Writes a result: a tensor to path, a tuple into the directory path. */
static bool save_value(const rlyrt_object *v, const char *path, const char *dir, const char *prefix) {
  char file[4096];
  if (v->kind == RLYRT_TENSOR) {
    if (dir) snprintf(file, sizeof file, "%s/%s.npy", dir, prefix);
    else snprintf(file, sizeof file, "%s", path);
    if (rlyrt_npy_save(file, RLYRT_AS_TENSOR((rlyrt_object *)v)) != RLYRT_OK) {
      fprintf(stderr, "relayc: %s\n", rlyrt_last_error());
      return false;
    }
    return true;
  }
  if (v->kind == RLYRT_TUPLE) {
    if (!dir) {
      if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "relayc: cannot create the directory '%s': %s\n", path, strerror(errno));
        return false;
      }
      dir = path;
    }
    const rlyrt_tuple *t = (const rlyrt_tuple *)v;
    for (int i = 0; i < t->n; i++) {
      char sub[512];
      if (*prefix) snprintf(sub, sizeof sub, "%s_%d", prefix, i);
      else if (g_noutput_names == t->n && *g_output_names[i]) {
        snprintf(sub, sizeof sub, "%s", g_output_names[i]);
        for (char *c = sub; *c; c++)
          if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                *c == '-' || (*c == '.' && c != sub)))
            *c = '_';
      } else snprintf(sub, sizeof sub, "%d", i);
      if (!save_value(t->fields[i], path, dir, sub)) return false;
    }
    return true;
  }
  fprintf(stderr, "relayc: the result holds a value that is not a tensor or a tuple (an ADT value, a closure or "
                  "a reference); run without --output to print it\n");
  return false;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* times[0] is the warm-up; times[1..repeat] are reported. */
static void print_times(double *times, long repeat) {
  qsort(times + 1, (size_t)repeat, sizeof(double), cmp_double);
  double med = repeat % 2 ? times[1 + repeat / 2] : (times[repeat / 2] + times[1 + repeat / 2]) / 2;
  printf("time_ms: median=%.3f min=%.3f max=%.3f n=%ld\n", med, times[1], times[repeat], repeat);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* {==== relayc build ====} */

/* The module name from the output path: its file name without extension
** and without a leading "lib", as a C identifier. */
static void default_name(const char *out, char *name, size_t n) {
  const char *base = strrchr(out, '/');
  base = base ? base + 1 : out;
  if (strncmp(base, "lib", 3) == 0 && base[3] && base[3] != '.') base += 3;
  size_t k = 0;
  if (*base >= '0' && *base <= '9') k = (size_t)snprintf(name, n, "m_");
  for (; *base && *base != '.' && k + 1 < n && k < 64; base++) {
    char c = *base;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    name[k++] = ok ? c : '_';
  }
  name[k] = 0;
  if (!k || !rly_name_ok(name)) snprintf(name, n, "model");
}

/* Constants at least this big go to NAME.blob (.incbin) instead of the C. */
enum { BLOB_MIN_BYTES = 1 << 20 };

/* Can the C of this build include its constants with .incbin? Only for
** artifacts relayc builds itself (not OUT.c) for the machine it runs on,
** when that is an ELF one. */
static bool blob_file_ok(const Options *o, EmitKind emit, const char *tmp) {
#if defined(__ELF__)
  return emit != EMIT_C && (!o->target || strcmp(o->target, "native") == 0) && !strchr(tmp, ',');
#else
  (void)o, (void)emit, (void)tmp;
  return false;
#endif
}

/* Compiles the files of o (with its --params) through the compiler
** library into out as emit says. Returns false after printing errors.
** With --stats, prints the statistics on stdout. */
static bool compile_to(const Options *o, const char *name, EmitKind emit, const char *out) {
  double t_start = now_ms();
  rly_compiler *rc = rly_compiler_new();
  if (!rc) {
    fprintf(stderr, "relayc: out of memory\n");
    return false;
  }
  bool ok = rly_set_name(rc, name) == 0;
  RLY_ASSERT(ok); /* checked by the caller */
  /* The C compiler's level chooses the passes too (-Os: those of -O2). */
  _Static_assert(DRIVER_OPT_SIZE == RLY_OPT_SIZE, "-Os has one number");
  if (o->opt_level >= 0) rly_set_opt_level(rc, o->opt_level);
  if (o->no_fuse) rly_set_fuse(rc, 0);
  rly_set_profile(rc, o->profile);
  if (o->threads >= 0) rly_set_threads(rc, o->threads);
  if (o->target) {
    StrBuf isa = {0};
    bool native = strcmp(o->target, "native") == 0;
    if (native) driver_native_isa(o->cc, o->cflags, &isa);
    rly_set_target(rc, o->target, native ? sb_str(&isa) : NULL);
    sb_free(&isa);
  }
  for (int i = 0; i < o->nfiles; i++)
    if (rly_add_file(rc, o->files[i]) != 0) {
      fprintf(stderr, "relayc: %s\n", rly_message(rc));
      ok = false;
    }
  rly_set_params_file(rc, o->params);
  rly_set_stats(rc, o->stats);
  rly_set_release_metadata_text(rc, 1); /* one compile: the weights' text goes back once decoded */
  /* Errors of the C compiler and of temporary files: no source positions. */
  SourceMap nosm = {0};
  Diag d;
  diag_init(&d, &nosm);
  StrBuf cpath = {0}, hpath = {0}, bpath = {0}, log = {0};
  char err[1024];
  char *tmp = NULL;
  if (ok) {
    tmp = driver_tmpdir_new(err, sizeof err);
    if (!tmp) {
      fprintf(stderr, "relayc: %s\n", err);
      ok = false;
    }
  }
  /* The weights of a big model: written as they are to NAME.blob next to
  ** NAME.c, never through the C compiler (driver/compile_ext.h). */
  if (ok && blob_file_ok(o, emit, tmp)) {
    sb_printf(&bpath, "%s/%s.blob", tmp, name);
    rly_set_blob_file(rc, sb_str(&bpath), BLOB_MIN_BYTES);
  }
  if (ok) ok = rly_compile(rc) == 0;
  double t_write = now_ms(), t_cc = t_write, t_done = t_write;
  if (ok) {
    size_t clen, hlen;
    const char *c = rly_c_text(rc, &clen), *h = rly_h_text(rc, &hlen);
    sb_printf(&cpath, "%s/%s.c", tmp, name);
    sb_printf(&hpath, "%s/%s.h", tmp, name);
    ok = file_write_all(sb_str(&cpath), c, clen, err, sizeof err) &&
         file_write_all(sb_str(&hpath), h, hlen, err, sizeof err);
    if (!ok) fprintf(stderr, "relayc: %s\n", err);
  }
  t_cc = now_ms();
  if (ok) {
    BuildOptions bo;
    driver_options_init(&bo);
    bo.emit = emit;
    if (o->cc) bo.cc = o->cc;
    bo.cflags = o->cflags;
    if (o->opt_level >= 0) bo.opt_level = o->opt_level;
    bo.target = o->target;
    bo.keep_source = o->keep_source;
    bo.commands = o->verbose ? &log : NULL;
    if (o->verbose) fprintf(stderr, "relayc: building %s:\n%s", out, rly_build_summary(rc));
    ok = driver_build(&bo, sb_str(&cpath), out, &d);
    if (o->verbose) fwrite(log.data ? log.data : "", 1, log.len, stderr);
  }
  t_done = now_ms();
  if (ok && o->stats) {
    printf("relayc build --stats: %s\n%s", out, rly_stats(rc));
    printf("time write: %.1f ms\n", t_cc - t_write);
    printf("time C compiler: %.1f ms%s\n", t_done - t_cc, emit == EMIT_C ? " (none: OUT.c)" : "");
    printf("time total: %.1f ms\n", t_done - t_start);
    fflush(stdout);
  }
  fputs(rly_diagnostics(rc), stderr);
  diag_print(&d, stderr);
  if (tmp) {
    if (!driver_rmtree(tmp, err, sizeof err)) fprintf(stderr, "relayc: warning: %s\n", err);
    free(tmp);
  }
  rly_compiler_free(rc);
  diag_free(&d);
  srcmap_free(&nosm);
  sb_free(&cpath);
  sb_free(&hpath);
  sb_free(&bpath);
  sb_free(&log);
  return ok;
}

static int build(Options *o) {
  EmitKind emit;
  if (o->emit) {
    if (!driver_emit_parse(o->emit, &emit)) return usage_error(usage_build, "--emit needs so, a, obj or c, not '%s'", o->emit);
  } else if (!driver_emit_from_path(o->output, &emit)) {
    return usage_error(usage_build, "cannot tell the kind of output from '%s': name it .so, .a, .o or .c, or use --emit",
                       o->output);
  }
  char name[80];
  if (o->name) {
    if (!rly_name_ok(o->name))
      return usage_error(usage_build, "--name needs a C identifier of at most 64 characters not starting with rlyrt, not '%s'",
                         o->name);
    snprintf(name, sizeof name, "%s", o->name);
  } else {
    default_name(o->output, name, sizeof name);
  }
  return compile_to(o, name, emit, o->output) ? 0 : EXIT_USER;
}

static int cmd_build(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, usage_build, false, &o);
  if (rc < 0) rc = build(&o);
  options_free(&o);
  return rc;
}

/* {==== relayc run, compiled ====} */

typedef struct CallJob {
  const rlyrt_module *mod;
  const char *fname;
  rlyrt_object **vals;
  int nvals;
  long runs;
  double *times;
  const rlyrt_module_build *reset; /* profiled: its records restart after run 0 */
  rlyrt_object *result;
  rlyrt_status status;
  char error[1024];
} CallJob;

static void *call_thread(void *arg) {
  CallJob *J = arg;
  for (long r = 0; r < J->runs; r++) {
    rlyrt_release(J->result);
    J->result = NULL;
    double t0 = now_ms();
    J->status = rlyrt_module_call(J->mod, J->fname, J->vals, J->nvals, &J->result);
    J->times[r] = now_ms() - t0;
    if (J->status != RLYRT_OK) {
      snprintf(J->error, sizeof J->error, "%s", rlyrt_last_error());
      break;
    }
    if (r == 0 && J->reset) rlyrt_profile_reset(J->reset);
  }
  return NULL;
}

/* Runs J on a thread with a large stack (deep non-tail recursion in
** compiled code uses the C stack). */
static void run_job(CallJob *J) {
  pthread_attr_t attr;
  pthread_t th;
  bool started = pthread_attr_init(&attr) == 0;
  if (started) {
    pthread_attr_setstacksize(&attr, (size_t)1 << 30);
    started = pthread_create(&th, &attr, call_thread, J) == 0;
    pthread_attr_destroy(&attr);
  }
  if (started) pthread_join(th, NULL);
  else call_thread(J);
}

static int run_compiled(Options *o, bool is_so) {
  int rc = EXIT_USER;
  char err[1024];
  char *tmp = NULL;
  StrBuf so = {0};
  rlyrt_module *mod = NULL;
  rlyrt_object **vals = NULL;
  int nvals = 0;
  if (is_so) {
    sb_puts(&so, o->files[0]);
  } else {
    tmp = driver_tmpdir_new(err, sizeof err);
    if (!tmp) {
      fprintf(stderr, "relayc: %s\n", err);
      goto done;
    }
    sb_printf(&so, "%s/model.so", tmp);
    if (!compile_to(o, "model", EMIT_SO, sb_str(&so))) goto done;
  }
  if (rlyrt_module_load(sb_str(&so), &mod) != RLYRT_OK) {
    fprintf(stderr, "relayc: %s\n", rlyrt_last_error());
    goto done;
  }
  if (o->threads >= 0 && rlyrt_module_set_threads(mod, o->threads) != RLYRT_OK) {
    fprintf(stderr, "relayc: %s\n", rlyrt_last_error());
    goto done;
  }
  const rlyrt_module_build *prof = rlyrt_module_get_build(mod);
  if (o->profile && !(prof && prof->profile)) {
    fprintf(stderr, "relayc: %s was built without --profile: rebuild it with 'relayc build --profile'\n", module_label(o));
    goto done;
  }
  const char *fname = o->function ? o->function : "main";
  if (fname[0] == '@') fname++;
  const rlyrt_function_info *f = rlyrt_module_find(mod, fname);
  if (!f) {
    fprintf(stderr, "relayc: %s has no function @%s\n", module_label(o), fname);
    goto done;
  }
  nvals = f->nparams;
  vals = rly_xcalloc((size_t)(nvals ? nvals : 1), sizeof(rlyrt_object *));
  char fname_at[300];
  snprintf(fname_at, sizeof fname_at, "@%s", f->name);
  if (!bind_inputs(o, fname_at, f->param_names, f->param_types, NULL, nvals, vals)) goto done;
  CallJob J = {mod, fname, vals, nvals, o->repeat ? o->repeat + 1 : 1, NULL, NULL, NULL, RLYRT_OK, ""};
  J.times = rly_xcalloc((size_t)J.runs, sizeof(double));
  /* With --repeat the profile covers the timed runs, as time_ms does: the
  ** warm-up's first touches of the constants and the workspace (page
  ** faults: 160 ms on ResNet-50) would swell the kernels that read them. */
  if (o->profile) rlyrt_profile_reset(prof);
  if (o->profile && o->repeat) J.reset = prof;
  run_job(&J);
  if (J.status != RLYRT_OK) {
    fprintf(stderr, "relayc: %s: %s\n", J.status == RLYRT_E_ARG ? "input error" : "run-time error", J.error);
  } else {
    if (o->output) {
      if (save_value(J.result, o->output, NULL, "")) rc = 0;
    } else {
      rlyrt_value_print(stdout, J.result);
      putchar('\n');
      rc = 0;
    }
    if (o->profile && rc == 0) {
      /* The whole time of the runs the records count (after the warm-up). */
      double all = 0;
      for (long r = J.reset ? 1 : 0; r < J.runs; r++) all += J.times[r];
      driver_print_profile(stdout, prof, all, J.reset ? J.runs - 1 : J.runs);
    }
    if (o->repeat && rc == 0) print_times(J.times, o->repeat);
  }
  rlyrt_release(J.result);
  free(J.times);
done:
  for (int i = 0; vals && i < nvals; i++) rlyrt_release(vals[i]);
  free(vals);
  rlyrt_module_free(mod);
  if (tmp) {
    if (!driver_rmtree(tmp, err, sizeof err)) fprintf(stderr, "relayc: warning: %s\n", err);
    free(tmp);
  }
  sb_free(&so);
  return rc;
}

static int cmd_run(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, usage_run, false, &o);
  if (rc >= 0) {
    options_free(&o);
    return rc;
  }
  int nso = 0;
  for (int i = 0; i < o.nfiles; i++) {
    size_t ilen = strlen(o.files[i]);
    if (ilen > 3 && strcmp(o.files[i] + ilen - 3, ".so") == 0) nso++;
  }
  bool is_so = nso > 0;
  if (o.nfiles == 1 && onnx_is_model_path(o.files[0]) && o.output) {
    char err[512];
    size_t len;
    char *data = file_read_all(o.files[0], &len, err, sizeof err);
    if (data) {
      int n = onnx_output_names((const unsigned char *)data, len, &g_output_names);
      g_noutput_names = n > 0 ? n : 0;
      free(data);
    }
  }
  if (is_so && o.nfiles > 1) {
    fprintf(stderr, "relayc: a built library runs alone: give one .so file, or the Relay text files only\n");
    options_free(&o);
    return EXIT_USAGE;
  }
  if (is_so && o.interp) {
    fprintf(stderr, "relayc: --interp needs Relay text, not a built library\n");
    options_free(&o);
    return EXIT_USAGE;
  }
  if (o.interp && o.profile) {
    fprintf(stderr, "relayc: --profile times compiled kernels: it does not go with --interp\n");
    options_free(&o);
    return EXIT_USAGE;
  }
  if (o.interp && o.threads >= 0) {
    fprintf(stderr, "relayc: --threads sets the compiled kernels' threads: it does not go with --interp\n");
    options_free(&o);
    return EXIT_USAGE;
  }
  if (!o.interp) {
    rc = run_compiled(&o, is_so);
    options_free(&o);
    return rc;
  }
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Module *m = load(&o, &sm, &d);
  rc = EXIT_USER;
  Interp *I = NULL;
  rlyrt_object **vals = NULL;
  int nvals = 0;
  if (!m || !ty_infer_module(m, &d)) {
    diag_print(&d, stderr);
    goto done;
  }
  Expr **params;
  const GlobalDef *g = NULL;
  char fname[300];
  if (m->expr && !o.function) {
    params = m->free_vars;
    nvals = m->nfree_vars;
    snprintf(fname, sizeof fname, "the expression");
  } else {
    const char *name = o.function ? o.function : "main";
    if (name[0] == '@') name++;
    g = module_find_def(m, sym_intern_cstr(&m->syms, name));
    if (!g) {
      fprintf(stderr, "relayc: %s has no function @%s\n", module_label(&o), name);
      goto done;
    }
    params = g->func->u.func.params;
    nvals = g->func->u.func.nparams;
    snprintf(fname, sizeof fname, "@%s", name);
  }
  vals = rly_xcalloc((size_t)(nvals ? nvals : 1), sizeof(rlyrt_object *));
  {
    const char **names = rly_xcalloc((size_t)(nvals ? nvals : 1), sizeof *names);
    char **types = rly_xcalloc((size_t)(nvals ? nvals : 1), sizeof *types);
    const Type **ir = rly_xcalloc((size_t)(nvals ? nvals : 1), sizeof *ir);
    StrBuf sb = {0};
    for (int i = 0; i < nvals; i++) {
      names[i] = params[i]->u.var.name ? params[i]->u.var.name->text : "";
      types[i] = rly_xcalloc(1, strlen(type_text(&sb, params[i]->type)) + 1);
      strcpy(types[i], sb_str(&sb));
      ir[i] = params[i]->type;
    }
    sb_free(&sb);
    bool bound = bind_inputs(&o, fname, names, (const char *const *)types, ir, nvals, vals);
    for (int i = 0; i < nvals; i++) free(types[i]);
    free(names);
    free(types);
    free(ir);
    if (!bound) goto done;
  }
  I = interp_new(m, &sm);
  long runs = o.repeat ? o.repeat + 1 : 1;
  double *times = rly_xcalloc((size_t)runs, sizeof(double));
  rlyrt_object *result = NULL;
  for (long r = 0; r < runs; r++) {
    rlyrt_release(result);
    result = NULL;
    double t0 = now_ms();
    rlyrt_status s = g ? interp_call(I, g, vals, nvals, &result) : interp_eval_expr(I, vals, &result);
    times[r] = now_ms() - t0;
    if (s != RLYRT_OK) {
      fprintf(stderr, "relayc: run-time error: %s\n", rlyrt_last_error());
      free(times);
      goto done;
    }
  }
  if (o.output) {
    if (save_value(result, o.output, NULL, "")) rc = 0;
  } else {
    rlyrt_value_print(stdout, result);
    putchar('\n');
    rc = 0;
  }
  if (o.repeat && rc == 0) print_times(times, o.repeat);
  rlyrt_release(result);
  free(times);
done:
  for (int i = 0; vals && i < nvals; i++) rlyrt_release(vals[i]);
  free(vals);
  interp_free(I);
  module_free(m);
  diag_free(&d);
  srcmap_free(&sm);
  options_free(&o);
  return rc;
}

static const char usage_import[] =
    "usage: relayc import MODEL.onnx [-o OUT.relay] [--params-out FILE.params]\n"
    "\n"
    "Writes an ONNX model as a Relay module (text format v0.0.5): @main takes\n"
    "the graph's inputs by their ONNX names, in order (a dimension that is not\n"
    "a number becomes ?), and returns its outputs (a tuple when there are\n"
    "several). Initializers and Constant nodes become constants in the text's\n"
    "#[metadata] section, or, with --params-out, parameters of @main after the\n"
    "inputs, with their values in FILE.params ('relayc build --params' binds\n"
    "them). check, build and run also take the .onnx file itself.\n"
    "Opsets 7 to 18 of the default domain; an operator relayc does not support\n"
    "is an error that names it, its node and the opset.\n"
    "\n"
    "  -o OUT             the Relay text (default: standard output)\n"
    "  --params-out FILE  initializers as @main parameters, values in FILE\n";

static int cmd_import(int argc, char **argv) {
  const char *in = NULL, *out = NULL, *params_out = NULL;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage_import, stdout);
      return 0;
    }
    if (strcmp(a, "-o") == 0 || strcmp(a, "--params-out") == 0) {
      if (i + 1 >= argc) return usage_error(usage_import, "option '%s' needs a file name", a);
      if (a[1] == 'o') out = argv[++i];
      else params_out = argv[++i];
    } else if (a[0] == '-' && a[1]) {
      return usage_error(usage_import, "unknown option '%s'", a);
    } else if (in) {
      return usage_error(usage_import, "one model at a time: '%s' is a second", a);
    } else {
      in = a;
    }
  }
  if (!in) return usage_error(usage_import, "no input model%s", "");
  char err[512];
  size_t len;
  char *data = file_read_all(in, &len, err, sizeof err);
  if (!data) {
    fprintf(stderr, "relayc: %s\n", err);
    return EXIT_USER;
  }
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  uint32_t file = srcmap_add(&sm, in, rly_xcalloc(1, 1), 0);
  OnnxOptions opt = {.params = params_out != NULL};
  OnnxImport imp;
  int rc = EXIT_USER;
  if (onnx_import(in, (const unsigned char *)data, len, file, &opt, &imp, &d)) {
    rc = 0;
    if (params_out) {
      Arena *arena = arena_new(0);
      SymTab syms;
      symtab_init(&syms, arena);
      ParamEntry *entries = rly_xcalloc((size_t)(imp.nparams ? imp.nparams : 1), sizeof *entries);
      for (int i = 0; i < imp.nparams; i++) {
        entries[i].name = sym_intern_cstr(&syms, imp.param_names[i]);
        entries[i].value = imp.params[i];
      }
      if (!params_write(params_out, entries, imp.nparams)) {
        fprintf(stderr, "relayc: cannot write %s: %s\n", params_out, strerror(errno));
        rc = EXIT_USER;
      }
      free(entries);
      symtab_free(&syms);
      arena_free(arena);
    }
    if (rc == 0) {
      if (!out || strcmp(out, "-") == 0) {
        fwrite(imp.text.data, 1, imp.text.len, stdout);
      } else if (!file_write_all(out, imp.text.data, imp.text.len, err, sizeof err)) {
        fprintf(stderr, "relayc: %s\n", err);
        rc = EXIT_USER;
      }
    }
    onnx_import_free(&imp);
  }
  diag_print(&d, stderr);
  diag_free(&d);
  srcmap_free(&sm);
  free(data);
  return rc;
}

typedef struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;
} Command;

static const Command commands[] = {
    {"check", cmd_check, usage_check},
    {"fmt", cmd_fmt, usage_fmt},
    {"run", cmd_run, usage_run},
    {"build", cmd_build, usage_build},
    {"import", cmd_import, usage_import},
};

static const Command *find_command(const char *name) {
  for (size_t i = 0; i < RLY_COUNTOF(commands); i++)
    if (strcmp(commands[i].name, name) == 0) return &commands[i];
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage_main, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
    fputs(usage_main, stdout);
    return 0;
  }
  if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
    printf("relayc %s\n", RELAYC_VERSION);
    return 0;
  }
  if (strcmp(cmd, "help") == 0) {
    if (argc < 3) {
      fputs(usage_main, stdout);
      return 0;
    }
    const Command *c = find_command(argv[2]);
    if (!c) {
      fprintf(stderr, "relayc: unknown command '%s'\n\n%s", argv[2], usage_main);
      return EXIT_USAGE;
    }
    fputs(c->usage, stdout);
    return 0;
  }
  const Command *c = find_command(cmd);
  if (!c) {
    if (strcmp(cmd, "import") == 0)
      fprintf(stderr, "relayc: '%s' is not available yet in this version (see README.md)\n", cmd);
    else
      fprintf(stderr, "relayc: unknown command '%s'\n\n%s", cmd, usage_main);
    return EXIT_USAGE;
  }
  int rc = c->run(argc - 2, argv + 2);
  onnx_free_names(g_output_names, g_noutput_names);
  return rc;
}
