/* test_threads.c: one loaded module shared by 8 calling threads, each call
** splitting its kernels over 2 threads (tests/api/threads.relay: a GEMM
** with an epilogue, a GEMV, a batch_matmul, an elementwise chain, all big
** enough to split).
**
** usage: test_threads MODULE.so   (built with relayc build --threads 2)
**
** Checks: the thread count the build recorded (2) and the C API that
** changes it (rlyrt_module_set_threads, rlyrt_module_get_threads, and
** their errors); the results at 1 thread against loops in double here
** (within float32 accumulation error); with 1 thread the process starts no
** thread; then 8 threads call the module at once, 25 times each, with the
** same (shared) arguments at 2 threads per call, and every result must be
** the 1-thread result byte for byte; the module's pool has then exactly one
** worker (made once, not per call); 0 (one per CPU) gives the same bytes
** too. Every allocation goes through a counting allocator: nothing may be
** left at the end. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/check.h"
#include "counting.h"
#include "relayc/runtime.h"

enum { NARGS = 9, NOUT = 4, NCALLERS = 8, ROUNDS = 25 };

static const int64_t shapes[NARGS][3] = {{200, 300}, {400, 300}, {400}, {1, 2048}, {1024, 2048},
                                         {4, 64, 128}, {4, 96, 128}, {256, 512}, {512}};
static const int ranks[NARGS] = {2, 2, 1, 2, 2, 3, 3, 2, 1};

static int64_t numel(int i) {
  int64_t n = 1;
  for (int d = 0; d < ranks[i]; d++) n *= shapes[i][d];
  return n;
}

/* Numbers in [-1, 1) from a fixed sequence. */
static float next(uint32_t *s) {
  *s = *s * 1664525u + 1013904223u;
  return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static const float *data(const rlyrt_object *v) { return (const float *)RLYRT_AS_TENSOR(v)->dl.data; }
static const float *field(const rlyrt_object *v, int i) { return data(rlyrt_field(v, i)); }
static size_t field_bytes(const rlyrt_object *v, int i) { return rlyrt_tensor_nbytes(RLYRT_AS_TENSOR(rlyrt_field(v, i))); }

/* How far a from the double result r, relative to the scale of the sum. */
static int far(double a, double r, double scale) { return !(fabs(a - r) <= 1e-5 * fabs(r) + 1e-5 * scale); }

/* The four results checked against loops in double; the count of wrong elements. */
static int check_values(rlyrt_object *const *in, const rlyrt_object *out) {
  const float *x = data(in[0]), *w = data(in[1]), *b = data(in[2]), *v = data(in[3]), *u = data(in[4]);
  const float *p = data(in[5]), *q = data(in[6]), *e = data(in[7]), *f = data(in[8]);
  int wrong = 0;
  const float *o = field(out, 0);
  for (int i = 0; i < 200; i++)
    for (int j = 0; j < 400; j++) {
      double s = 0, a = 0;
      for (int k = 0; k < 300; k++) s += (double)x[i * 300 + k] * w[j * 300 + k], a += fabs(x[i * 300 + k] * w[j * 300 + k]);
      s += b[j];
      wrong += far(o[i * 400 + j], s > 0 ? s : 0, a);
    }
  o = field(out, 1);
  for (int j = 0; j < 1024; j++) {
    double s = 0, a = 0;
    for (int k = 0; k < 2048; k++) s += (double)v[k] * u[j * 2048 + k], a += fabs(v[k] * u[j * 2048 + k]);
    wrong += far(o[j], s, a);
  }
  o = field(out, 2);
  for (int t = 0; t < 4; t++)
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 96; j++) {
        double s = 0, a = 0;
        for (int k = 0; k < 128; k++) {
          double m = (double)p[(t * 64 + i) * 128 + k] * q[(t * 96 + j) * 128 + k];
          s += m, a += fabs(m);
        }
        wrong += far(o[(t * 64 + i) * 96 + j], s, a);
      }
  o = field(out, 3);
  for (int i = 0; i < 256; i++)
    for (int j = 0; j < 512; j++) wrong += far(o[i * 512 + j], tanh((double)e[i * 512 + j] * f[j] + 1), 1);
  return wrong;
}

/* Whether two results have the same bytes. */
static int same(const rlyrt_object *a, const rlyrt_object *b) {
  for (int i = 0; i < NOUT; i++)
    if (field_bytes(a, i) != field_bytes(b, i) || memcmp(field(a, i), field(b, i), field_bytes(a, i))) return 0;
  return 1;
}

