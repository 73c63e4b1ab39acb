/* fuzz_metadata.c: libFuzzer target for the metadata section reader (spec
** 6.1-6.4: src/syntax/metadata.c with cJSON, the NDArray blobs of
** src/syntax/ndarray.c, the base64 of src/syntax/base64.c).
**
** An input is the text that follows `#[metadata]` in a Relay file. For each
** one:
**   1. meta_parse reads it, as the parser does for a section;
**   2. every meta[relay.Constant][i] is decoded (meta_constant; twice, the
**      second time from the decoded cache, which must give the same data);
**   3. objects under every type key of the section are converted as attrs
**      objects (meta_attrs, the parser's meta[<key>][i] in a call), with the
**      attrs class of that name, or else one of the operator table's
**      classes picked by the key, and every field value is printed;
**   4. the constants that decoded are written again (meta_write_constants,
**      what the printer emits), read again, and must come back with the
**      same dtypes, shapes and bytes;
**   5. meta_parse_borrowed (the parser's reader, base64 decoded in place)
**      must read the same section: the same constants, the same data;
**   6. the input is also given to the base64 decoder as it is: when it
**      decodes, encoding the result and decoding that must give the same
**      bytes, and b64_peek must give a prefix of them.
** Diagnostics are printed to /dev/null. A disagreement calls abort() after
** describing it on stderr, so libFuzzer keeps the input. Everything is
** freed: LeakSanitizer sees any leak.
**
** Build: cmake -DRLY_FUZZ=ON -DRLY_SANITIZE=ON with CC=clang (make
** fuzz-smoke); without RLY_FUZZ, the replay_metadata test runs the same
** code on the seeds and regression inputs of fuzz/. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "base/strbuf.h"
#include "ir/ir.h"
#include "ops/ops.h"
#include "syntax/metadata.h"
#include "syntax/metadata_impl.h" /* b64_peek */

#define FUZZ_MAX_INPUT (1u << 20) /* larger inputs are ignored */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *g_null;  /* diagnostics are printed here */
static const AttrsClass *g_classes[OP_COUNT];  /* the distinct attrs classes of the operator table */
static int g_nclasses;

static const Span AT = {0, 1, 1, 11};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g_null = fopen("/dev/null", "w");
  if (!g_null) abort();
  for (int id = 0; id < OP_COUNT; id++) {
    const AttrsClass *cls = op_get((OpId)id)->attrs;
    bool seen = cls == NULL;
    for (int k = 0; k < g_nclasses && !seen; k++) seen = g_classes[k] == cls;
    if (!seen) g_classes[g_nclasses++] = cls;
  }
  return 0;
}

/* Describes a disagreement and aborts (libFuzzer saves the input as crash-*). */
RLY_NORETURN static void fail(const char *fmt, ...) RLY_PRINTF(1, 2);
RLY_NORETURN static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "fuzz_metadata: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
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

/* The attrs class for objects under key: the class of that name, or one
** chosen by the key's text (so that every class meets odd objects). */
static const AttrsClass *class_for(const char *key) {
  const AttrsClass *cls = attrs_class_lookup(key, strlen(key));
  if (cls || g_nclasses == 0) return cls;
  uint32_t h = 2166136261u;
  for (const char *p = key; *p; p++) h = (h ^ (unsigned char)*p) * 16777619u;
  return g_classes[h % (uint32_t)g_nclasses];
}

