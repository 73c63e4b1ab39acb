/* compile_ext.h: what the command line asks of the compiler beyond the
** public API (include/relayc/relayc.h): the constants in a binary file of
** their own, and the build statistics of `relayc build --stats`.
**
** Big models: the constants' blob written as a C string literal costs the
** C compiler about as much time as the rest of the build and several times
** the blob in memory. With a blob file, code generation writes the blob's
** bytes, as they are, to that file, and the C file refers to it with
**   __asm__(".incbin \"NAME.blob\"")
** under a local assembler symbol, so the bytes go into the object when it
** is assembled: the artifact (.so, .a, .o) holds them and needs nothing
** else. The assembler finds the file through the C file's directory
** (driver_build passes -Wa,-I<dir> when NAME.blob lies next to NAME.c).
** rly_c_text then is not self-contained: the command line asks for a blob
** file only for the kinds it builds itself (not for OUT.c), and library
** users who never ask get the C with its constants inline, as before. */
#ifndef RLY_COMPILE_EXT_H
#define RLY_COMPILE_EXT_H

#include <stddef.h>

#include "base/strbuf.h"
#include "relayc/relayc.h"

/* {==== The compiler (compile.c) ====} */

/* From the next rly_compile on: when the constants take at least min_bytes,
** write them to the file path (created or replaced) and refer to them by
** .incbin of path's last component from the C. NULL: constants inline. The
** file name must be a plain name (letters, digits, '_', '-', '.'). */
void rly_set_blob_file(rly_compiler *c, const char *path, size_t min_bytes);
/* Did the last rly_compile write the blob file? */
int rly_blob_written(const rly_compiler *c);

/* From the next rly_compile on (a compiler that compiles once: the command
** line): once the module is parsed, give back the text of the metadata
** sections (a big model's weights in base64) unless parsing reported
** anything. The sources can then not be compiled again: a later
** rly_compile fails and says so. */
void rly_set_release_metadata_text(rly_compiler *c, int on);

/* From the next rly_compile on: collect statistics (rly_stats). */
void rly_set_stats(rly_compiler *c, int on);
/* After a successful rly_compile with statistics on: what was built (fused
** groups, kernels and their schedules, workspaces, constants), a line
** each, then "time PHASE: MS ms" lines for parse (lexing and parsing),
** metadata (the metadata sections and a .params file: JSON, base64,
** NDArrays), infer, passes and codegen (wall time). "" otherwise. */
const char *rly_stats(const rly_compiler *c);

/* {==== Code generation (codegen.c) ====} */

#include "codegen/codegen.h"

typedef struct CodegenExtra {
  /* In: the blob file (NULL: inline) and the smallest blob that goes there. */
  const char *blob_path;
  size_t blob_min;
  /* Out: whether the blob went to blob_path. */
  bool blob_written;
  /* Out, when non-NULL: the statistics lines (see rly_stats). */
  StrBuf *stats;
} CodegenExtra;

/* codegen_module with the requests of x (NULL: none, which is
** codegen_module). A failure to write the blob file is an error in d. */
bool codegen_module_ext(Module *m, const CodegenOptions *o, CodegenExtra *x, StrBuf *c, StrBuf *h, Diag *d);

#endif
