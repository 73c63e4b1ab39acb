/* diag.h: source files, spans and diagnostics.
** Errors caused by the user's input are collected here (never printed or
** exited on by library code) and printed by the CLI as
**   FILE:LINE:COL: error: message
**     <source line>
**         ^~~~
** Lines and columns are 1-based; columns count bytes. */
#ifndef RLY_DIAG_H
#define RLY_DIAG_H

#include <stdio.h>

#include "base/common.h"
#include "base/vec.h"

typedef struct Span {
  uint32_t file;  /* 1-based index into the SourceMap; 0 = no location */
  uint32_t line, col, len;
} Span;

typedef struct Source {
  char *name;       /* owned */
  char *text;       /* owned, NUL-terminated (may contain other NULs) */
  size_t len;
} Source;

typedef struct SourceMap {
  Vec(Source) files;
} SourceMap;

/* Adds a file's text (takes ownership of text, copies name); returns its index (>= 1). */
uint32_t srcmap_add(SourceMap *sm, const char *name, char *text, size_t len);
const Source *srcmap_get(const SourceMap *sm, uint32_t file);
void srcmap_free(SourceMap *sm);

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diagnostic {
  DiagLevel level;
  Span at;
  char *msg;  /* owned */
} Diagnostic;

typedef struct Diag {
  const SourceMap *sm;  /* borrowed, may be NULL (no source lines shown) */
  Vec(Diagnostic) items;
  int nerrors;
  int max_errors;       /* 0 = 20; errors beyond it are counted but not kept */
  int dropped;
} Diag;

void diag_init(Diag *d, const SourceMap *sm);
void diag_free(Diag *d);
void diag_error(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
void diag_warning(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
void diag_note(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
/* Number of errors reported so far (including dropped ones). */
int diag_count(const Diag *d);
/* Prints every diagnostic in the order reported. */
void diag_print(const Diag *d, FILE *out);
/* Returns true when the error limit is reached (callers may stop early). */
bool diag_full(const Diag *d);

#endif
