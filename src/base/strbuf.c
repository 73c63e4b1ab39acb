/* strbuf.c: growable strings. */
#include "base/strbuf.h"

#include <stdlib.h>
#include <string.h>

static void grow(StrBuf *sb, size_t extra) {
  if (sb->len + extra + 1 <= sb->cap) return;
  size_t cap = sb->cap ? sb->cap * 2 : 64;
  while (cap < sb->len + extra + 1) cap *= 2;
  sb->data = rly_xrealloc(sb->data, cap);
  sb->cap = cap;
}

void sb_putn(StrBuf *sb, const char *s, size_t n) {
  grow(sb, n);
  memcpy(sb->data + sb->len, s, n);
  sb->len += n;
  sb->data[sb->len] = 0;
}

void sb_putc(StrBuf *sb, char c) { sb_putn(sb, &c, 1); }
void sb_puts(StrBuf *sb, const char *s) { sb_putn(sb, s, strlen(s)); }

void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  grow(sb, (size_t)n);
  vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
  sb->len += (size_t)n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(sb, fmt, ap);
  va_end(ap);
}

const char *sb_str(StrBuf *sb) { return sb->data ? sb->data : ""; }

void sb_clear(StrBuf *sb) {
  sb->len = 0;
  if (sb->data) sb->data[0] = 0;
}

void sb_free(StrBuf *sb) {
  free(sb->data);
  sb->data = NULL;
  sb->len = sb->cap = 0;
}

size_t utf8_len(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  unsigned char c = u[0];
  if (c < 0x80) return 1;
  size_t k;
  unsigned char lo = 0x80, hi = 0xBF; /* the range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) k = 2;
  else if (c >= 0xE0 && c <= 0xEF) k = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) k = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (n < k || u[1] < lo || u[1] > hi) return 0;
  for (size_t i = 2; i < k; i++)
    if ((u[i] & 0xC0) != 0x80) return 0;
  return k;
}
