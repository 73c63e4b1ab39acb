/* lower/fastmath.c: float32 exp, tanh and sigmoid that vectorize.
**
** libm's exp and tanh are calls the compiler cannot vectorize, and the
** reference semantics (compute in double, round once) need the double
** versions, so a float32 chain with sigmoid or tanh ran one element at a
** time through libm in double. For float32 the loops use the functions
** below instead: straight-line float code (range reduction, a polynomial,
** selects instead of branches, the exponent built with integer ops), which
** gcc and clang inline and vectorize at -O2 with whatever vector ISA the
** function is compiled for (SSE2 for baseline x86-64, AVX2 or AVX-512 in
** the GEMM kernels' target functions).
**
** Accuracy (tests/unit/test_lower.c sweeps them against libm in double):
** within about 3 ulps (4e-7 relative) of the correctly rounded result over
** the whole float range; results in the subnormal range have the format's
** absolute precision. NaN gives NaN; exp(-inf) = 0, exp(x) = +inf from
** x > 88.73; tanh(+-large) = +-1 and sigmoid saturates to 0 and 1 exactly,
** with no inf/inf on the way. So these ops no longer give the reference
** kernel's bits, only its value within that error: the price of the
** vectorized loop. float64 keeps libm.
**
** The definitions are text guarded by RLYK_FASTMATH, emitted before any
** kernel that uses them (lower_loops), so one C file holds them once
** whatever number of kernels call them (`unused`: a kernel may call only
** one of them, and clang warns about the others). No FMA contraction (the kernels'
** pragma, gcc's ISO mode) keeps the bits the same in every ISA version. */
#include <string.h>

#include "lower/kernel.h"

/* Cephes-style expf: x = n ln2 + r with |r| <= ln2 / 2 (n by the
** 1.5 * 2^23 rounding trick, ln2 in two parts so that n * hi is exact),
** e^r by a degree-7 polynomial, and 2^n applied as two factors 2^a * 2^b
** (a + b = n, each a normal float) so that results down to the subnormals
** and up to the overflow to +inf are rounded once. The input is clamped to
** [-104, 89], beyond which the result is 0 or +inf anyway; comparisons with
** NaN are false, so NaN passes through the clamp and the polynomial. n is
** read from the rounded sum's bits, never converted from float (that would
** be undefined for NaN), with unsigned arithmetic throughout. */
static const char fastmath_defs[] =
    "#ifndef RLYK_FASTMATH\n"
    "#define RLYK_FASTMATH\n"
    "/* float32 exp, tanh and sigmoid that vectorize (relayc's lower/fastmath.c) */\n"
    "static inline __attribute__((always_inline, unused)) float rlyk_asf(uint32_t u) {\n"
    "  float f;\n"
    "  memcpy(&f, &u, sizeof f);\n"
    "  return f;\n"
    "}\n"
    "static inline __attribute__((always_inline, unused)) uint32_t rlyk_asu(float f) {\n"
    "  uint32_t u;\n"
    "  memcpy(&u, &f, sizeof u);\n"
    "  return u;\n"
    "}\n"
    "/* c ? a : b through an integer mask: gcc (trapping math, its default) does not\n"
    "** if-convert a float ?: once jump threading has given the clamped arm its own\n"
    "** path of constant arithmetic, and then the loop does not vectorize. */\n"
    "static inline __attribute__((always_inline, unused)) float rlyk_sel(int c, float a, float b) {\n"
    "  const uint32_t m = 0u - (uint32_t)c;\n"
    "  return rlyk_asf((rlyk_asu(a) & m) | (rlyk_asu(b) & ~m));\n"
    "}\n"
    "static inline __attribute__((always_inline, unused)) float rlyk_expf(float x) {\n"
    "  const float lo = rlyk_sel(x < -104.0f, -104.0f, x);\n"
    "  const float c = rlyk_sel(lo > 89.0f, 89.0f, lo);\n"
    "  const float t = c * 1.44269504088896341f + 12582912.0f;\n"
    "  const float n = t - 12582912.0f;\n"
    "  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;\n"
    "  float p = 1.9875691500e-4f;\n"
    "  p = p * r + 1.3981999507e-3f;\n"
    "  p = p * r + 8.3334519073e-3f;\n"
    "  p = p * r + 4.1665795894e-2f;\n"
    "  p = p * r + 1.6666665459e-1f;\n"
    "  p = p * r + 5.0000001201e-1f;\n"
    "  p = p * (r * r) + r + 1.0f;\n"
    "  const uint32_t u = rlyk_asu(t) - 0x4b400000u + 150u; /* n + 150, in [0, 278] */\n"
    "  const uint32_t a = u >> 1, b = u - a;\n"
    "  return p * rlyk_asf((a + 52u) << 23) * rlyk_asf((b + 52u) << 23);\n"
    "}\n"
    "/* |x| < 0.625: |x| + |x|^3 P(x^2) (Cephes tanhf); else 1 - 2 / (e^2|x| + 1),\n"
    "** 1 exactly once e^2|x| is +inf; then x's sign bit (so tanh(-0) = -0). */\n"
    "static inline __attribute__((always_inline, unused)) float rlyk_tanhf(float x) {\n"
    "  const float ax = fabsf(x), z = x * x;\n"
    "  float p = -5.70498872745e-3f;\n"
    "  p = p * z + 2.06390887954e-2f;\n"
    "  p = p * z - 5.37397155531e-2f;\n"
    "  p = p * z + 1.33314422036e-1f;\n"
    "  p = p * z - 3.33332819422e-1f;\n"
    "  const float small = ax + ax * z * p;\n"
    "  const float big = 1.0f - 2.0f / (rlyk_expf(ax + ax) + 1.0f);\n"
    "  const float t = rlyk_sel(ax < 0.625f, small, big);\n"
    "  return rlyk_asf(rlyk_asu(t) | (rlyk_asu(x) & 0x80000000u));\n"
    "}\n"
    "/* e / (1 + e) with e = exp(-|x|) <= 1 for x < 0, 1 / (1 + e) otherwise: no\n"
    "** overflow, and small results keep their relative precision. */\n"
    "static inline __attribute__((always_inline, unused)) float rlyk_sigmoidf(float x) {\n"
    "  const float e = rlyk_expf(-fabsf(x));\n"
    "  const float r = 1.0f / (1.0f + e);\n"
    "  return rlyk_sel(x < 0.0f, e * r, r);\n"
    "}\n"
    "#endif\n";

const char *fm_tmpl(OpId op) {
  switch (op) {
  case OP_EXP: case OP_FAST_EXP: return "rlyk_expf(A)";
  case OP_TANH: case OP_FAST_TANH: return "rlyk_tanhf(A)";
  case OP_SIGMOID: return "rlyk_sigmoidf(A)";
  default: return NULL;
  }
}

bool fm_used(const char *text) { return strstr(text, "rlyk_") != NULL; }

void fm_put_defs(StrBuf *sb) { sb_puts(sb, fastmath_defs); }
