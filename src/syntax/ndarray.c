/* ndarray.c: TVM's NDArray blob (spec 6.3), the binary form of a tensor in
** b64ndarrays entries and .params files.
**   u64 magic, u64 reserved, i32 device_type, i32 device_id, i32 ndim,
**   u8 code, u8 bits, u16 lanes, i64 shape[ndim], i64 nbytes, data[nbytes]
** Every field is little-endian and read byte by byte, so the host's byte
** order does not matter for the header. Element data is kept as the raw
** little-endian bytes, which is also what ConstData holds, so it is copied
** (or adopted) without conversion on any host.
** Input is untrusted: every length is checked against what is present
** before it is used, and the element count cannot overflow. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "syntax/metadata_impl.h"

/* Formats shape as Relay writes it: (2, 3), (5), (). */
static void format_shape(char *buf, size_t size, const int64_t *shape, int ndim) {
  size_t k = 0;
  buf[k++] = '(';
  for (int i = 0; i < ndim; i++) {
    char num[32];
    int w = snprintf(num, sizeof num, "%s%" PRId64, i ? ", " : "", shape[i]);
    if (k + (size_t)w + 5 >= size) {
      memcpy(buf + k, "...", 3);
      k += 3;
      break;
    }
    memcpy(buf + k, num, (size_t)w);
    k += (size_t)w;
  }
  buf[k++] = ')';
  buf[k] = 0;
}

/* Checks a dtype read from a blob: int8..64, uint8..64, bool (uint1),
** float16/32/64, bfloat16, one lane. */
static bool check_dtype(DType t, char *err, size_t errlen) {
  bool ok = false;
  switch (t.code) {
  case DT_INT: ok = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64; break;
  case DT_UINT: ok = t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64; break;
  case DT_FLOAT: ok = t.bits == 16 || t.bits == 32 || t.bits == 64; break;
  case DT_BFLOAT: ok = t.bits == 16; break;
  default: break;
  }
  if (ok && t.lanes == 1) return true;
  static const char *const codes[] = {"int", "uint", "float", "opaque handle", "bfloat",
                                      "custom", "float8_e4m3fn", "float8_e5m2"};
  const char *what = t.code < RLY_COUNTOF(codes) ? codes[t.code] : "unknown";
  if (ok) {
    char name[32];
    snprintf(err, errlen, "NDArray: vector dtype %s (%u lanes) is not supported",
             dtype_name(t, name), (unsigned)t.lanes);
  } else {
    snprintf(err, errlen,
             "NDArray: unsupported dtype (code %u = %s, %u bits, %u lanes); supported: "
             "int8/16/32/64, uint8/16/32/64, bool, float16/32/64, bfloat16",
             (unsigned)t.code, what, (unsigned)t.bits, (unsigned)t.lanes);
  }
  return false;
}

bool ndarray_parse(const unsigned char *p, size_t n, Module *m, ConstData *out, size_t *used,
                   bool adopt, char *err, size_t errlen) {
  if (n < 8) {
    snprintf(err, errlen, "NDArray: truncated blob (%zu bytes; the header alone needs at least 40)", n);
    return false;
  }
  uint64_t magic = rd_u64le(p);
  if (magic != NDARRAY_MAGIC) {
    snprintf(err, errlen, "NDArray: bad magic 0x%016" PRIX64 " (expected 0x%016" PRIX64 ")",
             magic, (uint64_t)NDARRAY_MAGIC);
    return false;
  }
  if (n < NDARRAY_HEAD) {
    snprintf(err, errlen, "NDArray: truncated header (%zu of at least 40 bytes)", n);
    return false;
  }
  int32_t device_type = (int32_t)rd_u32le(p + 16);
  if (device_type != 1) {
    snprintf(err, errlen, "NDArray: device type %" PRId32 " is not CPU (1); only CPU tensors can be loaded",
             device_type);
    return false;
  }
  int32_t ndim = (int32_t)rd_u32le(p + 24);
  if (ndim < 0 || ndim > NDARRAY_MAX_NDIM) {
    snprintf(err, errlen, "NDArray: ndim %" PRId32 " out of range (0..%d)", ndim, NDARRAY_MAX_NDIM);
    return false;
  }
  DType dt = {p[28], p[29], (uint16_t)(p[30] | p[31] << 8)};
  if (!check_dtype(dt, err, errlen)) return false;
  size_t head = NDARRAY_HEADER_BYTES(ndim);
  if (n < head) {
    snprintf(err, errlen, "NDArray: truncated header (%zu of %zu bytes for ndim %" PRId32 ")", n, head, ndim);
    return false;
  }
  int64_t shape[NDARRAY_MAX_NDIM];
  bool has_zero = false;
  for (int i = 0; i < ndim; i++) {
    shape[i] = (int64_t)rd_u64le(p + 32 + 8 * (size_t)i);
    if (shape[i] < 0) {
      snprintf(err, errlen, "NDArray: negative dimension %" PRId64 " in the shape", shape[i]);
      return false;
    }
    if (shape[i] == 0) has_zero = true;
  }
  char name[32], shape_text[160];
  dtype_name(dt, name);
  format_shape(shape_text, sizeof shape_text, shape, ndim);
  /* numel * element size must fit in an int64 and a size_t. */
  uint64_t elem = (dt.bits + 7u) / 8u;
  uint64_t limit = (uint64_t)INT64_MAX < (uint64_t)SIZE_MAX ? (uint64_t)INT64_MAX : (uint64_t)SIZE_MAX;
  uint64_t nbytes = elem;
  if (has_zero) {
    nbytes = 0;
  } else {
    for (int i = 0; i < ndim; i++) {
      if ((uint64_t)shape[i] > limit / nbytes) {
        snprintf(err, errlen, "NDArray: shape %s of %s is too large", shape_text, name);
        return false;
      }
      nbytes *= (uint64_t)shape[i];
    }
  }
  int64_t size = (int64_t)rd_u64le(p + head - 8);
  if (size < 0 || (uint64_t)size != nbytes) {
    snprintf(err, errlen, "NDArray: data size %" PRId64 " does not match shape %s of %s (%" PRIu64 " bytes)",
             size, shape_text, name, nbytes);
    return false;
  }
  if (n - head < nbytes) {
    snprintf(err, errlen, "NDArray: truncated data (%zu of %" PRIu64 " bytes present)", n - head, nbytes);
    return false;
  }
  out->dtype = dt;
  out->ndim = ndim;
  out->shape = ARENA_ARRAY(m->arena, int64_t, ndim);
  if (ndim) memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
  out->nbytes = (size_t)nbytes;
  if (adopt && ((uintptr_t)(p + head) & 63) == 0) {
    out->data = (void *)(uintptr_t)(p + head);  /* in m's arena already (see the contract) */
  } else {
    out->data = arena_alloc64(m->arena, (size_t)nbytes);
    if (nbytes) memcpy(out->data, p + head, (size_t)nbytes);
  }
  *used = head + (size_t)nbytes;
  return true;
}

bool ndarray_decode(const unsigned char *p, size_t n, Module *m, ConstData *out, size_t *used,
                    char *err, size_t errlen) {
  return ndarray_parse(p, n, m, out, used, false, err, errlen);
}

void ndarray_encode(StrBuf *out, const ConstData *c) {
  ndarray_encode_header(out, c);
  if (c->nbytes) sb_putn(out, (const char *)c->data, c->nbytes);
}
