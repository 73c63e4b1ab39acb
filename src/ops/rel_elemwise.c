/* rel_elemwise.c: the type relations of the elementwise family (listed in
** rel_elemwise.def): unary and binary arithmetic, comparisons, logical and
** bitwise ops, where, casts and the *_like ops, reductions, sorting and
** searching, and the annotation ops. TVM v0.16 semantics (spec sections 9.1,
** 9.4, 9.5), with these deliberate differences, all stricter and all about
** programs TVM would reject later, when lowering or at run time:
**   - logical ops and where's condition take bool, bitwise ops integers or
**     bool, all/any bool, fixed_point_multiply int32 (TVM's relations accept
**     any dtype; its kernels do not);
**   - a reduction axis named twice is an error (TVM's shape code goes wrong);
**   - topk's k may not exceed the dimension along the axis;
**   - argsort and sort check their axis, stop_fusion takes a tensor, and the
**     virtual device attributes must be metadata objects or None.
** Broadcasting follows rel_broadcast (a `?` against a known dim other than 1
** gives `?`). Index outputs (argmax, argmin, argsort, topk, unique,
** argwhere) are int32 unless a dtype attribute says otherwise. */
#include <stdlib.h>
#include <string.h>

#include "ops/rel.h"

#define REL(id, fn) RelResult fn(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out);
#include "ops/rel_elemwise.def"
#undef REL

static const DType BOOL_DTYPE = {DT_UINT, 1, 1};
static const DType INT32_DTYPE = {DT_INT, 32, 1};

/* {==== Small helpers ====} */

/* Scratch dims: a stack buffer, or the heap for larger ranks. Not copyable
** (d may point into the struct itself). */
enum { SMALL_NDIM = 16 };
typedef struct Dims {
  int64_t *d;
  int64_t small[SMALL_NDIM];
} Dims;

static int64_t *dims_init(Dims *s, int n) {
  s->d = n <= SMALL_NDIM ? s->small : rly_xmalloc(sizeof(int64_t) * (size_t)n);
  return s->d;
}

static void dims_free(Dims *s) {
  if (s->d != s->small) free(s->d);
}

static bool is_integer(DType t) { return t.code == DT_INT || t.code == DT_UINT; }

/* Two dims that may be equal: the same, or one of them `?`. */
static bool dim_compatible(int64_t a, int64_t b) { return a == b || a == RLY_DIM_ANY || b == RLY_DIM_ANY; }

static Type *same_shape(RelCtx *rc, const Type *t, DType dt) {
  return rel_tensor(rc, dt, t->u.tensor.ndim, t->u.tensor.shape);
}

/* An integer attribute that must be a constant: REL_ERROR (reported) when it
** is symbolic (a metadata reference) or None. */
static RelResult const_int_attr(RelCtx *rc, const Attrs *attrs, const char *field, int64_t *out) {
  if (rel_attr_int(attrs, field, out)) return REL_OK;
  return rel_error(rc, "attribute '%s' must be a constant integer, found %s", field,
                   attr_value_desc(rel_attr(attrs, field)));
}

/* A required attribute (no default; missing reads as None). */
static RelResult required_attr(RelCtx *rc, const Attrs *attrs, const char *field) {
  if (rel_attr_is_none(attrs, field)) return rel_error(rc, "attribute '%s' is required", field);
  return REL_OK;
}

/* {==== Unary ====} */

/* Every one-tensor elementwise op. The result is the argument's type, except
** isnan/isinf/isfinite (bool). Some ops restrict the dtype or need attrs. */
RelResult rel_unary(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  DType dt = x->u.tensor.dtype;
  char b[32];
  switch (rc->op->id) {
  case OP_LOGICAL_NOT:
    if (!dtype_is_bool(dt)) return rel_error(rc, "data must be bool, found %s", dtype_name(dt, b));
    break;
  case OP_BITWISE_NOT:
    if (!is_integer(dt)) return rel_error(rc, "data must be an integer or bool tensor, found %s", dtype_name(dt, b));
    break;
  case OP_FIXED_POINT_MULTIPLY:
    if (!dtype_eq(dt, INT32_DTYPE)) return rel_error(rc, "data must be int32, found %s", dtype_name(dt, b));
    if ((r = required_attr(rc, attrs, "multiplier")) != REL_OK) return r;
    if ((r = required_attr(rc, attrs, "shift")) != REL_OK) return r;
    break;
  case OP_CLIP:
    if ((r = required_attr(rc, attrs, "a_min")) != REL_OK) return r;
    if ((r = required_attr(rc, attrs, "a_max")) != REL_OK) return r;
    break;
  case OP_ISNAN:
  case OP_ISINF:
  case OP_ISFINITE: dt = BOOL_DTYPE; break;
  default: break;
  }
  *out = same_shape(rc, x, dt);
  return REL_OK;
}

