/* test_runtime.c: the runtime's values, allocation hook, errors, float16,
** .npy reading and writing, and printing.
**
** Usage: test_runtime [DATA_DIR]  (default tests/runtime/data, so run it
** from the repository root). The .npy fixtures there were written by NumPy
** (tests/runtime/make_npy_fixtures.py); VALUES below must match that
** script. Temporary files go to a fresh directory under $TMPDIR or /tmp.
**
** Every rlyrt allocation goes through a counting allocator, so each test
** also checks that nothing leaks, and the fault tests make the Nth
** allocation fail. */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../unit/check.h"
#include "relayc/runtime.h"

static const char *data_dir = "tests/runtime/data";
static char sentinel; /* a non-NULL pointer that readers must overwrite with NULL */
#define NOT_NULL ((rlyrt_tensor *)(void *)&sentinel)
static char tmp_dir[256];

/* {==== A counting allocator that can fail on the Nth call ====} */

static long alloc_live;          /* blocks allocated and not freed */
static long alloc_calls;         /* calls since the last reset */
static long alloc_fail_at = -1;  /* the call (0-based) that fails; -1: none */
static size_t alloc_largest;     /* the largest size asked for since the last reset */

static void *count_alloc(void *ctx, size_t size, size_t align) {
  (void)ctx;
  if (alloc_calls++ == alloc_fail_at) return NULL;
  if (size > alloc_largest) alloc_largest = size;
  if (align < sizeof(void *)) align = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, align, size ? size : 1) != 0) return NULL;
  alloc_live++;
  return p;
}

static void count_free(void *ctx, void *p) {
  (void)ctx;
  alloc_live--;
  free(p);
}

static const rlyrt_allocator counting = {count_alloc, count_free, NULL};

/* {==== Helpers ====} */

static const DLDataType DT_BOOL = {kDLUInt, 1, 1};
static const DLDataType DT_I8 = {kDLInt, 8, 1}, DT_I16 = {kDLInt, 16, 1}, DT_I32 = {kDLInt, 32, 1},
                        DT_I64 = {kDLInt, 64, 1};
static const DLDataType DT_U8 = {kDLUInt, 8, 1}, DT_U32 = {kDLUInt, 32, 1}, DT_U64 = {kDLUInt, 64, 1};
static const DLDataType DT_F16 = {kDLFloat, 16, 1}, DT_F32 = {kDLFloat, 32, 1}, DT_F64 = {kDLFloat, 64, 1};

typedef struct dtype_case {
  const char *name;
  DLDataType dt;
  size_t bytes;
} dtype_case;

static const dtype_case DTYPES[] = {
    {"bool", {kDLUInt, 1, 1}, 1},     {"int8", {kDLInt, 8, 1}, 1},       {"int16", {kDLInt, 16, 1}, 2},
    {"int32", {kDLInt, 32, 1}, 4},    {"int64", {kDLInt, 64, 1}, 8},     {"uint8", {kDLUInt, 8, 1}, 1},
    {"uint16", {kDLUInt, 16, 1}, 2},  {"uint32", {kDLUInt, 32, 1}, 4},   {"uint64", {kDLUInt, 64, 1}, 8},
    {"float16", {kDLFloat, 16, 1}, 2}, {"float32", {kDLFloat, 32, 1}, 4}, {"float64", {kDLFloat, 64, 1}, 8},
};
enum { NDTYPES = sizeof DTYPES / sizeof DTYPES[0] };

/* The values of the dt_<dtype>.npy fixtures, as make_npy_fixtures.py writes them. */
static const int64_t VALUES_INT[][6] = {
    {1, 0, 1, 1, 0, 0},                                                  /* bool */
    {0, 1, -1, 100, -128, 127},                                          /* int8 */
    {0, 1, -1, 1000, -32768, 32767},                                     /* int16 */
    {0, 1, -1, 100000, INT32_MIN, INT32_MAX},                            /* int32 */
    {0, 1, -1, 1000000000000, INT64_MIN, INT64_MAX},                     /* int64 */
    {0, 1, 2, 100, 254, 255},                                            /* uint8 */
    {0, 1, 2, 1000, 65534, 65535},                                       /* uint16 */
    {0, 1, 2, 100000, 4294967294, 4294967295},                           /* uint32 */
    {0, 1, 2, 1000000000000, (int64_t)(UINT64_MAX - 1), (int64_t)UINT64_MAX}, /* uint64, as int64 bits */
};
static const double VALUES_FLOAT[][6] = {
    {0.0, 1.5, -2.25, 65504.0, 0x1p-14, -0.0},  /* float16 */
    {0.0, 1.5, -2.25, 1e30f, 0x1p-126, -0.0},   /* float32 */
    {0.0, 1.5, -2.25, 1e300, 0x1p-1022, -0.0},  /* float64 */
};

/* Whether t holds the fixture values of DTYPES[k]. */
static bool has_fixture_values(const rlyrt_tensor *t, int k) {
  if (!rlyrt_dtype_eq(t->dl.dtype, DTYPES[k].dt) || t->dl.ndim != 2 || t->dl.shape[0] != 2 || t->dl.shape[1] != 3)
    return false;
  for (int i = 0; i < 6; i++) {
    if (k < 9) {
      if (rlyrt_get_i64(t, i) != VALUES_INT[k][i]) return false;
    } else {
      double want = VALUES_FLOAT[k - 9][i], got = rlyrt_get_f64(t, i);
      if (got != want || (signbit(got) != 0) != (signbit(want) != 0)) return false;
    }
  }
  return true;
}

/* dir/file, in storage that lives until the end of the caller's block. */
static char *join_path(char *buf, const char *dir, const char *file) {
  snprintf(buf, 512, "%s/%s", dir, file);
  return buf;
}
#define path_in(dir, file) join_path((char[512]){0}, dir, file)

/* The whole file (malloc'd), or NULL. */
static unsigned char *read_file(const char *path, size_t *n) {
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  unsigned char *buf = NULL;
  size_t cap = 0, len = 0, k;
  do {
    if (len == cap) {
      cap = cap ? cap * 2 : 4096;
      buf = realloc(buf, cap);
    }
    k = fread(buf + len, 1, cap - len, f);
    len += k;
  } while (k > 0);
  fclose(f);
  *n = len;
  return buf;
}

static bool write_file(const char *path, const void *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(p, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

/* What rlyrt_value_print writes (malloc'd). */
static char *print_str(const rlyrt_object *v) {
  char *s = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&s, &n);
  rlyrt_value_print(f, v);
  fclose(f);
  return s;
}

static void check_print(const rlyrt_object *v, const char *want, int line) {
  char *got = print_str(v);
  check_count++;
  if (strcmp(got, want) != 0) {
    check_failures++;
    fprintf(stderr, "%s:%d: printed:\n%s\nexpected:\n%s\n", __FILE__, line, got, want);
  }
  free(got);
}
#define CHECK_PRINT(v, want) check_print((const rlyrt_object *)(v), want, __LINE__)

/* A tensor of dtype and shape with the values vals[0..numel). */
static rlyrt_tensor *tensor_of(DLDataType dt, int32_t ndim, const int64_t *shape, const double *vals) {
  rlyrt_tensor *t = rlyrt_tensor_new(dt, ndim, shape, false);
  if (!t) return NULL;
  for (int64_t i = 0; i < rlyrt_tensor_numel(t); i++) rlyrt_set_f64(t, i, vals[i]);
  return t;
}

static rlyrt_tensor *scalar_i32(int32_t v) {
  rlyrt_tensor *t = rlyrt_tensor_new(DT_I32, 0, NULL, false);
  *(int32_t *)t->dl.data = v;
  return t;
}

static bool same_tensor(const rlyrt_tensor *a, const rlyrt_tensor *b) {
  if (!a || !b || !rlyrt_dtype_eq(a->dl.dtype, b->dl.dtype) || a->dl.ndim != b->dl.ndim) return false;
  for (int32_t i = 0; i < a->dl.ndim; i++)
    if (a->dl.shape[i] != b->dl.shape[i]) return false;
  size_t n = rlyrt_tensor_nbytes(a);
  return n == 0 || memcmp(a->dl.data, b->dl.data, n) == 0;
}

/* A .npy image: preamble of version major.minor, the header text padded
** with spaces and a newline to a multiple of `align` (0: no padding, the
** text is used as is), then ndata bytes of data. Returns the length. */
static size_t make_npy(unsigned char *buf, int major, int minor, const char *header, size_t align, const void *data,
                       size_t ndata) {
  size_t plen = major == 1 ? 10 : 12, len = strlen(header), hlen = len;
  if (align) {
    hlen = len + 1;
    while ((plen + hlen) % align) hlen++;
  }
  memcpy(buf, "\x93NUMPY", 6);
  buf[6] = (unsigned char)major;
  buf[7] = (unsigned char)minor;
  for (size_t k = 0; k < plen - 8; k++) buf[8 + k] = (unsigned char)(hlen >> (8 * k));
  memcpy(buf + plen, header, len);
  if (align) {
    memset(buf + plen + len, ' ', hlen - len - 1);
    buf[plen + hlen - 1] = '\n';
  }
  if (ndata) memcpy(buf + plen + hlen, data, ndata);
  return plen + hlen + ndata;
}

/* {==== Tensors and containers ====} */

static void test_tensor_new(void) {
  char name[32];
  for (int k = 0; k < NDTYPES; k++) {
    int64_t shape[3] = {2, 3, 5};
    rlyrt_tensor *t = rlyrt_tensor_new(DTYPES[k].dt, 3, shape, true);
    CHECK(t != NULL);
    if (!t) continue;
    CHECK_EQ(t->obj.refcount, 1);
    CHECK_EQ(t->obj.kind, RLYRT_TENSOR);
    CHECK_STR(rlyrt_dtype_name(t->dl.dtype, name), DTYPES[k].name);
    CHECK_EQ(rlyrt_dtype_bytes(t->dl.dtype), DTYPES[k].bytes);
    CHECK_EQ(rlyrt_tensor_numel(t), 30);
    CHECK_EQ(rlyrt_tensor_nbytes(t), 30 * DTYPES[k].bytes);
    /* 64-byte aligned data from 64 bytes on, 16 below. */
    CHECK_EQ((uintptr_t)t->dl.data % (rlyrt_tensor_nbytes(t) >= 64 ? 64 : 16), 0);
    CHECK(t->dl.shape == t->shape_buf && t->dl.strides == NULL && t->dl.byte_offset == 0);
    CHECK_EQ(t->dl.device.device_type, kDLCPU);
    CHECK_EQ(t->dl.shape[2], 5);
    bool zero = true;
    for (size_t i = 0; i < rlyrt_tensor_nbytes(t); i++) zero &= ((unsigned char *)t->dl.data)[i] == 0;
    CHECK(zero);
    /* Element access round trip. */
    rlyrt_set_i64(t, 7, 1);
    CHECK_EQ(rlyrt_get_i64(t, 7), 1);
    CHECK(rlyrt_get_f64(t, 7) == 1.0);
    rlyrt_release(&t->obj);
    /* 0-d and zero-size. */
    t = rlyrt_tensor_new(DTYPES[k].dt, 0, NULL, true);
    CHECK(t && rlyrt_tensor_numel(t) == 1 && rlyrt_tensor_nbytes(t) == DTYPES[k].bytes);
    rlyrt_release((rlyrt_object *)t);
    int64_t empty[2] = {4, 0};
    t = rlyrt_tensor_new(DTYPES[k].dt, 2, empty, false);
    CHECK(t && rlyrt_tensor_numel(t) == 0 && rlyrt_tensor_nbytes(t) == 0);
    rlyrt_release((rlyrt_object *)t);
  }
  /* Bad dtypes, shapes and ranks: NULL with the error set. */
  static const DLDataType bad[] = {{kDLFloat, 8, 1}, {kDLInt, 4, 1}, {kDLFloat, 32, 4}, {kDLBfloat, 16, 1}, {9, 32, 1}};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    rlyrt_clear_error();
    int64_t one = 1;
    CHECK(rlyrt_tensor_new(bad[k], 1, &one, false) == NULL);
    CHECK(strstr(rlyrt_last_error(), "unsupported dtype") != NULL);
  }
  int64_t neg[2] = {2, -1};
  CHECK(rlyrt_tensor_new(DT_F32, 2, neg, false) == NULL);
  CHECK_STR(rlyrt_last_error(), "negative dimension -1");
  int64_t big[65] = {0};
  CHECK(rlyrt_tensor_new(DT_F32, 65, big, false) == NULL);
  int64_t huge[2] = {INT64_MAX, 4};
  CHECK(rlyrt_tensor_new(DT_F32, 2, huge, false) == NULL);
  CHECK_EQ(alloc_live, 0);

  /* Copy of a DLTensor with explicit row-major strides. */
  float src[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3}, strides[2] = {3, 1};
  DLTensor dl = {src, {kDLCPU, 0}, 2, DT_F32, shape, strides, 0};
  rlyrt_tensor *c = rlyrt_tensor_copy_dl(&dl);
  CHECK(c && c->dl.data != src && memcmp(c->dl.data, src, sizeof src) == 0);
  rlyrt_release((rlyrt_object *)c);
  int64_t colmajor[2] = {1, 2};
  dl.strides = colmajor;
  CHECK(rlyrt_tensor_copy_dl(&dl) == NULL);
  CHECK_EQ(alloc_live, 0);
}

