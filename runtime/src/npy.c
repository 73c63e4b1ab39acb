/* npy.c: NumPy .npy files in and out.
**
** A .npy file is: the magic string "\x93NUMPY", a major and minor version
** byte, the header length (u16 little-endian in 1.0, u32 in 2.0 and 3.0),
** the header (a Python dict literal such as
** {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
** spaces and ended by a newline; latin-1 text, utf-8 in 3.0), then the raw
** elements.
**
** Input: a file or a buffer. Output: a tensor in C order and host byte
** order (bool bytes normalised to 0/1). Every malformed input is
** RLYRT_E_IO with a message "<name>: <problem>", and the buffer and file
** readers share the checks, so both give the same message for the same
** bytes. Nothing is read outside the buffer; sizes are checked for
** overflow before any allocation that depends on them, and a header's
** claim is checked against the bytes present before the tensor is
** allocated (files: the bytes that remain, or for pipes the bytes that
** arrive), so a short input never causes a large allocation.
**
** Writing produces what NumPy itself writes for a C-ordered little-endian
** array: version 1.0 (2.0 when the header does not fit 65535 bytes), keys
** sorted, spare spaces after the dict, the data 64-byte aligned. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "relayc/runtime.h"

static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

enum {
  NPY_MAX_NDIM = 64,          /* the largest rank rlyrt_tensor_new accepts */
  NPY_WRITE_ALIGN = 64,       /* the data offset NumPy writes (it reads 16 too) */
  NPY_MAX_HEADER = 1 << 20,   /* larger headers are rejected before allocating */
  NPY_GROWTH_DIGITS = 21,     /* NumPy leaves room for shape[0] to grow to this many digits */
};

/* What the header says. */
typedef struct npy_header {
  DLDataType dtype;
  size_t itemsize;
  bool swap;                  /* the data is in the other byte order */
  bool fortran;
  int32_t ndim;
  int64_t shape[NPY_MAX_NDIM];
  size_t nbytes;              /* elements * itemsize */
} npy_header;

static bool host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/* {==== The preamble: magic, version, header length ====} */