/* {==== Binary and where ====} */

static bool is_comparison(OpId id) {
  return id == OP_EQUAL || id == OP_NOT_EQUAL || id == OP_LESS || id == OP_LESS_EQUAL || id == OP_GREATER ||
         id == OP_GREATER_EQUAL;
}

/* Broadcasts a and b into a new tensor type of dtype dt, or reports
** "shapes A and B do not broadcast". */
static RelResult broadcast2(RelCtx *rc, const Type *a, const Type *b, DType dt, Type **out) {
  int na = a->u.tensor.ndim, nb = b->u.tensor.ndim, n;
  Dims o;
  int64_t *shape = dims_init(&o, na > nb ? na : nb);
  RelResult r = REL_OK;
  if (rel_broadcast(a->u.tensor.shape, na, b->u.tensor.shape, nb, shape, &n)) {
    *out = rel_tensor(rc, dt, n, shape);
  } else {
    char sa[256], sb[256];
    r = rel_error(rc, "shapes %s and %s do not broadcast", rel_shape_str(a->u.tensor.shape, na, sa, sizeof sa),
                  rel_shape_str(b->u.tensor.shape, nb, sb, sizeof sb));
  }
  dims_free(&o);
  return r;
}

/* Two tensors of one dtype, broadcast. Comparisons give bool; logical ops
** take bool; bitwise ops and shifts take integers (bool included). */
RelResult rel_binary(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *a, *b;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "lhs", &a)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "rhs", &b)) != REL_OK) return r;
  DType da = a->u.tensor.dtype, db = b->u.tensor.dtype;
  char s1[32], s2[32];
  if (!dtype_eq(da, db)) return rel_error(rc, "dtypes %s and %s differ", dtype_name(da, s1), dtype_name(db, s2));
  OpId id = rc->op->id;
  switch (id) {
  case OP_LOGICAL_AND:
  case OP_LOGICAL_OR:
  case OP_LOGICAL_XOR:
    if (!dtype_is_bool(da)) return rel_error(rc, "operands must be bool, found %s", dtype_name(da, s1));
    break;
  case OP_BITWISE_AND:
  case OP_BITWISE_OR:
  case OP_BITWISE_XOR:
  case OP_LEFT_SHIFT:
  case OP_RIGHT_SHIFT:
    if (!is_integer(da)) return rel_error(rc, "operands must be integers or bool, found %s", dtype_name(da, s1));
    break;
  default: break;
  }
  return broadcast2(rc, a, b, is_comparison(id) ? BOOL_DTYPE : da, out);
}

/* where(condition, x, y): condition bool, x and y one dtype; the shape is
** broadcast(condition, broadcast(x, y)), as TVM computes it. */
RelResult rel_where(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *c, *x, *y;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "condition", &c)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "x", &x)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 2, "y", &y)) != REL_OK) return r;
  DType dx = x->u.tensor.dtype, dy = y->u.tensor.dtype;
  char s1[32], s2[32];
  if (!dtype_is_bool(c->u.tensor.dtype))
    return rel_error(rc, "condition must be bool, found %s", dtype_name(c->u.tensor.dtype, s1));
  if (!dtype_eq(dx, dy))
    return rel_error(rc, "dtypes %s and %s differ (x and y)", dtype_name(dx, s1), dtype_name(dy, s2));
  Type *xy;
  if ((r = broadcast2(rc, x, y, dx, &xy)) != REL_OK) return r;
  return broadcast2(rc, c, xy, dx, out);
}

