/* vec.h: a growable array of any element type, on the heap.
** Owner frees it with VEC_FREE in the same function or in the owner's
** destructor; VEC_TO_ARENA copies the elements into an arena (for IR nodes).
**
**   Vec(Expr *) args = {0};
**   VEC_PUSH(&args, e);
**   Expr **fixed = VEC_TO_ARENA(arena, &args);   // then VEC_FREE(&args)
*/
#ifndef RLY_VEC_H
#define RLY_VEC_H

#include <string.h>

#include "base/arena.h"
#include "base/common.h"

#define Vec(T) struct { T *data; int len, cap; }

#define VEC_GROW(v, n)                                                          \
  do {                                                                          \
    if ((v)->len + (n) > (v)->cap) {                                            \
      int c_ = (v)->cap ? (v)->cap * 2 : 8;                                     \
      while (c_ < (v)->len + (n)) c_ *= 2;                                      \
      (v)->data = rly_xrealloc((v)->data, (size_t)c_ * sizeof(*(v)->data));     \
      (v)->cap = c_;                                                            \
    }                                                                           \
  } while (0)

#define VEC_PUSH(v, x)                                                          \
  do {                                                                          \
    VEC_GROW(v, 1);                                                             \
    (v)->data[(v)->len++] = (x);                                                \
  } while (0)

/* Arena-backed growth: for vectors whose owner may be abandoned by a
** longjmp (the parser's error recovery). Nothing to free; the elements
** end in the arena, so (v)->data can be kept as is. */
#define AVEC_PUSH(a, v, x)                                                      \
  do {                                                                          \
    if ((v)->len == (v)->cap) {                                                 \
      int c_ = (v)->cap ? (v)->cap * 2 : 4;                                     \
      void *d_ = arena_alloc((a), (size_t)c_ * sizeof(*(v)->data), 16);         \
      if ((v)->len) memcpy(d_, (v)->data, (size_t)(v)->len * sizeof(*(v)->data)); \
      (v)->data = d_;                                                           \
      (v)->cap = c_;                                                            \
    }                                                                           \
    (v)->data[(v)->len++] = (x);                                                \
  } while (0)

#define VEC_POP(v) ((v)->data[--(v)->len])
#define VEC_LAST(v) ((v)->data[(v)->len - 1])
#define VEC_FREE(v) (free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)
#define VEC_TO_ARENA(a, v) \
  ((v)->len ? arena_dup((a), (v)->data, (size_t)(v)->len * sizeof(*(v)->data)) : NULL)

#endif
