/* test_threads.c: the kernels' thread pool (runtime/src/threads.c).
**
** rlyrt_parallel_for runs every item exactly once, with slots below the
** thread count and never shared by two items running at once; one thread
** (or one item) starts no worker and runs the items in order on the
** caller; each thread starts with its own share of the items; the pool is
** made once and grows to the largest count asked, not per call; nested
** calls run inline; eight threads calling at once all
** finish with the right counts; and idle workers sleep (the process uses
** almost no CPU time while they wait). Checks run on the main thread, from
** what the items recorded. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "relayc/runtime.h"

enum { MAXN = 20000 };

typedef struct Record {
  int64_t n;
  atomic_int runs[MAXN];     /* times item i ran */
  atomic_int busy[RLYRT_MAX_THREADS]; /* slot s is running an item */
  atomic_int overlap;        /* an item found its slot busy */
  atomic_int bad_slot;       /* a slot at or above the thread count */
  atomic_int off_caller;     /* items that ran on another thread than the caller */
  atomic_int out_of_order;   /* inline items not in order */
  atomic_long last;          /* the last item run (inline order) */
  atomic_long first[RLYRT_MAX_THREADS]; /* the first item slot s ran (-1: none) */
  int32_t threads;
  pthread_t caller;
  int nested;                /* items call rlyrt_parallel_for themselves */
} Record;

static void spin(int k) {
  volatile double x = 1;
  for (int i = 0; i < k; i++) x = x * 1.000001 + 1e-9;
}

static void item(void *ctx, int64_t i, int32_t slot) {
  Record *r = ctx;
  if (slot < 0 || slot >= r->threads) {
    atomic_fetch_add(&r->bad_slot, 1);
    slot = 0;
  }
  if (atomic_exchange(&r->busy[slot], 1)) atomic_fetch_add(&r->overlap, 1);
  if (!pthread_equal(pthread_self(), r->caller)) atomic_fetch_add(&r->off_caller, 1);
  if (atomic_exchange(&r->last, (long)i) != (long)i - 1) atomic_fetch_add(&r->out_of_order, 1);
  long none = -1;
  atomic_compare_exchange_strong(&r->first[slot], &none, (long)i);
  spin(200);
  atomic_store(&r->busy[slot], 0);
  atomic_fetch_add(&r->runs[i], 1);
}

/* Items that each run a nested call of 10 items, which must run inline on
** their own thread: `runs` counts the inner items' runs too. */
typedef struct Nest {
  atomic_int inner_runs;
  atomic_int inner_off_thread; /* an inner item on another thread than its item */
  atomic_int inner_bad_slot;
} Nest;
typedef struct Inner {
  Nest *nest;
  pthread_t self;
} Inner;
static void inner_item(void *ctx, int64_t i, int32_t slot) {
  Inner *in = ctx;
  (void)i;
  if (!pthread_equal(pthread_self(), in->self)) atomic_fetch_add(&in->nest->inner_off_thread, 1);
  if (slot != 0) atomic_fetch_add(&in->nest->inner_bad_slot, 1);
  atomic_fetch_add(&in->nest->inner_runs, 1);
}
static void outer_item(void *ctx, int64_t i, int32_t slot) {
  (void)i, (void)slot;
  Inner in = {ctx, pthread_self()};
  rlyrt_parallel_for(4, 10, inner_item, &in);
}

static Record *record_new(int64_t n, int32_t threads) {
  Record *r = calloc(1, sizeof *r);
  r->n = n;
  r->threads = rlyrt_thread_count(threads);
  r->caller = pthread_self();
  atomic_store(&r->last, -1L);
  for (int s = 0; s < RLYRT_MAX_THREADS; s++) atomic_store(&r->first[s], -1L);
  return r;
}

/* Every item ran exactly once, in slots below the count, never two at once in a slot. */
static void check_record(const Record *r) {
  int wrong = 0;
  for (int64_t i = 0; i < r->n; i++) wrong += atomic_load(&r->runs[i]) != 1;
  CHECK_EQ(wrong, 0);
  CHECK_EQ(atomic_load(&r->bad_slot), 0);
  CHECK_EQ(atomic_load(&r->overlap), 0);
}

/* {==== Eight callers at once ====} */

typedef struct Caller {
  int32_t threads;
  int calls;
  int64_t n;
  int wrong; /* items not run exactly once, over all calls */
  int bad;   /* slots out of range or shared */
} Caller;