/* {==== Casts and *_like ====} */

/* cast and reinterpret: shape of data, dtype attribute. reinterpret keeps
** the number of bits per element (bits x lanes, bool counting 1 bit, as in
** TVM). */
RelResult rel_cast(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  DType to;
  if (!rel_attr_dtype(attrs, "dtype", &to)) return rel_error(rc, "attribute 'dtype' is required");
  DType from = x->u.tensor.dtype;
  unsigned bf = (unsigned)from.bits * from.lanes, bt = (unsigned)to.bits * to.lanes;
  if (rc->op->id == OP_REINTERPRET && bf != bt) {
    char s1[32], s2[32];
    return rel_error(rc, "cannot reinterpret %s (%u bits) as %s (%u bits)", dtype_name(from, s1), bf,
                     dtype_name(to, s2), bt);
  }
  *out = same_shape(rc, x, to);
  return REL_OK;
}

/* cast_like(data, dtype_like): shape of data, dtype of dtype_like. */
RelResult rel_cast_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *x, *like;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "data", &x)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "dtype_like", &like)) != REL_OK) return r;
  *out = same_shape(rc, x, like->u.tensor.dtype);
  return REL_OK;
}

/* full_like(data, fill_value): data's type; the fill value is 0-d, of any
** dtype (it is cast to data's, as in TVM). */
RelResult rel_full_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *x, *fill;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "data", &x)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "fill_value", &fill)) != REL_OK) return r;
  if (fill->u.tensor.ndim != 0) {
    char s[256];
    return rel_error(rc, "fill_value must be a scalar (0-d), found shape %s",
                     rel_shape_str(fill->u.tensor.shape, fill->u.tensor.ndim, s, sizeof s));
  }
  *out = same_shape(rc, x, x->u.tensor.dtype);
  return REL_OK;
}

/* {==== Reductions ====} */

/* Sets mask[i] for each of the ndim axes the reduction reduces: the 'axis'
** attribute (None or [] = every axis, whatever 'exclude' says, as in TVM's
** GetReduceAxes; negative axes count from the end), complemented when
** 'exclude' is set. Reports out-of-range, repeated and symbolic axes. */
static RelResult reduce_mask(RelCtx *rc, const Attrs *attrs, int ndim, bool *mask) {
  int n = rel_attr_ints(attrs, "axis", NULL, 0);
  if (n == -2) return rel_error(rc, "attribute 'axis' must hold constant integers");
  for (int i = 0; i < ndim; i++) mask[i] = n <= 0;
  if (n <= 0) return REL_OK;
  Dims ax;
  int64_t *axes = dims_init(&ax, n);
  rel_attr_ints(attrs, "axis", axes, n);
  RelResult r = REL_OK;
  for (int i = 0; i < n && r == REL_OK; i++) {
    int64_t a;
    if (!rel_norm_axis(axes[i], ndim, &a))
      r = rel_error(rc, "axis %lld is out of range for rank %d", (long long)axes[i], ndim);
    else if (mask[a])
      r = rel_error(rc, "attribute 'axis' names dimension %lld twice", (long long)a);
    else
      mask[a] = true;
  }
  dims_free(&ax);
  if (r == REL_OK && rel_attr_bool(attrs, "exclude"))
    for (int i = 0; i < ndim; i++) mask[i] = !mask[i];
  return r;
}

/* The shape of data reduced over mask: reduced axes dropped, or kept as 1
** with keepdims. Writes into shape (room for ndim) and returns the rank. */
static int reduced_shape(const Type *x, const bool *mask, bool keepdims, int64_t *shape) {
  int n = 0;
  for (int i = 0; i < x->u.tensor.ndim; i++) {
    if (!mask[i]) shape[n++] = x->u.tensor.shape[i];
    else if (keepdims) shape[n++] = 1;
  }
  return n;
}

