/* symbol.h: interned strings. Two Symbols with the same text are the same
** pointer, so names compare with ==. The symbols live in the table's arena;
** the hash index is on the heap and freed by symtab_free. */
#ifndef RLY_SYMBOL_H
#define RLY_SYMBOL_H

#include "base/arena.h"

typedef struct Symbol {
  uint32_t len;
  uint32_t hash;
  char text[];  /* NUL-terminated */
} Symbol;

typedef struct SymTab {
  Arena *arena;    /* borrowed: where symbols are stored */
  Symbol **slots;  /* open addressing, power-of-two size */
  uint32_t cap, count;
} SymTab;

void symtab_init(SymTab *t, Arena *arena);
void symtab_free(SymTab *t);
Symbol *sym_intern(SymTab *t, const char *s, size_t len);
Symbol *sym_intern_cstr(SymTab *t, const char *s);

#endif
