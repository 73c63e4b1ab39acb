/* onnx.h: ONNX models in, Relay text out.
**
** onnx_import decodes a model (protobuf, through protobuf-c over
** src/onnx/onnx.proto) and writes it as a Relay module in text format
** v0.0.5 whose @main takes the graph's inputs (those that are not
** initializers), in order, by their ONNX names, and returns its outputs
** (a tuple when there are several). Each node becomes one or a few let
** bindings. Initializers and Constant nodes become constants: in the
** text's metadata section, or, with OnnxOptions.params, parameters of
** @main after the inputs whose values the caller writes to a .params file
** (relayc import --params-out). Errors (a file that does not decode, an
** opset out of 7..18, an operator or attribute not supported, named with
** the node and the opset) go to d at the model's file, never abort. */
#ifndef RLY_ONNX_H
#define RLY_ONNX_H

#include "base/diag.h"
#include "base/strbuf.h"
#include "ir/ir.h"

typedef struct OnnxOptions {
  bool params;  /* initializers as parameters (out_params), not metadata */
} OnnxOptions;

typedef struct OnnxImport {
  StrBuf text;          /* the Relay module */
  char **param_names;   /* with OnnxOptions.params: the initializers' names */
  ConstData *params;    /* and values (data owned, 64-byte aligned) */
  int nparams;
  int opset;            /* the model's default-domain opset */
} OnnxImport;

/* Imports the model at path (a file of len bytes already read, data) as
** its SourceMap file `file` (for the diagnostics' location). Returns false
** with errors in d. */
bool onnx_import(const char *path, const unsigned char *data, size_t len, uint32_t file, const OnnxOptions *opt,
                 OnnxImport *out, Diag *d);
void onnx_import_free(OnnxImport *imp);

/* True when the file name ends in ".onnx". */
bool onnx_is_model_path(const char *path);

/* The names of the graph's outputs, in order (malloc'd array of malloc'd
** strings, *out; free with onnx_free_names), for the model in data;
** returns their count, or -1 when the model does not decode. */
int onnx_output_names(const unsigned char *data, size_t len, char ***out);
void onnx_free_names(char **names, int n);

/* For the commands that read models: the ONNX model at path, whose bytes
** (data, len; taken, freed here) were read already, imported with
** metadata constants and added to sm as Relay text named "PATH.relay".
** Errors of the import name PATH itself (added to sm with no text).
** Returns the text's id in sm, or 0 after errors in d. */
uint32_t onnx_add_source(SourceMap *sm, const char *path, char *data, size_t len, Diag *d);

#endif
