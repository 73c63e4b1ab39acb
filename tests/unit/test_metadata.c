/* test_metadata.c: base64, NDArray blobs, the metadata section (reading,
** lookups, attrs objects, writing) and .params files.
** Runs from the repository root (reads tests/corpus/ fixtures) and writes
** scratch files under $TMPDIR (or /tmp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "syntax/metadata.h"
#include "syntax/metadata_impl.h"  /* the streaming base64 writer */

/* {==== Helpers ====} */

static const Span AT = {0, 1, 1, 11};

/* True when some diagnostic's message contains text; prints them all when
** not, to make a failure readable. */
static bool has_error(const Diag *d, const char *text) {
  for (int i = 0; i < d->items.len; i++)
    if (strstr(d->items.data[i].msg, text)) return true;
  fprintf(stderr, "  expected an error containing \"%s\"; got:\n", text);
  for (int i = 0; i < d->items.len; i++) fprintf(stderr, "    %s\n", d->items.data[i].msg);
  if (!d->items.len) fprintf(stderr, "    (none)\n");
  return false;
}

/* A deterministic byte sequence. */
static void fill_bytes(unsigned char *p, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = (unsigned char)(seed >> 24);
  }
}

/* A constant in m's arena with deterministic contents. */
static ConstData make_const(Module *m, DType dt, int ndim, const int64_t *shape, uint32_t seed) {
  ConstData c = {dt, ndim, ARENA_ARRAY(m->arena, int64_t, ndim), NULL, 0};
  if (ndim) memcpy(c.shape, shape, sizeof(int64_t) * (size_t)ndim);
  c.nbytes = (size_t)const_numel(&c) * dtype_bytes(dt);
  c.data = arena_alloc(m->arena, c.nbytes, 64);
  fill_bytes(c.data, c.nbytes, seed);
  if (dtype_is_bool(dt))
    for (size_t i = 0; i < c.nbytes; i++) ((unsigned char *)c.data)[i] &= 1;
  return c;
}

static bool const_equal(const ConstData *a, const ConstData *b) {
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim || a->nbytes != b->nbytes) return false;
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != b->shape[i]) return false;
  return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static const char *tmp_path(char *buf, size_t size, const char *name) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, size, "%s/relayc_test_metadata_%ld_%s", dir && *dir ? dir : "/tmp", (long)getpid(), name);
  return buf;
}

static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  StrBuf sb = {0};
  char buf[4096];
  size_t r;
  while ((r = fread(buf, 1, sizeof buf, f)) > 0) sb_putn(&sb, buf, r);
  fclose(f);
  *n = sb.len;
  return sb.data ? sb.data : rly_xcalloc(1, 1);
}

/* {==== Base64 ====} */

