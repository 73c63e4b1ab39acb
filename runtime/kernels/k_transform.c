/* k_transform.c: reference kernels of the transform ops: reshaping and
** transposing, joining and splitting, slicing, indexing and scattering,
** broadcasting and tiling, layout_transform, the init ops (full, zeros,
** ones, arange, one_hot), shape_of, cumulative scans, einsum, meshgrid,
** sparse_to_dense, and the dyn.* variants whose shapes are the VALUES of
** tensor operands.
**
** Semantics are TVM v0.16's (spec sections 9.3 and 11); shapes follow the
** type relations of src/ops/rel_transform.c. Every kernel computes its
** result shape from the concrete arguments and checks it against the
** static type in c->outs (a dim the type checker left as -1 takes the
** computed value), so the two can never silently disagree. Data movement
** copies elements bytewise (exact for every dtype); conversions go through
** the runtime's get/set helpers (floats in double, integers in int64_t
** with wrap-around). Bad values found at run time (an index out of range,
** a negative size in a shape operand, begin after end) are RLYRT_E_RUNTIME
** errors, never a crash. Written for clarity, not speed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernel.h"

#define KERNEL(name, fn) rlyrt_status fn(rlyrt_kernel_call *c);
#include "relayc/kernels/k_transform.def"
#undef KERNEL

/* The largest rank handled (the runtime's own limit). */
#define MAXR 64
/* The most elements a shape read from a tensor operand at run time may
** have (a guard against absurd values, which would otherwise exhaust
** memory). */
#define MAX_DYN_ELEMS (INT64_C(1) << 32)

/* {==== Helpers ====} */

/* Saturating product of non-negative values. */
static int64_t smul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}

static int64_t shape_numel(const int64_t *shape, int ndim) {
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n = smul(n, shape[i]);
  return n;
}

/* "(2, 3)" into buf. */
static const char *shape_str(const int64_t *shape, int ndim, char *buf, size_t size) {
  size_t len = (size_t)snprintf(buf, size, "(");
  for (int i = 0; i < ndim && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)shape[i]);
  if (len < size) snprintf(buf + len, size - len, ndim == 1 ? ",)" : ")");
  return buf;
}

static bool is_int_dtype(DLDataType t) { return t.code == kDLInt || (t.code == kDLUInt && t.bits != 1); }
static bool is_unsigned(DLDataType t) { return t.code == kDLUInt; }

/* Argument i as a tensor of a rank these kernels handle. */
static rlyrt_status tensor_arg(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t) {
  rlyrt_status s = rk_tensor_arg(c, i, t);
  if (s != RLYRT_OK) return s;
  if ((*t)->dl.ndim > MAXR)
    return rk_fail(c, RLYRT_E_UNSUPPORTED, "argument %d has rank %d (at most %d)", i + 1, (int)(*t)->dl.ndim, MAXR);
  return RLYRT_OK;
}

/* Argument i as an integer tensor (indices). */
static rlyrt_status index_arg(const rlyrt_kernel_call *c, int i, const char *what, rlyrt_tensor **t) {
  rlyrt_status s = tensor_arg(c, i, t);
  if (s != RLYRT_OK) return s;
  if (!is_int_dtype((*t)->dl.dtype)) {
    char b[32];
    return rk_fail(c, RLYRT_E_ARG, "%s must be a tensor of integers, found %s", what,
                   rlyrt_dtype_name((*t)->dl.dtype, b));
  }
  return RLYRT_OK;
}

/* Argument i as a tuple of tensors with at least one field. */
static rlyrt_status tuple_arg(const rlyrt_kernel_call *c, int i, rlyrt_tuple **t) {
  rlyrt_status s = rk_tuple_arg(c, i, t);
  if (s != RLYRT_OK) return s;
  if ((*t)->n == 0) return rk_fail(c, RLYRT_E_ARG, "the tuple must hold at least one tensor");
  for (int32_t k = 0; k < (*t)->n; k++)
    if (RLYRT_AS_TENSOR((*t)->fields[k])->dl.ndim > MAXR)
      return rk_fail(c, RLYRT_E_UNSUPPORTED, "field %d has a rank above %d", (int)k, MAXR);
  return RLYRT_OK;
}

static rlyrt_tensor *field(const rlyrt_tuple *t, int k) { return RLYRT_AS_TENSOR(t->fields[k]); }

