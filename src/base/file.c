/* file.c: reading whole files into memory. */
#include "base/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *file_read_all(const char *path, size_t *len, char *err, size_t errlen) {
  bool is_stdin = strcmp(path, "-") == 0;
  FILE *f = is_stdin ? stdin : fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "cannot read '%s': it is a directory", path);
    fclose(f);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    cap = (size_t)st.st_size + 1;
  char *buf = rly_xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) {
      cap *= 2;
      buf = rly_xrealloc(buf, cap);
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  bool failed = ferror(f);
  int saved = errno;
  if (!is_stdin) fclose(f);
  if (failed) {
    snprintf(err, errlen, "cannot read '%s': %s", path, strerror(saved));
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

bool file_write_all(const char *path, const void *data, size_t n, char *err, size_t errlen) {
  FILE *f = fopen(path, "wb");
  if (!f) {
    snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
    return false;
  }
  bool ok = (n == 0 || fwrite(data, 1, n, f) == n);
  int e = errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    e = errno;
  }
  if (!ok) snprintf(err, errlen, "cannot write '%s': %s", path, strerror(e));
  return ok;
}
