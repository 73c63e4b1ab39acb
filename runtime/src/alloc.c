/* alloc.c: the one allocation hook of the runtime. The default allocator
** is aligned malloc; tests and embedded users install their own (a pool,
** or one that fails on the Nth call). */
#include <pthread.h>
#include <stdbool.h>
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
  rlyrt_scratch_trim(); /* the kept blocks are the default allocator's */
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

int rlyrt_allocator_is_default(void) { return current.alloc == default_alloc; }

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

/* {==== Scratch ====}
** A block starts with a header of 64 bytes (the block stays 64-aligned):
** its size and the allocator that made it. Blocks of SCRATCH_MIN bytes and
** more made by the default allocator are kept when freed, at most
** RLYRT_SCRATCH_KEPT of them (the largest: a smaller one is dropped for a
** larger), and a request takes the smallest kept block that is large
** enough. A model's call asks for its function's workspace and, kernel
** after kernel, one scratch block each, so a caller keeps about two. */

enum { SCRATCH_MIN = 64 << 10 };

typedef struct scratch_head {
  size_t size;       /* bytes after the header */
  rlyrt_allocator by;
  bool keep;         /* the default allocator's, and large */
} scratch_head;

#define SCRATCH_HEAD 64
_Static_assert(sizeof(scratch_head) <= SCRATCH_HEAD, "the scratch header fits its 64 bytes");

static struct {
  pthread_mutex_t lock;
  scratch_head *kept[RLYRT_SCRATCH_KEPT];
  int n;
} scratch = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

void *rlyrt_scratch_alloc(size_t size) {
  bool keep = current.alloc == default_alloc && size >= SCRATCH_MIN;
  if (keep) {
    scratch_head *h = NULL;
    pthread_mutex_lock(&scratch.lock);
    int best = -1;
    for (int i = 0; i < scratch.n; i++)
      if (scratch.kept[i]->size >= size && (best < 0 || scratch.kept[i]->size < scratch.kept[best]->size)) best = i;
    if (best >= 0) {
      h = scratch.kept[best];
      scratch.kept[best] = scratch.kept[--scratch.n];
    }
    pthread_mutex_unlock(&scratch.lock);
    if (h) return (unsigned char *)h + SCRATCH_HEAD;
  }
  if (size > (size_t)-1 - SCRATCH_HEAD) {
    rlyrt_error(RLYRT_E_NOMEM, "out of memory (requesting %zu bytes)", size);
    return NULL;
  }
  scratch_head *h = rlyrt_alloc(SCRATCH_HEAD + size, 64);
  if (!h) return NULL;
  h->size = size;
  h->by = current;
  h->keep = keep;
  return (unsigned char *)h + SCRATCH_HEAD;
}

void rlyrt_scratch_free(void *p) {
  if (!p) return;
  scratch_head *h = (scratch_head *)(void *)((unsigned char *)p - SCRATCH_HEAD);
  if (h->keep) {
    pthread_mutex_lock(&scratch.lock);
    if (scratch.n < RLYRT_SCRATCH_KEPT) {
      scratch.kept[scratch.n++] = h;
      h = NULL;
    } else {
      int small = 0;
      for (int i = 1; i < scratch.n; i++)
        if (scratch.kept[i]->size < scratch.kept[small]->size) small = i;
      if (scratch.kept[small]->size < h->size) {
        scratch_head *x = scratch.kept[small];
        scratch.kept[small] = h;
        h = x;
      }
    }
    pthread_mutex_unlock(&scratch.lock);
    if (!h) return;
  }
  h->by.free(h->by.ctx, h);
}

void rlyrt_scratch_trim(void) {
  pthread_mutex_lock(&scratch.lock);
  int n = scratch.n;
  scratch_head *kept[RLYRT_SCRATCH_KEPT];
  for (int i = 0; i < n; i++) kept[i] = scratch.kept[i];
  scratch.n = 0;
  pthread_mutex_unlock(&scratch.lock);
  for (int i = 0; i < n; i++) kept[i]->by.free(kept[i]->by.ctx, kept[i]);
}

/* A module's copy of the runtime gives its kept blocks back when it is
** unloaded (and a program at its exit). */
__attribute__((destructor)) static void scratch_at_exit(void) { rlyrt_scratch_trim(); }
