/* arena.c: bump allocator over a list of malloc'd blocks. */
#include "base/arena.h"

#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
  ArenaBlock *prev;
  size_t size;   /* usable bytes in data */
  size_t used;
  _Alignas(max_align_t) unsigned char data[];
};

Arena *arena_new(size_t block_size) {
  Arena *a = rly_xcalloc(1, sizeof(Arena));
  a->block_size = block_size ? block_size : 64 * 1024;
  return a;
}

void arena_free(Arena *a) {
  if (!a) return;
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *prev = b->prev;
    free(b);
    b = prev;
  }
  free(a);
}

static ArenaBlock *new_block(Arena *a, size_t need) {
  size_t size = a->block_size;
  if (size < need) size = need;
  ArenaBlock *b = rly_xmalloc(sizeof(ArenaBlock) + size);
  b->prev = a->head;
  b->size = size;
  b->used = 0;
  a->head = b;
  return b;
}

void *arena_alloc(Arena *a, size_t size, size_t align) {
  RLY_ASSERT(align && (align & (align - 1)) == 0);
  ArenaBlock *b = a->head;
  size_t off = 0;
  if (b) {
    /* Align the address, not the offset: block data is only 16-aligned. */
    uintptr_t base = (uintptr_t)b->data;
    off = (size_t)(((base + b->used + align - 1) & ~(uintptr_t)(align - 1)) - base);
  }
  if (!b || off + size > b->size) {
    /* Big requests get a block of their own placed behind the current one,
    ** so the current block's free tail is not wasted. */
    if (b && size > a->block_size / 4) {
      ArenaBlock *big = rly_xmalloc(sizeof(ArenaBlock) + size + align);
      big->size = size + align;
      big->used = 0;
      big->prev = b->prev;
      b->prev = big;
      b = big;
      off = 0;
    } else {
      b = new_block(a, size + align);
      off = 0;
    }
    uintptr_t base = (uintptr_t)b->data;
    off = ((base + align - 1) & ~(uintptr_t)(align - 1)) - base;
  }
  void *p = b->data + off;
  memset(p, 0, size);
  b->used = off + size;
  a->total += size;
  return p;
}

void *arena_dup(Arena *a, const void *p, size_t n) {
  void *q = arena_alloc(a, n, 16);
  if (n) memcpy(q, p, n);
  return q;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *q = arena_alloc(a, n + 1, 1);
  memcpy(q, s, n);
  q[n] = 0;
  return q;
}

ArenaMark arena_mark(Arena *a) {
  ArenaMark m = {a->head, a->head ? a->head->used : 0};
  return m;
}

void arena_reset(Arena *a, ArenaMark m) {
  /* Free blocks allocated after the mark. A big block linked behind the head
  ** belongs to the head's era; blocks are freed until the marked one is the
  ** head again. */
  while (a->head && a->head != m.block) {
    ArenaBlock *prev = a->head->prev;
    free(a->head);
    a->head = prev;
  }
  if (a->head) a->head->used = m.used;
}
