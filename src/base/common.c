/* common.c: the assertion handler and the checked allocators. */
#include "base/common.h"

#include <stdio.h>
#include <stdlib.h>

void rly_assert_fail(const char *file, int line, const char *cond) {
  fprintf(stderr, "relayc: internal error: %s:%d: assertion failed: %s\n", file, line, cond);
  abort();
}

static void out_of_memory(size_t n) {
  fprintf(stderr, "relayc: out of memory (requesting %zu bytes)\n", n);
  abort();
}

void *rly_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) out_of_memory(n);
  return p;
}

void *rly_xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q) out_of_memory(n);
  return q;
}

void *rly_xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) out_of_memory(n * size);
  return p;
}