/* Checks the first `have` bytes of the file (at most 12: all there are when
** fewer) and gives the preamble length (10 or 12) and the header length. */
static rlyrt_status read_preamble(const unsigned char *p, size_t have, const char *name, size_t *plen,
                                  uint32_t *hlen) {
  size_t m = have < sizeof npy_magic ? have : sizeof npy_magic;
  if (memcmp(p, npy_magic, m) != 0) return rlyrt_error(RLYRT_E_IO, "%s: not a .npy file (bad magic string)", name);
  if (have < 8) return rlyrt_error(RLYRT_E_IO, "%s: truncated: the file ends inside the .npy preamble", name);
  unsigned major = p[6], minor = p[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return rlyrt_error(RLYRT_E_IO, "%s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, 3.0)", name, major,
                       minor);
  *plen = major == 1 ? 10 : 12;
  if (have < *plen) return rlyrt_error(RLYRT_E_IO, "%s: truncated: the file ends inside the .npy preamble", name);
  if (major == 1) *hlen = (uint32_t)p[8] | (uint32_t)p[9] << 8;
  else *hlen = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
  if (*hlen > NPY_MAX_HEADER)
    return rlyrt_error(RLYRT_E_IO, "%s: header too long (%lu bytes; at most %d are accepted)", name,
                       (unsigned long)*hlen, NPY_MAX_HEADER);
  return RLYRT_OK;
}

static rlyrt_status header_truncated(const char *name, uint32_t hlen, size_t found) {
  return rlyrt_error(RLYRT_E_IO, "%s: truncated: expected a %lu-byte header, found %zu bytes", name,
                     (unsigned long)hlen, found);
}

/* {==== The header dict ====} */

typedef struct hparser {
  const char *s;
  size_t i, n;
  const char *name;
} hparser;

static bool py_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

static void skip_space(hparser *p) {
  while (p->i < p->n && py_space(p->s[p->i])) p->i++;
}

static int peek(const hparser *p) { return p->i < p->n ? (unsigned char)p->s[p->i] : -1; }

/* What comes next, quoted for a message: 'x', or "the end of the header". */
static const char *found_text(const hparser *p, char *buf, size_t cap) {
  if (p->i >= p->n) return "the end of the header";
  size_t k = 0;
  while (k < 12 && p->i + k < p->n && p->s[p->i + k] != '\n' && p->s[p->i + k] != 0) k++;
  while (k > 1 && p->s[p->i + k - 1] == ' ') k--;
  snprintf(buf, cap, "'%.*s'", (int)k, p->s + p->i);
  return buf;
}

static rlyrt_status expected(const hparser *p, const char *what) {
  char buf[32];
  return rlyrt_error(RLYRT_E_IO, "%s: bad header: expected %s, found %s", p->name, what, found_text(p, buf, sizeof buf));
}

/* string = ("'" chars "'" | '"' chars '"'), without escapes (NumPy writes none).
** Gives the contents as (start, length) into the header. */
static rlyrt_status parse_string(hparser *p, const char *what, const char **str, size_t *len) {
  int q = peek(p);
  if (q == 'u' && p->i + 1 < p->n && (p->s[p->i + 1] == '\'' || p->s[p->i + 1] == '"')) {
    p->i++; /* u'...' as Python 2 wrote it */
    q = peek(p);
  }
  if (q != '\'' && q != '"') return expected(p, what);
  size_t start = ++p->i;
  while (p->i < p->n && p->s[p->i] != q && p->s[p->i] != '\n') {
    if (p->s[p->i] == '\\')
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: escape sequences in strings are not supported", p->name);
    p->i++;
  }
  if (p->i >= p->n || p->s[p->i] != q) return rlyrt_error(RLYRT_E_IO, "%s: bad header: unterminated string", p->name);
  *str = p->s + start;
  *len = p->i - start;
  p->i++;
  return RLYRT_OK;
}

static bool word_at(const hparser *p, const char *w) {
  size_t k = strlen(w);
  if (p->n - p->i < k || memcmp(p->s + p->i, w, k) != 0) return false;
  if (p->i + k < p->n) {
    char c = p->s[p->i + k];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') return false;
  }
  return true;
}

/* descr = [<>=|] ("b1" | "?" | ("i" | "u") ("1" | "2" | "4" | "8") | "f" ("2" | "4" | "8")) */
static rlyrt_status parse_descr(const char *name, const char *s, size_t len, npy_header *h) {
  char order = '=';
  size_t i = 0;
  if (len > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) order = s[i++];
  char kind = i < len ? s[i++] : 0;
  unsigned size = 0;
  if (kind == '?' && i == len) kind = 'b', size = 1;
  else if (len - i == 1 && s[i] >= '1' && s[i] <= '8') size = (unsigned)(s[i] - '0');
  bool ok = false;
  switch (kind) {
  case 'b':
    ok = size == 1;
    h->dtype = (DLDataType){kDLUInt, 1, 1};
    break;
  case 'i':
  case 'u':
    ok = size == 1 || size == 2 || size == 4 || size == 8;
    h->dtype = (DLDataType){kind == 'i' ? kDLInt : kDLUInt, (uint8_t)(size * 8), 1};
    break;
  case 'f':
    ok = size == 2 || size == 4 || size == 8;
    h->dtype = (DLDataType){kDLFloat, (uint8_t)(size * 8), 1};
    break;
  default: break;
  }
  if (!ok)
    return rlyrt_error(RLYRT_E_IO,
                       "%s: unsupported descr '%.*s' (supported: bool, int8-64, uint8-64, float16-64, "
                       "any byte order)",
                       name, (int)(len > 40 ? 40 : len), s);
  h->itemsize = size;
  bool little = host_little_endian();
  h->swap = size > 1 && ((order == '<' && !little) || (order == '>' && little));
  return RLYRT_OK;
}

/* shape = "(" ")" | "(" int "," ")" | "(" int ("," int)+ [","] ")"
** int = ["+" | "-"] digits ["L"]  (Python 2 wrote 3L) */
static rlyrt_status parse_shape(hparser *p, npy_header *h) {
  if (peek(p) != '(') return expected(p, "a tuple for 'shape'");
  p->i++;
  h->ndim = 0;
  bool comma = false; /* a comma followed the last entry */
  for (;;) {
    skip_space(p);
    if (peek(p) == ')') {
      p->i++;
      break;
    }
    if (h->ndim > 0 && !comma) return expected(p, "',' or ')' in 'shape'");
    if (h->ndim == NPY_MAX_NDIM)
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: more than %d dimensions", p->name, NPY_MAX_NDIM);
    size_t start = p->i;
    bool neg = false;
    if (peek(p) == '-' || peek(p) == '+') neg = p->s[p->i++] == '-';
    skip_space(p);
    uint64_t v = 0;
    bool digits = false, overflow = false;
    while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9') {
      unsigned d = (unsigned)(p->s[p->i++] - '0');
      if (v > ((uint64_t)INT64_MAX - d) / 10) overflow = true;
      else v = v * 10 + d;
      digits = true;
    }
    if (digits && (peek(p) == 'L' || peek(p) == 'l')) p->i++;
    int c = peek(p);
    if (!digits || !(c == ',' || c == ')' || py_space((char)c))) {
      size_t end = p->i;
      while (end < p->n && p->s[end] != ',' && p->s[end] != ')' && p->s[end] != '}' && end - start < 24) end++;
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: shape entry '%.*s' is not an integer", p->name,
                         (int)(end - start), p->s + start);
    }
    if (overflow)
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: shape entry %.*s is too large", p->name, (int)(p->i - start),
                         p->s + start);
    if (neg && v != 0)
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: shape entry -%llu is negative", p->name, (unsigned long long)v);
    h->shape[h->ndim++] = (int64_t)v;
    skip_space(p);
    comma = peek(p) == ',';
    if (comma) p->i++;
  }
  if (h->ndim == 1 && !comma)
    return rlyrt_error(RLYRT_E_IO, "%s: bad header: shape (%lld) is not a tuple (a 1-d shape is written (%lld,))",
                       p->name, (long long)h->shape[0], (long long)h->shape[0]);
  return RLYRT_OK;
}

