/* params.c: .params files (spec 6.5), the weights TVM's save_param_dict
** writes for parameters such as %conv1.weight:
**   u64 magic 0xF7E58D4F05049CB7, u64 reserved,
**   u64 count, count x (u64 length, name bytes),
**   u64 count, count x NDArray blob (spec 6.3), same order as the names.
** Reading maps the file (falling back to read() for pipes and the like) and
** copies each tensor once, into the module's arena. Every count and length
** is checked against the bytes that remain before anything is allocated
** from it, so a malformed file gives an error, never a crash. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "syntax/metadata_impl.h"

#define PARAMS_MAGIC 0xF7E58D4F05049CB7ULL

/* Longest name shown in a message. */
enum { SHOWN_NAME = 60 };

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (Symbol *const *)a, y = (uintptr_t) * (Symbol *const *)b;
  return x < y ? -1 : x > y;
}

/* Parses the file's bytes p[0..n). */
static int parse_params(const unsigned char *p, size_t n, Module *m, ParamEntry **out, Diag *d, Span at) {
  if (n >= 8 && rd_u64le(p) != PARAMS_MAGIC) {
    diag_error(d, at, "params: bad magic 0x%016" PRIX64 " (expected 0x%016" PRIX64 "); not a .params file",
               rd_u64le(p), (uint64_t)PARAMS_MAGIC);
    return -1;
  }
  if (n < 24) {
    diag_error(d, at, "params: file too short (%zu bytes; the header needs 24)", n);
    return -1;
  }
  uint64_t nnames = rd_u64le(p + 16);
  size_t off = 24;
  /* Each name takes at least 8 bytes and each array at least 40. */
  if (nnames > (n - off) / 48 || nnames > INT32_MAX) {
    diag_error(d, at, "params: the header announces %" PRIu64 " entries, more than the %zu-byte file can hold",
               nnames, n);
    return -1;
  }
  ParamEntry *entries = ARENA_ARRAY(m->arena, ParamEntry, nnames);
  for (uint64_t i = 0; i < nnames; i++) {
    if (n - off < 8) {
      diag_error(d, at, "params: file truncated in the length of name %" PRIu64, i);
      return -1;
    }
    uint64_t len = rd_u64le(p + off);
    off += 8;
    if (len > n - off) {
      diag_error(d, at, "params: name %" PRIu64 " (%" PRIu64 " bytes) runs past the end of the file", i, len);
      return -1;
    }
    entries[i].name = sym_intern(&m->syms, (const char *)p + off, (size_t)len);
    off += (size_t)len;
  }
  if (n - off < 8) {
    diag_error(d, at, "params: file truncated before the array count");
    return -1;
  }
  uint64_t narrays = rd_u64le(p + off);
  off += 8;
  if (narrays != nnames) {
    diag_error(d, at, "params: %" PRIu64 " names but %" PRIu64 " arrays", nnames, narrays);
    return -1;
  }
  for (uint64_t i = 0; i < narrays; i++) {
    char err[256];
    size_t used;
    const Symbol *name = entries[i].name;
    if (!ndarray_decode(p + off, n - off, m, &entries[i].value, &used, err, sizeof err)) {
      diag_error(d, at, "params: array %" PRIu64 " ('%.*s'): %s", i,
                 (int)(name->len < SHOWN_NAME ? name->len : SHOWN_NAME), name->text, err);
      return -1;
    }
    off += used;
  }
  if (off != n) {
    diag_error(d, at, "params: %zu unexpected bytes after the last array", n - off);
    return -1;
  }
  /* Names are interned: duplicates are equal pointers, adjacent once sorted. */
  if (nnames > 1) {
    Symbol **sorted = rly_xmalloc(sizeof(Symbol *) * (size_t)nnames);
    for (uint64_t i = 0; i < nnames; i++) sorted[i] = entries[i].name;
    qsort(sorted, (size_t)nnames, sizeof(Symbol *), cmp_ptr);
    const Symbol *dup = NULL;
    for (uint64_t i = 1; i < nnames && !dup; i++)
      if (sorted[i] == sorted[i - 1]) dup = sorted[i];
    free(sorted);
    if (dup) {
      diag_error(d, at, "params: parameter '%.*s' appears twice",
                 (int)(dup->len < SHOWN_NAME ? dup->len : SHOWN_NAME), dup->text);
      return -1;
    }
  }
  *out = entries;
  return (int)nnames;
}

/* Reads a whole non-mappable file (a pipe, say) into a heap buffer. */
static unsigned char *read_all(int fd, size_t *n) {
  size_t cap = 1 << 16, len = 0;
  unsigned char *buf = rly_xmalloc(cap);
  for (;;) {
    if (len == cap) buf = rly_xrealloc(buf, cap *= 2);
    ssize_t r = read(fd, buf + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      free(buf);
      return NULL;
    }
    if (r == 0) break;
    len += (size_t)r;
  }
  *n = len;
  return buf;
}

int params_read(const char *path, Module *m, ParamEntry **out, Diag *d, uint32_t file) {
  Span at = {file, 0, 0, 0};
  *out = NULL;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    diag_error(d, at, "params: cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    diag_error(d, at, "params: cannot read '%s': %s", path, strerror(errno));
    close(fd);
    return -1;
  }
  if (S_ISDIR(st.st_mode)) {
    diag_error(d, at, "params: '%s' is a directory", path);
    close(fd);
    return -1;
  }
  int result;
  void *map = MAP_FAILED;
  if (S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size <= SIZE_MAX)
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map != MAP_FAILED) {
    result = parse_params(map, (size_t)st.st_size, m, out, d, at);
    munmap(map, (size_t)st.st_size);
  } else {
    size_t n;
    unsigned char *buf = read_all(fd, &n);
    if (!buf) {
      diag_error(d, at, "params: cannot read '%s': %s", path, strerror(errno));
      close(fd);
      return -1;
    }
    result = parse_params(buf, n, m, out, d, at);
    free(buf);
  }
  close(fd);
  if (result < 0) *out = NULL;
  return result;
}

int params_parse(const unsigned char *p, size_t n, Module *m, ParamEntry **out, Diag *d, uint32_t file) {
  Span at = {file, 0, 0, 0};
  *out = NULL;
  int result = parse_params(p, n, m, out, d, at);
  if (result < 0) *out = NULL;
  return result;
}

static bool put_u64(FILE *f, uint64_t v) {
  unsigned char b[8];
  wr_u64le(b, v);
  return fwrite(b, 1, 8, f) == 8;
}

bool params_write(const char *path, const ParamEntry *entries, int n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = put_u64(f, PARAMS_MAGIC) && put_u64(f, 0) && put_u64(f, (uint64_t)n);
  for (int i = 0; ok && i < n; i++) {
    const Symbol *name = entries[i].name;
    ok = put_u64(f, name->len) && fwrite(name->text, 1, name->len, f) == name->len;
  }
  ok = ok && put_u64(f, (uint64_t)n);
  StrBuf head = {0};
  for (int i = 0; ok && i < n; i++) {
    const ConstData *c = &entries[i].value;
    sb_clear(&head);
    ndarray_encode_header(&head, c);
    ok = fwrite(head.data, 1, head.len, f) == head.len &&
         (c->nbytes == 0 || fwrite(c->data, 1, c->nbytes, f) == c->nbytes);
  }
  sb_free(&head);
  int saved = errno;
  if (fclose(f) != 0) ok = false;
  else if (!ok) errno = saved ? saved : EIO;
  return ok;
}
