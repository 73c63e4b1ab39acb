/* parser.h: the Relay text front end (spec sections 1-6).
** Input: one or several source files of a SourceMap (module text with
** optional metadata section, or an expression file). Output: an untyped
** Module.
** Errors go to a Diag with positions; the parser recovers at definition
** boundaries and reports several errors when it can. */
#ifndef RLY_PARSER_H
#define RLY_PARSER_H

#include "base/diag.h"
#include "ir/ir.h"
#include "syntax/metadata.h"

/* Parses file `file` of sm. Returns the module, or NULL when any error was
** reported to d (nothing to free then). */
Module *parse_module(const SourceMap *sm, uint32_t file, Diag *d);

/* Parses files[0..nfiles-1] of sm, in order, as one module (as TVM imports
** a prelude into a module): the types, constructors and definitions of
** every file are visible in all of them; a name defined twice, in one file
** or in two, is an error with a note at the first definition. Each module
** file needs its own version header; meta references resolve in the
** metadata section of their own file. With several files, the expression
** of an expression file becomes `def @main(free variables) { expr }`. Same
** result and ownership as parse_module. */
Module *parse_module_files(const SourceMap *sm, const uint32_t *files, int nfiles, Diag *d);
/* The same, adding to *metadata_ms (when not NULL) the wall time spent
** reading the metadata sections (JSON, base64 and NDArray decoding): the
** phases of `relayc build --stats`; and, meta_at not NULL, setting
** meta_at[i] to where file i's metadata section's text starts (0: none),
** which nothing reads once the module is made (srcmap_truncate). */
Module *parse_module_files_timed(const SourceMap *sm, const uint32_t *files, int nfiles, Diag *d, double *metadata_ms,
                                 size_t *meta_at);

/* Binds the parameters of @main whose names match entries (as TVM's
** bind_params_by_name does): each such parameter is removed from @main's
** parameter list and its uses become the constant. Checks the constant's
** dtype and shape against the parameter's annotation when it has one.
** Entries that match no parameter are reported as errors. Returns false
** after reporting to d. */
bool bind_params(Module *m, const ParamEntry *entries, int n, Diag *d, Span at);

#endif