/* header = "{" [item ("," item)* [","]] "}" spaces
** item = string ":" value, with the keys 'descr', 'fortran_order', 'shape'
** each exactly once, in any order. */
static rlyrt_status parse_header(const char *text, size_t len, const char *name, npy_header *h) {
  hparser p = {text, 0, len, name};
  rlyrt_status st;
  memset(h, 0, sizeof *h);
  bool seen[3] = {false, false, false};
  static const char *const keys[3] = {"descr", "fortran_order", "shape"};
  skip_space(&p);
  if (peek(&p) != '{') {
    char buf[32];
    return rlyrt_error(RLYRT_E_IO, "%s: bad header: not a dict (found %s)", name, found_text(&p, buf, sizeof buf));
  }
  p.i++;
  for (;;) {
    skip_space(&p);
    if (peek(&p) == '}') {
      p.i++;
      break;
    }
    const char *key;
    size_t klen;
    if ((st = parse_string(&p, "a key or '}'", &key, &klen))) return st;
    int k = 0;
    while (k < 3 && !(strlen(keys[k]) == klen && memcmp(keys[k], key, klen) == 0)) k++;
    if (k == 3)
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: unexpected key '%.*s'", name, (int)(klen > 40 ? 40 : klen), key);
    if (seen[k]) return rlyrt_error(RLYRT_E_IO, "%s: bad header: duplicate key '%s'", name, keys[k]);
    seen[k] = true;
    skip_space(&p);
    if (peek(&p) != ':') return expected(&p, "':'");
    p.i++;
    skip_space(&p);
    if (k == 0) {
      const char *d;
      size_t dlen;
      if (peek(&p) == '[')
        return rlyrt_error(RLYRT_E_IO, "%s: unsupported descr (structured dtypes are not supported)", name);
      if ((st = parse_string(&p, "a string for 'descr'", &d, &dlen))) return st;
      if ((st = parse_descr(name, d, dlen, h))) return st;
    } else if (k == 1) {
      if (word_at(&p, "True")) h->fortran = true, p.i += 4;
      else if (word_at(&p, "False")) h->fortran = false, p.i += 5;
      else return expected(&p, "True or False for 'fortran_order'");
    } else {
      if ((st = parse_shape(&p, h))) return st;
    }
    skip_space(&p);
    if (peek(&p) == ',') p.i++;
    else if (peek(&p) != '}') return expected(&p, "',' or '}'");
  }
  skip_space(&p);
  if (p.i < p.n) return expected(&p, "the end of the header after '}'");
  for (int k = 0; k < 3; k++)
    if (!seen[k]) return rlyrt_error(RLYRT_E_IO, "%s: bad header: missing key '%s'", name, keys[k]);
  /* The size, with overflow checked (a zero dimension makes any other fine). */
  uint64_t numel = 1;
  bool empty = false;
  for (int32_t i = 0; i < h->ndim; i++) empty |= h->shape[i] == 0;
  for (int32_t i = 0; i < h->ndim && !empty; i++) {
    uint64_t d = (uint64_t)h->shape[i];
    if (numel > (uint64_t)(SIZE_MAX / 2) / d / h->itemsize)
      return rlyrt_error(RLYRT_E_IO, "%s: bad header: the array is too large", name);
    numel *= d;
  }
  h->nbytes = empty ? 0 : (size_t)numel * h->itemsize;
  return RLYRT_OK;
}

