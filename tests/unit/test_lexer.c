/* test_lexer.c: every case of tests/lexer_cases.txt (the lexical examples
** of spec sections 2 and 8): lex the input alone and compare the token
** sequence with the expected one. Run from the repository root. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "check.h"
#include "syntax/lexer.h"

/* Renders one token in the cases' notation (numbers get compared apart). */
static void render(StrBuf *sb, const Token *t, const char *src, size_t srclen) {
  char buf[32];
  switch (t->kind) {
  case TOK_INT: sb_printf(sb, "INT(%s):%lld", dtype_name(t->u.i.dt, buf), (long long)t->u.i.v); break;
  case TOK_FLOAT: sb_printf(sb, "FLOAT(%s):%.17g", dtype_name(t->u.f.dt, buf), t->u.f.v); break;
  case TOK_IDENT: {
    bool b = (t->u.name.len == 4 && memcmp(t->u.name.s, "True", 4) == 0) ||
             (t->u.name.len == 5 && memcmp(t->u.name.s, "False", 5) == 0);
    sb_printf(sb, "%s:%.*s", b ? "BOOL" : "IDENT", (int)t->u.name.len, t->u.name.s);
    break;
  }
  case TOK_LOCAL: sb_printf(sb, "LOCAL:%.*s", (int)t->u.name.len, t->u.name.s); break;
  case TOK_GLOBAL: sb_printf(sb, "GLOBAL:%.*s", (int)t->u.name.len, t->u.name.s); break;
  case TOK_GRAPH: sb_printf(sb, "GRAPH:%lld", (long long)t->u.i.v); break;
  case TOK_META:
    sb_printf(sb, "META:%.*s[%lld]", (int)t->u.meta.keylen, t->u.meta.key, (long long)t->u.meta.index);
    break;
  case TOK_VERSION: sb_printf(sb, "VERSION:\"%.*s\"", (int)t->u.str.len, t->u.str.s); break;
  case TOK_METADATA: {
    const char *a = src + t->u.metadata.offset, *b = src + srclen;
    while (a < b && (*a == ' ' || *a == '\t' || *a == '\n')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n')) b--;
    sb_printf(sb, "METADATA:%.*s", (int)(b - a), a);
    break;
  }
  case TOK_STRING: {
    Arena *a = arena_new(0);
    Diag d;
    diag_init(&d, NULL);
    size_t n = 0;
    char *s = lex_decode_string(a, t, &n, &d);
    sb_puts(sb, "STRING:");
    for (size_t i = 0; s && i < n; i++) {
      unsigned char c = (unsigned char)s[i];
      if (c == '"') sb_puts(sb, "\\\"");
      else if (c == '\\') sb_puts(sb, "\\\\");
      else if (c == '\t') sb_puts(sb, "\\t");
      else if (c == '\n') sb_puts(sb, "\\n");
      else if (c == '\r') sb_puts(sb, "\\r");
      else if (c < 0x20 || c >= 0x7f) sb_printf(sb, "\\x%02x", c);
      else sb_putc(sb, (char)c);
    }
    if (!s) sb_puts(sb, "<bad escape>");
    diag_free(&d);
    arena_free(a);
    break;
  }
  case TOK_ERROR: sb_puts(sb, "ERROR"); break;
  default:
    if (t->kind >= TOK_LET && t->kind <= TOK_REF_WRITE) sb_printf(sb, "KEYWORD:%.*s", (int)t->span.len, t->start);
    else sb_printf(sb, "PUNCT:%.*s", (int)t->span.len, t->start);
    break;
  }
}

/* Compares one rendered item with an expected one; numbers numerically
** after rounding to their dtype. */
static bool item_equal(const char *got, const char *want) {
  if (strcmp(got, want) == 0) return true;
  bool is_float = strncmp(got, "FLOAT(", 6) == 0 && strncmp(want, "FLOAT(", 6) == 0;
  if (!is_float) return false;
  const char *gc = strchr(got, ':'), *wc = strchr(want, ':');
  if (!gc || !wc || gc - got != wc - want || strncmp(got, want, (size_t)(gc - got)) != 0) return false;
  double g = strtod(gc + 1, NULL), w = strtod(wc + 1, NULL);
  if (strstr(got, "float16")) return half_from_double(g) == half_from_double(w);
  if (strstr(got, "float32")) return (float)g == (float)w;
  return g == w;
}

static int run_case(const char *input, const char *expected, int lineno) {
  SourceMap sm = {0};
  size_t n = strlen(input);
  char *text = malloc(n + 1);
  memcpy(text, input, n + 1);
  uint32_t f = srcmap_add(&sm, "case", text, n);
  Diag d;
  diag_init(&d, &sm);
  TokenList tl = lex_file(&sm, f, &d);
  /* Split the expected items. */
  char *want = strdup(expected);
  char *items[256];
  int nwant = 0;
  for (char *tok = strtok(want, " "); tok && nwant < 256; tok = strtok(NULL, " ")) items[nwant++] = tok;
  int ngot = 0;
  bool ok = true, saw_error = false;
  StrBuf all = {0};
  for (int i = 0; i < tl.n; i++) {
    const Token *t = &tl.toks[i];
    if (t->kind == TOK_EOF) break;
    StrBuf one = {0};
    render(&one, t, text, n);
    sb_printf(&all, "%s%s", ngot ? " " : "", sb_str(&one));
    if (t->kind == TOK_ERROR) saw_error = true;
    if (ngot >= nwant || !item_equal(sb_str(&one), items[ngot])) ok = false;
    ngot++;
    sb_free(&one);
  }
  if (ngot != nwant) ok = false;
  /* An ERROR token always comes with a diagnostic, and only then. */
  if (saw_error != (diag_count(&d) > 0)) ok = false;
  check_count++;
  if (!ok) {
    check_failures++;
    fprintf(stderr, "tests/lexer_cases.txt:%d: '%s'\n  expected: %s\n  got:      %s\n", lineno, input, expected,
            sb_str(&all));
  }
  sb_free(&all);
  free(want);
  tokens_free(&tl);
  diag_free(&d);
  srcmap_free(&sm);
  return ok;
}

/* Spans: line and column of tokens after newlines, tabs and comments. */
static void test_spans(void) {
  SourceMap sm = {0};
  const char *src = "def\n  @f /* c\n c */ %x\t1f";
  char *text = strdup(src);
  uint32_t f = srcmap_add(&sm, "s", text, strlen(src));
  Diag d;
  diag_init(&d, &sm);
  TokenList tl = lex_file(&sm, f, &d);
  CHECK_EQ(tl.n, 5);
  CHECK_EQ(tl.toks[0].span.line, 1);
  CHECK_EQ(tl.toks[0].span.col, 1);
  CHECK_EQ(tl.toks[1].span.line, 2);
  CHECK_EQ(tl.toks[1].span.col, 3);
  CHECK_EQ(tl.toks[1].span.len, 2);
  CHECK_EQ(tl.toks[2].span.line, 3);
  CHECK_EQ(tl.toks[2].span.col, 7);
  CHECK_EQ(tl.toks[3].span.col, 10);
  CHECK(tl.toks[2].space_before);
  CHECK_EQ(diag_count(&d), 0);
  tokens_free(&tl);
  diag_free(&d);
  srcmap_free(&sm);
}

int main(void) {
  FILE *f = fopen("tests/lexer_cases.txt", "rb");
  if (!f) {
    perror("tests/lexer_cases.txt");
    return 1;
  }
  char line[4096];
  int lineno = 0, cases = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n')) line[--n] = 0;
    if (n == 0 || strcmp(line, "#") == 0 || strncmp(line, "# ", 2) == 0) continue;
    char *tab = strchr(line, '\t');
    if (!tab) {
      fprintf(stderr, "tests/lexer_cases.txt:%d: no TAB\n", lineno);
      check_failures++;
      continue;
    }
    *tab = 0;
    run_case(line, tab + 1, lineno);
    cases++;
  }
  fclose(f);
  CHECK(cases >= 100);
  test_spans();
  return check_report("test_lexer");
}
