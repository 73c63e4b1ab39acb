/* test_diag.c: diagnostics as printed (base/diag.c): source excerpts with
** escaped bytes, windows of long lines, the error limit and its one line,
** escaped messages; and utf8_len (base/strbuf.c). */
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "check.h"

/* The printout of one error at line 1, column col (len bytes) of text;
** col 0: at the file, without a line. */
static char *excerpt(const char *text, size_t n, uint32_t col, uint32_t len, const char *msg) {
  SourceMap sm = {0};
  char *copy = rly_xmalloc(n + 1);
  memcpy(copy, text, n);
  copy[n] = 0;
  uint32_t f = srcmap_add(&sm, "t.relay", copy, n);
  Diag d;
  diag_init(&d, &sm);
  Span at = {f, col ? 1 : 0, col, len};
  diag_error(&d, at, "%s", msg);
  char *buf = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&buf, &size);
  diag_print(&d, out);
  fclose(out);
  diag_free(&d);
  srcmap_free(&sm);
  return buf;
}

#define CHECK_EXCERPT(text, col, len, want)                     \
  do {                                                          \
    char *got_ = excerpt(text, sizeof(text) - 1, col, len, "m"); \
    CHECK_STR(got_, want);                                      \
    free(got_);                                                 \
  } while (0)

static void test_excerpts(void) {
  CHECK_EXCERPT("  add(%a, %b)", 3, 3, "t.relay:1:3: error: m\n    add(%a, %b)\n    ^~~\n");
  /* A tab is kept in both lines, so the caret stays under the token. */
  CHECK_EXCERPT("\tx + y", 4, 1, "t.relay:1:4: error: m\n  \tx + y\n  \t  ^\n");
  /* Control characters and bytes that are not UTF-8 are escaped; the caret
  ** covers the escape. */
  CHECK_EXCERPT("a\001b \377c", 2, 1, "t.relay:1:2: error: m\n  a\\x01b \\xffc\n   ^~~~\n");
  CHECK_EXCERPT("a\001b \377c", 5, 1, "t.relay:1:5: error: m\n  a\\x01b \\xffc\n         ^~~~\n");
  CHECK_EXCERPT("a\001b \377c", 6, 1, "t.relay:1:6: error: m\n  a\\x01b \\xffc\n             ^\n");
  /* Well-formed UTF-8 is one column. */
  CHECK_EXCERPT("\303\251 x", 4, 1, "t.relay:1:4: error: m\n  \303\251 x\n    ^\n");
  CHECK_EXCERPT("\"\342\202\254\" x", 7, 1, "t.relay:1:7: error: m\n  \"\342\202\254\" x\n      ^\n");
  /* C1 controls and invisible format characters (a bidirectional
  ** override, a byte order mark) are escaped byte by byte. */
  CHECK_EXCERPT("\302\233x \342\200\256y \357\273\277z", 1, 1,
                "t.relay:1:1: error: m\n  \\xc2\\x9bx \\xe2\\x80\\xaey \\xef\\xbb\\xbfz\n  ^~~~\n");
  /* The end of the line (an error at end of file). */
  CHECK_EXCERPT("abc", 4, 0, "t.relay:1:4: error: m\n  abc\n     ^\n");
  /* A token running past the window gets no more than 80 columns of '~'. */
  char *got = excerpt("x", 1, 1, 1000, "m");
  CHECK_STR(got, "t.relay:1:1: error: m\n  x\n  ^\n");
  free(got);
}

static void test_long_lines(void) {
  /* 1000 'a', then 'X' at column 1001, then 1000 'b'. */
  size_t n = 2001;
  char *text = rly_xmalloc(n + 1);
  memset(text, 'a', 1000);
  text[1000] = 'X';
  memset(text + 1001, 'b', 1000);
  text[n] = 0;
  char *got = excerpt(text, n, 1001, 1, "m");
  char *line = strchr(got, '\n') + 1;
  char *caret = strchr(line, '\n') + 1;
  size_t line_len = (size_t)(caret - line - 1);
  CHECK(strncmp(line, "  ...a", 6) == 0);
  CHECK(line_len <= 2 + 3 + 160 + 3);
  CHECK(strncmp(line + line_len - 4, "b...", 4) == 0);
  size_t col = (size_t)(strchr(caret, '^') - caret);
  CHECK_EQ(line[col], 'X');
  free(got);
  /* 3000 bytes that are not UTF-8 (4 columns each) before the column. */
  memset(text, 0xff, 1000);
  got = excerpt(text, n, 1001, 1, "m");
  line = strchr(got, '\n') + 1;
  caret = strchr(line, '\n') + 1;
  line_len = (size_t)(caret - line - 1);
  CHECK(line_len <= 2 + 3 + 160 + 3);
  col = (size_t)(strchr(caret, '^') - caret);
  CHECK_EQ(line[col], 'X');
  free(got);
  free(text);
}

static void test_limit(void) {
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  Span none = {0, 0, 0, 0};
  for (int i = 0; i < DIAG_MAX_ERRORS; i++) diag_error(&d, none, "e%d", i);
  CHECK(!diag_full(&d));
  diag_note(&d, none, "kept note");
  diag_error(&d, none, "one too many");
  CHECK(diag_full(&d));
  diag_note(&d, none, "dropped note");
  CHECK_EQ(diag_count(&d), DIAG_MAX_ERRORS + 1);
  CHECK_EQ(d.items.len, DIAG_MAX_ERRORS + 1);
  char *buf = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&buf, &size);
  diag_print(&d, out);
  fclose(out);
  CHECK(strstr(buf, "error: e19\nnote: kept note\nrelayc: too many errors; only the first 20 are shown\n") != NULL);
  CHECK(strstr(buf, "one too many") == NULL && strstr(buf, "dropped") == NULL);
  free(buf);
  diag_free(&d);
}

static void test_messages(void) {
  /* Control characters and broken UTF-8 in a message are escaped; newlines,
  ** tabs and UTF-8 stay (the C compiler's output is quoted in messages). */
  char *got = excerpt("x", 1, 0, 0, "a\033[31mb\nc\td\377 \342\200\230q\342\200\231");
  CHECK_STR(got, "t.relay: error: a\\x1b[31mb\nc\td\\xff \342\200\230q\342\200\231\n");
  free(got);
}

static void test_utf8(void) {
  CHECK_EQ(utf8_len("a", 1), 1);
  CHECK_EQ(utf8_len("\303\251", 2), 2);
  CHECK_EQ(utf8_len("\342\202\254", 3), 3);
  CHECK_EQ(utf8_len("\360\237\230\200", 4), 4);
  CHECK_EQ(utf8_len("\303", 1), 0);             /* truncated */
  CHECK_EQ(utf8_len("\342\202", 2), 0);         /* truncated */
  CHECK_EQ(utf8_len("\200", 1), 0);             /* a stray continuation byte */
  CHECK_EQ(utf8_len("\300\200", 2), 0);         /* overlong */
  CHECK_EQ(utf8_len("\340\200\200", 3), 0);     /* overlong */
  CHECK_EQ(utf8_len("\355\240\200", 3), 0);     /* a surrogate */
  CHECK_EQ(utf8_len("\364\220\200\200", 4), 0); /* above U+10FFFF */
  CHECK_EQ(utf8_len("\377", 1), 0);
  CHECK_EQ(utf8_len("\342(\254", 3), 0);        /* a bad continuation */
}

int main(void) {
  test_excerpts();
  test_long_lines();
  test_limit();
  test_messages();
  test_utf8();
  return check_report("test_diag");
}
