/* k_elemwise.c: reference kernels of the elemwise family (listed in
** k_elemwise.def): unary and binary arithmetic, comparisons, logical and
** bitwise ops, where, casts and the *_like ops, reductions, sorting and
** searching, and the annotation ops (which copy their argument).
**
** Semantics are TVM v0.16's (spec sections 9 and 11), as its code computes
** them:
**   - floats are computed in double and rounded once when stored, except
**     that the quotient of floor_divide/floor_mod/trunc_divide/trunc_mod
**     and the product of floor_mod/trunc_mod are rounded to the dtype first
**     (TVM computes x - floor(x / y) * y in the dtype, and the rounding of
**     x / y decides the floor);
**   - integers wrap around in their width; divide and mod truncate toward
**     zero, floor_divide/floor_mod round toward -inf; an integer division by
**     zero is an RLYRT_E_RUNTIME error; the most negative value divided by
**     -1 wraps (its remainder is 0);
**   - maximum/minimum (and relu, clip, the max/min reductions) select as
**     TVM's code does: max(a, b) = a > b ? a : b, min(a, b) = a < b ? a : b,
**     so a NaN in the first operand loses and one in the second wins;
**   - round rounds half away from zero (C round, LLVM's llvm.round); sign
**     of NaN is 0 (TVM's two selects);
**   - float to integer casts truncate toward zero (NaN gives 0, values out
**     of the int64/uint64 range saturate, then the result wraps to the
**     width); float to bool is x != 0 (NaN is true);
**   - mean divides the sum (in the dtype) by the element count cast to the
**     dtype; variance divides by the count (minus one when unbiased) as an
**     int64, both truncating for integers;
**   - argmax/argmin fold TVM's combiner from the first element: ties keep
**     the first index, or the last with select_last_index;
**   - argsort, sort and topk are stable: equal values keep index order,
**     ascending or descending.
** Other choices, where TVM itself fails or is undefined, are noted at the
** functions (power on integers, shifts out of range, unique's padding).
**
** Arguments are borrowed; results are new tensors. A kernel computes its
** result shapes from its arguments and checks them against the static types
** in c->outs (whose dims may be -1), which give the result dtypes. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernel.h"

#define KERNEL(name, fn) rlyrt_status fn(rlyrt_kernel_call *c);
#include "relayc/kernels/k_elemwise.def"
#undef KERNEL

enum { MAX_NDIM = 64 }; /* the runtime's largest rank (rlyrt_tensor_new) */

/* {==== Scalars ====} */

/* How a dtype's values are computed: floats in double, signed integers in
** int64_t, unsigned integers and bool in uint64_t. */
typedef enum NumKind { NK_FLOAT, NK_INT, NK_UINT } NumKind;

/* One element. NK_UINT keeps the uint64_t value's bits in i. */
typedef struct Num {
  NumKind k;
  double f;
  int64_t i;
} Num;

static NumKind kind_of(DLDataType dt) {
  if (dt.code == kDLFloat) return NK_FLOAT;
  return dt.code == kDLInt ? NK_INT : NK_UINT;
}

static bool is_bool(DLDataType dt) { return dt.code == kDLUInt && dt.bits == 1; }

static Num num_f(double f) {
  Num n = {NK_FLOAT, f, 0};
  return n;
}

static Num num_i(int64_t i) {
  Num n = {NK_INT, 0, i};
  return n;
}

static Num num_u(uint64_t u) {
  Num n = {NK_UINT, 0, (int64_t)u};
  return n;
}

static Num num_bool(bool b) { return num_u(b ? 1u : 0u); }

static double num_to_f(Num n) {
  if (n.k == NK_FLOAT) return n.f;
  return n.k == NK_INT ? (double)n.i : (double)(uint64_t)n.i;
}

static bool num_nonzero(Num n) { return n.k == NK_FLOAT ? n.f != 0 : n.i != 0; }

static Num load(const rlyrt_tensor *t, int64_t idx) {
  NumKind k = kind_of(t->dl.dtype);
  if (k == NK_FLOAT) return num_f(rlyrt_get_f64(t, idx));
  Num n = {k, 0, rlyrt_get_i64(t, idx)};
  return n;
}

/* A float converted to an integer dtype as TVM's cast does (truncation);
** NaN gives 0 and values beyond the 64-bit range saturate. Returns the
** 64-bit pattern, which the store then wraps to the width. */
static int64_t float_to_int_bits(DLDataType dt, double v) {
  if (isnan(v)) return 0;
  double t = trunc(v);
  if (dt.code == kDLUInt) {
    if (t >= 18446744073709551616.0) return (int64_t)UINT64_MAX;
    if (t >= 9223372036854775808.0) return (int64_t)(uint64_t)t;
  } else if (t >= 9223372036854775808.0) {
    return INT64_MAX;
  }
  if (t < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)t;
}

/* Stores n into element idx of t, converting it to t's dtype with TVM's cast
** semantics (integers wrap to the width; anything to bool is x != 0). */
static void store(rlyrt_tensor *t, int64_t idx, Num n) {
  DLDataType dt = t->dl.dtype;
  if (dt.code == kDLFloat) rlyrt_set_f64(t, idx, num_to_f(n));
  else if (n.k != NK_FLOAT) rlyrt_set_i64(t, idx, n.i);
  else if (is_bool(dt)) rlyrt_set_i64(t, idx, n.f != 0);
  else rlyrt_set_i64(t, idx, float_to_int_bits(dt, n.f));
}

/* v rounded to the precision of the float dtype dt. */
static double fround(DLDataType dt, double v) {
  if (dt.bits == 32) return (double)(float)v;
  if (dt.bits == 16) return (double)rlyrt_half_to_float(rlyrt_float_to_half((float)v));
  return v;
}

/* v wrapped to the integer dtype dt, as the 64-bit pattern the dtype's
** value reads back as (sign-extended for signed dtypes). */
static int64_t wrap_int(DLDataType dt, int64_t v) {
  if (is_bool(dt)) return v != 0;
  if (dt.code == kDLInt) {
    switch (dt.bits) {
    case 8: return (int8_t)v;
    case 16: return (int16_t)v;
    case 32: return (int32_t)v;
    default: return v;
    }
  }
  switch (dt.bits) {
  case 8: return (int64_t)((uint64_t)v & 0xffu);
  case 16: return (int64_t)((uint64_t)v & 0xffffu);
  case 32: return (int64_t)((uint64_t)v & 0xffffffffu);
  default: return v;
  }
}

/* Arithmetic shift right, defined for negative values and any count. */
static int64_t asr(int64_t v, int64_t k) {
  if (k <= 0) return v;
  if (k >= 64) return v < 0 ? -1 : 0;
  return v >= 0 ? v >> k : ~(~v >> k);
}

/* Comparisons of two numbers of one kind (NaN compares false). */
static bool num_lt(Num a, Num b) {
  if (a.k == NK_FLOAT) return a.f < b.f;
  if (a.k == NK_INT) return a.i < b.i;
  return (uint64_t)a.i < (uint64_t)b.i;
}

static bool num_gt(Num a, Num b) { return num_lt(b, a); }

static bool num_eq(Num a, Num b) { return a.k == NK_FLOAT ? a.f == b.f : a.i == b.i; }

/* The lowest (or highest) value of dt: TVM's identity of max (min). */
static Num dtype_limit(DLDataType dt, bool highest) {
  if (dt.code == kDLFloat) {
    double m = dt.bits == 64 ? DBL_MAX : dt.bits == 32 ? (double)FLT_MAX : 65504.0;
    return num_f(highest ? m : -m);
  }
  if (dt.code == kDLUInt) {
    if (!highest) return num_u(0);
    return num_u(dt.bits >= 64 ? UINT64_MAX : ((uint64_t)1 << dt.bits) - 1);
  }
  int64_t m = dt.bits >= 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (dt.bits - 1)) - 1);
  return num_i(highest ? m : -m - 1);
}

