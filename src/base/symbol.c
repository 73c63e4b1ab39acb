/* symbol.c: string interning with an open-addressing hash table (FNV-1a). */
#include "base/symbol.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_bytes(const char *s, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

void symtab_init(SymTab *t, Arena *arena) {
  t->arena = arena;
  t->cap = 256;
  t->count = 0;
  t->slots = rly_xcalloc(t->cap, sizeof(Symbol *));
}

void symtab_free(SymTab *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->count = 0;
}

static void rehash(SymTab *t) {
  uint32_t cap = t->cap * 2;
  Symbol **slots = rly_xcalloc(cap, sizeof(Symbol *));
  for (uint32_t i = 0; i < t->cap; i++) {
    Symbol *s = t->slots[i];
    if (!s) continue;
    uint32_t j = s->hash & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  free(t->slots);
  t->slots = slots;
  t->cap = cap;
}

Symbol *sym_intern(SymTab *t, const char *s, size_t len) {
  uint32_t h = hash_bytes(s, len);
  uint32_t i = h & (t->cap - 1);
  for (Symbol *e; (e = t->slots[i]); i = (i + 1) & (t->cap - 1))
    if (e->hash == h && e->len == len && memcmp(e->text, s, len) == 0) return e;
  Symbol *sym = arena_alloc(t->arena, sizeof(Symbol) + len + 1, _Alignof(Symbol));
  sym->len = (uint32_t)len;
  sym->hash = h;
  memcpy(sym->text, s, len);
  sym->text[len] = 0;
  t->slots[i] = sym;
  if (++t->count * 2 > t->cap) rehash(t);
  return sym;
}

Symbol *sym_intern_cstr(SymTab *t, const char *s) { return sym_intern(t, s, strlen(s)); }