/* A new zeroed tensor for result i, of dtype dt and the computed shape,
** after checking both against result i's static type. */
static rlyrt_status alloc_result(const rlyrt_kernel_call *c, int i, DLDataType dt, int ndim, const int64_t *shape,
                                 rlyrt_tensor **t) {
  *t = NULL;
  if (i >= c->nouts) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for result %d", i);
  if (ndim > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result would have rank %d (at most %d)", ndim, MAXR);
  const rlyrt_tensor_type *ty = &c->outs[i];
  char b1[32], b2[32];
  if (!rlyrt_dtype_eq(ty->dtype, dt))
    return rk_fail(c, RLYRT_E_ARG, "result %d has dtype %s, but its static type says %s", i, rlyrt_dtype_name(dt, b1),
                   rlyrt_dtype_name(ty->dtype, b2));
  bool same = ty->ndim == ndim;
  for (int k = 0; same && k < ndim; k++) same = ty->shape[k] < 0 || ty->shape[k] == shape[k];
  if (!same) {
    char s1[512], s2[512];
    return rk_fail(c, RLYRT_E_ARG, "result %d has shape %s, but its static type says %s", i,
                   shape_str(shape, ndim, s1, sizeof s1), shape_str(ty->shape, ty->ndim, s2, sizeof s2));
  }
  return rk_alloc(c, dt, ndim, shape, t);
}

/* Sets the single tensor result. */
static rlyrt_status finish(rlyrt_kernel_call *c, rlyrt_tensor *out) { return rk_set_result(c, &out, 1); }

/* Releases out and returns s (error paths). */
static rlyrt_status drop(rlyrt_tensor *out, rlyrt_status s) {
  rlyrt_release(out ? &out->obj : NULL);
  return s;
}

static void copy_elem(rlyrt_tensor *dst, int64_t di, const rlyrt_tensor *src, int64_t si) {
  size_t n = rlyrt_dtype_bytes(src->dl.dtype);
  memcpy((char *)dst->dl.data + (size_t)di * n, (const char *)src->dl.data + (size_t)si * n, n);
}

/* dst[di] = src[si] converted to dst's dtype (floats to integers truncate). */
static void convert_elem(rlyrt_tensor *dst, int64_t di, const rlyrt_tensor *src, int64_t si) {
  DLDataType d = dst->dl.dtype, s = src->dl.dtype;
  if (rlyrt_dtype_eq(d, s)) copy_elem(dst, di, src, si);
  else if (rlyrt_dtype_is_float(s)) rlyrt_set_f64(dst, di, rlyrt_get_f64(src, si));
  else if (rlyrt_dtype_is_float(d) && s.code == kDLUInt && s.bits == 64)
    rlyrt_set_f64(dst, di, (double)(uint64_t)rlyrt_get_i64(src, si));
  else rlyrt_set_i64(dst, di, rlyrt_get_i64(src, si));
}

/* Element i of an integer tensor as an index (uint64 values above
** INT64_MAX saturate). */
static int64_t index_at(const rlyrt_tensor *t, int64_t i) {
  int64_t v = rlyrt_get_i64(t, i);
  if (v < 0 && t->dl.dtype.code == kDLUInt) return INT64_MAX;
  return v;
}

/* axis in -ndim..ndim-1 -> 0..ndim-1; false when out of range. */
static bool norm_axis(int64_t axis, int ndim, int64_t *out) {
  if (axis < -ndim || axis >= ndim) return false;
  *out = axis < 0 ? axis + ndim : axis;
  return true;
}

static rlyrt_status bad_axis(const rlyrt_kernel_call *c, rlyrt_status s, const char *what, int64_t axis, int ndim) {
  return rk_fail(c, s, "%s %lld is out of range for rank %d", what, (long long)axis, ndim);
}

/* The integer attribute name (dflt when absent) as an axis of rank ndim. */
static rlyrt_status attr_axis(const rlyrt_kernel_call *c, const char *name, int64_t dflt, int ndim, int64_t *axis) {
  int64_t v = rk_attr_int(c, name, dflt);
  return norm_axis(v, ndim, axis) ? RLYRT_OK : bad_axis(c, RLYRT_E_ARG, name, v, ndim);
}

/* Entry kinds of an integer-list attribute. */
enum { ENTRY_MISSING = -1, ENTRY_INT = 0, ENTRY_NONE = 1 };

/* Reads the integer-list attribute name (a bare integer counts as one
** entry): the number of entries (values and kinds stored up to max), or -1
** when the attribute is None or absent. */
static int attr_list(const rlyrt_kernel_call *c, const char *name, int64_t *v, int *kind, int max) {
  const rlyrt_attr *a = rlyrt_attr_get(c->attrs, name);
  if (!a || a->kind == RLYRT_ATTR_NONE) return -1;
  if (a->kind == RLYRT_ATTR_INT) {
    if (max > 0) {
      v[0] = a->i;
      kind[0] = ENTRY_INT;
    }
    return 1;
  }
  if (a->kind != RLYRT_ATTR_ARRAY) return -1;
  for (int32_t i = 0; i < a->n && i < max; i++) {
    kind[i] = a->items[i].kind == RLYRT_ATTR_INT ? ENTRY_INT : ENTRY_NONE;
    v[i] = a->items[i].kind == RLYRT_ATTR_INT ? a->items[i].i : 0;
  }
  return a->n;
}

/* An integer-list attribute that must be present with integer entries (at
** most max). */
static rlyrt_status need_list(const rlyrt_kernel_call *c, const char *name, int64_t *v, int max, int *n) {
  int kind[3 * MAXR];
  if (max > 3 * MAXR) max = 3 * MAXR;
  *n = attr_list(c, name, v, kind, max);
  if (*n < 0) return rk_fail(c, RLYRT_E_ARG, "attribute '%s' is required", name);
  if (*n > max) return rk_fail(c, RLYRT_E_UNSUPPORTED, "attribute '%s' has %d entries (at most %d)", name, *n, max);
  for (int i = 0; i < *n; i++)
    if (kind[i] != ENTRY_INT) return rk_fail(c, RLYRT_E_ARG, "attribute '%s': entry %d is not an integer", name, i);
  return RLYRT_OK;
}

/* The values of argument i, a 1-D integer tensor (a shape, axes, reps, a
** slice bound): n entries into v (at most max). */
static rlyrt_status int_operand(const rlyrt_kernel_call *c, int i, const char *what, int64_t *v, int max, int *n) {
  rlyrt_tensor *t;
  rlyrt_status s = index_arg(c, i, what, &t);
  if (s != RLYRT_OK) return s;
  if (t->dl.ndim != 1) return rk_fail(c, RLYRT_E_ARG, "%s must be a 1-D tensor", what);
  if (t->dl.shape[0] > max)
    return rk_fail(c, RLYRT_E_UNSUPPORTED, "%s has %lld entries (at most %d)", what, (long long)t->dl.shape[0], max);
  *n = (int)t->dl.shape[0];
  for (int k = 0; k < *n; k++) v[k] = index_at(t, k);
  return RLYRT_OK;
}

/* The value of argument i, a 0-d integer tensor. */
static rlyrt_status int_scalar(const rlyrt_kernel_call *c, int i, const char *what, int64_t *v) {
  rlyrt_tensor *t;
  rlyrt_status s = index_arg(c, i, what, &t);
  if (s != RLYRT_OK) return s;
  if (t->dl.ndim != 0) return rk_fail(c, RLYRT_E_ARG, "%s must be a scalar (0-d tensor)", what);
  *v = index_at(t, 0);
  return RLYRT_OK;
}

/* A shape read from a tensor operand: sizes >= 0, not absurdly large. */
static rlyrt_status check_dyn_shape(const rlyrt_kernel_call *c, const char *what, const int64_t *shape, int ndim) {
  char b[512];
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return rk_fail(c, RLYRT_E_RUNTIME, "%s %s has a negative size", what, shape_str(shape, ndim, b, sizeof b));
  if (shape_numel(shape, ndim) > MAX_DYN_ELEMS)
    return rk_fail(c, RLYRT_E_RUNTIME, "%s %s is too large", what, shape_str(shape, ndim, b, sizeof b));
  return RLYRT_OK;
}

/* A shape from the attribute name (static ops) or from argument argi (the
** dyn.* variant). */
static rlyrt_status shape_from(const rlyrt_kernel_call *c, bool dyn, int argi, const char *name, int64_t *shape,
                               int *ndim) {
  rlyrt_status s = dyn ? int_operand(c, argi, name, shape, MAXR, ndim) : need_list(c, name, shape, MAXR, ndim);
  if (s != RLYRT_OK) return s;
  return check_dyn_shape(c, name, shape, *ndim);
}

static bool op_is(const rlyrt_kernel_call *c, const char *name) { return strcmp(c->op, name) == 0; }

/* A new tensor holding data's elements in row-major order, of the given
** shape (the element counts must agree). */
static rlyrt_status reshaped_copy(rlyrt_kernel_call *c, const rlyrt_tensor *data, int ndim, const int64_t *shape) {
  char b1[512], b2[512];
  if (shape_numel(shape, ndim) != rlyrt_tensor_numel(data))
    return rk_fail(c, RLYRT_E_RUNTIME, "cannot reshape %s into %s",
                   shape_str(data->dl.shape, data->dl.ndim, b1, sizeof b1), shape_str(shape, ndim, b2, sizeof b2));
  rlyrt_tensor *out;
  rlyrt_status s = alloc_result(c, 0, data->dl.dtype, ndim, shape, &out);
  if (s != RLYRT_OK) return s;
  memcpy(out->dl.data, data->dl.data, rlyrt_tensor_nbytes(data));
  return finish(c, out);
}

/* {==== reshape, contrib_reverse_reshape, dyn.reshape, reshape_like ====} */

/* Applies the newshape codes ns0 (nn entries) to the input shape ish0
** (ndim dims), as rel_transform.c does: >0 a size; 0 copies the input dim
** (a size 0 with allowzero); -1 is inferred; -2 copies the remaining input
** dims; -3 merges two input dims; -4 splits one input dim into the next two
** values (one may be -1). The -1 is the product of the input dims no code
** copied over the product of the sizes written. reversed
** (contrib_reverse_reshape) reads both lists from the right. */
static rlyrt_status reshape_codes(const rlyrt_kernel_call *c, const int64_t *ish0, int ndim, const int64_t *ns0, int nn,
                                  bool allowzero, bool reversed, int64_t *os, int *nout) {
  /* Each code writes at most one dim, but for -2 (the input's rank in all)
  ** and -4 (two for three codes): 4 * MAXR bounds the count. */
  int64_t ish[MAXR], ns[3 * MAXR], tmp[4 * MAXR];
  bool used_in[MAXR] = {false}, copied[4 * MAXR] = {false};
  for (int i = 0; i < ndim; i++) ish[i] = reversed ? ish0[ndim - 1 - i] : ish0[i];
  for (int i = 0; i < nn; i++) ns[i] = reversed ? ns0[nn - 1 - i] : ns0[i];
  int no = 0, src = 0, infer = -1;
  for (int i = 0; i < nn; i++) {
    int64_t v = ns[i];
    if (v > 0 || (v == 0 && allowzero)) {
      tmp[no++] = v;
      src++;
    } else if (v == 0) {
      if (src >= ndim) return rk_fail(c, RLYRT_E_RUNTIME, "newshape: a 0 has no input dimension to copy");
      used_in[src] = copied[no] = true;
      tmp[no++] = ish[src++];
    } else if (v == -1) {
      if (infer >= 0) return rk_fail(c, RLYRT_E_RUNTIME, "newshape has more than one -1");
      infer = no;
      tmp[no++] = 1;
      src++;
    } else if (v == -2) {
      for (; src < ndim; src++) {
        used_in[src] = copied[no] = true;
        tmp[no++] = ish[src];
      }
    } else if (v == -3) {
      if (src + 1 >= ndim) return rk_fail(c, RLYRT_E_RUNTIME, "newshape: a -3 needs two input dimensions");
      used_in[src] = used_in[src + 1] = true;
      copied[no] = true;
      tmp[no++] = ish[src] * ish[src + 1];
      src += 2;
    } else if (v == -4) {
      if (i + 2 >= nn) return rk_fail(c, RLYRT_E_RUNTIME, "newshape: a -4 must be followed by two sizes");
      if (src >= ndim) return rk_fail(c, RLYRT_E_RUNTIME, "newshape: a -4 has no input dimension to split");
      int64_t d0 = ish[src], d1 = ns[i + 1], d2 = ns[i + 2];
      used_in[src++] = true;
      i += 2;
      if ((d1 == -1 && d2 == -1) || (d1 < 1 && d1 != -1) || (d2 < 1 && d2 != -1))
        return rk_fail(c, RLYRT_E_RUNTIME, "newshape: invalid sizes %lld, %lld after -4", (long long)d1, (long long)d2);
      if (d1 == -1) d1 = d0 % d2 == 0 ? d0 / d2 : -1;
      else if (d2 == -1) d2 = d0 % d1 == 0 ? d0 / d1 : -1;
      if (d1 < 0 || d2 < 0 || smul(d1, d2) != d0)
        return rk_fail(c, RLYRT_E_RUNTIME, "newshape: cannot split dimension %lld into (%lld, %lld)", (long long)d0,
                       (long long)ns[i - 1], (long long)ns[i]);
      copied[no] = copied[no + 1] = true;
      tmp[no++] = d1;
      tmp[no++] = d2;
    } else {
      return rk_fail(c, RLYRT_E_RUNTIME, "newshape has the invalid code %lld", (long long)v);
    }
  }
  if (infer >= 0) {
    int64_t num = 1, den = 1;
    for (int i = 0; i < ndim; i++)
      if (!used_in[i]) num = smul(num, ish[i]);
    for (int j = 0; j < no; j++)
      if (!copied[j] && j != infer) den = smul(den, tmp[j]);
    if (den == 0 || num % den != 0)
      return rk_fail(c, RLYRT_E_RUNTIME, "newshape: cannot infer the -1 (%lld elements into parts of %lld)",
                     (long long)num, (long long)den);
    tmp[infer] = num / den;
  }
  if (no > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "newshape gives rank %d (at most %d)", no, MAXR);
  for (int i = 0; i < no; i++) os[i] = reversed ? tmp[no - 1 - i] : tmp[i];
  *nout = no;
  return RLYRT_OK;
}

/* reshape, contrib_reverse_reshape (newshape attribute), dyn.reshape
** (newshape operand; its length is the result's rank). */
rlyrt_status rk_transform_reshape(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  bool dyn = op_is(c, "dyn.reshape");
  int64_t ns[3 * MAXR], os[MAXR];
  int nn = 0, no = 0;
  s = dyn ? int_operand(c, 1, "newshape", ns, 3 * MAXR, &nn) : need_list(c, "newshape", ns, 3 * MAXR, &nn);
  if (s != RLYRT_OK) return s;
  s = reshape_codes(c, data->dl.shape, data->dl.ndim, ns, nn, rk_attr_int(c, "allowzero", 0) != 0,
                    op_is(c, "contrib_reverse_reshape"), os, &no);
  if (s != RLYRT_OK) return s;
  if (dyn && c->nouts > 0 && no != c->outs[0].ndim)
    return rk_fail(c, RLYRT_E_RUNTIME, "newshape gives rank %d, but the result's type has rank %d", no,
                   (int)c->outs[0].ndim);
  return reshaped_copy(c, data, no, os);
}

/* One end of a reshape_like range: None = rank, negative counts from the end. */
static int64_t like_bound(const rlyrt_kernel_call *c, const char *name, int64_t dflt, int ndim) {
  if (rk_attr_is_none(c, name)) return dflt;
  int64_t v = rk_attr_int(c, name, dflt);
  return v < 0 ? v + ndim : v;
}

/* reshape_like: data's dims [lhs_begin, lhs_end) become like's dims
** [rhs_begin, rhs_end). */
rlyrt_status rk_transform_reshape_like(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *like;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = tensor_arg(c, 1, &like)) != RLYRT_OK) return s;
  int nd = data->dl.ndim, nl = like->dl.ndim;
  int64_t lb = like_bound(c, "lhs_begin", 0, nd), le = like_bound(c, "lhs_end", nd, nd);
  int64_t rb = like_bound(c, "rhs_begin", 0, nl), re = like_bound(c, "rhs_end", nl, nl);
  if (lb < 0 || lb > le || le > nd || rb < 0 || rb > re || re > nl)
    return rk_fail(c, RLYRT_E_ARG, "the ranges [%lld, %lld) of data and [%lld, %lld) of shape_like are out of range",
                   (long long)lb, (long long)le, (long long)rb, (long long)re);
  int64_t os[2 * MAXR];
  int no = 0;
  for (int64_t i = 0; i < lb; i++) os[no++] = data->dl.shape[i];
  for (int64_t i = rb; i < re; i++) os[no++] = like->dl.shape[i];
  for (int64_t i = le; i < nd; i++) os[no++] = data->dl.shape[i];
  if (no > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result would have rank %d", no);
  return reshaped_copy(c, data, no, os);
}

/* {==== transpose, squeeze, expand_dims ====} */

/* transpose: axes None reverses the dims; else a permutation. */
rlyrt_status rk_transform_transpose(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  const int64_t *ish = data->dl.shape;
  int64_t perm[MAXR], os[MAXR];
  if (rk_attr_is_none(c, "axes")) {
    for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;
  } else {
    int n = 0;
    if ((s = need_list(c, "axes", perm, MAXR, &n)) != RLYRT_OK) return s;
    bool seen[MAXR] = {false};
    if (n != nd) return rk_fail(c, RLYRT_E_ARG, "axes must be a permutation of %d axes", nd);
    for (int i = 0; i < nd; i++) {
      if (!norm_axis(perm[i], nd, &perm[i])) return bad_axis(c, RLYRT_E_ARG, "axis", perm[i], nd);
      if (seen[perm[i]]) return rk_fail(c, RLYRT_E_ARG, "axes must be a permutation of %d axes", nd);
      seen[perm[i]] = true;
    }
  }
  for (int i = 0; i < nd; i++) os[i] = ish[perm[i]];
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, nd, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), oc[MAXR], ic[MAXR];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, nd, oc);
    for (int i = 0; i < nd; i++) ic[perm[i]] = oc[i];
    copy_elem(out, o, data, rk_ravel(ic, ish, nd));
  }
  return finish(c, out);
}

