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

/* {==== Frames ====}
** A stack of workspaces per thread, for generated functions whose
** intermediates have a static memory plan but may be re-entered
** (recursion) or run on many threads. The stack grows by chunks taken from
** the allocator; a chunk emptied by a pop is kept as the spare while the
** stack is in use, so a recursion or a loop allocates nothing once the
** stack has reached its depth. When the last frame is popped every chunk
** goes back to the allocator that made it: nothing stays allocated between
** calls from outside (and a thread that exits holds nothing). */

typedef struct frame_chunk {
  struct frame_chunk *prev;
  rlyrt_allocator by;
  size_t size, top; /* bytes of data, bytes in use */
  _Alignas(64) unsigned char data[];
} frame_chunk;

typedef struct frame_stack {
  frame_chunk *cur, *spare;
} frame_stack;

static _Thread_local frame_stack frames;

static void chunk_free(frame_chunk *c) {
  if (c) c->by.free(c->by.ctx, c);
}

void *rlyrt_frame_push(size_t size) {
  frame_stack *s = &frames;
  size = (size + 63) & ~(size_t)63;
  frame_chunk *c = s->cur;
  if (c && c->size - c->top >= size) {
    void *p = c->data + c->top;
    c->top += size;
    return p;
  }
  if (s->spare && s->spare->size >= size) {
    c = s->spare;
    s->spare = NULL;
  } else {
    size_t want = (size_t)16 << 10;
    if (s->cur && s->cur->size * 2 > want) want = s->cur->size * 2;
    if (want < size) want = size;
    c = current.alloc(current.ctx, sizeof(frame_chunk) + want, 64);
    if (!c) {
      rlyrt_error(RLYRT_E_NOMEM, "out of memory (a workspace of %zu bytes)", size);
      return NULL;
    }
    c->by = current;
    c->size = want;
  }
  c->top = size;
  c->prev = s->cur;
  s->cur = c;
  return c->data;
}

void rlyrt_frame_pop(void *p) {
  frame_stack *s = &frames;
  frame_chunk *c = s->cur;
  if (!p || !c) return;
  c->top = (size_t)((unsigned char *)p - c->data);
  if (c->top) return;
  /* The chunk is empty: it becomes the spare (the larger one is kept),
  ** or, when it was the last, the stack is given back. */
  s->cur = c->prev;
  if (s->spare && s->spare->size >= c->size) {
    chunk_free(c);
  } else {
    chunk_free(s->spare);
    s->spare = c;
  }
  if (!s->cur) {
    chunk_free(s->spare);
    s->spare = NULL;
  }
}