static void *caller_main(void *arg) {
  Caller *c = arg;
  for (int k = 0; k < c->calls; k++) {
    Record *r = record_new(c->n, c->threads);
    rlyrt_parallel_for(c->threads, c->n, item, r);
    for (int64_t i = 0; i < r->n; i++) c->wrong += atomic_load(&r->runs[i]) != 1;
    c->bad += atomic_load(&r->bad_slot) + atomic_load(&r->overlap);
    free(r);
  }
  return NULL;
}

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void) {
  /* Counts. */
  int32_t cpus = rlyrt_cpu_count();
  CHECK(cpus >= 1 && cpus <= RLYRT_MAX_THREADS);
  CHECK_EQ(rlyrt_thread_count(0), cpus);
  CHECK_EQ(rlyrt_thread_count(-3), 1);
  CHECK_EQ(rlyrt_thread_count(5), 5);
  CHECK_EQ(rlyrt_thread_count(100000), RLYRT_MAX_THREADS);

  /* No items; one item; one thread: all on the caller, in order, no worker. */
  Record *r = record_new(0, 4);
  rlyrt_parallel_for(4, 0, item, r);
  rlyrt_parallel_for(4, -5, item, r);
  CHECK_EQ(atomic_load(&r->last), -1);
  free(r);
  r = record_new(1, 4);
  rlyrt_parallel_for(4, 1, item, r);
  check_record(r);
  CHECK_EQ(atomic_load(&r->off_caller), 0);
  free(r);
  r = record_new(1000, 1);
  rlyrt_parallel_for(1, 1000, item, r);
  check_record(r);
  CHECK_EQ(atomic_load(&r->off_caller), 0);
  CHECK_EQ(atomic_load(&r->out_of_order), 0);
  free(r);
  CHECK_EQ(rlyrt_pool_size(), 0);

  /* Three threads: two workers, made once. */
  r = record_new(MAXN, 3);
  rlyrt_parallel_for(3, MAXN, item, r);
  check_record(r);
  free(r);
  CHECK_EQ(rlyrt_pool_size(), 2);
  int wrong = 0, bad = 0;
  for (int k = 0; k < 100; k++) {
    r = record_new(64, 3);
    rlyrt_parallel_for(3, 64, item, r);
    for (int64_t i = 0; i < r->n; i++) wrong += atomic_load(&r->runs[i]) != 1;
    bad += atomic_load(&r->bad_slot) + atomic_load(&r->overlap);
    free(r);
  }
  CHECK_EQ(wrong, 0);
  CHECK_EQ(bad, 0);
  CHECK_EQ(rlyrt_pool_size(), 2);

  /* Each thread starts with its own share, in order: on 2 threads the
  ** worker's first item is in the second half (the caller takes the
  ** first half before anything of the second). */
  int early = 0, joined = 0;
  for (int k = 0; k < 200; k++) {
    r = record_new(64, 2);
    rlyrt_parallel_for(2, 64, item, r);
    check_record(r);
    long f = atomic_load(&r->first[1]);
    if (f >= 0) joined++;
    if (f >= 0 && f < 32) early++;
    free(r);
  }
  CHECK_EQ(early, 0);
  if (joined == 0) fprintf(stderr, "test_threads: the worker never joined a 2-thread call\n");
  /* More threads than shares (16): every item still runs once; a larger
  ** count grows the pool. */
  r = record_new(MAXN, 20);
  rlyrt_parallel_for(20, MAXN, item, r);
  check_record(r);
  free(r);
  CHECK_EQ(rlyrt_pool_size(), 19);

  /* Nested calls run inline, on the item's thread, as slot 0. */
  Nest nest = {0};
  rlyrt_parallel_for(3, 50, outer_item, &nest);
  CHECK_EQ(atomic_load(&nest.inner_runs), 500);
  CHECK_EQ(atomic_load(&nest.inner_off_thread), 0);
  CHECK_EQ(atomic_load(&nest.inner_bad_slot), 0);

  /* Eight callers at once, two threads each, sharing the pool. */
  enum { NCALLERS = 8 };
  pthread_t th[NCALLERS];
  Caller callers[NCALLERS];
  for (int k = 0; k < NCALLERS; k++) {
    callers[k] = (Caller){2, 150, 97 + k, 0, 0};
    CHECK_EQ(pthread_create(&th[k], NULL, caller_main, &callers[k]), 0);
  }
  for (int k = 0; k < NCALLERS; k++) {
    pthread_join(th[k], NULL);
    CHECK_EQ(callers[k].wrong, 0);
    CHECK_EQ(callers[k].bad, 0);
  }
  CHECK_EQ(rlyrt_pool_size(), 19); /* the largest count asked stays 20 */

  /* Idle workers sleep: 300 ms of waiting costs (almost) no CPU. */
  double c0 = cpu_ms();
  struct timespec pause = {0, 300 * 1000 * 1000};
  nanosleep(&pause, NULL);
  double used = cpu_ms() - c0;
  if (used >= 30) fprintf(stderr, "idle pool used %.1f ms of CPU in 300 ms\n", used);
  CHECK(used < 30);
  return check_report("test_threads");
}