/* The reduced type of data under attrs, of dtype dt. */
static RelResult reduce_type(RelCtx *rc, const Type *x, const Attrs *attrs, DType dt, Type **out) {
  int ndim = x->u.tensor.ndim;
  bool small[SMALL_NDIM];
  bool *mask = ndim <= SMALL_NDIM ? small : rly_xmalloc(sizeof(bool) * (size_t)ndim);
  Dims o;
  int64_t *shape = dims_init(&o, ndim);
  RelResult r = reduce_mask(rc, attrs, ndim, mask);
  if (r == REL_OK) {
    int n = reduced_shape(x, mask, rel_attr_bool(attrs, "keepdims"), shape);
    *out = rel_tensor(rc, dt, n, shape);
  }
  dims_free(&o);
  if (mask != small) free(mask);
  return r;
}

/* sum, mean, max, min, prod, all, any (data's dtype; all/any take bool) and
** argmax, argmin (int32). */
RelResult rel_reduce(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  DType dt = x->u.tensor.dtype;
  OpId id = rc->op->id;
  if ((id == OP_ALL || id == OP_ANY) && !dtype_is_bool(dt)) {
    char s[32];
    return rel_error(rc, "data must be bool, found %s", dtype_name(dt, s));
  }
  if (id == OP_ARGMAX || id == OP_ARGMIN) dt = INT32_DTYPE;
  return reduce_type(rc, x, attrs, dt, out);
}

/* variance(data, mean): mean has the reduction's keepdims shape and data's
** dtype; the result is the reduced shape (keepdims as the attribute says). */
RelResult rel_variance(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x, *mean;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "data", &x)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "mean", &mean)) != REL_OK) return r;
  int ndim = x->u.tensor.ndim;
  char s1[256], s2[256];
  if (ndim == 0) return rel_error(rc, "data must have at least one dimension, found a scalar");
  DType dt = x->u.tensor.dtype;
  if (!dtype_eq(dt, mean->u.tensor.dtype))
    return rel_error(rc, "dtypes %s and %s differ (data and mean)", dtype_name(dt, s1),
                     dtype_name(mean->u.tensor.dtype, s2));
  bool small[SMALL_NDIM];
  bool *mask = ndim <= SMALL_NDIM ? small : rly_xmalloc(sizeof(bool) * (size_t)ndim);
  Dims o;
  int64_t *shape = dims_init(&o, ndim);
  if ((r = reduce_mask(rc, attrs, ndim, mask)) == REL_OK) {
    reduced_shape(x, mask, true, shape);
    bool ok = mean->u.tensor.ndim == ndim;
    for (int i = 0; ok && i < ndim; i++) ok = dim_compatible(mean->u.tensor.shape[i], shape[i]);
    if (!ok) {
      r = rel_error(rc, "mean has shape %s, expected the keepdims shape %s",
                    rel_shape_str(mean->u.tensor.shape, mean->u.tensor.ndim, s1, sizeof s1),
                    rel_shape_str(shape, ndim, s2, sizeof s2));
    } else {
      int n = reduced_shape(x, mask, rel_attr_bool(attrs, "keepdims"), shape);
      *out = rel_tensor(rc, dt, n, shape);
    }
  }
  dims_free(&o);
  if (mask != small) free(mask);
  return r;
}

/* collapse_sum_like(data, collapse_type): the type of collapse_type, whose
** shape must broadcast to data's shape (data is summed down to it). */
RelResult rel_collapse_sum_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *x, *like;
  RelResult r;
  if ((r = rel_tensor_arg(rc, args, 0, "data", &x)) != REL_OK) return r;
  if ((r = rel_tensor_arg(rc, args, 1, "collapse_type", &like)) != REL_OK) return r;
  DType dt = x->u.tensor.dtype;
  char s1[256], s2[256];
  if (!dtype_eq(dt, like->u.tensor.dtype))
    return rel_error(rc, "dtypes %s and %s differ", dtype_name(dt, s1), dtype_name(like->u.tensor.dtype, s2));
  int nx = x->u.tensor.ndim, nl = like->u.tensor.ndim;
  bool ok = nl <= nx;
  for (int i = 0; ok && i < nl; i++) {
    int64_t dl = like->u.tensor.shape[nl - 1 - i], dx = x->u.tensor.shape[nx - 1 - i];
    ok = dl == 1 || dim_compatible(dl, dx);
  }
  if (!ok)
    return rel_error(rc, "cannot collapse shape %s to %s", rel_shape_str(x->u.tensor.shape, nx, s1, sizeof s1),
                     rel_shape_str(like->u.tensor.shape, nl, s2, sizeof s2));
  *out = same_shape(rc, like, dt);
  return REL_OK;
}

