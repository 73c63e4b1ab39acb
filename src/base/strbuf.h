/* strbuf.h: a growable string on the heap (owner calls sb_free). */
#ifndef RLY_STRBUF_H
#define RLY_STRBUF_H

#include <stdarg.h>
#include <stdio.h>

#include "base/common.h"

typedef struct StrBuf {
  char *data;  /* always NUL-terminated once anything was appended */
  size_t len, cap;
} StrBuf;

void sb_putc(StrBuf *sb, char c);
void sb_puts(StrBuf *sb, const char *s);
void sb_putn(StrBuf *sb, const char *s, size_t n);
void sb_printf(StrBuf *sb, const char *fmt, ...) RLY_PRINTF(2, 3);
void sb_vprintf(StrBuf *sb, const char *fmt, va_list ap);
/* Returns the text ("" when empty); borrowed until the next append. */
const char *sb_str(StrBuf *sb);
void sb_clear(StrBuf *sb);
void sb_free(StrBuf *sb);

/* Length of the well-formed UTF-8 character at s (n > 0 bytes available):
** 1 for ASCII, 2 to 4 for a multi-byte character; 0 when the bytes there
** are not well-formed UTF-8 (a stray continuation byte, an overlong form,
** a surrogate, a code point above U+10FFFF, a truncated sequence). */
size_t utf8_len(const char *s, size_t n);

#endif