static void test_refcounts(void) {
  rlyrt_tensor *t = scalar_i32(5);
  CHECK(rlyrt_retain(&t->obj) == &t->obj);
  CHECK_EQ(t->obj.refcount, 2);
  rlyrt_release(&t->obj);
  CHECK_EQ(t->obj.refcount, 1);
  CHECK_EQ(alloc_live, 1);
  rlyrt_release(&t->obj);
  CHECK_EQ(alloc_live, 0);
  CHECK(rlyrt_retain(NULL) == NULL);
  rlyrt_release(NULL);

  /* A static constant: retain and release never touch it. */
  static rlyrt_adt nil = {{RLYRT_REFCOUNT_STATIC, RLYRT_ADT, 0}, 1, 0, "Nil"};
  CHECK(rlyrt_retain(&nil.obj) == &nil.obj);
  rlyrt_release(&nil.obj);
  rlyrt_release(&nil.obj);
  CHECK_EQ(nil.obj.refcount, RLYRT_REFCOUNT_STATIC);
  /* ... and a container holding it does not free it. */
  rlyrt_tuple *tu = rlyrt_tuple_new(1);
  rlyrt_tuple_set_take(tu, 0, &nil.obj);
  rlyrt_release(&tu->obj);
  CHECK_EQ(nil.obj.refcount, RLYRT_REFCOUNT_STATIC);
  CHECK_EQ(alloc_live, 0);
}

static void test_containers(void) {
  rlyrt_tensor *a = scalar_i32(1), *b = scalar_i32(2);
  rlyrt_tuple *t = rlyrt_tuple_new(2);
  CHECK(t && t->n == 2 && t->fields[0] == NULL && t->fields[1] == NULL && t->obj.kind == RLYRT_TUPLE);
  /* _take consumes: the tuple now holds the only reference. */
  rlyrt_tuple_set_take(t, 0, &a->obj);
  rlyrt_tuple_set_take(t, 1, rlyrt_retain(&a->obj));
  CHECK_EQ(a->obj.refcount, 2);
  /* Replacing a field releases what was there. */
  rlyrt_tuple_set_take(t, 1, &b->obj);
  CHECK_EQ(a->obj.refcount, 1);
  CHECK(t->fields[1] == &b->obj);

  rlyrt_adt *cons = rlyrt_adt_new(1, "Cons", 2);
  CHECK(cons && cons->tag == 1 && cons->n == 2 && strcmp(cons->ctor, "Cons") == 0);
  rlyrt_adt_set_take(cons, 0, rlyrt_retain(&t->obj));
  rlyrt_adt_set_take(cons, 1, &rlyrt_adt_new(0, "Nil", 0)->obj);

  int code;
  rlyrt_closure *c = rlyrt_closure_new(&code, 1);
  CHECK(c && c->code == &code && c->nenv == 1);
  rlyrt_closure_set_take(c, 0, &cons->obj);

  rlyrt_ref *r = rlyrt_ref_new_take(&c->obj);
  CHECK(r && r->value == &c->obj);
  rlyrt_ref_write_take(r, rlyrt_retain(&t->obj));
  CHECK_EQ(t->obj.refcount, 2); /* ours and the ref's; the closure chain is gone */
  rlyrt_release(&t->obj);
  CHECK_EQ(alloc_live, 4); /* ref, tuple, a, b */
  rlyrt_release(&r->obj);
  CHECK_EQ(alloc_live, 0);
  /* Setting NULL clears a field. */
  rlyrt_tuple *u = rlyrt_tuple_new(1);
  rlyrt_tuple_set_take(u, 0, &scalar_i32(3)->obj);
  rlyrt_tuple_set_take(u, 0, NULL);
  CHECK_EQ(alloc_live, 1);
  rlyrt_release(&u->obj);
  CHECK_EQ(alloc_live, 0);
}

/* Sharing between threads: rlyrt_share converts an object and all it
** holds (a cycle through a reference included) to atomic counts, which
** keep their number; retain and release go on working; a value written
** into a shared reference is shared. */
/* Stack boxes and frame tensors (RLYRT_TENSOR_ON_STACK): rlyrt_keep and
** rlyrt_unstack copy them; anything else is retained or left alone. */
static void test_on_stack(void) {
  int32_t x = 42;
  rlyrt_tensor box = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, RLYRT_TENSOR_ON_STACK},
                      {&x, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, NULL, NULL, 0}};
  rlyrt_object *k = rlyrt_keep(&box.obj);
  CHECK(k && k != &box.obj && k->refcount == 1 && !(k->flags & RLYRT_TENSOR_ON_STACK));
  CHECK(k && *(int32_t *)RLYRT_AS_TENSOR(k)->dl.data == 42);
  CHECK(rlyrt_keep_inline(k) == k && k->refcount == 2);
  rlyrt_release(k);
  rlyrt_release(k);
  /* A tensor result that is the box: replaced by a copy. */
  rlyrt_object *r = &box.obj;
  CHECK_EQ(rlyrt_unstack(&r), RLYRT_OK);
  CHECK(r != &box.obj && *(int32_t *)RLYRT_AS_TENSOR(r)->dl.data == 42);
  rlyrt_release(r);
  /* A tuple result holding the box (and a plain tensor): the box's field
  ** is replaced, the other kept. */
  rlyrt_tensor *plain = scalar_i32(7);
  rlyrt_tuple *t = rlyrt_tuple_new(2);
  t->fields[0] = &box.obj;
  t->fields[1] = &plain->obj;
  r = &t->obj;
  CHECK_EQ(rlyrt_unstack(&r), RLYRT_OK);
  CHECK(r == &t->obj && t->fields[0] != &box.obj && t->fields[1] == &plain->obj);
  CHECK(*(int32_t *)RLYRT_AS_TENSOR(t->fields[0])->dl.data == 42);
  rlyrt_release(&t->obj);
  /* Plain values are left alone. */
  r = NULL;
  CHECK_EQ(rlyrt_unstack(&r), RLYRT_OK);
  CHECK(r == NULL);
}

static void test_share(void) {
  rlyrt_tensor *t = scalar_i32(7);
  rlyrt_tuple *tu = rlyrt_tuple_new(2);
  rlyrt_tuple_set_take(tu, 0, rlyrt_retain(&t->obj));
  rlyrt_adt *cons = rlyrt_adt_new(1, "Cons", 2);
  rlyrt_adt_set_take(cons, 0, rlyrt_retain(&t->obj));
  rlyrt_adt_set_take(cons, 1, &rlyrt_adt_new(0, "Nil", 0)->obj);
  rlyrt_tuple_set_take(tu, 1, &cons->obj);
  /* A cycle: a reference holding a closure whose environment holds it. */
  int code;
  rlyrt_closure *c = rlyrt_closure_new(&code, 1);
  rlyrt_ref *r = rlyrt_ref_new_take(&c->obj);
  rlyrt_closure_set_take(c, 0, rlyrt_retain(&r->obj));
  CHECK_EQ(t->obj.refcount, 3);
  rlyrt_share(&tu->obj);
  CHECK_EQ(t->obj.refcount, -3);
  CHECK_EQ(rlyrt_refcount(&t->obj), 3);
  CHECK(tu->obj.refcount == -1 && cons->obj.refcount == -1 && cons->fields[1]->refcount == -1);
  rlyrt_share(&tu->obj); /* again: nothing changes */
  CHECK_EQ(rlyrt_refcount(&t->obj), 3);
  CHECK(rlyrt_retain(&t->obj) == &t->obj);
  CHECK_EQ(rlyrt_refcount(&t->obj), 4);
  rlyrt_release(&t->obj);
  rlyrt_release(&t->obj);
  CHECK_EQ(rlyrt_refcount(&t->obj), 2);
  rlyrt_release(&tu->obj);
  CHECK_EQ(alloc_live, 2); /* the reference and the closure of the cycle */
  rlyrt_share(&r->obj);
  CHECK(r->obj.refcount == -2 && c->obj.refcount == -1);
  /* A private value written into a shared reference becomes shared. */
  rlyrt_tensor *u = scalar_i32(8);
  rlyrt_ref_write_take(r, rlyrt_retain(&u->obj));
  CHECK_EQ(u->obj.refcount, -2);
  CHECK_EQ(rlyrt_refcount(&u->obj), 2);
  rlyrt_release(&u->obj);
  /* Static objects stay static. */
  static rlyrt_adt nil = {{RLYRT_REFCOUNT_STATIC, RLYRT_ADT, 0}, 1, 0, "Nil"};
  rlyrt_share(&nil.obj);
  CHECK_EQ(nil.obj.refcount, RLYRT_REFCOUNT_STATIC);
  CHECK_EQ(rlyrt_refcount(&nil.obj), RLYRT_REFCOUNT_STATIC);
  rlyrt_share(NULL);
  /* The closure was dropped with the old value; the reference is ours. */
  CHECK_EQ(rlyrt_refcount(&r->obj), 1);
  rlyrt_release(&r->obj);
  CHECK_EQ(alloc_live, 0);
}