/* squeeze: axis None drops every dim of size 1, else the listed ones (which
** must have size 1); dyn.squeeze takes the axes from its second operand. */
rlyrt_status rk_transform_squeeze(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  const int64_t *ish = data->dl.shape;
  bool dyn = op_is(c, "dyn.squeeze"), dropped[MAXR] = {false};
  rlyrt_status bad = dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG;
  if (!dyn && rk_attr_is_none(c, "axis")) {
    for (int i = 0; i < nd; i++) dropped[i] = ish[i] == 1;
  } else {
    int64_t axes[MAXR];
    int n = 0;
    s = dyn ? int_operand(c, 1, "axes", axes, MAXR, &n) : need_list(c, "axis", axes, MAXR, &n);
    if (s != RLYRT_OK) return s;
    for (int i = 0; i < n; i++) {
      int64_t a = 0;
      if (!norm_axis(axes[i], nd, &a)) return bad_axis(c, bad, "axis", axes[i], nd);
      if (dyn && dropped[a]) return rk_fail(c, RLYRT_E_RUNTIME, "axis %lld is listed twice", (long long)axes[i]);
      if (ish[a] != 1)
        return rk_fail(c, RLYRT_E_RUNTIME, "cannot squeeze axis %lld: its size is %lld, not 1", (long long)axes[i],
                       (long long)ish[a]);
      dropped[a] = true;
    }
  }
  int64_t os[MAXR];
  int no = 0;
  for (int i = 0; i < nd; i++)
    if (!dropped[i]) os[no++] = ish[i];
  return reshaped_copy(c, data, no, os);
}

/* expand_dims: num_newaxis dims of size 1 at axis (-ndim-1..ndim; negative
** counts from the end of the result); dyn.expand_dims takes the axis from a
** scalar operand. */
rlyrt_status rk_transform_expand_dims(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  bool dyn = op_is(c, "dyn.expand_dims");
  int nd = data->dl.ndim;
  int64_t axis = 0, nnew = rk_attr_int(c, "num_newaxis", 1);
  if (dyn) {
    if ((s = int_scalar(c, 1, "axis", &axis)) != RLYRT_OK) return s;
  } else {
    if (rk_attr_is_none(c, "axis")) return rk_fail(c, RLYRT_E_ARG, "attribute 'axis' is required");
    axis = rk_attr_int(c, "axis", 0);
  }
  if (axis < -nd - 1 || axis > nd)
    return rk_fail(c, dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG, "axis %lld is out of range for rank %d (expected %d..%d)",
                   (long long)axis, nd, -nd - 1, nd);
  if (nnew < 0 || nnew > MAXR - nd) return rk_fail(c, RLYRT_E_UNSUPPORTED, "num_newaxis %lld", (long long)nnew);
  int64_t pivot = axis < 0 ? nd + axis + 1 : axis, os[MAXR];
  int no = 0;
  for (int64_t i = 0; i < pivot; i++) os[no++] = data->dl.shape[i];
  for (int64_t i = 0; i < nnew; i++) os[no++] = 1;
  for (int64_t i = pivot; i < nd; i++) os[no++] = data->dl.shape[i];
  return reshaped_copy(c, data, no, os);
}

/* {==== concatenate, stack, split ====} */

/* The common checks of concatenate and stack: equal ranks and dtypes. */
static rlyrt_status same_fields(const rlyrt_kernel_call *c, const rlyrt_tuple *t) {
  for (int k = 1; k < t->n; k++) {
    if (field(t, k)->dl.ndim != field(t, 0)->dl.ndim)
      return rk_fail(c, RLYRT_E_ARG, "fields 0 and %d have different ranks", k);
    if (!rlyrt_dtype_eq(field(t, k)->dl.dtype, field(t, 0)->dl.dtype))
      return rk_fail(c, RLYRT_E_ARG, "fields 0 and %d have different dtypes", k);
  }
  return RLYRT_OK;
}

/* concatenate: the fields joined along axis (other dims equal). For each
** block of the dims before axis, each field contributes its slab in turn. */
rlyrt_status rk_transform_concatenate(rlyrt_kernel_call *c) {
  rlyrt_tuple *t;
  rlyrt_status s = tuple_arg(c, 0, &t);
  if (s != RLYRT_OK || (s = same_fields(c, t)) != RLYRT_OK) return s;
  const rlyrt_tensor *f0 = field(t, 0);
  int nd = f0->dl.ndim;
  int64_t axis = 0;
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  int64_t os[MAXR];
  memcpy(os, f0->dl.shape, sizeof(int64_t) * (size_t)nd);
  os[axis] = 0;
  for (int k = 0; k < t->n; k++) {
    const rlyrt_tensor *f = field(t, k);
    for (int d = 0; d < nd; d++)
      if (d != axis && f->dl.shape[d] != f0->dl.shape[d])
        return rk_fail(c, RLYRT_E_ARG, "fields 0 and %d differ in dimension %d", k, d);
    os[axis] += f->dl.shape[axis];
  }
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, f0->dl.dtype, nd, os, &out)) != RLYRT_OK) return s;
  size_t esz = rlyrt_dtype_bytes(f0->dl.dtype);
  int64_t outer = shape_numel(os, (int)axis), inner = shape_numel(os + axis + 1, nd - (int)axis - 1);
  char *dst = out->dl.data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < t->n; k++) {
      const rlyrt_tensor *f = field(t, k);
      size_t slab = (size_t)(f->dl.shape[axis] * inner) * esz;
      memcpy(dst, (const char *)f->dl.data + (size_t)o * slab, slab);
      dst += slab;
    }
  return finish(c, out);
}

