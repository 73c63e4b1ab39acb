/* fuzz_parser.c: libFuzzer target for the Relay text front end.
**
** For each input: parse it as a module (any bytes; a NUL byte becomes a
** space, since a NUL anywhere makes the whole file "not a Relay text file"
** at once and the fuzzer would learn nothing past that check); print the
** diagnostics (to /dev/null, exercising the excerpt printer on arbitrary
** text); when it parses, print the module with its metadata section, parse
** the printed text again and require the two modules to be structurally
** equal; then run type inference on it (and print it with its types when it
** checks). A crash, a sanitizer report, a leak or an abort() here is a bug.
**
** With RLY_FUZZ_STRICT=1 in the environment, printed text that fails to
** parse again is also a failure (by default it is only counted: the printer
** may legitimately produce text the parser rejects, e.g. NaN constants).
**
** Build: cmake -DRLY_FUZZ=ON -DRLY_SANITIZE=ON with CC=clang (make fuzz-smoke). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "ir/ir.h"
#include "syntax/parser.h"
#include "types/infer.h"

#define FUZZ_MAX_INPUT (1u << 20) /* larger inputs are ignored */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *g_null;      /* diagnostics are printed here */
static bool g_strict;     /* printed text must parse again */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *s = getenv("RLY_FUZZ_STRICT");
  g_strict = s && s[0] && strcmp(s, "0") != 0;
  return 0;
}

static FILE *null_out(void) {
  if (!g_null) g_null = fopen("/dev/null", "w");
  return g_null;
}

static void print_diags(const Diag *d) {
  FILE *out = null_out();
  if (out) {
    diag_print(d, out);
    fflush(out);
  }
}

/* Reports a round-trip failure with both texts, then aborts (libFuzzer saves
** the input as crash-*). */
RLY_NORETURN static void fail(const char *what, const SourceMap *sm, uint32_t printed,
                              const Diag *d2) {
  const Source *a = srcmap_get(sm, 1);
  const Source *b = srcmap_get(sm, printed);
  fprintf(stderr, "fuzz_parser: %s\n", what);
  if (a) fprintf(stderr, "---- input (%zu bytes) ----\n%.*s\n", a->len, (int)a->len, a->text);
  if (b) fprintf(stderr, "---- printed (%zu bytes) ----\n%.*s\n", b->len, (int)b->len, b->text);
  if (d2 && diag_count(d2) > 0) {
    fprintf(stderr, "---- errors of the printed text ----\n");
    diag_print(d2, stderr);
  }
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;

  char *buf = malloc(size + 1);
  if (!buf) return 0;
  for (size_t i = 0; i < size; i++) buf[i] = data[i] ? (char)data[i] : ' ';
  buf[size] = '\0';

  SourceMap sm = {0};
  uint32_t f = srcmap_add(&sm, "fuzz.relay", buf, size); /* sm owns buf */
  Diag d;
  diag_init(&d, &sm);
  Module *m = parse_module(&sm, f, &d);
  print_diags(&d);

  if (m) {
    StrBuf sb = {0};
    PrintOptions opt = {.show_metadata = true};
    ir_print_module(&sb, m, &opt);

    /* The printed text becomes a second source of the same map (owned by it). */
    size_t plen = sb.len;
    char *ptext = sb.data;
    if (!ptext) {
      ptext = malloc(1);
      if (!ptext) abort();
      ptext[0] = '\0';
      plen = 0;
    }
    uint32_t f2 = srcmap_add(&sm, "fuzz-printed.relay", ptext, plen);

    Diag d2;
    diag_init(&d2, &sm);
    Module *m2 = parse_module(&sm, f2, &d2);
    print_diags(&d2);
    if (m2) {
      if (!ir_module_equal(m, m2)) fail("printed module differs from the parsed one", &sm, f2, NULL);
      /* Type inference must never crash either, whatever it is given;
      ** a module that checks must print with its types. */
      Diag d3;
      diag_init(&d3, &sm);
      if (ty_infer_module(m2, &d3)) {
        StrBuf typed = {0};
        PrintOptions topt = {.show_types = true};
        ir_print_module(&typed, m2, &topt);
        sb_free(&typed);
      }
      print_diags(&d3);
      diag_free(&d3);
      module_free(m2);
    } else if (g_strict) {
      fail("printed module does not parse", &sm, f2, &d2);
    }
    diag_free(&d2);
    module_free(m);
  }

  diag_free(&d);
  srcmap_free(&sm);
  return 0;
}