/* A constructor value with its scalar fields in one block: each box is a
** tensor that may outlive the value, and the value a box. */
static void test_adt_boxes(void) {
  CHECK_EQ(alloc_live, 0);
  rlyrt_adt *a = rlyrt_adt_new_boxes(1, "P", 3, 2);
  CHECK(a && a->n == 3 && a->tag == 1 && strcmp(a->ctor, "P") == 0);
  CHECK_EQ(alloc_live, 1);
  rlyrt_tensor *x = rlyrt_adt_box(a, 0, (DLDataType){kDLFloat, 32, 1});
  rlyrt_tensor *y = rlyrt_adt_box(a, 1, (DLDataType){kDLInt, 64, 1});
  CHECK(x != y && x->dl.ndim == 0 && x->obj.refcount == 1 && x->obj.kind == RLYRT_TENSOR);
  CHECK(((uintptr_t)x->dl.data % 16) == 0 && ((uintptr_t)y->dl.data % 16) == 0);
  CHECK(*(int64_t *)y->dl.data == 0);
  *(float *)x->dl.data = 1.5f;
  *(int64_t *)y->dl.data = -7;
  a->fields[0] = &x->obj;
  a->fields[1] = &y->obj;
  a->fields[2] = &scalar_i32(3)->obj;
  CHECK_EQ(alloc_live, 2);
  CHECK(rlyrt_get_f64(x, 0) == 1.5 && rlyrt_get_i64(y, 0) == -7);
  /* rlyrt_keep retains a box: it is not on a stack. */
  rlyrt_object *kx = rlyrt_keep(&x->obj);
  CHECK(kx == &x->obj && x->obj.refcount == 2);
  /* The value dies first: the block stays for the box still held. */
  rlyrt_release(&a->obj);
  CHECK_EQ(alloc_live, 1);
  CHECK(rlyrt_get_f64(x, 0) == 1.5);
  rlyrt_release(kx);
  CHECK_EQ(alloc_live, 0);
  /* A box dies first (its field replaced), then the value; and shared. */
  a = rlyrt_adt_new_boxes(0, "Q", 1, 1);
  x = rlyrt_adt_box(a, 0, (DLDataType){kDLInt, 32, 1});
  a->fields[0] = &x->obj;
  rlyrt_adt_set_take(a, 0, &scalar_i32(4)->obj);
  CHECK_EQ(alloc_live, 2);
  rlyrt_share(&a->obj);
  rlyrt_release(&a->obj);
  CHECK_EQ(alloc_live, 0);
  /* Kept fields: a scalar on a stack is copied into a box of the block,
  ** a heap tensor retained. */
  int32_t sv = 42;
  rlyrt_tensor sbox = {{RLYRT_REFCOUNT_STATIC, RLYRT_TENSOR, RLYRT_TENSOR_ON_STACK},
                       {&sv, {kDLCPU, 0}, 0, {kDLInt, 32, 1}, NULL, NULL, 0}};
  rlyrt_tensor *heap = scalar_i32(5);
  rlyrt_object *fields[] = {&sbox.obj, &heap->obj};
  a = rlyrt_adt_new_kept(2, "K", 2, fields);
  CHECK_EQ(alloc_live, 2);
  CHECK(a && a->fields[0] != &sbox.obj && (a->fields[0]->flags & RLYRT_TENSOR_IN_ADT));
  CHECK(a && rlyrt_get_i64(RLYRT_AS_TENSOR(a->fields[0]), 0) == 42 && a->fields[1] == &heap->obj);
  CHECK_EQ(heap->obj.refcount, 2);
  rlyrt_release(&heap->obj);
  rlyrt_release(&a->obj);
  CHECK_EQ(alloc_live, 0);
  /* No boxes: a plain value. */
  a = rlyrt_adt_new_boxes(0, "N", 0, 0);
  CHECK(a && !(a->obj.flags & RLYRT_ADT_BOXES));
  rlyrt_release(&a->obj);
  CHECK_EQ(alloc_live, 0);
}

/* Cons(x, Cons(x, ... Nil)) of n nodes, built iteratively. */
static rlyrt_adt *make_list(long n, rlyrt_object *x) {
  rlyrt_adt *list = rlyrt_adt_new(0, "Nil", 0);
  for (long i = 0; i < n; i++) {
    rlyrt_adt *node = rlyrt_adt_new(1, "Cons", 2);
    rlyrt_adt_set_take(node, 0, rlyrt_retain(x));
    rlyrt_adt_set_take(node, 1, &list->obj);
    list = node;
  }
  return list;
}

static void test_long_list(void) {
  rlyrt_tensor *x = scalar_i32(1);
  rlyrt_adt *list = make_list(1000000, &x->obj);
  CHECK_EQ(alloc_live, 1000002);
  CHECK_EQ(x->obj.refcount, 1000001);
  rlyrt_release(&list->obj); /* recursion would overflow the stack here */
  CHECK_EQ(alloc_live, 1);
  CHECK_EQ(x->obj.refcount, 1);
  /* A tree that is deep along its first field as well. */
  rlyrt_tuple *deep = rlyrt_tuple_new(2);
  for (int i = 0; i < 300000; i++) {
    rlyrt_tuple *up = rlyrt_tuple_new(2);
    rlyrt_tuple_set_take(up, 0, &deep->obj);
    rlyrt_tuple_set_take(up, 1, rlyrt_retain(&x->obj));
    deep = up;
  }
  rlyrt_release(&deep->obj);
  rlyrt_release(&x->obj);
  CHECK_EQ(alloc_live, 0);
}

/* {==== Failing allocations ====} */

/* Builds one of each value; returns false (having freed everything) when
** an allocation failed, checking that the failure was reported cleanly. */
static bool build_values(void) {
  int64_t shape[2] = {3, 4};
  rlyrt_tensor *t = NULL;
  rlyrt_tuple *tu = NULL;
  rlyrt_adt *cons = NULL, *nil = NULL;
  rlyrt_closure *c = NULL;
  rlyrt_ref *r = NULL;
  bool ok = false;
  rlyrt_clear_error();
  if (!(t = rlyrt_tensor_new(DT_F32, 2, shape, true))) goto fail;
  if (!(tu = rlyrt_tuple_new(2))) goto fail;
  rlyrt_tuple_set_take(tu, 0, rlyrt_retain(&t->obj));
  if (!(nil = rlyrt_adt_new(0, "Nil", 0))) goto fail;
  if (!(cons = rlyrt_adt_new(1, "Cons", 2))) goto fail;
  rlyrt_adt_set_take(cons, 0, rlyrt_retain(&t->obj));
  rlyrt_adt_set_take(cons, 1, &nil->obj);
  nil = NULL;
  if (!(c = rlyrt_closure_new(NULL, 1))) goto fail;
  rlyrt_closure_set_take(c, 0, &cons->obj);
  cons = NULL;
  /* On failure the ref releases what it was given. */
  r = rlyrt_ref_new_take(&c->obj);
  c = NULL;
  if (!r) goto fail;
  DLTensor dl = t->dl;
  rlyrt_tensor *copy = rlyrt_tensor_copy_dl(&dl);
  if (!copy) goto fail;
  rlyrt_tuple_set_take(tu, 1, &copy->obj);
  ok = true;
fail:
  if (!ok) CHECK(strstr(rlyrt_last_error(), "out of memory") != NULL);
  rlyrt_release((rlyrt_object *)t);
  rlyrt_release((rlyrt_object *)tu);
  rlyrt_release((rlyrt_object *)nil);
  rlyrt_release((rlyrt_object *)cons);
  rlyrt_release((rlyrt_object *)c);
  rlyrt_release((rlyrt_object *)r);
  return ok;
}

static bool npy_calls(void) {
  size_t n;
  unsigned char *buf = read_file(path_in(data_dir, "fortran_float32.npy"), &n);
  rlyrt_tensor *t = NULL;
  bool ok = true;
  rlyrt_status st = rlyrt_npy_parse(buf, n, "f.npy", &t);
  if (st != RLYRT_OK) {
    CHECK_EQ(st, RLYRT_E_NOMEM);
    CHECK(t == NULL);
    CHECK(strncmp(rlyrt_last_error(), "f.npy: out of memory", 20) == 0);
    ok = false;
  }
  rlyrt_release((rlyrt_object *)t);
  free(buf);
  static const char *const files[] = {"fortran_int16.npy", "dt_float64.npy", "be_int32.npy"};
  for (int k = 0; k < 3; k++) {
    t = NULL;
    st = rlyrt_npy_load(path_in(data_dir, files[k]), &t);
    if (st != RLYRT_OK) {
      CHECK_EQ(st, RLYRT_E_NOMEM);
      CHECK(t == NULL);
      ok = false;
    } else {
      /* Saving allocates nothing, so it never fails for lack of memory. */
      CHECK_EQ(rlyrt_npy_save(path_in(tmp_dir, "fault.npy"), t), RLYRT_OK);
    }
    rlyrt_release((rlyrt_object *)t);
  }
  return ok;
}

static rlyrt_adt *fault_list;

static bool print_deep(void) {
  char *s = print_str(&fault_list->obj);
  bool ok = alloc_calls <= alloc_fail_at; /* the failing call was not reached */
  /* Complete, or cut short with "..." at the depth it could reach. */
  size_t len = strlen(s);
  CHECK(len > 3 && strncmp(s, "Cons(1, ", 8) == 0 && s[len - 1] == ')');
  CHECK(strstr(s, ok ? "Nil" : "...") != NULL);
  free(s);
  return ok;
}

