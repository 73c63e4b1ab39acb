/* emu512.h: the AVX-512F intrinsics that relayc's generated C uses, in
** plain C, so that the AVX-512 versions of its kernels run (slowly) on a
** machine without AVX-512: the tests compile a program's C with
**
**   -include tests/tools/emu512.h -mavx2 -mfma -Wno-psabi
**
** (gcc notes that vectors of 64 bytes passed by value without -mavx512f
** change the ABI: -Wno-psabi)
** (tests/CMakeLists.txt: compiled/emu512/...). Each intrinsic is renamed to
** a function here with the instruction's semantics (Intel's Intrinsics
** Guide), after <immintrin.h> is in (its guard keeps the C's own include
** from undoing the names); the CPU test says yes to every feature, and the
** target attributes become `unused`, so that the AVX-512 functions are
** compiled for the machine at hand (AVX2: the C's AVX2 versions need it
** anyway). An intrinsic the C uses and this file lacks stays the real
** one, in a function without the target: the compile fails, loudly. */
#ifndef RLY_EMU512_H
#define RLY_EMU512_H
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* GCC's vector types, as the real ones (the C also applies + - * to
** them); without -mavx512f the compiler splits their operations */
typedef float emu_m512 __attribute__((vector_size(64)));
typedef int32_t emu_m512i __attribute__((vector_size(64)));

static inline emu_m512 emu_setzero_ps(void) {
  emu_m512 r;
  memset(&r, 0, sizeof r);
  return r;
}
static inline emu_m512 emu_set1_ps(float x) {
  emu_m512 r;
  for (int i = 0; i < 16; i++) r[i] = x;
  return r;
}
static inline emu_m512i emu_setr_epi32(int a0, int a1, int a2, int a3, int a4, int a5, int a6, int a7, int a8, int a9,
                                       int a10, int a11, int a12, int a13, int a14, int a15) {
  emu_m512i r = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
  return r;
}
static inline emu_m512 emu_loadu_ps(const void *p) {
  emu_m512 r;
  memcpy(&r, p, sizeof r);
  return r;
}
static inline void emu_storeu_ps(void *p, emu_m512 a) { memcpy(p, &a, sizeof a); }
/* masked: the lanes whose bit is clear are neither read nor written */
static inline emu_m512 emu_maskz_loadu_ps(__mmask16 k, const void *p) {
  float f[16] = {0};
  emu_m512 r;
  for (int i = 0; i < 16; i++)
    if (k >> i & 1) memcpy(&f[i], (const float *)p + i, sizeof(float));
  memcpy(&r, f, sizeof r);
  return r;
}
static inline void emu_mask_storeu_ps(void *p, __mmask16 k, emu_m512 a) {
  for (int i = 0; i < 16; i++)
    if (k >> i & 1) {
      float x = a[i];
      memcpy((float *)p + i, &x, sizeof x);
    }
}
#define EMU_LANEWISE(NAME, EXPR)                      \
  static inline emu_m512 NAME(emu_m512 a, emu_m512 b) { \
    emu_m512 r;                                         \
    for (int i = 0; i < 16; i++) {                      \
      float x = a[i], y = b[i];                     \
      r[i] = (EXPR);                                  \
    }                                                   \
    return r;                                           \
  }
