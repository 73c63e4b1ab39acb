/* test_loader.c: compiled modules used from C as a program would use them:
** tests/api/model.relay built by `relayc build` into two shared libraries
** (--name model and --name other), loaded with rlyrt_module_load.
**
** usage: test_loader MODEL.so OTHER.so  (tests/tools/api_test.sh builds
** both from the same model.relay, in a directory where it is called
** model.relay, so closures are named "fn at model.relay:LINE:COL").
**
** It checks the module description (every function's exact Relay type,
** parameter names and types; the constructors), finding functions, calls
** by name with values built from C (tensors, tuples, lists, closures,
** references) against values computed by hand from the comments of
** model.relay, bad calls (an error status and a message naming the
** problem, never a crash), run-time errors of the model, closures called
** from C, 8 threads calling one module at once (their results must equal
** serial results byte for byte), and two modules in one process at once.
**
** Every runtime allocation, the modules' included (the loader hands them
** this process's allocator), goes through a counting allocator: at the end
** nothing may be live. The values and modules are all released, so the
** sanitizer build's LeakSanitizer has nothing to report either. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "relayc/runtime.h"
#include "counting.h"

/* {==== Values ====} */

static const DLDataType F32 = {kDLFloat, 32, 1};
static const DLDataType I32 = {kDLInt, 32, 1};

/* Building a test value fails only when memory runs out: stop there. */
static void *need(void *p, const char *what) {
  if (!p) {
    fprintf(stderr, "test_loader: %s failed: %s\n", what, rlyrt_last_error());
    exit(2);
  }
  return p;
}

static rlyrt_object *tensor_of(DLDataType dt, int32_t ndim, const int64_t *shape, const void *data) {
  rlyrt_tensor *t = need(rlyrt_tensor_new(dt, ndim, shape, false), "rlyrt_tensor_new");
  memcpy(t->dl.data, data, rlyrt_tensor_nbytes(t));
  return &t->obj;
}

static rlyrt_object *f32(float v) { return tensor_of(F32, 0, NULL, &v); }
static rlyrt_object *i32(int32_t v) { return tensor_of(I32, 0, NULL, &v); }

/* A tensor's data if v is a tensor of dtype dt with numel elements; NULL
** (and a failed check) otherwise. */
static const void *data_of_(int line, const rlyrt_object *v, DLDataType dt, int64_t numel) {
  check_count++;
  if (!v || v->kind != RLYRT_TENSOR || !rlyrt_dtype_eq(RLYRT_AS_TENSOR(v)->dl.dtype, dt) ||
      rlyrt_tensor_numel(RLYRT_AS_TENSOR(v)) != numel) {
    check_failures++;
    fprintf(stderr, "%s:%d: not a tensor of the expected dtype with %lld elements\n", __FILE__, line,
            (long long)numel);
    return NULL;
  }
  return RLYRT_AS_TENSOR(v)->dl.data;
}
#define DATA_OF(v, dt, n) data_of_(__LINE__, (v), (dt), (n))

/* The value of a float32 (int32) scalar; -12345 when v is not one. */
static float f32_of_(int line, const rlyrt_object *v) {
  const float *p = data_of_(line, v, F32, 1);
  return p ? *p : -12345.0f;
}
static int32_t i32_of_(int line, const rlyrt_object *v) {
  const int32_t *p = data_of_(line, v, I32, 1);
  return p ? *p : -12345;
}
#define F32_OF(v) f32_of_(__LINE__, (v))
#define I32_OF(v) i32_of_(__LINE__, (v))

/* The list [items[0], ..., items[n-1]] of module m (the items retained). */
static rlyrt_object *list_of(const rlyrt_module *m, rlyrt_object *const *items, int32_t n) {
  rlyrt_object *list = NULL;
  if (rlyrt_module_adt_new(m, "Nil", NULL, 0, &list) != RLYRT_OK) need(NULL, "rlyrt_module_adt_new(Nil)");
  for (int32_t i = n - 1; i >= 0; i--) {
    rlyrt_object *fields[2] = {items[i], list}, *cons = NULL;
    if (rlyrt_module_adt_new(m, "Cons", fields, 2, &cons) != RLYRT_OK) need(NULL, "rlyrt_module_adt_new(Cons)");
    rlyrt_release(list);
    list = cons;
  }
  return list;
}

/* The list of float32 scalars values[0..n-1] of module m. */
static rlyrt_object *f32_list(const rlyrt_module *m, const float *values, int32_t n) {
  rlyrt_object *list = NULL;
  if (rlyrt_module_adt_new(m, "Nil", NULL, 0, &list) != RLYRT_OK) need(NULL, "rlyrt_module_adt_new(Nil)");
  for (int32_t i = n - 1; i >= 0; i--) {
    rlyrt_object *h = f32(values[i]);
    rlyrt_object *fields[2] = {h, list}, *cons = NULL;
    if (rlyrt_module_adt_new(m, "Cons", fields, 2, &cons) != RLYRT_OK) need(NULL, "rlyrt_module_adt_new(Cons)");
    rlyrt_release(h);
    rlyrt_release(list);
    list = cons;
  }
  return list;
}

/* {==== Calls ====} */

/* Calls m's function name; on failure reports the status and message and
** returns NULL. */
static rlyrt_object *call_(int line, const rlyrt_module *m, const char *name, rlyrt_object *const *args,
                           int32_t n) {
  rlyrt_object *out = NULL;
  rlyrt_status s = rlyrt_module_call(m, name, args, n, &out);
  check_count++;
  if (s != RLYRT_OK || !out) {
    check_failures++;
    fprintf(stderr, "%s:%d: calling %s failed: %s: %s\n", __FILE__, line, name, rlyrt_status_name(s),
            rlyrt_last_error());
    rlyrt_release(out);
    return NULL;
  }
  return out;
}
#define CALL(m, name, ...) \
  call_(__LINE__, (m), (name), (rlyrt_object *const[]){__VA_ARGS__}, \
        (int32_t)(sizeof((rlyrt_object *const[]){__VA_ARGS__}) / sizeof(rlyrt_object *)))

static rlyrt_object *closure_call_(int line, const rlyrt_object *c, rlyrt_object *const *args, int32_t n) {
  rlyrt_object *out = NULL;
  rlyrt_status s = rlyrt_closure_call(c, args, n, &out);
  check_count++;
  if (s != RLYRT_OK || !out) {
    check_failures++;
    fprintf(stderr, "%s:%d: calling a closure failed: %s: %s\n", __FILE__, line, rlyrt_status_name(s),
            rlyrt_last_error());
    rlyrt_release(out);
    return NULL;
  }
  return out;
}
#define CLOSURE_CALL(c, ...) \
  closure_call_(__LINE__, (c), (rlyrt_object *const[]){__VA_ARGS__}, \
                (int32_t)(sizeof((rlyrt_object *const[]){__VA_ARGS__}) / sizeof(rlyrt_object *)))

/* A failed call: the status is want, *out is NULL, and this thread's
** message contains every piece (a NULL-terminated list). */
static void expect_failure(int line, const char *what, rlyrt_status s, rlyrt_status want, rlyrt_object *out,
                           const char *const *pieces) {
  const char *msg = rlyrt_last_error();
  check_count++;
  bool ok = s == want && out == NULL;
  for (const char *const *p = pieces; ok && *p; p++) ok = strstr(msg, *p) != NULL;
  if (!ok) {
    check_failures++;
    fprintf(stderr, "%s:%d: %s: expected %s with a message containing", __FILE__, line, what, rlyrt_status_name(want));
    for (const char *const *p = pieces; *p; p++) fprintf(stderr, " \"%s\"", *p);
    fprintf(stderr, "\n  got %s%s: \"%s\"\n", rlyrt_status_name(s), out ? " and a result" : "", msg);
  }
  rlyrt_release(out);
}

static void fails_(int line, const rlyrt_module *m, const char *name, rlyrt_object *const *args, int32_t n,
                   rlyrt_status want, const char *const *pieces) {
  rlyrt_object *out = NULL;
  rlyrt_status s = rlyrt_module_call(m, name, args, n, &out);
  expect_failure(line, name, s, want, out, pieces);
}
/* FAILS(m, name, args, nargs, status, "piece", ...): the call fails so. */
#define FAILS(m, name, args, n, want, ...) \
  fails_(__LINE__, (m), (name), (args), (n), (want), (const char *const[]){__VA_ARGS__, NULL})