/* Runs fn with the Nth allocation failing, for N = 0, 1, ... until fn
** completes; after every run nothing may be left allocated. */
static void with_failures(const char *what, bool (*fn)(void)) {
  long base = alloc_live;
  for (long n = 0;; n++) {
    alloc_calls = 0;
    alloc_fail_at = n;
    bool done = fn();
    bool reached = alloc_calls > n;
    alloc_fail_at = -1;
    if (alloc_live != base) {
      check_failures++;
      fprintf(stderr, "%s: %ld blocks leaked when allocation %ld failed\n", what, alloc_live - base, n);
      return;
    }
    if (!reached) {
      CHECK(done); /* no failure happened: it must have succeeded */
      break;
    }
    if (n > 100000) {
      CHECK(!"too many allocations");
      break;
    }
  }
  check_count++;
}

static void test_failing_allocator(void) {
  with_failures("values", build_values);
  with_failures("npy", npy_calls);
  rlyrt_tensor *x = scalar_i32(1);
  fault_list = make_list(5000, &x->obj); /* deep enough to grow the print stack */
  rlyrt_release(&x->obj);
  with_failures("print", print_deep);
  rlyrt_release(&fault_list->obj);
  remove(path_in(tmp_dir, "fault.npy"));
  CHECK_EQ(alloc_live, 0);
  /* rlyrt_alloc itself. */
  alloc_calls = 0;
  alloc_fail_at = 0;
  CHECK(rlyrt_alloc(100, 16) == NULL);
  alloc_fail_at = -1;
  CHECK_STR(rlyrt_last_error(), "out of memory (requesting 100 bytes)");
}

/* {==== Thread-local errors ====} */

static pthread_barrier_t barrier;

static void *error_thread(void *arg) {
  bool *ok = arg;
  bool fresh = rlyrt_last_error()[0] == 0;
  rlyrt_error(RLYRT_E_IO, "thread %d", 2);
  pthread_barrier_wait(&barrier); /* main sets its own message */
  pthread_barrier_wait(&barrier);
  *ok = fresh && strcmp(rlyrt_last_error(), "thread 2") == 0;
  return NULL;
}

static void test_thread_errors(void) {
  bool ok = false;
  pthread_t th;
  rlyrt_error(RLYRT_E_ARG, "main before");
  CHECK_EQ(pthread_barrier_init(&barrier, NULL, 2), 0);
  CHECK_EQ(pthread_create(&th, NULL, error_thread, &ok), 0);
  pthread_barrier_wait(&barrier);
  CHECK_STR(rlyrt_last_error(), "main before");
  CHECK_EQ(rlyrt_error(RLYRT_E_RUNTIME, "main %s", "after"), RLYRT_E_RUNTIME);
  pthread_barrier_wait(&barrier);
  pthread_join(th, NULL);
  pthread_barrier_destroy(&barrier);
  CHECK(ok);
  CHECK_STR(rlyrt_last_error(), "main after");
  rlyrt_clear_error();
  CHECK_STR(rlyrt_last_error(), "");
  CHECK_STR(rlyrt_status_name(RLYRT_E_IO), "RLYRT_E_IO");
  CHECK_STR(rlyrt_status_name(RLYRT_OK), "RLYRT_OK");
}

/* {==== Scratch ====}
** With the default allocator, a freed scratch block of 64 KiB or more is
** kept and handed to the next request it can hold (the smallest kept that
** can); at most RLYRT_SCRATCH_KEPT are kept, the largest. With another
** allocator every block goes back on free. */

static bool scratch_filled(const unsigned char *p, size_t n, unsigned char v) {
  for (size_t i = 0; i < n; i += 4096)
    if (p[i] != v) return false;
  return p[n - 1] == v;
}

typedef struct {
  unsigned char tag;
  bool ok;
} ScratchRun;

/* Blocks of several sizes, each filled with the thread's tag and checked
** before it is freed: no block is handed to two threads at once. */
static void *scratch_thread(void *arg) {
  ScratchRun *r = arg;
  r->ok = true;
  for (int i = 0; i < 400; i++) {
    size_t n = ((size_t)(i % 5) + 1) * (48 << 10);
    unsigned char *a = rlyrt_scratch_alloc(n), *b = rlyrt_scratch_alloc(n / 2 + 1);
    if (!a || !b || (uintptr_t)a % 64 || (uintptr_t)b % 64) {
      r->ok = false;
      break;
    }
    memset(a, r->tag, n);
    memset(b, r->tag ^ 0xff, n / 2 + 1);
    if (!scratch_filled(a, n, r->tag) || !scratch_filled(b, n / 2 + 1, r->tag ^ 0xff)) r->ok = false;
    rlyrt_scratch_free(b);
    rlyrt_scratch_free(a);
  }
  return NULL;
}

static void test_scratch(void) {
  rlyrt_set_allocator(NULL);
  CHECK(rlyrt_allocator_is_default());
  enum { MB = 1 << 20, KB = 1 << 10 };
  unsigned char *a = rlyrt_scratch_alloc(MB);
  CHECK(a != NULL && (uintptr_t)a % 64 == 0);
  memset(a, 7, MB);
  rlyrt_scratch_free(a);
  unsigned char *b = rlyrt_scratch_alloc(300 * KB);
  CHECK(b == a); /* kept, and large enough */
  unsigned char *c = rlyrt_scratch_alloc(2 * MB);
  CHECK(c != NULL && c != a);
  rlyrt_scratch_free(c);
  rlyrt_scratch_free(b);
  CHECK(rlyrt_scratch_alloc(MB) == a); /* the smaller of the two that can */
  CHECK(rlyrt_scratch_alloc(MB) == c);
  rlyrt_scratch_free(a);
  rlyrt_scratch_free(c);
  rlyrt_scratch_trim();
  /* more blocks than are kept: the largest RLYRT_SCRATCH_KEPT stay */
  enum { N = RLYRT_SCRATCH_KEPT + 3 };
  unsigned char *blk[N], *got[N];
  for (int i = 0; i < N; i++) blk[i] = rlyrt_scratch_alloc((size_t)(i + 1) * 64 * KB);
  for (int i = N - 1; i >= 0; i--) rlyrt_scratch_free(blk[i]); /* the largest first: the small ones are dropped */
  int kept = 0;
  for (int i = 0; i < RLYRT_SCRATCH_KEPT; i++) {
    got[i] = rlyrt_scratch_alloc(64 * KB);
    for (int k = N - RLYRT_SCRATCH_KEPT; k < N; k++)
      if (got[i] == blk[k]) kept++;
  }
  CHECK_EQ(kept, RLYRT_SCRATCH_KEPT);
  for (int i = 0; i < RLYRT_SCRATCH_KEPT; i++) rlyrt_scratch_free(got[i]);
  rlyrt_scratch_trim();
  /* threads sharing the kept blocks */
  pthread_t th[4];
  ScratchRun run[4];
  for (int t = 0; t < 4; t++) {
    run[t].tag = (unsigned char)(0x11 * (t + 1));
    CHECK_EQ(pthread_create(&th[t], NULL, scratch_thread, &run[t]), 0);
  }
  for (int t = 0; t < 4; t++) {
    pthread_join(th[t], NULL);
    CHECK(run[t].ok);
  }
  rlyrt_scratch_trim();
  rlyrt_set_allocator(&counting);
  CHECK(!rlyrt_allocator_is_default());
  /* another allocator: nothing is kept, and a failure is RLYRT_E_NOMEM */
  long live = alloc_live;
  unsigned char *p = rlyrt_scratch_alloc(MB);
  CHECK(p != NULL && (uintptr_t)p % 64 == 0);
  CHECK_EQ(alloc_live, live + 1);
  rlyrt_scratch_free(p);
  CHECK_EQ(alloc_live, live);
  alloc_fail_at = alloc_calls;
  CHECK(rlyrt_scratch_alloc(MB) == NULL);
  alloc_fail_at = -1;
  CHECK(strstr(rlyrt_last_error(), "out of memory") != NULL);
  rlyrt_clear_error();
  rlyrt_scratch_free(NULL);
}

/* {==== float16 ====} */

static void test_half(void) {
  /* Every finite half converts to float and back unchanged, and its value
  ** is what the bit pattern says. */
  long bad = 0, badval = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 31) continue;
    float f = rlyrt_half_to_float((uint16_t)h);
    double want = e ? ldexp(1024 + m, (int)e - 25) : ldexp(m, -24);
    if (h & 0x8000) want = -want;
    if ((double)f != want || (signbit(f) != 0) != ((h & 0x8000) != 0)) badval++;
    if (rlyrt_float_to_half(f) != h) bad++;
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(badval, 0);
  /* Rounding: halfway between two halves goes to the even one; just above
  ** goes up. */
  long badround = 0;
  for (uint32_t h = 0; h < 0x7bff; h++) {
    float lo = rlyrt_half_to_float((uint16_t)h), hi = rlyrt_half_to_float((uint16_t)(h + 1));
    float mid = (lo + hi) / 2;
    uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
    if (rlyrt_float_to_half(mid) != even) badround++;
    if (rlyrt_float_to_half(nextafterf(mid, INFINITY)) != h + 1) badround++;
    if (rlyrt_float_to_half(nextafterf(mid, 0)) != h) badround++;
    if (rlyrt_float_to_half(-mid) != (even | 0x8000)) badround++;
  }
  CHECK_EQ(badround, 0);
  CHECK_EQ(rlyrt_float_to_half(1.0f), 0x3c00);
  CHECK_EQ(rlyrt_float_to_half(-2.0f), 0xc000);
  CHECK_EQ(rlyrt_float_to_half(65504.0f), 0x7bff);
  CHECK_EQ(rlyrt_float_to_half(65519.0f), 0x7bff);
  CHECK_EQ(rlyrt_float_to_half(65520.0f), 0x7c00); /* rounds to infinity */
  CHECK_EQ(rlyrt_float_to_half(1e10f), 0x7c00);
  CHECK_EQ(rlyrt_float_to_half(-INFINITY), 0xfc00);
  CHECK_EQ(rlyrt_float_to_half(0x1p-25f), 0x0000); /* a tie, to even */
  CHECK_EQ(rlyrt_float_to_half(0x1.8p-25f), 0x0001);
  CHECK_EQ(rlyrt_float_to_half(1e-10f), 0x0000);
  CHECK_EQ(rlyrt_float_to_half(-0.0f), 0x8000);
  uint16_t qnan = rlyrt_float_to_half(NAN);
  CHECK(((qnan >> 10) & 0x1f) == 31 && (qnan & 0x3ff) != 0);
  CHECK(isnan(rlyrt_half_to_float(0x7e00)));
  CHECK(isinf(rlyrt_half_to_float(0x7c00)) && rlyrt_half_to_float(0xfc00) < 0);
}