/* Steps 2-4 on a parsed section. */
static void check_section(Metadata *md, Module *m, Diag *d) {
  /* Constants, decoded twice. */
  int64_t nconst = meta_count(md, "relay.Constant");
  ConstData **decoded = calloc((size_t)(nconst ? nconst : 1), sizeof(ConstData *));
  if (!decoded) abort();
  int ndecoded = 0;
  for (int64_t i = 0; i < nconst; i++) {
    ConstData *c = ARENA_NEW(m->arena, ConstData), again;
    if (!meta_constant(md, i, m, c, d, AT)) continue;
    if (!meta_constant(md, i, m, &again, d, AT)) fail("meta[relay.Constant][%lld] decodes once only", (long long)i);
    const char *why = const_diff(c, &again);
    if (*why) fail("meta[relay.Constant][%lld] decodes differently the second time: %s", (long long)i, why);
    decoded[ndecoded++] = c;
  }

  /* Attrs objects under every key, printed. metadata.c bounds the values
  ** all the conversions of one section build, so this loop is bounded too. */
  StrBuf sb = {0};
  for (int k = 0; k < meta_nkeys(md); k++) {
    const char *key = meta_key(md, k);
    const AttrsClass *cls = class_for(key);
    if (!cls) continue;
    int64_t n = meta_count(md, key);
    for (int64_t i = 0; i < n; i++) {
      Attrs *a = meta_attrs(md, key, i, cls, m, d, AT);
      if (!a) continue;
      if (a->cls != cls || a->n != cls->nfields) fail("meta[%s][%lld]: attrs of the wrong shape", key, (long long)i);
      for (int j = 0; j < a->n; j++) {
        if (!a->values[j]) fail("meta[%s][%lld]: field '%s' has no value", key, (long long)i, cls->fields[j].name);
        sb_clear(&sb);
        ir_print_attr_value(&sb, a->values[j]);
      }
    }
  }
  sb_free(&sb);

  /* The decoded constants written as a section and read again. */
  if (ndecoded > 0) {
    StrBuf text = {0};
    meta_write_constants(&text, decoded, ndecoded);
    const char *json = strchr(text.data, '\n'); /* after the "#[metadata]" line */
    if (!json) fail("meta_write_constants wrote no JSON");
    json++;
    Diag d2;
    diag_init(&d2, NULL);
    Module *m2 = module_new();
    Metadata *md2 = meta_parse(json, text.len - (size_t)(json - text.data), &d2, AT);
    if (!md2) {
      diag_print(&d2, stderr);
      fail("the written section of %d constants does not read again", ndecoded);
    }
    if (meta_count(md2, "relay.Constant") != ndecoded)
      fail("%d constants were written, %lld read back", ndecoded, (long long)meta_count(md2, "relay.Constant"));
    for (int i = 0; i < ndecoded; i++) {
      ConstData back;
      if (!meta_constant(md2, i, m2, &back, &d2, AT)) {
        diag_print(&d2, stderr);
        fail("written constant %d does not decode again", i);
      }
      const char *why = const_diff(decoded[i], &back);
      if (*why) fail("constant %d: writing and reading again changed it: %s", i, why);
    }
    meta_free(md2);
    module_free(m2);
    diag_free(&d2);
    sb_free(&text);
  }
  free(decoded);
}

/* Step 5: the input as base64 text. */
static void check_base64(const char *s, size_t n) {
  size_t len;
  unsigned char *bytes = base64_decode(s, n, &len);
  if (!bytes) return;
  unsigned char head[64];
  size_t k = b64_peek(s, n, head, sizeof head);
  if (k > len || (k && memcmp(head, bytes, k) != 0)) fail("b64_peek disagrees with base64_decode");
  StrBuf text = {0};
  base64_encode(&text, bytes, len);
  size_t len2;
  unsigned char *again = base64_decode(text.data ? text.data : "", text.len, &len2);
  if (!again) fail("base64_encode wrote text that does not decode (%zu bytes)", len);
  if (len2 != len || (len && memcmp(bytes, again, len) != 0))
    fail("base64 encoding and decoding again changed %zu bytes", len);
  free(again);
  sb_free(&text);
  free(bytes);
}

/* meta_parse_borrowed (the parser's reader: base64 decoded in place) must
** agree with meta_parse: both read the section or neither, with the same
** constants, decoding to the same data or failing alike. */
static void check_borrowed(const char *text, size_t size) {
  Diag d1, d2;
  diag_init(&d1, NULL);
  diag_init(&d2, NULL);
  Metadata *a = meta_parse(text, size, &d1, AT);
  Metadata *b = meta_parse_borrowed(text, size, &d2, AT);
  if (!a != !b) fail("meta_parse %s, meta_parse_borrowed %s", a ? "read it" : "failed", b ? "read it" : "failed");
  if (!b && diag_count(&d2) == 0) fail("meta_parse_borrowed failed without an error");
  if (a && b) {
    int64_t n = meta_count(a, "relay.Constant");
    if (meta_count(b, "relay.Constant") != n) fail("the two readers count different constants");
    Module *ma = module_new(), *mb = module_new();
    for (int64_t i = 0; i < n && i < 64; i++) {
      ConstData ca, cb;
      bool oka = meta_constant(a, i, ma, &ca, &d1, AT), okb = meta_constant(b, i, mb, &cb, &d2, AT);
      if (oka != okb) fail("constant %lld decodes with one reader only", (long long)i);
      if (oka) {
        const char *why = const_diff(&ca, &cb);
        if (*why) fail("constant %lld differs between the readers: %s", (long long)i, why);
      }
    }
    module_free(ma);
    module_free(mb);
  }
  diag_print(&d1, g_null);
  diag_print(&d2, g_null);
  meta_free(a);
  meta_free(b);
  diag_free(&d1);
  diag_free(&d2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
  const char *text = (const char *)data;
  check_borrowed(text, size);
  Diag d;
  diag_init(&d, NULL);
  Module *m = module_new();
  Metadata *md = meta_parse(text, size, &d, AT);
  if (md) check_section(md, m, &d);
  else if (diag_count(&d) == 0) fail("meta_parse failed without an error");
  diag_print(&d, g_null);
  meta_free(md);
  module_free(m);
  diag_free(&d);
  check_base64(text, size);
  return 0;
}