/* {==== The data ====} */

static rlyrt_status check_data_size(const npy_header *h, size_t found, const char *name) {
  if (found < h->nbytes)
    return rlyrt_error(RLYRT_E_IO, "%s: truncated: expected %zu data bytes, found %zu", name, h->nbytes, found);
  if (found > h->nbytes)
    return rlyrt_error(RLYRT_E_IO, "%s: expected %zu data bytes, found %zu (the header does not match the data)",
                       name, h->nbytes, found);
  return RLYRT_OK;
}

/* A tensor for the header; on failure the status, with the name in the message. */
static rlyrt_status new_tensor(const npy_header *h, const char *name, rlyrt_tensor **out) {
  *out = rlyrt_tensor_new(h->dtype, h->ndim, h->shape, false);
  if (*out) return RLYRT_OK;
  char why[256];
  snprintf(why, sizeof why, "%s", rlyrt_last_error());
  return rlyrt_error(RLYRT_E_NOMEM, "%s: %s", name, why);
}

/* Puts the raw file elements src into t: Fortran order transposed to C
** order, bytes swapped to host order, bools made 0/1. */
static void fill(const npy_header *h, const unsigned char *src, rlyrt_tensor *t) {
  unsigned char *dst = t->dl.data;
  size_t isz = h->itemsize, numel = h->nbytes / isz;
  if (!h->fortran || h->ndim <= 1 || numel == 0) {
    if (h->nbytes && dst != src) memcpy(dst, src, h->nbytes);
  } else {
    /* Walk the source in its order (first axis fastest) and keep the
    ** row-major destination offset in step. */
    size_t cstride[NPY_MAX_NDIM], idx[NPY_MAX_NDIM];
    size_t s = 1;
    for (int32_t k = h->ndim - 1; k >= 0; k--) {
      cstride[k] = s;
      s *= (size_t)h->shape[k];
      idx[k] = 0;
    }
    size_t off = 0;
    for (size_t j = 0; j < numel; j++) {
      memcpy(dst + off * isz, src + j * isz, isz);
      for (int32_t k = 0; k < h->ndim; k++) {
        off += cstride[k];
        if (++idx[k] < (size_t)h->shape[k]) break;
        off -= (size_t)h->shape[k] * cstride[k];
        idx[k] = 0;
      }
    }
  }
  if (h->swap) {
    for (size_t j = 0; j < numel; j++) {
      unsigned char *e = dst + j * isz;
      for (size_t a = 0, b = isz - 1; a < b; a++, b--) {
        unsigned char c = e[a];
        e[a] = e[b];
        e[b] = c;
      }
    }
  }
  if (h->dtype.bits == 1)
    for (size_t j = 0; j < numel; j++) dst[j] = dst[j] != 0;
}

/* {==== Public entry points ====} */