/* {==== .npy ====} */

static void test_npy_fixtures(void) {
  char file[64];
  for (int k = 0; k < NDTYPES; k++) {
    rlyrt_tensor *le = NULL, *be = NULL;
    snprintf(file, sizeof file, "dt_%s.npy", DTYPES[k].name);
    const char *path = path_in(data_dir, file);
    rlyrt_status st = rlyrt_npy_load(path, &le);
    CHECK_EQ(st, RLYRT_OK);
    if (st) {
      fprintf(stderr, "  %s\n", rlyrt_last_error());
      continue;
    }
    if (!has_fixture_values(le, k)) {
      check_failures++;
      fprintf(stderr, "%s: unexpected values\n", path);
    }
    /* Saving gives back NumPy's bytes exactly. */
    size_t n1, n2;
    CHECK_EQ(rlyrt_npy_save(path_in(tmp_dir, "out.npy"), le), RLYRT_OK);
    unsigned char *a = read_file(path, &n1), *b = read_file(path_in(tmp_dir, "out.npy"), &n2);
    if (!(a && b && n1 == n2 && memcmp(a, b, n1) == 0)) {
      check_failures++;
      fprintf(stderr, "%s: saved bytes differ from NumPy's\n", file);
    }
    /* Parsing the buffer gives the same tensor. */
    rlyrt_tensor *p = NULL;
    CHECK_EQ(rlyrt_npy_parse(a, n1, file, &p), RLYRT_OK);
    CHECK(same_tensor(p, le));
    rlyrt_release((rlyrt_object *)p);
    free(a);
    free(b);
    if (DTYPES[k].bytes > 1) {
      snprintf(file, sizeof file, "be_%s.npy", DTYPES[k].name);
      CHECK_EQ(rlyrt_npy_load(path_in(data_dir, file), &be), RLYRT_OK);
      if (!same_tensor(le, be)) {
        check_failures++;
        fprintf(stderr, "%s: differs from the little-endian file\n", file);
      }
      rlyrt_release((rlyrt_object *)be);
    }
    rlyrt_release(&le->obj);
  }
  /* Fortran order: arange(24).reshape(2, 3, 4) in C order after loading. */
  static const char *const fortran[] = {"fortran_float32.npy", "fortran_int16.npy", "fortran_uint8.npy",
                                        "fortran_float64.npy", "fortran_bool.npy"};
  for (int k = 0; k < 5; k++) {
    rlyrt_tensor *t = NULL;
    CHECK_EQ(rlyrt_npy_load(path_in(data_dir, fortran[k]), &t), RLYRT_OK);
    if (!t) continue;
    CHECK(t->dl.ndim == 3 && t->dl.shape[0] == 2 && t->dl.shape[1] == 3 && t->dl.shape[2] == 4);
    bool ok = true;
    for (int i = 0; i < 24; i++) ok &= rlyrt_get_i64(t, i) == (k == 4 ? i % 3 == 0 : i);
    if (!ok) {
      check_failures++;
      fprintf(stderr, "%s: not transposed to C order\n", fortran[k]);
    }
    /* The buffer reader agrees. */
    size_t n;
    unsigned char *buf = read_file(path_in(data_dir, fortran[k]), &n);
    rlyrt_tensor *p = NULL;
    CHECK_EQ(rlyrt_npy_parse(buf, n, fortran[k], &p), RLYRT_OK);
    CHECK(same_tensor(p, t));
    rlyrt_release((rlyrt_object *)p);
    free(buf);
    rlyrt_release(&t->obj);
  }
  /* Versions 2.0 and 3.0. */
  for (int v = 2; v <= 3; v++) {
    rlyrt_tensor *t = NULL;
    snprintf(file, sizeof file, "v%d_float32.npy", v);
    CHECK_EQ(rlyrt_npy_load(path_in(data_dir, file), &t), RLYRT_OK);
    CHECK(t && has_fixture_values(t, 10));
    rlyrt_release((rlyrt_object *)t);
  }
  /* 0-d, zero-size and 1-d. */
  rlyrt_tensor *t = NULL;
  CHECK_EQ(rlyrt_npy_load(path_in(data_dir, "scalar_float64.npy"), &t), RLYRT_OK);
  CHECK(t && t->dl.ndim == 0 && rlyrt_dtype_eq(t->dl.dtype, DT_F64) && rlyrt_get_f64(t, 0) == 2.5);
  rlyrt_release((rlyrt_object *)t);
  CHECK_EQ(rlyrt_npy_load(path_in(data_dir, "empty_float32.npy"), &t), RLYRT_OK);
  CHECK(t && t->dl.ndim == 1 && t->dl.shape[0] == 0);
  rlyrt_release((rlyrt_object *)t);
  CHECK_EQ(rlyrt_npy_load(path_in(data_dir, "empty_int64_2x0x3.npy"), &t), RLYRT_OK);
  CHECK(t && t->dl.ndim == 3 && t->dl.shape[0] == 2 && t->dl.shape[1] == 0 && t->dl.shape[2] == 3 &&
        rlyrt_dtype_eq(t->dl.dtype, DT_I64));
  rlyrt_release((rlyrt_object *)t);
  CHECK_EQ(rlyrt_npy_load(path_in(data_dir, "vec_int32.npy"), &t), RLYRT_OK);
  CHECK(t && t->dl.ndim == 1 && t->dl.shape[0] == 5 && rlyrt_get_i64(t, 4) == 50);
  rlyrt_release((rlyrt_object *)t);
  remove(path_in(tmp_dir, "out.npy"));
  CHECK_EQ(alloc_live, 0);
}

static void test_npy_round_trip(void) {
  static const int64_t shapes[][3] = {{0}, {1}, {7}, {2, 3}, {0, 4}, {3, 0, 2}, {2, 2, 2}};
  static const int ndims[] = {0, 1, 1, 2, 2, 3, 3};
  const char *path = path_in(tmp_dir, "rt.npy");
  for (int k = 0; k < NDTYPES; k++) {
    for (size_t s = 0; s < sizeof ndims / sizeof ndims[0]; s++) {
      rlyrt_tensor *t = rlyrt_tensor_new(DTYPES[k].dt, ndims[s], shapes[s], false), *back = NULL;
      /* Bytes that exercise every bit (bools: 0/1 only). */
      unsigned char *d = t->dl.data;
      for (size_t i = 0; i < rlyrt_tensor_nbytes(t); i++) d[i] = (unsigned char)(i * 37 + 11);
      if (DTYPES[k].dt.bits == 1)
        for (size_t i = 0; i < rlyrt_tensor_nbytes(t); i++) d[i] &= 1;
      CHECK_EQ(rlyrt_npy_save(path, t), RLYRT_OK);
      CHECK_EQ(rlyrt_npy_load(path, &back), RLYRT_OK);
      if (!same_tensor(t, back)) {
        check_failures++;
        fprintf(stderr, "round trip of %s with rank %d failed\n", DTYPES[k].name, ndims[s]);
      }
      /* The data starts at a multiple of 64. */
      size_t n;
      unsigned char *buf = read_file(path, &n);
      CHECK_EQ((n - rlyrt_tensor_nbytes(t)) % 64, 0);
      CHECK(buf && buf[6] == 1 && buf[7] == 0);
      free(buf);
      rlyrt_release((rlyrt_object *)t);
      rlyrt_release((rlyrt_object *)back);
    }
  }
  /* A bool tensor holding 2 is saved (and loaded) as True. */
  int64_t two = 2;
  rlyrt_tensor *b = rlyrt_tensor_new(DT_BOOL, 1, &two, false), *back = NULL;
  ((unsigned char *)b->dl.data)[0] = 2;
  ((unsigned char *)b->dl.data)[1] = 0;
  CHECK_EQ(rlyrt_npy_save(path, b), RLYRT_OK);
  CHECK_EQ(rlyrt_npy_load(path, &back), RLYRT_OK);
  CHECK(back && ((unsigned char *)back->dl.data)[0] == 1 && ((unsigned char *)back->dl.data)[1] == 0);
  rlyrt_release((rlyrt_object *)b);
  rlyrt_release((rlyrt_object *)back);
  remove(path);

  /* Saving errors. */
  rlyrt_tensor *t = scalar_i32(1);
  CHECK_EQ(rlyrt_npy_save(path_in(tmp_dir, "no/such/dir.npy"), t), RLYRT_E_IO);
  CHECK(strstr(rlyrt_last_error(), "cannot open for writing") != NULL);
  rlyrt_tuple *tu = rlyrt_tuple_new(0);
  CHECK_EQ(rlyrt_npy_save(path, (const rlyrt_tensor *)tu), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_npy_save(path, NULL), RLYRT_E_ARG);
  rlyrt_release(&tu->obj);
  rlyrt_release(&t->obj);
  CHECK_EQ(alloc_live, 0);
}

/* Both readers fail on these bytes with this message (after "name: "). */
static void check_bad_npy(const unsigned char *buf, size_t n, const char *want, int line) {
  const char *path = path_in(tmp_dir, "bad.npy");
  char expect[600], expect_file[600];
  snprintf(expect, sizeof expect, "bad.npy: %s", want);
  snprintf(expect_file, sizeof expect_file, "%s: %s", path, want);
  rlyrt_tensor *t = NOT_NULL; /* must be reset to NULL */
  rlyrt_status st = rlyrt_npy_parse(buf, n, "bad.npy", &t);
  check_count++;
  if (st != RLYRT_E_IO || t != NULL || strcmp(rlyrt_last_error(), expect) != 0) {
    check_failures++;
    fprintf(stderr, "%s:%d: parse gave %s \"%s\", expected \"%s\"\n", __FILE__, line, rlyrt_status_name(st),
            rlyrt_last_error(), expect);
  }
  rlyrt_release((rlyrt_object *)(st ? NULL : t));
  write_file(path, buf, n);
  t = NOT_NULL;
  st = rlyrt_npy_load(path, &t);
  check_count++;
  if (st != RLYRT_E_IO || t != NULL || strcmp(rlyrt_last_error(), expect_file) != 0) {
    check_failures++;
    fprintf(stderr, "%s:%d: load gave %s \"%s\", expected \"%s\"\n", __FILE__, line, rlyrt_status_name(st),
            rlyrt_last_error(), expect_file);
  }
  rlyrt_release((rlyrt_object *)(st ? NULL : t));
  remove(path);
}
#define CHECK_BAD_NPY(buf, n, want) check_bad_npy(buf, n, want, __LINE__)

