/* peak.c: what one core of this machine can do at most, for the limits of
** the model benchmark (bench/README.md): float32 FMA throughput with AVX2
** and AVX-512 (when the CPU has them), and read bandwidth from buffers that
** fit L2, fit L3, and fit neither. Prints one line each:
**
**   peak: fma avx2 GFLOPS=...            FMAs on 12 independent registers
**   peak: read 1MiB GBps=...             sums of a buffer read again and again
**
** Each figure is the best of 20 runs of 5 to 100 ms (a loaded machine lowers
** them). Build: cc -O2 peak.c (the ISA-specific functions carry their own
** target attributes, and run only where __builtin_cpu_supports says so). */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 20

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* FMAs in 12 independent chains (registers b and c make 14 of AVX2's 16),
** enough to cover a 4-cycle latency on two FMA ports. The chains are
** written out so that they stay in registers. Returns a sum so that nothing
** is dead. */
__attribute__((target("avx2,fma"))) static float fma_avx2(long iters) {
  __m256 b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-6f);
  __m256 a0 = _mm256_set1_ps(0.0f), a1 = _mm256_set1_ps(1.0f), a2 = _mm256_set1_ps(2.0f),
         a3 = _mm256_set1_ps(3.0f), a4 = _mm256_set1_ps(4.0f), a5 = _mm256_set1_ps(5.0f),
         a6 = _mm256_set1_ps(6.0f), a7 = _mm256_set1_ps(7.0f), a8 = _mm256_set1_ps(8.0f),
         a9 = _mm256_set1_ps(9.0f), a10 = _mm256_set1_ps(10.0f), a11 = _mm256_set1_ps(11.0f);
  for (long i = 0; i < iters; i++) {
    a0 = _mm256_fmadd_ps(a0, b, c);
    a1 = _mm256_fmadd_ps(a1, b, c);
    a2 = _mm256_fmadd_ps(a2, b, c);
    a3 = _mm256_fmadd_ps(a3, b, c);
    a4 = _mm256_fmadd_ps(a4, b, c);
    a5 = _mm256_fmadd_ps(a5, b, c);
    a6 = _mm256_fmadd_ps(a6, b, c);
    a7 = _mm256_fmadd_ps(a7, b, c);
    a8 = _mm256_fmadd_ps(a8, b, c);
    a9 = _mm256_fmadd_ps(a9, b, c);
    a10 = _mm256_fmadd_ps(a10, b, c);
    a11 = _mm256_fmadd_ps(a11, b, c);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                           _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) static float fma_avx512(long iters) {
  __m512 b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-6f);
  __m512 a0 = _mm512_set1_ps(0.0f), a1 = _mm512_set1_ps(1.0f), a2 = _mm512_set1_ps(2.0f),
         a3 = _mm512_set1_ps(3.0f), a4 = _mm512_set1_ps(4.0f), a5 = _mm512_set1_ps(5.0f),
         a6 = _mm512_set1_ps(6.0f), a7 = _mm512_set1_ps(7.0f), a8 = _mm512_set1_ps(8.0f),
         a9 = _mm512_set1_ps(9.0f), a10 = _mm512_set1_ps(10.0f), a11 = _mm512_set1_ps(11.0f);
  for (long i = 0; i < iters; i++) {
    a0 = _mm512_fmadd_ps(a0, b, c);
    a1 = _mm512_fmadd_ps(a1, b, c);
    a2 = _mm512_fmadd_ps(a2, b, c);
    a3 = _mm512_fmadd_ps(a3, b, c);
    a4 = _mm512_fmadd_ps(a4, b, c);
    a5 = _mm512_fmadd_ps(a5, b, c);
    a6 = _mm512_fmadd_ps(a6, b, c);
    a7 = _mm512_fmadd_ps(a7, b, c);
    a8 = _mm512_fmadd_ps(a8, b, c);
    a9 = _mm512_fmadd_ps(a9, b, c);
    a10 = _mm512_fmadd_ps(a10, b, c);
    a11 = _mm512_fmadd_ps(a11, b, c);
  }
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                           _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
  s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
  return _mm512_reduce_add_ps(s);
}

/* Sums n floats (n a multiple of 32) with four AVX2 accumulators. */
__attribute__((target("avx2"))) static float sum_avx2(const float *x, size_t n) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < n; i += 32) {
    s0 = _mm256_add_ps(s0, _mm256_load_ps(x + i));
    s1 = _mm256_add_ps(s1, _mm256_load_ps(x + i + 8));
    s2 = _mm256_add_ps(s2, _mm256_load_ps(x + i + 16));
    s3 = _mm256_add_ps(s3, _mm256_load_ps(x + i + 24));
  }
  float out[8];
  _mm256_storeu_ps(out, _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
  return out[0];
}

static volatile float sink;

static void fma_peak(const char *isa, float (*f)(long), int lanes) {
  double best = 0;
  long iters = 4000000;
  sink = f(iters); /* wakes the vector units up */
  for (int r = 0; r < RUNS; r++) {
    double t0 = now_s();
    sink = f(iters);
    double t = now_s() - t0;
    double gf = 2.0 * lanes * 12 * (double)iters / t / 1e9;
    if (gf > best) best = gf;
  }
  printf("peak: fma %s GFLOPS=%.1f\n", isa, best);
}

static void read_peak(size_t bytes) {
  size_t n = bytes / sizeof(float);
  float *x = aligned_alloc(64, bytes);
  if (!x) {
    printf("peak: read %zuMiB (no memory)\n", bytes >> 20);
    return;
  }
  for (size_t i = 0; i < n; i++) x[i] = 1.0f;
  long reps = (long)((4.0e8 / (double)bytes) + 1); /* about 0.4 GB a run */
  double best = 0;
  for (int r = 0; r < RUNS; r++) {
    double t0 = now_s();
    for (long k = 0; k < reps; k++) sink = sum_avx2(x, n);
    double t = now_s() - t0;
    double gbps = (double)bytes * (double)reps / t / 1e9;
    if (gbps > best) best = gbps;
  }
  printf("peak: read %zuMiB GBps=%.1f\n", bytes >> 20, best);
  free(x);
}

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    printf("peak: no AVX2/FMA\n");
    return 0;
  }
  fma_peak("avx2", fma_avx2, 8);
  if (__builtin_cpu_supports("avx512f")) fma_peak("avx512", fma_avx512, 16);
  read_peak((size_t)1 << 20);   /* L2 */
  read_peak((size_t)32 << 20);  /* L3 */
  read_peak((size_t)1 << 30);   /* memory */
  return 0;
}