rlyrt_status rlyrt_npy_parse(const void *buf, size_t n, const char *name, rlyrt_tensor **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_npy_parse: out is NULL");
  *out = NULL;
  if (!name) name = "<buffer>";
  if (!buf && n) return rlyrt_error(RLYRT_E_ARG, "%s: rlyrt_npy_parse: buffer is NULL", name);
  const unsigned char *p = buf;
  size_t plen = 0;
  uint32_t hlen = 0;
  npy_header h;
  rlyrt_status st = read_preamble(p, n < 12 ? n : 12, name, &plen, &hlen);
  if (st) return st;
  if (n - plen < hlen) return header_truncated(name, hlen, n - plen);
  if ((st = parse_header((const char *)p + plen, hlen, name, &h))) return st;
  if ((st = check_data_size(&h, n - plen - hlen, name))) return st;
  if ((st = new_tensor(&h, name, out))) return st;
  fill(&h, p + plen + hlen, *out);
  return RLYRT_OK;
}

/* fread, resumed when a signal interrupts it (a pipe read while the
** program has a handler installed without SA_RESTART: a timer, say): short
** only at the end of the file or on a real error (ferror(f) then). */
static size_t read_bytes(FILE *f, void *dst, size_t n) {
  size_t got = 0;
  while (got < n) {
    size_t k = fread((unsigned char *)dst + got, 1, n - got, f);
    got += k;
    if (got == n || feof(f) || !ferror(f) || errno != EINTR) break;
    clearerr(f);
  }
  return got;
}

/* Reads up to n bytes into dst (which may be NULL when n is 0), then counts
** what is left in the file; *found is the total. */
static rlyrt_status read_rest(FILE *f, void *dst, size_t n, const char *name, size_t *found) {
  size_t got = n ? read_bytes(f, dst, n) : 0;
  if (got == n) {
    unsigned char junk[4096];
    size_t k;
    while ((k = read_bytes(f, junk, sizeof junk)) > 0) got += k;
  }
  if (ferror(f)) return rlyrt_error(RLYRT_E_IO, "%s: read error: %s", name, strerror(errno));
  *found = got;
  return RLYRT_OK;
}

/* How many bytes follow the current position of f: *left, or -1 when the
** file cannot tell (a pipe, a terminal, a /proc file). The position is
** left where it was. */
static rlyrt_status bytes_left(FILE *f, const char *name, long long *left) {
  *left = -1;
  long here = ftell(f);
  if (here < 0 || fseek(f, 0, SEEK_END) != 0) {
    clearerr(f);
    return RLYRT_OK;
  }
  long end = ftell(f);
  if (fseek(f, here, SEEK_SET) != 0) return rlyrt_error(RLYRT_E_IO, "%s: read error: %s", name, strerror(errno));
  if (end >= here) *left = (long long)end - here;
  return RLYRT_OK;
}

/* Reads the rest of a file whose size is unknown: up to want bytes into
** *buf (64-byte aligned; grown as data arrives, so a stream shorter than
** its header claims costs at most 64 KiB or twice what it held), then
** counts what is left; *found is the total. *buf is NULL when want is 0. */
static rlyrt_status read_stream(FILE *f, size_t want, const char *name, unsigned char **buf, size_t *found) {
  enum { FIRST_CHUNK = 1 << 16 };
  unsigned char *b = NULL;
  size_t cap = 0, len = 0;
  *buf = NULL;
  while (len < want) {
    if (len == cap) {
      size_t ncap = cap == 0 ? (want < FIRST_CHUNK ? want : FIRST_CHUNK) : cap > want / 2 ? want : cap * 2;
      unsigned char *nb = rlyrt_alloc(ncap, 64);
      if (!nb) {
        rlyrt_free(b);
        return RLYRT_E_NOMEM;
      }
      if (len) memcpy(nb, b, len);
      rlyrt_free(b);
      b = nb;
      cap = ncap;
    }
    size_t k = read_bytes(f, b + len, cap - len);
    len += k;
    if (k == 0) break;
  }
  size_t extra = 0;
  rlyrt_status st = len == want ? read_rest(f, NULL, 0, name, &extra) : RLYRT_OK;
  if (!st && ferror(f)) st = rlyrt_error(RLYRT_E_IO, "%s: read error: %s", name, strerror(errno));
  if (st) {
    rlyrt_free(b);
    return st;
  }
  *buf = b;
  *found = len + extra;
  return RLYRT_OK;
}

