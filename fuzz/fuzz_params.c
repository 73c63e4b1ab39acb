/* fuzz_params.c: libFuzzer target for the .params reader (spec 6.5;
** src/syntax/params.c, with the NDArray blobs of src/syntax/ndarray.c).
**
** For each input (arbitrary bytes):
**   1. params_parse reads it as a .params file and its diagnostics are
**      printed (to /dev/null);
**   2. when it reads: params_write writes the entries to a file,
**      params_read (the path relayc uses: open, mmap) reads that file, and
**      the entries must come back with the same names, dtypes, shapes and
**      bytes, in the same order.
** A disagreement calls abort() after describing it on stderr, so libFuzzer
** keeps the input. Modules and diagnostics are freed: LeakSanitizer sees
** any leak.
**
** Build: cmake -DRLY_FUZZ=ON -DRLY_SANITIZE=ON with CC=clang (make
** fuzz-smoke); without RLY_FUZZ, the replay_params test runs the same code
** on the seeds and regression inputs of fuzz/. */
#define _GNU_SOURCE /* memfd_create, for scratch.h */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "ir/ir.h"
#include "scratch.h"
#include "syntax/metadata.h"

#define FUZZ_MAX_INPUT (1u << 20) /* larger inputs are ignored */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static Scratch g_out;  /* what params_write writes */
static FILE *g_null;   /* diagnostics are printed here */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  scratch_open(&g_out, "fuzz-out.params");
  g_null = fopen("/dev/null", "w");
  if (!g_null) abort();
  return 0;
}

/* Describes a disagreement and aborts (libFuzzer saves the input as crash-*). */
RLY_NORETURN static void fail(const Diag *d, const char *fmt, ...) RLY_PRINTF(2, 3);
RLY_NORETURN static void fail(const Diag *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz_params: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  if (d) diag_print(d, stderr);
  abort();
}

/* Why a and b differ ("" when they do not). */
static const char *const_diff(const ConstData *a, const ConstData *b) {
  if (a->dtype.code != b->dtype.code || a->dtype.bits != b->dtype.bits || a->dtype.lanes != b->dtype.lanes)
    return "dtypes differ";
  if (a->ndim != b->ndim) return "ranks differ";
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return "shapes differ";
  if (a->nbytes != b->nbytes) return "sizes differ";
  if (a->nbytes && memcmp(a->data, b->data, a->nbytes) != 0) return "element bytes differ";
  return "";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  Diag d;
  diag_init(&d, NULL);
  Module *m = module_new();
  ParamEntry *e = NULL;
  int n = params_parse(data, size, m, &e, &d, 0);
  diag_print(&d, g_null);
  if (n < 0) {
    if (e || diag_count(&d) == 0) fail(&d, "a failed read must report an error and give no entries");
  } else {
    if (diag_count(&d) != 0) fail(&d, "a successful read reported errors");
    if (!params_write(g_out.path, e, n)) fail(NULL, "params_write failed on %d entries that were read", n);
    Diag d2;
    diag_init(&d2, NULL);
    Module *m2 = module_new();
    ParamEntry *e2 = NULL;
    int n2 = params_read(g_out.path, m2, &e2, &d2, 0);
    if (n2 != n) fail(&d2, "%d entries were written, %d read back", n, n2);
    for (int i = 0; i < n; i++) {
      const Symbol *a = e[i].name, *b = e2[i].name;
      if (a->len != b->len || memcmp(a->text, b->text, a->len) != 0)
        fail(NULL, "entry %d: the name changed from '%.*s' to '%.*s'", i, (int)a->len, a->text, (int)b->len,
             b->text);
      const char *why = const_diff(&e[i].value, &e2[i].value);
      if (*why) fail(NULL, "entry %d ('%.*s'): writing and reading again changed it: %s", i, (int)a->len, a->text, why);
    }
    diag_free(&d2);
    module_free(m2);
  }
  diag_free(&d);
  module_free(m);
  return 0;
}