/* stack: the fields (of one shape) along a new axis (-ndim-1..ndim). */
rlyrt_status rk_transform_stack(rlyrt_kernel_call *c) {
  rlyrt_tuple *t;
  rlyrt_status s = tuple_arg(c, 0, &t);
  if (s != RLYRT_OK || (s = same_fields(c, t)) != RLYRT_OK) return s;
  const rlyrt_tensor *f0 = field(t, 0);
  int nd = f0->dl.ndim;
  int64_t axis = 0;
  if ((s = attr_axis(c, "axis", 0, nd + 1, &axis)) != RLYRT_OK) return s;
  for (int k = 1; k < t->n; k++)
    for (int d = 0; d < nd; d++)
      if (field(t, k)->dl.shape[d] != f0->dl.shape[d])
        return rk_fail(c, RLYRT_E_ARG, "fields 0 and %d differ in dimension %d", k, d);
  if (nd + 1 > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result would have rank %d", nd + 1);
  int64_t os[MAXR];
  int no = 0;
  for (int64_t d = 0; d < axis; d++) os[no++] = f0->dl.shape[d];
  os[no++] = t->n;
  for (int64_t d = axis; d < nd; d++) os[no++] = f0->dl.shape[d];
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, f0->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  size_t esz = rlyrt_dtype_bytes(f0->dl.dtype);
  int64_t outer = shape_numel(f0->dl.shape, (int)axis), inner = shape_numel(f0->dl.shape + axis, nd - (int)axis);
  size_t slab = (size_t)inner * esz;
  char *dst = out->dl.data;
  for (int64_t o = 0; o < outer; o++)
    for (int k = 0; k < t->n; k++) {
      memcpy(dst, (const char *)field(t, k)->dl.data + (size_t)o * slab, slab);
      dst += slab;
    }
  return finish(c, out);
}

/* split: indices_or_sections an integer n (n equal parts) or a list of
** strictly ascending split points; a tuple of the parts. */
rlyrt_status rk_transform_split(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  int64_t axis = 0;
  if (nd == 0) return rk_fail(c, RLYRT_E_ARG, "cannot split a scalar");
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  int64_t dim = data->dl.shape[axis];
  const rlyrt_attr *ios = rlyrt_attr_get(c->attrs, "indices_or_sections");
  if (!ios || (ios->kind != RLYRT_ATTR_INT && ios->kind != RLYRT_ATTR_ARRAY))
    return rk_fail(c, RLYRT_E_ARG, "attribute 'indices_or_sections' is required");
  int nparts = ios->kind == RLYRT_ATTR_INT ? (ios->i > 0 && ios->i <= INT32_MAX ? (int)ios->i : 0) : ios->n + 1;
  if (nparts <= 0)
    return rk_fail(c, RLYRT_E_ARG, "the number of sections must be positive, found %lld", (long long)ios->i);
  if (nparts != c->nouts)
    return rk_fail(c, RLYRT_E_ARG, "%d parts, but the result's type has %d fields", nparts, (int)c->nouts);
  /* begins[p], and begins[nparts] = dim. */
  int64_t *begins = rlyrt_alloc(sizeof(int64_t) * (size_t)(nparts + 1), 16);
  rlyrt_tensor **outs = rlyrt_alloc(sizeof(rlyrt_tensor *) * (size_t)nparts, 16);
  if (!begins || !outs) {
    rlyrt_free(begins);
    rlyrt_free(outs);
    return rk_fail(c, RLYRT_E_NOMEM, "out of memory");
  }
  memset(outs, 0, sizeof(rlyrt_tensor *) * (size_t)nparts);
  int made = 0;
  if (ios->kind == RLYRT_ATTR_INT) {
    if (dim % nparts != 0) {
      s = rk_fail(c, RLYRT_E_RUNTIME, "%d sections do not divide axis %lld (size %lld)", nparts, (long long)axis,
                  (long long)dim);
      goto fail;
    }
    for (int p = 0; p <= nparts; p++) begins[p] = dim / nparts * p;
  } else {
    begins[0] = 0;
    for (int p = 0; p < ios->n; p++) {
      const rlyrt_attr *it = &ios->items[p];
      if (it->kind != RLYRT_ATTR_INT || it->i <= begins[p] || it->i >= dim) {
        s = rk_fail(c, RLYRT_E_RUNTIME, "split points must be strictly ascending within (0, %lld)", (long long)dim);
        goto fail;
      }
      begins[p + 1] = it->i;
    }
    begins[nparts] = dim;
  }
  {
    size_t esz = rlyrt_dtype_bytes(data->dl.dtype);
    int64_t outer = shape_numel(data->dl.shape, (int)axis);
    int64_t inner = shape_numel(data->dl.shape + axis + 1, nd - (int)axis - 1);
    for (int p = 0; p < nparts; p++) {
      int64_t os[MAXR];
      memcpy(os, data->dl.shape, sizeof(int64_t) * (size_t)nd);
      os[axis] = begins[p + 1] - begins[p];
      if ((s = alloc_result(c, p, data->dl.dtype, nd, os, &outs[p])) != RLYRT_OK) goto fail;
      made++;
      size_t slab = (size_t)(os[axis] * inner) * esz;
      for (int64_t o = 0; o < outer; o++)
        memcpy((char *)outs[p]->dl.data + (size_t)o * slab,
               (const char *)data->dl.data + ((size_t)(o * dim + begins[p]) * (size_t)inner) * esz, slab);
    }
  }
  s = rk_set_result(c, outs, nparts);
  rlyrt_free(begins);
  rlyrt_free(outs);
  return s;
fail:
  for (int p = 0; p < made; p++) rlyrt_release(&outs[p]->obj);
  rlyrt_free(begins);
  rlyrt_free(outs);
  return s;
}

/* {==== strided_slice, dyn.strided_slice, slice_like ====} */

/* One sliced axis: the first index, the step and the length. */
typedef struct SliceDim {
  int64_t begin, step, len;
} SliceDim;

/* TVM's CanonicalizeIndex: a negative index wraps once, then clamps to
** [0, extent] (step > 0) or [-1, extent-1] (step < 0). */
static int64_t canon_index(int64_t index, int64_t extent, int64_t step) {
  int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? extent - 1 : extent;
  if (index < 0) index += extent;
  return index < lo ? lo : index > hi ? hi : index;
}

/* Axis `axis` (size dim) of a strided slice from its begin/end/stride
** entries (each ENTRY_MISSING, ENTRY_INT with the value, or ENTRY_NONE),
** by rel_strided_slice's rules: a missing entry defaults by the stride's
** sign (begin 0 or the end; end the dim, or 0 for a negative stride, as
** TVM pads them), a None entry by the effective step's; in "size" mode the
** end is a length (negative: to the end) and the step is 1. */
static rlyrt_status slice_axis(const rlyrt_kernel_call *c, int64_t axis, int64_t dim, bool size_mode, int bk,
                               int64_t bv, int ek, int64_t ev, int sk, int64_t sv, SliceDim *out) {
  int64_t stride = sk == ENTRY_INT ? sv : 1;
  if (stride == 0) return rk_fail(c, RLYRT_E_RUNTIME, "the stride of axis %lld is 0", (long long)axis);
  int64_t step = size_mode ? 1 : stride, e;
  if (bk == ENTRY_MISSING) bv = stride > 0 ? 0 : INT64_MAX;
  else if (bk == ENTRY_NONE) bv = step > 0 ? 0 : INT64_MAX;
  if (ek == ENTRY_MISSING) ev = stride < 0 ? 0 : INT64_MAX;
  if (ek == ENTRY_NONE) e = step < 0 ? 0 : INT64_MAX;
  else if (!size_mode) e = ev;
  else if (ev < 0) e = INT64_MAX;
  else e = bv > INT64_MAX - ev ? INT64_MAX : bv + ev;
  int64_t b = canon_index(bv, dim, step), en = canon_index(e, dim, step);
  if (step < 0 ? en > b : b > en)
    return rk_fail(c, RLYRT_E_RUNTIME, "axis %lld (size %lld): begin %lld is %s end %lld (stride %lld)",
                   (long long)axis, (long long)dim, (long long)bv, step < 0 ? "before" : "after", (long long)e,
                   (long long)step);
  uint64_t interval = (uint64_t)(b > en ? b - en : en - b);
  uint64_t astep = step < 0 ? (uint64_t)0 - (uint64_t)step : (uint64_t)step;
  out->begin = b;
  out->step = step;
  out->len = interval == 0 ? 0 : (int64_t)((interval - 1) / astep + 1);
  return RLYRT_OK;
}

/* Copies data[sd[0].begin + i0 * sd[0].step, ...] into a new result. */
static rlyrt_status slice_copy(rlyrt_kernel_call *c, const rlyrt_tensor *data, const SliceDim *sd) {
  int nd = data->dl.ndim;
  int64_t os[MAXR], oc[MAXR], ic[MAXR];
  for (int i = 0; i < nd; i++) os[i] = sd[i].len;
  rlyrt_tensor *out;
  rlyrt_status s = alloc_result(c, 0, data->dl.dtype, nd, os, &out);
  if (s != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, nd, oc);
    for (int i = 0; i < nd; i++) ic[i] = sd[i].begin + oc[i] * sd[i].step;
    copy_elem(out, o, data, rk_ravel(ic, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* strided_slice: begin, end, strides, axes attributes (each may be None);
** dyn.strided_slice: begin, end, strides operands of one length <= rank
** slicing the leading axes. slice_mode "end" or "size". */
rlyrt_status rk_transform_strided_slice(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  bool dyn = op_is(c, "dyn.strided_slice");
  rlyrt_status bad = dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG;
  int nd = data->dl.ndim;
  const char *mode = rk_attr_str(c, "slice_mode");
  if (*mode && strcmp(mode, "end") != 0 && strcmp(mode, "size") != 0)
    return rk_fail(c, RLYRT_E_ARG, "slice_mode \"%s\" is not \"end\" or \"size\"", mode);
  bool size_mode = strcmp(mode, "size") == 0;
  static const char *const names[] = {"begin", "end", "strides", "axes"};
  int64_t v[4][MAXR];
  int kind[4][MAXR], n[4];
  for (int f = 0; f < 4; f++) {
    if (dyn && f < 3) {
      if ((s = int_operand(c, f + 1, names[f], v[f], MAXR, &n[f])) != RLYRT_OK) return s;
      for (int k = 0; k < n[f]; k++) kind[f][k] = ENTRY_INT;
    } else if (dyn) {
      n[f] = -1; /* dyn.strided_slice slices the leading axes */
    } else {
      n[f] = attr_list(c, names[f], v[f], kind[f], MAXR);
      if (n[f] > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "attribute '%s' has %d entries", names[f], n[f]);
    }
  }
  if (dyn && (n[1] != n[0] || n[2] != n[0]))
    return rk_fail(c, RLYRT_E_RUNTIME, "begin, end and strides have different lengths");
  int count = n[3] >= 0 ? n[3] : dyn ? n[0] : nd;
  for (int f = 0; f < 3; f++)
    if (n[f] > (n[3] >= 0 ? n[3] : nd) || (n[3] >= 0 && n[f] >= 0 && n[f] != n[3]))
      return rk_fail(c, bad, "%s has %d entries for %d axes", names[f], n[f], n[3] >= 0 ? n[3] : nd);
  SliceDim sd[MAXR];
  bool seen[MAXR] = {false};
  for (int i = 0; i < nd; i++) sd[i] = (SliceDim){0, 1, data->dl.shape[i]};
  for (int k = 0; k < count; k++) {
    int64_t axis = k;
    if (n[3] >= 0) {
      if (kind[3][k] != ENTRY_INT || !norm_axis(v[3][k], nd, &axis))
        return bad_axis(c, RLYRT_E_ARG, "axis", v[3][k], nd);
      if (seen[axis]) return rk_fail(c, RLYRT_E_ARG, "axis %lld is sliced twice", (long long)v[3][k]);
      seen[axis] = true;
    }
    int e[3];
    for (int f = 0; f < 3; f++) e[f] = k < n[f] ? kind[f][k] : ENTRY_MISSING;
    s = slice_axis(c, axis, data->dl.shape[axis], size_mode, e[0], e[0] == ENTRY_INT ? v[0][k] : 0, e[1],
                   e[1] == ENTRY_INT ? v[1][k] : 0, e[2], e[2] == ENTRY_INT ? v[2][k] : 0, &sd[axis]);
    if (s != RLYRT_OK) return s;
  }
  return slice_copy(c, data, sd);
}

/* slice_like: the listed axes (None: the first min(rank(data),
** rank(like))) are cut to shape_like's dims, from index 0. */
rlyrt_status rk_transform_slice_like(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *like;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = tensor_arg(c, 1, &like)) != RLYRT_OK) return s;
  int nd = data->dl.ndim, nl = like->dl.ndim, naxes;
  int64_t axes[MAXR];
  if (rk_attr_is_none(c, "axes")) {
    naxes = nd < nl ? nd : nl;
    for (int i = 0; i < naxes; i++) axes[i] = i;
  } else if ((s = need_list(c, "axes", axes, MAXR, &naxes)) != RLYRT_OK) {
    return s;
  }
  SliceDim sd[MAXR];
  for (int i = 0; i < nd; i++) sd[i] = (SliceDim){0, 1, data->dl.shape[i]};
  for (int i = 0; i < naxes; i++) {
    int64_t a = 0;
    if (!norm_axis(axes[i], nd, &a) || a >= nl) return bad_axis(c, RLYRT_E_ARG, "axis", axes[i], nd < nl ? nd : nl);
    if (like->dl.shape[a] > data->dl.shape[a])
      return rk_fail(c, RLYRT_E_RUNTIME, "axis %lld: shape_like's size %lld exceeds data's %lld", (long long)a,
                     (long long)like->dl.shape[a], (long long)data->dl.shape[a]);
    sd[a].len = like->dl.shape[a];
  }
  return slice_copy(c, data, sd);
}

/* {==== take, gather, gather_nd ====} */

enum { TAKE_CLIP, TAKE_WRAP, TAKE_FAST };

/* An index into an axis of size n by take's mode: clip clamps into
** [0, n-1] (a negative index becomes 0), wrap takes it modulo n, fast
** requires it in range. */
static rlyrt_status take_index(const rlyrt_kernel_call *c, int mode, int64_t idx, int64_t n, int64_t *out) {
  if (mode == TAKE_FAST) {
    if (idx < 0 || idx >= n)
      return rk_fail(c, RLYRT_E_RUNTIME, "index %lld is out of range for an axis of size %lld (mode \"fast\")",
                     (long long)idx, (long long)n);
    *out = idx;
    return RLYRT_OK;
  }
  if (n == 0) return rk_fail(c, RLYRT_E_RUNTIME, "cannot take from an axis of size 0");
  if (mode == TAKE_CLIP) *out = idx < 0 ? 0 : idx >= n ? n - 1 : idx;
  else *out = (idx % n + n) % n;
  return RLYRT_OK;
}

/* take: axis None indexes the flattened data (result: indices' shape);
** else result data[:axis] + indices[batch_dims:] + data[axis+1:], the
** first batch_dims dims shared by data and indices. */
rlyrt_status rk_transform_take(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *ind;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "indices", &ind)) != RLYRT_OK) return s;
  const char *ms = rk_attr_str(c, "mode");
  int mode = -1;
  if (!*ms || strcmp(ms, "clip") == 0) mode = TAKE_CLIP;
  else if (strcmp(ms, "wrap") == 0) mode = TAKE_WRAP;
  else if (strcmp(ms, "fast") == 0) mode = TAKE_FAST;
  if (mode < 0) return rk_fail(c, RLYRT_E_ARG, "mode \"%s\" is not \"clip\", \"wrap\" or \"fast\"", ms);
  int nd = data->dl.ndim, ni = ind->dl.ndim;
  rlyrt_tensor *out;
  if (rk_attr_is_none(c, "axis")) {
    if ((s = alloc_result(c, 0, data->dl.dtype, ni, ind->dl.shape, &out)) != RLYRT_OK) return s;
    int64_t n = rlyrt_tensor_numel(ind), size = rlyrt_tensor_numel(data), idx = 0;
    for (int64_t i = 0; i < n; i++) {
      if ((s = take_index(c, mode, index_at(ind, i), size, &idx)) != RLYRT_OK) return drop(out, s);
      copy_elem(out, i, data, idx);
    }
    return finish(c, out);
  }
  int64_t axis = 0, bd = rk_attr_int(c, "batch_dims", 0);
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  if (bd < 0) bd += ni;
  if (bd < 0 || bd > ni || bd > axis)
    return rk_fail(c, RLYRT_E_ARG, "batch_dims %lld is out of range", (long long)rk_attr_int(c, "batch_dims", 0));
  for (int64_t i = 0; i < bd; i++)
    if (data->dl.shape[i] != ind->dl.shape[i])
      return rk_fail(c, RLYRT_E_ARG, "batch dimension %lld differs between data and indices", (long long)i);
  int64_t os[MAXR];
  int no = 0;
  for (int64_t i = 0; i < axis; i++) os[no++] = data->dl.shape[i];
  for (int64_t i = bd; i < ni; i++) {
    if (no >= MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result's rank is above %d", MAXR);
    os[no++] = ind->dl.shape[i];
  }
  for (int64_t i = axis + 1; i < nd; i++) {
    if (no >= MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result's rank is above %d", MAXR);
    os[no++] = data->dl.shape[i];
  }
  if ((s = alloc_result(c, 0, data->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), oc[MAXR], icoord[MAXR], dc[MAXR], nidx = ni - bd;
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, no, oc);
    for (int64_t i = 0; i < bd; i++) icoord[i] = oc[i];
    for (int64_t i = 0; i < nidx; i++) icoord[bd + i] = oc[axis + i];
    int64_t idx = 0;
    s = take_index(c, mode, index_at(ind, rk_ravel(icoord, ind->dl.shape, ni)), data->dl.shape[axis], &idx);
    if (s != RLYRT_OK) return drop(out, s);
    for (int64_t i = 0; i < axis; i++) dc[i] = oc[i];
    dc[axis] = idx;
    for (int64_t i = axis + 1; i < nd; i++) dc[i] = oc[i - 1 + nidx];
    copy_elem(out, o, data, rk_ravel(dc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* gather: out[p] = data[p with axis replaced by indices[p]] (indices of
** data's rank; an index outside 0..dim-1 is an error, as TVM does not
** wrap negative ones). */
rlyrt_status rk_transform_gather(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *ind;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "indices", &ind)) != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  if (rk_attr_is_none(c, "axis")) return rk_fail(c, RLYRT_E_ARG, "attribute 'axis' is required");
  int64_t axis = 0;
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  if (ind->dl.ndim != nd) return rk_fail(c, RLYRT_E_ARG, "indices must have the rank of data");
  for (int i = 0; i < nd; i++)
    if (i != axis && ind->dl.shape[i] > data->dl.shape[i])
      return rk_fail(c, RLYRT_E_ARG, "indices are larger than data in dimension %d", i);
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, nd, ind->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), pc[MAXR];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, ind->dl.shape, nd, pc);
    int64_t idx = index_at(ind, o);
    if (idx < 0 || idx >= data->dl.shape[axis])
      return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "index %lld is out of range for axis %lld of size %lld",
                               (long long)idx, (long long)axis, (long long)data->dl.shape[axis]));
    pc[axis] = idx;
    copy_elem(out, o, data, rk_ravel(pc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* gather_nd: data (X_0..X_{N-1}), indices (M, Y_0..Y_{K-1}), B batch dims:
** out[y, x] = data[y_0..y_{B-1}, indices[0, y], ..., indices[M-1, y], x]. */
rlyrt_status rk_transform_gather_nd(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *ind;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "indices", &ind)) != RLYRT_OK) return s;
  int nd = data->dl.ndim, ni = ind->dl.ndim;
  if (ni < 1) return rk_fail(c, RLYRT_E_ARG, "indices must have rank >= 1");
  int64_t m = ind->dl.shape[0], bd = rk_attr_int(c, "batch_dims", 0);
  if (bd < 0 || bd > ni - 1 || m + bd > nd)
    return rk_fail(c, RLYRT_E_ARG, "indices of %lld dims after %lld batch dims do not fit data of rank %d",
                   (long long)m, (long long)bd, nd);
  for (int64_t i = 0; i < bd; i++)
    if (data->dl.shape[i] != ind->dl.shape[i + 1])
      return rk_fail(c, RLYRT_E_ARG, "batch dimension %lld differs between data and indices", (long long)i);
  int k = ni - 1, no = 0;
  int64_t os[MAXR];
  for (int i = 1; i < ni; i++) os[no++] = ind->dl.shape[i];
  for (int64_t i = m + bd; i < nd; i++) {
    if (no >= MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result's rank is above %d", MAXR);
    os[no++] = data->dl.shape[i];
  }
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), ny = shape_numel(ind->dl.shape + 1, k), oc[MAXR], dc[MAXR];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, no, oc);
    int64_t y = rk_ravel(oc, ind->dl.shape + 1, k);
    for (int64_t i = 0; i < bd; i++) dc[i] = oc[i];
    for (int64_t j = 0; j < m; j++) {
      int64_t idx = index_at(ind, j * ny + y), dim = data->dl.shape[bd + j];
      if (idx < 0 || idx >= dim)
        return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "index %lld is out of range for axis %lld of size %lld",
                                 (long long)idx, (long long)(bd + j), (long long)dim));
      dc[bd + j] = idx;
    }
    for (int64_t i = m + bd; i < nd; i++) dc[i] = oc[k + i - m - bd];
    copy_elem(out, o, data, rk_ravel(dc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* {==== scatter_elements, scatter_nd ====} */

enum { RED_UPDATE, RED_ADD, RED_MUL, RED_MEAN, RED_MIN, RED_MAX };

/* The RED_ value of a reduction name ("" = update); -1 if unknown, or
** "mean" where it is not allowed (scatter_nd). */
static int reduction(const char *name, bool allow_mean) {
  static const char *const names[] = {"update", "add", "mul", "mean", "min", "max"};
  if (!*name) return RED_UPDATE;
  for (int i = 0; i < 6; i++)
    if (strcmp(name, names[i]) == 0 && (i != RED_MEAN || allow_mean)) return i;
  return -1;
}

/* out[di] = f(out[di], upd[ui]) in out's dtype, as TVM's generated code
** does it: floats in double and rounded once, integers with wrap-around;
** "mean" is (out + upd) / 2 (an integer sum wraps to the dtype, then
** divides truncating). */
static void reduce_into(rlyrt_tensor *out, int64_t di, const rlyrt_tensor *upd, int64_t ui, int red) {
  if (red == RED_UPDATE) {
    copy_elem(out, di, upd, ui);
    return;
  }
  if (rlyrt_dtype_is_float(out->dl.dtype)) {
    double a = rlyrt_get_f64(out, di), b = rlyrt_get_f64(upd, ui), r;
    switch (red) {
    case RED_ADD: r = a + b; break;
    case RED_MUL: r = a * b; break;
    case RED_MEAN: r = (a + b) / 2; break;
    case RED_MIN: r = b < a ? b : a; break;
    default: r = b > a ? b : a; break;
    }
    rlyrt_set_f64(out, di, r);
    return;
  }
  bool uns = is_unsigned(out->dl.dtype);
  uint64_t a = (uint64_t)rlyrt_get_i64(out, di), b = (uint64_t)rlyrt_get_i64(upd, ui);
  bool less = uns ? b < a : (int64_t)b < (int64_t)a;
  switch (red) {
  case RED_ADD: rlyrt_set_i64(out, di, (int64_t)(a + b)); break;
  case RED_MUL: rlyrt_set_i64(out, di, (int64_t)(a * b)); break;
  case RED_MEAN: {
    rlyrt_set_i64(out, di, (int64_t)(a + b));
    uint64_t sum = (uint64_t)rlyrt_get_i64(out, di);
    rlyrt_set_i64(out, di, uns ? (int64_t)(sum / 2) : (int64_t)sum / 2);
    break;
  }
  case RED_MIN: rlyrt_set_i64(out, di, (int64_t)(less ? b : a)); break;
  default: rlyrt_set_i64(out, di, (int64_t)(less ? a : b)); break;
  }
}

/* A copy of data as result 0. */
static rlyrt_status copy_of(const rlyrt_kernel_call *c, const rlyrt_tensor *data, rlyrt_tensor **out) {
  rlyrt_status s = alloc_result(c, 0, data->dl.dtype, data->dl.ndim, data->dl.shape, out);
  if (s == RLYRT_OK) memcpy((*out)->dl.data, data->dl.data, rlyrt_tensor_nbytes(data));
  return s;
}

/* scatter_elements: a copy of data where, for each position p of indices,
** out[p with axis replaced by indices[p]] = f(that, updates[p]), in
** row-major order of p. A negative index counts from the end (once). */
rlyrt_status rk_transform_scatter_elements(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *ind, *upd;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "indices", &ind)) != RLYRT_OK ||
      (s = tensor_arg(c, 2, &upd)) != RLYRT_OK)
    return s;
  int nd = data->dl.ndim;
  bool same = ind->dl.ndim == nd && upd->dl.ndim == nd && rlyrt_dtype_eq(upd->dl.dtype, data->dl.dtype);
  for (int i = 0; same && i < nd; i++) same = ind->dl.shape[i] == upd->dl.shape[i];
  if (!same)
    return rk_fail(c, RLYRT_E_ARG, "indices and updates must have one shape, of data's rank; updates data's dtype");
  int64_t axis = 0;
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  const char *rs = rk_attr_str(c, "reduction");
  int red = reduction(rs, true);
  if (red < 0) return rk_fail(c, RLYRT_E_ARG, "unknown reduction \"%s\"", rs);
  rlyrt_tensor *out;
  if ((s = copy_of(c, data, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(ind), pc[MAXR], dim = data->dl.shape[axis];
  for (int64_t p = 0; p < n; p++) {
    rk_unravel(p, ind->dl.shape, nd, pc);
    for (int i = 0; i < nd; i++)
      if (i != axis && pc[i] >= data->dl.shape[i])
        return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "indices are larger than data in dimension %d", i));
    int64_t idx = index_at(ind, p);
    if (idx < 0) idx += dim;
    if (idx < 0 || idx >= dim)
      return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "index %lld is out of range for axis %lld of size %lld",
                               (long long)index_at(ind, p), (long long)axis, (long long)dim));
    pc[axis] = idx;
    reduce_into(out, rk_ravel(pc, data->dl.shape, nd), upd, p, red);
  }
  return finish(c, out);
}

