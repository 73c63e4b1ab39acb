/* meta_write.h: writing tensor constants as text, the encoding side of the
** metadata section (spec sections 6 and 6.3): NDArray blob headers, a
** streaming base64 encoder and the #[metadata] section of constants. The
** printer writes its section with these; the syntax layer (which also
** reads all of it back) builds .params files and its own blobs with them. */
#ifndef RLY_META_WRITE_H
#define RLY_META_WRITE_H

#include "ir/ir.h"

#define NDARRAY_MAGIC 0xDD5E40F096B4A13FULL
/* Fixed part of a blob: magic, reserved, device, ndim, dtype (32 bytes),
** then 8 bytes per dimension and the 8-byte data size. */
#define NDARRAY_HEAD 32

/* The standard base64 alphabet (RFC 4648 section 4), 64 characters. */
extern const char meta_b64_alphabet[65];

/* Streaming base64 encoder: feed bytes in any pieces, then finish (adds
** padding). */
typedef struct B64Writer {
  StrBuf *out;
  unsigned char carry[3];
  int ncarry;
} B64Writer;

void b64w_put(B64Writer *w, const unsigned char *p, size_t n);
void b64w_finish(B64Writer *w);

/* Appends the header of c's blob (everything before the data) to out. */
void ndarray_encode_header(StrBuf *out, const ConstData *c);

/* Writes a metadata section holding consts as meta[relay.Constant][0..n-1]
** in TVM's JSON layout (root Map -> Array -> relay.Constant nodes ->
** b64ndarrays), beginning with the line "#[metadata]". */
void meta_write_constants(StrBuf *out, ConstData *const *consts, int n);

#endif
