/* arena.h: bump allocator. Every IR node, type, attribute and symbol of a
** Module lives in the module's arena and is freed with it, all at once.
** Individual allocations are never freed. Memory is zeroed. */
#ifndef RLY_ARENA_H
#define RLY_ARENA_H

#include "base/common.h"

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
  ArenaBlock *head;    /* current block (newest first) */
  size_t block_size;   /* default size of a new block */
  size_t total;        /* bytes handed out, for statistics */
} Arena;

typedef struct ArenaMark {
  ArenaBlock *block;
  size_t used;
} ArenaMark;

/* Creates an arena whose blocks are at least block_size bytes (0 = 64 KiB). */
Arena *arena_new(size_t block_size);
/* Frees every block and the arena itself. NULL is a no-op. */
void arena_free(Arena *a);
/* Returns size bytes of zeroed memory aligned to align (a power of two). */
void *arena_alloc(Arena *a, size_t size, size_t align);
/* Copies n bytes into the arena. */
void *arena_dup(Arena *a, const void *p, size_t n);
/* Copies a string (n bytes, NUL added) into the arena. */
char *arena_strndup(Arena *a, const char *s, size_t n);
/* LIFO scratch use: everything allocated after arena_mark is dropped by arena_reset. */
ArenaMark arena_mark(Arena *a);
void arena_reset(Arena *a, ArenaMark m);

#define ARENA_NEW(a, T) ((T *)arena_alloc((a), sizeof(T), _Alignof(T)))
#define ARENA_ARRAY(a, T, n) ((T *)arena_alloc((a), sizeof(T) * (size_t)(n), _Alignof(T)))

#endif