/* {==== Sorting and searching ====} */

/* The dtype of an index output: the 'dtype' attribute, int32 when empty. */
static DType index_dtype(const Attrs *attrs) {
  DType dt;
  return rel_attr_dtype(attrs, "dtype", &dt) ? dt : INT32_DTYPE;
}

/* The 'axis' attribute normalised for rank ndim, or an error. */
static RelResult axis_attr(RelCtx *rc, const Attrs *attrs, int ndim, int64_t *axis) {
  int64_t a;
  RelResult r = const_int_attr(rc, attrs, "axis", &a);
  if (r != REL_OK) return r;
  if (!rel_norm_axis(a, ndim, axis)) return rel_error(rc, "axis %lld is out of range for rank %d", (long long)a, ndim);
  return REL_OK;
}

/* argsort (indices, 'dtype' or int32) and sort (data's dtype): data's shape. */
RelResult rel_sort(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  int64_t axis;
  if ((r = axis_attr(rc, attrs, x->u.tensor.ndim, &axis)) != REL_OK) return r;
  *out = same_shape(rc, x, rc->op->id == OP_ARGSORT ? index_dtype(attrs) : x->u.tensor.dtype);
  return REL_OK;
}

/* topk and dyn.topk: data's shape with k along the axis (the whole dim when
** k is None or < 1; `?` when k is symbolic or, for dyn.topk, a tensor
** argument of shape () or (1,)). ret_type "both" gives (values, indices),
** "values" and "indices" one of them; indices have the 'dtype' attribute's
** dtype, int32 when empty. */
RelResult rel_topk(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x, *kt = NULL;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  bool dyn = rc->op->id == OP_DYN_TOPK;
  char s[256];
  if (dyn) {
    if ((r = rel_tensor_arg(rc, args, 1, "k", &kt)) != REL_OK) return r;
    int kn = kt->u.tensor.ndim;
    if (kn > 1 || (kn == 1 && kt->u.tensor.shape[0] != 1))
      return rel_error(rc, "k must be a scalar or of shape (1,), found shape %s",
                       rel_shape_str(kt->u.tensor.shape, kn, s, sizeof s));
    if (!is_integer(kt->u.tensor.dtype))
      return rel_error(rc, "k must be an integer tensor, found %s", dtype_name(kt->u.tensor.dtype, s));
  }
  int ndim = x->u.tensor.ndim;
  int64_t axis;
  if ((r = axis_attr(rc, attrs, ndim, &axis)) != REL_OK) return r;
  size_t rlen;
  const char *ret = rel_attr_str(attrs, "ret_type", &rlen);
  int which;  /* 0 both, 1 values, 2 indices */
  if (rlen == 4 && memcmp(ret, "both", 4) == 0) which = 0;
  else if (rlen == 6 && memcmp(ret, "values", 6) == 0) which = 1;
  else if (rlen == 7 && memcmp(ret, "indices", 7) == 0) which = 2;
  else
    return rel_error(rc, "attribute 'ret_type' must be \"both\", \"values\" or \"indices\", found \"%.*s\"",
                     (int)rlen, ret);
  int64_t dim = x->u.tensor.shape[axis], k;
  if (dyn) {
    dim = RLY_DIM_ANY;
  } else if (rel_attr_is_none(attrs, "k")) {
    /* every element along the axis */
  } else if (!rel_attr_int(attrs, "k", &k)) {
    dim = RLY_DIM_ANY;  /* symbolic k */
  } else if (k >= 1) {
    if (dim != RLY_DIM_ANY && k > dim)
      return rel_error(rc, "k = %lld is larger than dimension %lld (%lld) of data %s", (long long)k, (long long)axis,
                       (long long)dim, rel_shape_str(x->u.tensor.shape, ndim, s, sizeof s));
    dim = k;
  }
  Dims o;
  int64_t *shape = dims_init(&o, ndim);
  memcpy(shape, x->u.tensor.shape, sizeof(int64_t) * (size_t)ndim);
  shape[axis] = dim;
  Type *values = rel_tensor(rc, x->u.tensor.dtype, ndim, shape);
  Type *indices = rel_tensor(rc, index_dtype(attrs), ndim, shape);
  dims_free(&o);
  if (which == 0) {
    Type *fields[2] = {values, indices};
    *out = rel_tuple(rc, fields, 2);
  } else {
    *out = which == 1 ? values : indices;
  }
  return REL_OK;
}

