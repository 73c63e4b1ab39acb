/* metadata.h: the metadata section of a Relay text file (JSON object
** graph with base64 NDArray blobs, spec section 6), `.params` files (spec
** 6.5) and their writers (the #[metadata] section writer, which the printer
** uses too, is below, in ir/meta_write.h).
** The JSON is read with cJSON; decoded tensors are copied into the Module's
** arena. */
#ifndef RLY_METADATA_H
#define RLY_METADATA_H

#include "base/diag.h"
#include "ir/ir.h"
#include "ir/meta_write.h" /* meta_write_constants: the writer lives below, for the printer */
#include "ops/ops.h"

typedef struct Metadata Metadata;  /* opaque; owns the parsed JSON */

/* Parses the JSON text after `#[metadata]` (len bytes). `at` is the span of
** the `#[metadata]` token, used for errors (bad JSON, missing root, nodes
** that are not what they claim). Returns NULL after reporting to d. */
Metadata *meta_parse(const char *json, size_t len, Diag *d, Span at);
/* The same, reading the base64 blobs in place: json must stay valid and
** unchanged until meta_free(md). Only the rest of the section is copied
** into the JSON tree, so a model's weights are never held as a second text
** (the parser's way; see metadata.c). Same results and errors. */
Metadata *meta_parse_borrowed(const char *json, size_t len, Diag *d, Span at);
void meta_free(Metadata *md);

/* Number of objects under type key (e.g. "relay.Constant"); 0 if none. */
int64_t meta_count(const Metadata *md, const char *type_key);
/* The type keys of the section's root Map, in file order: meta_nkeys of
** them, meta_key(md, i) borrowed from md (for tools that walk a section
** without knowing its keys, such as the fuzz targets). */
int meta_nkeys(const Metadata *md);
const char *meta_key(const Metadata *md, int i);

/* Decodes meta[relay.Constant][index] into *out, data in m's arena (every
** call on one md must pass the same m: each blob is decoded once, its
** base64 text then freed, and later references share the data). Errors
** (index out of range, bad base64, wrong magic, non-CPU device, dtype not
** supported, sizes that disagree with the shape, truncated blob) are
** reported at `at`; returns false then. */
bool meta_constant(Metadata *md, int64_t index, Module *m, ConstData *out, Diag *d, Span at);

/* Decodes an attrs object meta[<type_key>][index] (e.g.
** relay.attrs.Conv2DAttrs) into attributes of class cls (fields converted
** by their AttrKind; fields the object lacks get defaults). All the calls
** on one md together build at most about a million values (cyclic node
** graphs expand); beyond, they fail. Returns NULL after reporting to d. */
Attrs *meta_attrs(Metadata *md, const char *type_key, int64_t index, const AttrsClass *cls,
                  Module *m, Diag *d, Span at);

/* Decodes an NDArray blob (spec 6.3) of n bytes into *out (data in m's
** arena). *used receives the blob's length (blobs follow each other in
** .params files). On error writes a message into err (>= 128 bytes) and
** returns false. */
bool ndarray_decode(const unsigned char *p, size_t n, Module *m, ConstData *out, size_t *used,
                    char *err, size_t errlen);
/* Appends the NDArray blob of c to out. */
void ndarray_encode(StrBuf *out, const ConstData *c);

/* Base64 (standard alphabet, '=' padding; whitespace ignored on decode).
** base64_decode returns a malloc'd buffer (caller frees) and its length in
** *outlen, or NULL on malformed input. */
unsigned char *base64_decode(const char *s, size_t n, size_t *outlen);
void base64_encode(StrBuf *out, const unsigned char *p, size_t n);


/* {==== .params files ====} */

typedef struct ParamEntry {
  Symbol *name;
  ConstData value;
} ParamEntry;

/* Reads a .params file (spec 6.5); names interned in m, data in m's arena.
** Returns the number of entries (>= 0) with the array in *out (arena), or
** -1 after reporting a clear error to d (the span names the file only). */
int params_read(const char *path, Module *m, ParamEntry **out, Diag *d, uint32_t file);
/* The same from the n bytes of a file already in memory at p (not kept). */
int params_parse(const unsigned char *p, size_t n, Module *m, ParamEntry **out, Diag *d, uint32_t file);
/* Writes a .params file; returns false (errno set) on I/O failure. */
bool params_write(const char *path, const ParamEntry *entries, int n);

#endif
