/* test_frames.c: the intermediates of loops and recursions live in frames
** (the thread's frame stack), not on the heap.
**
** usage: test_frames FRAMES.so [LEVEL] (tests/api/frames.relay built by
** relayc build at -O2 and at -O0, LEVEL saying which for the messages:
** the checks are the same; tests/tools/frames_test.sh).
**
** Every allocation goes through a counting allocator. A loop's step
** allocates nothing: @loop, @gates (whose step splits a tensor, its parts
** read by kernels or, at -O0, by projection statements), two globals that
** jump to each other (@even, @odd) and three (@r0, @r1, @r2: one frame
** for the group, tensors passed from member to member in state slots)
** make as many allocations for 1,000 steps as for 10; @swap, which passes
** a parameter on as the other, copies it out each step and nothing else.
** A tree recursion allocates only the tensor each call returns. Every
** allocation of a call failing in turn gives RLYRT_E_NOMEM and leaks
** nothing. The results equal the same computation done here in C, and
** nothing is live at the end. */
#include <math.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "relayc/runtime.h"
#include "counting.h"

/* An allocator that fails once `budget` allocations have been made
** (-1: never), over the counting one. */
static atomic_long budget = -1;

static void *budget_alloc(void *ctx, size_t size, size_t align) {
  long b = atomic_load(&budget);
  if (b == 0) return NULL;
  if (b > 0) atomic_fetch_sub(&budget, 1);
  return count_alloc(ctx, size, align);
}

static const rlyrt_allocator budgeted = {budget_alloc, count_free, NULL};

enum { H = 64 };

static rlyrt_object *scalar_i32(int32_t v) {
  rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLInt, 32, 1}, 0, NULL, false);
  *(int32_t *)t->dl.data = v;
  return &t->obj;
}

static rlyrt_object *scalar_f32(float v) {
  rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 0, NULL, false);
  *(float *)t->dl.data = v;
  return &t->obj;
}

static rlyrt_object *tensor_f32(int ndim, const int64_t *shape, const float *data, size_t n) {
  rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, ndim, shape, false);
  memcpy(t->dl.data, data, n * sizeof(float));
  return &t->obj;
}

static const float *data_of(const rlyrt_object *o) { return (const float *)RLYRT_AS_TENSOR(o)->dl.data; }

/* The largest |a[i] - b[i]| / (1 + |b[i]|). */
static double max_err(const float *a, const float *b, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]) / (1 + fabs((double)b[i]));
    if (d > e) e = d;
  }
  return e;
}

static float h0[H], w[H * H];

/* @loop(0, n, h0, w), and its allocations. */
static rlyrt_object *run_loop(const rlyrt_module *m, int n, long *allocs) {
  static const int64_t hs[] = {1, H}, ws[] = {H, H};
  rlyrt_object *args[] = {scalar_i32(0), scalar_i32(n), tensor_f32(2, hs, h0, H), tensor_f32(2, ws, w, H * H)};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  rlyrt_status s = rlyrt_module_call(m, "loop", args, 4, &r);
  *allocs = atomic_load(&all_blocks) - before;
  if (s != RLYRT_OK) fprintf(stderr, "loop: %s\n", rlyrt_last_error());
  CHECK_EQ(s, RLYRT_OK);
  for (int i = 0; i < 4; i++) rlyrt_release(args[i]);
  return r;
}

static void loop_ref(int n, float *h) {
  memcpy(h, h0, sizeof h0);
  for (int t = 0; t < n; t++) {
    float c[H];
    for (int j = 0; j < H; j++) {
      float a = 0;
      for (int k = 0; k < H; k++) a += h[k] * w[j * H + k];
      c[j] = tanhf(a) + h[j];
    }
    memcpy(h, c, sizeof c);
  }
}

static void test_loop(const rlyrt_module *m) {
  long a10, a1000;
  float ref[H];
  rlyrt_object *r10 = run_loop(m, 10, &a10);
  rlyrt_object *r1000 = run_loop(m, 1000, &a1000);
  if (!r10 || !r1000) return;
  loop_ref(10, ref);
  CHECK(max_err(data_of(r10), ref, H) < 1e-4);
  loop_ref(1000, ref);
  CHECK(max_err(data_of(r1000), ref, H) < 1e-3);
  /* The steps allocate nothing: the same count for 10 and 1,000 steps. */
  CHECK_EQ(a1000, a10);
  CHECK(a10 <= 4);
  rlyrt_release(r10);
  rlyrt_release(r1000);
}