/* scatter_nd: data (X_0..X_{N-1}), indices (M, Y...), updates (Y...,
** X_M..X_{N-1}): out[indices[:, y], x] = f(that, updates[y, x]), y in
** row-major order. Indices must be in range (no wrapping, as TVM). */
rlyrt_status rk_transform_scatter_nd(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *ind, *upd;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "indices", &ind)) != RLYRT_OK ||
      (s = tensor_arg(c, 2, &upd)) != RLYRT_OK)
    return s;
  int nd = data->dl.ndim, ni = ind->dl.ndim;
  if (ni < 1 || ind->dl.shape[0] > nd || !rlyrt_dtype_eq(upd->dl.dtype, data->dl.dtype))
    return rk_fail(c, RLYRT_E_ARG, "indices (M, ...) must have M <= rank of data, updates data's dtype");
  int64_t m = ind->dl.shape[0];
  bool same = upd->dl.ndim == ni - 1 + nd - m;
  for (int i = 1; same && i < ni; i++) same = upd->dl.shape[i - 1] == ind->dl.shape[i];
  for (int64_t i = m; same && i < nd; i++) same = upd->dl.shape[ni - 1 + i - m] == data->dl.shape[i];
  if (!same) return rk_fail(c, RLYRT_E_ARG, "updates must have shape indices.shape[1:] + data.shape[M:]");
  const char *ms = rk_attr_str(c, "mode");
  int red = reduction(ms, false);
  if (red < 0) return rk_fail(c, RLYRT_E_ARG, "unknown mode \"%s\"", ms);
  rlyrt_tensor *out;
  if ((s = copy_of(c, data, &out)) != RLYRT_OK) return s;
  int64_t ny = shape_numel(ind->dl.shape + 1, ni - 1), nx = shape_numel(data->dl.shape + m, nd - (int)m);
  for (int64_t y = 0; y < ny; y++) {
    int64_t flat = 0;
    for (int64_t j = 0; j < m; j++) {
      int64_t idx = index_at(ind, j * ny + y), dim = data->dl.shape[j];
      if (idx < 0 || idx >= dim)
        return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "index %lld is out of range for axis %lld of size %lld",
                                 (long long)idx, (long long)j, (long long)dim));
      flat = flat * dim + idx;
    }
    for (int64_t x = 0; x < nx; x++) reduce_into(out, flat * nx + x, upd, y * nx + x, red);
  }
  return finish(c, out);
}

