/* profile.c: timing kernels of modules built with --profile, and the CPU
** check of modules built with --target native.
**
** The records live in the module (static data of the generated code); the
** runtime only adds to them, with relaxed atomics: a profile is a sum, so
** the order in which threads add does not matter, and no lock may slow the
** kernels it measures.
**
** The CPU check must run on any x86-64 CPU, also one that lacks what the
** module needs: this file is part of the runtime, built for baseline
** x86-64 (the generated code, built with -march=native, calls it before
** running anything else of its own). It reads CPUID, and XGETBV for the
** register state the OS saves: AVX needs the YMM state, AVX-512 the ZMM
** and opmask state too, or the instructions fault although CPUID lists
** them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "relayc/runtime.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#define RLYRT_HAVE_CPUID 1
#endif

uint64_t rlyrt_profile_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rlyrt_profile_add(rlyrt_kernel_record *r, uint64_t t0) {
  uint64_t dt = rlyrt_profile_now() - t0;
  __atomic_fetch_add(&r->calls, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&r->ns, dt, __ATOMIC_RELAXED);
  if (dt == 0) dt = 1; /* 0 means no call yet */
  uint64_t m = __atomic_load_n(&r->min_ns, __ATOMIC_RELAXED);
  while ((m == 0 || dt < m) &&
         !__atomic_compare_exchange_n(&r->min_ns, &m, dt, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

void rlyrt_profile_reset(const rlyrt_module_build *b) {
  if (!b || !b->kernels) return;
  for (int32_t i = 0; i < b->nkernels; i++) {
    __atomic_store_n(&b->kernels[i]->calls, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->kernels[i]->ns, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->kernels[i]->min_ns, 0, __ATOMIC_RELAXED);
  }
}

/* {==== CPU features ====} */

enum { OS_AVX = 1, OS_AVX512 = 2 }; /* register state the OS must save */

/* An extension as GCC's -m option names it, and where CPUID reports it. */
typedef struct Feature {
  const char *name;
  unsigned leaf, sub;
  char reg; /* 'b', 'c' or 'd' */
  unsigned bit;
  int os;
} Feature;

static const Feature features[] = {
    {"sse", 1, 0, 'd', 25, 0},        {"sse2", 1, 0, 'd', 26, 0},
    {"sse3", 1, 0, 'c', 0, 0},        {"ssse3", 1, 0, 'c', 9, 0},       {"fma", 1, 0, 'c', 12, OS_AVX},
    {"sse4.1", 1, 0, 'c', 19, 0},     {"sse4.2", 1, 0, 'c', 20, 0},     {"movbe", 1, 0, 'c', 22, 0},
    {"popcnt", 1, 0, 'c', 23, 0},     {"aes", 1, 0, 'c', 25, 0},        {"xsave", 1, 0, 'c', 26, 0},
    {"avx", 1, 0, 'c', 28, OS_AVX},   {"f16c", 1, 0, 'c', 29, OS_AVX},  {"rdrnd", 1, 0, 'c', 30, 0},
    {"pclmul", 1, 0, 'c', 1, 0},      {"bmi", 7, 0, 'b', 3, 0},         {"avx2", 7, 0, 'b', 5, OS_AVX},
    {"bmi2", 7, 0, 'b', 8, 0},        {"avx512f", 7, 0, 'b', 16, OS_AVX512},
    {"avx512dq", 7, 0, 'b', 17, OS_AVX512},    {"rdseed", 7, 0, 'b', 18, 0},
    {"adx", 7, 0, 'b', 19, 0},        {"avx512ifma", 7, 0, 'b', 21, OS_AVX512},
    {"avx512cd", 7, 0, 'b', 28, OS_AVX512},    {"sha", 7, 0, 'b', 29, 0},
    {"avx512bw", 7, 0, 'b', 30, OS_AVX512},    {"avx512vl", 7, 0, 'b', 31, OS_AVX512},
    {"avx512vbmi", 7, 0, 'c', 1, OS_AVX512},   {"avx512vbmi2", 7, 0, 'c', 6, OS_AVX512},
    {"gfni", 7, 0, 'c', 8, 0},        {"vaes", 7, 0, 'c', 9, OS_AVX},   {"vpclmulqdq", 7, 0, 'c', 10, OS_AVX},
    {"avx512vnni", 7, 0, 'c', 11, OS_AVX512},  {"avx512bitalg", 7, 0, 'c', 12, OS_AVX512},
    {"avx512vpopcntdq", 7, 0, 'c', 14, OS_AVX512},
    {"avx512fp16", 7, 0, 'd', 23, OS_AVX512},  {"avx512bf16", 7, 1, 'a', 5, OS_AVX512},
    {"avxvnni", 7, 1, 'a', 4, OS_AVX}, {"lzcnt", 0x80000001u, 0, 'c', 5, 0},
};

/* Is the name (n bytes) listed in the environment variable RLYRT_CPU_DISABLE? */
static bool disabled(const char *name, size_t n) {
  const char *s = getenv("RLYRT_CPU_DISABLE");
  while (s && *s) {
    while (*s == ' ' || *s == ',') s++;
    size_t k = strcspn(s, " ,");
    if (k == n && strncmp(s, name, n) == 0) return true;
    s += k;
  }
  return false;
}

#ifdef RLYRT_HAVE_CPUID
/* The register state the OS saves (XCR0), or 0 without OSXSAVE. */
static uint64_t os_state(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return 0;
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

static bool has(const Feature *f) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(f->leaf, f->sub, &r[0], &r[1], &r[2], &r[3])) return false;
  unsigned v = f->reg == 'a' ? r[0] : f->reg == 'b' ? r[1] : f->reg == 'c' ? r[2] : r[3];
  if (!(v >> f->bit & 1)) return false;
  uint64_t xcr0 = f->os ? os_state() : 0;
  if ((f->os & OS_AVX) && (xcr0 & 0x6) != 0x6) return false;
  if ((f->os & OS_AVX512) && (xcr0 & 0xe6) != 0xe6) return false;
  return true;
}
#endif

/* Does this CPU support the extension name (n bytes)? */
static bool supported(const char *name, size_t n) {
  if (disabled(name, n)) return false;
#ifdef RLYRT_HAVE_CPUID
  for (size_t i = 0; i < sizeof features / sizeof features[0]; i++)
    if (strlen(features[i].name) == n && strncmp(features[i].name, name, n) == 0) return has(&features[i]);
#endif
  return false;
}

rlyrt_status rlyrt_cpu_check(const char *isa, const char *what) {
  char missing[512];
  size_t len = 0;
  missing[0] = 0;
  for (const char *s = isa ? isa : ""; *s;) {
    while (*s == ' ' || *s == ',') s++;
    size_t k = strcspn(s, " ,");
    if (k && !supported(s, k)) {
      int w = snprintf(missing + len, sizeof missing - len, "%s%.*s", len ? ", " : "", (int)k, s);
      if (w > 0) len = len + (size_t)w < sizeof missing ? len + (size_t)w : sizeof missing - 1;
    }
    s += k;
  }
  if (!len) return RLYRT_OK;
  const char *list = isa;
  while (*list == ' ') list++;
  int n = (int)strlen(list);
  while (n > 0 && list[n - 1] == ' ') n--;
  return rlyrt_error(RLYRT_E_UNSUPPORTED,
                     "%s was built for CPUs with %.*s (--target native); this CPU lacks %s: rebuild it without "
                     "--target native, or on this machine",
                     what ? what : "the module", n, list, missing);
}
