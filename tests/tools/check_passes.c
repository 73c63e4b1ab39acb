/* check_passes.c: the runner of the pass golden files.
**   check_passes FILE.relay
** FILE's first line names the passes: `// RUN: anf,dce` (pass_find names,
** comma-separated). The runner parses FILE, infers its types, runs the
** passes (pass_run), verifies the IR and that every node is still typed,
** prints the module (ir_print_module, no type comments) and compares the
** text with FILE.expected (FILE with .relay replaced by .expected). It also
** checks that the printed text parses to an equal module that type-checks. With UPDATE=1
** in the environment it rewrites FILE.expected instead of comparing.
** Exit status: 0 pass, 1 fail, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/file.h"
#include "base/strbuf.h"
#include "ir/ir.h"
#include "passes/pass.h"
#include "syntax/parser.h"
#include "types/infer.h"

enum { MAX_PASSES = 32 };

/* Reads the pass names of the `// RUN: a,b` first line into names (in
** buf). Returns their count, or -1. */
static int run_line(const char *text, char *buf, size_t cap, const char **names) {
  const char *tag = "// RUN:";
  if (strncmp(text, tag, strlen(tag)) != 0) return -1;
  const char *s = text + strlen(tag);
  size_t len = strcspn(s, "\r\n");
  if (len >= cap) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  int n = 0;
  for (char *tok = strtok(buf, ", \t"); tok; tok = strtok(NULL, ", \t")) {
    if (n == MAX_PASSES) return -1;
    names[n++] = tok;
  }
  return n;
}

static bool write_file(const char *path, const char *text, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(text, 1, len, f) == len;
  return fclose(f) == 0 && ok;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: check_passes FILE.relay\n");
    return 2;
  }
  const char *path = argv[1];
  char err[512];
  size_t len;
  char *text = file_read_all(path, &len, err, sizeof err);
  if (!text) {
    fprintf(stderr, "check_passes: %s\n", err);
    return 1;
  }
  char names_buf[1024];
  const char *names[MAX_PASSES];
  int npasses = run_line(text, names_buf, sizeof names_buf, names);
  if (npasses < 0) {
    fprintf(stderr, "check_passes: %s: the first line must be `// RUN: pass,pass,...`\n", path);
    free(text);
    return 2;
  }
  size_t plen = strlen(path);
  char *expected_path = rly_xmalloc(plen + 16);
  memcpy(expected_path, path, plen + 1);
  if (plen > 6 && strcmp(path + plen - 6, ".relay") == 0) expected_path[plen - 6] = 0;
  strcat(expected_path, ".expected");

  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  int rc = 1;
  StrBuf out = {0};
  Module *m2 = NULL;
  uint32_t file = srcmap_add(&sm, path, text, len);
  Module *m = parse_module(&sm, file, &d);
  if (!m || !ty_infer_module(m, &d)) {
    fprintf(stderr, "check_passes: %s does not type-check\n", path);
    goto done;
  }
  if (!pass_run(m, names, npasses, &d)) {
    fprintf(stderr, "check_passes: the passes failed on %s\n", path);
    goto done;
  }
  PrintOptions popt = {.show_types = false, .show_metadata = true};
  if (!ir_verify(m, &d)) {
    ir_print_module(&out, m, &popt);
    fprintf(stderr, "check_passes: the IR is invalid after the passes:\n%s", sb_str(&out));
    goto done;
  }
  if (!pass_module_typed(m)) {
    fprintf(stderr, "check_passes: an expression lost its type in the passes\n");
    goto done;
  }
  ir_print_module(&out, m, &popt);

  /* The result is a program again: it parses and type-checks. */
  char *copy = rly_xmalloc(out.len + 1);
  memcpy(copy, sb_str(&out), out.len + 1);
  uint32_t f2 = srcmap_add(&sm, "<printed after the passes>", copy, out.len);
  m2 = parse_module(&sm, f2, &d);
  if (!m2 || !ty_infer_module(m2, &d)) {
    fprintf(stderr, "check_passes: the printed result does not parse or type-check:\n%s", sb_str(&out));
    goto done;
  }
  if (!ir_module_equal(m, m2)) {
    fprintf(stderr, "check_passes: the printed result parses to a different module:\n%s", sb_str(&out));
    goto done;
  }

  const char *update = getenv("UPDATE");
  if (update && strcmp(update, "1") == 0) {
    if (!write_file(expected_path, sb_str(&out), out.len)) {
      fprintf(stderr, "check_passes: cannot write %s\n", expected_path);
      goto done;
    }
    printf("updated %s\n", expected_path);
    rc = 0;
    goto done;
  }
  size_t elen;
  char *want = file_read_all(expected_path, &elen, err, sizeof err);
  if (!want) {
    fprintf(stderr, "check_passes: %s (UPDATE=1 creates it)\n", err);
    goto done;
  }
  if (elen == out.len && memcmp(want, sb_str(&out), elen) == 0) {
    rc = 0;
  } else {
    int line = 1;
    const char *a = want, *b = sb_str(&out);
    size_t i = 0;
    while (i < elen && i < out.len && a[i] == b[i]) {
      if (a[i] == '\n') line++;
      i++;
    }
    fprintf(stderr, "check_passes: the result differs from %s at line %d (UPDATE=1 rewrites it); got:\n%s",
            expected_path, line, b);
  }
  free(want);

done:
  diag_print(&d, stderr);
  sb_free(&out);
  module_free(m);
  module_free(m2);
  diag_free(&d);
  srcmap_free(&sm);
  free(expected_path);
  return rc;
}
