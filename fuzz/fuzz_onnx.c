/* fuzz_onnx.c: libFuzzer target for the ONNX reader (src/onnx/import.c
** over the protobuf-c decoder of src/onnx/onnx.proto).
**
** For each input (arbitrary bytes, read as an ONNX model file):
**   1. onnx_import imports it, its constants in the metadata section; it
**      must either fail with at least one error and no text, or succeed
**      without errors;
**   2. when it succeeds, the Relay text it wrote must parse without errors
**      (the types may still be wrong for a nonsensical graph: the type
**      checker reports those to the user like any text's), and importing
**      again must give the same text (the output is deterministic);
**   3. the same with the initializers as parameters (--params-out).
** A disagreement calls abort() after describing it on stderr, so libFuzzer
** keeps the input. Everything is freed: LeakSanitizer sees any leak.
**
** Build: cmake -DRLY_FUZZ=ON -DRLY_SANITIZE=ON with CC=clang (make
** fuzz-smoke); without RLY_FUZZ, the replay_onnx test runs the same code
** on the seeds and regression inputs of fuzz/ and on tests/onnx/models. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "onnx/onnx.h"
#include "syntax/parser.h"

#define FUZZ_MAX_INPUT (1u << 20) /* larger inputs are ignored */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *g_null; /* diagnostics are printed here */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g_null = fopen("/dev/null", "w");
  if (!g_null) abort();
  return 0;
}

RLY_NORETURN static void fail(const Diag *d, const char *fmt, ...) RLY_PRINTF(2, 3);
RLY_NORETURN static void fail(const Diag *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz_onnx: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  if (d) diag_print(d, stderr);
  abort();
}

static void one(const uint8_t *data, size_t size, bool params) {
  SourceMap sm = {0};
  Diag d;
  diag_init(&d, &sm);
  OnnxOptions opt = {.params = params};
  OnnxImport imp;
  /* The model's folder: external data is looked up there; a path that
  ** does not exist keeps the fuzzer from reading real files. */
  const char *path = "/nonexistent-fuzz-dir/model.onnx";
  bool ok = onnx_import(path, data, size, 0, &opt, &imp, &d);
  diag_print(&d, g_null);
  if (!ok) {
    if (diag_count(&d) == 0) fail(NULL, "a failed import reported no error");
    if (imp.text.len) fail(&d, "a failed import left text");
  } else {
    if (diag_count(&d) != 0) fail(&d, "a successful import reported errors");
    OnnxImport again;
    Diag d2;
    diag_init(&d2, NULL);
    if (!onnx_import(path, data, size, 0, &opt, &again, &d2)) fail(&d2, "the second import failed");
    if (again.text.len != imp.text.len || memcmp(again.text.data, imp.text.data, imp.text.len) != 0)
      fail(NULL, "importing twice gave two texts");
    onnx_import_free(&again);
    diag_free(&d2);
    char *copy = malloc(imp.text.len + 1);
    if (!copy) abort();
    memcpy(copy, imp.text.data, imp.text.len);
    copy[imp.text.len] = 0;
    uint32_t id = srcmap_add(&sm, "imported.relay", copy, imp.text.len);
    Module *m = parse_module_files(&sm, &id, 1, &d);
    if (!m || diag_count(&d) != 0) {
      fprintf(stderr, "%.*s\n", (int)imp.text.len, imp.text.data);
      fail(&d, "the imported text does not parse");
    }
    module_free(m);
    onnx_import_free(&imp);
  }
  diag_free(&d);
  srcmap_free(&sm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  one(data, size, false);
  one(data, size, true);
  return 0;
}
