/* threads.c: the kernels' thread pool (rlyrt_parallel_for).
**
** One pool per copy of the runtime: a program linking the runtime has
** one; a shared library built by relayc carries its own private copy, so
** each loaded model has its own. The pool starts no thread until a call
** asks for more than one, then grows to the largest count asked for since
** (never more than RLYRT_MAX_THREADS - 1 workers: the caller is a thread
** of every call). Between jobs a worker first spins for SPIN_NS, watching
** a counter of queued jobs (a model's kernels come one after another, and
** waking a sleeping thread takes tens of microseconds: much of a small
** kernel's time), then sleeps on a condition variable, so an idle pool
** costs no CPU.
**
** A call is a job on a queue: its items are cut into nthreads ranges (at
** most RANGES_MAX), each handed out one item at a time from an atomic
** counter, the caller starting with the first range and the k-th worker
** to join (at most nthreads - 1 of them) with range k, then each helping
** with the ranges left. The caller runs items until none is left, takes
** its job off the queue (no worker joins after that) and waits for the
** workers still inside it: spinning for up to WAIT_NS (a worker's last
** item usually ends within microseconds, and a sleep and wake-up would
** cost tens of them on every kernel), then on a condition variable. So a
** call never waits for a worker to start: when every worker is busy with
** other callers' jobs, the caller runs all
** its items itself. Concurrent callers share the workers; a call made from
** inside an item (nested) runs inline, on its caller. Each thread of a job
** gets a slot, 0 for the caller and 1, 2, ... for the workers in the order
** they join, so items may use per-slot scratch memory.
**
** Which thread runs which item varies from call to call; kernels make their
** results independent of it by giving each item its own outputs and its
** own complete computation (no reduction split across items).
**
** The workers are joined by a destructor when the copy of the runtime is
** unloaded (dlclose of a model) or the process exits. */
/* sched_getaffinity and CPU_COUNT (glibc) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "relayc/runtime.h"

enum { RANGES_MAX = 16 };

/* One thread's share of a job's items, on a cache line of its own. */
typedef struct Range {
  _Alignas(64) int64_t next; /* atomic: the next item to hand out */
  int64_t end;
} Range;

typedef struct Job {
  struct Job *next;   /* the next job of the queue */
  rlyrt_task_fn fn;
  void *ctx;
  int64_t n;          /* items 0 .. n-1 */
  int64_t claimed;    /* atomic: items handed out so far */
  int32_t nranges;
  Range range[RANGES_MAX]; /* items i n / t .. (i + 1) n / t - 1 first go to slot i */
  int32_t want;       /* workers that may still join */
  int32_t slots;      /* slots given to workers (the caller has 0) */
  int32_t active;     /* workers inside the job */
  bool queued;
} Job;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t work;  /* a job was queued, or the pool stops */
  pthread_cond_t left;  /* a worker left a job */
  Job *head, *tail;     /* jobs that workers may join */
  uint32_t queued;      /* atomic: jobs queued so far (what spinning workers watch) */
  int32_t nworkers;
  bool stop;
  pthread_t workers[RLYRT_MAX_THREADS];
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, false, {0}};

enum {
  SPIN_NS = 100 * 1000, /* how long an idle worker spins before it sleeps */
  WAIT_NS = 200 * 1000, /* how long a caller spins for the workers still in its job */
};

/* Nonzero on a worker and while a call runs its items: calls made then
** run inline. */
static _Thread_local int inside;

static int32_t ncpus; /* atomic: rlyrt_cpu_count's answer, 0 until asked */

int32_t rlyrt_cpu_count(void) {
  int32_t n = __atomic_load_n(&ncpus, __ATOMIC_RELAXED);
  if (n > 0) return n;
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = (int32_t)CPU_COUNT(&set);
#endif
  if (n < 1) {
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    n = c > 0 ? (int32_t)(c < RLYRT_MAX_THREADS ? c : RLYRT_MAX_THREADS) : 1;
  }
  if (n > RLYRT_MAX_THREADS) n = RLYRT_MAX_THREADS;
  __atomic_store_n(&ncpus, n, __ATOMIC_RELAXED);
  return n;
}

int32_t rlyrt_thread_count(int32_t n) {
  if (n == 0) return rlyrt_cpu_count();
  if (n < 1) return 1;
  return n < RLYRT_MAX_THREADS ? n : RLYRT_MAX_THREADS;
}

/* Runs items of j until none is left, as slot: its own range first, in
** order, then what is left of the others' (so every item runs even when a
** worker never joins). A thread thus tends to get the same share of every
** kernel (the caller the first, the worker the next), and what one kernel
** writes in its share the next kernel often reads in the same share, on
** the same core: on 2 cores of an AMD EPYC (Zen 5) MobileNetV2 went from
** 5.3-5.8 to 4.9-5.0 ms, ResNet-18 from 13.1-13.6 to 12.5-12.7 ms, against
** handing items out from one counter. */
static void run_items(Job *j, int32_t slot) {
  int32_t nr = j->nranges;
  for (int32_t k = 0; k < nr; k++) {
    Range *r = &j->range[(slot + k) % nr];
    for (;;) {
      int64_t i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
      if (i >= r->end) break;
      __atomic_fetch_add(&j->claimed, 1, __ATOMIC_RELAXED);
      j->fn(j->ctx, i, slot);
    }
  }
}

