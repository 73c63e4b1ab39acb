/* diag.h: source files, spans and diagnostics.
** Errors caused by the user's input are collected here (never printed or
** exited on by library code) and printed by the CLI as
**   FILE:LINE:COL: error: message
**     <source line>
**         ^~~~
** Lines and columns are 1-based; columns count bytes. The first
** DIAG_MAX_ERRORS errors are kept; once one more is reported the Diag is
** "full": phases stop early (diag_full) and the printout ends with one
** "too many errors" line. Excerpts show at most a window of the source line
** and escape control characters and bytes that are not UTF-8, so binary
** input never reaches the terminal raw. */
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
/* Keeps the first len bytes of a file's text (less than its length) and
** gives the rest back: a weight-laden metadata section once decoded. */
void srcmap_truncate(SourceMap *sm, uint32_t file, size_t len);
void srcmap_free(SourceMap *sm);

enum { DIAG_MAX_ERRORS = 20 };

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
  int max_errors;       /* 0 = DIAG_MAX_ERRORS; errors beyond it are counted, not kept */
  int dropped;          /* errors beyond the limit (their notes are dropped too) */
} Diag;

void diag_init(Diag *d, const SourceMap *sm);
void diag_free(Diag *d);
void diag_error(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
void diag_warning(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
void diag_note(Diag *d, Span at, const char *fmt, ...) RLY_PRINTF(3, 4);
/* Number of errors reported so far (including dropped ones). */
int diag_count(const Diag *d);
/* Prints every kept diagnostic in the order reported, then, when errors
** were dropped, "relayc: too many errors; only the first N are shown". */
void diag_print(const Diag *d, FILE *out);
/* Returns true once more errors were reported than are kept: phases stop
** early then (what they would report is not shown anyway). */
bool diag_full(const Diag *d);

#endif