/* A handcrafted file must load, with this dtype and shape. */
static void check_good_npy(const unsigned char *buf, size_t n, DLDataType dt, int32_t ndim, const int64_t *shape,
                           int line) {
  rlyrt_tensor *t = NULL;
  rlyrt_status st = rlyrt_npy_parse(buf, n, "good.npy", &t);
  bool ok = st == RLYRT_OK && rlyrt_dtype_eq(t->dl.dtype, dt) && t->dl.ndim == ndim;
  for (int32_t i = 0; ok && i < ndim; i++) ok = t->dl.shape[i] == shape[i];
  check_count++;
  if (!ok) {
    check_failures++;
    fprintf(stderr, "%s:%d: %s %s\n", __FILE__, line, rlyrt_status_name(st), st ? rlyrt_last_error() : "wrong dtype or shape");
  }
  rlyrt_release((rlyrt_object *)t);
}
#define CHECK_GOOD_NPY(buf, n, dt, ndim, shape) check_good_npy(buf, n, dt, ndim, shape, __LINE__)

static void test_npy_truncated(void) {
  static const char *const files[] = {"dt_float32.npy", "v2_float32.npy", "fortran_int16.npy", "scalar_float64.npy",
                                      "dt_bool.npy"};
  const char *path = path_in(tmp_dir, "cut.npy");
  for (int k = 0; k < 5; k++) {
    size_t n;
    unsigned char *buf = read_file(path_in(data_dir, files[k]), &n);
    CHECK(buf != NULL);
    if (!buf) continue;
    long bad = 0;
    for (size_t len = 0; len < n; len++) {
      rlyrt_tensor *t = NULL;
      rlyrt_status st = rlyrt_npy_parse(buf, len, "cut.npy", &t);
      char msg[600];
      snprintf(msg, sizeof msg, "%s", rlyrt_last_error());
      if (st != RLYRT_E_IO || t || strncmp(msg, "cut.npy: truncated: ", 20) != 0) {
        if (bad++ < 3) fprintf(stderr, "%s cut to %zu bytes: %s\n", files[k], len, msg);
      }
      rlyrt_release((rlyrt_object *)t);
      /* The file reader says the same. */
      write_file(path, buf, len);
      t = NULL;
      st = rlyrt_npy_load(path, &t);
      if (st != RLYRT_E_IO || t || strcmp(rlyrt_last_error() + strlen(path), msg + strlen("cut.npy")) != 0) {
        if (bad++ < 3) fprintf(stderr, "%s cut to %zu bytes: load said %s\n", files[k], len, rlyrt_last_error());
      }
      rlyrt_release((rlyrt_object *)t);
    }
    CHECK_EQ(bad, 0);
    free(buf);
  }
  remove(path);
  /* The exact messages. */
  size_t n;
  unsigned char *buf = read_file(path_in(data_dir, "dt_float32.npy"), &n);
  CHECK_EQ(n, 128 + 24);
  CHECK_BAD_NPY(buf, 128 + 20, "truncated: expected 24 data bytes, found 20");
  CHECK_BAD_NPY(buf, 100, "truncated: expected a 118-byte header, found 90 bytes");
  CHECK_BAD_NPY(buf, 9, "truncated: the file ends inside the .npy preamble");
  CHECK_BAD_NPY(buf, 3, "truncated: the file ends inside the .npy preamble");
  CHECK_BAD_NPY(buf, 0, "truncated: the file ends inside the .npy preamble");
  /* Longer than the header says: the header lies. */
  unsigned char *longer = malloc(n + 4);
  memcpy(longer, buf, n);
  memset(longer + n, 0, 4);
  CHECK_BAD_NPY(longer, n + 4, "expected 24 data bytes, found 28 (the header does not match the data)");
  free(longer);
  free(buf);
}

/* {==== Headers that claim more than the input holds ====} */

/* What feed_pipe writes into the FIFO at path; with interrupt, it stops
** halfway and sends the reading thread signals while it waits. */
typedef struct pipe_feed {
  const char *path;
  const unsigned char *buf;
  size_t n;
  bool interrupt;
  pthread_t reader;
} pipe_feed;

static void on_signal(int sig) { (void)sig; }

static void *feed_pipe(void *arg) {
  const pipe_feed *pf = arg;
  FILE *f = fopen(pf->path, "wb"); /* waits for the reader */
  if (!f) return NULL;
  /* Writes fail harmlessly when the reader stopped early. */
  size_t half = pf->interrupt ? pf->n / 2 : pf->n;
  fwrite(pf->buf, 1, half, f);
  if (pf->interrupt) {
    fflush(f);
    for (int i = 0; i < 5; i++) {
      nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
      pthread_kill(pf->reader, SIGUSR1);
    }
    fwrite(pf->buf + half, 1, pf->n - half, f);
  }
  fclose(f);
  return NULL;
}

/* rlyrt_npy_load on bytes that arrive through a pipe (a FIFO at path fed
** by a thread), the way `relayc run --input x=/dev/stdin` reads them; with
** interrupt, the reads are interrupted by a signal whose handler does not
** ask for SA_RESTART (a program with a timer, or libFuzzer's). */
static rlyrt_status load_from_pipe(const char *path, const unsigned char *buf, size_t n, bool interrupt,
                                   rlyrt_tensor **out) {
  *out = NULL;
  remove(path);
  if (mkfifo(path, 0600) != 0) {
    perror(path);
    return RLYRT_E_INTERNAL;
  }
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, &old);
  pipe_feed pf = {path, buf, n, interrupt, pthread_self()};
  pthread_t th;
  if (pthread_create(&th, NULL, feed_pipe, &pf) != 0) {
    remove(path);
    return RLYRT_E_INTERNAL;
  }
  rlyrt_status st = rlyrt_npy_load(path, out);
  pthread_join(th, NULL);
  sigaction(SIGUSR1, &old, NULL);
  remove(path);
  return st;
}

/* A version 1.0 file: header text padded to 118 bytes, then ndata zero bytes. */
static unsigned char *npy_with(const char *dict, size_t ndata, size_t *n) {
  size_t len = strlen(dict);
  *n = 128 + ndata;
  unsigned char *buf = calloc(1, *n);
  memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
  memset(buf + 10, ' ', 118);
  memcpy(buf + 10, dict, len);
  buf[127] = '\n';
  return buf;
}

/* A header may claim any size; until the data is there to back it, no
** reader allocates it (from a buffer, a file or a pipe), and each says the
** data is short. fuzz_npy found the file reader allocating the claimed
** size first (fuzz/regressions/npy/huge-shape-short-data.npy). */
static void test_npy_claims(void) {
  signal(SIGPIPE, SIG_IGN); /* the feeding thread may outlive a failed read */
  char path[512], fifo[512];
  snprintf(path, sizeof path, "%s/claim.npy", tmp_dir);
  snprintf(fifo, sizeof fifo, "%s/pipe.npy", tmp_dir);
  static const struct {
    const char *dict;
    const char *found;  /* the message after "<name>: " */
  } claims[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }",
       "truncated: expected 400000000000 data bytes, found 8"},
      {"{'descr': '<f8', 'fortran_order': True, 'shape': (5000, 5000), }",
       "truncated: expected 200000000 data bytes, found 8"},
      {"{'descr': '<i2', 'fortran_order': False, 'shape': (30000000,), }",
       "truncated: expected 60000000 data bytes, found 8"},
  };
  for (size_t k = 0; k < sizeof claims / sizeof claims[0]; k++) {
    size_t n;
    unsigned char *buf = npy_with(claims[k].dict, 8, &n);
    char want[600];
    rlyrt_tensor *t = NULL;
    alloc_largest = 0;
    CHECK_EQ(rlyrt_npy_parse(buf, n, "claim.npy", &t), RLYRT_E_IO);
    snprintf(want, sizeof want, "claim.npy: %s", claims[k].found);
    CHECK_STR(rlyrt_last_error(), want);
    CHECK(write_file(path, buf, n));
    CHECK_EQ(rlyrt_npy_load(path, &t), RLYRT_E_IO);
    snprintf(want, sizeof want, "%s: %s", path, claims[k].found);
    CHECK_STR(rlyrt_last_error(), want);
    snprintf(want, sizeof want, "%s: %s", fifo, claims[k].found);
    CHECK_EQ(load_from_pipe(fifo, buf, n, false, &t), RLYRT_E_IO);
    CHECK_STR(rlyrt_last_error(), want);
    CHECK_EQ(load_from_pipe(fifo, buf, n, true, &t), RLYRT_E_IO);
    CHECK_STR(rlyrt_last_error(), want);
    CHECK(t == NULL);
    CHECK(alloc_largest <= 1 << 16); /* the pipe reader's first chunk */
    free(buf);
  }
  remove(path);

  /* Honest files through a pipe: larger than the first chunk the pipe
  ** reader takes (with signals interrupting the reads: fuzz_npy found them
  ** reported as read errors), Fortran order, and one byte too many. */
  int64_t len = 100000;
  rlyrt_tensor *big = rlyrt_tensor_new(DT_F32, 1, &len, false), *t = NULL, *p = NULL;
  for (int64_t i = 0; i < len; i++) rlyrt_set_f64(big, i, (double)i);
  CHECK_EQ(rlyrt_npy_save(path, big), RLYRT_OK);
  size_t n;
  unsigned char *buf = read_file(path, &n);
  CHECK_EQ(load_from_pipe(fifo, buf, n, false, &t), RLYRT_OK);
  CHECK(t && same_tensor(t, big));
  rlyrt_release((rlyrt_object *)t);
  rlyrt_status st = load_from_pipe(fifo, buf, n, true, &t);
  CHECK_EQ(st, RLYRT_OK);
  if (st) fprintf(stderr, "  %s\n", rlyrt_last_error());
  CHECK(t && same_tensor(t, big));
  rlyrt_release((rlyrt_object *)t);
  buf = realloc(buf, n + 1);
  buf[n] = 0;
  CHECK_EQ(load_from_pipe(fifo, buf, n + 1, false, &t), RLYRT_E_IO);
  CHECK(strstr(rlyrt_last_error(), "expected 400000 data bytes, found 400001 (the header does not match") != NULL);
  free(buf);
  rlyrt_release(&big->obj);
  buf = read_file(path_in(data_dir, "fortran_int16.npy"), &n);
  CHECK_EQ(load_from_pipe(fifo, buf, n, true, &t), RLYRT_OK);
  CHECK_EQ(rlyrt_npy_parse(buf, n, "f.npy", &p), RLYRT_OK);
  CHECK(t && p && same_tensor(t, p));
  rlyrt_release((rlyrt_object *)t);
  rlyrt_release((rlyrt_object *)p);
  free(buf);
  remove(path);
  CHECK_EQ(alloc_live, 0);
}