/* Takes j off the queue (under the lock). */
static void dequeue(Job *j) {
  Job **p = &pool.head, *prev = NULL;
  while (*p && *p != j) {
    prev = *p;
    p = &(*p)->next;
  }
  if (*p) {
    *p = j->next;
    if (pool.tail == j) pool.tail = prev;
  }
  j->next = NULL;
  j->queued = false;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits (without the lock) up to SPIN_NS for pool.queued to move from seen. */
static void spin(uint32_t seen) {
  int64_t end = now_ns() + SPIN_NS;
  for (;;) {
    for (int k = 0; k < 64; k++) {
      if (__atomic_load_n(&pool.queued, __ATOMIC_ACQUIRE) != seen) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (now_ns() >= end) return;
  }
}

static void *worker_main(void *arg) {
  (void)arg;
  inside = 1;
  pthread_mutex_lock(&pool.lock);
  for (;;) {
    if (!pool.stop && !pool.head) {
      uint32_t seen = __atomic_load_n(&pool.queued, __ATOMIC_RELAXED);
      pthread_mutex_unlock(&pool.lock);
      spin(seen);
      pthread_mutex_lock(&pool.lock);
    }
    while (!pool.stop && !pool.head) pthread_cond_wait(&pool.work, &pool.lock);
    if (pool.stop) break;
    Job *j = pool.head;
    /* A job whose items are all handed out needs no one more. */
    if (__atomic_load_n(&j->claimed, __ATOMIC_RELAXED) >= j->n) {
      dequeue(j);
      continue;
    }
    int32_t slot = ++j->slots;
    if (--j->want == 0) dequeue(j);
    __atomic_add_fetch(&j->active, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&pool.lock);
    run_items(j, slot);
    pthread_mutex_lock(&pool.lock);
    if (__atomic_sub_fetch(&j->active, 1, __ATOMIC_RELEASE) == 0) pthread_cond_broadcast(&pool.left);
  }
  pthread_mutex_unlock(&pool.lock);
  return NULL;
}

/* Grows the pool to k workers (under the lock); false when it has none
** (threads cannot be made here). Workers block every signal: signals go
** to the program's own threads. */
static bool grow(int32_t k) {
  if (k > RLYRT_MAX_THREADS - 1) k = RLYRT_MAX_THREADS - 1;
  if (pool.stop) return false;
  if (pool.nworkers >= k) return true;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (pool.nworkers < k && pthread_create(&pool.workers[pool.nworkers], NULL, worker_main, NULL) == 0)
    pool.nworkers++;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return pool.nworkers > 0;
}

void rlyrt_parallel_for(int32_t nthreads, int64_t n, rlyrt_task_fn fn, void *ctx) {
  if (n <= 0) return;
  int32_t t = rlyrt_thread_count(nthreads);
  if (t > n) t = (int32_t)n;
  bool pooled = false;
  Job j;
  if (t > 1 && !inside) {
    j.next = NULL;
    j.fn = fn;
    j.ctx = ctx;
    j.n = n;
    j.claimed = 0;
    j.want = t - 1;
    j.slots = 0;
    j.active = 0;
    j.queued = false;
    j.nranges = t < RANGES_MAX ? t : RANGES_MAX;
    for (int32_t r = 0; r < j.nranges; r++) {
      j.range[r].next = n * r / j.nranges;
      j.range[r].end = n * (r + 1) / j.nranges;
    }
    pthread_mutex_lock(&pool.lock);
    pooled = grow(t - 1);
    if (pooled) {
      j.queued = true;
      if (pool.tail) pool.tail->next = &j;
      else pool.head = &j;
      pool.tail = &j;
      __atomic_fetch_add(&pool.queued, 1, __ATOMIC_RELEASE);
      for (int32_t k = 0; k < t - 1; k++) pthread_cond_signal(&pool.work);
    }
    pthread_mutex_unlock(&pool.lock);
  }
  inside++;
  if (pooled) {
    run_items(&j, 0);
  } else {
    for (int64_t i = 0; i < n; i++) fn(ctx, i, 0);
  }
  inside--;
  if (!pooled) return;
  pthread_mutex_lock(&pool.lock);
  if (j.queued) dequeue(&j);
  bool busy = j.active > 0;
  pthread_mutex_unlock(&pool.lock);
  if (!busy) return;
  /* A worker is still in its last item: usually a short wait, shorter
  ** than a sleep and a wake-up, so spin first. The lock is taken after
  ** all the same: a worker touches j under it, up to its unlock. */
  int64_t end = now_ns() + WAIT_NS;
  while (__atomic_load_n(&j.active, __ATOMIC_ACQUIRE) > 0) {
    for (int k = 0; k < 64 && __atomic_load_n(&j.active, __ATOMIC_ACQUIRE) > 0; k++) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    if (now_ns() >= end) break;
  }
  pthread_mutex_lock(&pool.lock);
  while (j.active) pthread_cond_wait(&pool.left, &pool.lock);
  pthread_mutex_unlock(&pool.lock);
}

int32_t rlyrt_pool_size(void) {
  pthread_mutex_lock(&pool.lock);
  int32_t n = pool.nworkers;
  pthread_mutex_unlock(&pool.lock);
  return n;
}

/* Stops and joins the workers: this copy of the runtime is being unloaded
** (or the process ends), and their code goes with it. */
__attribute__((destructor)) static void pool_stop(void) {
  pthread_mutex_lock(&pool.lock);
  pool.stop = true;
  pthread_cond_broadcast(&pool.work);
  int32_t n = pool.nworkers;
  pthread_mutex_unlock(&pool.lock);
  for (int32_t i = 0; i < n; i++) pthread_join(pool.workers[i], NULL);
  pthread_mutex_lock(&pool.lock);
  pool.nworkers = 0;
  pthread_mutex_unlock(&pool.lock);
}