EMU_LANEWISE(emu_add_ps, x + y)
EMU_LANEWISE(emu_mul_ps, x * y)
/* vmaxps/vminps: the second operand where either is a NaN (or both 0) */
EMU_LANEWISE(emu_max_ps, x > y ? x : y)
EMU_LANEWISE(emu_min_ps, x < y ? x : y)
static inline emu_m512 emu_fmadd_ps(emu_m512 a, emu_m512 b, emu_m512 c) {
  emu_m512 r;
  for (int i = 0; i < 16; i++) r[i] = fmaf(a[i], b[i], c[i]); /* one rounding */
  return r;
}
/* per 128-bit lane: a0 b0 a1 b1 / a2 b2 a3 b3 */
static inline emu_m512 emu_unpacklo_ps(emu_m512 a, emu_m512 b) {
  emu_m512 r;
  for (int l = 0; l < 16; l += 4)
    r[l] = a[l], r[l + 1] = b[l], r[l + 2] = a[l + 1], r[l + 3] = b[l + 1];
  return r;
}
static inline emu_m512 emu_unpackhi_ps(emu_m512 a, emu_m512 b) {
  emu_m512 r;
  for (int l = 0; l < 16; l += 4)
    r[l] = a[l + 2], r[l + 1] = b[l + 2], r[l + 2] = a[l + 3], r[l + 3] = b[l + 3];
  return r;
}
/* per 128-bit lane: two of a's floats by imm's low fields, two of b's */
static inline emu_m512 emu_shuffle_ps(emu_m512 a, emu_m512 b, int imm) {
  emu_m512 r;
  for (int l = 0; l < 16; l += 4) {
    r[l] = a[l + (imm & 3)];
    r[l + 1] = a[l + (imm >> 2 & 3)];
    r[l + 2] = b[l + (imm >> 4 & 3)];
    r[l + 3] = b[l + (imm >> 6 & 3)];
  }
  return r;
}
/* 128-bit lanes: two of a's by imm's low fields, two of b's */
static inline emu_m512 emu_shuffle_f32x4(emu_m512 a, emu_m512 b, int imm) {
  emu_m512 r;
  for (int j = 0; j < 4; j++) {
    const emu_m512 *s = j < 2 ? &a : &b;
    for (int i = 0; i < 4; i++) r[4 * j + i] = (*s)[4 * (imm >> (2 * j) & 3) + i];
  }
  return r;
}
/* lane i: idx's low 5 bits pick from a (0-15) or b (16-31) */
static inline emu_m512 emu_permutex2var_ps(emu_m512 a, emu_m512i idx, emu_m512 b) {
  emu_m512 r;
  for (int i = 0; i < 16; i++) {
    int j = idx[i] & 31;
    r[i] = j < 16 ? a[j] : b[j - 16];
  }
  return r;
}
/* a real __m128 (SSE: every x86-64) */
static inline __m128 emu_extractf32x4_ps(emu_m512 a, int imm) {
  float f[4];
  for (int i = 0; i < 4; i++) f[i] = a[4 * (imm & 3) + i];
  return _mm_loadu_ps(f);
}
/* lanes of k: the float at base + idx * scale bytes; the others src's */
static inline emu_m512 emu_mask_i32gather_ps(emu_m512 src, __mmask16 k, emu_m512i idx, const void *base, int scale) {
  for (int i = 0; i < 16; i++)
    if (k >> i & 1) {
      float x;
      memcpy(&x, (const char *)base + (int64_t)idx[i] * scale, sizeof x);
      src[i] = x;
    }
  return src;
}
/* the real one adds in a tree of halves: 8 pairs, 4, 2, 1 */
static inline float emu_reduce_add_ps(emu_m512 a) {
  for (int w = 8; w >= 1; w /= 2)
    for (int i = 0; i < w; i++) a[i] = a[i] + a[i + w];
  return a[0];
}

#undef __m512
#define __m512 emu_m512
#undef __m512i
#define __m512i emu_m512i
#undef _mm512_setzero_ps
#define _mm512_setzero_ps emu_setzero_ps
#undef _mm512_set1_ps
#define _mm512_set1_ps emu_set1_ps
#undef _mm512_setr_epi32
#define _mm512_setr_epi32 emu_setr_epi32
#undef _mm512_loadu_ps
#define _mm512_loadu_ps emu_loadu_ps
#undef _mm512_storeu_ps
#define _mm512_storeu_ps emu_storeu_ps
#undef _mm512_maskz_loadu_ps
#define _mm512_maskz_loadu_ps emu_maskz_loadu_ps
#undef _mm512_mask_storeu_ps
#define _mm512_mask_storeu_ps emu_mask_storeu_ps
#undef _mm512_add_ps
#define _mm512_add_ps emu_add_ps
#undef _mm512_mul_ps
#define _mm512_mul_ps emu_mul_ps
#undef _mm512_max_ps
#define _mm512_max_ps emu_max_ps
#undef _mm512_min_ps
#define _mm512_min_ps emu_min_ps
#undef _mm512_fmadd_ps
#define _mm512_fmadd_ps emu_fmadd_ps
#undef _mm512_unpacklo_ps
#define _mm512_unpacklo_ps emu_unpacklo_ps
#undef _mm512_unpackhi_ps
#define _mm512_unpackhi_ps emu_unpackhi_ps
#undef _mm512_shuffle_ps
#define _mm512_shuffle_ps emu_shuffle_ps
#undef _mm512_shuffle_f32x4
#define _mm512_shuffle_f32x4 emu_shuffle_f32x4
#undef _mm512_permutex2var_ps
#define _mm512_permutex2var_ps emu_permutex2var_ps
#undef _mm512_extractf32x4_ps
#define _mm512_extractf32x4_ps emu_extractf32x4_ps
#undef _mm512_reduce_add_ps
#define _mm512_reduce_add_ps emu_reduce_add_ps
#undef _mm512_mask_i32gather_ps
#define _mm512_mask_i32gather_ps emu_mask_i32gather_ps
/* an emulated vector is in no register */
#define RLYRT_IN_REG(x) ((void)0)
#define __builtin_cpu_supports(feature) 1
#define target(features) unused
#endif