static void closure_fails_(int line, const rlyrt_object *c, rlyrt_object *const *args, int32_t n,
                           rlyrt_status want, const char *const *pieces) {
  rlyrt_object *out = NULL;
  rlyrt_status s = rlyrt_closure_call(c, args, n, &out);
  expect_failure(line, "rlyrt_closure_call", s, want, out, pieces);
}
#define CLOSURE_FAILS(c, args, n, want, ...) \
  closure_fails_(__LINE__, (c), (args), (n), (want), (const char *const[]){__VA_ARGS__, NULL})

/* The message of the last failure contains piece. */
#define CHECK_MSG(piece)                                                                       \
  do {                                                                                         \
    const char *m_ = rlyrt_last_error();                                                       \
    check_count++;                                                                             \
    if (!strstr(m_, (piece))) {                                                                \
      check_failures++;                                                                        \
      fprintf(stderr, "%s:%d: the message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, m_, piece); \
    }                                                                                          \
  } while (0)

/* {==== The module description ====} */

typedef struct expected_fn {
  const char *name;
  const char *type;
  int32_t nparams;
  const char *pnames[2];
  const char *ptypes[2];
  const char *result;
} expected_fn;

/* Every global of model.relay, sorted by name, with its type as written
** there. */
static const expected_fn EXPECTED_FNS[] = {
    {"adder", "fn (float32) -> fn (float32) -> float32", 1, {"a"}, {"float32"}, "fn (float32) -> float32"},
    {"apply_int", "fn (fn (int32) -> int32, int32) -> int32", 2, {"f", "x"}, {"fn (int32) -> int32", "int32"},
     "int32"},
    {"apply_twice", "fn (fn (float32) -> float32, float32) -> float32", 2, {"f", "x"},
     {"fn (float32) -> float32", "float32"}, "float32"},
    {"bump", "fn (ref(int32), int32) -> int32", 2, {"r", "d"}, {"ref(int32)", "int32"}, "int32"},
    {"countdown", "fn (int32) -> List[int32]", 1, {"n"}, {"int32"}, "List[int32]"},
    {"divider", "fn (int32) -> fn (int32) -> int32", 1, {"a"}, {"int32"}, "fn (int32) -> int32"},
    {"head", "fn (List[float32]) -> float32", 1, {"xs"}, {"List[float32]"}, "float32"},
    {"idiv", "fn (int32, int32) -> int32", 2, {"a", "b"}, {"int32", "int32"}, "int32"},
    {"length", "fn [A](List[A]) -> int32", 1, {"xs"}, {"List[A]"}, "int32"},
    {"linear", "fn (float32) -> fn (float32, float32) -> float32", 1, {"k"}, {"float32"},
     "fn (float32, float32) -> float32"},
    {"main", "fn (Tensor[(2, 3), float32], Tensor[(3), float32]) -> Tensor[(2, 3), float32]", 2, {"x", "y"},
     {"Tensor[(2, 3), float32]", "Tensor[(3), float32]"}, "Tensor[(2, 3), float32]"},
    {"make_ref", "fn (int32) -> ref(int32)", 1, {"v"}, {"int32"}, "ref(int32)"},
    {"stats", "fn (Tensor[(4), float32]) -> (float32, float32, Tensor[(4), float32])", 1, {"v"},
     {"Tensor[(4), float32]"}, "(float32, float32, Tensor[(4), float32])"},
    {"sum_list", "fn (List[float32]) -> float32", 1, {"xs"}, {"List[float32]"}, "float32"},
    {"swap_scale", "fn ((Tensor[(2), int32], float32)) -> (float32, Tensor[(2), int32])", 1, {"p"},
     {"(Tensor[(2), int32], float32)"}, "(float32, Tensor[(2), int32])"},
    {"wrap",
     "fn (Tensor[(2, 3), float32], Tensor[(3), float32]) -> (List[Tensor[(2, 3), float32]], fn () -> "
     "Tensor[(2, 3), float32])",
     2, {"x", "y"}, {"Tensor[(2, 3), float32]", "Tensor[(3), float32]"},
     "(List[Tensor[(2, 3), float32]], fn () -> Tensor[(2, 3), float32])"},
};
#define NFNS ((int32_t)(sizeof EXPECTED_FNS / sizeof EXPECTED_FNS[0]))

static void test_info(const rlyrt_module *m, const char *name) {
  const rlyrt_module_info *info = rlyrt_module_get_info(m);
  CHECK(info != NULL);
  if (!info) return;
  CHECK_EQ(info->abi, RLYRT_ABI_VERSION);
  CHECK_STR(info->name, name);
  CHECK_EQ(info->nfunctions, NFNS);
  for (int32_t i = 0; i < info->nfunctions && i < NFNS; i++) {
    const rlyrt_function_info *f = &info->functions[i];
    const expected_fn *e = &EXPECTED_FNS[i];
    CHECK_STR(f->name, e->name);
    CHECK_STR(f->type, e->type);
    CHECK_EQ(f->nparams, e->nparams);
    for (int32_t p = 0; p < f->nparams && p < e->nparams; p++) {
      CHECK_STR(f->param_names[p], e->pnames[p]);
      CHECK_STR(f->param_types[p], e->ptypes[p]);
    }
    CHECK_STR(f->result_type, e->result);
    CHECK(f->code && f->code->fn && f->code->check);
    if (!f->code) continue;
    CHECK_EQ(f->code->arity, e->nparams);
    char at[64];
    snprintf(at, sizeof at, "@%s", e->name);
    CHECK_STR(f->code->name, at);
    CHECK(f->code->module == info);
    /* Found by name, with and without '@': the same entry. */
    CHECK(rlyrt_module_find(m, e->name) == f);
    CHECK(rlyrt_module_find(m, at) == f);
  }
  CHECK(rlyrt_module_find(m, "nope") == NULL);
  CHECK(rlyrt_module_find(m, "@nope") == NULL);
  CHECK(rlyrt_module_find(m, "mai") == NULL);
  CHECK(rlyrt_module_find(m, "main2") == NULL);
  CHECK(rlyrt_module_find(m, "") == NULL);
  CHECK(rlyrt_module_find(m, "@") == NULL);
  CHECK(rlyrt_module_find(m, NULL) == NULL);
  CHECK(rlyrt_module_find(NULL, "main") == NULL);
  /* The constructors of List, in definition order. */
  CHECK_EQ(info->nctors, 2);
  if (info->nctors == 2) {
    CHECK_STR(info->ctors[0].name, "Cons");
    CHECK_STR(info->ctors[0].adt, "List");
    CHECK_EQ(info->ctors[0].tag, 0);
    CHECK_EQ(info->ctors[0].arity, 2);
    CHECK_STR(info->ctors[1].name, "Nil");
    CHECK_STR(info->ctors[1].adt, "List");
    CHECK_EQ(info->ctors[1].tag, 1);
    CHECK_EQ(info->ctors[1].arity, 0);
  }
  CHECK(info->last_error != NULL);
  CHECK(info->set_allocator != NULL);
}

/* {==== Calls with good values ====} */

/* @main's inputs and its result by hand: x + y = [[1.5, -1, -1], [-3.5, 6,
** -10]]; times x = [[1.5, 2, -3], [14, 30, 60]]; relu. */
static const float MAIN_X[6] = {1, -2, 3, -4, 5, -6};
static const float MAIN_Y[3] = {0.5f, 1, -4};
static const float MAIN_OUT[6] = {1.5f, 2, 0, 14, 30, 60};
static const int64_t SHAPE_23[2] = {2, 3}, SHAPE_3[1] = {3}, SHAPE_4[1] = {4}, SHAPE_2[1] = {2};

static void test_tensors(const rlyrt_module *m) {
  rlyrt_object *x = tensor_of(F32, 2, SHAPE_23, MAIN_X), *y = tensor_of(F32, 1, SHAPE_3, MAIN_Y);
  rlyrt_object *r = CALL(m, "main", x, y);
  const float *d = DATA_OF(r, F32, 6);
  if (d) {
    CHECK(memcmp(d, MAIN_OUT, sizeof MAIN_OUT) == 0);
    CHECK_EQ(RLYRT_AS_TENSOR(r)->dl.ndim, 2);
    CHECK_EQ(RLYRT_AS_TENSOR(r)->dl.shape[0], 2);
    CHECK_EQ(RLYRT_AS_TENSOR(r)->dl.shape[1], 3);
  }
  rlyrt_release(r);
  /* "@main" names the same function. */
  r = CALL(m, "@main", x, y);
  d = DATA_OF(r, F32, 6);
  if (d) CHECK(memcmp(d, MAIN_OUT, sizeof MAIN_OUT) == 0);
  rlyrt_release(r);
  /* The arguments are borrowed: unchanged, and still ours. */
  CHECK_EQ(rlyrt_refcount(x), 1);
  CHECK(memcmp(RLYRT_AS_TENSOR(x)->dl.data, MAIN_X, sizeof MAIN_X) == 0);
  rlyrt_release(x);
  rlyrt_release(y);

  /* @stats([1.5, -2, 4, 0.25]) = (3.75, 4, [-1.5, 2, -4, -0.25]). */
  static const float v[4] = {1.5f, -2, 4, 0.25f}, neg[4] = {-1.5f, 2, -4, -0.25f};
  rlyrt_object *vt = tensor_of(F32, 1, SHAPE_4, v);
  r = CALL(m, "stats", vt);
  CHECK_EQ(rlyrt_num_fields(r), 3);
  if (rlyrt_num_fields(r) == 3) {
    CHECK(r->kind == RLYRT_TUPLE);
    CHECK(F32_OF(rlyrt_field(r, 0)) == 3.75f);
    CHECK(F32_OF(rlyrt_field(r, 1)) == 4.0f);
    d = DATA_OF(rlyrt_field(r, 2), F32, 4);
    if (d) CHECK(memcmp(d, neg, sizeof neg) == 0);
    CHECK(rlyrt_field(r, 3) == NULL);
    CHECK_MSG("out of range");
    CHECK(rlyrt_field(r, -1) == NULL);
  }
  rlyrt_release(r);
  rlyrt_release(vt);
}

static void test_tuples(const rlyrt_module *m) {
  /* @swap_scale(([3, -9], 1.5)) = (3, [4, -8]). */
  static const int32_t iv[2] = {3, -9}, iv1[2] = {4, -8};
  rlyrt_object *a = tensor_of(I32, 1, SHAPE_2, iv), *b = f32(1.5f);
  rlyrt_object *fields[2] = {a, b};
  rlyrt_tuple *p = need(rlyrt_tuple_make(fields, 2), "rlyrt_tuple_make");
  CHECK_EQ(rlyrt_refcount(a), 2); /* retained by the tuple */
  CHECK_EQ(rlyrt_num_fields(&p->obj), 2);
  CHECK(rlyrt_field(&p->obj, 0) == a);
  CHECK(rlyrt_field(&p->obj, 1) == b);
  rlyrt_object *r = CALL(m, "swap_scale", &p->obj);
  CHECK_EQ(rlyrt_num_fields(r), 2);
  if (rlyrt_num_fields(r) == 2) {
    CHECK(F32_OF(rlyrt_field(r, 0)) == 3.0f);
    const int32_t *d = DATA_OF(rlyrt_field(r, 1), I32, 2);
    if (d) CHECK(memcmp(d, iv1, sizeof iv1) == 0);
  }
  rlyrt_release(r);
  rlyrt_release(&p->obj);
  CHECK_EQ(rlyrt_refcount(a), 1);
  rlyrt_release(a);
  rlyrt_release(b);

  /* A NULL field is refused. */
  rlyrt_object *bad[2] = {NULL, NULL};
  CHECK(rlyrt_tuple_make(bad, 2) == NULL);
  CHECK_MSG("field 0 is NULL");
  /* The empty tuple. */
  rlyrt_tuple *unit = need(rlyrt_tuple_make(NULL, 0), "rlyrt_tuple_make");
  CHECK_EQ(rlyrt_num_fields(&unit->obj), 0);
  CHECK(rlyrt_field(&unit->obj, 0) == NULL);
  rlyrt_release(&unit->obj);
}

static void test_lists(const rlyrt_module *m) {
  /* @sum_list([1.5, 2, -0.25]) = 3.25; @head = 1.5; @length = 3. */
  static const float three[3] = {1.5f, 2, -0.25f};
  rlyrt_object *l = f32_list(m, three, 3);
  CHECK_STR(rlyrt_adt_ctor(l), "Cons");
  CHECK_EQ(rlyrt_num_fields(l), 2);
  CHECK(F32_OF(rlyrt_field(l, 0)) == 1.5f);
  rlyrt_object *r = CALL(m, "sum_list", l);
  CHECK(F32_OF(r) == 3.25f);
  rlyrt_release(r);
  r = CALL(m, "head", l);
  CHECK(F32_OF(r) == 1.5f);
  rlyrt_release(r);
  r = CALL(m, "length", l);
  CHECK_EQ(I32_OF(r), 3);
  rlyrt_release(r);
  rlyrt_release(l);

  /* 1000 elements 0, 0.5, ..., 499.5: the sum is 0.5 * 999 * 1000 / 2 =
  ** 249750 (every partial sum is exact in float32). */
  rlyrt_object *list = NULL;
  if (rlyrt_module_adt_new(m, "Nil", NULL, 0, &list) != RLYRT_OK) need(NULL, "Nil");
  for (int32_t i = 999; i >= 0; i--) {
    rlyrt_object *h = f32(0.5f * (float)i), *fields[2] = {h, list}, *cons = NULL;
    rlyrt_status s = rlyrt_module_adt_new(m, "Cons", fields, 2, &cons);
    CHECK_EQ(s, RLYRT_OK);
    rlyrt_release(h);
    rlyrt_release(list);
    list = cons;
    if (!cons) break;
  }
  r = CALL(m, "sum_list", list);
  CHECK(F32_OF(r) == 249750.0f);
  rlyrt_release(r);
  r = CALL(m, "length", list);
  CHECK_EQ(I32_OF(r), 1000);
  rlyrt_release(r);
  /* Walk it from C. */
  int32_t n = 0;
  bool in_order = true;
  for (const rlyrt_object *p = list; p && rlyrt_num_fields(p) == 2; p = rlyrt_field(p, 1)) {
    const float *h = DATA_OF(rlyrt_field(p, 0), F32, 1);
    if (!h || *h != 0.5f * (float)n) in_order = false;
    n++;
  }
  CHECK_EQ(n, 1000);
  CHECK(in_order);
  rlyrt_release(list);

  /* A list made by the model: @countdown(4) = [4, 3, 2, 1]. */
  rlyrt_object *four = i32(4);
  r = CALL(m, "countdown", four);
  const rlyrt_object *p = r;
  for (int32_t want = 4; want >= 1; want--) {
    CHECK_STR(rlyrt_adt_ctor(p), "Cons");
    CHECK_EQ(rlyrt_num_fields(p), 2);
    CHECK_EQ(I32_OF(rlyrt_field(p, 0)), want);
    p = rlyrt_field(p, 1);
  }
  CHECK_STR(rlyrt_adt_ctor(p), "Nil");
  CHECK_EQ(rlyrt_num_fields(p), 0);
  /* The polymorphic @length on a List[int32], and a list of tuples. */
  rlyrt_object *len = CALL(m, "length", r);
  CHECK_EQ(I32_OF(len), 4);
  rlyrt_release(len);
  rlyrt_release(r);
  rlyrt_release(four);
  rlyrt_object *zero = i32(0);
  r = CALL(m, "countdown", zero);
  CHECK_STR(rlyrt_adt_ctor(r), "Nil");
  rlyrt_release(r);
  rlyrt_release(zero);
  rlyrt_object *a = f32(1), *b = i32(2), *ab[2] = {a, b};
  rlyrt_object *t = (rlyrt_object *)need(rlyrt_tuple_make(ab, 2), "rlyrt_tuple_make");
  rlyrt_object *items[3] = {t, t, t};
  l = list_of(m, items, 3);
  r = CALL(m, "length", l);
  CHECK_EQ(I32_OF(r), 3);
  rlyrt_release(r);
  rlyrt_release(l);
  rlyrt_release(t);
  rlyrt_release(a);
  rlyrt_release(b);

  /* Inspecting values that are not containers. */
  rlyrt_object *s = f32(1);
  CHECK_EQ(rlyrt_num_fields(s), -1);
  CHECK(rlyrt_adt_ctor(s) == NULL);
  CHECK(rlyrt_ref_get(s) == NULL);
  CHECK(rlyrt_field(s, 0) == NULL);
  CHECK_MSG("not a tuple or an ADT value");
  CHECK_EQ(rlyrt_num_fields(NULL), -1);
  CHECK(rlyrt_adt_ctor(NULL) == NULL);
  CHECK(rlyrt_ref_get(NULL) == NULL);
  rlyrt_release(s);
}

static void test_closures(const rlyrt_module *m) {
  /* @adder(1.5)(2) = 3.5. */
  rlyrt_object *a = f32(1.5f), *two = f32(2), *one = f32(1), *half = f32(0.5f), *three = f32(3);
  rlyrt_object *add = CALL(m, "adder", a);
  CHECK(add && add->kind == RLYRT_CLOSURE && (add->flags & RLYRT_CLOSURE_NATIVE));
  rlyrt_object *r = CLOSURE_CALL(add, two);
  CHECK(F32_OF(r) == 3.5f);
  rlyrt_release(r);
  /* Twice: the closure is not used up. */
  r = CLOSURE_CALL(add, one);
  CHECK(F32_OF(r) == 2.5f);
  rlyrt_release(r);
  /* Outlives our reference to the value it captured (it holds its own). */
  rlyrt_release(a);
  r = CLOSURE_CALL(add, two);
  CHECK(F32_OF(r) == 3.5f);
  rlyrt_release(r);

  /* @linear(3)(1, 2) = (1 + 2) * 3 = 9. */
  rlyrt_object *lin = CALL(m, "linear", three);
  r = CLOSURE_CALL(lin, one, two);
  CHECK(F32_OF(r) == 9.0f);
  rlyrt_release(r);

  /* A closure as an argument: @apply_twice(@adder(0.5), 1) = 2. */
  rlyrt_object *add_half = CALL(m, "adder", half);
  r = CALL(m, "apply_twice", add_half, one);
  CHECK(F32_OF(r) == 2.0f);
  rlyrt_release(r);
  /* ... and the one of 1.5: 1 + 1.5 + 1.5 = 4. */
  r = CALL(m, "apply_twice", add, one);
  CHECK(F32_OF(r) == 4.0f);
  rlyrt_release(r);

  /* A closure that fails: @divider(7) at 0, called from C and from
  ** @apply_int; at -2: -3 (truncated). */
  rlyrt_object *seven = i32(7), *zero = i32(0), *mtwo = i32(-2);
  rlyrt_object *div7 = CALL(m, "divider", seven);
  r = CLOSURE_CALL(div7, mtwo);
  CHECK_EQ(I32_OF(r), -3);
  rlyrt_release(r);
  r = CALL(m, "apply_int", div7, mtwo);
  CHECK_EQ(I32_OF(r), -3);
  rlyrt_release(r);
  CLOSURE_FAILS(div7, &zero, 1, RLYRT_E_RUNTIME, "model.relay:", "division by zero");
  rlyrt_object *dz[2] = {div7, zero};
  rlyrt_error(RLYRT_E_ARG, "an older message");
  FAILS(m, "apply_int", dz, 2, RLYRT_E_RUNTIME, "model.relay:", "division by zero");
  /* A closure of the right arity but of another type (fn (float32) ->
  ** float32 for fn (int32) -> int32) is a bad argument too: the callee's
  ** code would read its argument as the wrong type (for a tensor
  ** parameter of static shape, past the end of the data). */
  rlyrt_object *wrong[2] = {add, zero};
  FAILS(m, "apply_int", wrong, 2, RLYRT_E_ARG, "argument 1 (%f) of @apply_int", "fn (int32) -> int32");
  rlyrt_release(div7);
  rlyrt_release(seven);
  rlyrt_release(zero);
  rlyrt_release(mtwo);

  /* Wrong argument counts and values. */
  rlyrt_object *args2[2] = {one, two}, *tup = NULL;
  CLOSURE_FAILS(add, args2, 2, RLYRT_E_ARG, "fn at model.relay:", "takes 1 argument, not 2");
  CLOSURE_FAILS(add, NULL, 0, RLYRT_E_ARG, "takes 1 argument, not 0");
  CLOSURE_FAILS(lin, args2, 1, RLYRT_E_ARG, "takes 2 arguments, not 1");
  rlyrt_object *ab[2] = {one, two};
  tup = (rlyrt_object *)need(rlyrt_tuple_make(ab, 2), "rlyrt_tuple_make");
  CLOSURE_FAILS(add, &tup, 1, RLYRT_E_ARG, "argument 1 (%b) of fn at model.relay:", "expects float32, got a tuple");
  rlyrt_object *nul = NULL;
  CLOSURE_FAILS(add, &nul, 1, RLYRT_E_ARG, "argument 1 (%b)", "got NULL");
  CLOSURE_FAILS(add, NULL, 1, RLYRT_E_ARG, "the argument array is NULL");
  CLOSURE_FAILS(one, args2, 1, RLYRT_E_ARG, "expected a closure, got a tensor");
  CLOSURE_FAILS(NULL, args2, 1, RLYRT_E_ARG, "expected a closure, got NULL");
  CHECK_EQ(rlyrt_closure_call(add, args2, 1, NULL), RLYRT_E_ARG);
  CHECK_MSG("out is NULL");

  /* A closure of the wrong arity for @apply_twice: @linear's takes 2. */
  rlyrt_object *bad[2] = {lin, one};
  FAILS(m, "apply_twice", bad, 2, RLYRT_E_ARG, "argument 1 (%f) of @apply_twice",
        "expects fn (float32) -> float32", "got a closure of 2 parameters");
  /* Not a closure at all. */
  rlyrt_object *bad2[2] = {one, one};
  FAILS(m, "apply_twice", bad2, 2, RLYRT_E_ARG, "argument 1 (%f) of @apply_twice", "got a tensor");
  /* A closure that is not compiled code. */
  static const char not_code[] = "not code";
  rlyrt_closure *fake = need(rlyrt_closure_new(not_code, 0), "rlyrt_closure_new");
  rlyrt_object *bad3[2] = {&fake->obj, one};
  FAILS(m, "apply_twice", bad3, 2, RLYRT_E_ARG, "argument 1 (%f)", "not compiled code");
  CLOSURE_FAILS(&fake->obj, args2, 1, RLYRT_E_ARG, "not compiled code");
  rlyrt_release(&fake->obj);

  rlyrt_release(tup);
  rlyrt_release(add_half);
  rlyrt_release(lin);
  rlyrt_release(add);
  rlyrt_release(two);
  rlyrt_release(one);
  rlyrt_release(half);
  rlyrt_release(three);
}

static void test_refs(const rlyrt_module *m) {
  /* @make_ref(10) holds 10; @bump(r, 5) returns 10 and leaves 15. */
  rlyrt_object *ten = i32(10), *five = i32(5);
  rlyrt_object *r = CALL(m, "make_ref", ten);
  CHECK(r && r->kind == RLYRT_REF);
  CHECK_EQ(I32_OF(rlyrt_ref_get(r)), 10);
  rlyrt_object *old = CALL(m, "bump", r, five);
  CHECK_EQ(I32_OF(old), 10);
  CHECK_EQ(I32_OF(rlyrt_ref_get(r)), 15);
  rlyrt_release(old);
  old = CALL(m, "bump", r, five);
  CHECK_EQ(I32_OF(old), 15);
  CHECK_EQ(I32_OF(rlyrt_ref_get(r)), 20);
  rlyrt_release(old);
  rlyrt_release(r);

  /* A reference made in C. */
  rlyrt_ref *mine = need(rlyrt_ref_new_take(i32(100)), "rlyrt_ref_new_take");
  old = CALL(m, "bump", &mine->obj, ten);
  CHECK_EQ(I32_OF(old), 100);
  CHECK_EQ(I32_OF(rlyrt_ref_get(&mine->obj)), 110);
  rlyrt_release(old);
  /* Holding a float32: refused. */
  rlyrt_ref_write_take(mine, f32(1));
  rlyrt_object *args[2] = {&mine->obj, five};
  FAILS(m, "bump", args, 2, RLYRT_E_ARG, "argument 1 (%r) of @bump", "expects int32, got float32");
  /* Not a reference. */
  args[0] = five;
  FAILS(m, "bump", args, 2, RLYRT_E_ARG, "argument 1 (%r) of @bump", "expects ref(int32), got a tensor");
  rlyrt_release(&mine->obj);
  rlyrt_release(ten);
  rlyrt_release(five);
}

/* {==== Bad calls ====} */

static void test_bad_calls(const rlyrt_module *m) {
  rlyrt_object *x = tensor_of(F32, 2, SHAPE_23, MAIN_X), *y = tensor_of(F32, 1, SHAPE_3, MAIN_Y);
  rlyrt_object *good[3] = {x, y, y};

  /* Argument counts. */
  FAILS(m, "main", good, 1, RLYRT_E_ARG, "@main takes 2 arguments, not 1");
  FAILS(m, "main", good, 3, RLYRT_E_ARG, "@main takes 2 arguments, not 3");
  FAILS(m, "main", NULL, 0, RLYRT_E_ARG, "@main takes 2 arguments, not 0");
  FAILS(m, "main", NULL, 2, RLYRT_E_ARG, "the argument array is NULL");
  FAILS(m, "adder", good, 2, RLYRT_E_ARG, "@adder takes 1 argument, not 2");

  /* A tuple where a tensor is expected. */
  rlyrt_object *xy[2] = {x, y};
  rlyrt_object *tup = (rlyrt_object *)need(rlyrt_tuple_make(xy, 2), "rlyrt_tuple_make");
  rlyrt_object *a1[2] = {tup, y};
  FAILS(m, "main", a1, 2, RLYRT_E_ARG, "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got a tuple");

  /* Wrong dtype, shape, rank. */
  static const int32_t izeros[6] = {0};
  rlyrt_object *xi = tensor_of(I32, 2, SHAPE_23, izeros);
  rlyrt_object *a2[2] = {xi, y};
  FAILS(m, "main", a2, 2, RLYRT_E_ARG,
        "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got Tensor[(2, 3), int32]");
  static const int64_t shape32[2] = {3, 2};
  rlyrt_object *x32 = tensor_of(F32, 2, shape32, MAIN_X);
  rlyrt_object *a3[2] = {x32, y};
  FAILS(m, "main", a3, 2, RLYRT_E_ARG,
        "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got Tensor[(3, 2), float32]");
  rlyrt_object *a4[2] = {x, x};
  FAILS(m, "main", a4, 2, RLYRT_E_ARG,
        "argument 2 (%y) of @main expects Tensor[(3), float32], got Tensor[(2, 3), float32]");
  rlyrt_object *s = f32(1);
  rlyrt_object *a5[2] = {x, s};
  FAILS(m, "main", a5, 2, RLYRT_E_ARG, "argument 2 (%y) of @main expects Tensor[(3), float32], got float32");
  /* A scalar parameter given a tensor of one element. */
  static const float one[1] = {1};
  static const int64_t shape1[1] = {1};
  rlyrt_object *v1 = tensor_of(F32, 1, shape1, one);
  FAILS(m, "adder", &v1, 1, RLYRT_E_ARG, "argument 1 (%a) of @adder expects float32, got Tensor[(1), float32]");

  /* NULL arguments. */
  rlyrt_object *a6[2] = {NULL, y};
  FAILS(m, "main", a6, 2, RLYRT_E_ARG, "argument 1 (%x) of @main", "got NULL");
  rlyrt_object *a7[2] = {x, NULL};
  FAILS(m, "main", a7, 2, RLYRT_E_ARG, "argument 2 (%y) of @main", "got NULL");

  /* A tensor that is not on the CPU, one with a byte offset. */
  RLYRT_AS_TENSOR(x)->dl.device.device_type = kDLCUDA;
  FAILS(m, "main", xy, 2, RLYRT_E_ARG, "argument 1 (%x)", "only CPU tensors");
  RLYRT_AS_TENSOR(x)->dl.device.device_type = kDLCPU;
  RLYRT_AS_TENSOR(x)->dl.byte_offset = 4;
  FAILS(m, "main", xy, 2, RLYRT_E_ARG, "argument 1 (%x)", "byte offset");
  RLYRT_AS_TENSOR(x)->dl.byte_offset = 0;

  /* Unknown functions; NULL module, name and out. */
  FAILS(m, "nope", xy, 2, RLYRT_E_ARG, "the module model has no function @nope");
  FAILS(m, "@nope", xy, 2, RLYRT_E_ARG, "the module model has no function @nope");
  FAILS(m, "", xy, 2, RLYRT_E_ARG, "has no function");
  FAILS(m, NULL, xy, 2, RLYRT_E_ARG, "the module or the name is NULL");
  FAILS(NULL, "main", xy, 2, RLYRT_E_ARG, "the module or the name is NULL");
  CHECK_EQ(rlyrt_module_call(m, "main", xy, 2, NULL), RLYRT_E_ARG);
  CHECK_MSG("out is NULL");

  /* Tuples: the wrong number of fields, a wrong field. */
  static const int32_t iv[2] = {3, -9};
  rlyrt_object *iv2 = tensor_of(I32, 1, SHAPE_2, iv);
  rlyrt_object *f3[3] = {iv2, s, s};
  rlyrt_object *t3 = (rlyrt_object *)need(rlyrt_tuple_make(f3, 3), "rlyrt_tuple_make");
  FAILS(m, "swap_scale", &t3, 1, RLYRT_E_ARG, "argument 1 (%p) of @swap_scale",
        "expects (Tensor[(2), int32], float32), got a tuple of 3 fields");
  rlyrt_object *fw[2] = {s, s};
  rlyrt_object *tw = (rlyrt_object *)need(rlyrt_tuple_make(fw, 2), "rlyrt_tuple_make");
  FAILS(m, "swap_scale", &tw, 1, RLYRT_E_ARG, "argument 1 (%p) of @swap_scale",
        "expects Tensor[(2), int32], got float32");
  FAILS(m, "swap_scale", &iv2, 1, RLYRT_E_ARG, "argument 1 (%p) of @swap_scale", "got a tensor");
  rlyrt_tuple *holes = need(rlyrt_tuple_new(2), "rlyrt_tuple_new"); /* NULL fields */
  rlyrt_object *ho = &holes->obj;
  FAILS(m, "swap_scale", &ho, 1, RLYRT_E_ARG, "argument 1 (%p) of @swap_scale", "got NULL");

  /* ADT values: a tensor for a list; a wrong constructor arity, made by
  ** rlyrt_module_adt_new (refused) or by hand (refused by the call); an
  ** unknown tag; a list of the wrong element type. */
  FAILS(m, "sum_list", &s, 1, RLYRT_E_ARG, "argument 1 (%xs) of @sum_list expects List[float32], got a tensor");
  rlyrt_object *adt = NULL;
  CHECK_EQ(rlyrt_module_adt_new(m, "Cons", &s, 1, &adt), RLYRT_E_ARG);
  CHECK(adt == NULL);
  CHECK_MSG("constructor Cons takes 2 fields, not 1");
  CHECK_EQ(rlyrt_module_adt_new(m, "Nil", &s, 1, &adt), RLYRT_E_ARG);
  CHECK_MSG("constructor Nil takes 0 fields, not 1");
  CHECK_EQ(rlyrt_module_adt_new(m, "Leaf", NULL, 0, &adt), RLYRT_E_ARG);
  CHECK_MSG("the module model has no constructor Leaf");
  rlyrt_object *hole[2] = {s, NULL};
  CHECK_EQ(rlyrt_module_adt_new(m, "Cons", hole, 2, &adt), RLYRT_E_ARG);
  CHECK_MSG("constructor Cons: field 1 is NULL");
  CHECK_EQ(rlyrt_module_adt_new(m, "Cons", NULL, 2, &adt), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_adt_new(m, NULL, NULL, 0, &adt), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_adt_new(NULL, "Nil", NULL, 0, &adt), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_adt_new(m, "Nil", NULL, 0, NULL), RLYRT_E_ARG);
  CHECK(adt == NULL);
  rlyrt_adt *short_cons = need(rlyrt_adt_new(0, "Cons", 1), "rlyrt_adt_new");
  rlyrt_adt_set_take(short_cons, 0, rlyrt_retain(s));
  rlyrt_object *sc = &short_cons->obj;
  FAILS(m, "sum_list", &sc, 1, RLYRT_E_ARG, "argument 1 (%xs) of @sum_list", "got Cons with 1 fields");
  FAILS(m, "length", &sc, 1, RLYRT_E_ARG, "argument 1 (%xs) of @length", "got Cons with 1 fields");
  rlyrt_adt *alien = need(rlyrt_adt_new(7, "Leaf", 0), "rlyrt_adt_new");
  rlyrt_object *al = &alien->obj;
  FAILS(m, "sum_list", &al, 1, RLYRT_E_ARG, "argument 1 (%xs) of @sum_list", "an ADT value of another type");
  /* A list whose tail is broken further down. */
  rlyrt_object *pair[2] = {s, sc}, *deep = NULL;
  CHECK_EQ(rlyrt_module_adt_new(m, "Cons", pair, 2, &deep), RLYRT_OK);
  FAILS(m, "sum_list", &deep, 1, RLYRT_E_ARG, "argument 1 (%xs) of @sum_list", "got Cons with 1 fields");
  rlyrt_release(deep);
  rlyrt_object *four = i32(4);
  rlyrt_object *ints = CALL(m, "countdown", four);
  FAILS(m, "sum_list", &ints, 1, RLYRT_E_ARG, "argument 1 (%xs) of @sum_list", "expects float32, got int32");
  rlyrt_release(ints);
  rlyrt_release(four);

  /* Run-time errors of the model: match? with no clause, division by zero. */
  rlyrt_object *nil = NULL;
  CHECK_EQ(rlyrt_module_adt_new(m, "Nil", NULL, 0, &nil), RLYRT_OK);
  FAILS(m, "head", &nil, 1, RLYRT_E_MATCH, "model.relay:", "match? found no clause");
  rlyrt_object *seven = i32(7), *zero = i32(0), *mtwo = i32(-2);
  rlyrt_object *div0[2] = {seven, zero};
  FAILS(m, "idiv", div0, 2, RLYRT_E_RUNTIME, "model.relay:", "division by zero");
  /* The message stays until the next failure; a good call still works. */
  CHECK_MSG("division by zero");
  rlyrt_object *q = CALL(m, "idiv", seven, mtwo);
  CHECK_EQ(I32_OF(q), -3); /* truncated toward zero */
  rlyrt_release(q);

  rlyrt_release(nil);
  rlyrt_release(seven);
  rlyrt_release(zero);
  rlyrt_release(mtwo);
  rlyrt_release(al);
  rlyrt_release(sc);
  rlyrt_release(ho);
  rlyrt_release(tw);
  rlyrt_release(t3);
  rlyrt_release(iv2);
  rlyrt_release(v1);
  rlyrt_release(s);
  rlyrt_release(x32);
  rlyrt_release(xi);
  rlyrt_release(tup);
  rlyrt_release(x);
  rlyrt_release(y);
}

/* {==== Threads ====} */

/* What one round of calls computes; 4-byte fields only (no padding), so
** results compare with memcmp. */
typedef struct job_result {
  float main_out[6];
  float stats[6];  /* sum, max, then -v */
  float list_sum;
  float added;     /* @adder(a)(b) */
  float twice;     /* @apply_twice(@adder(a), b) */
  int32_t length;  /* @length(@countdown(n)) */
  int32_t bump_old, bump_new;
  int32_t quotient;
} job_result;

enum { NTHREADS = 8, NROUNDS = 300, NVARIANTS = 4 };

static rlyrt_object *job_call(const rlyrt_module *m, const char *name, rlyrt_object *const *args, int32_t n,
                              rlyrt_status *s) {
  rlyrt_object *out = NULL;
  if (*s != RLYRT_OK) return NULL;
  *s = rlyrt_module_call(m, name, args, n, &out);
  if (*s != RLYRT_OK) fprintf(stderr, "test_loader: %s in a thread: %s\n", name, rlyrt_last_error());
  return out;
}

static void copy_out(const rlyrt_object *v, void *dst, size_t n, rlyrt_status *s) {
  if (*s != RLYRT_OK) return;
  if (!v || v->kind != RLYRT_TENSOR || rlyrt_tensor_nbytes(RLYRT_AS_TENSOR(v)) != n) {
    *s = RLYRT_E_INTERNAL;
    fprintf(stderr, "test_loader: a result of the wrong size in a thread\n");
    return;
  }
  memcpy(dst, RLYRT_AS_TENSOR(v)->dl.data, n);
}

/* One round of calls of thread t's variant k: inputs depend only on t and k. */
static rlyrt_status run_job(const rlyrt_module *m, int t, int k, job_result *r) {
  rlyrt_status s = RLYRT_OK;
  memset(r, 0, sizeof *r);
  float x[6], y[3], v[4], items[64];
  for (int i = 0; i < 6; i++) x[i] = (float)(t + 1) * 0.25f * (float)(i - 2) + (float)k;
  for (int i = 0; i < 3; i++) y[i] = (float)(i * k) - 0.5f * (float)t;
  for (int i = 0; i < 4; i++) v[i] = (float)(t * 4 + i) * ((i & 1) ? -1.0f : 1.0f) + 0.125f * (float)k;
  int32_t nitems = 32 + 8 * k;
  for (int32_t i = 0; i < nitems; i++) items[i] = (float)(i + t) * 0.5f - (float)k;

  rlyrt_object *xt = tensor_of(F32, 2, SHAPE_23, x), *yt = tensor_of(F32, 1, SHAPE_3, y);
  rlyrt_object *vt = tensor_of(F32, 1, SHAPE_4, v);
  rlyrt_object *a = f32((float)t + 0.5f), *b = f32((float)k * 0.25f);
  rlyrt_object *n = i32(t + k), *d = i32(k + 1), *num = i32(100 * t - 7 * k - 3);
  rlyrt_object *list = f32_list(m, items, nitems);

  rlyrt_object *o_main = job_call(m, "main", (rlyrt_object *[]){xt, yt}, 2, &s);
  copy_out(o_main, r->main_out, sizeof r->main_out, &s);
  rlyrt_object *o_stats = job_call(m, "stats", &vt, 1, &s);
  if (s == RLYRT_OK && rlyrt_num_fields(o_stats) == 3) {
    copy_out(rlyrt_field(o_stats, 0), &r->stats[0], 4, &s);
    copy_out(rlyrt_field(o_stats, 1), &r->stats[1], 4, &s);
    copy_out(rlyrt_field(o_stats, 2), &r->stats[2], 16, &s);
  }
  rlyrt_object *o_sum = job_call(m, "sum_list", &list, 1, &s);
  copy_out(o_sum, &r->list_sum, 4, &s);
  rlyrt_object *add = job_call(m, "adder", &a, 1, &s);
  rlyrt_object *o_added = NULL;
  if (s == RLYRT_OK) {
    s = rlyrt_closure_call(add, &b, 1, &o_added);
    copy_out(o_added, &r->added, 4, &s);
  }
  rlyrt_object *o_twice = job_call(m, "apply_twice", (rlyrt_object *[]){add, b}, 2, &s);
  copy_out(o_twice, &r->twice, 4, &s);
  rlyrt_object *cd = job_call(m, "countdown", &n, 1, &s);
  rlyrt_object *o_len = job_call(m, "length", &cd, 1, &s);
  copy_out(o_len, &r->length, 4, &s);
  rlyrt_object *ref = job_call(m, "make_ref", &n, 1, &s);
  rlyrt_object *o_old = job_call(m, "bump", (rlyrt_object *[]){ref, d}, 2, &s);
  copy_out(o_old, &r->bump_old, 4, &s);
  if (s == RLYRT_OK) copy_out(rlyrt_ref_get(ref), &r->bump_new, 4, &s);
  rlyrt_object *o_q = job_call(m, "idiv", (rlyrt_object *[]){num, d}, 2, &s);
  copy_out(o_q, &r->quotient, 4, &s);

  rlyrt_object *all[] = {xt, yt, vt, a, b, n, d, num, list, o_main, o_stats, o_sum, add, o_added,
                         o_twice, cd, o_len, ref, o_old, o_q};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rlyrt_release(all[i]);
  return s;
}

typedef struct thread_arg {
  const rlyrt_module *m;
  int t;
  const job_result *expected; /* [NVARIANTS] */
  int errors, mismatches;
} thread_arg;

static pthread_barrier_t start_line;

static void *thread_main(void *p) {
  thread_arg *ta = p;
  pthread_barrier_wait(&start_line);
  for (int i = 0; i < NROUNDS; i++) {
    job_result r;
    int k = (i + ta->t) % NVARIANTS;
    if (run_job(ta->m, ta->t, k, &r) != RLYRT_OK) ta->errors++;
    else if (memcmp(&r, &ta->expected[k], sizeof r) != 0) ta->mismatches++;
  }
  /* A failure on this thread leaves its message here only. */
  rlyrt_object *nil = NULL, *out = NULL;
  if (rlyrt_module_adt_new(ta->m, "Nil", NULL, 0, &nil) != RLYRT_OK) ta->errors++;
  if (rlyrt_module_call(ta->m, "head", &nil, 1, &out) != RLYRT_E_MATCH ||
      !strstr(rlyrt_last_error(), "match? found no clause"))
    ta->errors++;
  rlyrt_release(out);
  rlyrt_release(nil);
  return NULL;
}

static void test_threads(const rlyrt_module *m) {
  static job_result expected[NTHREADS][NVARIANTS];
  for (int t = 0; t < NTHREADS; t++)
    for (int k = 0; k < NVARIANTS; k++) CHECK_EQ(run_job(m, t, k, &expected[t][k]), RLYRT_OK);
  /* Spot checks of the serial results, by hand: thread 0, variant 0: x =
  ** [-0.5, -0.25, 0, 0.25, 0.5, 0.75], y = [0, 0, 0] (relu(x * x)); a = 0.5,
  ** b = 0: 0.5 and 1; @length(@countdown(0)) = 0; @bump(ref(0), 1) = 0,
  ** then 1; idiv(-3, 1) = -3. */
  static const float main00[6] = {0.25f, 0.0625f, 0, 0.0625f, 0.25f, 0.5625f};
  CHECK(memcmp(expected[0][0].main_out, main00, sizeof main00) == 0);
  CHECK(expected[0][0].added == 0.5f);
  CHECK(expected[0][0].twice == 1.0f);
  CHECK_EQ(expected[0][0].length, 0);
  CHECK_EQ(expected[0][0].bump_old, 0);
  CHECK_EQ(expected[0][0].bump_new, 1);
  CHECK_EQ(expected[0][0].quotient, -3);
  /* Thread 7, variant 3: @length(@countdown(10)) = 10; idiv(700 - 21 - 3, 4) = 169. */
  CHECK_EQ(expected[7][3].length, 10);
  CHECK_EQ(expected[7][3].quotient, 169);

  pthread_t th[NTHREADS];
  thread_arg ta[NTHREADS];
  CHECK_EQ(pthread_barrier_init(&start_line, NULL, NTHREADS), 0);
  /* This thread's message must survive the threads' failures. */
  rlyrt_error(RLYRT_E_ARG, "main thread's message");
  int started = 0;
  for (int t = 0; t < NTHREADS; t++) {
    ta[t] = (thread_arg){m, t, expected[t], 0, 0};
    if (pthread_create(&th[t], NULL, thread_main, &ta[t]) != 0) break;
    started++;
  }
  CHECK_EQ(started, NTHREADS);
  if (started != NTHREADS) {
    fprintf(stderr, "test_loader: cannot start the threads\n");
    exit(2); /* the barrier would wait forever */
  }
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start_line);
  for (int t = 0; t < NTHREADS; t++) {
    CHECK_EQ(ta[t].errors, 0);
    CHECK_EQ(ta[t].mismatches, 0);
  }
  CHECK_STR(rlyrt_last_error(), "main thread's message");
}

/* {==== Arguments shared between threads ====}
** A server's pattern: one set of weights, built once, passed to every
** call from every thread. All argument objects below are shared by the 8
** threads at once, including a list, a closure, and arguments that end up
** inside the returned ADT value and closure; only x differs per thread. */

enum { SHARED_ROUNDS = 600 };

typedef struct shared_args {
  const rlyrt_module *m;
  rlyrt_object *w, *y, *v, *list, *add, *b; /* shared by all threads */
  int t;
  int errors, mismatches;
} shared_args;

/* What @main(x, y) returns: relu((x + y) * x). */
static void main_ref(const float *x, const float *y, float *out) {
  for (int i = 0; i < 6; i++) {
    float s = (x[i] + y[i % 3]) * x[i];
    out[i] = s > 0 ? s : 0;
  }
}

static bool tensor_is(const rlyrt_object *o, const float *want, int n) {
  return o && o->kind == RLYRT_TENSOR && rlyrt_tensor_nbytes(RLYRT_AS_TENSOR(o)) == sizeof(float) * (size_t)n &&
         memcmp(RLYRT_AS_TENSOR(o)->dl.data, want, sizeof(float) * (size_t)n) == 0;
}

static void *shared_main(void *p) {
  shared_args *a = p;
  const float *w = RLYRT_AS_TENSOR(a->w)->dl.data, *y = RLYRT_AS_TENSOR(a->y)->dl.data;
  float want_w[6], want_x[6], want_sum[6], x[6];
  main_ref(w, y, want_w);
  for (int i = 0; i < 6; i++) want_sum[i] = w[i] + y[i % 3];
  pthread_barrier_wait(&start_line);
  for (int r = 0; r < SHARED_ROUNDS; r++) {
    for (int i = 0; i < 6; i++) x[i] = (float)(a->t - i) * 0.5f + (float)(r % 7);
    main_ref(x, y, want_x);
    rlyrt_object *xt = tensor_of(F32, 2, SHAPE_23, x);
    rlyrt_status s = RLYRT_OK;
    /* Every argument shared, then only x private. */
    rlyrt_object *o1 = job_call(a->m, "main", (rlyrt_object *[]){a->w, a->y}, 2, &s);
    rlyrt_object *o2 = job_call(a->m, "main", (rlyrt_object *[]){xt, a->y}, 2, &s);
    rlyrt_object *o3 = job_call(a->m, "sum_list", &a->list, 1, &s);
    rlyrt_object *o4 = job_call(a->m, "apply_twice", (rlyrt_object *[]){a->add, a->b}, 2, &s);
    rlyrt_object *o5 = job_call(a->m, "stats", &a->v, 1, &s);
    /* The arguments come back inside a list and a closure. */
    rlyrt_object *o6 = job_call(a->m, "wrap", (rlyrt_object *[]){a->w, a->y}, 2, &s);
    rlyrt_object *o7 = NULL;
    if (s == RLYRT_OK) {
      rlyrt_object *list = rlyrt_field(o6, 0), *fn = rlyrt_field(o6, 1);
      if (rlyrt_field(list, 0) != a->w || rlyrt_field(rlyrt_field(list, 1), 0) != a->w) a->mismatches++;
      s = rlyrt_closure_call(fn, NULL, 0, &o7);
    }
    if (s != RLYRT_OK) {
      a->errors++;
    } else {
      static const float sum = 9, twice = 4.5f, st = 3.75f;
      if (!tensor_is(o1, want_w, 6) || !tensor_is(o2, want_x, 6) || !tensor_is(o7, want_sum, 6) ||
          !tensor_is(o3, &sum, 1) || !tensor_is(o4, &twice, 1) || !tensor_is(rlyrt_field(o5, 0), &st, 1))
        a->mismatches++;
    }
    rlyrt_object *all[] = {xt, o1, o2, o3, o4, o5, o6, o7};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rlyrt_release(all[i]);
  }
  return NULL;
}

static void test_shared_arguments(const rlyrt_module *m) {
  static const float w[6] = {1.5f, -2, 0.25f, 3, -0.5f, 4}, y[3] = {0.5f, 1, -1}, v[4] = {1.5f, -2, 4, 0.25f};
  static const float items[4] = {1, 2, 2.5f, 3.5f}; /* sum 9 */
  long live0 = atomic_load(&live_blocks);
  shared_args base = {m, tensor_of(F32, 2, SHAPE_23, w), tensor_of(F32, 1, SHAPE_3, y),
                      tensor_of(F32, 1, SHAPE_4, v), f32_list(m, items, 4), NULL, f32(1.5f), 0, 0, 0};
  /* @adder(1.5): @apply_twice(it, 1.5) = 4.5. */
  rlyrt_object *a = f32(1.5f);
  base.add = CALL(m, "adder", a);
  rlyrt_release(a);
  pthread_t th[NTHREADS];
  shared_args ta[NTHREADS];
  CHECK_EQ(pthread_barrier_init(&start_line, NULL, NTHREADS), 0);
  int started = 0;
  for (int t = 0; t < NTHREADS; t++) {
    ta[t] = base;
    ta[t].t = t;
    if (pthread_create(&th[t], NULL, shared_main, &ta[t]) != 0) break;
    started++;
  }
  if (started != NTHREADS) {
    fprintf(stderr, "test_loader: cannot start the threads\n");
    exit(2);
  }
  for (int t = 0; t < NTHREADS; t++) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&start_line);
  for (int t = 0; t < NTHREADS; t++) {
    CHECK_EQ(ta[t].errors, 0);
    CHECK_EQ(ta[t].mismatches, 0);
  }
  /* No count was lost or gained: each shared object is ours alone again. */
  rlyrt_object *objs[] = {base.w, base.y, base.v, base.list, base.add, base.b};
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) CHECK_EQ(rlyrt_refcount(objs[i]), 1);
  CHECK_EQ(rlyrt_refcount(rlyrt_field(base.list, 0)), 1);
  /* Shared once, shared for good: counts are now atomic. */
  CHECK(base.w->refcount < 0);
  CHECK(rlyrt_field(base.list, 1)->refcount < 0);
  for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) rlyrt_release(objs[i]);
  /* 8 x 600 rounds of 8 calls leave no memory behind. */
  CHECK_EQ(atomic_load(&live_blocks), live0);
}

