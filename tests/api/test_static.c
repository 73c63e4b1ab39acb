/* test_static.c: a compiled model linked statically into a plain C
** program, with no loader: tests/api/model.relay built by
** `relayc build model.relay -o DIR/libmodel.a --name model`, which writes
** DIR/model.h next to the library. The program includes that header and
** links libmodel.a (the model and its copy of the runtime) and -lm only.
**
** It calls the typed entry points (model_main, model_stats, model_idiv:
** DLTensors in, DLTensors out) on tensors on the stack whose data is static,
** checks the exact results (computed by hand from the comments of
** model.relay), that bad tensors give an error status and a message, and
** calls a function on values (@sum_list on a list) through model_module()
** and rlyrt_module_wrap. Malformed DLTensors (ndim > 0, shape NULL) are
** tried in a child process, so that a crash is a failed check rather than
** the end of the test. Prints "test_static: N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../unit/check.h"
#include "model.h"

/* A failure with status want whose message contains piece. */
#define CHECK_FAILS(expr, want, piece)                                                              \
  do {                                                                                              \
    rlyrt_status s_ = (expr);                                                                       \
    const char *m_ = rlyrt_last_error();                                                            \
    check_count++;                                                                                  \
    if (s_ != (want) || !strstr(m_, (piece))) {                                                     \
      check_failures++;                                                                             \
      fprintf(stderr, "%s:%d: %s: expected %s with \"%s\", got %s: \"%s\"\n", __FILE__, __LINE__, #expr, \
              rlyrt_status_name(want), (piece), rlyrt_status_name(s_), m_);                          \
    }                                                                                               \
  } while (0)

static DLTensor dl(void *data, DLDataType dt, int ndim, int64_t *shape) {
  DLTensor t;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = ndim;
  t.dtype = dt;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  return t;
}

static const DLDataType F32 = {kDLFloat, 32, 1};
static const DLDataType I32 = {kDLInt, 32, 1};

/* relu((x + y) * x): x + y = [[1.5, -1, -1], [-3.5, 6, -10]], times x =
** [[1.5, 2, -3], [14, 30, 60]]. */
static float x_data[6] = {1, -2, 3, -4, 5, -6};
static float y_data[3] = {0.5f, 1, -4};
static const float main_expected[6] = {1.5f, 2, 0, 14, 30, 60};

static void test_main(void) {
  int64_t xs[2] = {2, 3}, ys[1] = {3}, os[2] = {2, 3};
  float out_data[6];
  memset(out_data, 0xff, sizeof out_data);
  DLTensor x = dl(x_data, F32, 2, xs), y = dl(y_data, F32, 1, ys), out = dl(out_data, F32, 2, os);
  CHECK_EQ(model_main(&x, &y, &out, NULL), RLYRT_OK);
  CHECK(memcmp(out_data, main_expected, sizeof out_data) == 0);
  /* With the caller's workspace (the library is built with --no-fuse): the
  ** static memory plan of @main places its two intermediate tensors there
  ** (64 bytes each, as 2x3 floats round up to 64). A misaligned workspace
  ** is refused. */
  CHECK_EQ(MODEL_MAIN_WORKSPACE_SIZE, 128);
  static _Alignas(64) unsigned char ws[MODEL_MAIN_WORKSPACE_SIZE + 64];
  memset(ws, 0xee, sizeof ws);
  memset(out_data, 0, sizeof out_data);
  CHECK_EQ(model_main(&x, &y, &out, ws), RLYRT_OK);
  CHECK(memcmp(out_data, main_expected, sizeof out_data) == 0);
  CHECK(ws[0] != 0xee && ws[64] != 0xee); /* the intermediates were there */
  CHECK(ws[MODEL_MAIN_WORKSPACE_SIZE] == 0xee); /* and nothing past the stated size */
  CHECK_FAILS(model_main(&x, &y, &out, ws + 1), RLYRT_E_ARG, "model_main: the workspace is not aligned to 64 bytes");
  /* The inputs are not written. */
  CHECK(x_data[0] == 1 && y_data[2] == -4);

  /* Explicit compact strides are fine. */
  int64_t xstrides[2] = {3, 1};
  DLTensor xs_ok = x;
  xs_ok.strides = xstrides;
  memset(out_data, 0, sizeof out_data);
  CHECK_EQ(model_main(&xs_ok, &y, &out, NULL), RLYRT_OK);
  CHECK(memcmp(out_data, main_expected, sizeof out_data) == 0);

  /* Wrong shapes, of an input and of the output. */
  int64_t ys4[1] = {4}, xs32[2] = {3, 2}, os32[2] = {3, 2};
  float y4_data[4] = {0};
  DLTensor y4 = dl(y4_data, F32, 1, ys4);
  CHECK_FAILS(model_main(&x, &y4, &out, NULL), RLYRT_E_ARG,
              "argument 2 (%y) of @main expects Tensor[(3), float32], got Tensor[(4), float32]");
  DLTensor x32 = dl(x_data, F32, 2, xs32);
  CHECK_FAILS(model_main(&x32, &y, &out, NULL), RLYRT_E_ARG,
              "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got Tensor[(3, 2), float32]");
  DLTensor out32 = dl(out_data, F32, 2, os32);
  CHECK_FAILS(model_main(&x, &y, &out32, NULL), RLYRT_E_ARG,
              "model_main: out expects Tensor[(2, 3), float32], got Tensor[(3, 2), float32]");
  DLTensor x1 = dl(x_data, F32, 1, xs);
  CHECK_FAILS(model_main(&x1, &y, &out, NULL), RLYRT_E_ARG, "got Tensor[(2), float32]");
  /* Wrong dtype. */
  DLTensor xi = dl(x_data, I32, 2, xs);
  CHECK_FAILS(model_main(&xi, &y, &out, NULL), RLYRT_E_ARG,
              "argument 1 (%x) of @main expects Tensor[(2, 3), float32], got Tensor[(2, 3), int32]");
  /* NULL tensors and data; strides that are not row-major. */
  CHECK_FAILS(model_main(NULL, &y, &out, NULL), RLYRT_E_ARG, "model_main: x is NULL");
  CHECK_FAILS(model_main(&x, NULL, &out, NULL), RLYRT_E_ARG, "model_main: y is NULL");
  CHECK_FAILS(model_main(&x, &y, NULL, NULL), RLYRT_E_ARG, "model_main: out is NULL");
  DLTensor nodata = dl(NULL, F32, 2, xs);
  CHECK_FAILS(model_main(&nodata, &y, &out, NULL), RLYRT_E_ARG, "the tensor has no data");
  CHECK_FAILS(model_main(&x, &y, &nodata, NULL), RLYRT_E_ARG, "the tensor has no data");
  int64_t colmajor[2] = {1, 2};
  DLTensor xt = x;
  xt.strides = colmajor;
  CHECK_FAILS(model_main(&xt, &y, &out, NULL), RLYRT_E_ARG, "only compact row-major tensors");
  /* After all that, a good call still gives the same bytes. */
  memset(out_data, 0, sizeof out_data);
  CHECK_EQ(model_main(&x, &y, &out, NULL), RLYRT_OK);
  CHECK(memcmp(out_data, main_expected, sizeof out_data) == 0);
}