/* {==== broadcast_to, broadcast_to_like, dyn.broadcast_to, tile, repeat, reverse ====} */

/* broadcast_to (shape attribute), broadcast_to_like (like's shape),
** dyn.broadcast_to (shape operand): NumPy broadcasting to the shape. */
rlyrt_status rk_transform_broadcast_to(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *like;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int64_t os[MAXR];
  int no = 0;
  if (op_is(c, "broadcast_to_like")) {
    if ((s = tensor_arg(c, 1, &like)) != RLYRT_OK) return s;
    no = like->dl.ndim;
    memcpy(os, like->dl.shape, sizeof(int64_t) * (size_t)no);
  } else if ((s = shape_from(c, op_is(c, "dyn.broadcast_to"), 1, "shape", os, &no)) != RLYRT_OK) {
    return s;
  }
  int nd = data->dl.ndim;
  bool ok = nd <= no;
  for (int i = 0; ok && i < nd; i++) ok = data->dl.shape[i] == 1 || data->dl.shape[i] == os[no - nd + i];
  if (!ok) {
    char b1[512], b2[512];
    return rk_fail(c, RLYRT_E_RUNTIME, "cannot broadcast %s to %s", shape_str(data->dl.shape, nd, b1, sizeof b1),
                   shape_str(os, no, b2, sizeof b2));
  }
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), oc[MAXR];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, no, oc);
    copy_elem(out, o, data, rk_broadcast_index(oc, no, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* tile (reps attribute), dyn.tile (reps operand): the shorter of data's
** shape and reps is padded with leading 1s; out[i] = data[i mod dim]. */
rlyrt_status rk_transform_tile(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  bool dyn = op_is(c, "dyn.tile");
  int64_t reps[MAXR];
  int nr = 0;
  s = dyn ? int_operand(c, 1, "reps", reps, MAXR, &nr) : need_list(c, "reps", reps, MAXR, &nr);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim, no = nd > nr ? nd : nr;
  int64_t ds[MAXR], os[MAXR], oc[MAXR], ic[MAXR];
  for (int i = 0; i < no; i++) {
    int di = i - (no - nd), ri = i - (no - nr);
    int64_t rep = ri >= 0 ? reps[ri] : 1;
    if (rep < (dyn ? 0 : 1))
      return rk_fail(c, dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG, "reps entry %lld is not allowed", (long long)rep);
    ds[i] = di >= 0 ? data->dl.shape[di] : 1;
    os[i] = smul(ds[i], rep);
  }
  if (dyn && (s = check_dyn_shape(c, "the tiled shape", os, no)) != RLYRT_OK) return s;
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, no, oc);
    for (int i = 0; i < no; i++) ic[i] = oc[i] % ds[i];
    copy_elem(out, o, data, rk_ravel(ic, ds, no));
  }
  return finish(c, out);
}

/* repeat: each element repeated `repeats` times along axis. */
rlyrt_status rk_transform_repeat(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  int64_t reps = rk_attr_int(c, "repeats", 0), axis = 0;
  if (rk_attr_is_none(c, "repeats") || reps < 1) return rk_fail(c, RLYRT_E_ARG, "repeats must be >= 1");
  if (rk_attr_is_none(c, "axis")) return rk_fail(c, RLYRT_E_ARG, "attribute 'axis' is required");
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  int64_t os[MAXR], oc[MAXR];
  memcpy(os, data->dl.shape, sizeof(int64_t) * (size_t)nd);
  os[axis] = smul(os[axis], reps);
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, nd, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, nd, oc);
    oc[axis] /= reps;
    copy_elem(out, o, data, rk_ravel(oc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* reverse: the order along axis reversed. */
rlyrt_status rk_transform_reverse(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  int64_t axis = 0;
  if (rk_attr_is_none(c, "axis")) return rk_fail(c, RLYRT_E_ARG, "attribute 'axis' is required");
  if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, nd, data->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), oc[MAXR];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, data->dl.shape, nd, oc);
    oc[axis] = data->dl.shape[axis] - 1 - oc[axis];
    copy_elem(out, o, data, rk_ravel(oc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* reverse_sequence: along seq_axis, the first seq_lengths[b] entries of
** batch entry b are reversed (TVM's rule: a length <= 1 leaves the entries
** as they are, a length above the axis size reverses the whole axis). */
rlyrt_status rk_transform_reverse_sequence(rlyrt_kernel_call *c) {
  rlyrt_tensor *data, *lens;
  rlyrt_status s;
  if ((s = tensor_arg(c, 0, &data)) != RLYRT_OK || (s = index_arg(c, 1, "seq_lengths", &lens)) != RLYRT_OK) return s;
  int nd = data->dl.ndim;
  int64_t seq = 0, batch = 0;
  if ((s = attr_axis(c, "seq_axis", 1, nd, &seq)) != RLYRT_OK) return s;
  if ((s = attr_axis(c, "batch_axis", 0, nd, &batch)) != RLYRT_OK) return s;
  if (lens->dl.ndim != 1 || lens->dl.shape[0] != data->dl.shape[batch])
    return rk_fail(c, RLYRT_E_ARG, "seq_lengths must have one entry per batch entry");
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, nd, data->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), oc[MAXR], dim = data->dl.shape[seq];
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, data->dl.shape, nd, oc);
    int64_t len = index_at(lens, oc[batch]), i = oc[seq];
    if (len <= 1 || len <= i) oc[seq] = i;
    else if (len > dim) oc[seq] = dim - 1 - i;
    else oc[seq] = len - 1 - i;
    copy_elem(out, o, data, rk_ravel(oc, data->dl.shape, nd));
  }
  return finish(c, out);
}

/* {==== layout_transform ====} */

/* A layout such as "NCHW16c": axes in order, factor 0 for a primal
** (upper-case) axis, the split factor for a sub-axis (lower-case). */
typedef struct Layout {
  int n;
  char axis[MAXR];
  int64_t factor[MAXR];
} Layout;

static rlyrt_status parse_layout(const rlyrt_kernel_call *c, const char *s, Layout *l) {
  l->n = 0;
  int64_t factor = 0;
  for (const char *p = s; *p; p++) {
    if (*p >= '0' && *p <= '9') {
      if (factor > 100000000) return rk_fail(c, RLYRT_E_ARG, "layout \"%s\": the factor is too large", s);
      factor = factor * 10 + (*p - '0');
      continue;
    }
    bool upper = *p >= 'A' && *p <= 'Z', lower = *p >= 'a' && *p <= 'z';
    if ((!upper && !lower) || (upper && factor) || (lower && !factor) || l->n == MAXR)
      return rk_fail(c, RLYRT_E_ARG, "invalid layout \"%s\"", s);
    for (int j = 0; j < l->n; j++)
      if (l->axis[j] == *p) return rk_fail(c, RLYRT_E_ARG, "layout \"%s\": duplicate axis %c", s, *p);
    l->axis[l->n] = *p;
    l->factor[l->n++] = factor;
    factor = 0;
  }
  if (factor || l->n == 0) return rk_fail(c, RLYRT_E_ARG, "invalid layout \"%s\"", s);
  return RLYRT_OK;
}

static int layout_find(const Layout *l, char a) {
  for (int i = 0; i < l->n; i++)
    if (l->axis[i] == a) return i;
  return -1;
}

/* The factor of primal axis P's sub-axis in l (1 when it has none). */
static int64_t sub_factor(const Layout *l, char primal) {
  int i = layout_find(l, (char)(primal - 'A' + 'a'));
  return i >= 0 ? l->factor[i] : 1;
}

/* layout_transform: each primal axis P has a logical index (its primal
** coordinate times its sub-axis factor, plus the sub-axis coordinate);
** the result element at a dst coordinate is the src element with the same
** logical indices (zero if that lies outside src). */
rlyrt_status rk_transform_layout_transform(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  Layout src, dst;
  if ((s = parse_layout(c, rk_attr_str(c, "src_layout"), &src)) != RLYRT_OK ||
      (s = parse_layout(c, rk_attr_str(c, "dst_layout"), &dst)) != RLYRT_OK)
    return s;
  if (src.n != data->dl.ndim)
    return rk_fail(c, RLYRT_E_ARG, "data's rank %d differs from src_layout's", (int)data->dl.ndim);
  for (int pass = 0; pass < 2; pass++) {
    const Layout *a = pass ? &dst : &src, *b = pass ? &src : &dst;
    for (int i = 0; i < a->n; i++) {
      char primal = a->factor[i] ? (char)(a->axis[i] - 'a' + 'A') : a->axis[i];
      if (layout_find(a, primal) < 0 || layout_find(b, primal) < 0)
        return rk_fail(c, RLYRT_E_ARG, "cannot convert layout \"%s\" to \"%s\"", rk_attr_str(c, "src_layout"),
                       rk_attr_str(c, "dst_layout"));
    }
  }
  for (int i = 0; i < src.n; i++)
    if (src.factor[i] && data->dl.shape[i] != src.factor[i])
      return rk_fail(c, RLYRT_E_ARG, "dimension %d of data is %lld, but src_layout gives its sub-axis the factor %lld",
                     i, (long long)data->dl.shape[i], (long long)src.factor[i]);
  int64_t os[MAXR], oc[MAXR], ic[MAXR];
  for (int i = 0; i < dst.n; i++) {
    if (dst.factor[i]) {
      os[i] = dst.factor[i];
      continue;
    }
    char p = dst.axis[i];
    int64_t ext = data->dl.shape[layout_find(&src, p)] * sub_factor(&src, p), f = sub_factor(&dst, p);
    if (ext % f != 0)
      return rk_fail(c, RLYRT_E_ARG, "axis %c has %lld elements, not divisible by %lld", p, (long long)ext,
                     (long long)f);
    os[i] = ext / f;
  }
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, data->dl.dtype, dst.n, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, dst.n, oc);
    bool inside = true;
    for (int i = 0; i < src.n; i++) {
      if (src.factor[i]) continue;
      char p = src.axis[i], sub = (char)(p - 'A' + 'a');
      int dp = layout_find(&dst, p), ds = layout_find(&dst, sub), ss = layout_find(&src, sub);
      int64_t logical = oc[dp] * sub_factor(&dst, p) + (ds >= 0 ? oc[ds] : 0), f = sub_factor(&src, p);
      ic[i] = logical / f;
      if (ss >= 0) ic[ss] = logical % f;
      inside = inside && ic[i] < data->dl.shape[i];
    }
    if (inside) copy_elem(out, o, data, rk_ravel(ic, data->dl.shape, src.n));
  }
  return finish(c, out);
}

/* {==== one_hot, full, zeros, ones, arange, shape_of ====} */