static void test_npy_headers(void) {
  unsigned char buf[70000];
  unsigned char data[64];
  size_t n;
  for (int i = 0; i < 64; i++) data[i] = (unsigned char)i;
  const int64_t s23[2] = {2, 3}, s5[1] = {5}, s0[1] = {0};

  /* Accepted spellings. */
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 24);
  CHECK_GOOD_NPY(buf, n, DT_F32, 2, s23);
  n = make_npy(buf, 1, 0, "{'shape':(2,3),'fortran_order':False,'descr':'<f4'}", 16, data, 24); /* any order, 16-aligned */
  CHECK_GOOD_NPY(buf, n, DT_F32, 2, s23);
  n = make_npy(buf, 1, 0, "{ \"descr\" : \"<i2\" ,\t\"fortran_order\" : True , \"shape\" : ( 2 ,3 , ) , }", 0, data, 12);
  CHECK_GOOD_NPY(buf, n, DT_I16, 2, s23);
  n = make_npy(buf, 1, 0, "{'descr': '=u4', 'fortran_order': False, 'shape': (5,)}\n", 0, data, 20);
  CHECK_GOOD_NPY(buf, n, DT_U32, 1, s5);
  n = make_npy(buf, 1, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (5L,), }", 64, data, 5);
  CHECK_GOOD_NPY(buf, n, DT_U8, 1, s5);
  n = make_npy(buf, 1, 0, "{'descr': 'f8', 'fortran_order': False, 'shape': (0,), }", 64, data, 0);
  CHECK_GOOD_NPY(buf, n, DT_F64, 1, s0);
  n = make_npy(buf, 1, 0, "{'descr': '?', 'fortran_order': False, 'shape': (), }", 64, data, 1);
  CHECK_GOOD_NPY(buf, n, DT_BOOL, 0, s0);
  n = make_npy(buf, 1, 0, "{u'descr': u'>f2', 'fortran_order': False, 'shape': (), }", 64, data, 2);
  CHECK_GOOD_NPY(buf, n, DT_F16, 0, s0);
  n = make_npy(buf, 2, 0, "{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }", 64, data, 40);
  CHECK_GOOD_NPY(buf, n, DT_I64, 1, s5);
  n = make_npy(buf, 3, 0, "{'descr': '<i1', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 6);
  CHECK_GOOD_NPY(buf, n, DT_I8, 2, s23);
  /* A big-endian float32 and a Fortran-ordered int16 by hand. */
  unsigned char be[4] = {0x3f, 0xc0, 0, 0}; /* 1.5f */
  n = make_npy(buf, 1, 0, "{'descr': '>f4', 'fortran_order': False, 'shape': (), }", 64, be, 4);
  rlyrt_tensor *t = NULL;
  CHECK_EQ(rlyrt_npy_parse(buf, n, "be", &t), RLYRT_OK);
  CHECK(t && rlyrt_get_f64(t, 0) == 1.5);
  rlyrt_release((rlyrt_object *)t);
  int16_t fo[6] = {0, 3, 1, 4, 2, 5}; /* [[0 1 2] [3 4 5]] column by column */
  n = make_npy(buf, 1, 0, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }", 64, fo, 12);
  CHECK_EQ(rlyrt_npy_parse(buf, n, "fo", &t), RLYRT_OK);
  bool ok = t != NULL;
  for (int i = 0; ok && i < 6; i++) ok = rlyrt_get_i64(t, i) == i;
  CHECK(ok);
  rlyrt_release((rlyrt_object *)t);

  /* Rejected: magic and version. */
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 24);
  buf[1] = 'n';
  CHECK_BAD_NPY(buf, n, "not a .npy file (bad magic string)");
  CHECK_BAD_NPY((const unsigned char *)"PK\x03\x04", 4, "not a .npy file (bad magic string)");
  n = make_npy(buf, 4, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 24);
  CHECK_BAD_NPY(buf, n, "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
  n = make_npy(buf, 1, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 24);
  CHECK_BAD_NPY(buf, n, "unsupported .npy format version 1.1 (supported: 1.0, 2.0, 3.0)");
  n = make_npy(buf, 0, 0, "{}", 64, data, 0);
  CHECK_BAD_NPY(buf, n, "unsupported .npy format version 0.0 (supported: 1.0, 2.0, 3.0)");
  n = make_npy(buf, 2, 0, "{}", 64, data, 0);
  buf[11] = 0x7f; /* a 2 GB header */
  CHECK_BAD_NPY(buf, n, "header too long (2130706484 bytes; at most 1048576 are accepted)");

  /* Rejected: the dict. */
  static const struct {
    const char *header;
    const char *message;
  } bad[] = {
      {"['descr', '<f4']", "bad header: not a dict (found '['descr', '<')"},
      {"", "bad header: not a dict (found the end of the header)"},
      {"{'descr': '<f4', 'fortran_order': False}", "bad header: missing key 'shape'"},
      {"{'descr': '<f4', 'shape': (2, 3)}", "bad header: missing key 'fortran_order'"},
      {"{'fortran_order': False, 'shape': (2, 3)}", "bad header: missing key 'descr'"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",
       "bad header: duplicate key 'descr'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}",
       "bad header: unexpected key 'extra'"},
      {"{'descr': '<f4' 'fortran_order': False, 'shape': (2, 3)}",
       "bad header: expected ',' or '}', found ''fortran_ord'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)", "bad header: expected ',' or '}', found the end of the header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} x", "bad header: expected the end of the header after '}', found 'x'"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3)}",
       "bad header: expected True or False for 'fortran_order', found '0, 'shape':'"},
      {"{'descr': '<f4', 'fortran_order': Falsehood, 'shape': (2, 3)}",
       "bad header: expected True or False for 'fortran_order', found 'Falsehood, ''"},
      {"{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '<f4, ' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr' '<f4', 'fortran_order': False, 'shape': (2, 3)}", "bad header: expected ':', found ''<f4', 'fort'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", "bad header: expected ',' or ')' in 'shape', found the end of the header"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': 'abc'}", "bad header: expected a tuple for 'shape', found ''abc'}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "bad header: expected a tuple for 'shape', found '[2, 3]}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3)}", "bad header: shape entry -3 is negative"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2.5, 3)}", "bad header: shape entry '2.5' is not an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, None)}", "bad header: shape entry 'None' is not an integer"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "bad header: expected ',' or ')' in 'shape', found '3)}'"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (5)}",
       "bad header: shape (5) is not a tuple (a 1-d shape is written (5,))"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "bad header: shape entry 99999999999999999999 is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
       "bad header: the array is too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,)}",
       "bad header: the array is too large"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
       "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
       "bad header: more than 64 dimensions"},
      {"{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '<c8' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '|O' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': '<U3', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '<U3' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': '<f16', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '<f16' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': '<i3', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '<i3' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': '', 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr '' (supported: bool, int8-64, uint8-64, float16-64, any byte order)"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3)}",
       "unsupported descr (structured dtypes are not supported)"},
      {"{'descr': 4, 'fortran_order': False, 'shape': (2, 3)}", "bad header: expected a string for 'descr', found '4, 'fortran_'"},
      {"{'descr': '<f4\\n', 'fortran_order': False, 'shape': (2, 3)}",
       "bad header: escape sequences in strings are not supported"},
      {"{'descr': '<f4", "bad header: unterminated string"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    n = make_npy(buf, 1, 0, bad[k].header, 64, data, 24);
    CHECK_BAD_NPY(buf, n, bad[k].message);
  }
  /* A NUL inside the header. */
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 64, data, 24);
  buf[10 + 60] = 0;
  CHECK_BAD_NPY(buf, n, "bad header: expected the end of the header after '}', found ''");
  /* Shape and data disagree. */
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", 64, data, 24);
  CHECK_BAD_NPY(buf, n, "truncated: expected 36 data bytes, found 24");
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 64, data, 24);
  CHECK_BAD_NPY(buf, n, "expected 4 data bytes, found 24 (the header does not match the data)");
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904), }", 64, data, 0);
  int64_t zero_huge[2] = {0, 4611686018427387904};
  CHECK_GOOD_NPY(buf, n, DT_F32, 2, zero_huge); /* empty, however large the other dimension */
  n = make_npy(buf, 1, 0, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", 64, data, 24);
  CHECK_BAD_NPY(buf, n, "bad header: the array is too large");

  /* Files that cannot be read. */
  t = NOT_NULL;
  CHECK_EQ(rlyrt_npy_load(path_in(tmp_dir, "missing.npy"), &t), RLYRT_E_IO);
  CHECK(t == NULL);
  CHECK(strstr(rlyrt_last_error(), "missing.npy: cannot open: ") != NULL);
  CHECK_EQ(rlyrt_npy_load(tmp_dir, &t), RLYRT_E_IO); /* a directory */
  CHECK(strstr(rlyrt_last_error(), "read error") != NULL);
  CHECK_EQ(rlyrt_npy_load(NULL, &t), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_npy_parse(NULL, 5, "x", &t), RLYRT_E_ARG);
  CHECK_EQ(alloc_live, 0);
}

/* {==== Printing ====} */