static rlyrt_object *run_swap(const rlyrt_module *m, int n, long *allocs) {
  static const int64_t hs[] = {1, H};
  float c0[H];
  for (int i = 0; i < H; i++) c0[i] = (float)i / H;
  rlyrt_object *args[] = {scalar_i32(0), scalar_i32(n), tensor_f32(2, hs, h0, H), tensor_f32(2, hs, c0, H)};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  rlyrt_status s = rlyrt_module_call(m, "swap", args, 4, &r);
  *allocs = atomic_load(&all_blocks) - before;
  if (s != RLYRT_OK) fprintf(stderr, "swap: %s\n", rlyrt_last_error());
  CHECK_EQ(s, RLYRT_OK);
  for (int i = 0; i < 4; i++) rlyrt_release(args[i]);
  return r;
}

static void swap_ref(int n, float *h, float *c) {
  memcpy(h, h0, sizeof h0);
  for (int i = 0; i < H; i++) c[i] = (float)i / H;
  for (int t = 0; t < n; t++)
    for (int i = 0; i < H; i++) {
      float h2 = tanhf(c[i]) + h[i];
      c[i] = h[i];
      h[i] = h2;
    }
}

static void test_swap(const rlyrt_module *m) {
  float h[H], c[H];
  long a10, a1000;
  rlyrt_object *r10 = run_swap(m, 10, &a10);
  rlyrt_object *r1000 = run_swap(m, 1000, &a1000);
  if (!r10 || !r1000) return;
  swap_ref(10, h, c);
  CHECK(max_err(data_of(rlyrt_field(r10, 0)), h, H) < 1e-5);
  CHECK(max_err(data_of(rlyrt_field(r10, 1)), c, H) < 1e-5);
  swap_ref(1000, h, c);
  CHECK(max_err(data_of(rlyrt_field(r1000, 0)), h, H) < 1e-4);
  CHECK(max_err(data_of(rlyrt_field(r1000, 1)), c, H) < 1e-4);
  /* The parameter passed on as the other one is copied out of its slot
  ** each step (it is kept), so 1,000 steps make about 990 more. The step
  ** itself allocates nothing else. */
  CHECK(a1000 - a10 <= 990);
  CHECK(a1000 - a10 >= 980);
  rlyrt_release(r10);
  rlyrt_release(r1000);
}

static float gwe[128 * 32], gw[64 * 128];

static rlyrt_object *run_gates(const rlyrt_module *m, int n, long *allocs) {
  static const int64_t hs[] = {1, 32}, wes[] = {128, 32}, ws[] = {64, 128};
  rlyrt_object *args[] = {scalar_i32(0),          scalar_i32(n),
                          tensor_f32(2, hs, h0, 32), tensor_f32(2, hs, h0 + 32, 32),
                          tensor_f32(2, wes, gwe, 128 * 32), tensor_f32(2, ws, gw, 64 * 128)};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  rlyrt_status s = rlyrt_module_call(m, "gates", args, 6, &r);
  *allocs = atomic_load(&all_blocks) - before;
  if (s != RLYRT_OK) fprintf(stderr, "gates: %s\n", rlyrt_last_error());
  CHECK_EQ(s, RLYRT_OK);
  for (int i = 0; i < 6; i++) rlyrt_release(args[i]);
  return r;
}

static void gates_ref(int n, float *a, float *b) {
  memcpy(a, h0, 32 * sizeof(float));
  memcpy(b, h0 + 32, 32 * sizeof(float));
  for (int t = 0; t < n; t++) {
    float e[128], g[64];
    for (int j = 0; j < 128; j++) {
      float acc = 0;
      for (int k = 0; k < 32; k++) acc += a[k] * gwe[j * 32 + k];
      e[j] = acc;
    }
    for (int j = 0; j < 64; j++) {
      float acc = 0;
      for (int k = 0; k < 128; k++) acc += e[k] * gw[j * 128 + k];
      g[j] = acc;
    }
    for (int i = 0; i < 32; i++) {
      a[i] = tanhf(g[i]) + a[i];
      b[i] = 1 / (1 + expf(-g[32 + i])) + b[i];
    }
  }
}

