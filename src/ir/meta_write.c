/* meta_write.c: the encoding side of the metadata section (meta_write.h),
** below the syntax layer so that the printer can write its section. */
#include <inttypes.h>
#include <string.h>

#include "ir/meta_write.h"

const char meta_b64_alphabet[65] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* {==== Base64 ====} */

/* Encodes whole triples of p (n a multiple of 3) in chunks. */
static void encode_triples(StrBuf *out, const unsigned char *p, size_t n) {
  char chunk[4096];
  size_t k = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    chunk[k++] = meta_b64_alphabet[v >> 18];
    chunk[k++] = meta_b64_alphabet[(v >> 12) & 63];
    chunk[k++] = meta_b64_alphabet[(v >> 6) & 63];
    chunk[k++] = meta_b64_alphabet[v & 63];
    if (k == sizeof chunk) {
      sb_putn(out, chunk, k);
      k = 0;
    }
  }
  if (k) sb_putn(out, chunk, k);
}

void b64w_put(B64Writer *w, const unsigned char *p, size_t n) {
  while (w->ncarry && w->ncarry < 3 && n) {
    w->carry[w->ncarry++] = *p++;
    n--;
  }
  if (w->ncarry == 3) {
    encode_triples(w->out, w->carry, 3);
    w->ncarry = 0;
  }
  size_t whole = n / 3 * 3;
  encode_triples(w->out, p, whole);
  for (size_t i = whole; i < n; i++) w->carry[w->ncarry++] = p[i];
}

void b64w_finish(B64Writer *w) {
  if (w->ncarry == 0) return;
  unsigned char b[3] = {w->carry[0], w->ncarry > 1 ? w->carry[1] : 0, 0};
  uint32_t v = (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8;
  char q[4] = {meta_b64_alphabet[v >> 18], meta_b64_alphabet[(v >> 12) & 63],
               w->ncarry > 1 ? meta_b64_alphabet[(v >> 6) & 63] : '=', '='};
  sb_putn(w->out, q, 4);
  w->ncarry = 0;
}

/* {==== NDArray blob headers ====} */

static void wr_u64le(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}

void ndarray_encode_header(StrBuf *out, const ConstData *c) {
  unsigned char fixed[NDARRAY_HEAD], num[8];
  wr_u64le(fixed, NDARRAY_MAGIC);
  wr_u64le(fixed + 8, 0);
  uint32_t words[3] = {1 /* CPU */, 0 /* device id */, (uint32_t)c->ndim};
  for (int w = 0; w < 3; w++)
    for (int i = 0; i < 4; i++) fixed[16 + 4 * w + i] = (unsigned char)(words[w] >> (8 * i));
  fixed[28] = c->dtype.code;
  fixed[29] = c->dtype.bits;
  fixed[30] = (unsigned char)(c->dtype.lanes & 0xff);
  fixed[31] = (unsigned char)(c->dtype.lanes >> 8);
  sb_putn(out, (const char *)fixed, sizeof fixed);
  for (int i = 0; i < c->ndim; i++) {
    wr_u64le(num, (uint64_t)c->shape[i]);
    sb_putn(out, (const char *)num, 8);
  }
  wr_u64le(num, (uint64_t)c->nbytes);
  sb_putn(out, (const char *)num, 8);
}

/* {==== Writing ====}
** The layout is what TVM's SaveJSON produces (its JSON writer's rules):
** objects of more than one entry and arrays of strings or objects are
** multi-line, an item separator is ", " followed by a newline and two spaces
** per level, arrays of more than 10 integers are multi-line too, and empty
** "keys"/"data" are left out. */

static void indent(StrBuf *out, int level) {
  sb_putc(out, '\n');
  for (int i = 0; i < level; i++) sb_puts(out, "  ");
}

/* "data": [a, a+1, ..., a+n-1] of a node at nesting level `level`. */
static void write_index_range(StrBuf *out, int64_t first, int64_t n, int level) {
  sb_puts(out, "\"data\": [");
  for (int64_t i = 0; i < n; i++) {
    if (i) sb_puts(out, ", ");
    if (n > 10) indent(out, level + 1);
    sb_printf(out, "%" PRId64, first + i);
  }
  if (n > 10) indent(out, level);
  sb_putc(out, ']');
}

void meta_write_constants(StrBuf *out, ConstData *const *consts, int n) {
  sb_puts(out, "#[metadata]\n{");
  indent(out, 1);
  sb_puts(out, "\"root\": 1, ");
  indent(out, 1);
  sb_puts(out, "\"nodes\": [");
  indent(out, 2);
  sb_puts(out, "{");
  indent(out, 3);
  sb_puts(out, "\"type_key\": \"\"");
  indent(out, 2);
  sb_puts(out, "}, ");
  indent(out, 2);
  sb_puts(out, "{");
  indent(out, 3);
  sb_puts(out, "\"type_key\": \"Map\"");
  if (n > 0) {
    sb_puts(out, ", ");
    indent(out, 3);
    sb_puts(out, "\"keys\": [");
    indent(out, 4);
    sb_puts(out, "\"relay.Constant\"");
    indent(out, 3);
    sb_puts(out, "], ");
    indent(out, 3);
    write_index_range(out, 2, 1, 3);
  }
  indent(out, 2);
  sb_putc(out, '}');
  if (n > 0) {
    sb_puts(out, ", ");
    indent(out, 2);
    sb_puts(out, "{");
    indent(out, 3);
    sb_puts(out, "\"type_key\": \"Array\", ");
    indent(out, 3);
    write_index_range(out, 3, n, 3);
    indent(out, 2);
    sb_putc(out, '}');
  }
  for (int i = 0; i < n; i++) {
    sb_puts(out, ", ");
    indent(out, 2);
    sb_puts(out, "{");
    indent(out, 3);
    sb_puts(out, "\"type_key\": \"relay.Constant\", ");
    indent(out, 3);
    sb_puts(out, "\"attrs\": {");
    indent(out, 4);
    sb_puts(out, "\"_checked_type_\": \"0\", ");
    indent(out, 4);
    sb_printf(out, "\"data\": \"%d\", ", i);
    indent(out, 4);
    sb_puts(out, "\"span\": \"0\", ");
    indent(out, 4);
    sb_puts(out, "\"virtual_device_\": \"0\"");
    indent(out, 3);
    sb_putc(out, '}');
    indent(out, 2);
    sb_putc(out, '}');
  }
  indent(out, 1);
  sb_puts(out, "], ");
  indent(out, 1);
  sb_puts(out, "\"b64ndarrays\": [");
  StrBuf head = {0};
  for (int i = 0; i < n; i++) {
    const ConstData *c = consts[i];
    if (i) sb_puts(out, ", ");
    indent(out, 2);
    sb_putc(out, '"');
    sb_clear(&head);
    ndarray_encode_header(&head, c);
    B64Writer w = {out, {0}, 0};
    b64w_put(&w, (const unsigned char *)head.data, head.len);
    if (c->nbytes) b64w_put(&w, (const unsigned char *)c->data, c->nbytes);
    b64w_finish(&w);
    sb_putc(out, '"');
  }
  sb_free(&head);
  if (n > 0) indent(out, 1);
  sb_puts(out, "], ");
  indent(out, 1);
  sb_puts(out, "\"attrs\": {\"tvm_version\": \"0.16.0\"}\n}\n");
}