static void test_base64(void) {
  static const struct { const char *plain, *coded; } vectors[] = {
      {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
  };
  for (size_t i = 0; i < RLY_COUNTOF(vectors); i++) {
    StrBuf sb = {0};
    base64_encode(&sb, (const unsigned char *)vectors[i].plain, strlen(vectors[i].plain));
    CHECK_STR(sb_str(&sb), vectors[i].coded);
    sb_free(&sb);
    size_t n;
    unsigned char *p = base64_decode(vectors[i].coded, strlen(vectors[i].coded), &n);
    CHECK(p != NULL);
    CHECK_EQ(n, strlen(vectors[i].plain));
    CHECK(p && memcmp(p, vectors[i].plain, n) == 0);
    free(p);
  }
  /* Every length, every byte value, encoded in one go and in pieces. */
  unsigned char data[300];
  for (int i = 0; i < 256; i++) data[i] = (unsigned char)i;
  fill_bytes(data + 256, 44, 7);
  for (size_t len = 0; len <= sizeof data; len++) {
    StrBuf one = {0};
    base64_encode(&one, data, len);
    CHECK_EQ(one.len, (len + 2) / 3 * 4);
    size_t n;
    unsigned char *p = base64_decode(sb_str(&one), one.len, &n);
    CHECK(p && n == len && memcmp(p, data, len) == 0);
    free(p);
    /* The streaming writer gives the same text whatever the pieces. */
    for (size_t piece = 1; piece <= 5; piece++) {
      StrBuf two = {0};
      B64Writer w = {&two, {0}, 0};
      for (size_t at = 0; at < len; at += piece) b64w_put(&w, data + at, len - at < piece ? len - at : piece);
      b64w_finish(&w);
      CHECK_STR(sb_str(&two), sb_str(&one));
      sb_free(&two);
    }
    sb_free(&one);
  }
  /* Whitespace anywhere is ignored; padding may be left out. */
  size_t n;
  unsigned char *p = base64_decode(" Zm9v\n\tYm\r\nFy ", 14, &n);
  CHECK(p && n == 6 && memcmp(p, "foobar", 6) == 0);
  free(p);
  p = base64_decode("Zm8", 3, &n);
  CHECK(p && n == 2 && memcmp(p, "fo", 2) == 0);
  free(p);
  p = base64_decode("Zm8= \n", 6, &n);
  CHECK(p && n == 2);
  free(p);
  /* Garbage. */
  static const char *const bad[] = {"Zm9v!", "Z", "Zm9vY", "Zm9=v", "Zg===", "====", "Zg==Zg==",
                                    "Zm-v", "Zm_v", "Zm9v\x80", "Z=m9"};
  for (size_t i = 0; i < RLY_COUNTOF(bad); i++) {
    p = base64_decode(bad[i], strlen(bad[i]), &n);
    if (p) fprintf(stderr, "  base64 accepted \"%s\"\n", bad[i]);
    CHECK(p == NULL);
    free(p);
  }
  /* A NUL inside the given length is garbage too. */
  CHECK(base64_decode("Zm\0v", 4, &n) == NULL);
}

/* {==== NDArray blobs ====} */

/* The two worked examples of spec 6.3. The second is printed there with
** its first 32 characters elided; they are the same bytes as the first
** example's (magic, reserved, device 1/0). */
static void test_spec_examples(void) {
  Module *m = module_new();
  const char *ex1 =
      "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8=";
  const char *ex2 = "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAA"
                    "AQAAAAAgAQABAAAAAAAAAAQAAAAAAAAAAAAAAA==";
  size_t n, used;
  char err[256];
  unsigned char *blob = base64_decode(ex1, strlen(ex1), &n);
  CHECK(blob != NULL);
  CHECK_EQ(n, 68);
  ConstData c;
  CHECK(ndarray_decode(blob, n, m, &c, &used, err, sizeof err));
  CHECK_EQ(used, 68);
  CHECK(dtype_eq(c.dtype, DTYPE(DT_FLOAT, 32)));
  CHECK_EQ(c.ndim, 1);
  CHECK_EQ(c.shape[0], 5);
  CHECK_EQ(c.nbytes, 20);
  CHECK_EQ((uintptr_t)c.data % 64, 0);
  static const float want[5] = {0.558093f, 0.891469f, 0.536274f, 0.682451f, 0.849524f};
  for (int i = 0; i < 5; i++) CHECK(fabsf(((const float *)c.data)[i] - want[i]) < 5e-7f);
  free(blob);

  blob = base64_decode(ex2, strlen(ex2), &n);
  CHECK(blob != NULL);
  CHECK_EQ(n, 52);
  CHECK(ndarray_decode(blob, n, m, &c, &used, err, sizeof err));
  CHECK(dtype_eq(c.dtype, DTYPE(DT_INT, 32)));
  CHECK_EQ(c.ndim, 1);
  CHECK_EQ(c.shape[0], 1);
  CHECK_EQ(c.nbytes, 4);
  CHECK_EQ(((const int32_t *)c.data)[0], 0);
  free(blob);
  module_free(m);
}

static void test_ndarray_roundtrip(void) {
  static const DType dtypes[] = {
      {DT_INT, 8, 1}, {DT_INT, 16, 1}, {DT_INT, 32, 1}, {DT_INT, 64, 1},
      {DT_UINT, 8, 1}, {DT_UINT, 16, 1}, {DT_UINT, 32, 1}, {DT_UINT, 64, 1},
      {DT_FLOAT, 16, 1}, {DT_FLOAT, 32, 1}, {DT_FLOAT, 64, 1}, {DT_BFLOAT, 16, 1},
      {DT_UINT, 1, 1} /* bool */,
  };
  static const struct { int ndim; int64_t shape[4]; } shapes[] = {
      {0, {0}}, {1, {0}}, {1, {7}}, {2, {2, 3}}, {3, {3, 0, 2}}, {4, {1, 2, 3, 4}},
  };
  Module *m = module_new();
  for (size_t i = 0; i < RLY_COUNTOF(dtypes); i++) {
    for (size_t j = 0; j < RLY_COUNTOF(shapes); j++) {
      ConstData c = make_const(m, dtypes[i], shapes[j].ndim, shapes[j].shape, (uint32_t)(i * 31 + j));
      StrBuf blob = {0};
      ndarray_encode(&blob, &c);
      CHECK_EQ(blob.len, 40 + 8 * (size_t)c.ndim + c.nbytes);
      const unsigned char *b = (const unsigned char *)blob.data;
      CHECK_EQ(b[28], dtypes[i].code);  /* bool stays code 1, 1 bit */
      CHECK_EQ(b[29], dtypes[i].bits);
      ConstData back;
      size_t used;
      char err[256];
      bool ok = ndarray_decode(b, blob.len, m, &back, &used, err, sizeof err);
      if (!ok) fprintf(stderr, "  decode failed: %s\n", err);
      CHECK(ok);
      CHECK_EQ(used, blob.len);
      CHECK(ok && const_equal(&c, &back));
      CHECK(ok && (uintptr_t)back.data % 64 == 0);
      CHECK(ok && back.shape != NULL);
      sb_free(&blob);
    }
  }
  module_free(m);
}

/* Decodes blob with its bytes patched; expects failure with msg in err. */
static void expect_blob_error(const StrBuf *blob, size_t at, const void *patch, size_t plen,
                              const char *msg) {
  Module *m = module_new();
  unsigned char *b = rly_xmalloc(blob->len);
  memcpy(b, blob->data, blob->len);
  if (plen) memcpy(b + at, patch, plen);
  ConstData c;
  size_t used;
  char err[256] = "";
  CHECK(!ndarray_decode(b, blob->len, m, &c, &used, err, sizeof err));
  if (!strstr(err, msg)) fprintf(stderr, "  expected \"%s\", got \"%s\"\n", msg, err);
  CHECK(strstr(err, msg) != NULL);
  free(b);
  module_free(m);
}

static void test_ndarray_errors(void) {
  Module *m = module_new();
  int64_t shape[2] = {2, 3};
  ConstData c = make_const(m, DTYPE(DT_FLOAT, 32), 2, shape, 1);
  StrBuf blob = {0};
  ndarray_encode(&blob, &c);
  unsigned char bytes8[8];

  memset(bytes8, 0, 8);
  expect_blob_error(&blob, 0, bytes8, 8,
                    "NDArray: bad magic 0x0000000000000000 (expected 0xDD5E40F096B4A13F)");
  int32_t gpu[1] = {2};
  expect_blob_error(&blob, 16, gpu, 4, "device type 2 is not CPU");
  unsigned char ndim33[4] = {33, 0, 0, 0};
  expect_blob_error(&blob, 24, ndim33, 4, "ndim 33 out of range (0..32)");
  unsigned char ndimneg[4] = {0xff, 0xff, 0xff, 0xff};
  expect_blob_error(&blob, 24, ndimneg, 4, "ndim -1 out of range");
  unsigned char handle[2] = {3, 64};
  expect_blob_error(&blob, 28, handle, 2, "unsupported dtype (code 3 = opaque handle, 64 bits, 1 lanes)");
  unsigned char int4[2] = {0, 4};
  expect_blob_error(&blob, 28, int4, 2, "unsupported dtype (code 0 = int, 4 bits");
  unsigned char f8[2] = {6, 8};
  expect_blob_error(&blob, 28, f8, 2, "float8_e4m3fn");
  unsigned char lanes[2] = {4, 0};
  expect_blob_error(&blob, 30, lanes, 2, "vector dtype float32x4 (4 lanes) is not supported");
  unsigned char size12[8] = {12, 0, 0, 0, 0, 0, 0, 0};
  expect_blob_error(&blob, 48, size12, 8,
                    "NDArray: data size 12 does not match shape (2, 3) of float32 (24 bytes)");
  unsigned char negdim[8] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  expect_blob_error(&blob, 32, negdim, 8, "negative dimension -2");
  unsigned char huge[16] = {0, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0, 0x40};
  expect_blob_error(&blob, 32, huge, 16, "is too large");

  /* Truncation at every byte. */
  for (size_t len = 0; len < blob.len; len++) {
    ConstData back;
    size_t used;
    char err[256] = "";
    bool ok = ndarray_decode((const unsigned char *)blob.data, len, m, &back, &used, err, sizeof err);
    CHECK(!ok);
    CHECK(strstr(err, "truncated") != NULL);
  }
  /* Extra bytes after a blob are the next blob's (params files). */
  sb_putn(&blob, "xyz", 3);
  ConstData back;
  size_t used;
  char err[256];
  CHECK(ndarray_decode((const unsigned char *)blob.data, blob.len, m, &back, &used, err, sizeof err));
  CHECK_EQ(used, blob.len - 3);
  sb_free(&blob);
  module_free(m);
}

/* {==== Metadata sections ====} */

/* Parses a JSON text; returns NULL (and keeps the errors in d). */
static Metadata *parse(const char *json, Diag *d) {
  diag_free(d);
  diag_init(d, NULL);
  return meta_parse(json, strlen(json), d, AT);
}

static void expect_parse_error(const char *json, const char *msg) {
  Diag d;
  diag_init(&d, NULL);
  Metadata *md = meta_parse(json, strlen(json), &d, AT);
  CHECK(md == NULL);
  CHECK(diag_count(&d) > 0);
  CHECK(has_error(&d, msg));
  meta_free(md);
  diag_free(&d);
}

/* A graph around nodes 3.. : null node, Map {relay.Constant: node 2},
** Array node 2 with `items`, then `rest` (more nodes), and `arrays`. */
static char *graph(const char *items, const char *rest, const char *arrays) {
  StrBuf sb = {0};
  sb_printf(&sb,
            "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, "
            "{\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [2]}, "
            "{\"type_key\": \"Array\", \"data\": [%s]}%s], \"b64ndarrays\": [%s]}",
            items, rest, arrays);
  return sb.data;
}

#define CONST_NODE(k) \
  ", {\"type_key\": \"relay.Constant\", \"attrs\": {\"data\": \"" k "\", \"span\": \"0\"}}"
#define EX1 "\"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8=\""

static void test_meta_errors(void) {
  expect_parse_error("", "metadata: the section is empty");
  expect_parse_error("{\"root\": 1,", "metadata: invalid JSON near byte");
  expect_parse_error("{\"root\": 1, \"nodes\": [}", "metadata: invalid JSON near byte 22");
  expect_parse_error("[1, 2]", "the section is an array, expected a JSON object");
  expect_parse_error("{\"root\": 0}", "\"nodes\" is missing");
  expect_parse_error("{\"root\": 0, \"nodes\": []}", "expected a non-empty array");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"\"}, 5]}",
                     "metadata: node 1 is a number, expected an object");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type\": \"\"}]}", "node 0 has no \"type_key\"");
  expect_parse_error("{\"nodes\": [{\"type_key\": \"\"}]}", "\"root\" is missing");
  expect_parse_error("{\"root\": 7, \"nodes\": [{\"type_key\": \"\"}]}",
                     "root node 7 is out of range (there are 1 nodes)");
  expect_parse_error("{\"root\": 0.5, \"nodes\": [{\"type_key\": \"\"}]}", "root node");
  expect_parse_error("{\"root\": \"1\", \"nodes\": [{\"type_key\": \"\"}]}", "\"root\" is a string");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"Array\"}]}",
                     "root node 0 is a \"Array\", expected a Map");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"\"}], \"b64ndarrays\": [1]}",
                     "b64ndarrays[0] is a number");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"\"}], \"b64ndarrays\": {}}",
                     "\"b64ndarrays\" is an object");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\"}]} x",
                     "unexpected text after the JSON document at byte");
  expect_parse_error(
      "{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"a\", \"b\"], \"data\": [0]}]}",
      "has 2 keys but 1 values");
  expect_parse_error("{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [3], \"data\": [0]}]}",
                     "key 0 of the root Map is a number");
  /* A Map value that is not an Array (here: the Map itself, a cycle). */
  expect_parse_error(
      "{\"root\": 0, \"nodes\": [{\"type_key\": \"Map\", \"keys\": [\"relay.Constant\"], \"data\": [0]}]}",
      "metadata: node 0 is not an Array");
  char *g = graph("3, 9", CONST_NODE("0"), EX1);
  expect_parse_error(g, "metadata: Array node 2 element 1 refers to node 9, but there are only 4 nodes");
  free(g);
  g = graph("3, \"x\"", CONST_NODE("0"), EX1);
  expect_parse_error(g, "Array node 2 element 1 is a string");
  free(g);
  expect_parse_error(
      "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"keys\": [\"a\", \"a\"], "
      "\"data\": [2, 2]}, {\"type_key\": \"Array\"}]}",
      "type key \"a\" appears twice");

  /* Lookups that fail at the reference. */
  Diag d;
  diag_init(&d, NULL);
  Module *m = module_new();
  ConstData c;
  g = graph("3, 4, 5, 6, 7, 0", CONST_NODE("0") CONST_NODE("9") CONST_NODE("1") CONST_NODE("x")
            ", {\"type_key\": \"IntImm\", \"attrs\": {\"value\": \"1\"}}",
            EX1 ", \"P6G0!!\"");
  Metadata *md = parse(g, &d);
  free(g);
  CHECK(md != NULL);
  CHECK_EQ(meta_count(md, "relay.Constant"), 6);
  CHECK_EQ(meta_count(md, "tir.Var"), 0);
  CHECK(meta_constant(md, 0, m, &c, &d, AT));
  CHECK(!meta_constant(md, 1, m, &c, &d, AT));
  CHECK(has_error(&d, "metadata: relay.Constant 1 refers to b64ndarrays[9], but there are only 2"));
  CHECK(!meta_constant(md, 2, m, &c, &d, AT));
  CHECK(has_error(&d, "meta[relay.Constant][2] (b64ndarrays[1]): not valid base64"));
  CHECK(!meta_constant(md, 3, m, &c, &d, AT));
  CHECK(has_error(&d, "relay.Constant 3 (node 6) has no \"data\" field"));
  CHECK(!meta_constant(md, 4, m, &c, &d, AT));
  CHECK(has_error(&d, "meta[relay.Constant][4] is node 7 of type \"IntImm\", not a relay.Constant"));
  CHECK(!meta_constant(md, 5, m, &c, &d, AT));
  CHECK(has_error(&d, "is node 0 of type \"\""));
  CHECK(!meta_constant(md, 6, m, &c, &d, AT));
  CHECK(has_error(
      &d, "meta[relay.Constant][6] is out of range: the metadata section has 6 relay.Constant objects"));
  CHECK(!meta_constant(md, -1, m, &c, &d, AT));
  meta_free(md);

  /* A blob that is fine base64 but a broken NDArray; one with extra bytes. */
  g = graph("3, 4", CONST_NODE("0") CONST_NODE("1"), "\"AAAA\", " "\"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAA"
            "AQAAAAAgAQABAAAAAAAAAAQAAAAAAAAAAAAAAAAA\"");
  md = parse(g, &d);
  free(g);
  CHECK(md != NULL);
  CHECK(!meta_constant(md, 0, m, &c, &d, AT));
  CHECK(has_error(&d, "meta[relay.Constant][0] (b64ndarrays[0]): NDArray: truncated blob"));
  CHECK(!meta_constant(md, 1, m, &c, &d, AT));
  CHECK(has_error(&d, "(b64ndarrays[1]): NDArray: 2 unexpected bytes after the data"));
  meta_free(md);

  /* No constants at all, and a NULL section. */
  md = parse("{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\"}]}", &d);
  CHECK(md != NULL);
  CHECK_EQ(meta_count(md, "relay.Constant"), 0);
  CHECK(!meta_constant(md, 0, m, &c, &d, AT));
  CHECK(has_error(
      &d, "meta[relay.Constant][0] does not exist: the metadata section has no relay.Constant objects"));
  meta_free(md);
  CHECK_EQ(meta_count(NULL, "relay.Constant"), 0);

  /* A Map with non-string keys (runtime.String nodes in "data"). */
  md = parse("{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, {\"type_key\": \"Map\", \"data\": [2, 3]}, "
             "{\"type_key\": \"runtime.String\", \"repr_str\": \"relay.Constant\"}, "
             "{\"type_key\": \"Array\", \"data\": [4]}" CONST_NODE("0") "], \"b64ndarrays\": [" EX1 "]}",
             &d);
  CHECK(md != NULL);
  CHECK_EQ(meta_count(md, "relay.Constant"), 1);
  CHECK(meta_constant(md, 0, m, &c, &d, AT));
  CHECK_EQ(c.nbytes, 20);
  meta_free(md);

  module_free(m);
  diag_free(&d);
}