/* {==== Two modules at once ====} */

static void test_two_modules(const rlyrt_module *m, const char *other_path, const char *path) {
  rlyrt_module *o = NULL;
  rlyrt_status s = rlyrt_module_load(other_path, &o);
  CHECK_EQ(s, RLYRT_OK);
  if (s != RLYRT_OK) {
    fprintf(stderr, "rlyrt_module_load(%s): %s\n", other_path, rlyrt_last_error());
    return;
  }
  test_info(o, "other");
  const rlyrt_module_info *mi = rlyrt_module_get_info(m), *oi = rlyrt_module_get_info(o);
  CHECK(mi != oi);
  const rlyrt_function_info *mf = rlyrt_module_find(m, "main"), *of = rlyrt_module_find(o, "main");
  CHECK(mf && of && mf != of && mf->code->fn != of->code->fn);
  /* Each has its own runtime copy: different error functions. */
  CHECK(mi->last_error != oi->last_error);

  rlyrt_object *x = tensor_of(F32, 2, SHAPE_23, MAIN_X), *y = tensor_of(F32, 1, SHAPE_3, MAIN_Y);
  rlyrt_object *r1 = CALL(m, "main", x, y), *r2 = CALL(o, "main", x, y);
  const float *d1 = DATA_OF(r1, F32, 6), *d2 = DATA_OF(r2, F32, 6);
  if (d1 && d2) {
    CHECK(memcmp(d1, MAIN_OUT, sizeof MAIN_OUT) == 0);
    CHECK(memcmp(d2, MAIN_OUT, sizeof MAIN_OUT) == 0);
  }
  /* Values cross: a result of one is an argument of the other. */
  rlyrt_object *half = f32(0.5f), *one = f32(1);
  rlyrt_object *add = CALL(m, "adder", half);
  rlyrt_object *r3 = CALL(o, "apply_twice", add, one);
  CHECK(F32_OF(r3) == 2.0f);
  static const float vals[3] = {1.5f, 2, -0.25f};
  rlyrt_object *l = f32_list(m, vals, 3);
  rlyrt_object *r4 = CALL(o, "sum_list", l);
  CHECK(F32_OF(r4) == 3.25f);
  /* Errors of either come back with their messages. */
  rlyrt_object *seven = i32(7), *zero = i32(0), *div0[2] = {seven, zero}, *nil = NULL;
  CHECK_EQ(rlyrt_module_adt_new(o, "Nil", NULL, 0, &nil), RLYRT_OK);
  FAILS(o, "idiv", div0, 2, RLYRT_E_RUNTIME, "division by zero");
  FAILS(m, "head", &nil, 1, RLYRT_E_MATCH, "match? found no clause");
  FAILS(o, "head", &nil, 1, RLYRT_E_MATCH, "match? found no clause");
  FAILS(o, "nope", div0, 2, RLYRT_E_ARG, "the module other has no function @nope");
  FAILS(o, "main", div0, 2, RLYRT_E_ARG, "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got int32");
  /* A closure of one that fails inside a call of the other: the message is
  ** the closure's, not a stale one of the other module's runtime copy. */
  rlyrt_object *div7 = CALL(m, "divider", seven);
  rlyrt_object *dz[2] = {div7, zero};
  rlyrt_error(RLYRT_E_ARG, "an older message");
  FAILS(o, "apply_int", dz, 2, RLYRT_E_RUNTIME, "model.relay:", "division by zero");
  rlyrt_release(div7);

  /* The same library loaded twice: two handles, both usable, freed apart. */
  rlyrt_module *again = NULL;
  s = rlyrt_module_load(path, &again);
  CHECK_EQ(s, RLYRT_OK);
  if (s == RLYRT_OK) {
    CHECK(rlyrt_module_get_info(again) == mi);
    rlyrt_object *r5 = CALL(again, "sum_list", l);
    CHECK(F32_OF(r5) == 3.25f);
    rlyrt_release(r5);
    rlyrt_module_free(again);
  }
  rlyrt_object *r6 = CALL(m, "sum_list", l); /* m still works */
  CHECK(F32_OF(r6) == 3.25f);
  rlyrt_release(r6);

  rlyrt_object *all[] = {x, y, r1, r2, half, one, add, r3, l, r4, seven, zero, nil};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) rlyrt_release(all[i]);
  rlyrt_module_free(o);
}

