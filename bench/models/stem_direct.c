/* stem_direct.c: how fast a direct convolution could run ResNet's stem
** (3 -> 64 channels, 7x7, stride 2, padding 3, 224x224 -> 112x112, bias
** and relu), the layer where relayc's im2col GEMM loses to ONNX Runtime
** (bench/README.md). Not relayc's code: a measurement for the schedule it
** could have.
**
** The input is copied once into planes with zero borders whose rows are
** split by column phase (even columns, then odd ones), as relayc's
** depthwise kernel does; the 16 outputs of a row under one filter tap then
** read 16 consecutive floats. A tile is a whole output row (7 vectors of
** 16 outputs) by 3 filters: 21 accumulators, 7 input vectors loaded once
** per tap and shared by the 3 filters, each filter's weight broadcast from
** the OIHW filter as it is (no packing); 147 taps, then bias, relu and the
** stores into NCHW. 64 filters: 21 tiles of 3 and one of 1. AVX2's tiles
** are 4 filters by 3 vectors of 8 outputs (16 registers). With 2 threads
** each takes half the output rows and copies only the input rows they read
** (a thread started per call, as a pool would not).
**
** Build and run (AVX-512 and AVX2 where the CPU has them):
**   cc -O2 -pthread bench/models/stem_direct.c -o stem_direct -lm && ./stem_direct
** It checks the result against a double-precision loop, then prints the
** fastest of 300 calls at 1 and at 2 threads, per ISA. */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { C = 3, H = 224, W = 224, F = 64, K = 7, S = 2, P = 3, OH = 112, OW = 112 };
enum { HP = H + 2 * P, WH = (W + 2 * P) / 2, RW = WH + 16 }; /* a phase's row, room for the last vector */

typedef struct {
  const float *x, *w, *b;
  float *y;
  float *buf; /* [C][rows][2][RW] */
  int oy0, oy1;
} Part;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The padded rows r0 .. r1 - 1 of every channel, split by column phase. */
__attribute__((target("avx512f"))) static void split(const float *x, float *buf, int r0, int r1) {
  const __m512i ev = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
  int rows = r1 - r0;
  for (int c = 0; c < C; c++)
    for (int r = r0; r < r1; r++) {
      float *e = buf + ((size_t)(c * rows + r - r0) * 2) * RW, *o = e + RW;
      int iy = r - P;
      if (iy < 0 || iy >= H) {
        memset(e, 0, sizeof(float) * 2 * RW);
        continue;
      }
      const float *s = x + ((size_t)c * H + iy) * W;
      /* Padded column j = input column j - 3: even padded columns are the
      ** input's odd ones from column 1 on, behind two zeros (j = 0, 2);
      ** odd padded columns are the input's even ones behind one zero. */
      e[0] = 0, e[1] = 0, o[0] = 0;
      for (int j = 0; j < W; j += 32) { /* 224 = 7 x 32 */
        __m512 a = _mm512_loadu_ps(s + j), b = _mm512_loadu_ps(s + j + 16);
        _mm512_storeu_ps(o + 1 + j / 2, _mm512_permutex2var_ps(a, ev, b)); /* input even -> padded odd */
        _mm512_storeu_ps(e + 2 + j / 2, _mm512_permutex2var_ps(a, od, b)); /* input odd -> padded even */
      }
      for (int j = 2 + W / 2; j < RW; j++) e[j] = 0;
      for (int j = 1 + W / 2; j < RW; j++) o[j] = 0;
    }
}

#define V7(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6)