/* one_hot (depth attribute), dyn.one_hot (depth operand): a depth dim at
** axis (-1: last); on_value where indices equals the position, off_value
** elsewhere (an index outside 0..depth-1 matches nothing). */
rlyrt_status rk_transform_one_hot(rlyrt_kernel_call *c) {
  rlyrt_tensor *ind, *on, *off;
  rlyrt_status s;
  if ((s = index_arg(c, 0, "indices", &ind)) != RLYRT_OK || (s = tensor_arg(c, 1, &on)) != RLYRT_OK ||
      (s = tensor_arg(c, 2, &off)) != RLYRT_OK)
    return s;
  if (on->dl.ndim != 0 || off->dl.ndim != 0) return rk_fail(c, RLYRT_E_ARG, "on_value and off_value must be scalars");
  bool dyn = op_is(c, "dyn.one_hot");
  int64_t depth = rk_attr_int(c, "depth", 1), axis = rk_attr_int(c, "axis", -1);
  if (dyn && (s = int_scalar(c, 3, "depth", &depth)) != RLYRT_OK) return s;
  if (depth <= 0)
    return rk_fail(c, dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG, "depth must be positive, found %lld", (long long)depth);
  int nd = ind->dl.ndim;
  if (axis < -1 || axis > nd) return bad_axis(c, RLYRT_E_ARG, "axis", axis, nd + 1);
  if (nd + 1 > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result's rank is above %d", MAXR);
  int64_t at = axis == -1 ? nd : axis, os[MAXR], oc[MAXR], ic[MAXR];
  for (int i = 0, k = 0; i <= nd; i++) os[i] = i == at ? depth : ind->dl.shape[k++];
  if (dyn && (s = check_dyn_shape(c, "the one-hot shape", os, nd + 1)) != RLYRT_OK) return s;
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, c->nouts ? c->outs[0].dtype : on->dl.dtype, nd + 1, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, nd + 1, oc);
    for (int i = 0, k = 0; i <= nd; i++)
      if (i != at) ic[k++] = oc[i];
    bool hit = index_at(ind, rk_ravel(ic, ind->dl.shape, nd)) == oc[at];
    convert_elem(out, o, hit ? on : off, 0);
  }
  return finish(c, out);
}

/* full (shape attribute), dyn.full (shape operand): fill_value converted
** to the result's dtype everywhere. */
rlyrt_status rk_transform_full(rlyrt_kernel_call *c) {
  rlyrt_tensor *fill;
  rlyrt_status s = tensor_arg(c, 0, &fill);
  if (s != RLYRT_OK) return s;
  if (fill->dl.ndim != 0) return rk_fail(c, RLYRT_E_ARG, "fill_value must be a scalar");
  int64_t os[MAXR];
  int no = 0;
  if ((s = shape_from(c, op_is(c, "dyn.full"), 1, "shape", os, &no)) != RLYRT_OK) return s;
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, c->nouts ? c->outs[0].dtype : fill->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; o < n; o++) convert_elem(out, o, fill, 0);
  return finish(c, out);
}

/* zeros, ones (shape attribute), dyn.zeros, dyn.ones (shape operand). */
rlyrt_status rk_transform_init(rlyrt_kernel_call *c) {
  bool dyn = strncmp(c->op, "dyn.", 4) == 0, one = strcmp(c->op + (dyn ? 4 : 0), "ones") == 0;
  int64_t os[MAXR];
  int no = 0;
  rlyrt_status s = shape_from(c, dyn, 0, "shape", os, &no);
  if (s != RLYRT_OK) return s;
  if (c->nouts < 1) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for the result");
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, c->outs[0].dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out);
  for (int64_t o = 0; one && o < n; o++) rlyrt_set_i64(out, o, 1);
  return finish(c, out);
}

/* arange: start, start + step, ... below stop (above it for a negative
** step): ceil((stop - start) / step) values (none if that is <= 0). Floats
** are computed in double, integers exactly. */
rlyrt_status rk_transform_arange(rlyrt_kernel_call *c) {
  rlyrt_tensor *a[3];
  rlyrt_status s;
  for (int i = 0; i < 3; i++) {
    if ((s = tensor_arg(c, i, &a[i])) != RLYRT_OK) return s;
    if (a[i]->dl.ndim != 0) return rk_fail(c, RLYRT_E_ARG, "argument %d must be a scalar", i + 1);
  }
  if (c->nouts < 1) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for the result");
  DLDataType dt = c->outs[0].dtype;
  int64_t len;
  bool is_float = rlyrt_dtype_is_float(dt);
  double fstart = 0, fstep = 0;
  int64_t istart = 0, istep = 0;
  if (is_float) {
    fstart = rlyrt_get_f64(a[0], 0);
    fstep = rlyrt_get_f64(a[2], 0);
    double stop = rlyrt_get_f64(a[1], 0);
    if (fstep == 0) return rk_fail(c, RLYRT_E_RUNTIME, "step is 0");
    double l = ceil((stop - fstart) / fstep);
    if (isnan(l)) return rk_fail(c, RLYRT_E_RUNTIME, "the length is not a number");
    if (l > (double)MAX_DYN_ELEMS) return rk_fail(c, RLYRT_E_RUNTIME, "the length %g is too large", l);
    len = l > 0 ? (int64_t)l : 0;
  } else {
    istart = rlyrt_get_i64(a[0], 0);
    istep = rlyrt_get_i64(a[2], 0);
    int64_t stop = rlyrt_get_i64(a[1], 0);
    if (istep == 0) return rk_fail(c, RLYRT_E_RUNTIME, "step is 0");
    /* The distance and the step as magnitudes, in unsigned arithmetic. */
    bool up = istep > 0;
    uint64_t dist = up ? (stop > istart ? (uint64_t)stop - (uint64_t)istart : 0)
                       : (istart > stop ? (uint64_t)istart - (uint64_t)stop : 0);
    uint64_t mag = up ? (uint64_t)istep : (uint64_t)0 - (uint64_t)istep;
    uint64_t l = dist / mag + (dist % mag != 0);
    if (l > (uint64_t)MAX_DYN_ELEMS)
      return rk_fail(c, RLYRT_E_RUNTIME, "the length %llu is too large", (unsigned long long)l);
    len = (int64_t)l;
  }
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, dt, 1, &len, &out)) != RLYRT_OK) return s;
  for (int64_t i = 0; i < len; i++) {
    if (is_float) rlyrt_set_f64(out, i, fstart + (double)i * fstep);
    else rlyrt_set_i64(out, i, (int64_t)((uint64_t)istart + (uint64_t)i * (uint64_t)istep));
  }
  return finish(c, out);
}

/* shape_of: data's shape as a 1-D tensor (a 0-d input gives a 0-d result,
** holding 0, as the type relation keeps TVM's rank-0 shape). */
rlyrt_status rk_transform_shape_of(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  if (c->nouts < 1) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for the result");
  int64_t nd = data->dl.ndim;
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, c->outs[0].dtype, nd ? 1 : 0, &nd, &out)) != RLYRT_OK) return s;
  for (int64_t i = 0; i < nd; i++) rlyrt_set_i64(out, i, data->dl.shape[i]);
  return finish(c, out);
}

/* {==== cumsum, cumprod ====} */

/* out[di] = out[ai] + out[bi] (or *), in out's dtype. */
static void combine(rlyrt_tensor *out, int64_t di, int64_t ai, int64_t bi, bool prod) {
  if (rlyrt_dtype_is_float(out->dl.dtype)) {
    double a = rlyrt_get_f64(out, ai), b = rlyrt_get_f64(out, bi);
    rlyrt_set_f64(out, di, prod ? a * b : a + b);
  } else {
    uint64_t a = (uint64_t)rlyrt_get_i64(out, ai), b = (uint64_t)rlyrt_get_i64(out, bi);
    rlyrt_set_i64(out, di, (int64_t)(prod ? a * b : a + b));
  }
}

/* cumsum, cumprod: data converted to the result's dtype, then scanned
** along axis (None: the flattened data); each partial result is rounded to
** the dtype, as TVM accumulates in it. exclusive shifts the scan by one
** (starting from 0 or 1). */
rlyrt_status rk_transform_scan(rlyrt_kernel_call *c) {
  rlyrt_tensor *data;
  rlyrt_status s = tensor_arg(c, 0, &data);
  if (s != RLYRT_OK) return s;
  if (c->nouts < 1) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for the result");
  bool prod = op_is(c, "cumprod"), excl = rk_attr_int(c, "exclusive", 0) != 0;
  int nd = data->dl.ndim;
  int64_t flat = rlyrt_tensor_numel(data), outer, len, inner;
  rlyrt_tensor *out;
  if (rk_attr_is_none(c, "axis")) {
    s = alloc_result(c, 0, c->outs[0].dtype, 1, &flat, &out);
    outer = inner = 1;
    len = flat;
  } else {
    int64_t axis = 0;
    if ((s = attr_axis(c, "axis", 0, nd, &axis)) != RLYRT_OK) return s;
    s = alloc_result(c, 0, c->outs[0].dtype, nd, data->dl.shape, &out);
    outer = shape_numel(data->dl.shape, (int)axis);
    len = data->dl.shape[axis];
    inner = shape_numel(data->dl.shape + axis + 1, nd - (int)axis - 1);
  }
  if (s != RLYRT_OK) return s;
  for (int64_t i = 0; i < flat; i++) convert_elem(out, i, data, i);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * len * inner + in;
      for (int64_t j = 1; j < len; j++) combine(out, base + j * inner, base + (j - 1) * inner, base + j * inner, prod);
      if (excl && len > 0) {
        for (int64_t j = len - 1; j > 0; j--) copy_elem(out, base + j * inner, out, base + (j - 1) * inner);
        rlyrt_set_i64(out, base, prod ? 1 : 0);
      }
    }
  return finish(c, out);
}

/* {==== einsum ====} */

/* Label ids: 'a'..'z' are 0..25, 'A'..'Z' 26..51, and the dims under an
** ellipsis 52.. (right-aligned across operands, so they broadcast). */
#define NLETTERS 52
#define NLABELS (NLETTERS + MAXR)
#define MAXOPS 32

static int letter_id(char ch) {
  return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? ch - 'A' + 26 : -1;
}