static void test_write_roundtrip(void) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  int64_t s5[1] = {5}, s23[2] = {2, 3}, s0[1] = {0};
  ConstData consts[14];
  ConstData *ptrs[14];
  consts[0] = make_const(m, DTYPE(DT_FLOAT, 32), 1, s5, 1);
  consts[1] = make_const(m, DTYPE(DT_INT, 32), 2, s23, 2);
  consts[2] = make_const(m, DTYPE(DT_UINT, 1), 2, s23, 3);
  consts[3] = make_const(m, DTYPE(DT_UINT, 8), 0, NULL, 4);
  consts[4] = make_const(m, DTYPE(DT_FLOAT, 16), 1, s0, 5);
  for (int i = 5; i < 14; i++) {
    int64_t s[1] = {i};
    consts[i] = make_const(m, DTYPE(DT_INT, 64), 1, s, (uint32_t)i);
  }
  for (int i = 0; i < 14; i++) ptrs[i] = &consts[i];

  /* The exact layout for one constant. */
  StrBuf out = {0};
  meta_write_constants(&out, ptrs, 1);
  const char *layout =
            "#[metadata]\n"
            "{\n"
            "  \"root\": 1, \n"
            "  \"nodes\": [\n"
            "    {\n"
            "      \"type_key\": \"\"\n"
            "    }, \n"
            "    {\n"
            "      \"type_key\": \"Map\", \n"
            "      \"keys\": [\n"
            "        \"relay.Constant\"\n"
            "      ], \n"
            "      \"data\": [2]\n"
            "    }, \n"
            "    {\n"
            "      \"type_key\": \"Array\", \n"
            "      \"data\": [3]\n"
            "    }, \n"
            "    {\n"
            "      \"type_key\": \"relay.Constant\", \n"
            "      \"attrs\": {\n"
            "        \"_checked_type_\": \"0\", \n"
            "        \"data\": \"0\", \n"
            "        \"span\": \"0\", \n"
            "        \"virtual_device_\": \"0\"\n"
            "      }\n"
            "    }\n"
            "  ], \n"
            "  \"b64ndarrays\": [\n"
            "    \"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAA";
  if (strncmp(sb_str(&out), layout, strlen(layout)) != 0) fprintf(stderr, "  layout:\n%s\n", sb_str(&out));
  CHECK(strncmp(sb_str(&out), layout, strlen(layout)) == 0);
  sb_free(&out);

  /* Round trips: 0 constants, a few, and more than 10 (multi-line data). */
  static const int counts[] = {0, 1, 5, 14};
  for (size_t k = 0; k < RLY_COUNTOF(counts); k++) {
    int n = counts[k];
    StrBuf sb = {0};
    meta_write_constants(&sb, ptrs, n);
    const char *text = sb_str(&sb);
    CHECK(strncmp(text, "#[metadata]\n", 12) == 0);
    diag_free(&d);
    diag_init(&d, NULL);
    Metadata *md = meta_parse(text + 12, sb.len - 12, &d, AT);
    CHECK(md != NULL);
    CHECK_EQ(meta_count(md, "relay.Constant"), n);
    for (int i = 0; md && i < n; i++) {
      ConstData back;
      CHECK(meta_constant(md, i, m, &back, &d, AT));
      CHECK(const_equal(&back, &consts[i]));
      CHECK_EQ((uintptr_t)back.data % 64, 0);
    }
    /* Writing is deterministic. */
    StrBuf again = {0};
    meta_write_constants(&again, ptrs, n);
    CHECK_STR(sb_str(&again), text);
    sb_free(&again);
    meta_free(md);
    sb_free(&sb);
  }
  CHECK_EQ(diag_count(&d), 0);
  diag_free(&d);
  module_free(m);
}

