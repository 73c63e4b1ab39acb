/* alloc.c: the one allocation hook of the runtime. The default allocator
** is aligned malloc; tests and embedded users install their own (a pool,
** or one that fails on the Nth call). */
#include <stddef.h>
#include <stdlib.h>

#include "relayc/runtime.h"

static void *default_alloc(void *ctx, size_t size, size_t align) {
  (void)ctx;
  /* malloc's own alignment (16 on the usual 64-bit targets) is the fast
  ** path: small objects are most of what a dynamic program allocates. */
  if (align <= _Alignof(max_align_t)) return malloc(size ? size : 1);
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
