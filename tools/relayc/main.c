/* main.c: the relayc command line. Parses arguments, calls the compiler
** library, prints diagnostics and decides the exit status:
**   0 success, 1 an error in the user's input, 2 a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "ir/ir.h"
#include "syntax/metadata.h"
#include "syntax/parser.h"
#include "types/infer.h"

#define RELAYC_VERSION "0.1.0"

enum { EXIT_USER = 1, EXIT_USAGE = 2 };

static const char usage_main[] =
    "relayc " RELAYC_VERSION ": an ahead-of-time compiler for Relay (TVM's functional IR)\n"
    "\n"
    "usage: relayc <command> [options] FILE\n"
    "\n"
    "commands:\n"
    "  check FILE    parse FILE, infer its types, and report the errors\n"
    "  fmt FILE      print FILE in canonical Relay text\n"
    "  help [CMD]    show help for a command\n"
    "\n"
    "FILE is Relay text (format v0.0.5, with an optional #[metadata] section);\n"
    "'-' reads standard input. Run 'relayc help CMD' or 'relayc CMD --help' for a\n"
    "command's options. Exit status: 0 success, 1 errors in the input, 2 usage.\n"
    "\n"
    "Compiling to C and running models are not available yet\n"
    "(see the status table in README.md).\n";

static const char usage_check[] =
    "usage: relayc check [--print] [--params FILE.params] FILE\n"
    "\n"
    "Parses FILE, resolves every name (variables, globals, operators,\n"
    "constructors, types, metadata constants) and infers the type of every\n"
    "expression: operator shapes and dtypes, polymorphic functions, ADTs,\n"
    "if/match (match must be exhaustive), references. Errors are printed as\n"
    "FILE:LINE:COL: error: MESSAGE with the source line; several are reported\n"
    "in one run.\n"
    "\n"
    "options:\n"
    "  --print         print the typed module, /* ty=... */ on every binding\n"
    "  --params FILE   bind @main's parameters to the tensors of a .params file\n"
    "                  (by name, as TVM's bind_params_by_name does)\n"
    "  -h, --help      show this help\n";

static const char usage_fmt[] =
    "usage: relayc fmt [--params FILE.params] [-o OUT] FILE\n"
    "\n"
    "Prints FILE in canonical Relay text: type definitions, then definitions,\n"
    "each sorted by name; graph-normal form (%0 = ...;); only non-default\n"
    "operator attributes; tensor constants in a #[metadata] section.\n"
    "Printing is idempotent and the result parses back to the same module.\n"
    "\n"
    "options:\n"
    "  -o OUT          write to OUT instead of standard output\n"
    "  --params FILE   bind @main's parameters to the tensors of a .params file\n"
    "  -h, --help      show this help\n";

typedef struct Options {
  const char *input;
  const char *output;
  const char *params;
  bool print;
} Options;

static int usage_error(const char *cmd_usage, const char *fmt, const char *arg) {
  fprintf(stderr, "relayc: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n\n%s", cmd_usage);
  return EXIT_USAGE;
}

/* Parses the options of check/fmt. Returns -1 to go on, else an exit status. */
static int parse_options(int argc, char **argv, const char *usage, bool allow_output, Options *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      fputs(usage, stdout);
      return 0;
    } else if (strcmp(a, "--params") == 0 || strncmp(a, "--params=", 9) == 0) {
      if (a[8] == '=') o->params = a + 9;
      else if (i + 1 < argc) o->params = argv[++i];
      else return usage_error(usage, "option '%s' needs a file name", a);
    } else if (!allow_output && strcmp(a, "--print") == 0) {
      o->print = true;
    } else if (allow_output && strcmp(a, "-o") == 0) {
      if (i + 1 >= argc) return usage_error(usage, "option '%s' needs a file name", a);
      o->output = argv[++i];
    } else if (a[0] == '-' && a[1] != 0) {
      return usage_error(usage, "unknown option '%s'", a);
    } else if (o->input) {
      return usage_error(usage, "more than one input file ('%s')", a);
    } else {
      o->input = a;
    }
  }
  if (!o->input) return usage_error(usage, "no input file%s", "");
  return -1;
}

/* Reads, parses and binds parameters. Returns the module, or NULL after
** an I/O error (printed) or errors in d (the caller prints them). */
static Module *load(const Options *o, SourceMap *sm, Diag *d) {
  char err[512];
  size_t len;
  char *text = file_read_all(o->input, &len, err, sizeof err);
  if (!text) {
    fprintf(stderr, "relayc: %s\n", err);
    return NULL;
  }
  uint32_t file = srcmap_add(sm, strcmp(o->input, "-") == 0 ? "<stdin>" : o->input, text, len);
  Module *m = parse_module(sm, file, d);
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
  if (rc >= 0) return rc;
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
  return rc;
}

static int cmd_fmt(int argc, char **argv) {
  Options o;
  int rc = parse_options(argc, argv, usage_fmt, true, &o);
  if (rc >= 0) return rc;
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
    if (strcmp(cmd, "build") == 0 || strcmp(cmd, "run") == 0 || strcmp(cmd, "import") == 0)
      fprintf(stderr, "relayc: '%s' is not available yet in this version (see README.md)\n", cmd);
    else
      fprintf(stderr, "relayc: unknown command '%s'\n\n%s", cmd, usage_main);
    return EXIT_USAGE;
  }
  return c->run(argc - 2, argv + 2);
}