/* The spec example above: the prefix check needs the full first string. */
static void test_write_prefix(void) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  const char *ex1 =
      "P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8=";
  size_t n, used;
  char err[256];
  unsigned char *blob = base64_decode(ex1, strlen(ex1), &n);
  ConstData c;
  CHECK(blob && ndarray_decode(blob, n, m, &c, &used, err, sizeof err));
  free(blob);
  ConstData *p = &c;
  StrBuf out = {0};
  meta_write_constants(&out, &p, 1);
  const char *tail =
      "  \"b64ndarrays\": [\n"
      "    \"P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8=\"\n"
      "  ], \n"
      "  \"attrs\": {\"tvm_version\": \"0.16.0\"}\n"
      "}\n";
  CHECK(out.len > strlen(tail) && strcmp(out.data + out.len - strlen(tail), tail) == 0);
  sb_free(&out);
  diag_free(&d);
  module_free(m);
}

/* {==== Attrs objects ====} */

static const AttrField test_fields[] = {
    {"groups", AK_INT, false, "1"},
    {"channels", AK_INT, true, NULL},
    {"units", AK_INT, true, NULL},
    {"flag", AK_BOOL, false, "False"},
    {"eps", AK_DOUBLE, false, "1e-05f"},
    {"out_dtype", AK_DTYPE, false, "\"\""},
    {"void_dtype", AK_DTYPE, false, "\"\""},
    {"layout", AK_STR, false, "\"NCHW\""},
    {"old_layout", AK_STR, false, "\"NCHW\""},
    {"b64_name", AK_STR, false, "\"\""},
    {"strides", AK_INTS, false, "[1, 1]"},
    {"scales", AK_DOUBLES, true, NULL},
    {"pad", AK_INTS_NESTED, false, NULL},
    {"axis", AK_INT_OR_INTS, true, NULL},
    {"axes", AK_INT_OR_INTS, true, NULL},
    {"none_ints", AK_INTS, true, NULL},
    {"anything", AK_ANY, true, NULL},
    {"missing", AK_INTS, true, NULL},
};
static const AttrsClass test_class = {"TestAttrs", test_fields, (int)RLY_COUNTOF(test_fields)};

