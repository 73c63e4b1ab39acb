/* diag.c: collecting and printing diagnostics with source excerpts. */
#include "base/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

uint32_t srcmap_add(SourceMap *sm, const char *name, char *text, size_t len) {
  Source s;
  size_t n = strlen(name);
  s.name = rly_xmalloc(n + 1);
  memcpy(s.name, name, n + 1);
  s.text = text;
  s.len = len;
  VEC_PUSH(&sm->files, s);
  return (uint32_t)sm->files.len;
}

const Source *srcmap_get(const SourceMap *sm, uint32_t file) {
  if (!sm || file == 0 || file > (uint32_t)sm->files.len) return NULL;
  return &sm->files.data[file - 1];
}

void srcmap_truncate(SourceMap *sm, uint32_t file, size_t len) {
  if (file == 0 || file > (uint32_t)sm->files.len) return;
  Source *s = &sm->files.data[file - 1];
  if (len >= s->len) return;
  s->text = rly_xrealloc(s->text, len + 1);
  s->text[len] = 0;
  s->len = len;
}

void srcmap_free(SourceMap *sm) {
  for (int i = 0; i < sm->files.len; i++) {
    free(sm->files.data[i].name);
    free(sm->files.data[i].text);
  }
  VEC_FREE(&sm->files);
}

void diag_init(Diag *d, const SourceMap *sm) {
  memset(d, 0, sizeof *d);
  d->sm = sm;
  d->max_errors = DIAG_MAX_ERRORS;
}

void diag_free(Diag *d) {
  for (int i = 0; i < d->items.len; i++) free(d->items.data[i].msg);
  VEC_FREE(&d->items);
}

static int limit(const Diag *d) { return d->max_errors > 0 ? d->max_errors : DIAG_MAX_ERRORS; }

static void add(Diag *d, DiagLevel level, Span at, const char *fmt, va_list ap) {
  if (level == DIAG_ERROR) {
    d->nerrors++;
    if (d->nerrors > limit(d)) {
      d->dropped++;
      return;
    }
  } else if (d->dropped) {
    return;  /* notes of dropped errors */
  }
  StrBuf sb = {0};
  sb_vprintf(&sb, fmt, ap);
  Diagnostic g = {level, at, sb.data ? sb.data : rly_xcalloc(1, 1)};
  VEC_PUSH(&d->items, g);
}

void diag_error(Diag *d, Span at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_ERROR, at, fmt, ap);
  va_end(ap);
}

void diag_warning(Diag *d, Span at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_WARNING, at, fmt, ap);
  va_end(ap);
}

void diag_note(Diag *d, Span at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  add(d, DIAG_NOTE, at, fmt, ap);
  va_end(ap);
}

int diag_count(const Diag *d) { return d->nerrors; }

bool diag_full(const Diag *d) { return d->dropped > 0; }

/* {==== Printing ====} */

/* Finds the start of 1-based line `line` by scanning; diagnostics are few. */
static const char *line_start(const Source *s, uint32_t line, size_t *len) {
  const char *p = s->text, *end = s->text + s->len;
  for (uint32_t l = 1; l < line && p < end; l++) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl) return NULL;
    p = nl + 1;
  }
  if (p > end) return NULL;
  const char *nl = memchr(p, '\n', (size_t)(end - p));
  *len = (size_t)((nl ? nl : end) - p);
  if (*len && p[*len - 1] == '\r') (*len)--;
  return p;
}

/* Length of the character at s (n > 0 bytes) when it may be printed as it
** is: printable ASCII or well-formed UTF-8 other than the C1 controls
** (U+0080-U+009F, which terminals obey) and the invisible format
** characters that change how a line reads (zero-width and bidirectional
** marks, U+FEFF). 0 otherwise: the caller escapes the byte. */
static size_t printable_len(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  if (u[0] < 0x80) return u[0] >= 0x20 && u[0] != 0x7f;
  size_t k = utf8_len(s, n);
  if (k == 2 && u[0] == 0xC2 && u[1] < 0xA0) return 0;
  if (k == 3) {
    uint32_t cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) | (u[2] & 0x3F);
    if ((cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) ||
        cp == 0xFEFF)
      return 0;
  }
  return k;
}

/* One character of a source line as an excerpt shows it: a tab and what
** printable_len accepts as they are (one column), any other byte as \xHH
** (four columns), so that no control character or broken UTF-8 reaches
** the terminal. */
typedef struct Glyph {
  size_t off;      /* first byte in the line */
  uint8_t bytes;   /* bytes it covers */
  uint8_t cols;    /* columns it takes */
} Glyph;

static Glyph glyph_at(const char *line, size_t off, size_t n) {
  Glyph g = {off, 1, 1};
  if (line[off] == '\t') return g;
  size_t k = printable_len(line + off, n - off);
  if (k) g.bytes = (uint8_t)k;
  else g.cols = 4;
  return g;
}