/* unique(data): data is 1-D of length n. The result, as TVM defines it, is
** (unique [n] data's dtype, indices [n] int32, inverse_indices [n] int32,
** num_unique [1] int32) and with return_counts also counts [n] int32; only
** the first num_unique[0] entries of unique, indices and counts are valid. */
RelResult rel_unique(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &x);
  if (r != REL_OK) return r;
  if (x->u.tensor.ndim != 1) {
    char s[256];
    return rel_error(rc, "data must be 1-D, found shape %s",
                     rel_shape_str(x->u.tensor.shape, x->u.tensor.ndim, s, sizeof s));
  }
  Type *fields[5];
  int n = 0;
  const int64_t one = 1;
  fields[n++] = same_shape(rc, x, x->u.tensor.dtype);
  fields[n++] = same_shape(rc, x, INT32_DTYPE);
  fields[n++] = same_shape(rc, x, INT32_DTYPE);
  fields[n++] = rel_tensor(rc, INT32_DTYPE, 1, &one);
  if (rel_attr_bool(attrs, "return_counts")) fields[n++] = same_shape(rc, x, INT32_DTYPE);
  *out = rel_tuple(rc, fields, n);
  return REL_OK;
}

/* argwhere(data): the coordinates of the non-zero elements, (?, ndim) int32. */
RelResult rel_argwhere(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs, (void)attrs;
  const Type *x;
  RelResult r = rel_tensor_arg(rc, args, 0, "condition", &x);
  if (r != REL_OK) return r;
  int64_t shape[2] = {RLY_DIM_ANY, x->u.tensor.ndim};
  *out = rel_tensor(rc, INT32_DTYPE, 2, shape);
  return REL_OK;
}

/* {==== Annotations ====} */

/* False while t, or a field of a tuple in t, is not known yet. */
static bool type_known(const Type *t) {
  if (!t || t->kind == TYPE_INCOMPLETE) return false;
  if (t->kind == TYPE_TUPLE)
    for (int i = 0; i < t->u.tuple.n; i++)
      if (!type_known(t->u.tuple.fields[i])) return false;
  return true;
}

/* A virtual device attribute: None or an object from the metadata section. */
static RelResult device_attr(RelCtx *rc, const Attrs *attrs, const char *field) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_NONE || v->kind == AV_META) return REL_OK;
  return rel_error(rc, "attribute '%s' must be a VirtualDevice (meta[VirtualDevice][i]) or None, found %s", field,
                   attr_value_desc(v));
}

/* stop_fusion (a tensor), compiler_begin/compiler_end (any type; 'compiler'
** named), on_device and device_copy (any type; virtual devices checked): the
** result is the argument's type itself. */
RelResult rel_annotation(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  if (!type_known(args[0])) return REL_DEFER;
  RelResult r = REL_OK;
  const Type *x;
  switch (rc->op->id) {
  case OP_STOP_FUSION: r = rel_tensor_arg(rc, args, 0, "data", &x); break;
  case OP_COMPILER_BEGIN:
  case OP_COMPILER_END: {
    size_t n;
    rel_attr_str(attrs, "compiler", &n);
    if (n == 0) r = rel_error(rc, "attribute 'compiler' is required (the name of an external compiler)");
    break;
  }
  case OP_ON_DEVICE: r = device_attr(rc, attrs, "virtual_device"); break;
  case OP_DEVICE_COPY:
    if ((r = device_attr(rc, attrs, "src_virtual_device")) == REL_OK) r = device_attr(rc, attrs, "dst_virtual_device");
    break;
  default: RLY_UNREACHABLE();
  }
  if (r == REL_OK) *out = args[0];
  return r;
}