static const char attrs_json[] =
    "{\"root\": 1, \"nodes\": ["
    /* 0 */ "{\"type_key\": \"\"}, "
    /* 1 */ "{\"type_key\": \"Map\", \"keys\": [\"relay.attrs.TestAttrs\"], \"data\": [2]}, "
    /* 2 */ "{\"type_key\": \"Array\", \"data\": [3, 16, 17]}, "
    /* 3 */ "{\"type_key\": \"relay.attrs.TestAttrs\", \"attrs\": {\"groups\": \"2\", \"channels\": \"4\", "
    "\"units\": \"0\", \"flag\": \"1\", \"eps\": \"1.0000000000000001e-05\", \"out_dtype\": \"float32\", "
    "\"void_dtype\": \"void\", \"layout\": \"5\", \"old_layout\": \"NHWC\", \"b64_name\": \"15\", "
    "\"strides\": \"6\", \"scales\": \"9\", \"pad\": \"12\", \"axis\": \"7\", \"axes\": \"6\", "
    "\"none_ints\": \"0\", \"anything\": \"12\", \"not_in_class\": \"whatever\"}}, "
    /* 4 */ "{\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int64\", \"span\": \"0\", \"value\": \"16\"}}, "
    /* 5 */ "{\"type_key\": \"runtime.String\", \"repr_str\": \"NCHW\"}, "
    /* 6 */ "{\"type_key\": \"Array\", \"data\": [7, 8]}, "
    /* 7 */ "{\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"value\": \"1\"}}, "
    /* 8 */ "{\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"value\": \"-2\"}}, "
    /* 9 */ "{\"type_key\": \"Array\", \"data\": [10, 11]}, "
    /* 10 */ "{\"type_key\": \"FloatImm\", \"attrs\": {\"dtype\": \"float32\", \"value\": \"0.5\"}}, "
    /* 11 */ "{\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"value\": \"3\"}}, "
    /* 12 */ "{\"type_key\": \"Array\", \"data\": [6, 13]}, "
    /* 13 */ "{\"type_key\": \"Array\", \"data\": [8, 7]}, "
    /* 14 */ "{\"type_key\": \"Array\", \"data\": [14]}, "
    /* 15 */ "{\"type_key\": \"runtime.String\", \"repr_b64\": \"YWJj\"}, "
    /* 16 */ "{\"type_key\": \"relay.attrs.TestAttrs\", \"attrs\": {\"groups\": \"x\", \"channels\": \"5\", "
    "\"flag\": \"2\", \"eps\": \"e\", \"out_dtype\": \"float13\", \"strides\": \"9\", \"scales\": \"99\", "
    "\"pad\": \"6\", \"axis\": \"10\", \"anything\": \"14\", \"units\": 3}}, "
    /* 17 */ "{\"type_key\": \"relay.attrs.TestAttrs\"}"
    "]}";

static void test_meta_attrs(void) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  Metadata *md = meta_parse(attrs_json, strlen(attrs_json), &d, AT);
  CHECK(md != NULL);
  CHECK_EQ(meta_count(md, "relay.attrs.TestAttrs"), 3);
  Attrs *a = md ? meta_attrs(md, "relay.attrs.TestAttrs", 0, &test_class, m, &d, AT) : NULL;
  CHECK(a != NULL);
  CHECK_EQ(diag_count(&d), 0);
  if (a) {
    AttrValue **v = a->values;
    CHECK(a->cls == &test_class);
    CHECK_EQ(a->n, test_class.nfields);
    CHECK(v[0]->kind == AV_INT && v[0]->u.i.v == 2);
    CHECK(v[1]->kind == AV_INT && v[1]->u.i.v == 16 && v[1]->u.i.bits == 64);
    CHECK(v[2]->kind == AV_NONE);
    CHECK(v[3]->kind == AV_BOOL && v[3]->u.b);
    CHECK(v[4]->kind == AV_FLOAT && fabs(v[4]->u.f.v - 1e-05) < 1e-12);
    CHECK(v[5]->kind == AV_STR && v[5]->u.str.len == 7 && !strcmp(v[5]->u.str.s, "float32"));
    CHECK(v[6]->kind == AV_STR && v[6]->u.str.len == 0);
    CHECK(v[7]->kind == AV_STR && !strcmp(v[7]->u.str.s, "NCHW"));
    CHECK(v[8]->kind == AV_STR && !strcmp(v[8]->u.str.s, "NHWC"));
    CHECK(v[9]->kind == AV_STR && v[9]->u.str.len == 3 && !memcmp(v[9]->u.str.s, "abc", 3));
    CHECK(v[10]->kind == AV_ARRAY && v[10]->u.arr.n == 2);
    CHECK(v[10]->u.arr.items[0]->u.i.v == 1 && v[10]->u.arr.items[1]->u.i.v == -2);
    CHECK(v[11]->kind == AV_ARRAY && v[11]->u.arr.n == 2);
    CHECK(v[11]->u.arr.items[0]->kind == AV_FLOAT && v[11]->u.arr.items[0]->u.f.v == 0.5);
    CHECK(v[11]->u.arr.items[1]->kind == AV_FLOAT && v[11]->u.arr.items[1]->u.f.v == 3.0);
    CHECK(v[12]->kind == AV_ARRAY && v[12]->u.arr.n == 2);
    CHECK(v[12]->u.arr.items[1]->kind == AV_ARRAY && v[12]->u.arr.items[1]->u.arr.items[0]->u.i.v == -2);
    CHECK(v[13]->kind == AV_INT && v[13]->u.i.v == 1);
    CHECK(v[14]->kind == AV_ARRAY && v[14]->u.arr.n == 2);
    CHECK(v[15]->kind == AV_NONE);
    CHECK(v[16]->kind == AV_ARRAY && v[16]->u.arr.n == 2);
    CHECK(v[17] != NULL && v[17]->kind == AV_NONE);  /* missing, no default: None */
  }

  /* Every field wrong, a cycle included: errors, no crash. */
  CHECK(meta_attrs(md, "relay.attrs.TestAttrs", 1, &test_class, m, &d, AT) == NULL);
  CHECK(has_error(&d, "metadata: meta[relay.attrs.TestAttrs][1], field 'groups': expects an integer"));
  CHECK(has_error(&d, "field 'channels': expects an integer (IntImm node)"));
  CHECK(has_error(&d, "field 'flag': expects a boolean"));
  CHECK(has_error(&d, "field 'eps': expects a number"));
  CHECK(has_error(&d, "field 'out_dtype': expects a data type"));
  CHECK(has_error(&d, "field 'strides': expects an array of integers"));
  CHECK(has_error(&d, "field 'scales': \"99\" is not a node index below 18"));
  CHECK(has_error(&d, "field 'pad': expects an array of arrays of integers"));
  CHECK(has_error(&d, "field 'axis': expects an integer or an array of integers"));
  CHECK(has_error(&d, "field 'anything': value nested too deeply"));
  CHECK(has_error(&d, "field 'units' is a number, expected a string"));

  /* An object without attrs: every field gets its default. */
  diag_free(&d);
  diag_init(&d, NULL);
  a = meta_attrs(md, "relay.attrs.TestAttrs", 2, &test_class, m, &d, AT);
  CHECK(a != NULL);
  for (int i = 0; a && i < a->n; i++) CHECK(a->values[i] != NULL);
  CHECK(meta_attrs(md, "relay.attrs.TestAttrs", 3, &test_class, m, &d, AT) == NULL);
  CHECK(has_error(&d, "meta[relay.attrs.TestAttrs][3] is out of range"));
  CHECK(meta_attrs(md, "relay.attrs.Conv2DAttrs", 0, &test_class, m, &d, AT) == NULL);
  CHECK(has_error(&d, "the metadata section has no relay.attrs.Conv2DAttrs objects"));
  /* The type keys, for tools that walk a section. */
  CHECK_EQ(meta_nkeys(md), 1);
  if (meta_nkeys(md) == 1) CHECK_STR(meta_key(md, 0), "relay.attrs.TestAttrs");
  CHECK_EQ(meta_nkeys(NULL), 0);
  meta_free(md);
  diag_free(&d);
  module_free(m);
}