static void put_glyph(StrBuf *sb, const char *line, Glyph g) {
  if (g.cols == 4) sb_printf(sb, "\\x%02x", (unsigned char)line[g.off]);
  else sb_putn(sb, line + g.off, g.bytes);
}

enum { EXCERPT_COLS = 160 }; /* columns of a source line shown at most */

/* The source line of `at` and a caret line under it. A long line is shown
** as a window of EXCERPT_COLS columns around the column, with "..." where
** it is cut. */
static void print_excerpt(FILE *out, const Source *s, Span at) {
  size_t n;
  const char *p = line_start(s, at.line, &n);
  if (!p) return;
  size_t col0 = at.col ? at.col - 1 : 0;
  if (col0 > n) col0 = n;
  /* Glyphs from at most 2 * EXCERPT_COLS bytes left of the column (enough
  ** for EXCERPT_COLS / 2 columns) to EXCERPT_COLS columns right of it. */
  size_t lo = col0 > 2 * EXCERPT_COLS ? col0 - 2 * EXCERPT_COLS : 0;
  for (int k = 0; k < 3 && lo < col0 && ((unsigned char)p[lo] & 0xC0) == 0x80; k++) lo++;
  Vec(Glyph) gs = {0};
  int caret = -1;       /* index of the glyph at the column */
  size_t left = 0, right = 0; /* columns before the column, from it on */
  size_t i = lo;
  while (i < n && right <= EXCERPT_COLS) {
    Glyph g = glyph_at(p, i, n);
    if (caret < 0 && i + g.bytes > col0) caret = gs.len;
    if (caret < 0) left += g.cols;
    else right += g.cols;
    VEC_PUSH(&gs, g);
    i += g.bytes;
  }
  if (caret < 0) caret = gs.len; /* the column is the end of the line */
  /* Keep at most half the width left of the column, more when the line
  ** ends soon after it. */
  int from = 0;
  if (lo > 0 || left + right > EXCERPT_COLS) {
    size_t keep = right >= EXCERPT_COLS / 2 ? EXCERPT_COLS / 2 : EXCERPT_COLS - right;
    while (from < caret && left > keep) left -= gs.data[from++].cols;
  }
  StrBuf line = {0}, mark = {0};
  sb_puts(&line, "  ");
  sb_puts(&mark, "  ");
  if (lo > 0 || from > 0) sb_puts(&line, "..."), sb_puts(&mark, "   ");
  size_t cols = 0, end = col0 + (at.len ? at.len : 1);
  int tildes = 0, k = from;
  for (; k < gs.len && cols + gs.data[k].cols <= EXCERPT_COLS; k++) {
    Glyph g = gs.data[k];
    put_glyph(&line, p, g);
    cols += g.cols;
    if (k < caret) {
      if (p[g.off] == '\t') sb_putc(&mark, '\t');
      else for (int c = 0; c < g.cols; c++) sb_putc(&mark, ' ');
    } else if (k > caret && g.off < end) {
      tildes += g.cols;
    }
  }
  if (k < gs.len || i < n) sb_puts(&line, "...");
  /* The caret spans the glyph at the column, then '~' under the rest of
  ** the token (at most 80). */
  int head = caret < gs.len ? gs.data[caret].cols : 1;
  sb_putc(&mark, '^');
  for (int c = 1; c < head + tildes && c < 80; c++) sb_putc(&mark, '~');
  fprintf(out, "%s\n%s\n", sb_str(&line), sb_str(&mark));
  sb_free(&line);
  sb_free(&mark);
  VEC_FREE(&gs);
}

/* A message as printed: newlines and tabs kept (the C compiler's output
** is quoted in some), every other byte that printable_len refuses as
** \xHH. */
static void print_message(FILE *out, const char *msg) {
  size_t n = strlen(msg);
  for (size_t i = 0; i < n;) {
    size_t k = msg[i] == '\n' || msg[i] == '\t' ? 1 : printable_len(msg + i, n - i);
    if (k) {
      fwrite(msg + i, 1, k, out);
      i += k;
    } else {
      fprintf(out, "\\x%02x", (unsigned char)msg[i]);
      i++;
    }
  }
  fputc('\n', out);
}

void diag_print(const Diag *d, FILE *out) {
  static const char *names[] = {"error", "warning", "note"};
  for (int i = 0; i < d->items.len; i++) {
    const Diagnostic *g = &d->items.data[i];
    const Source *s = srcmap_get(d->sm, g->at.file);
    if (s && g->at.line) fprintf(out, "%s:%u:%u: ", s->name, g->at.line, g->at.col);
    else if (s) fprintf(out, "%s: ", s->name);
    fprintf(out, "%s: ", names[g->level]);
    print_message(out, g->msg);
    if (s && g->at.line) print_excerpt(out, s, g->at);
  }
  if (d->dropped) fprintf(out, "relayc: too many errors; only the first %d are shown\n", limit(d));
}
