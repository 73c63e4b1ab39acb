/* alloc.c: the one allocation hook of the runtime. The default allocator
** is aligned malloc; tests and embedded users install their own (a pool,
** or one that fails on the Nth call). */
#include <stdlib.h>

#include "relayc/runtime.h"

static void *default_alloc(void *ctx, size_t size, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  return p;
}

static void default_free(void *ctx, void *p) {
  (void)ctx;
  free(p);
}

static rlyrt_allocator current = {default_alloc, default_free, NULL};

void rlyrt_set_allocator(const rlyrt_allocator *a) {
  if (a) current = *a;
  else current = (rlyrt_allocator){default_alloc, default_free, NULL};
}

void *rlyrt_alloc(size_t size, size_t align) {
  void *p = current.alloc(current.ctx, size, align);
  if (!p) rlyrt_error(RLYRT_E_NOMEM, "out of memory (requesting %zu bytes)", size);
  return p;
}

void rlyrt_free(void *p) {
  if (p) current.free(current.ctx, p);
}

const rlyrt_allocator *rlyrt_get_allocator(void) { return &current; }