/* model_main(x, y, out, NULL) in a child process: it must return RLYRT_E_ARG with
** a message containing piece, and not crash. */
static void fails_in_child(int line, const DLTensor *x, const DLTensor *y, DLTensor *out, const char *piece) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  check_count++;
  if (pid < 0) {
    check_failures++;
    fprintf(stderr, "%s:%d: fork failed\n", __FILE__, line);
    return;
  }
  if (pid == 0) {
    rlyrt_status s = model_main(x, y, out, NULL);
    if (s == RLYRT_E_ARG && strstr(rlyrt_last_error(), piece)) _exit(0);
    fprintf(stderr, "%s:%d: expected RLYRT_E_ARG with \"%s\", got %s: \"%s\"\n", __FILE__, line, piece,
            rlyrt_status_name(s), rlyrt_last_error());
    fflush(stderr);
    _exit(1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    check_failures++;
    if (WIFSIGNALED(status))
      fprintf(stderr, "%s:%d: model_main crashed (signal %d) instead of returning RLYRT_E_ARG with \"%s\"\n",
              __FILE__, line, WTERMSIG(status), piece);
  }
}

static void test_malformed(void) {
  int64_t xs[2] = {2, 3}, ys[1] = {3}, os[2] = {2, 3};
  float out_data[6];
  DLTensor x = dl(x_data, F32, 2, xs), y = dl(y_data, F32, 1, ys), out = dl(out_data, F32, 2, os);
  /* The rank expected, no shape; another rank, no shape (the message would
  ** print the shape); the output without a shape. */
  DLTensor x_noshape = dl(x_data, F32, 2, NULL), x3_noshape = dl(x_data, F32, 3, NULL);
  DLTensor out_noshape = dl(out_data, F32, 2, NULL);
  fails_in_child(__LINE__, &x_noshape, &y, &out, "argument 1 (%x) of @main");
  fails_in_child(__LINE__, &x3_noshape, &y, &out, "argument 1 (%x) of @main");
  fails_in_child(__LINE__, &x, &y, &out_noshape, "model_main: out");
}