static void test_print_tensors(void) {
  int64_t s22[2] = {2, 2}, s3[1] = {3}, s2[1] = {2}, s1[1] = {1};
  rlyrt_tensor *t;
  t = tensor_of(DT_F64, 2, s22, (const double[]){1, 2, 3, 4});
  CHECK_PRINT(t, "[[1. 2.]\n [3. 4.]]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_I32, 1, s3, (const double[]){1, 2, 3});
  CHECK_PRINT(t, "[1 2 3]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_I64, 1, s3, (const double[]){-1, 100, 7});
  CHECK_PRINT(t, "[ -1 100   7]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_BOOL, 1, s2, (const double[]){1, 0});
  CHECK_PRINT(t, "[ True False]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_F32, 1, s3, (const double[]){0.1, 0.25, 1e-3});
  CHECK_PRINT(t, "[0.1   0.25  0.001]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_F64, 1, s2, (const double[]){1e10, 1.5e10});
  CHECK_PRINT(t, "[1.0e+10 1.5e+10]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_F64, 1, s3, (const double[]){NAN, 1, -INFINITY});
  CHECK_PRINT(t, "[ nan   1. -inf]");
  rlyrt_release(&t->obj);
  t = tensor_of(DT_F16, 1, s2, (const double[]){1.0 / 3, 2.0 / 3});
  CHECK_PRINT(t, "[0.3333 0.6665]");
  rlyrt_release(&t->obj);
  t = rlyrt_tensor_new(DT_U64, 1, s1, false);
  *(uint64_t *)t->dl.data = UINT64_MAX;
  CHECK_PRINT(t, "[18446744073709551615]");
  rlyrt_release(&t->obj);
  /* Scalars print as NumPy scalars. */
  static const struct {
    DLDataType dt;
    double v;
    const char *text;
  } scalars[] = {
      {{kDLFloat, 64, 1}, 1.5, "1.5"},     {{kDLFloat, 32, 1}, 2.0, "2.0"},   {{kDLFloat, 64, 1}, 1e16, "1e+16"},
      {{kDLFloat, 32, 1}, 1e-5, "1e-05"},   {{kDLFloat, 32, 1}, 0.1, "0.1"},   {{kDLFloat, 16, 1}, 0.1, "0.1"},
      {{kDLFloat, 64, 1}, -0.0, "-0.0"},    {{kDLFloat, 64, 1}, NAN, "nan"},   {{kDLFloat, 32, 1}, -INFINITY, "-inf"},
      {{kDLFloat, 64, 1}, 0.1 + 0.2, "0.30000000000000004"},                  {{kDLFloat, 64, 1}, 1.5e-7, "1.5e-07"},
      {{kDLUInt, 1, 1}, 1, "True"},         {{kDLUInt, 1, 1}, 0, "False"},     {{kDLInt, 8, 1}, -7, "-7"},
      {{kDLInt, 64, 1}, 123456789, "123456789"}, {{kDLFloat, 16, 1}, 0.015625, "0.01563"},
      {{kDLFloat, 32, 1}, 0x1p-126, "1.1754944e-38"}, {{kDLFloat, 16, 1}, 17056, "17060.0"},
  };
  for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) {
    t = tensor_of(scalars[k].dt, 0, NULL, &scalars[k].v);
    char *got = print_str(&t->obj);
    CHECK_STR(got, scalars[k].text);
    free(got);
    rlyrt_release(&t->obj);
  }
  /* Wrapping at 75 columns; eliding above 1000 elements. */
  int64_t s30[1] = {30}, s2000[1] = {2000}, s234[3] = {2, 3, 4}, s0[2] = {2, 0};
  t = rlyrt_tensor_new(DT_F64, 1, s30, false);
  for (int i = 0; i < 30; i++) rlyrt_set_f64(t, i, i);
  CHECK_PRINT(t, "[ 0.  1.  2.  3.  4.  5.  6.  7.  8.  9. 10. 11. 12. 13. 14. 15. 16. 17.\n"
                 " 18. 19. 20. 21. 22. 23. 24. 25. 26. 27. 28. 29.]");
  rlyrt_release(&t->obj);
  t = rlyrt_tensor_new(DT_I32, 1, s2000, false);
  for (int i = 0; i < 2000; i++) rlyrt_set_i64(t, i, i);
  CHECK_PRINT(t, "[   0    1    2 ... 1997 1998 1999]");
  rlyrt_release(&t->obj);
  t = rlyrt_tensor_new(DT_I16, 3, s234, false);
  for (int i = 0; i < 24; i++) rlyrt_set_i64(t, i, i);
  CHECK_PRINT(t, "[[[ 0  1  2  3]\n  [ 4  5  6  7]\n  [ 8  9 10 11]]\n\n [[12 13 14 15]\n  [16 17 18 19]\n  [20 21 22 23]]]");
  rlyrt_release(&t->obj);
  t = rlyrt_tensor_new(DT_F32, 2, s0, false);
  CHECK_PRINT(t, "[]");
  rlyrt_release(&t->obj);
  int64_t s71113[3] = {7, 11, 13};
  t = rlyrt_tensor_new(DT_F64, 3, s71113, false);
  for (int i = 0; i < 1001; i++) rlyrt_set_f64(t, i, i);
  char *big = print_str(&t->obj);
  CHECK(strncmp(big, "[[[   0.    1.    2. ...   10.   11.   12.]\n  [  13.   14.   15. ...   23.   24.   25.]\n", 86) == 0);
  CHECK(strstr(big, "\n  ...\n  [ 104.  105.  106. ...  114.  115.  116.]\n") != NULL);
  CHECK(strstr(big, "]]\n\n ...\n\n [[ 572.") != NULL);
  CHECK(strstr(big, "[ 988.  989.  990. ...  998.  999. 1000.]]]") != NULL);
  free(big);
  rlyrt_release(&t->obj);
  CHECK_EQ(alloc_live, 0);
}

static void test_print_values(void) {
  rlyrt_tensor *one = scalar_i32(1), *two = scalar_i32(2);
  int64_t s2[1] = {2};
  rlyrt_tensor *vec = tensor_of(DT_F32, 1, s2, (const double[]){0.5, 2});

  rlyrt_tuple *pair = rlyrt_tuple_new(2);
  rlyrt_tuple_set_take(pair, 0, rlyrt_retain(&one->obj));
  rlyrt_tuple_set_take(pair, 1, rlyrt_retain(&vec->obj));
  CHECK_PRINT(pair, "(1, [0.5 2. ])");
  rlyrt_tuple *single = rlyrt_tuple_new(1);
  rlyrt_tuple_set_take(single, 0, rlyrt_retain(&two->obj));
  CHECK_PRINT(single, "(2,)");
  rlyrt_tuple *unit = rlyrt_tuple_new(0);
  CHECK_PRINT(unit, "()");

  rlyrt_adt *nil = rlyrt_adt_new(0, "Nil", 0);
  CHECK_PRINT(nil, "Nil");
  rlyrt_adt *l1 = rlyrt_adt_new(1, "Cons", 2);
  rlyrt_adt_set_take(l1, 0, rlyrt_retain(&two->obj));
  rlyrt_adt_set_take(l1, 1, rlyrt_retain(&nil->obj));
  rlyrt_adt *l2 = rlyrt_adt_new(1, "Cons", 2);
  rlyrt_adt_set_take(l2, 0, rlyrt_retain(&one->obj));
  rlyrt_adt_set_take(l2, 1, rlyrt_retain(&l1->obj));
  CHECK_PRINT(l2, "Cons(1, Cons(2, Nil))");

  rlyrt_closure *c = rlyrt_closure_new(NULL, 1);
  rlyrt_closure_set_take(c, 0, rlyrt_retain(&one->obj));
  CHECK_PRINT(c, "<closure>");
  rlyrt_ref *r = rlyrt_ref_new_take(rlyrt_retain(&pair->obj));
  CHECK_PRINT(r, "ref((1, [0.5 2. ]))");

  /* Everything nested. */
  rlyrt_tuple *all = rlyrt_tuple_new(5);
  rlyrt_tuple_set_take(all, 0, &l2->obj);
  rlyrt_tuple_set_take(all, 1, &c->obj);
  rlyrt_tuple_set_take(all, 2, &r->obj);
  rlyrt_tuple_set_take(all, 3, &single->obj);
  rlyrt_tuple_set_take(all, 4, &unit->obj);
  CHECK_PRINT(all, "(Cons(1, Cons(2, Nil)), <closure>, ref((1, [0.5 2. ])), (2,), ())");
  rlyrt_adt *some = rlyrt_adt_new(1, "Some", 1);
  rlyrt_adt_set_take(some, 0, &all->obj);
  CHECK_PRINT(some, "Some((Cons(1, Cons(2, Nil)), <closure>, ref((1, [0.5 2. ])), (2,), ()))");
  rlyrt_release(&some->obj);

  /* Odd values: an unset field, a constructor without a name, a cycle. */
  rlyrt_tuple *holey = rlyrt_tuple_new(2);
  rlyrt_adt *anon = rlyrt_adt_new(3, NULL, 0);
  rlyrt_tuple_set_take(holey, 1, &anon->obj);
  CHECK_PRINT(holey, "(<null>, <ctor 3>)");
  rlyrt_release(&holey->obj);
  rlyrt_ref *cyc = rlyrt_ref_new_take(NULL);
  rlyrt_tuple *in = rlyrt_tuple_new(2);
  rlyrt_tuple_set_take(in, 0, rlyrt_retain(&one->obj));
  rlyrt_tuple_set_take(in, 1, rlyrt_retain(&cyc->obj));
  rlyrt_ref_write_take(cyc, &in->obj);
  CHECK_PRINT(cyc, "ref((1, ref(...)))");
  rlyrt_ref *outer = rlyrt_ref_new_take(rlyrt_retain(&cyc->obj));
  CHECK_PRINT(outer, "ref(ref((1, ref(...))))");
  rlyrt_release(&outer->obj);
  rlyrt_ref_write_take(cyc, NULL); /* break the cycle to free it */
  rlyrt_release(&cyc->obj);
  CHECK_PRINT(NULL, "<null>");

  /* A 100,000-long list prints without deep recursion. */
  rlyrt_adt *list = make_list(100000, &one->obj);
  char *s = print_str(&list->obj);
  size_t len = strlen(s);
  CHECK_EQ(len, 100000 * strlen("Cons(1, ") + strlen("Nil") + 100000);
  CHECK(strncmp(s, "Cons(1, Cons(1, ", 16) == 0 && strstr(s, "Cons(1, Nil))") != NULL && s[len - 1] == ')');
  free(s);
  rlyrt_release(&list->obj);
  /* A long list of references prints in linear time. */
  rlyrt_ref *cell = rlyrt_ref_new_take(rlyrt_retain(&one->obj));
  list = make_list(100000, &cell->obj);
  s = print_str(&list->obj);
  CHECK(strncmp(s, "Cons(ref(1), Cons(ref(1), ", 26) == 0);
  free(s);
  rlyrt_release(&list->obj);
  rlyrt_release(&cell->obj);

  rlyrt_release(&nil->obj);
  rlyrt_release(&l1->obj);
  rlyrt_release(&pair->obj);
  rlyrt_release(&vec->obj);
  rlyrt_release(&one->obj);
  rlyrt_release(&two->obj);
  CHECK_EQ(alloc_live, 0);
}

int main(int argc, char **argv) {
  if (argc > 1) data_dir = argv[1];
  const char *tmp = getenv("TMPDIR");
  snprintf(tmp_dir, sizeof tmp_dir, "%s/rlyrt_test_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmp_dir)) {
    perror("mkdtemp");
    return 1;
  }
  rlyrt_set_allocator(&counting);
  test_tensor_new();
  test_refcounts();
  test_share();
  test_containers();
  test_on_stack();
  test_adt_boxes();
  test_long_list();
  test_failing_allocator();
  test_thread_errors();
  test_scratch();
  test_half();
  test_npy_fixtures();
  test_npy_round_trip();
  test_npy_truncated();
  test_npy_claims();
  test_npy_headers();
  test_print_tensors();
  test_print_values();
  rlyrt_set_allocator(NULL);
  rmdir(tmp_dir);
  return check_report("test_runtime");
}
