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
  d->max_errors = 20;
}

void diag_free(Diag *d) {
  for (int i = 0; i < d->items.len; i++) free(d->items.data[i].msg);
  VEC_FREE(&d->items);
}

static void add(Diag *d, DiagLevel level, Span at, const char *fmt, va_list ap) {
  if (level == DIAG_ERROR) {
    d->nerrors++;
    if (d->nerrors > (d->max_errors ? d->max_errors : 20)) {
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

bool diag_full(const Diag *d) { return d->nerrors >= (d->max_errors ? d->max_errors : 20); }

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

static void print_excerpt(FILE *out, const Source *s, Span at) {
  size_t n;
  const char *p = line_start(s, at.line, &n);
  if (!p) return;
  enum { MAXW = 200 };
  /* Long lines (a 100 MB metadata line, say) are shown around the column. */
  size_t from = 0;
  size_t col0 = at.col ? at.col - 1 : 0;
  if (col0 > n) col0 = n;
  if (n > MAXW && col0 > MAXW / 2) from = col0 - MAXW / 2;
  size_t to = n;
  if (to - from > MAXW) to = from + MAXW;
  StrBuf line = {0}, caret = {0};
  sb_puts(&line, "  ");
  sb_puts(&caret, "  ");
  if (from) sb_puts(&line, "..."), sb_puts(&caret, "   ");
  for (size_t i = from; i < to; i++) {
    unsigned char c = (unsigned char)p[i];
    bool cont = (c & 0xC0) == 0x80;
    if (c == '\t') sb_putc(&line, '\t');
    else if (c < 0x20 || c == 0x7f) sb_putc(&line, '?');
    else sb_putc(&line, (char)c);
    if (i < col0) {
      if (c == '\t') sb_putc(&caret, '\t');
      else if (!cont) sb_putc(&caret, ' ');
    }
  }
  if (to < n) sb_puts(&line, "...");
  sb_putc(&caret, '^');
  uint32_t len = at.len;
  size_t room = to > col0 ? to - col0 : 0;
  for (uint32_t i = 1; i < len && i < room && i < 80; i++) sb_putc(&caret, '~');
  fprintf(out, "%s\n%s\n", sb_str(&line), sb_str(&caret));
  sb_free(&line);
  sb_free(&caret);
}

void diag_print(const Diag *d, FILE *out) {
  static const char *names[] = {"error", "warning", "note"};
  for (int i = 0; i < d->items.len; i++) {
    const Diagnostic *g = &d->items.data[i];
    const Source *s = srcmap_get(d->sm, g->at.file);
    if (s && g->at.line) fprintf(out, "%s:%u:%u: ", s->name, g->at.line, g->at.col);
    else if (s) fprintf(out, "%s: ", s->name);
    fprintf(out, "%s: %s\n", names[g->level], g->msg);
    if (s && g->at.line) print_excerpt(out, s, g->at);
  }
  if (d->dropped) fprintf(out, "relayc: %d more errors not shown\n", d->dropped);
}