/* einsum: one tuple argument; equation as NumPy writes it (subscripts of
** letters, ',' between operands, optional "->output", "..." once per
** subscript; without "->" the output is the ellipsis dims, then the labels
** used exactly once in ASCII order). A label's extents broadcast (equal,
** or 1). The result is computed by loops over every label: for each output
** coordinate, the sum over the other labels of the product of the operand
** elements (a repeated label in one operand takes its diagonal). */
rlyrt_status rk_transform_einsum(rlyrt_kernel_call *c) {
  rlyrt_tuple *t;
  rlyrt_status s = tuple_arg(c, 0, &t);
  if (s != RLYRT_OK) return s;
  int nops = t->n;
  if (nops > MAXOPS) return rk_fail(c, RLYRT_E_UNSUPPORTED, "einsum of %d operands (at most %d)", nops, MAXOPS);
  for (int k = 1; k < nops; k++)
    if (!rlyrt_dtype_eq(field(t, k)->dl.dtype, field(t, 0)->dl.dtype))
      return rk_fail(c, RLYRT_E_ARG, "fields 0 and %d have different dtypes", k);
  const char *eq = rk_attr_str(c, "equation");
  /* Parse the subscripts: sub[k] holds labels (letters, or '.' for the
  ** ellipsis); subscript nops is the output. */
  char sub[MAXOPS + 1][MAXR + 1];
  int nsub[MAXOPS + 1] = {0}, cur = 0;
  bool arrow = false;
  for (const char *p = eq; *p; p++) {
    if (*p == ' ') continue;
    if (*p == ',' && !arrow) {
      if (++cur >= nops) return rk_fail(c, RLYRT_E_ARG, "equation \"%s\" has more operands than the tuple", eq);
    } else if (*p == '-' && p[1] == '>' && !arrow) {
      arrow = true;
      p++;
      if (cur != nops - 1) return rk_fail(c, RLYRT_E_ARG, "equation \"%s\" has fewer operands than the tuple", eq);
      cur = nops;
    } else if ((*p == '.' && p[1] == '.' && p[2] == '.') || letter_id(*p) >= 0) {
      if (nsub[cur] >= MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "equation \"%s\": too many labels", eq);
      sub[cur][nsub[cur]++] = *p;
      if (*p == '.') p += 2;
    } else {
      return rk_fail(c, RLYRT_E_ARG, "equation \"%s\": unexpected '%c'", eq, *p);
    }
  }
  if (!arrow && cur != nops - 1)
    return rk_fail(c, RLYRT_E_ARG, "equation \"%s\" has fewer operands than the tuple", eq);
  /* Each operand dim's label id, and the extents. */
  int dimlabel[MAXOPS][MAXR], nell = 0, count[NLETTERS] = {0};
  bool any_ell = false;
  for (int k = 0; k < nops; k++) {
    int nlab = 0, rk = field(t, k)->dl.ndim;
    bool ell = false;
    for (int j = 0; j < nsub[k]; j++) {
      if (sub[k][j] == '.') {
        if (ell) return rk_fail(c, RLYRT_E_ARG, "equation \"%s\": two ellipses in one subscript", eq);
        ell = true;
      } else {
        nlab++;
        count[letter_id(sub[k][j])]++;
      }
    }
    if (ell ? nlab > rk : nlab != rk)
      return rk_fail(c, RLYRT_E_ARG, "equation \"%s\": operand %d has %d labels for rank %d", eq, k, nlab, rk);
    if (ell && rk - nlab > nell) nell = rk - nlab;
    any_ell = any_ell || ell;
  }
  int64_t extent[NLABELS];
  bool used[NLABELS] = {false};
  for (int k = 0; k < nops; k++) {
    const rlyrt_tensor *f = field(t, k);
    int ne = f->dl.ndim - (nsub[k] - (memchr(sub[k], '.', (size_t)nsub[k]) ? 1 : 0)), d = 0;
    for (int j = 0; j < nsub[k]; j++) {
      int ids[MAXR], nids = 0;
      if (sub[k][j] == '.')
        for (int e = 0; e < ne; e++) ids[nids++] = NLETTERS + nell - ne + e;
      else ids[nids++] = letter_id(sub[k][j]);
      for (int e = 0; e < nids; e++, d++) {
        int id = ids[e];
        int64_t x = f->dl.shape[d];
        dimlabel[k][d] = id;
        if (!used[id] || extent[id] == 1) extent[id] = x;
        else if (x != 1 && x != extent[id])
          return rk_fail(c, RLYRT_E_ARG, "equation \"%s\": a label has sizes %lld and %lld", eq, (long long)extent[id],
                         (long long)x);
        used[id] = true;
      }
    }
  }
  /* The output labels. */
  int outid[NLABELS], nout = 0;
  bool in_out[NLABELS] = {false};
  if (arrow) {
    for (int j = 0; j < nsub[nops]; j++) {
      char ch = sub[nops][j];
      if (ch == '.') {
        for (int e = 0; e < nell; e++) outid[nout++] = NLETTERS + e;
        continue;
      }
      int id = letter_id(ch);
      if (!used[id] || in_out[id])
        return rk_fail(c, RLYRT_E_ARG, "equation \"%s\": output label '%c' is not in the inputs or repeated", eq, ch);
      in_out[id] = true;
      outid[nout++] = id;
    }
  } else {
    for (int e = 0; any_ell && e < nell; e++) outid[nout++] = NLETTERS + e;
    for (int ch = 'A'; ch <= 'z'; ch++)
      if (letter_id((char)ch) >= 0 && count[letter_id((char)ch)] == 1) outid[nout++] = letter_id((char)ch);
  }
  if (nout > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "the result's rank is above %d", MAXR);
  for (int j = 0; j < nout; j++) in_out[outid[j]] = true;
  int sumid[NLABELS], nsum = 0;
  for (int id = 0; id < NLABELS; id++)
    if (used[id] && !in_out[id]) sumid[nsum++] = id;
  int64_t os[MAXR], sumshape[NLABELS], val[NLABELS] = {0}, oc[MAXR], sc[NLABELS], fc[MAXR];
  for (int j = 0; j < nout; j++) os[j] = extent[outid[j]];
  for (int j = 0; j < nsum; j++) sumshape[j] = extent[sumid[j]];
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, field(t, 0)->dl.dtype, nout, os, &out)) != RLYRT_OK) return s;
  bool is_float = rlyrt_dtype_is_float(out->dl.dtype);
  int64_t n = rlyrt_tensor_numel(out), nterms = shape_numel(sumshape, nsum);
  for (int64_t o = 0; o < n; o++) {
    rk_unravel(o, os, nout, oc);
    for (int j = 0; j < nout; j++) val[outid[j]] = oc[j];
    double fsum = 0;
    uint64_t isum = 0;
    for (int64_t term = 0; term < nterms; term++) {
      rk_unravel(term, sumshape, nsum, sc);
      for (int j = 0; j < nsum; j++) val[sumid[j]] = sc[j];
      double fprod = 1;
      uint64_t iprod = 1;
      for (int k = 0; k < nops; k++) {
        const rlyrt_tensor *f = field(t, k);
        for (int d = 0; d < f->dl.ndim; d++) fc[d] = f->dl.shape[d] == 1 ? 0 : val[dimlabel[k][d]];
        int64_t fi = rk_ravel(fc, f->dl.shape, f->dl.ndim);
        if (is_float) fprod *= rlyrt_get_f64(f, fi);
        else iprod *= (uint64_t)rlyrt_get_i64(f, fi);
      }
      fsum += fprod;
      isum += iprod;
    }
    if (is_float) rlyrt_set_f64(out, o, fsum);
    else rlyrt_set_i64(out, o, (int64_t)isum);
  }
  return finish(c, out);
}

/* {==== meshgrid, sparse_to_dense ====} */

/* meshgrid: one tuple of scalars and 1-D tensors; grid i varies along dim
** i ("ij"), or with the first two dims swapped ("xy", NumPy's default). */
rlyrt_status rk_transform_meshgrid(rlyrt_kernel_call *c) {
  rlyrt_tuple *t;
  rlyrt_status s = tuple_arg(c, 0, &t);
  if (s != RLYRT_OK) return s;
  int n = t->n;
  const char *ix = rk_attr_str(c, "indexing");
  bool xy = strcmp(ix, "xy") == 0;
  if (!xy && *ix && strcmp(ix, "ij") != 0)
    return rk_fail(c, RLYRT_E_ARG, "indexing \"%s\" is not \"ij\" or \"xy\"", ix);
  if (n > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "meshgrid of %d tensors", n);
  if (n != c->nouts) return rk_fail(c, RLYRT_E_ARG, "%d grids, but the result's type has %d fields", n, (int)c->nouts);
  int64_t gs[MAXR], oc[MAXR];
  for (int i = 0; i < n; i++) {
    const rlyrt_tensor *f = field(t, i);
    if (f->dl.ndim > 1 || !rlyrt_dtype_eq(f->dl.dtype, field(t, 0)->dl.dtype))
      return rk_fail(c, RLYRT_E_ARG, "field %d must be a scalar or a 1-D tensor of field 0's dtype", i);
    gs[i] = f->dl.ndim ? f->dl.shape[0] : 1;
  }
  bool swap = xy && n >= 2;
  if (swap) {
    int64_t tmp = gs[0];
    gs[0] = gs[1];
    gs[1] = tmp;
  }
  rlyrt_tensor *outs[MAXR];
  for (int i = 0; i < n; i++) {
    const rlyrt_tensor *f = field(t, i);
    if ((s = alloc_result(c, i, f->dl.dtype, n, gs, &outs[i])) != RLYRT_OK) {
      for (int j = 0; j < i; j++) rlyrt_release(&outs[j]->obj);
      return s;
    }
    int dim = swap && i < 2 ? 1 - i : i;
    int64_t total = rlyrt_tensor_numel(outs[i]);
    for (int64_t o = 0; o < total; o++) {
      rk_unravel(o, gs, n, oc);
      copy_elem(outs[i], o, f, f->dl.ndim ? oc[dim] : 0);
    }
  }
  return rk_set_result(c, outs, n);
}

/* sparse_to_dense (output_shape attribute), dyn.sparse_to_dense
** (output_shape operand): default_value everywhere, then for each j in
** order the positions whose leading coordinates equal sparse_indices[j]
** (a 0-d or 1-D index tensor gives one coordinate per j; a 2-D one a row)
** take sparse_values[j] (the scalar, for 0-d values). As in TVM, an index
** outside the output matches nothing, and a later j wins. */
rlyrt_status rk_transform_sparse_to_dense(rlyrt_kernel_call *c) {
  rlyrt_tensor *ind, *vals, *dflt;
  rlyrt_status s;
  if ((s = index_arg(c, 0, "sparse_indices", &ind)) != RLYRT_OK || (s = tensor_arg(c, 1, &vals)) != RLYRT_OK ||
      (s = tensor_arg(c, 2, &dflt)) != RLYRT_OK)
    return s;
  bool dyn = op_is(c, "dyn.sparse_to_dense");
  int64_t os[MAXR];
  int no = 0;
  if ((s = shape_from(c, dyn, 3, "output_shape", os, &no)) != RLYRT_OK) return s;
  int ni = ind->dl.ndim;
  if (ni > 2 || vals->dl.ndim > 1 || dflt->dl.ndim != 0 || !rlyrt_dtype_eq(vals->dl.dtype, dflt->dl.dtype))
    return rk_fail(c, RLYRT_E_ARG,
                   "expected indices of rank <= 2, values of rank <= 1 and a scalar default of their dtype");
  int64_t count = ni == 0 ? 1 : ind->dl.shape[0], width = ni == 2 ? ind->dl.shape[1] : 1;
  if (vals->dl.ndim == 1 && vals->dl.shape[0] < count)
    return rk_fail(c, RLYRT_E_ARG, "%lld indices but only %lld values", (long long)count, (long long)vals->dl.shape[0]);
  if (width > no)
    return rk_fail(c, dyn ? RLYRT_E_RUNTIME : RLYRT_E_ARG, "indices of %lld coordinates for an output of rank %d",
                   (long long)width, no);
  rlyrt_tensor *out;
  if ((s = alloc_result(c, 0, vals->dl.dtype, no, os, &out)) != RLYRT_OK) return s;
  int64_t n = rlyrt_tensor_numel(out), inner = shape_numel(os + width, no - (int)width), pc[MAXR];
  for (int64_t o = 0; o < n; o++) copy_elem(out, o, dflt, 0);
  for (int64_t j = 0; j < count; j++) {
    bool inside = true;
    for (int64_t k = 0; k < width; k++) {
      pc[k] = index_at(ind, j * width + k);
      inside = inside && pc[k] >= 0 && pc[k] < os[k];
    }
    if (!inside) continue;
    int64_t base = rk_ravel(pc, os, (int)width) * inner;
    for (int64_t x = 0; x < inner; x++) copy_elem(out, base + x, vals, vals->dl.ndim ? j : 0);
  }
  return finish(c, out);
}