/* Plain-text fallbacks, objects referred to as meta[...][i], and a small
** graph that would expand exponentially. */
static void test_meta_attrs_extra(void) {
  static const AttrField fields[] = {
      {"axis", AK_INT, true, NULL},
      {"shape", AK_INTS, false, NULL},
      {"note", AK_ANY, true, NULL},
      {"big", AK_ANY, true, NULL},
  };
  static const AttrsClass cls = {"ExtraAttrs", fields, (int)RLY_COUNTOF(fields)};
  StrBuf js = {0};
  sb_puts(&js,
          "{\"root\": 1, \"nodes\": [{\"type_key\": \"\"}, "
          "{\"type_key\": \"Map\", \"keys\": [\"relay.attrs.ExtraAttrs\", \"tir.Var\"], \"data\": [2, 3]}, "
          "{\"type_key\": \"Array\", \"data\": [4, 5]}, " /* 2 */
          "{\"type_key\": \"Array\", \"data\": [6]}, "    /* 3 */
          "{\"type_key\": \"relay.attrs.ExtraAttrs\", \"attrs\": {\"axis\": \"-1\", \"shape\": \"7\", "
          "\"note\": \"hello\"}}, "                                                   /* 4 */
          "{\"type_key\": \"relay.attrs.ExtraAttrs\", \"attrs\": {\"big\": \"8\"}}, " /* 5 */
          "{\"type_key\": \"tir.Var\", \"attrs\": {\"dtype\": \"int64\"}}, "          /* 6 */
          "{\"type_key\": \"Array\", \"data\": [6, 6]}");                             /* 7 */
  /* 8 .. 8+15: Array nodes each holding the next one ten times. */
  for (int level = 0; level < 16; level++) {
    int next = 8 + level + 1;
    if (level == 15) {
      sb_puts(&js, ", {\"type_key\": \"IntImm\", \"attrs\": {\"dtype\": \"int32\", \"value\": \"1\"}}");
      break;
    }
    sb_puts(&js, ", {\"type_key\": \"Array\", \"data\": [");
    for (int i = 0; i < 10; i++) sb_printf(&js, "%s%d", i ? ", " : "", next);
    sb_puts(&js, "]}");
  }
  sb_puts(&js, "]}");
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  Metadata *md = meta_parse(js.data, js.len, &d, AT);
  sb_free(&js);
  CHECK(md != NULL);
  Attrs *a = md ? meta_attrs(md, "relay.attrs.ExtraAttrs", 0, &cls, m, &d, AT) : NULL;
  CHECK(a != NULL);
  if (a) {
    CHECK(a->values[0]->kind == AV_INT && a->values[0]->u.i.v == -1);
    const AttrValue *sh = a->values[1];
    CHECK(sh->kind == AV_ARRAY && sh->u.arr.n == 2);
    CHECK(sh->u.arr.n == 2 && sh->u.arr.items[1]->kind == AV_META);
    CHECK(sh->u.arr.n == 2 && sh->u.arr.items[1]->u.meta.key == sym_intern_cstr(&m->syms, "tir.Var"));
    CHECK(sh->u.arr.n == 2 && sh->u.arr.items[1]->u.meta.index == 0);
    CHECK(a->values[2]->kind == AV_STR && !strcmp(a->values[2]->u.str.s, "hello"));
    CHECK(a->values[3]->kind == AV_NONE);
  }
  CHECK(md && meta_attrs(md, "relay.attrs.ExtraAttrs", 1, &cls, m, &d, AT) == NULL);
  CHECK(has_error(&d, "field 'big': value too large"));
  /* The limit holds for the whole section, not each object: every
  ** reference in the text converts its object again, so a few references
  ** to such an object would cost minutes (fuzz_metadata found it;
  ** fuzz/regressions/metadata/exponential-attrs.json). Once it is spent,
  ** even the small object fails. */
  diag_free(&d);
  diag_init(&d, NULL);
  CHECK(md && meta_attrs(md, "relay.attrs.ExtraAttrs", 1, &cls, m, &d, AT) == NULL);
  CHECK(md && meta_attrs(md, "relay.attrs.ExtraAttrs", 0, &cls, m, &d, AT) == NULL);
  CHECK_EQ(diag_count(&d), 2);
  CHECK(has_error(&d, "metadata: meta[relay.attrs.ExtraAttrs][0], field 'shape': value too large (the section's "
                      "attrs objects hold more than 1048576 values in all)"));
  meta_free(md);
  diag_free(&d);
  module_free(m);
}

/* {==== Corpus file with a metadata section ====} */