rlyrt_status rlyrt_npy_load(const char *path, rlyrt_tensor **out) {
  if (!out) return rlyrt_error(RLYRT_E_ARG, "rlyrt_npy_load: out is NULL");
  *out = NULL;
  if (!path) return rlyrt_error(RLYRT_E_ARG, "rlyrt_npy_load: path is NULL");
  rlyrt_status st = RLYRT_OK;
  char *header = NULL;
  unsigned char *raw = NULL;
  rlyrt_tensor *t = NULL;
  npy_header h;
  size_t plen = 0, found = 0;
  uint32_t hlen = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return rlyrt_error(RLYRT_E_IO, "%s: cannot open: %s", path, strerror(errno));

  unsigned char pre[12];
  size_t have = read_bytes(f, pre, 10);
  if (have == 10 && pre[6] >= 2) have += read_bytes(f, pre + 10, 2);
  if (ferror(f)) {
    st = rlyrt_error(RLYRT_E_IO, "%s: read error: %s", path, strerror(errno));
    goto fail;
  }
  if ((st = read_preamble(pre, have, path, &plen, &hlen))) goto fail;
  header = rlyrt_alloc(hlen ? hlen : 1, 1);
  if (!header) {
    st = RLYRT_E_NOMEM;
    goto fail;
  }
  found = hlen ? read_bytes(f, header, hlen) : 0;
  if (ferror(f)) {
    st = rlyrt_error(RLYRT_E_IO, "%s: read error: %s", path, strerror(errno));
    goto fail;
  }
  if (found < hlen) {
    st = header_truncated(path, hlen, found);
    goto fail;
  }
  if ((st = parse_header(header, hlen, path, &h))) goto fail;
  /* The header's size is not trusted: a short file must not cause a large
  ** allocation. When the file tells how much follows (a regular file), that
  ** is checked first, then the data is read into a buffer of that size (the
  ** tensor itself when no transposition is needed) and checked again (the
  ** file may change meanwhile). Otherwise (a pipe) the data is read as it
  ** comes and checked before the tensor is made. */
  long long left;
  if ((st = bytes_left(f, path, &left))) goto fail;
  bool direct = left >= 0 && (!h.fortran || h.ndim <= 1);
  if (left >= 0) {
    size_t promised = (unsigned long long)left > SIZE_MAX ? SIZE_MAX : (size_t)left;
    if ((st = check_data_size(&h, promised, path))) goto fail;
    if ((st = new_tensor(&h, path, &t))) goto fail;
    if (!direct) {
      raw = rlyrt_alloc(h.nbytes, 64);
      if (!raw) {
        st = RLYRT_E_NOMEM;
        goto fail;
      }
    }
    if ((st = read_rest(f, direct ? t->dl.data : raw, h.nbytes, path, &found))) goto fail;
  } else if ((st = read_stream(f, h.nbytes, path, &raw, &found))) {
    goto fail;
  }
  if ((st = check_data_size(&h, found, path))) goto fail;
  if (!t && (st = new_tensor(&h, path, &t))) goto fail;
  fill(&h, direct ? t->dl.data : raw, t); /* in place when direct: fill copies nothing then */
  rlyrt_free(raw);
  rlyrt_free(header);
  fclose(f);
  *out = t;
  return RLYRT_OK;

fail:
  rlyrt_release((rlyrt_object *)t);
  rlyrt_free(raw);
  rlyrt_free(header);
  fclose(f);
  return st;
}

/* printf at buf + len (capacity cap in all); the new length, kept below cap. */
static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...) RLYRT_PRINTF(4, 5);
static size_t append(char *buf, size_t cap, size_t len, const char *fmt, ...) {
  if (len + 1 >= cap) return len;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(buf + len, cap - len, fmt, ap);
  va_end(ap);
  if (k < 0) return len;
  return len + (size_t)k < cap ? len + (size_t)k : cap - 1;
}

/* Writes n bytes or sets the error. */
static rlyrt_status write_all(FILE *f, const void *p, size_t n, const char *path) {
  if (n && fwrite(p, 1, n, f) != n) return rlyrt_error(RLYRT_E_IO, "%s: cannot write: %s", path, strerror(errno));
  return RLYRT_OK;
}