/* The split's tuple is in the frame: from -O1 its parts are read inside
** the kernels; at -O0 the projections are statements of the body, whose
** variables are its fields in the frame (they only reach kernels). */
static void test_gates(const rlyrt_module *m) {
  float a[32], b[32];
  long a10, a1000;
  rlyrt_object *r10 = run_gates(m, 10, &a10);
  rlyrt_object *r1000 = run_gates(m, 1000, &a1000);
  if (!r10 || !r1000) return;
  gates_ref(10, a, b);
  CHECK(max_err(data_of(rlyrt_field(r10, 0)), a, 32) < 1e-4);
  CHECK(max_err(data_of(rlyrt_field(r10, 1)), b, 32) < 1e-4);
  gates_ref(1000, a, b);
  CHECK(max_err(data_of(rlyrt_field(r1000, 0)), a, 32) < 1e-3);
  CHECK(max_err(data_of(rlyrt_field(r1000, 1)), b, 32) < 1e-3);
  if (a1000 != a10) fprintf(stderr, "gates: %ld allocations for 10 steps, %ld for 1000\n", a10, a1000);
  CHECK_EQ(a1000, a10);
  rlyrt_release(r10);
  rlyrt_release(r1000);
}

static float u[H * H];

/* @NAME(0, n, x0, y0, w, u) of a group of globals that tail-call each
** other (even/odd, r0/r1/r2), and its allocations. */
static rlyrt_object *run_group(const rlyrt_module *m, const char *name, int n, long *allocs) {
  static const int64_t hs[] = {1, H}, ws[] = {H, H};
  float y0[H];
  for (int i = 0; i < H; i++) y0[i] = (float)i / H;
  rlyrt_object *args[] = {scalar_i32(0),          scalar_i32(n),           tensor_f32(2, hs, h0, H),
                          tensor_f32(2, hs, y0, H), tensor_f32(2, ws, w, H * H), tensor_f32(2, ws, u, H * H)};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  rlyrt_status s = rlyrt_module_call(m, name, args, 6, &r);
  *allocs = atomic_load(&all_blocks) - before;
  if (s != RLYRT_OK) fprintf(stderr, "%s: %s\n", name, rlyrt_last_error());
  CHECK_EQ(s, RLYRT_OK);
  for (int i = 0; i < 6; i++) rlyrt_release(args[i]);
  return r;
}

/* o = dense(x, m) (m: H x H, rows are outputs). */
static void dense_ref(const float *x, const float *m, float *o) {
  for (int j = 0; j < H; j++) {
    float a = 0;
    for (int k = 0; k < H; k++) a += x[k] * m[j * H + k];
    o[j] = a;
  }
}

static float sigmoid_ref(float x) { return 1 / (1 + expf(-x)); }

/* @even/@odd from @even: even (h, c) <- (tanh(dense(h, w)) + c, h), odd
** (h, c) <- (h, sigmoid(dense(c, u)) * h). */
static void even_odd_ref(int n, float *h, float *c) {
  memcpy(h, h0, sizeof h0);
  for (int i = 0; i < H; i++) c[i] = (float)i / H;
  for (int t = 0; t < n; t++) {
    float a[H];
    if (t % 2 == 0) {
      dense_ref(h, w, a);
      for (int i = 0; i < H; i++) {
        float h2 = tanhf(a[i]) + c[i];
        c[i] = h[i];
        h[i] = h2;
      }
    } else {
      dense_ref(c, u, a);
      for (int i = 0; i < H; i++) c[i] = sigmoid_ref(a[i]) * h[i];
    }
  }
}

/* Two members that jump to each other, passing tensors on as the other
** member's parameters: every parameter is in a state slot of the group's
** one frame, so 1,000 steps allocate as much as 10 (the result, its two
** tensors copied out of their slots, the frame). */
static void test_even_odd(const rlyrt_module *m) {
  float h[H], c[H];
  long a10, a1000;
  rlyrt_object *r10 = run_group(m, "even", 10, &a10);
  rlyrt_object *r1000 = run_group(m, "even", 1000, &a1000);
  if (!r10 || !r1000) return;
  even_odd_ref(10, h, c);
  CHECK(max_err(data_of(rlyrt_field(r10, 0)), h, H) < 1e-4);
  CHECK(max_err(data_of(rlyrt_field(r10, 1)), c, H) < 1e-4);
  even_odd_ref(1000, h, c);
  CHECK(max_err(data_of(rlyrt_field(r1000, 0)), h, H) < 1e-3);
  CHECK(max_err(data_of(rlyrt_field(r1000, 1)), c, H) < 1e-3);
  if (a1000 != a10) fprintf(stderr, "even: %ld allocations for 10 steps, %ld for 1000\n", a10, a1000);
  CHECK_EQ(a1000, a10);
  CHECK(a10 <= 5);
  rlyrt_release(r10);
  rlyrt_release(r1000);
}