static void test_corpus_metadata(void) {
  size_t n;
  char *text = read_file("tests/corpus/metadata_consts.relay", &n);
  CHECK(text != NULL);
  if (!text) return;
  const char *sec = strstr(text, "\n#[metadata]\n");
  CHECK(sec != NULL);
  if (!sec) {
    free(text);
    return;
  }
  sec += strlen("\n#[metadata]");
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  Metadata *md = meta_parse(sec, n - (size_t)(sec - text), &d, AT);
  CHECK(md != NULL);
  CHECK_EQ(meta_count(md, "relay.Constant"), 4);
  ConstData c[4];
  for (int i = 0; md && i < 4; i++) CHECK(meta_constant(md, i, m, &c[i], &d, AT));
  if (md && diag_count(&d) == 0) {
    CHECK(dtype_eq(c[0].dtype, DTYPE(DT_FLOAT, 32)) && c[0].ndim == 1 && c[0].shape[0] == 4);
    const float *f = c[0].data;
    CHECK(f[0] == 0.5f && f[1] == -1.25f && f[2] == 2.0f && f[3] == 3.75f);
    CHECK(dtype_eq(c[1].dtype, DTYPE(DT_INT, 32)) && c[1].ndim == 2 && c[1].shape[0] == 2 &&
          c[1].shape[1] == 3);
    const int32_t *iv = c[1].data;
    CHECK(iv[0] == 1 && iv[1] == -2 && iv[2] == 3 && iv[3] == -4 && iv[4] == 5 && iv[5] == 2147483647);
    CHECK(dtype_is_bool(c[2].dtype) && c[2].ndim == 2 && c[2].nbytes == 4);
    const unsigned char *b = c[2].data;
    CHECK(b[0] == 1 && b[1] == 0 && b[2] == 0 && b[3] == 1);
    CHECK(dtype_eq(c[3].dtype, DTYPE(DT_UINT, 8)) && c[3].ndim == 0 && c[3].nbytes == 1);
    CHECK(((const unsigned char *)c[3].data)[0] == 200);
  }
  meta_free(md);
  diag_free(&d);
  module_free(m);
  free(text);
}

/* {==== .params files ====} */

static bool write_bytes(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* Reads path, expecting failure with msg. */
static void expect_params_error(const char *path, const char *msg) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  ParamEntry *e = (ParamEntry *)&d;
  CHECK_EQ(params_read(path, m, &e, &d, 3), -1);
  CHECK(e == NULL);
  CHECK(diag_count(&d) == 1);
  CHECK(d.items.len == 1 && d.items.data[0].at.file == 3 && d.items.data[0].at.line == 0);
  CHECK(has_error(&d, msg));
  diag_free(&d);
  module_free(m);
}

static void test_params(void) {
  char path[512], cut[512];
  tmp_path(path, sizeof path, "a.params");
  tmp_path(cut, sizeof cut, "cut.params");
  Module *m = module_new();
  int64_t s23[2] = {2, 3}, s4[1] = {4}, s0[2] = {0, 5};
  ParamEntry in[4];
  in[0] =
      (ParamEntry){sym_intern_cstr(&m->syms, "fc1.weight"), make_const(m, DTYPE(DT_FLOAT, 32), 2, s23, 1)};
  in[1] = (ParamEntry){sym_intern_cstr(&m->syms, "mask"), make_const(m, DTYPE(DT_UINT, 1), 1, s4, 2)};
  in[2] = (ParamEntry){sym_intern_cstr(&m->syms, "scale"), make_const(m, DTYPE(DT_FLOAT, 64), 0, NULL, 3)};
  in[3] = (ParamEntry){sym_intern_cstr(&m->syms, "empty"), make_const(m, DTYPE(DT_INT, 8), 2, s0, 4)};
  CHECK(params_write(path, in, 4));

  /* Round trip, into a different module. */
  Module *m2 = module_new();
  Diag d;
  diag_init(&d, NULL);
  ParamEntry *out = NULL;
  CHECK_EQ(params_read(path, m2, &out, &d, 1), 4);
  CHECK_EQ(diag_count(&d), 0);
  for (int i = 0; out && i < 4; i++) {
    CHECK_STR(out[i].name->text, in[i].name->text);
    CHECK(out[i].name == sym_intern_cstr(&m2->syms, in[i].name->text));
    CHECK(const_equal(&out[i].value, &in[i].value));
    CHECK_EQ((uintptr_t)out[i].value.data % 64, 0);
  }
  /* No entries at all. */
  CHECK(params_write(cut, NULL, 0));
  CHECK_EQ(params_read(cut, m2, &out, &d, 1), 0);
  CHECK_EQ(diag_count(&d), 0);
  diag_free(&d);
  module_free(m2);

  /* Every proper prefix of the file is an error. */
  size_t n;
  char *bytes = read_file(path, &n);
  CHECK(bytes != NULL && n > 100);
  for (size_t len = 0; bytes && len < n; len++) {
    CHECK(write_bytes(cut, bytes, len));
    Module *mc = module_new();
    diag_init(&d, NULL);
    out = NULL;
    CHECK_EQ(params_read(cut, mc, &out, &d, 1), -1);
    CHECK_EQ(diag_count(&d), 1);
    diag_free(&d);
    module_free(mc);
  }
  /* Patched headers. */
  unsigned char *b = (unsigned char *)bytes;
  if (bytes) {
    b[0] ^= 1;
    CHECK(write_bytes(cut, b, n));
    expect_params_error(
        cut, "params: bad magic 0xF7E58D4F05049CB6 (expected 0xF7E58D4F05049CB7); not a .params file");
    b[0] ^= 1;
    b[16] = 200;  /* 200 names */
    CHECK(write_bytes(cut, b, n));
    expect_params_error(cut, "params: the header announces 200 entries");
    b[16] = 4;
    b[22] = 1;    /* 2^48 + 4 names */
    CHECK(write_bytes(cut, b, n));
    expect_params_error(cut, "more than the");
    b[22] = 0;
    b[29] = 1;  /* first name length 2^40 + 10 */
    CHECK(write_bytes(cut, b, n));
    expect_params_error(cut, "params: name 0 (1099511627786 bytes) runs past the end of the file");
    b[29] = 0;
    size_t arrays_at = 24 + (8 + 10) + (8 + 4) + (8 + 5) + (8 + 5);
    b[arrays_at] = 3;
    CHECK(write_bytes(cut, b, n));
    expect_params_error(cut, "params: 4 names but 3 arrays");
    b[arrays_at] = 4;
    b[arrays_at + 8 + 16] = 2;  /* device type of the first array */
    CHECK(write_bytes(cut, b, n));
    expect_params_error(cut, "params: array 0 ('fc1.weight'): NDArray: device type 2 is not CPU");
    b[arrays_at + 8 + 16] = 1;
    StrBuf extra = {0};
    sb_putn(&extra, bytes, n);
    sb_puts(&extra, "junk");
    CHECK(write_bytes(cut, extra.data, extra.len));
    sb_free(&extra);
    expect_params_error(cut, "params: 4 unexpected bytes after the last array");
  }
  free(bytes);

  /* Duplicate names. */
  in[1].name = in[0].name;
  CHECK(params_write(path, in, 4));
  expect_params_error(path, "params: parameter 'fc1.weight' appears twice");

  /* Files that are not there or not files. */
  expect_params_error("tests/unit/no_such_file.params",
                      "params: cannot open 'tests/unit/no_such_file.params'");
  expect_params_error("tests", "params: 'tests' is a directory");
  CHECK(!params_write("/nonexistent_dir/x.params", in, 1));
  remove(path);
  remove(cut);
  module_free(m);
}

