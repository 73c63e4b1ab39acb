/* base64.c: base64 with the standard alphabet (RFC 4648 section 4), as used
** by the metadata section's b64ndarrays and repr_b64 fields.
** Decoding ignores ASCII whitespace anywhere, accepts a final quantum with or
** without its '=' padding, and rejects everything else. Decoding writes into
** caller-provided memory so a 100 MB tensor lands in the arena directly;
** encoding streams into a StrBuf in chunks (the encoder is in
** ir/meta_write.c). */
#include <stdlib.h>
#include <string.h>

#include "syntax/metadata_impl.h"

enum { B64_BAD = -1, B64_PAD = -2, B64_SPACE = -3 };

/* Fills the reverse table: value 0..63, or one of the B64_* classes. Built
** per call (64 stores) rather than kept in a global. */
static void reverse_table(signed char t[256]) {
  memset(t, B64_BAD, 256);
  for (int i = 0; i < 64; i++) t[(unsigned char)meta_b64_alphabet[i]] = (signed char)i;
  t['='] = B64_PAD;
  t[' '] = t['\t'] = t['\n'] = t['\r'] = t['\f'] = t['\v'] = B64_SPACE;
}

size_t b64_max_decoded(size_t n) { return n / 4 * 3 + 3; }

bool b64_decode_into(const char *s, size_t n, unsigned char *dst, size_t cap, size_t *outlen) {
  signed char t[256];
  reverse_table(t);
  const unsigned char *u = (const unsigned char *)s;
  size_t i = 0, o = 0;
  *outlen = 0;
  /* Fast path: whole quanta of alphabet characters (the usual case: TVM
  ** writes one unbroken line). */
  while (i + 4 <= n && o + 3 <= cap) {
    int a = t[u[i]], b = t[u[i + 1]], c = t[u[i + 2]], d = t[u[i + 3]];
    if ((a | b | c | d) < 0) break;
    uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)d;
    dst[o] = (unsigned char)(v >> 16);
    dst[o + 1] = (unsigned char)(v >> 8);
    dst[o + 2] = (unsigned char)v;
    o += 3;
    i += 4;
  }
  /* General path: whitespace, padding and the final quantum. */
  uint32_t acc = 0;
  int nacc = 0, npad = 0;
  for (; i < n; i++) {
    int v = t[u[i]];
    if (v == B64_SPACE) continue;
    if (v == B64_PAD) {
      npad++;
      continue;
    }
    if (v < 0 || npad) return false;  /* garbage, or data after padding */
    acc = acc << 6 | (uint32_t)v;
    if (++nacc == 4) {
      if (o + 3 > cap) return false;
      dst[o] = (unsigned char)(acc >> 16);
      dst[o + 1] = (unsigned char)(acc >> 8);
      dst[o + 2] = (unsigned char)acc;
      o += 3;
      acc = 0;
      nacc = 0;
    }
  }
  if (nacc == 1) return false;
  if (npad && (nacc == 0 || nacc + npad != 4)) return false;
  if (nacc == 2) {
    if (o + 1 > cap) return false;
    dst[o++] = (unsigned char)(acc >> 4);
  } else if (nacc == 3) {
    if (o + 2 > cap) return false;
    dst[o++] = (unsigned char)(acc >> 10);
    dst[o++] = (unsigned char)(acc >> 2);
  }
  *outlen = o;
  return true;
}

size_t b64_peek(const char *s, size_t n, unsigned char *dst, size_t k) {
  signed char t[256];
  reverse_table(t);
  uint32_t acc = 0;
  int nacc = 0;
  size_t o = 0;
  for (size_t i = 0; i < n && o < k; i++) {
    int v = t[(unsigned char)s[i]];
    if (v == B64_SPACE) continue;
    if (v < 0) break;
    acc = acc << 6 | (uint32_t)v;
    if (++nacc == 4) {
      for (int j = 2; j >= 0 && o < k; j--) dst[o++] = (unsigned char)(acc >> (8 * j));
      acc = 0;
      nacc = 0;
    }
  }
  return o;
}

unsigned char *base64_decode(const char *s, size_t n, size_t *outlen) {
  size_t cap = b64_max_decoded(n);
  unsigned char *buf = rly_xmalloc(cap);
  if (!b64_decode_into(s, n, buf, cap, outlen)) {
    free(buf);
    *outlen = 0;
    return NULL;
  }
  return buf;
}

void base64_encode(StrBuf *out, const unsigned char *p, size_t n) {
  B64Writer w = {out, {0}, 0};
  b64w_put(&w, p, n);
  b64w_finish(&w);
}