/* {==== Loading and wrapping ====} */

static void test_load_errors(const rlyrt_module *m) {
  rlyrt_module *bad = (rlyrt_module *)&bad; /* must be overwritten with NULL */
  CHECK_EQ(rlyrt_module_load("/nonexistent/dir/model.so", &bad), RLYRT_E_IO);
  CHECK(bad == NULL);
  CHECK_MSG("cannot load '/nonexistent/dir/model.so'");
  CHECK_EQ(rlyrt_module_load(NULL, &bad), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_load("model.so", NULL), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_wrap(NULL, &bad), RLYRT_E_IO);
  CHECK_MSG("the module description is NULL");
  /* A description of another ABI version. */
  rlyrt_module_info other_abi = *rlyrt_module_get_info(m);
  other_abi.abi = RLYRT_ABI_VERSION + 1;
  CHECK_EQ(rlyrt_module_wrap(&other_abi, &bad), RLYRT_E_IO);
  CHECK(bad == NULL);
  CHECK_MSG("ABI");
  CHECK(rlyrt_module_get_info(NULL) == NULL);
  rlyrt_module_free(NULL);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_loader MODEL.so OTHER.so\n");
    return 2;
  }
  /* Before any object exists. */
  rlyrt_set_allocator(&counting);

  rlyrt_module *m = NULL;
  rlyrt_status s = rlyrt_module_load(argv[1], &m);
  CHECK_EQ(s, RLYRT_OK);
  if (s != RLYRT_OK) {
    fprintf(stderr, "rlyrt_module_load(%s): %s: %s\n", argv[1], rlyrt_status_name(s), rlyrt_last_error());
    check_report("test_loader");
    return 1;
  }
  test_info(m, "model");
  test_tensors(m);
  test_tuples(m);
  test_lists(m);
  test_closures(m);
  test_refs(m);
  test_bad_calls(m);
  test_load_errors(m);
  test_threads(m);
  test_shared_arguments(m);
  test_two_modules(m, argv[2], argv[1]);
  rlyrt_module_free(m);

  /* Everything allocated was freed (and the modules did allocate through
  ** this allocator). */
  CHECK_EQ(atomic_load(&live_blocks), 0);
  CHECK(atomic_load(&all_blocks) > 100000);
  int rc = check_report("test_loader");
  fflush(stdout); /* before LeakSanitizer, which may end the process at exit */
  return rc;
}
