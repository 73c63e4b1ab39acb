/* roundtrip.c: the round-trip check run on every corpus file.
**   roundtrip [--params FILE.params] FILE.relay
** Parses FILE (binding the params if given), verifies the IR, prints it,
** parses the printed text, and checks that the two modules are
** structurally equal and that printing the second gives the same text
** (printing is idempotent). Exit status 0 when all hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "ir/ir.h"
#include "syntax/metadata.h"
#include "syntax/parser.h"

static Module *parse_text(SourceMap *sm, Diag *d, const char *name, char *text, size_t len) {
  uint32_t f = srcmap_add(sm, name, text, len);
  return parse_module(sm, f, d);
}

static void first_difference(const char *a, const char *b) {
  int line = 1;
  size_t i = 0;
  while (a[i] && a[i] == b[i]) {
    if (a[i] == '\n') line++;
    i++;
  }
  fprintf(stderr, "roundtrip: the texts first differ at line %d\n", line);
}

int main(int argc, char **argv) {
  const char *params = NULL, *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--params") == 0 && i + 1 < argc) params = argv[++i];
    else path = argv[i];
  }
  if (!path) {
    fprintf(stderr, "usage: roundtrip [--params FILE.params] FILE.relay\n");
    return 2;
  }
  char err[512];
  size_t len;
  char *text = file_read_all(path, &len, err, sizeof err);
  if (!text) {
    fprintf(stderr, "roundtrip: %s\n", err);
    return 1;
  }
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  int rc = 1;
  Module *m1 = parse_text(&sm, &d, path, text, len), *m2 = NULL;
  StrBuf p1 = {0}, p2 = {0};
  PrintOptions opt = {.show_types = false, .show_metadata = true};
  if (!m1) goto fail;
  if (params) {
    ParamEntry *entries;
    uint32_t pf = srcmap_add(&sm, params, rly_xcalloc(1, 1), 0);
    int n = params_read(params, m1, &entries, &d, pf);
    Span at = {pf, 0, 0, 0};
    if (n < 0 || !bind_params(m1, entries, n, &d, at)) goto fail;
  }
  if (!ir_verify(m1, &d)) goto fail;
  ir_print_module(&p1, m1, &opt);
  char *copy = rly_xmalloc(p1.len + 1);
  memcpy(copy, sb_str(&p1), p1.len + 1);
  m2 = parse_text(&sm, &d, "<printed>", copy, p1.len);
  if (!m2) {
    fprintf(stderr, "roundtrip: the printed text does not parse:\n%s\n", sb_str(&p1));
    goto fail;
  }
  if (!ir_module_equal(m1, m2)) {
    fprintf(stderr, "roundtrip: the printed text parses to a different module:\n%s\n", sb_str(&p1));
    goto fail;
  }
  ir_print_module(&p2, m2, &opt);
  if (strcmp(sb_str(&p1), sb_str(&p2)) != 0) {
    first_difference(sb_str(&p1), sb_str(&p2));
    fprintf(stderr, "roundtrip: printing is not idempotent:\n--- first\n%s\n--- second\n%s\n", sb_str(&p1),
            sb_str(&p2));
    goto fail;
  }
  rc = 0;
fail:
  diag_print(&d, stderr);
  if (rc == 0) printf("roundtrip %s: ok (%zu bytes printed)\n", path, p1.len);
  sb_free(&p1);
  sb_free(&p2);
  module_free(m1);
  module_free(m2);
  diag_free(&d);
  srcmap_free(&sm);
  return rc;
}
