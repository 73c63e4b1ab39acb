/* metadata_impl.h: internals shared by base64.c, ndarray.c, metadata.c and
** params.c (private to src/syntax/; users include metadata.h).
** They exist so that large tensors are never copied more than once:
** base64 decodes straight into the module's arena, the NDArray parser can
** adopt data already in place, and the writers stream a blob's header and
** data without assembling the blob first. */
#ifndef RLY_METADATA_IMPL_H
#define RLY_METADATA_IMPL_H

#include "ir/meta_write.h" /* NDARRAY_MAGIC, NDARRAY_HEAD, the encoders */
#include "syntax/metadata.h"

#define NDARRAY_MAX_NDIM 32
#define NDARRAY_HEADER_BYTES(ndim) (40 + 8 * (size_t)(ndim))

/* {==== Base64 ====} */

/* An upper bound on the decoded length of n characters of base64. */
size_t b64_max_decoded(size_t n);
/* Decodes s[0..n) into dst, which has room for cap bytes. Returns false on
** malformed text (a character outside the alphabet, misplaced padding, a
** dangling character) or when the output would not fit; *outlen receives
** the number of bytes produced. */
bool b64_decode_into(const char *s, size_t n, unsigned char *dst, size_t cap, size_t *outlen);
/* Decodes only the first k bytes of s (for peeking at a header). Returns
** how many were obtained (< k when the text is shorter or malformed there;
** the full decode reports the problem). */
size_t b64_peek(const char *s, size_t n, unsigned char *dst, size_t k);

/* {==== NDArray blobs ====} */

/* Parses one blob from p[0..n) like ndarray_decode. With adopt set, the
** data is not copied when p + header is 64-byte aligned: out->data then
** points into p, which must live in m's arena (and stay unchanged). */
bool ndarray_parse(const unsigned char *p, size_t n, Module *m, ConstData *out, size_t *used,
                   bool adopt, char *err, size_t errlen);

/* n bytes of zeroed arena memory at a 64-byte boundary. Asks for 63 spare
** bytes and rounds up itself, so it holds whatever alignment arena_alloc
** gives for large alignments. */
static inline void *arena_alloc64(Arena *a, size_t n) {
  unsigned char *p = arena_alloc(a, n + 63, 16);
  return p + ((64 - ((uintptr_t)p & 63)) & 63);
}

/* Little-endian field access, independent of the host's byte order. */
static inline uint64_t rd_u64le(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static inline uint32_t rd_u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr_u64le(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

#endif