/* Output rows oy0 .. oy1 - 1 of nf filters from f0 (nf = 3 or 1). */
__attribute__((target("avx512f"))) static void rows(const Part *p, int f0, int nf) {
  int r0 = S * p->oy0;
  int rows_in = S * (p->oy1 - p->oy0) + K - S;
  for (int oy = p->oy0; oy < p->oy1; oy++) {
    __m512 a0_0, a0_1, a0_2, a0_3, a0_4, a0_5, a0_6;
    __m512 a1_0, a1_1, a1_2, a1_3, a1_4, a1_5, a1_6;
    __m512 a2_0, a2_1, a2_2, a2_3, a2_4, a2_5, a2_6;
#define Z(v) a0_##v = a1_##v = a2_##v = _mm512_setzero_ps();
    V7(Z)
#undef Z
    for (int c = 0; c < C; c++)
      for (int ky = 0; ky < K; ky++) {
        const float *row = p->buf + ((size_t)(c * rows_in + S * oy + ky - r0) * 2) * RW;
        const float *w0 = p->w + (((size_t)f0 * C + c) * K + ky) * K;
        const float *w1 = w0 + C * K * K, *w2 = w1 + C * K * K;
        for (int kx = 0; kx < K; kx++) {
          const float *r = row + (kx & 1) * RW + (kx >> 1);
          __m512 i0 = _mm512_loadu_ps(r), i1 = _mm512_loadu_ps(r + 16), i2 = _mm512_loadu_ps(r + 32),
                 i3 = _mm512_loadu_ps(r + 48), i4 = _mm512_loadu_ps(r + 64), i5 = _mm512_loadu_ps(r + 80),
                 i6 = _mm512_loadu_ps(r + 96);
          __m512 wv = _mm512_set1_ps(w0[kx]);
#define FM(a, v) a##_##v = _mm512_fmadd_ps(wv, i##v, a##_##v);
#define F0(v) FM(a0, v)
#define F1(v) FM(a1, v)
#define F2(v) FM(a2, v)
          V7(F0)
          if (nf == 3) {
            wv = _mm512_set1_ps(w1[kx]);
            V7(F1)
            wv = _mm512_set1_ps(w2[kx]);
            V7(F2)
          }
        }
      }
    const __m512 zero = _mm512_setzero_ps();
#define ST(a, f, v) \
  _mm512_storeu_ps(p->y + ((size_t)(f0 + f) * OH + oy) * OW + 16 * v, _mm512_max_ps(_mm512_add_ps(a##_##v, bv), zero));
#define S0(v) ST(a0, 0, v)
#define S1(v) ST(a1, 1, v)
#define S2(v) ST(a2, 2, v)
    __m512 bv = _mm512_set1_ps(p->b[f0]);
    V7(S0)
    if (nf == 3) {
      bv = _mm512_set1_ps(p->b[f0 + 1]);
      V7(S1)
      bv = _mm512_set1_ps(p->b[f0 + 2]);
      V7(S2)
    }
  }
}

/* AVX2: the same copy, 16 input floats into 8 of each phase (a shuffle and
** a lane permute per phase). */
__attribute__((target("avx2,fma"))) static void split2(const float *x, float *buf, int r0, int r1) {
  int rows = r1 - r0;
  for (int c = 0; c < C; c++)
    for (int r = r0; r < r1; r++) {
      float *e = buf + ((size_t)(c * rows + r - r0) * 2) * RW, *o = e + RW;
      int iy = r - P;
      if (iy < 0 || iy >= H) {
        memset(e, 0, sizeof(float) * 2 * RW);
        continue;
      }
      const float *s = x + ((size_t)c * H + iy) * W;
      e[0] = 0, e[1] = 0, o[0] = 0;
      for (int j = 0; j < W; j += 16) {
        __m256 a = _mm256_loadu_ps(s + j), b = _mm256_loadu_ps(s + j + 8);
        __m256 ev = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
        __m256 od = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
        _mm256_storeu_ps(o + 1 + j / 2, ev);
        _mm256_storeu_ps(e + 2 + j / 2, od);
      }
      for (int j = 2 + W / 2; j < RW; j++) e[j] = 0;
      for (int j = 1 + W / 2; j < RW; j++) o[j] = 0;
    }
}

/* AVX2: tiles of 4 filters by 3 vectors of 8 outputs (12 accumulators,
** the 3 input vectors, one weight: 16 registers); a row's 14 vectors are
** 4 tiles of 3 and one of 2. */
__attribute__((target("avx2,fma"))) static void rows2(const Part *p, int f0) {
  int r0 = S * p->oy0;
  int rows_in = S * (p->oy1 - p->oy0) + K - S;
  for (int oy = p->oy0; oy < p->oy1; oy++)
    for (int x0 = 0; x0 < OW; x0 += 24) {
      int nv = x0 + 24 <= OW ? 3 : 2;
      __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
      __m256 a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
      for (int c = 0; c < C; c++)
        for (int ky = 0; ky < K; ky++) {
          const float *row = p->buf + ((size_t)(c * rows_in + S * oy + ky - r0) * 2) * RW + x0;
          const float *w0 = p->w + (((size_t)f0 * C + c) * K + ky) * K;
          for (int kx = 0; kx < K; kx++) {
            const float *r = row + (kx & 1) * RW + (kx >> 1);
            __m256 i0 = _mm256_loadu_ps(r), i1 = _mm256_loadu_ps(r + 8), i2 = _mm256_loadu_ps(r + 16);
            __m256 wv = _mm256_broadcast_ss(w0 + kx);
            a00 = _mm256_fmadd_ps(wv, i0, a00), a01 = _mm256_fmadd_ps(wv, i1, a01), a02 = _mm256_fmadd_ps(wv, i2, a02);
            wv = _mm256_broadcast_ss(w0 + C * K * K + kx);
            a10 = _mm256_fmadd_ps(wv, i0, a10), a11 = _mm256_fmadd_ps(wv, i1, a11), a12 = _mm256_fmadd_ps(wv, i2, a12);
            wv = _mm256_broadcast_ss(w0 + 2 * C * K * K + kx);
            a20 = _mm256_fmadd_ps(wv, i0, a20), a21 = _mm256_fmadd_ps(wv, i1, a21), a22 = _mm256_fmadd_ps(wv, i2, a22);
            wv = _mm256_broadcast_ss(w0 + 3 * C * K * K + kx);
            a30 = _mm256_fmadd_ps(wv, i0, a30), a31 = _mm256_fmadd_ps(wv, i1, a31), a32 = _mm256_fmadd_ps(wv, i2, a32);
          }
        }
      const __m256 zero = _mm256_setzero_ps();
      __m256 acc[4][3] = {{a00, a01, a02}, {a10, a11, a12}, {a20, a21, a22}, {a30, a31, a32}};
      for (int f = 0; f < 4; f++) {
        __m256 bv = _mm256_set1_ps(p->b[f0 + f]);
        for (int v = 0; v < nv; v++)
          _mm256_storeu_ps(p->y + ((size_t)(f0 + f) * OH + oy) * OW + x0 + 8 * v,
                           _mm256_max_ps(_mm256_add_ps(acc[f][v], bv), zero));
      }
    }
}

static int use_avx2;

static void *part(void *arg) {
  Part *p = arg;
  if (use_avx2) {
    split2(p->x, p->buf, S * p->oy0, S * p->oy1 + K - S);
    for (int f0 = 0; f0 < F; f0 += 4) rows2(p, f0);
    return NULL;
  }
  split(p->x, p->buf, S * p->oy0, S * p->oy1 + K - S);
  for (int f0 = 0; f0 + 3 <= F; f0 += 3) rows(p, f0, 3);
  rows(p, F - 1, 1);
  return NULL;
}

static void conv(const float *x, const float *w, const float *b, float *y, Part *parts, int n) {
  pthread_t t[2];
  for (int i = 0; i < n; i++) {
    parts[i].x = x, parts[i].w = w, parts[i].b = b, parts[i].y = y;
    parts[i].oy0 = OH * i / n, parts[i].oy1 = OH * (i + 1) / n;
  }
  for (int i = 1; i < n; i++) pthread_create(&t[i], NULL, part, &parts[i]);
  part(&parts[0]);
  for (int i = 1; i < n; i++) pthread_join(t[i], NULL);
}

static void reference(const float *x, const float *w, const float *b, float *y) {
  for (int f = 0; f < F; f++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++) {
        double s = b[f];
        for (int c = 0; c < C; c++)
          for (int ky = 0; ky < K; ky++)
            for (int kx = 0; kx < K; kx++) {
              int iy = S * oy + ky - P, ix = S * ox + kx - P;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                s += (double)x[((size_t)c * H + iy) * W + ix] * w[(((size_t)f * C + c) * K + ky) * K + kx];
            }
        y[((size_t)f * OH + oy) * OW + ox] = s > 0 ? (float)s : 0;
      }
}

int main(void) {
  size_t nx = (size_t)C * H * W, nw = (size_t)F * C * K * K, ny = (size_t)F * OH * OW;
  float *x = malloc(4 * nx), *w = malloc(4 * nw), *b = malloc(4 * F), *y = malloc(4 * ny), *yr = malloc(4 * ny);
  Part parts[2];
  for (int i = 0; i < 2; i++) parts[i].buf = malloc(sizeof(float) * C * HP * 2 * RW);
  srand(1);
  for (size_t i = 0; i < nx; i++) x[i] = rand() / (float)RAND_MAX - 0.5f;
  for (size_t i = 0; i < nw; i++) w[i] = (rand() / (float)RAND_MAX - 0.5f) * 0.2f;
  for (int i = 0; i < F; i++) b[i] = rand() / (float)RAND_MAX - 0.5f;
  reference(x, w, b, yr);
  for (int t = 0; t < 4; t++) {
    int n = t % 2 + 1;
    use_avx2 = t >= 2;
    if (use_avx2 ? !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") : !__builtin_cpu_supports("avx512f"))
      continue;
    memset(y, 0xff, 4 * ny);
    conv(x, w, b, y, parts, n);
    double err = 0;
    for (size_t i = 0; i < ny; i++) err = fmax(err, fabs((double)y[i] - yr[i]));
    double best = 1e9;
    for (int r = 0; r < 300; r++) {
      double t = now();
      conv(x, w, b, y, parts, n);
      t = now() - t;
      if (t < best) best = t;
    }
    printf("stem_direct: %s, %d thread(s): fastest of 300 %.1f us, %.1f GFLOP/s, max |error| %.2g\n", use_avx2 ? "AVX2" : "AVX-512", n, best * 1e6,
           2.0 * ny * C * K * K / best * 1e-9, err);
    if (err > 1e-4) return 1;
  }
  return 0;
}
