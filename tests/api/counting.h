/* counting.h: a thread-safe counting allocator for the tests of compiled
** modules (install it with rlyrt_set_allocator(&counting); a loaded module
** shares it). live_blocks: allocated and not yet freed; all_blocks:
** allocated since the start. */
#ifndef RLY_TEST_COUNTING_H
#define RLY_TEST_COUNTING_H

#include <stdatomic.h>
#include <stdlib.h>

#include "relayc/runtime.h"

static atomic_long live_blocks;
static atomic_long all_blocks;

static void *count_alloc(void *ctx, size_t size, size_t align) {
  (void)ctx;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  atomic_fetch_add(&live_blocks, 1);
  atomic_fetch_add(&all_blocks, 1);
  return p;
}

static void count_free(void *ctx, void *p) {
  (void)ctx;
  atomic_fetch_sub(&live_blocks, 1);
  free(p);
}

static const rlyrt_allocator counting = {count_alloc, count_free, NULL};

#endif