static void test_stats(void) {
  /* @stats([1.5, -2, 4, 0.25]) = (3.75, 4, [-1.5, 2, -4, -0.25]). */
  static float v_data[4] = {1.5f, -2, 4, 0.25f};
  static const float neg[4] = {-1.5f, 2, -4, -0.25f};
  int64_t vs[1] = {4}, ns[1] = {4};
  float sum = 0, max = 0, negs[4] = {0};
  DLTensor v = dl(v_data, F32, 1, vs);
  DLTensor o0 = dl(&sum, F32, 0, NULL), o1 = dl(&max, F32, 0, NULL), o2 = dl(negs, F32, 1, ns);
  CHECK_EQ(model_stats(&v, &o0, &o1, &o2, NULL), RLYRT_OK);
  CHECK(sum == 3.75f);
  CHECK(max == 4.0f);
  CHECK(memcmp(negs, neg, sizeof neg) == 0);
  /* The outputs in the wrong order: the third must be a vector. */
  CHECK_FAILS(model_stats(&v, &o0, &o2, &o1, NULL), RLYRT_E_ARG, "model_stats: out1 expects float32, got Tensor[(4), float32]");
  CHECK_FAILS(model_stats(&v, &o0, &o1, NULL, NULL), RLYRT_E_ARG, "model_stats: out2 is NULL");
}

static void test_idiv(void) {
  int32_t a = 7, b = -2, zero = 0, q = 0;
  DLTensor ta = dl(&a, I32, 0, NULL), tb = dl(&b, I32, 0, NULL), tz = dl(&zero, I32, 0, NULL);
  DLTensor tq = dl(&q, I32, 0, NULL);
  CHECK_EQ(model_idiv(&ta, &tb, &tq, NULL), RLYRT_OK);
  CHECK_EQ(q, -3);
  /* A run-time error of the model. */
  CHECK_FAILS(model_idiv(&ta, &tz, &tq, NULL), RLYRT_E_RUNTIME, "division by zero");
  /* A float32 where an int32 is expected. */
  float f = 1;
  DLTensor tf = dl(&f, F32, 0, NULL);
  CHECK_FAILS(model_idiv(&ta, &tf, &tq, NULL), RLYRT_E_ARG, "argument 2 (%b) of @idiv expects int32, got float32");
}

/* A function on values, through the module description. */
static void test_wrapped(void) {
  rlyrt_module *m = NULL;
  CHECK_EQ(rlyrt_module_wrap(model_module(), &m), RLYRT_OK);
  if (!m) return;
  CHECK_STR(rlyrt_module_get_info(m)->name, "model");
  const rlyrt_function_info *f = rlyrt_module_find(m, "@sum_list");
  CHECK(f != NULL);
  if (f) CHECK_STR(f->type, "fn (List[float32]) -> float32");

  /* @sum_list([1.5, 2, -0.25]) = 3.25, the list built by constructor names. */
  static const float vals[3] = {1.5f, 2, -0.25f};
  rlyrt_object *list = NULL;
  CHECK_EQ(rlyrt_module_adt_new(m, "Nil", NULL, 0, &list), RLYRT_OK);
  for (int i = 2; i >= 0 && list; i--) {
    rlyrt_tensor *h = rlyrt_tensor_new(F32, 0, NULL, false);
    CHECK(h != NULL);
    if (!h) break;
    *(float *)h->dl.data = vals[i];
    rlyrt_object *fields[2] = {&h->obj, list}, *cons = NULL;
    CHECK_EQ(rlyrt_module_adt_new(m, "Cons", fields, 2, &cons), RLYRT_OK);
    rlyrt_release(&h->obj);
    rlyrt_release(list);
    list = cons;
  }
  rlyrt_object *out = NULL;
  CHECK_EQ(rlyrt_module_call(m, "sum_list", &list, 1, &out), RLYRT_OK);
  CHECK(out && out->kind == RLYRT_TENSOR && *(const float *)RLYRT_AS_TENSOR(out)->dl.data == 3.25f);
  rlyrt_release(out);
  out = NULL;
  /* A list of the wrong element type: @countdown(3) is a List[int32]. */
  int32_t three = 3;
  rlyrt_tensor *n = rlyrt_tensor_new(I32, 0, NULL, false);
  CHECK(n != NULL);
  if (n) {
    *(int32_t *)n->dl.data = three;
    rlyrt_object *arg = &n->obj, *ints = NULL;
    CHECK_EQ(rlyrt_module_call(m, "countdown", &arg, 1, &ints), RLYRT_OK);
    CHECK_STR(rlyrt_adt_ctor(ints), "Cons");
    CHECK_FAILS(rlyrt_module_call(m, "sum_list", &ints, 1, &out), RLYRT_E_ARG, "expects float32, got int32");
    CHECK(out == NULL);
    rlyrt_release(ints);
    rlyrt_release(&n->obj);
  }
  rlyrt_release(list);
  rlyrt_module_free(m);
}

int main(void) {
  test_main();
  test_malformed();
  test_stats();
  test_idiv();
  test_wrapped();
  return check_report("test_static");
}