/* The threads of this process (/proc/self/task). */
static int os_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

typedef struct Caller {
  const rlyrt_module *m;
  rlyrt_object *const *args;
  const rlyrt_object *ref;
  int failed, differ;
} Caller;

static void *caller_main(void *arg) {
  Caller *c = arg;
  for (int r = 0; r < ROUNDS; r++) {
    rlyrt_object *out = NULL;
    if (rlyrt_module_call(c->m, "main", c->args, NARGS, &out) != RLYRT_OK) {
      c->failed++;
      continue;
    }
    if (!same(out, c->ref)) c->differ++;
    rlyrt_release(out);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_threads MODULE.so\n");
    return 2;
  }
  rlyrt_set_allocator(&counting);
  rlyrt_module *m = NULL;
  if (rlyrt_module_load(argv[1], &m) != RLYRT_OK) {
    fprintf(stderr, "%s\n", rlyrt_last_error());
    return 1;
  }
  /* The count the build recorded, and the API that changes it. */
  CHECK_EQ(rlyrt_module_get_threads(m), 2);
  CHECK_EQ(rlyrt_module_set_threads(m, -1), RLYRT_E_ARG);
  CHECK(strstr(rlyrt_last_error(), "-1 threads") != NULL);
  CHECK_EQ(rlyrt_module_set_threads(m, RLYRT_MAX_THREADS + 1), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_set_threads(NULL, 2), RLYRT_E_ARG);
  CHECK_EQ(rlyrt_module_get_threads(NULL), 1);
  CHECK_EQ(rlyrt_module_get_threads(m), 2);
  CHECK_EQ(rlyrt_module_set_threads(m, 1), RLYRT_OK);
  CHECK_EQ(rlyrt_module_get_threads(m), 1);

  rlyrt_object *args[NARGS];
  uint32_t seed = 12345;
  for (int i = 0; i < NARGS; i++) {
    rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, ranks[i], shapes[i], false);
    float *d = (float *)t->dl.data;
    for (int64_t k = 0; k < numel(i); k++) d[k] = next(&seed);
    args[i] = &t->obj;
  }
  /* One thread: the reference results, and no thread started. */
  int before = os_threads();
  rlyrt_object *ref = NULL;
  CHECK_EQ(rlyrt_module_call(m, "main", args, NARGS, &ref), RLYRT_OK);
  if (!ref) return check_report("test_threads");
  CHECK_EQ(check_values(args, ref), 0);
  rlyrt_object *again = NULL;
  CHECK_EQ(rlyrt_module_call(m, "main", args, NARGS, &again), RLYRT_OK);
  CHECK(again && same(again, ref));
  rlyrt_release(again);
  CHECK_EQ(os_threads(), before);

  /* Eight callers, two threads each. */
  CHECK_EQ(rlyrt_module_set_threads(m, 2), RLYRT_OK);
  pthread_t th[NCALLERS];
  Caller callers[NCALLERS];
  for (int k = 0; k < NCALLERS; k++) {
    callers[k] = (Caller){m, args, ref, 0, 0};
    CHECK_EQ(pthread_create(&th[k], NULL, caller_main, &callers[k]), 0);
  }
  for (int k = 0; k < NCALLERS; k++) {
    pthread_join(th[k], NULL);
    CHECK_EQ(callers[k].failed, 0);
    CHECK_EQ(callers[k].differ, 0);
  }
  /* The module's pool: one worker (2 threads a call), made once. */
  CHECK_EQ(os_threads(), before + 1);

  /* One per CPU, and three: the same bytes. */
  for (int32_t n = 0; n <= 3; n += 3) {
    CHECK_EQ(rlyrt_module_set_threads(m, n), RLYRT_OK);
    CHECK_EQ(rlyrt_module_get_threads(m), n);
    rlyrt_object *out = NULL;
    CHECK_EQ(rlyrt_module_call(m, "main", args, NARGS, &out), RLYRT_OK);
    CHECK(out && same(out, ref));
    rlyrt_release(out);
  }

  rlyrt_release(ref);
  for (int i = 0; i < NARGS; i++) rlyrt_release(args[i]);
  rlyrt_module_free(m);
  CHECK_EQ(atomic_load(&live_blocks), 0);
  return check_report("test_threads");
}