/* The corpus weights written by tests/tools/make_params.py. */
static void test_corpus_params(void) {
  Module *m = module_new();
  Diag d;
  diag_init(&d, NULL);
  ParamEntry *e = NULL;
  int n = params_read("tests/corpus/params_model.params", m, &e, &d, 1);
  CHECK_EQ(n, 4);
  static const struct { const char *name; int ndim; int64_t d0, d1; } want[] = {
      {"fc1.weight", 2, 16, 8}, {"fc1.bias", 1, 16, 0}, {"fc2.weight", 2, 4, 16}, {"fc2.bias", 1, 4, 0},
  };
  for (int i = 0; i < n && i < 4; i++) {
    CHECK_STR(e[i].name->text, want[i].name);
    CHECK(dtype_eq(e[i].value.dtype, DTYPE(DT_FLOAT, 32)));
    CHECK_EQ(e[i].value.ndim, want[i].ndim);
    CHECK_EQ(e[i].value.shape[0], want[i].d0);
    if (want[i].ndim == 2) CHECK_EQ(e[i].value.shape[1], want[i].d1);
  }
  if (n == 4) {
    /* The script's first weights: (i % 7 - 3) / 8. */
    const float *w = e[0].value.data;
    CHECK(w[0] == -0.375f && w[1] == -0.25f && w[6] == 0.375f && w[7] == -0.375f);
  }
  /* The same bytes from memory give the same entries; a cut copy, the
  ** same error as the file. */
  size_t len;
  unsigned char *bytes = (unsigned char *)read_file("tests/corpus/params_model.params", &len);
  CHECK(bytes != NULL);
  ParamEntry *e2 = NULL;
  CHECK_EQ(params_parse(bytes, len, m, &e2, &d, 1), n);
  for (int i = 0; i < n && e2; i++) {
    CHECK(e2[i].name == e[i].name);
    CHECK_EQ(e2[i].value.nbytes, e[i].value.nbytes);
    CHECK(memcmp(e2[i].value.data, e[i].value.data, e[i].value.nbytes) == 0);
  }
  CHECK_EQ(diag_count(&d), 0);
  CHECK_EQ(params_parse(bytes, len - 1, m, &e2, &d, 1), -1);
  CHECK(e2 == NULL);
  CHECK(has_error(&d, "params: array 3 ('fc2.bias'): NDArray: truncated data (15 of 16 bytes present)"));
  CHECK_EQ(params_parse(NULL, 0, m, &e2, &d, 1), -1);
  CHECK(has_error(&d, "params: file too short (0 bytes; the header needs 24)"));
  free(bytes);
  diag_free(&d);
  module_free(m);
}

/* Mutated sections and params files: errors or success, never a crash
** (run under ASan/UBSan). */
static void test_mutations(void) {
  static const AttrField fields[] = {
      {"groups", AK_INT, false, NULL}, {"channels", AK_INT, true, NULL}, {"layout", AK_STR, false, NULL},
      {"strides", AK_INTS, false, NULL}, {"pad", AK_INTS_NESTED, false, NULL}, {"any", AK_ANY, true, NULL},
  };
  static const AttrsClass cls = {"TestAttrs", fields, (int)RLY_COUNTOF(fields)};
  Module *m = module_new();
  int64_t s23[2] = {2, 3};
  ConstData c = make_const(m, DTYPE(DT_INT, 16), 2, s23, 9);
  ConstData *cp = &c;
  StrBuf sec = {0};
  meta_write_constants(&sec, &cp, 1);
  const char *texts[2] = {sb_str(&sec) + 12, attrs_json};
  size_t lens[2] = {sec.len - 12, strlen(attrs_json)};
  static const char alphabet[] = "0123456789{}[]\",: aAP=-";
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; round++) {
    int which = round & 1;
    char *t = rly_xmalloc(lens[which]);
    memcpy(t, texts[which], lens[which]);
    for (int k = 0; k < 1 + round % 3; k++) {
      seed = seed * 1664525u + 1013904223u;
      size_t at = (seed >> 8) % lens[which];
      seed = seed * 1664525u + 1013904223u;
      t[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
    }
    Module *mm = module_new();
    Diag d;
    diag_init(&d, NULL);
    Metadata *md = meta_parse(t, lens[which], &d, AT);
    if (md) {
      for (int64_t i = -1; i <= meta_count(md, "relay.Constant"); i++) {
        ConstData out;
        (void)meta_constant(md, i, mm, &out, &d, AT);
      }
      for (int64_t i = 0; i <= meta_count(md, "relay.attrs.TestAttrs"); i++)
        (void)meta_attrs(md, "relay.attrs.TestAttrs", i, &cls, mm, &d, AT);
    }
    meta_free(md);
    diag_free(&d);
    module_free(mm);
    free(t);
  }
  sb_free(&sec);

  /* Params files with random bytes changed. */
  char path[512];
  tmp_path(path, sizeof path, "mut.params");
  ParamEntry in[2] = {{sym_intern_cstr(&m->syms, "w"), c}, {sym_intern_cstr(&m->syms, "b"), c}};
  CHECK(params_write(path, in, 2));
  size_t n;
  char *bytes = read_file(path, &n);
  for (int round = 0; bytes && round < 300; round++) {
    char *t = rly_xmalloc(n);
    memcpy(t, bytes, n);
    seed = seed * 1664525u + 1013904223u;
    t[(seed >> 8) % n] = (char)(seed >> 3);
    CHECK(write_bytes(path, t, n));
    Module *mm = module_new();
    Diag d;
    diag_init(&d, NULL);
    ParamEntry *out;
    int r = params_read(path, mm, &out, &d, 1);
    CHECK(r == 2 || (r == -1 && diag_count(&d) == 1));
    diag_free(&d);
    module_free(mm);
    free(t);
  }
  free(bytes);
  remove(path);
  module_free(m);
}

int main(void) {
  test_base64();
  test_spec_examples();
  test_ndarray_roundtrip();
  test_ndarray_errors();
  test_meta_errors();
  test_write_roundtrip();
  test_write_prefix();
  test_meta_attrs();
  test_meta_attrs_extra();
  test_corpus_metadata();
  test_params();
  test_corpus_params();
  test_mutations();
  return check_report("test_metadata");
}