/* @r0/@r1/@r2 from @r0: r0 (x, y) -> r1 (tanh(dense(x, w)), x); r1 (x, y)
** -> r2 (y, sigmoid(dense(x, u)) + y); r2 (x, y) -> r2 (tanh(x) * y, y) on
** odd t, r0 (y, x) on even t; the result x + y. */
static void cycle_ref(int n, float *out) {
  float x[H], y[H], a[H];
  memcpy(x, h0, sizeof h0);
  for (int i = 0; i < H; i++) y[i] = (float)i / H;
  int at = 0;
  for (int t = 0; t < n; t++) {
    if (at == 0) {
      dense_ref(x, w, a);
      for (int i = 0; i < H; i++) {
        y[i] = x[i];
        x[i] = tanhf(a[i]);
      }
      at = 1;
    } else if (at == 1) {
      dense_ref(x, u, a);
      for (int i = 0; i < H; i++) {
        float c = sigmoid_ref(a[i]) + y[i];
        x[i] = y[i];
        y[i] = c;
      }
      at = 2;
    } else if (t % 2 == 1) {
      for (int i = 0; i < H; i++) x[i] = tanhf(x[i]) * y[i];
    } else {
      for (int i = 0; i < H; i++) {
        float s = x[i];
        x[i] = y[i];
        y[i] = s;
      }
      at = 0;
    }
  }
  for (int i = 0; i < H; i++) out[i] = x[i] + y[i];
}

/* Three members in a cycle, one of them also jumping to itself: the same
** count for 10 and 1,000 steps. */
static void test_cycle(const rlyrt_module *m) {
  float ref[H];
  long a10, a1000;
  rlyrt_object *r10 = run_group(m, "r0", 10, &a10);
  rlyrt_object *r1000 = run_group(m, "r0", 1000, &a1000);
  if (!r10 || !r1000) return;
  cycle_ref(10, ref);
  CHECK(max_err(data_of(r10), ref, H) < 1e-4);
  cycle_ref(1000, ref);
  CHECK(max_err(data_of(r1000), ref, H) < 1e-3);
  if (a1000 != a10) fprintf(stderr, "r0: %ld allocations for 10 steps, %ld for 1000\n", a10, a1000);
  CHECK_EQ(a1000, a10);
  CHECK(a10 <= 4);
  rlyrt_release(r10);
  rlyrt_release(r1000);
}

static void tree_ref(int d, float k, const float *x, float *out) {
  if (d == 0) {
    for (int i = 0; i < H; i++) out[i] = 1 / (1 + expf(-(x[i] * k)));
    return;
  }
  float l[H], r[H];
  tree_ref(d - 1, k * 2, x, l);
  tree_ref(d - 1, k * 2 + 1, x, r);
  for (int i = 0; i < H; i++) out[i] = tanhf(tanhf(l[i]) + tanhf(r[i]));
}

static void test_tree(const rlyrt_module *m) {
  static const int64_t hs[] = {1, H};
  float x[H], ref[H];
  for (int i = 0; i < H; i++) x[i] = (float)(i - 32) / 256;
  const int d = 7;
  rlyrt_object *args[] = {scalar_i32(d), scalar_f32(0.5f), tensor_f32(2, hs, x, H)};
  rlyrt_object *r = NULL;
  long before = atomic_load(&all_blocks);
  rlyrt_status s = rlyrt_module_call(m, "tree", args, 3, &r);
  long allocs = atomic_load(&all_blocks) - before;
  if (s != RLYRT_OK) fprintf(stderr, "tree: %s\n", rlyrt_last_error());
  CHECK_EQ(s, RLYRT_OK);
  for (int i = 0; i < 3; i++) rlyrt_release(args[i]);
  if (!r) return;
  tree_ref(d, 0.5f, x, ref);
  CHECK(max_err(data_of(r), ref, H) < 1e-5);
  /* One tensor per call (its result), 2^(d+1) - 1 calls, and a chunk or
  ** two of the frame stack: the intermediates of a node (tanh, tanh, add)
  ** and of a leaf (multiply) are in its frame. */
  long calls = (1L << (d + 1)) - 1;
  if (allocs > calls + 4) fprintf(stderr, "tree: %ld allocations for %ld calls\n", allocs, calls);
  CHECK(allocs <= calls + 4);
  CHECK(allocs >= calls);
  rlyrt_release(r);
}