/* {==== Arguments and results ====} */

/* "(2, 3)" into buf. */
static const char *shape_str(const int64_t *shape, int ndim, char *buf, size_t len) {
  size_t n = (size_t)snprintf(buf, len, "(");
  for (int i = 0; i < ndim && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (n < len) snprintf(buf + n, len - n, ndim == 1 ? ",)" : ")");
  return buf;
}

/* Argument i as a tensor of a dtype the runtime supports. */
static rlyrt_status tensor_arg(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t) {
  rlyrt_status s = rk_tensor_arg(c, i, t);
  if (s != RLYRT_OK) return s;
  if (!rlyrt_dtype_bytes((*t)->dl.dtype)) {
    char name[32];
    return rk_fail(c, RLYRT_E_UNSUPPORTED, "argument %d has the unsupported dtype %s", i + 1,
                   rlyrt_dtype_name((*t)->dl.dtype, name));
  }
  if ((*t)->dl.ndim > MAX_NDIM)
    return rk_fail(c, RLYRT_E_UNSUPPORTED, "argument %d has rank above %d", i + 1, MAX_NDIM);
  return RLYRT_OK;
}

static rlyrt_status same_dtype(const rlyrt_kernel_call *c, const rlyrt_tensor *a, const rlyrt_tensor *b) {
  if (rlyrt_dtype_eq(a->dl.dtype, b->dl.dtype)) return RLYRT_OK;
  char s1[32], s2[32];
  return rk_fail(c, RLYRT_E_ARG, "dtypes %s and %s differ", rlyrt_dtype_name(a->dl.dtype, s1),
                 rlyrt_dtype_name(b->dl.dtype, s2));
}

/* A new zeroed tensor for result i of the given shape, of the dtype of the
** static type c->outs[i]; the shape must agree with the static one (a -1
** there matches anything). */
static rlyrt_status alloc_result(const rlyrt_kernel_call *c, int i, int ndim, const int64_t *shape,
                                 rlyrt_tensor **t) {
  if (i >= c->nouts) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for result %d", i);
  const rlyrt_tensor_type *ty = &c->outs[i];
  bool ok = ty->ndim == ndim;
  for (int k = 0; ok && k < ndim; k++) ok = ty->shape[k] < 0 || ty->shape[k] == shape[k];
  if (!ok) {
    char s1[256], s2[256];
    return rk_fail(c, RLYRT_E_ARG, "the result has shape %s, but its static type says %s",
                   shape_str(shape, ndim, s1, sizeof s1), shape_str(ty->shape, ty->ndim, s2, sizeof s2));
  }
  return rk_alloc(c, ty->dtype, ndim, shape, t);
}

/* The NumPy broadcast of shapes a and b into out (rank *n); false if they
** do not broadcast. */
static bool broadcast_shape(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *n) {
  int m = na > nb ? na : nb;
  for (int i = 0; i < m; i++) {
    int64_t da = i < m - na ? 1 : a[i - (m - na)];
    int64_t db = i < m - nb ? 1 : b[i - (m - nb)];
    if (da != db && da != 1 && db != 1) return false;
    out[i] = da == 1 ? db : da;
  }
  *n = m;
  return true;
}

static rlyrt_status broadcast_error(const rlyrt_kernel_call *c, const rlyrt_tensor *a, const rlyrt_tensor *b) {
  char s1[256], s2[256];
  return rk_fail(c, RLYRT_E_ARG, "shapes %s and %s do not broadcast",
                 shape_str(a->dl.shape, a->dl.ndim, s1, sizeof s1), shape_str(b->dl.shape, b->dl.ndim, s2, sizeof s2));
}

/* {==== Unary ====} */

typedef enum UnaryOp {
  U_ABS, U_ACOS, U_ACOSH, U_ASIN, U_ASINH, U_ATAN, U_ATANH, U_BITWISE_NOT, U_CEIL, U_CLIP, U_COPY, U_COS,
  U_COSH, U_ERF, U_EXP, U_FAST_ERF, U_FAST_EXP, U_FAST_TANH, U_FIXED_POINT_MULTIPLY, U_FLOOR, U_ISFINITE,
  U_ISINF, U_ISNAN, U_LOG, U_LOG10, U_LOG2, U_LOGICAL_NOT, U_NEGATIVE, U_LEAKY_RELU, U_RELU, U_ONES_LIKE,
  U_ROUND, U_RSQRT, U_SIGMOID, U_SIGN, U_SIN, U_SINH, U_SQRT, U_TAN, U_TANH, U_TRUNC, U_ZEROS_LIKE,
} UnaryOp;

static const struct {
  const char *name;
  UnaryOp op;
} unary_ops[] = {
    {"abs", U_ABS}, {"acos", U_ACOS}, {"acosh", U_ACOSH}, {"asin", U_ASIN}, {"asinh", U_ASINH},
    {"atan", U_ATAN}, {"atanh", U_ATANH}, {"bitwise_not", U_BITWISE_NOT}, {"ceil", U_CEIL}, {"clip", U_CLIP},
    {"copy", U_COPY}, {"cos", U_COS}, {"cosh", U_COSH}, {"erf", U_ERF}, {"exp", U_EXP},
    {"fast_erf", U_FAST_ERF}, {"fast_exp", U_FAST_EXP}, {"fast_tanh", U_FAST_TANH},
    {"fixed_point_multiply", U_FIXED_POINT_MULTIPLY}, {"floor", U_FLOOR}, {"isfinite", U_ISFINITE},
    {"isinf", U_ISINF}, {"isnan", U_ISNAN}, {"log", U_LOG}, {"log10", U_LOG10}, {"log2", U_LOG2},
    {"logical_not", U_LOGICAL_NOT}, {"negative", U_NEGATIVE}, {"nn.leaky_relu", U_LEAKY_RELU},
    {"nn.relu", U_RELU}, {"ones_like", U_ONES_LIKE}, {"round", U_ROUND}, {"rsqrt", U_RSQRT},
    {"sigmoid", U_SIGMOID}, {"sign", U_SIGN}, {"sin", U_SIN}, {"sinh", U_SINH}, {"sqrt", U_SQRT},
    {"tan", U_TAN}, {"tanh", U_TANH}, {"trunc", U_TRUNC}, {"zeros_like", U_ZEROS_LIKE},
};

/* The attributes some unary ops read, converted once. */
typedef struct UnaryParams {
  double alpha;          /* leaky_relu */
  Num lo, hi;            /* clip: a_min and a_max in the dtype */
  int64_t multiplier;    /* fixed_point_multiply */
  int64_t shift;
} UnaryParams;

/* A float math function; also used for integer data (the value goes
** through double and the result is cast back, truncating). */
static double math_op(UnaryOp op, double x) {
  switch (op) {
  case U_ACOS: return acos(x);
  case U_ACOSH: return acosh(x);
  case U_ASIN: return asin(x);
  case U_ASINH: return asinh(x);
  case U_ATAN: return atan(x);
  case U_ATANH: return atanh(x);
  case U_COS: return cos(x);
  case U_COSH: return cosh(x);
  case U_ERF:
  case U_FAST_ERF: return erf(x);      /* fast_*: the exact function (TVM approximates) */
  case U_EXP:
  case U_FAST_EXP: return exp(x);
  case U_TANH:
  case U_FAST_TANH: return tanh(x);
  case U_LOG: return log(x);
  case U_LOG10: return log10(x);
  case U_LOG2: return log2(x);
  case U_RSQRT: return 1.0 / sqrt(x);
  case U_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case U_SIN: return sin(x);
  case U_SINH: return sinh(x);
  case U_SQRT: return sqrt(x);
  case U_TAN: return tan(x);
  default: return x;
  }
}

/* TVM's fixed_point_multiply (q_multiply_shift with q = 31): in int64,
** x << max(shift, 0), times the multiplier, plus 1 << (30 + max(-shift, 0)),
** shifted right arithmetically by 31 + max(-shift, 0); the result wraps to
** int32. Overflow of the int64 steps wraps. */
static int64_t fixed_point_multiply(int64_t x, int64_t multiplier, int64_t shift) {
  int64_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  uint64_t v = left >= 64 ? 0 : (uint64_t)x << left;
  v *= (uint64_t)multiplier;
  int64_t total = right + 31;
  if (total - 1 < 64) v += (uint64_t)1 << (total - 1);
  return (int32_t)asr((int64_t)v, total);
}

static Num unary_float(UnaryOp op, DLDataType dt, double x, const UnaryParams *p) {
  switch (op) {
  case U_ABS: return num_f(fabs(x));
  case U_CEIL: return num_f(ceil(x));
  case U_FLOOR: return num_f(floor(x));
  case U_ROUND: return num_f(round(x));
  case U_TRUNC: return num_f(trunc(x));
  case U_NEGATIVE: return num_f(-x);
  case U_SIGN: return num_f(x < 0 ? -1.0 : x > 0 ? 1.0 : 0.0);
  case U_COPY: return num_f(x);
  case U_ZEROS_LIKE: return num_f(0);
  case U_ONES_LIKE: return num_f(1);
  case U_RELU: return num_f(x > 0 ? x : 0.0);
  case U_LEAKY_RELU: return num_f(x > 0 ? x : x * fround(dt, p->alpha));
  case U_CLIP: {
    double r = x < p->hi.f ? x : p->hi.f; /* max(min(x, a_max), a_min) */
    return num_f(r > p->lo.f ? r : p->lo.f);
  }
  case U_ISNAN: return num_bool(isnan(x));
  case U_ISINF: return num_bool(isinf(x));
  case U_ISFINITE: return num_bool(isfinite(x));
  default: return num_f(math_op(op, x));
  }
}

/* Integer (and bool) data; n is NK_INT or NK_UINT. */
static Num unary_int(UnaryOp op, DLDataType dt, Num n, const UnaryParams *p) {
  bool is_signed = n.k == NK_INT;
  int64_t x = n.i;
  Num r = n;
  switch (op) {
  case U_ABS: r.i = is_signed && x < 0 ? (int64_t)(0 - (uint64_t)x) : x; return r;
  case U_CEIL:
  case U_FLOOR:
  case U_ROUND:
  case U_TRUNC:
  case U_COPY: return r;
  case U_NEGATIVE: r.i = (int64_t)(0 - (uint64_t)x); return r;
  case U_SIGN: r.i = is_signed ? (x > 0) - (x < 0) : x != 0; return r;
  case U_ZEROS_LIKE: r.i = 0; return r;
  case U_ONES_LIKE: r.i = 1; return r;
  case U_RELU: r.i = is_signed && x < 0 ? 0 : x; return r;
  case U_LEAKY_RELU:
    /* TVM multiplies by alpha made a constant of the dtype (truncated). */
    if (!(is_signed ? x > 0 : x != 0)) r.i = (int64_t)((uint64_t)x * (uint64_t)float_to_int_bits(dt, p->alpha));
    return r;
  case U_CLIP: {
    Num m = num_lt(n, p->hi) ? n : p->hi;
    return num_gt(m, p->lo) ? m : p->lo;
  }
  case U_BITWISE_NOT: r.i = is_bool(dt) ? !x : ~x; return r;
  case U_LOGICAL_NOT: r.i = !x; return r;
  case U_FIXED_POINT_MULTIPLY: r.i = fixed_point_multiply(x, p->multiplier, p->shift); return r;
  case U_ISNAN:
  case U_ISINF: return num_bool(false);
  case U_ISFINITE: return num_bool(true);
  default: return num_f(math_op(op, num_to_f(n)));
  }
}

/* A clip bound in dt: the float rounded to the dtype, or for integers
** truncated and saturated to the dtype's range (TVM casts, which is
** undefined beyond the range). */
static Num clip_bound(DLDataType dt, double v) {
  if (dt.code == kDLFloat) return num_f(fround(dt, v));
  Num lo = dtype_limit(dt, false), hi = dtype_limit(dt, true);
  double t = trunc(v);
  if (isnan(t)) t = 0;
  if (t <= num_to_f(lo)) return lo;
  if (t >= num_to_f(hi)) return hi;
  Num r = lo;
  r.i = dt.code == kDLInt ? (int64_t)t : (int64_t)(uint64_t)t;
  return r;
}

rlyrt_status rk_elemwise_unary(rlyrt_kernel_call *c) {
  int op = -1;
  for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
    if (strcmp(c->op, unary_ops[i].name) == 0) op = (int)unary_ops[i].op;
  if (op < 0) return rk_fail(c, RLYRT_E_INTERNAL, "not a unary elementwise op");
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  DLDataType dt = x->dl.dtype;
  UnaryParams p = {0};
  switch ((UnaryOp)op) {
  case U_LEAKY_RELU: p.alpha = rk_attr_float(c, "alpha", 0.25); break;
  case U_CLIP:
    if (rk_attr_is_none(c, "a_min") || rk_attr_is_none(c, "a_max"))
      return rk_fail(c, RLYRT_E_ARG, "attributes 'a_min' and 'a_max' are required");
    p.lo = clip_bound(dt, rk_attr_float(c, "a_min", 0));
    p.hi = clip_bound(dt, rk_attr_float(c, "a_max", 0));
    break;
  case U_FIXED_POINT_MULTIPLY:
    if (dt.code != kDLInt || dt.bits != 32) return rk_fail(c, RLYRT_E_ARG, "data must be int32");
    p.multiplier = rk_attr_int(c, "multiplier", 0);
    p.shift = rk_attr_int(c, "shift", 0);
    break;
  case U_LOGICAL_NOT:
    if (!is_bool(dt)) return rk_fail(c, RLYRT_E_ARG, "data must be bool");
    break;
  case U_BITWISE_NOT:
    if (dt.code == kDLFloat) return rk_fail(c, RLYRT_E_ARG, "data must be an integer or bool tensor");
    break;
  default: break;
  }
  if ((s = alloc_result(c, 0, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    Num v = load(x, i);
    store(out, i, v.k == NK_FLOAT ? unary_float((UnaryOp)op, dt, v.f, &p) : unary_int((UnaryOp)op, dt, v, &p));
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Binary and where ====} */

typedef enum BinaryOp {
  B_ADD, B_SUBTRACT, B_MULTIPLY, B_DIVIDE, B_POWER, B_MAXIMUM, B_MINIMUM, B_MOD, B_FLOOR_DIVIDE, B_FLOOR_MOD,
  B_TRUNC_DIVIDE, B_TRUNC_MOD, B_BITWISE_AND, B_BITWISE_OR, B_BITWISE_XOR, B_LEFT_SHIFT, B_RIGHT_SHIFT,
  B_EQUAL, B_NOT_EQUAL, B_LESS, B_LESS_EQUAL, B_GREATER, B_GREATER_EQUAL, B_LOGICAL_AND, B_LOGICAL_OR,
  B_LOGICAL_XOR,
} BinaryOp;

static const struct {
  const char *name;
  BinaryOp op;
} binary_ops[] = {
    {"add", B_ADD}, {"subtract", B_SUBTRACT}, {"multiply", B_MULTIPLY}, {"divide", B_DIVIDE},
    {"power", B_POWER}, {"maximum", B_MAXIMUM}, {"minimum", B_MINIMUM}, {"mod", B_MOD},
    {"floor_divide", B_FLOOR_DIVIDE}, {"floor_mod", B_FLOOR_MOD}, {"trunc_divide", B_TRUNC_DIVIDE},
    {"trunc_mod", B_TRUNC_MOD}, {"bitwise_and", B_BITWISE_AND}, {"bitwise_or", B_BITWISE_OR},
    {"bitwise_xor", B_BITWISE_XOR}, {"left_shift", B_LEFT_SHIFT}, {"right_shift", B_RIGHT_SHIFT},
    {"equal", B_EQUAL}, {"not_equal", B_NOT_EQUAL}, {"less", B_LESS}, {"less_equal", B_LESS_EQUAL},
    {"greater", B_GREATER}, {"greater_equal", B_GREATER_EQUAL}, {"logical_and", B_LOGICAL_AND},
    {"logical_or", B_LOGICAL_OR}, {"logical_xor", B_LOGICAL_XOR},
};

static Num binary_float(BinaryOp op, DLDataType dt, double x, double y) {
  switch (op) {
  case B_ADD: return num_f(x + y);
  case B_SUBTRACT: return num_f(x - y);
  case B_MULTIPLY: return num_f(x * y);
  case B_DIVIDE: return num_f(x / y);
  case B_POWER: return num_f(pow(x, y));
  case B_MAXIMUM: return num_f(x > y ? x : y);
  case B_MINIMUM: return num_f(x < y ? x : y);
  case B_MOD: return num_f(fmod(x, y));
  case B_FLOOR_DIVIDE: return num_f(floor(fround(dt, x / y)));
  case B_FLOOR_MOD: return num_f(x - fround(dt, floor(fround(dt, x / y)) * y));
  case B_TRUNC_DIVIDE: return num_f(trunc(fround(dt, x / y)));
  case B_TRUNC_MOD: return num_f(x - fround(dt, trunc(fround(dt, x / y)) * y));
  case B_EQUAL: return num_bool(x == y);
  case B_NOT_EQUAL: return num_bool(x != y);
  case B_LESS: return num_bool(x < y);
  case B_LESS_EQUAL: return num_bool(x <= y);
  case B_GREATER: return num_bool(x > y);
  case B_GREATER_EQUAL: return num_bool(x >= y);
  default: return num_f(NAN); /* bitwise and logical ops take no floats */
  }
}

/* base ** e with wrap-around. TVM rejects power on integers; here a
** negative exponent gives the truncated quotient 1 / base**|e| (1 or -1
** for base 1 or -1, 0 otherwise) and is a division by zero for base 0. */
static bool int_power(int64_t base, int64_t e, bool is_signed, int64_t *out) {
  if (is_signed && e < 0) {
    if (base == 0) return false;
    *out = base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    return true;
  }
  uint64_t r = 1, b = (uint64_t)base, k = (uint64_t)e;
  while (k) {
    if (k & 1) r *= b;
    b *= b;
    k >>= 1;
  }
  *out = (int64_t)r;
  return true;
}

/* Integer (and bool) operands of kind k (NK_INT or NK_UINT). Shifts by a
** negative count or by 64 or more (undefined in TVM's code) give 0, or -1
** for a right shift of a negative value. */
static rlyrt_status binary_int(const rlyrt_kernel_call *c, BinaryOp op, NumKind k, int64_t x, int64_t y, Num *out) {
  bool sg = k == NK_INT;
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  Num a = {k, 0, x}, b = {k, 0, y};
  Num r = {k, 0, 0};
  switch (op) {
  case B_ADD: r.i = (int64_t)(ux + uy); break;
  case B_SUBTRACT: r.i = (int64_t)(ux - uy); break;
  case B_MULTIPLY: r.i = (int64_t)(ux * uy); break;
  case B_POWER:
    if (!int_power(x, y, sg, &r.i)) return rk_fail(c, RLYRT_E_RUNTIME, "division by zero (0 to a negative power)");
    break;
  case B_MAXIMUM: r = num_gt(a, b) ? a : b; break;
  case B_MINIMUM: r = num_lt(a, b) ? a : b; break;
  case B_DIVIDE:
  case B_TRUNC_DIVIDE:
  case B_FLOOR_DIVIDE:
  case B_MOD:
  case B_TRUNC_MOD:
  case B_FLOOR_MOD: {
    if (y == 0) return rk_fail(c, RLYRT_E_RUNTIME, "division by zero");
    bool is_div = op == B_DIVIDE || op == B_TRUNC_DIVIDE || op == B_FLOOR_DIVIDE;
    if (!sg) {
      r.i = (int64_t)(is_div ? ux / uy : ux % uy);
    } else if (y == -1) {
      r.i = is_div ? (int64_t)(0 - ux) : 0; /* INT64_MIN / -1 wraps */
    } else {
      int64_t q = x / y, m = x % y;
      if (op == B_FLOOR_DIVIDE && m != 0 && ((m < 0) != (y < 0))) q -= 1;
      if (op == B_FLOOR_MOD && m != 0 && ((m < 0) != (y < 0))) m += y;
      r.i = is_div ? q : m;
    }
    break;
  }
  case B_BITWISE_AND: r.i = x & y; break;
  case B_BITWISE_OR: r.i = x | y; break;
  case B_BITWISE_XOR: r.i = x ^ y; break;
  case B_LEFT_SHIFT:
    r.i = (sg && y < 0) || uy >= 64 ? 0 : (int64_t)(ux << uy);
    break;
  case B_RIGHT_SHIFT:
    if (sg) r.i = y < 0 ? (x < 0 ? -1 : 0) : asr(x, y);
    else r.i = uy >= 64 ? 0 : (int64_t)(ux >> uy);
    break;
  case B_EQUAL: r = num_bool(x == y); break;
  case B_NOT_EQUAL: r = num_bool(x != y); break;
  case B_LESS: r = num_bool(num_lt(a, b)); break;
  case B_LESS_EQUAL: r = num_bool(!num_gt(a, b)); break;
  case B_GREATER: r = num_bool(num_gt(a, b)); break;
  case B_GREATER_EQUAL: r = num_bool(!num_lt(a, b)); break;
  case B_LOGICAL_AND: r = num_bool(x != 0 && y != 0); break;
  case B_LOGICAL_OR: r = num_bool(x != 0 || y != 0); break;
  case B_LOGICAL_XOR: r = num_bool((x != 0) != (y != 0)); break;
  }
  *out = r;
  return RLYRT_OK;
}

rlyrt_status rk_elemwise_binary(rlyrt_kernel_call *c) {
  int op = -1;
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(c->op, binary_ops[i].name) == 0) op = (int)binary_ops[i].op;
  if (op < 0) return rk_fail(c, RLYRT_E_INTERNAL, "not a binary elementwise op");
  rlyrt_tensor *a, *b, *out;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &a)) != RLYRT_OK || (s = tensor_arg(c, 1, &b)) != RLYRT_OK) return s;
  if ((s = same_dtype(c, a, b)) != RLYRT_OK) return s;
  DLDataType dt = a->dl.dtype;
  NumKind k = kind_of(dt);
  if (k == NK_FLOAT && op >= B_BITWISE_AND && op <= B_RIGHT_SHIFT)
    return rk_fail(c, RLYRT_E_ARG, "operands must be integers or bool");
  if (!is_bool(dt) && op >= B_LOGICAL_AND) return rk_fail(c, RLYRT_E_ARG, "operands must be bool");
  int64_t shape[MAX_NDIM], coords[MAX_NDIM];
  int ndim;
  if (!broadcast_shape(a->dl.shape, a->dl.ndim, b->dl.shape, b->dl.ndim, shape, &ndim)) return broadcast_error(c, a, b);
  if ((s = alloc_result(c, 0, ndim, shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t i = 0; i < n; i++) {
    rk_unravel(i, shape, ndim, coords);
    Num x = load(a, rk_broadcast_index(coords, ndim, a->dl.shape, a->dl.ndim));
    Num y = load(b, rk_broadcast_index(coords, ndim, b->dl.shape, b->dl.ndim));
    Num r;
    if (k == NK_FLOAT) {
      r = binary_float((BinaryOp)op, dt, x.f, y.f);
    } else if ((s = binary_int(c, (BinaryOp)op, k, x.i, y.i, &r)) != RLYRT_OK) {
      rlyrt_release(&out->obj);
      return s;
    }
    store(out, i, r);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* where(condition, x, y): x where condition is true, else y; the shape is
** broadcast(condition, broadcast(x, y)). */
rlyrt_status rk_elemwise_where(rlyrt_kernel_call *c) {
  rlyrt_tensor *cond, *x, *y, *out;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &cond)) != RLYRT_OK || (s = tensor_arg(c, 1, &x)) != RLYRT_OK ||
      (s = tensor_arg(c, 2, &y)) != RLYRT_OK)
    return s;
  if ((s = same_dtype(c, x, y)) != RLYRT_OK) return s;
  int64_t xy[MAX_NDIM], shape[MAX_NDIM], coords[MAX_NDIM];
  int nxy, ndim;
  if (!broadcast_shape(x->dl.shape, x->dl.ndim, y->dl.shape, y->dl.ndim, xy, &nxy)) return broadcast_error(c, x, y);
  if (!broadcast_shape(cond->dl.shape, cond->dl.ndim, xy, nxy, shape, &ndim)) {
    char s1[256], s2[256];
    return rk_fail(c, RLYRT_E_ARG, "shapes %s and %s do not broadcast",
                   shape_str(cond->dl.shape, cond->dl.ndim, s1, sizeof s1), shape_str(xy, nxy, s2, sizeof s2));
  }
  if ((s = alloc_result(c, 0, ndim, shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t i = 0; i < n; i++) {
    rk_unravel(i, shape, ndim, coords);
    bool take_x = num_nonzero(load(cond, rk_broadcast_index(coords, ndim, cond->dl.shape, cond->dl.ndim)));
    const rlyrt_tensor *src = take_x ? x : y;
    store(out, i, load(src, rk_broadcast_index(coords, ndim, src->dl.shape, src->dl.ndim)));
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Casts and *_like ====} */

/* cast and cast_like: each element converted to the result's dtype. */
rlyrt_status rk_elemwise_cast(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  if ((s = alloc_result(c, 0, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) store(out, i, load(x, i));
  c->result = &out->obj;
  return RLYRT_OK;
}

/* reinterpret: the same bits read as another dtype of the same width. */
rlyrt_status rk_elemwise_reinterpret(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  if ((s = alloc_result(c, 0, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  if (rlyrt_dtype_bytes(out->dl.dtype) != rlyrt_dtype_bytes(x->dl.dtype) ||
      is_bool(out->dl.dtype) != is_bool(x->dl.dtype)) {
    char s1[32], s2[32];
    rlyrt_release(&out->obj);
    return rk_fail(c, RLYRT_E_ARG, "cannot reinterpret %s as %s", rlyrt_dtype_name(x->dl.dtype, s1),
                   rlyrt_dtype_name(c->outs[0].dtype, s2));
  }
  size_t nbytes = rlyrt_tensor_nbytes(x);
  if (nbytes) memcpy(out->dl.data, x->dl.data, nbytes);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* full_like(data, fill_value): data's shape and dtype, every element the
** 0-d fill value cast to the dtype. */
rlyrt_status rk_elemwise_full_like(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *fill, *out;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &x)) != RLYRT_OK || (s = tensor_arg(c, 1, &fill)) != RLYRT_OK) return s;
  if (rlyrt_tensor_numel(fill) != 1) return rk_fail(c, RLYRT_E_ARG, "fill_value must hold one element");
  if ((s = alloc_result(c, 0, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  Num v = load(fill, 0);
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t i = 0; i < n; i++) store(out, i, v);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Reductions ====} */

/* The iteration space of a reduction: the input's axes split into kept
** axes (the output's) and reduced axes, each walked in row-major order. */
typedef struct Reduce {
  int ndim;
  const int64_t *shape;
  bool mask[MAX_NDIM];             /* axis i is reduced */
  int nkept, nred;
  int kept[MAX_NDIM], red[MAX_NDIM];
  int64_t kshape[MAX_NDIM], rshape[MAX_NDIM];
  int64_t nout, count;             /* output elements; elements per output */
  int out_ndim;
  int64_t out_shape[MAX_NDIM];     /* kept dims, with 1s for reduced axes under keepdims */
} Reduce;

/* Reads 'axis' (None or [] = every axis, whatever 'exclude' says; negative
** axes count from the end), 'exclude' and 'keepdims'. */
static rlyrt_status reduce_init(const rlyrt_kernel_call *c, const rlyrt_tensor *x, Reduce *r) {
  int64_t axes[MAX_NDIM];
  int ndim = x->dl.ndim;
  int n = rk_attr_ints(c, "axis", axes, MAX_NDIM);
  if (n > MAX_NDIM) return rk_fail(c, RLYRT_E_ARG, "too many axes");
  r->ndim = ndim;
  r->shape = x->dl.shape;
  for (int i = 0; i < ndim; i++) r->mask[i] = n <= 0;
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (a < 0 || a >= ndim)
      return rk_fail(c, RLYRT_E_ARG, "axis %lld is out of range for rank %d", (long long)axes[i], ndim);
    if (r->mask[a]) return rk_fail(c, RLYRT_E_ARG, "axis %lld is named twice", (long long)a);
    r->mask[a] = true;
  }
  if (n > 0 && rk_attr_int(c, "exclude", 0))
    for (int i = 0; i < ndim; i++) r->mask[i] = !r->mask[i];
  bool keepdims = rk_attr_int(c, "keepdims", 0) != 0;
  r->nkept = r->nred = r->out_ndim = 0;
  r->nout = r->count = 1;
  for (int i = 0; i < ndim; i++) {
    if (r->mask[i]) {
      r->red[r->nred] = i;
      r->rshape[r->nred++] = r->shape[i];
      r->count *= r->shape[i];
      if (keepdims) r->out_shape[r->out_ndim++] = 1;
    } else {
      r->kept[r->nkept] = i;
      r->kshape[r->nkept++] = r->shape[i];
      r->nout *= r->shape[i];
      r->out_shape[r->out_ndim++] = r->shape[i];
    }
  }
  return RLYRT_OK;
}

/* The input's flat index for output element o and reduced element j (both
** row-major over their own axes). */
static int64_t reduce_index(const Reduce *r, int64_t o, int64_t j) {
  int64_t kc[MAX_NDIM], rc[MAX_NDIM], coords[MAX_NDIM];
  rk_unravel(o, r->kshape, r->nkept, kc);
  rk_unravel(j, r->rshape, r->nred, rc);
  for (int i = 0; i < r->nkept; i++) coords[r->kept[i]] = kc[i];
  for (int i = 0; i < r->nred; i++) coords[r->red[i]] = rc[i];
  return rk_ravel(coords, r->shape, r->ndim);
}

typedef enum ReduceOp { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_ALL, R_ANY } ReduceOp;

/* Integer division for mean and variance: truncating; false on zero. */
static bool int_div(NumKind k, int64_t x, int64_t y, int64_t *q) {
  if (y == 0) return false;
  if (k == NK_UINT) *q = (int64_t)((uint64_t)x / (uint64_t)y);
  else *q = y == -1 ? (int64_t)(0 - (uint64_t)x) : x / y;
  return true;
}

/* sum, mean, max, min, prod, all, any. Integer sums and products wrap in
** the dtype; max/min fold TVM's select from the first element (an empty
** reduction gives the dtype's lowest/highest value, TVM's identity). */
rlyrt_status rk_elemwise_reduce(rlyrt_kernel_call *c) {
  static const struct {
    const char *name;
    ReduceOp op;
  } ops[] = {{"sum", R_SUM}, {"mean", R_MEAN}, {"max", R_MAX}, {"min", R_MIN},
             {"prod", R_PROD}, {"all", R_ALL}, {"any", R_ANY}};
  int op = -1;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(c->op, ops[i].name) == 0) op = (int)ops[i].op;
  if (op < 0) return rk_fail(c, RLYRT_E_INTERNAL, "not a reduction");
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  Reduce r;
  if ((s = reduce_init(c, x, &r)) != RLYRT_OK) return s;
  if ((s = alloc_result(c, 0, r.out_ndim, r.out_shape, &out)) != RLYRT_OK) return s;
  DLDataType dt = x->dl.dtype;
  NumKind k = kind_of(dt);
  for (int64_t o = 0; o < r.nout; o++) {
    Num acc;
    switch ((ReduceOp)op) {
    case R_MAX:
    case R_MIN:
      acc = dtype_limit(dt, op == R_MIN);
      for (int64_t j = 0; j < r.count; j++) {
        Num v = load(x, reduce_index(&r, o, j));
        if (j == 0) acc = v;
        else if (op == R_MAX) acc = num_gt(acc, v) ? acc : v;
        else acc = num_lt(acc, v) ? acc : v;
      }
      break;
    case R_ALL:
    case R_ANY: {
      bool all = true, any = false;
      for (int64_t j = 0; j < r.count; j++) {
        bool v = num_nonzero(load(x, reduce_index(&r, o, j)));
        all = all && v;
        any = any || v;
      }
      acc = num_bool(op == R_ALL ? all : any);
      break;
    }
    default: {
      /* sum, mean, prod */
      double fs = op == R_PROD ? 1 : 0;
      uint64_t us = op == R_PROD ? 1 : 0;
      for (int64_t j = 0; j < r.count; j++) {
        Num v = load(x, reduce_index(&r, o, j));
        if (k == NK_FLOAT) fs = op == R_PROD ? fs * v.f : fs + v.f;
        else us = op == R_PROD ? us * (uint64_t)v.i : us + (uint64_t)v.i;
      }
      if (k == NK_FLOAT) {
        acc = num_f(op == R_MEAN ? fs / (double)r.count : fs);
      } else {
        acc.k = k;
        acc.f = 0;
        acc.i = wrap_int(dt, (int64_t)us);
        if (op == R_MEAN && !int_div(k, acc.i, wrap_int(dt, r.count), &acc.i)) {
          char name[32];
          rlyrt_release(&out->obj);
          return rk_fail(c, RLYRT_E_RUNTIME, "division by zero (mean over %lld elements in %s)", (long long)r.count,
                         rlyrt_dtype_name(dt, name));
        }
      }
      break;
    }
    }
    store(out, o, acc);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* argmax and argmin: the index within the reduced axes (row-major) of the
** largest/smallest element. TVM's combiner keeps the running pair unless the
** new element beats it: for argmax it keeps it when acc > x, or acc == x
** and the first index is wanted. Starting from the first element, NaN
** behaves as in TVM. An empty reduction gives -1 (TVM's initial index). */
rlyrt_status rk_elemwise_argreduce(rlyrt_kernel_call *c) {
  bool is_max = strcmp(c->op, "argmax") == 0;
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  Reduce r;
  if ((s = reduce_init(c, x, &r)) != RLYRT_OK) return s;
  if ((s = alloc_result(c, 0, r.out_ndim, r.out_shape, &out)) != RLYRT_OK) return s;
  bool last = rk_attr_int(c, "select_last_index", 0) != 0;
  for (int64_t o = 0; o < r.nout; o++) {
    int64_t best = -1;
    Num acc = {NK_INT, 0, 0};
    for (int64_t j = 0; j < r.count; j++) {
      Num v = load(x, reduce_index(&r, o, j));
      bool keep = j > 0 && ((is_max ? num_gt(acc, v) : num_lt(acc, v)) || (num_eq(acc, v) && !last));
      if (!keep) {
        best = j;
        acc = v;
      }
    }
    store(out, o, num_i(best));
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* variance(data, mean): sum((data - mean)^2) over the reduced axes divided
** by the count (minus one when unbiased); mean broadcasts against data.
** Integers compute the difference, square and sum in the dtype (wrapping)
** and divide by the int64 count, truncating. */
rlyrt_status rk_elemwise_variance(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *mean, *out;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &x)) != RLYRT_OK || (s = tensor_arg(c, 1, &mean)) != RLYRT_OK) return s;
  if ((s = same_dtype(c, x, mean)) != RLYRT_OK) return s;
  int64_t bshape[MAX_NDIM];
  int bn;
  if (!broadcast_shape(x->dl.shape, x->dl.ndim, mean->dl.shape, mean->dl.ndim, bshape, &bn) || bn != x->dl.ndim)
    return broadcast_error(c, x, mean);
  for (int i = 0; i < bn; i++)
    if (bshape[i] != x->dl.shape[i]) return broadcast_error(c, x, mean);
  Reduce r;
  if ((s = reduce_init(c, x, &r)) != RLYRT_OK) return s;
  if ((s = alloc_result(c, 0, r.out_ndim, r.out_shape, &out)) != RLYRT_OK) return s;
  DLDataType dt = x->dl.dtype;
  NumKind k = kind_of(dt);
  int64_t count = r.count - (rk_attr_int(c, "unbiased", 0) ? 1 : 0);
  int64_t coords[MAX_NDIM];
  for (int64_t o = 0; o < r.nout; o++) {
    double fs = 0;
    uint64_t us = 0;
    for (int64_t j = 0; j < r.count; j++) {
      int64_t idx = reduce_index(&r, o, j);
      rk_unravel(idx, x->dl.shape, x->dl.ndim, coords);
      Num v = load(x, idx), m = load(mean, rk_broadcast_index(coords, x->dl.ndim, mean->dl.shape, mean->dl.ndim));
      if (k == NK_FLOAT) {
        double d = v.f - m.f;
        fs += d * d;
      } else {
        int64_t d = wrap_int(dt, (int64_t)((uint64_t)v.i - (uint64_t)m.i));
        us += (uint64_t)wrap_int(dt, (int64_t)((uint64_t)d * (uint64_t)d));
      }
    }
    Num acc;
    if (k == NK_FLOAT) {
      acc = num_f(fs / (double)count);
    } else {
      acc.k = k;
      acc.f = 0;
      if (!int_div(k, wrap_int(dt, (int64_t)us), count, &acc.i)) {
        rlyrt_release(&out->obj);
        return rk_fail(c, RLYRT_E_RUNTIME, "division by zero (variance with a count of 0)");
      }
    }
    store(out, o, acc);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* collapse_sum_like(data, like): data summed down to like's shape (the
** leading axes data has in excess, and the axes where like has 1). */
rlyrt_status rk_elemwise_collapse_sum_like(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *like, *out;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &x)) != RLYRT_OK || (s = tensor_arg(c, 1, &like)) != RLYRT_OK) return s;
  int nx = x->dl.ndim, nl = like->dl.ndim;
  bool ok = nl <= nx;
  for (int i = 0; ok && i < nl; i++) {
    int64_t dl = like->dl.shape[nl - 1 - i];
    ok = dl == 1 || dl == x->dl.shape[nx - 1 - i];
  }
  if (!ok) {
    char s1[256], s2[256];
    return rk_fail(c, RLYRT_E_ARG, "cannot collapse shape %s to %s", shape_str(x->dl.shape, nx, s1, sizeof s1),
                   shape_str(like->dl.shape, nl, s2, sizeof s2));
  }
  if ((s = alloc_result(c, 0, nl, like->dl.shape, &out)) != RLYRT_OK) return s;
  if (!rlyrt_dtype_eq(out->dl.dtype, x->dl.dtype)) {
    rlyrt_release(&out->obj);
    return same_dtype(c, x, out);
  }
  int64_t nout = rlyrt_tensor_numel(out), n = rlyrt_tensor_numel(x);
  bool is_float = kind_of(x->dl.dtype) == NK_FLOAT;
  size_t cell = is_float ? sizeof(double) : sizeof(uint64_t);
  void *acc = rlyrt_alloc((size_t)(nout ? nout : 1) * cell, 8);
  if (!acc) {
    rlyrt_release(&out->obj);
    return rk_fail(c, RLYRT_E_NOMEM, "cannot allocate the accumulators");
  }
  memset(acc, 0, (size_t)(nout ? nout : 1) * cell);
  double *fa = acc;
  uint64_t *ua = acc;
  int64_t coords[MAX_NDIM];
  for (int64_t i = 0; i < n; i++) {
    rk_unravel(i, x->dl.shape, nx, coords);
    int64_t o = rk_broadcast_index(coords, nx, like->dl.shape, nl);
    Num v = load(x, i);
    if (is_float) fa[o] += v.f;
    else ua[o] += (uint64_t)v.i;
  }
  for (int64_t o = 0; o < nout; o++) store(out, o, is_float ? num_f(fa[o]) : num_i((int64_t)ua[o]));
  rlyrt_free(acc);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Sorting and searching ====} */

/* Sorts positions pos[0..n) by keys[pos], stably (equal keys keep their
** order), ascending or descending; tmp has room for n. A NaN compares as
** equal to everything. */
static void merge_sort(int64_t *pos, int64_t *tmp, int64_t n, const Num *keys, bool ascend) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, t = lo;
      while (i < mid && j < hi) {
        Num a = keys[pos[i]], b = keys[pos[j]];
        bool right_first = ascend ? num_lt(b, a) : num_gt(b, a);
        tmp[t++] = right_first ? pos[j++] : pos[i++];
      }
      while (i < mid) tmp[t++] = pos[i++];
      while (j < hi) tmp[t++] = pos[j++];
    }
    memcpy(pos, tmp, sizeof(int64_t) * (size_t)n);
  }
}

/* Scratch for sorting one line of length n: keys, positions, merge buffer. */
typedef struct SortBuf {
  Num *keys;
  int64_t *pos, *tmp;
} SortBuf;

static rlyrt_status sortbuf_init(const rlyrt_kernel_call *c, SortBuf *b, int64_t n) {
  size_t m = (size_t)(n ? n : 1);
  b->keys = rlyrt_alloc(m * sizeof(Num), 8);
  b->pos = rlyrt_alloc(m * sizeof(int64_t), 8);
  b->tmp = rlyrt_alloc(m * sizeof(int64_t), 8);
  if (b->keys && b->pos && b->tmp) return RLYRT_OK;
  rlyrt_free(b->keys);
  rlyrt_free(b->pos);
  rlyrt_free(b->tmp);
  return rk_fail(c, RLYRT_E_NOMEM, "cannot allocate the sort buffers");
}

static void sortbuf_free(SortBuf *b) {
  rlyrt_free(b->keys);
  rlyrt_free(b->pos);
  rlyrt_free(b->tmp);
}

/* Sorts line (before, after) of x along axis (length n): b->pos gets the
** positions in sorted order. */
static void sort_line(const rlyrt_tensor *x, int64_t before, int64_t after, int64_t n, int64_t inner, bool ascend,
                      SortBuf *b) {
  for (int64_t k = 0; k < n; k++) {
    b->keys[k] = load(x, (before * n + k) * inner + after);
    b->pos[k] = k;
  }
  merge_sort(b->pos, b->tmp, n, b->keys, ascend);
}

/* A normalised 'axis' attribute for rank ndim. */
static rlyrt_status axis_attr(const rlyrt_kernel_call *c, int ndim, int *axis) {
  int64_t a = rk_attr_int(c, "axis", -1);
  int64_t an = a < 0 ? a + ndim : a;
  if (an < 0 || an >= ndim) return rk_fail(c, RLYRT_E_ARG, "axis %lld is out of range for rank %d", (long long)a, ndim);
  *axis = (int)an;
  return RLYRT_OK;
}

/* The number of lines along axis: outer (before) x inner (after). */
static void split_axis(const rlyrt_tensor *x, int axis, int64_t *outer, int64_t *inner) {
  *outer = *inner = 1;
  for (int i = 0; i < x->dl.ndim; i++) {
    if (i < axis) *outer *= x->dl.shape[i];
    else if (i > axis) *inner *= x->dl.shape[i];
  }
}

/* argsort (the positions) and sort (the values) along 'axis', stable. */
rlyrt_status rk_elemwise_sort(rlyrt_kernel_call *c) {
  bool want_indices = strcmp(c->op, "argsort") == 0;
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  int axis = 0;
  if ((s = axis_attr(c, x->dl.ndim, &axis)) != RLYRT_OK) return s;
  bool ascend = rk_attr_int(c, "is_ascend", 1) != 0;
  int64_t outer, inner, n = x->dl.shape[axis];
  split_axis(x, axis, &outer, &inner);
  if ((s = alloc_result(c, 0, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  SortBuf b;
  if ((s = sortbuf_init(c, &b, n)) != RLYRT_OK) {
    rlyrt_release(&out->obj);
    return s;
  }
  for (int64_t i = 0; i < outer; i++)
    for (int64_t j = 0; j < inner; j++) {
      sort_line(x, i, j, n, inner, ascend, &b);
      for (int64_t k = 0; k < n; k++)
        store(out, (i * n + k) * inner + j, want_indices ? num_i(b.pos[k]) : b.keys[b.pos[k]]);
    }
  sortbuf_free(&b);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* topk and dyn.topk: the first k of a stable sort along 'axis' (descending
** unless is_ascend); k from the attribute or, for dyn.topk, the second
** argument; k < 1 (or None) means the whole axis. ret_type "both" gives
** (values, indices). */
rlyrt_status rk_elemwise_topk(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *outs[2] = {NULL, NULL};
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  int axis = 0;
  if ((s = axis_attr(c, x->dl.ndim, &axis)) != RLYRT_OK) return s;
  int64_t n = x->dl.shape[axis], k;
  if (strcmp(c->op, "dyn.topk") == 0) {
    rlyrt_tensor *kt;
    if ((s = tensor_arg(c, 1, &kt)) != RLYRT_OK) return s;
    if (rlyrt_tensor_numel(kt) != 1 || kind_of(kt->dl.dtype) == NK_FLOAT)
      return rk_fail(c, RLYRT_E_ARG, "k must be one integer");
    Num kv = load(kt, 0);
    k = kv.k == NK_UINT && kv.i < 0 ? INT64_MAX : kv.i;
  } else {
    k = rk_attr_int(c, "k", 0);
  }
  if (k < 1) k = n;
  if (k > n)
    return rk_fail(c, RLYRT_E_RUNTIME, "k = %lld is larger than dimension %d (%lld)", (long long)k, axis, (long long)n);
  const char *ret = rk_attr_str(c, "ret_type");
  bool both = strcmp(ret, "both") == 0 || !*ret;
  bool want_values = both || strcmp(ret, "values") == 0, want_indices = both || strcmp(ret, "indices") == 0;
  if (!want_values && !want_indices) return rk_fail(c, RLYRT_E_ARG, "unknown ret_type \"%s\"", ret);
  int64_t shape[MAX_NDIM];
  memcpy(shape, x->dl.shape, sizeof(int64_t) * (size_t)x->dl.ndim);
  shape[axis] = k;
  int nouts = 0, vi = -1, ii = -1;
  if (want_values) vi = nouts++;
  if (want_indices) ii = nouts++;
  for (int i = 0; i < nouts; i++)
    if ((s = alloc_result(c, i, x->dl.ndim, shape, &outs[i])) != RLYRT_OK) {
      if (i) rlyrt_release(&outs[0]->obj);
      return s;
    }
  SortBuf b;
  if ((s = sortbuf_init(c, &b, n)) != RLYRT_OK) {
    for (int i = 0; i < nouts; i++) rlyrt_release(&outs[i]->obj);
    return s;
  }
  bool ascend = rk_attr_int(c, "is_ascend", 0) != 0;
  int64_t outer, inner;
  split_axis(x, axis, &outer, &inner);
  for (int64_t i = 0; i < outer; i++)
    for (int64_t j = 0; j < inner; j++) {
      sort_line(x, i, j, n, inner, ascend, &b);
      for (int64_t q = 0; q < k; q++) {
        int64_t o = (i * k + q) * inner + j;
        if (vi >= 0) store(outs[vi], o, b.keys[b.pos[q]]);
        if (ii >= 0) store(outs[ii], o, num_i(b.pos[q]));
      }
    }
  sortbuf_free(&b);
  return rk_set_result(c, outs, nouts);
}

/* unique(data): TVM's (unique, indices, inverse_indices, num_unique[,
** counts]). The unique values are sorted ascending, or with sorted=False in
** order of first occurrence; indices[i] is the first position of unique[i]
** in data, counts[i] its count, inverse_indices[j] the position of data[j]
** in unique. Only the first num_unique entries of unique, indices and
** counts are meaningful: TVM leaves the rest undefined; here unique and
** counts are padded with 0 and indices with len(data). */
rlyrt_status rk_elemwise_unique(rlyrt_kernel_call *c) {
  rlyrt_tensor *x;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  if (x->dl.ndim != 1) return rk_fail(c, RLYRT_E_ARG, "data must be 1-D");
  bool with_counts = rk_attr_int(c, "return_counts", 0) != 0;
  bool sorted = rk_attr_int(c, "sorted", 1) != 0;
  int nouts = with_counts ? 5 : 4;
  int64_t n = x->dl.shape[0], one = 1;
  rlyrt_tensor *outs[5] = {NULL, NULL, NULL, NULL, NULL};
  for (int i = 0; i < nouts; i++)
    if ((s = alloc_result(c, i, 1, i == 3 ? &one : &n, &outs[i])) != RLYRT_OK) {
      for (int j = 0; j < i; j++) rlyrt_release(&outs[j]->obj);
      return s;
    }
  SortBuf b, g; /* b: the data's sort; g: the groups' order */
  if ((s = sortbuf_init(c, &b, n)) != RLYRT_OK) goto fail;
  if ((s = sortbuf_init(c, &g, n)) != RLYRT_OK) {
    sortbuf_free(&b);
    goto fail;
  }
  sort_line(x, 0, 0, n, 1, true, &b);
  /* Groups of equal values in sorted order: g.keys[m] holds the group's
  ** first position in data (its smallest: the sort is stable); tmp maps a
  ** sorted rank to its group. */
  int64_t ngroups = 0;
  for (int64_t r = 0; r < n; r++) {
    if (r == 0 || !num_eq(b.keys[b.pos[r]], b.keys[b.pos[r - 1]])) g.keys[ngroups++] = num_i(b.pos[r]);
    b.tmp[r] = ngroups - 1;
  }
  /* The output order of the groups: g.pos[u] = group at output position u. */
  for (int64_t m = 0; m < ngroups; m++) g.pos[m] = m;
  if (!sorted) merge_sort(g.pos, g.tmp, ngroups, g.keys, true);
  /* g.tmp[m] = output position of group m. */
  for (int64_t u = 0; u < ngroups; u++) g.tmp[g.pos[u]] = u;
  for (int64_t u = 0; u < n; u++) {
    if (u < ngroups) {
      int64_t first = g.keys[g.pos[u]].i;
      store(outs[0], u, load(x, first));
      store(outs[1], u, num_i(first));
    } else {
      store(outs[1], u, num_i(n));
    }
  }
  for (int64_t r = 0; r < n; r++) {
    int64_t u = g.tmp[b.tmp[r]];
    store(outs[2], b.pos[r], num_i(u));
    if (with_counts) store(outs[4], u, num_i(rlyrt_get_i64(outs[4], u) + 1));
  }
  store(outs[3], 0, num_i(ngroups));
  sortbuf_free(&b);
  sortbuf_free(&g);
  return rk_set_result(c, outs, nouts);
fail:
  for (int i = 0; i < nouts; i++) rlyrt_release(&outs[i]->obj);
  return s;
}

/* argwhere(condition): the coordinates of the non-zero elements, one row
** each, in row-major order: shape (count, ndim). */
rlyrt_status rk_elemwise_argwhere(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s = tensor_arg(c, 0, &x);
  if (s != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(x), count = 0, coords[MAX_NDIM];
  for (int64_t i = 0; i < n; i++) count += num_nonzero(load(x, i));
  int64_t shape[2] = {count, x->dl.ndim};
  if ((s = alloc_result(c, 0, 2, shape, &out)) != RLYRT_OK) return s;
  int64_t row = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!num_nonzero(load(x, i))) continue;
    rk_unravel(i, x->dl.shape, x->dl.ndim, coords);
    for (int d = 0; d < x->dl.ndim; d++) store(out, row * x->dl.ndim + d, num_i(coords[d]));
    row++;
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Annotations ====} */

/* A copy of v: tensors copied, tuples rebuilt from copies of their fields,
** anything else shared (retained). NULL when out of memory. */
static rlyrt_object *copy_value(rlyrt_object *v) {
  if (v->kind == RLYRT_TENSOR) return (rlyrt_object *)rlyrt_tensor_copy_dl(&RLYRT_AS_TENSOR(v)->dl);
  if (v->kind != RLYRT_TUPLE) return rlyrt_retain(v);
  rlyrt_tuple *src = RLYRT_AS_TUPLE(v), *t = rlyrt_tuple_new(src->n);
  if (!t) return NULL;
  for (int32_t i = 0; i < src->n; i++) {
    rlyrt_object *f = src->fields[i] ? copy_value(src->fields[i]) : NULL;
    if (src->fields[i] && !f) {
      rlyrt_release(&t->obj);
      return NULL;
    }
    rlyrt_tuple_set_take(t, i, f);
  }
  return &t->obj;
}

/* stop_fusion, compiler_begin/end, on_device, device_copy: the identity
** (the result is a copy of the argument). */
rlyrt_status rk_elemwise_identity(rlyrt_kernel_call *c) {
  if (c->nargs < 1 || !c->args[0]) return rk_fail(c, RLYRT_E_ARG, "expected one argument");
  rlyrt_object *r = copy_value(c->args[0]);
  if (!r) return rk_fail(c, RLYRT_E_NOMEM, "cannot copy the argument: %s", rlyrt_last_error());
  c->result = r;
  return RLYRT_OK;
}