rlyrt_status rlyrt_npy_save(const char *path, const rlyrt_tensor *t) {
  if (!path) return rlyrt_error(RLYRT_E_ARG, "rlyrt_npy_save: path is NULL");
  if (!t || t->obj.kind != RLYRT_TENSOR) return rlyrt_error(RLYRT_E_ARG, "%s: rlyrt_npy_save: not a tensor", path);
  DLDataType dt = t->dl.dtype;
  size_t isz = rlyrt_dtype_bytes(dt);
  char name[32];
  if (!isz || dt.code > kDLFloat || t->dl.ndim < 0 || t->dl.ndim > NPY_MAX_NDIM)
    return rlyrt_error(RLYRT_E_UNSUPPORTED, "%s: cannot save a tensor of dtype %s and rank %d", path,
                       rlyrt_dtype_name(dt, name), (int)t->dl.ndim);
  bool is_bool = dt.code == kDLUInt && dt.bits == 1;
  char descr[8];
  snprintf(descr, sizeof descr, "%c%c%u", isz == 1 ? '|' : '<',
           is_bool ? 'b' : dt.code == kDLInt ? 'i' : dt.code == kDLUInt ? 'u' : 'f', (unsigned)isz);

  /* The header text, as NumPy formats it: at most 64 dims of 20 characters. */
  char head[2048];
  size_t len = append(head, sizeof head, 0, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < t->dl.ndim; i++)
    len = append(head, sizeof head, len, "%s%lld", i ? ", " : "", (long long)t->dl.shape[i]);
  len = append(head, sizeof head, len, "%s), }", t->dl.ndim == 1 ? "," : "");
  if (t->dl.ndim > 0) {
    char first[24];
    size_t flen = append(first, sizeof first, 0, "%lld", (long long)t->dl.shape[0]);
    for (size_t k = flen; k < NPY_GROWTH_DIGITS; k++) len = append(head, sizeof head, len, " ");
  }
  /* Pad with spaces and end with a newline so the data is aligned. */
  size_t plen = 10;
  size_t pad = NPY_WRITE_ALIGN - (plen + len + 1) % NPY_WRITE_ALIGN;
  if (len + 1 + pad > 65535) {
    plen = 12;
    pad = NPY_WRITE_ALIGN - (plen + len + 1) % NPY_WRITE_ALIGN;
  }
  size_t hlen = len + pad + 1;
  if (hlen > sizeof head) return rlyrt_error(RLYRT_E_INTERNAL, "%s: .npy header buffer too small", path);
  memset(head + len, ' ', pad);
  head[hlen - 1] = '\n';

  unsigned char pre[12];
  memcpy(pre, npy_magic, 6);
  pre[6] = plen == 10 ? 1 : 2;
  pre[7] = 0;
  for (size_t k = 0; k < plen - 8; k++) pre[8 + k] = (unsigned char)(hlen >> (8 * k));

  FILE *f = fopen(path, "wb");
  if (!f) return rlyrt_error(RLYRT_E_IO, "%s: cannot open for writing: %s", path, strerror(errno));
  rlyrt_status st = write_all(f, pre, plen, path);
  if (!st) st = write_all(f, head, hlen, path);
  const unsigned char *data = (const unsigned char *)t->dl.data + t->dl.byte_offset;
  size_t nbytes = rlyrt_tensor_nbytes(t);
  bool convert = is_bool || (isz > 1 && !host_little_endian());
  if (!st && !convert) {
    st = write_all(f, data, nbytes, path);
  } else if (!st) {
    /* Byte-swap (big-endian hosts) or normalise bools through a small buffer. */
    unsigned char chunk[4096];
    for (size_t at = 0; !st && at < nbytes; at += sizeof chunk) {
      size_t k = nbytes - at < sizeof chunk ? nbytes - at : sizeof chunk;
      memcpy(chunk, data + at, k);
      for (size_t j = 0; j < k; j += isz) {
        if (is_bool) chunk[j] = chunk[j] != 0;
        for (size_t a = j, b = j + isz - 1; a < b; a++, b--) {
          unsigned char c = chunk[a];
          chunk[a] = chunk[b];
          chunk[b] = c;
        }
      }
      st = write_all(f, chunk, k, path);
    }
  }
  if (fclose(f) != 0 && !st) st = rlyrt_error(RLYRT_E_IO, "%s: cannot write: %s", path, strerror(errno));
  if (st) remove(path);
  return st;
}