/* Every function with its allocations failing from the first on: a
** failure is RLYRT_E_NOMEM with a message, never a crash, and nothing
** stays allocated (frames popped, parameters copied out of their slots
** released); with enough allocations the call succeeds. */
static void test_out_of_memory(const rlyrt_module *m) {
  static const int64_t hs[] = {1, H}, ws[] = {H, H}, gs[] = {1, 32}, wes[] = {128, 32}, gws[] = {64, 128};
  static const char *const names[] = {"loop", "swap", "tree", "gates", "even", "r0"};
  for (int f = 0; f < 6; f++) {
    bool failed = false, passed = false;
    for (long k = 0; k < 64 && !passed; k++) {
      rlyrt_object *args[6];
      int n;
      if (f >= 4) {
        float y0[H];
        for (int i = 0; i < H; i++) y0[i] = (float)i / H;
        rlyrt_object *a[] = {scalar_i32(0),          scalar_i32(5),           tensor_f32(2, hs, h0, H),
                             tensor_f32(2, hs, y0, H), tensor_f32(2, ws, w, H * H), tensor_f32(2, ws, u, H * H)};
        n = 6;
        memcpy(args, a, sizeof a);
      } else if (f == 3) {
        rlyrt_object *a[] = {scalar_i32(0), scalar_i32(3), tensor_f32(2, gs, h0, 32), tensor_f32(2, gs, h0 + 32, 32),
                             tensor_f32(2, wes, gwe, 128 * 32), tensor_f32(2, gws, gw, 64 * 128)};
        n = 6;
        memcpy(args, a, sizeof a);
      } else if (f == 2) {
        rlyrt_object *a[] = {scalar_i32(2), scalar_f32(0.5f), tensor_f32(2, hs, h0, H)};
        n = 3;
        memcpy(args, a, sizeof a);
      } else {
        rlyrt_object *a[] = {scalar_i32(0), scalar_i32(3), tensor_f32(2, hs, h0, H),
                             f == 0 ? tensor_f32(2, ws, w, H * H) : tensor_f32(2, hs, h0, H)};
        n = 4;
        memcpy(args, a, sizeof a);
      }
      long live = atomic_load(&live_blocks);
      rlyrt_object *r = NULL;
      atomic_store(&budget, k);
      rlyrt_status s = rlyrt_module_call(m, names[f], args, n, &r);
      atomic_store(&budget, -1);
      if (s == RLYRT_OK) {
        passed = true;
        rlyrt_release(r);
      } else {
        failed = true;
        CHECK_EQ(s, RLYRT_E_NOMEM);
        CHECK(r == NULL && strstr(rlyrt_last_error(), "memory") != NULL);
      }
      CHECK_EQ(atomic_load(&live_blocks), live);
      for (int i = 0; i < n; i++) rlyrt_release(args[i]);
    }
    CHECK(failed && passed);
  }
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: test_frames FRAMES.so [LEVEL]\n");
    return 2;
  }
  rlyrt_set_allocator(&budgeted);
  uint32_t seed = 12345;
  for (int i = 0; i < H; i++) {
    seed = seed * 1664525u + 1013904223u;
    h0[i] = (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
  }
  for (int i = 0; i < H * H; i++) {
    seed = seed * 1664525u + 1013904223u;
    w[i] = ((float)(seed >> 8) / (float)(1u << 24) - 0.5f) * 0.25f;
  }
  for (int i = 0; i < 128 * 32; i++) {
    seed = seed * 1664525u + 1013904223u;
    gwe[i] = ((float)(seed >> 8) / (float)(1u << 24) - 0.5f) * 0.25f;
  }
  for (int i = 0; i < 64 * 128; i++) {
    seed = seed * 1664525u + 1013904223u;
    gw[i] = ((float)(seed >> 8) / (float)(1u << 24) - 0.5f) * 0.125f;
  }
  for (int i = 0; i < H * H; i++) {
    seed = seed * 1664525u + 1013904223u;
    u[i] = ((float)(seed >> 8) / (float)(1u << 24) - 0.5f) * 0.25f;
  }
  rlyrt_module *m = NULL;
  if (rlyrt_module_load(argv[1], &m) != RLYRT_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], rlyrt_last_error());
    return 1;
  }
  test_loop(m);
  test_swap(m);
  test_tree(m);
  test_gates(m);
  test_even_odd(m);
  test_cycle(m);
  test_out_of_memory(m);
  rlyrt_module_free(m);
  CHECK_EQ(atomic_load(&live_blocks), 0);
  char name[64];
  snprintf(name, sizeof name, "test_frames %s", argc == 3 ? argv[2] : "");
  return check_report(name);
}
