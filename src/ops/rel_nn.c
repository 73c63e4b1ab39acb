/* rel_nn.c: type relations of the nn family: convolutions and their
** transposes, dense/matmul/batch_matmul, bias_add and prelu, the
** normalisations, softmax, dropout, every pooling op, pad, batch_flatten,
** upsampling, image.resize*, depth_to_space/space_to_depth and dilate,
** with the dyn.* variants that take sizes as tensor arguments.
**
** Input: the argument types and the call's attributes (TVM v0.16 semantics,
** spec sections 9.2 and 11). Output: the result type, or one error naming
** the op and quoting expected next to found.
**
** Unknown values: a `?` dimension, or an attribute item that is not an
** integer literal (None inside an array, a meta[tir.Var] reference), is
** held as UNK while computing; every result that depends on one is `?`,
** and no check ever fails on one.
**
** Layouts: convolutions, upsampling, resize and depth_to_space accept any
** permutation of their primal axes (NCHW, NHWC, HWIO, OHWI, ...); split
** layouts (NCHW4c, OIHW16o) are reported as unsupported. Pools only need
** their spatial axes unsplit, as in TVM, so NCHW16c pools fine.
**
** Where TVM's own relation is inconsistent we follow the op's computation:
** grouped conv1d checks weight input channels against C/groups (TVM's
** weight-only path compares with C), and a grouped transposed convolution
** without `channels` has weight.O*groups output channels (TVM's relation
** says weight.O, which its kernels do not produce). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops/rel.h"

#define REL(id, fn) RelResult fn(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out);
#include "ops/rel_nn.def"
#undef REL

/* {==== Unknown-aware integer arithmetic ====} */

#define UNK INT64_MIN /* an unknown dimension or attribute value */

static bool kn(int64_t x) { return x != UNK; }
static int64_t d_add(int64_t a, int64_t b) { return kn(a) && kn(b) ? a + b : UNK; }
static int64_t d_sub(int64_t a, int64_t b) { return kn(a) && kn(b) ? a - b : UNK; }
static int64_t d_mul(int64_t a, int64_t b) { return kn(a) && kn(b) ? a * b : UNK; }

/* Floor division by b > 0. */
static int64_t d_fdiv(int64_t a, int64_t b) {
  if (!kn(a) || !kn(b) || b <= 0) return UNK;
  int64_t q = a / b;
  if ((a % b) != 0 && a < 0) q--;
  return q;
}

/* The effective extent of a kernel of size k dilated by d. */
static int64_t dilated(int64_t k, int64_t d) { return d_add(d_mul(d_sub(k, 1), d), 1); }

/* {==== Shapes and messages ====} */

enum { MAXSP = 3, MAXR = MAXSP + 2 }; /* spatial dims and rank of conv/pool/resize */

/* Room for n dims in the module's arena (small, and freed with it). */
static int64_t *scratch(RelCtx *rc, int n) { return ARENA_ARRAY(rc->m->arena, int64_t, n > 0 ? n : 1); }

static int rank_of(const Type *t) { return t->u.tensor.ndim; }
static DType dtype_of(const Type *t) { return t->u.tensor.dtype; }

/* Dim i of tensor type t, `?` as UNK. */
static int64_t dim_of(const Type *t, int i) {
  int64_t d = t->u.tensor.shape[i];
  return d == RLY_DIM_ANY ? UNK : d;
}

static void dims_of(const Type *t, int64_t *out) {
  for (int i = 0; i < rank_of(t); i++) out[i] = dim_of(t, i);
}

/* A tensor type of shape (UNK becomes `?`; shape is modified). */
static Type *mk_tensor(RelCtx *rc, DType dt, int ndim, int64_t *shape) {
  for (int i = 0; i < ndim; i++)
    if (!kn(shape[i]) || shape[i] < 0) shape[i] = RLY_DIM_ANY;
  return rel_tensor(rc, dt, ndim, shape);
}

/* Formats values the way rel_shape_str does: "(1, 3)", "(4,)", "(?, 2)". */
static const char *vals_str(const int64_t *v, int n, char *buf, size_t size) {
  size_t at = 0;
  buf[0] = 0;
#define PUT(...) (at < size ? (void)(at += (size_t)snprintf(buf + at, size - at, __VA_ARGS__)) : (void)0)
  PUT("(");
  for (int i = 0; i < n; i++) {
    if (i) PUT(", ");
    if (kn(v[i])) PUT("%lld", (long long)v[i]);
    else PUT("?");
  }
  if (n == 1) PUT(",");
  PUT(")");
#undef PUT
  return buf;
}

static const char *shape_str(const Type *t, char *buf, size_t size) {
  return rel_shape_str(t->u.tensor.shape, rank_of(t), buf, size);
}

static const char *dt_str(DType dt, char buf[32]) { return dtype_name(dt, buf); }

/* "expects N arguments" guard: the relations index args by position. */
static bool bad_nargs(RelCtx *rc, int nargs) {
  if (nargs == rc->op->nargs) return false;
  rel_error(rc, "expects %d argument%s, found %d", rc->op->nargs, rc->op->nargs == 1 ? "" : "s", nargs);
  return true;
}

/* {==== Attributes ====} */

/* An integer attribute: its value, UNK when symbolic, and *none when None. */
static int64_t attr_int(const Attrs *attrs, const char *field, bool *none) {
  const AttrValue *v = rel_attr(attrs, field);
  if (none) *none = v->kind == AV_NONE;
  if (v->kind == AV_INT) return v->u.i.v;
  if (v->kind == AV_BOOL) return v->u.b;
  return UNK;
}

/* An integer-array attribute: the number of items (only the first max are
** stored), -1 when None. Items that are not integer literals are UNK. */
static int attr_ints(const Attrs *attrs, const char *field, int64_t *out, int max) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_NONE) return -1;
  if (v->kind != AV_ARRAY) {
    if (max > 0) out[0] = v->kind == AV_INT ? v->u.i.v : UNK;
    return 1;
  }
  for (int i = 0; i < v->u.arr.n && i < max; i++) {
    const AttrValue *it = v->u.arr.items[i];
    out[i] = it->kind == AV_INT ? it->u.i.v : UNK;
  }
  return v->u.arr.n;
}

/* The string of a string attribute (len set). */
static const char *attr_str(const Attrs *attrs, const char *field, size_t *len) {
  return rel_attr_str(attrs, field, len);
}

/* Reads field as n values, one value standing for all n. Reports a wrong
** count or a value below min. */
static bool attr_per_dim(RelCtx *rc, const Attrs *attrs, const char *field, int n, int64_t min, int64_t *out) {
  int64_t v[2 * MAXSP];
  int cnt = attr_ints(attrs, field, v, 2 * MAXSP);
  if (cnt != 1 && cnt != n) {
    if (cnt < 0) rel_error(rc, "attribute '%s' is required", field);
    else if (n == 1) rel_error(rc, "attribute '%s' has %d values, expected 1", field, cnt);
    else rel_error(rc, "attribute '%s' has %d values, expected 1 or %d", field, cnt, n);
    return false;
  }
  for (int i = 0; i < n; i++) out[i] = v[cnt == 1 ? 0 : i];
  for (int i = 0; i < n; i++) {
    if (kn(out[i]) && out[i] < min) {
      char b[128];
      rel_error(rc, "attribute '%s' must be at least %lld, found %s", field, (long long)min,
                vals_str(v, cnt, b, sizeof b));
      return false;
    }
  }
  return true;
}

/* Reads a padding attribute for n spatial dims: 1 value (all sides), n
** values (each dim, both sides) or 2n values (all befores, then all
** afters: (top, left, bottom, right) in 2-D). Negative padding is an error. */
static bool attr_padding(RelCtx *rc, const Attrs *attrs, const char *field, int n, int64_t *before, int64_t *after) {
  int64_t v[2 * MAXSP];
  int cnt = attr_ints(attrs, field, v, 2 * MAXSP);
  if (cnt != 1 && cnt != n && cnt != 2 * n) {
    if (cnt < 0) rel_error(rc, "attribute '%s' is required", field);
    else if (n == 1) rel_error(rc, "attribute '%s' has %d values, expected 1 or 2", field, cnt);
    else rel_error(rc, "attribute '%s' has %d values, expected 1, %d or %d", field, cnt, n, 2 * n);
    return false;
  }
  for (int i = 0; i < cnt; i++) {
    if (kn(v[i]) && v[i] < 0) {
      char b[128];
      rel_error(rc, "attribute '%s' must not be negative, found %s", field, vals_str(v, cnt, b, sizeof b));
      return false;
    }
  }
  for (int i = 0; i < n; i++) {
    if (cnt == 1) before[i] = after[i] = v[0];
    else if (cnt == n) before[i] = after[i] = v[i];
    else before[i] = v[i], after[i] = v[n + i];
  }
  return true;
}

/* The out_dtype attribute, or dt when it is "". */
static DType out_dtype(const Attrs *attrs, DType dt) {
  DType o;
  return rel_attr_dtype(attrs, "out_dtype", &o) ? o : dt;
}

/* {==== Layouts ====} */

/* s (len bytes) is a permutation of the letters of primal ("NCHW"): sets
** pos[k] to the index in s of primal[k]. */
static bool layout_perm(const char *s, size_t len, const char *primal, int *pos) {
  size_t n = strlen(primal);
  if (len != n) return false;
  for (size_t k = 0; k < n; k++) {
    const char *p = memchr(s, primal[k], len);
    if (!p || memchr(p + 1, primal[k], len - (size_t)(p - s) - 1)) return false;
    pos[k] = (int)(p - s);
  }
  return true;
}

/* Reads layout attribute field as a permutation of primal. An empty string
** means the layout of dflt_pos when that is given (out_layout). */
static bool attr_layout(RelCtx *rc, const Attrs *attrs, const char *field, const char *primal, const int *dflt_pos,
                        int *pos) {
  size_t len;
  const char *s = attr_str(attrs, field, &len);
  if (len == 0 && dflt_pos) {
    memcpy(pos, dflt_pos, sizeof(int) * strlen(primal));
    return true;
  }
  if (layout_perm(s, len, primal, pos)) return true;
  rel_error(rc, "unsupported %s '%.*s' (expected a permutation of %s)", field, (int)len, s, primal);
  return false;
}

/* Parses a layout that may split axes (NCHW16c): upper-case letters are
** primal axes, a factor followed by a lower-case letter is a split axis
** whose primal axis must be present. Finds each letter of need as an
** unsplit primal axis (pos[k]); *ndim is the number of axes. */
static bool layout_find(const char *s, size_t len, const char *need, int *pos, int *ndim) {
  bool upper[26] = {false}, lower[26] = {false};
  int idx[26], n = 0;
  for (size_t i = 0; i < len;) {
    char c = s[i];
    if (c >= 'A' && c <= 'Z') {
      if (upper[c - 'A']) return false;
      upper[c - 'A'] = true;
      idx[c - 'A'] = n++;
      i++;
    } else if (c >= '1' && c <= '9') {
      while (i < len && s[i] >= '0' && s[i] <= '9') i++;
      if (i == len || s[i] < 'a' || s[i] > 'z' || lower[s[i] - 'a']) return false;
      lower[s[i] - 'a'] = true;
      n++;
      i++;
    } else {
      return false;
    }
  }
  for (int k = 0; k < 26; k++)
    if (lower[k] && !upper[k]) return false;
  for (size_t k = 0; need[k]; k++) {
    int c = need[k] - 'A';
    if (!upper[c] || lower[c]) return false;
    pos[k] = idx[c];
  }
  *ndim = n;
  return true;
}

/* Checks that data's rank is the layout's. */
static bool layout_rank(RelCtx *rc, const Type *data, const char *field, const Attrs *attrs, int ndim) {
  if (rank_of(data) == ndim) return true;
  size_t len;
  const char *s = attr_str(attrs, field, &len);
  rel_error(rc, "data has rank %d, but %s '%.*s' has %d dimensions", rank_of(data), field, (int)len, s, ndim);
  return false;
}

/* {==== Convolutions ====} */

static const char *const spatial_axes[MAXSP + 1] = {"", "W", "HW", "DHW"};

/* nn.conv{1,2,3}d and nn.conv{1,2,3}d_transpose (data, weight).
** Canonical views: data NC<spatial>, weight OI<spatial> (IO<spatial> for
** the transposes), output NC<spatial> laid out by out_layout (or
** data_layout). Checks, in order: ranks, kernel_size against the weight,
** groups dividing the input channels, channels against the weight's
** output channels, the weight's input channels against data (C/groups;
** C for the transposes), then that every output size is positive. */
RelResult rel_nn_conv(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  int n;
  bool tr;
  switch (rc->op->id) {
  case OP_CONV1D: n = 1, tr = false; break;
  case OP_CONV2D: n = 2, tr = false; break;
  case OP_CONV3D: n = 3, tr = false; break;
  case OP_CONV1D_TRANSPOSE: n = 1, tr = true; break;
  case OP_CONV2D_TRANSPOSE: n = 2, tr = true; break;
  default: n = 3, tr = true; break;
  }
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "weight"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  const Type *data = t[0], *weight = t[1];

  char dprim[MAXR + 1], kprim[MAXR + 1];
  snprintf(dprim, sizeof dprim, "NC%s", spatial_axes[n]);
  snprintf(kprim, sizeof kprim, "%s%s", tr ? "IO" : "OI", spatial_axes[n]);
  int dpos[MAXR], kpos[MAXR], opos[MAXR];
  if (!attr_layout(rc, attrs, "data_layout", dprim, NULL, dpos)) return REL_ERROR;
  if (!attr_layout(rc, attrs, "kernel_layout", kprim, NULL, kpos)) return REL_ERROR;
  if (!attr_layout(rc, attrs, "out_layout", dprim, dpos, opos)) return REL_ERROR;

  int64_t strides[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP], opad[MAXSP] = {0, 0, 0}, ksize[MAXSP];
  if (!attr_per_dim(rc, attrs, "strides", n, 1, strides)) return REL_ERROR;
  if (!attr_padding(rc, attrs, "padding", n, pb, pa)) return REL_ERROR;
  if (!attr_per_dim(rc, attrs, "dilation", n, 1, dil)) return REL_ERROR;
  if (tr && !attr_per_dim(rc, attrs, "output_padding", n, 0, opad)) return REL_ERROR;
  int64_t groups = attr_int(attrs, "groups", NULL);
  if (kn(groups) && groups < 1)
    return rel_error(rc, "attribute 'groups' must be at least 1, found %lld", (long long)groups);
  bool no_channels;
  int64_t channels = attr_int(attrs, "channels", &no_channels);
  if (kn(channels) && channels < 1)
    return rel_error(rc, "attribute 'channels' must be at least 1, found %lld", (long long)channels);
  bool has_ksize = !rel_attr_is_none(attrs, "kernel_size");
  if (has_ksize && !attr_per_dim(rc, attrs, "kernel_size", n, 1, ksize)) return REL_ERROR;

  char b1[128], b2[128], b3[128], b4[128];
  size_t len;
  const char *lay;
  if (rank_of(data) != n + 2) {
    lay = attr_str(attrs, "data_layout", &len);
    return rel_error(rc, "data has rank %d, but data_layout '%.*s' needs %d", rank_of(data), (int)len, lay, n + 2);
  }
  if (rank_of(weight) != n + 2) {
    lay = attr_str(attrs, "kernel_layout", &len);
    return rel_error(rc, "weight has rank %d, but kernel_layout '%.*s' needs %d", rank_of(weight), (int)len, lay,
                     n + 2);
  }
  int64_t dN = dim_of(data, dpos[0]), dC = dim_of(data, dpos[1]), dS[MAXSP];
  int64_t w0 = dim_of(weight, kpos[0]), w1 = dim_of(weight, kpos[1]), wK[MAXSP];
  for (int i = 0; i < n; i++) dS[i] = dim_of(data, dpos[2 + i]), wK[i] = dim_of(weight, kpos[2 + i]);

  /* kernel_size against the weight's spatial dims. */
  if (has_ksize) {
    for (int i = 0; i < n; i++) {
      if (kn(ksize[i]) && kn(wK[i]) && ksize[i] != wK[i])
        return rel_error(rc, "weight has kernel size %s, but kernel_size is %s", vals_str(wK, n, b1, sizeof b1),
                         vals_str(ksize, n, b2, sizeof b2));
    }
  }
  for (int i = 0; i < n; i++) {
    if (kn(wK[i]) && wK[i] < 1)
      return rel_error(rc, "weight has kernel size %s, which is not positive", vals_str(wK, n, b1, sizeof b1));
  }
  if (kn(dC) && kn(groups) && dC % groups != 0)
    return rel_error(rc, "data has %lld input channels, which groups=%lld does not divide", (long long)dC,
                     (long long)groups);

  int64_t cout;
  if (!tr) {
    int64_t wO = w0, wI = w1;
    /* TVM's depthwise form: with channels and kernel_size given, a weight
    ** whose O is groups == C holds the channel multiplier in I (HWOI
    ** kernels from TensorFlow), and channels = C * multiplier. */
    bool depthwise =
        !no_channels && has_ksize && kn(groups) && groups > 1 && kn(dC) && dC == groups && kn(wO) && wO == groups;
    if (depthwise && kn(channels) && kn(wI) && d_mul(dC, wI) != channels)
      return rel_error(rc,
                       "depthwise weight has channel multiplier %lld, but channels=%lld on %lld input channels "
                       "needs %lld (groups=%lld)",
                       (long long)wI, (long long)channels, (long long)dC, (long long)(channels / dC),
                       (long long)groups);
    if (!depthwise) {
      if (kn(channels) && kn(wO) && channels != wO)
        return rel_error(rc, "weight has %lld output channels, but channels=%lld", (long long)wO, (long long)channels);
      int64_t want = d_fdiv(dC, groups);
      if (kn(want) && kn(wI) && want != wI)
        return rel_error(rc, "weight has %lld input channels, but data has %lld (groups=%lld)", (long long)wI,
                         (long long)dC, (long long)groups);
      if (kn(wO) && kn(groups) && wO % groups != 0)
        return rel_error(rc, "weight has %lld output channels, which groups=%lld does not divide", (long long)wO,
                         (long long)groups);
    }
    cout = !no_channels ? channels : wO;
  } else {
    int64_t wI = w0, wO = w1;
    if (kn(dC) && kn(wI) && dC != wI)
      return rel_error(rc, "weight has %lld input channels, but data has %lld (groups=%lld)", (long long)wI,
                       (long long)dC, (long long)groups);
    if (!no_channels && kn(channels) && kn(groups)) {
      if (channels % groups != 0)
        return rel_error(rc, "channels=%lld is not divisible by groups=%lld", (long long)channels, (long long)groups);
      if (kn(wO) && wO != channels / groups) {
        if (groups == 1)
          return rel_error(rc, "weight has %lld output channels, but channels=%lld", (long long)wO,
                           (long long)channels);
        return rel_error(rc, "weight has %lld output channels per group, but channels=%lld with groups=%lld needs %lld",
                         (long long)wO, (long long)channels, (long long)groups, (long long)(channels / groups));
      }
    }
    cout = !no_channels ? channels : d_mul(wO, groups);
  }

  /* Spatial sizes. */
  int64_t k[MAXSP], dk[MAXSP], os[MAXSP], pads[2 * MAXSP];
  for (int i = 0; i < n; i++) {
    k[i] = kn(wK[i]) ? wK[i] : has_ksize ? ksize[i] : UNK;
    dk[i] = dilated(k[i], dil[i]);
    pads[i] = pb[i], pads[n + i] = pa[i];
  }
  for (int i = 0; i < n; i++) {
    int64_t padded = d_add(d_add(dS[i], pb[i]), pa[i]);
    if (!tr) {
      if (kn(padded) && kn(dk[i]) && padded < dk[i])
        return rel_error(rc, "kernel of size %s with dilation %s does not fit input %s with padding %s",
                         vals_str(k, n, b1, sizeof b1), vals_str(dil, n, b2, sizeof b2), vals_str(dS, n, b3, sizeof b3),
                         vals_str(pads, 2 * n, b4, sizeof b4));
      os[i] = d_add(d_fdiv(d_sub(padded, dk[i]), strides[i]), 1);
    } else {
      os[i] = d_add(d_sub(d_sub(d_add(d_mul(strides[i], d_sub(dS[i], 1)), dk[i]), pb[i]), pa[i]), opad[i]);
    }
  }
  if (tr) {
    for (int i = 0; i < n; i++) {
      if (kn(os[i]) && os[i] < 1) {
        char b5[128], b6[128];
        return rel_error(
            rc, "output size %s is not positive (input %s, kernel %s, strides %s, dilation %s, padding %s)",
            vals_str(os, n, b5, sizeof b5), vals_str(dS, n, b1, sizeof b1), vals_str(k, n, b2, sizeof b2),
            vals_str(strides, n, b3, sizeof b3), vals_str(dil, n, b4, sizeof b4), vals_str(pads, 2 * n, b6, sizeof b6));
      }
    }
  }
  int64_t canon[MAXR], oshape[MAXR];
  canon[0] = dN, canon[1] = cout;
  for (int i = 0; i < n; i++) canon[2 + i] = os[i];
  for (int kk = 0; kk < n + 2; kk++) oshape[opos[kk]] = canon[kk];
  *out = mk_tensor(rc, out_dtype(attrs, dtype_of(data)), n + 2, oshape);
  return REL_OK;
}

/* {==== Dense, matmul, batch_matmul ====} */

/* nn.dense (data, weight [units, K]) and nn.matmul (a, b; transpose_a/b).
** Dense is matmul with transpose_b: out = a.shape[:-1] + [units or N]. */
RelResult rel_nn_dense(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  bool dense = rc->op->id == OP_DENSE;
  static const char *const dnames[] = {"data", "weight"}, *const mnames[] = {"tensor_a", "tensor_b"};
  const char *const *names = dense ? dnames : mnames;
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  bool ta = dense ? false : rel_attr_bool(attrs, "transpose_a");
  bool tb = dense ? true : rel_attr_bool(attrs, "transpose_b");
  const Type *a = t[0], *b = t[1];
  int na = rank_of(a);
  char b1[128], b2[128];
  if (na < (ta ? 2 : 1))
    return rel_error(rc, "%s must have rank at least %d, found %s", names[0], ta ? 2 : 1, shape_str(a, b1, sizeof b1));
  if (rank_of(b) != 2) return rel_error(rc, "%s must have rank 2, found %s", names[1], shape_str(b, b1, sizeof b1));
  int64_t ka = dim_of(a, ta ? na - 2 : na - 1);
  int64_t kb = dim_of(b, tb ? 1 : 0), nb = dim_of(b, tb ? 0 : 1);
  bool no_units;
  int64_t units = attr_int(attrs, "units", &no_units);
  if (kn(units) && units < 1)
    return rel_error(rc, "attribute 'units' must be at least 1, found %lld", (long long)units);
  if (kn(ka) && kn(kb) && ka != kb)
    return rel_error(rc, "%s %s has %lld input features, but %s %s has %lld", names[0], shape_str(a, b1, sizeof b1),
                     (long long)ka, names[1], shape_str(b, b2, sizeof b2), (long long)kb);
  if (kn(units) && kn(nb) && units != nb)
    return rel_error(rc, "%s %s has %lld output features, but units=%lld", names[1], shape_str(b, b1, sizeof b1),
                     (long long)nb, (long long)units);
  int64_t *oshape = scratch(rc, na);
  dims_of(a, oshape);
  if (ta) oshape[na - 2] = dim_of(a, na - 1);
  oshape[na - 1] = no_units ? nb : units;
  *out = mk_tensor(rc, out_dtype(attrs, dtype_of(a)), na, oshape);
  return REL_OK;
}

/* nn.batch_matmul (a [B, M, K] or [B, K, M] with transpose_a, b [B, K, N]
** or [B, N, K] with transpose_b; both default False, spec 11). A batch
** of 1 broadcasts; a `?` batch gives `?`. */
RelResult rel_nn_batch_matmul(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"tensor_a", "tensor_b"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  const Type *x = t[0], *y = t[1];
  char b1[128], b2[128];
  for (int i = 0; i < 2; i++)
    if (rank_of(t[i]) != 3)
      return rel_error(rc, "%s must have rank 3, found %s", names[i], shape_str(t[i], b1, sizeof b1));
  bool ta = rel_attr_bool(attrs, "transpose_a"), tb = rel_attr_bool(attrs, "transpose_b");
  int64_t xb = dim_of(x, 0), xi = dim_of(x, ta ? 2 : 1), xk = dim_of(x, ta ? 1 : 2);
  int64_t yb = dim_of(y, 0), yk = dim_of(y, tb ? 2 : 1), yj = dim_of(y, tb ? 1 : 2);
  if (kn(xb) && kn(yb) && xb != yb && xb != 1 && yb != 1)
    return rel_error(rc, "batch dimensions %lld and %lld differ (shapes %s and %s)", (long long)xb, (long long)yb,
                     shape_str(x, b1, sizeof b1), shape_str(y, b2, sizeof b2));
  if (kn(xk) && kn(yk) && xk != yk)
    return rel_error(rc, "reduction dimensions %lld and %lld differ (shapes %s and %s, transpose_a=%s, transpose_b=%s)",
                     (long long)xk, (long long)yk, shape_str(x, b1, sizeof b1), shape_str(y, b2, sizeof b2),
                     ta ? "True" : "False", tb ? "True" : "False");
  int64_t oshape[3] = {kn(xb) && kn(yb) ? (xb > yb ? xb : yb) : UNK, xi, yj};
  *out = mk_tensor(rc, out_dtype(attrs, dtype_of(x)), 3, oshape);
  return REL_OK;
}

/* {==== Per-channel ops and normalisations ====} */

/* Checks that vector parameter p is [c] of data's dtype (c is data's dim
** at axis). */
static bool check_vec(RelCtx *rc, const Type *p, const char *what, const Type *data, int64_t axis) {
  char b1[128], b2[32], b3[32];
  int64_t c = dim_of(data, (int)axis);
  if (rank_of(p) != 1 || (kn(c) && kn(dim_of(p, 0)) && dim_of(p, 0) != c)) {
    int64_t want[1] = {c};
    rel_error(rc, "%s has shape %s, expected %s (data axis %lld)", what, shape_str(p, b1, sizeof b1),
              vals_str(want, 1, b2, sizeof b2), (long long)axis);
    return false;
  }
  if (!dtype_eq(dtype_of(p), dtype_of(data))) {
    rel_error(rc, "%s has dtype %s, but data has %s", what, dt_str(dtype_of(p), b2), dt_str(dtype_of(data), b3));
    return false;
  }
  return true;
}

/* The axis attribute normalised against data's rank. */
static bool norm_axis(RelCtx *rc, const Attrs *attrs, const Type *data, int64_t *axis) {
  int64_t a = attr_int(attrs, "axis", NULL);
  if (!kn(a)) {
    rel_error(rc, "attribute 'axis' must be an integer literal");
    return false;
  }
  if (rel_norm_axis(a, rank_of(data), axis)) return true;
  rel_error(rc, "axis %lld is out of range for rank %d", (long long)a, rank_of(data));
  return false;
}

/* nn.bias_add (data, bias) and nn.prelu (data, alpha): the second argument
** is [data.shape[axis]] of data's dtype; the result is data's type. */
RelResult rel_nn_bias_add(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const bnames[] = {"data", "bias"}, *const pnames[] = {"data", "alpha"};
  const char *const *names = rc->op->id == OP_PRELU ? pnames : bnames;
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int64_t axis;
  if (!norm_axis(rc, attrs, t[0], &axis)) return REL_ERROR;
  if (!check_vec(rc, t[1], names[1], t[0], axis)) return REL_ERROR;
  *out = rel_tensor(rc, dtype_of(t[0]), rank_of(t[0]), t[0]->u.tensor.shape);
  return REL_OK;
}

/* nn.batch_norm (data, gamma, beta, moving_mean, moving_var): the four
** vectors are [C] (C = data.shape[axis]); the result is the tuple
** (data, [C], [C]). */
RelResult rel_nn_batch_norm(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  const Type *t[5];
  RelResult r = rel_tensor_args(rc, args, 5, names, t);
  if (r != REL_OK) return r;
  int64_t axis;
  if (!norm_axis(rc, attrs, t[0], &axis)) return REL_ERROR;
  for (int i = 1; i < 5; i++)
    if (!check_vec(rc, t[i], names[i], t[0], axis)) return REL_ERROR;
  int64_t c[1] = {dim_of(t[0], (int)axis)};
  Type *fields[3];
  fields[0] = rel_tensor(rc, dtype_of(t[0]), rank_of(t[0]), t[0]->u.tensor.shape);
  fields[1] = mk_tensor(rc, dtype_of(t[0]), 1, c);
  fields[2] = fields[1];
  *out = rel_tuple(rc, fields, 3);
  return REL_OK;
}

/* nn.layer_norm, nn.group_norm, nn.instance_norm (data, gamma, beta):
** gamma and beta are [data.shape[axis]]; the result is data's type.
** instance_norm needs rank >= 3; group_norm needs num_groups to divide
** the channels. */
RelResult rel_nn_norm(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "gamma", "beta"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  char b1[128];
  if (rc->op->id == OP_INSTANCE_NORM && rank_of(t[0]) < 3)
    return rel_error(rc, "data must have rank at least 3, found %s", shape_str(t[0], b1, sizeof b1));
  int64_t axis;
  if (!norm_axis(rc, attrs, t[0], &axis)) return REL_ERROR;
  if (rc->op->id == OP_GROUP_NORM) {
    int64_t g = attr_int(attrs, "num_groups", NULL), c = dim_of(t[0], (int)axis);
    if (kn(g) && g < 1) return rel_error(rc, "attribute 'num_groups' must be at least 1, found %lld", (long long)g);
    if (kn(g) && kn(c) && c % g != 0)
      return rel_error(rc, "num_groups=%lld does not divide the %lld channels of data (axis %lld)", (long long)g,
                       (long long)c, (long long)axis);
  }
  for (int i = 1; i < 3; i++)
    if (!check_vec(rc, t[i], names[i], t[0], axis)) return REL_ERROR;
  *out = rel_tensor(rc, dtype_of(t[0]), rank_of(t[0]), t[0]->u.tensor.shape);
  return REL_OK;
}

/* The single tensor argument (data) of a one-argument op. */
static RelResult data_arg(RelCtx *rc, Type *const *args, int nargs, const Type **data) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  return rel_tensor_arg(rc, args, 0, "data", data);
}

static Type *same_type(RelCtx *rc, const Type *data) {
  return rel_tensor(rc, dtype_of(data), rank_of(data), data->u.tensor.shape);
}

/* nn.l2_normalize (data): every axis in range; ≡data. */
RelResult rel_nn_l2_normalize(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int64_t ax[16];
  int n = attr_ints(attrs, "axis", ax, 16);
  for (int i = 0; i < n && i < 16; i++) {
    int64_t a;
    if (kn(ax[i]) && !rel_norm_axis(ax[i], rank_of(data), &a))
      return rel_error(rc, "axis %lld is out of range for rank %d", (long long)ax[i], rank_of(data));
  }
  *out = same_type(rc, data);
  return REL_OK;
}

/* nn.lrn (data): axis in range, size >= 1; ≡data. */
RelResult rel_nn_lrn(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int64_t axis, size = attr_int(attrs, "size", NULL);
  if (!norm_axis(rc, attrs, data, &axis)) return REL_ERROR;
  if (kn(size) && size < 1) return rel_error(rc, "attribute 'size' must be at least 1, found %lld", (long long)size);
  *out = same_type(rc, data);
  return REL_OK;
}

/* nn.softmax, nn.log_softmax, nn.fast_softmax (data): axis in range; ≡data. */
RelResult rel_nn_softmax(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int64_t axis;
  if (!norm_axis(rc, attrs, data, &axis)) return REL_ERROR;
  *out = same_type(rc, data);
  return REL_OK;
}

/* nn.dropout (data): the tuple (data, mask), both of data's type. */
RelResult rel_nn_dropout(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)attrs;
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  Type *fields[2];
  fields[0] = same_type(rc, data);
  fields[1] = fields[0];
  *out = rel_tuple(rc, fields, 2);
  return REL_OK;
}

/* {==== Pooling ====} */

/* The spatial dims of a pooling op (1, 2, 3) and whether it is max/avg,
** global or adaptive. */
static int pool_dims(OpId id) {
  switch (id) {
  case OP_MAX_POOL1D:
  case OP_AVG_POOL1D:
  case OP_ADAPTIVE_AVG_POOL1D:
  case OP_ADAPTIVE_MAX_POOL1D: return 1;
  case OP_MAX_POOL3D:
  case OP_AVG_POOL3D:
  case OP_ADAPTIVE_AVG_POOL3D:
  case OP_ADAPTIVE_MAX_POOL3D: return 3;
  default: return 2;
  }
}

/* Finds the spatial axes of the layout attribute ("layout") in data. */
static bool pool_layout(RelCtx *rc, const Attrs *attrs, const Type *data, int n, int *pos) {
  size_t len;
  const char *s = attr_str(attrs, "layout", &len);
  int ndim;
  if (!layout_find(s, len, spatial_axes[n], pos, &ndim)) {
    rel_error(rc, "unsupported layout '%.*s' (pooling needs the axes %s, unsplit)", (int)len, s, spatial_axes[n]);
    return false;
  }
  return layout_rank(rc, data, "layout", attrs, ndim);
}

/* nn.{max,avg}_pool{1,2,3}d (data): out = (in + pads − ((k−1)·d+1)
** [+ s−1 with ceil_mode]) / s + 1 on the layout's spatial axes; other
** dims kept. The dilated window must fit the padded input. */
RelResult rel_nn_pool(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int n = pool_dims(rc->op->id), pos[MAXSP];
  int64_t k[MAXSP], s[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP];
  if (!attr_per_dim(rc, attrs, "pool_size", n, 1, k)) return REL_ERROR;
  if (!attr_per_dim(rc, attrs, "strides", n, 1, s)) return REL_ERROR;
  if (!attr_per_dim(rc, attrs, "dilation", n, 1, dil)) return REL_ERROR;
  if (!attr_padding(rc, attrs, "padding", n, pb, pa)) return REL_ERROR;
  if (!pool_layout(rc, attrs, data, n, pos)) return REL_ERROR;
  bool ceil_mode = rel_attr_bool(attrs, "ceil_mode");
  int nd = rank_of(data);
  int64_t *oshape = scratch(rc, nd), in[MAXSP], pads[2 * MAXSP];
  dims_of(data, oshape);
  for (int i = 0; i < n; i++) in[i] = oshape[pos[i]], pads[i] = pb[i], pads[n + i] = pa[i];
  for (int i = 0; i < n; i++) {
    int64_t num = d_sub(d_add(d_add(in[i], pb[i]), pa[i]), dilated(k[i], dil[i]));
    if (kn(num) && num < 0) {
      char b1[128], b2[128], b3[128], b4[128];
      return rel_error(rc, "pool of size %s with dilation %s does not fit input %s with padding %s",
                       vals_str(k, n, b1, sizeof b1), vals_str(dil, n, b2, sizeof b2), vals_str(in, n, b3, sizeof b3),
                       vals_str(pads, 2 * n, b4, sizeof b4));
    }
    if (ceil_mode) num = d_add(num, d_sub(s[i], 1));
    oshape[pos[i]] = d_add(d_fdiv(num, s[i]), 1);
  }
  *out = mk_tensor(rc, dtype_of(data), nd, oshape);
  return REL_OK;
}

/* nn.global_{avg,max}_pool2d (data): H, W → 1. */
RelResult rel_nn_global_pool(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int pos[2];
  if (!pool_layout(rc, attrs, data, 2, pos)) return REL_ERROR;
  int64_t *oshape = scratch(rc, rank_of(data));
  dims_of(data, oshape);
  oshape[pos[0]] = oshape[pos[1]] = 1;
  *out = mk_tensor(rc, dtype_of(data), rank_of(data), oshape);
  return REL_OK;
}

/* nn.adaptive_{avg,max}_pool{1,2,3}d (data): the spatial dims become
** output_size (None or [] keeps them all; one value stands for every dim;
** a None entry keeps that dim). */
RelResult rel_nn_adaptive_pool(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int n = pool_dims(rc->op->id), pos[MAXSP];
  const AttrValue *v = rel_attr(attrs, "output_size");
  int cnt = v->kind == AV_NONE ? 0 : v->kind == AV_ARRAY ? v->u.arr.n : 1;
  if (cnt != 0 && cnt != 1 && cnt != n) {
    if (n == 1) return rel_error(rc, "attribute 'output_size' has %d values, expected at most 1", cnt);
    return rel_error(rc, "attribute 'output_size' has %d values, expected 0, 1 or %d", cnt, n);
  }
  if (!pool_layout(rc, attrs, data, n, pos)) return REL_ERROR;
  int64_t *oshape = scratch(rc, rank_of(data));
  dims_of(data, oshape);
  for (int i = 0; i < n && cnt; i++) {
    const AttrValue *it = v->kind == AV_ARRAY ? v->u.arr.items[cnt == 1 ? 0 : i] : v;
    if (it->kind == AV_NONE) continue; /* keeps the input dim */
    int64_t o = it->kind == AV_INT ? it->u.i.v : UNK;
    if (kn(o) && o < 1) return rel_error(rc, "attribute 'output_size' must be at least 1, found %lld", (long long)o);
    oshape[pos[i]] = o;
  }
  *out = mk_tensor(rc, dtype_of(data), rank_of(data), oshape);
  return REL_OK;
}

/* {==== Padding and reshaping ops ====} */

static bool pad_mode_ok(RelCtx *rc, const Attrs *attrs) {
  size_t len;
  const char *m = attr_str(attrs, "pad_mode", &len);
  static const char *const modes[] = {"constant", "edge", "reflect"};
  for (int i = 0; i < 3; i++)
    if (len == strlen(modes[i]) && memcmp(m, modes[i], len) == 0) return true;
  rel_error(rc, "unsupported pad_mode '%.*s' (expected constant, edge or reflect)", (int)len, m);
  return false;
}

/* nn.pad (data, pad_value): pad_width holds one [before, after] pair per
** axis; dim + before + after (negative widths crop, the result must not be
** negative); `?` stays `?`. pad_value is a 0-d tensor (of any dtype: the
** Python API makes a float32 constant). */
RelResult rel_nn_pad(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "pad_value"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  const Type *data = t[0];
  char b1[128];
  if (rank_of(t[1]) != 0)
    return rel_error(rc, "pad_value must be a scalar, found shape %s", shape_str(t[1], b1, sizeof b1));
  if (!pad_mode_ok(rc, attrs)) return REL_ERROR;
  const AttrValue *pw = rel_attr(attrs, "pad_width");
  if (pw->kind == AV_NONE) return rel_error(rc, "attribute 'pad_width' is required");
  int nd = rank_of(data);
  if (pw->kind != AV_ARRAY || pw->u.arr.n != nd)
    return rel_error(rc, "attribute 'pad_width' has %d pairs, but data has rank %d (shape %s)",
                     pw->kind == AV_ARRAY ? pw->u.arr.n : 1, nd, shape_str(data, b1, sizeof b1));
  int64_t *oshape = scratch(rc, nd);
  dims_of(data, oshape);
  for (int i = 0; i < nd; i++) {
    const AttrValue *p = pw->u.arr.items[i];
    if (p->kind != AV_ARRAY || p->u.arr.n != 2)
      return rel_error(rc, "attribute 'pad_width': entry %d must be a [before, after] pair", i);
    int64_t w[2];
    for (int j = 0; j < 2; j++) w[j] = p->u.arr.items[j]->kind == AV_INT ? p->u.arr.items[j]->u.i.v : UNK;
    int64_t o = d_add(d_add(oshape[i], w[0]), w[1]);
    if (kn(o) && o < 0)
      return rel_error(rc, "attribute 'pad_width': padding axis %d of size %lld by [%lld, %lld] leaves a negative size",
                       i, (long long)oshape[i], (long long)w[0], (long long)w[1]);
    oshape[i] = kn(oshape[i]) ? o : UNK;
  }
  *out = mk_tensor(rc, dtype_of(data), nd, oshape);
  return REL_OK;
}

/* dyn.nn.pad (data, pad_width [rank, 2], pad_value): every dim is `?`. */
RelResult rel_nn_dyn_pad(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "pad_width", "pad_value"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  const Type *data = t[0], *pw = t[1];
  char b1[128], b2[128];
  int nd = rank_of(data);
  if (nd == 0) return rel_error(rc, "data must have rank at least 1, found a scalar");
  if (!pad_mode_ok(rc, attrs)) return REL_ERROR;
  int64_t p0 = rank_of(pw) == 2 ? dim_of(pw, 0) : UNK, p1 = rank_of(pw) == 2 ? dim_of(pw, 1) : UNK;
  if (rank_of(pw) != 2 || (kn(p0) && p0 != nd) || (kn(p1) && p1 != 2)) {
    int64_t want[2] = {nd, 2};
    return rel_error(rc, "pad_width has shape %s, expected %s for data of rank %d", shape_str(pw, b1, sizeof b1),
                     vals_str(want, 2, b2, sizeof b2), nd);
  }
  int64_t *oshape = scratch(rc, nd);
  for (int i = 0; i < nd; i++) oshape[i] = UNK;
  *out = mk_tensor(rc, dtype_of(data), nd, oshape);
  return REL_OK;
}

/* nn.batch_flatten (data): [d0, d1·d2·…] (`?` if any of those is). */
RelResult rel_nn_batch_flatten(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)attrs;
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  if (rank_of(data) == 0) return rel_error(rc, "data must have rank at least 1, found a scalar");
  int64_t oshape[2] = {dim_of(data, 0), 1};
  for (int i = 1; i < rank_of(data); i++) oshape[1] = d_mul(oshape[1], dim_of(data, i));
  *out = mk_tensor(rc, dtype_of(data), 2, oshape);
  return REL_OK;
}

/* {==== Upsampling, resize, depth_to_space ====} */

/* Canonical (NC<spatial>) dims of data under a layout attribute that is a
** permutation of primal; checks the rank. */
static bool canon_dims(RelCtx *rc, const Attrs *attrs, const char *field, const Type *data, const char *primal,
                       int *pos, int64_t *canon) {
  if (!attr_layout(rc, attrs, field, primal, NULL, pos)) return false;
  if (!layout_rank(rc, data, field, attrs, (int)strlen(primal))) return false;
  for (int k = 0; primal[k]; k++) canon[k] = dim_of(data, pos[k]);
  return true;
}

/* The tensor of canonical dims canon laid out by pos. */
static Type *from_canon(RelCtx *rc, DType dt, int nd, const int *pos, const int64_t *canon) {
  int64_t oshape[MAXR];
  for (int k = 0; k < nd; k++) oshape[pos[k]] = canon[k];
  return mk_tensor(rc, dt, nd, oshape);
}

/* nn.upsampling (NCHW: H, W → round(H·scale_h), round(W·scale_w), rounding
** half to even as TVM's constant folding does) and nn.upsampling3d (NCDHW,
** scale_d as well). */
RelResult rel_nn_upsampling(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int n = rc->op->id == OP_UPSAMPLING3D ? 3 : 2, pos[MAXR];
  static const char *const scales[] = {"scale_d", "scale_h", "scale_w"};
  double sc[3];
  for (int i = 0; i < n; i++) {
    const char *f = scales[3 - n + i];
    sc[i] = rel_attr_double(attrs, f);
    if (!(sc[i] > 0)) return rel_error(rc, "attribute '%s' must be positive, found %g", f, sc[i]);
  }
  char prim[MAXR + 1];
  snprintf(prim, sizeof prim, "NC%s", spatial_axes[n]);
  int64_t canon[MAXR];
  if (!canon_dims(rc, attrs, "layout", data, prim, pos, canon)) return REL_ERROR;
  for (int i = 0; i < n; i++)
    if (kn(canon[2 + i])) canon[2 + i] = (int64_t)rint((double)canon[2 + i] * sc[i]);
  *out = from_canon(rc, dtype_of(data), n + 2, pos, canon);
  return REL_OK;
}

/* Checks that argument i (a tensor) is a scalar. */
static bool scalar_arg(RelCtx *rc, const Type *t, const char *what) {
  char b1[128];
  if (rank_of(t) == 0) return true;
  rel_error(rc, "%s must be a scalar, found shape %s", what, shape_str(t, b1, sizeof b1));
  return false;
}

/* dyn.nn.upsampling (data, scale_h, scale_w) and dyn.nn.upsampling3d
** (data, scale_d, scale_h, scale_w): scalar scales; spatial dims `?`. */
RelResult rel_nn_dyn_upsampling(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  int n = rc->op->id == OP_DYN_UPSAMPLING3D ? 3 : 2, pos[MAXR];
  static const char *const names2[] = {"data", "scale_h", "scale_w"};
  static const char *const names3[] = {"data", "scale_d", "scale_h", "scale_w"};
  const char *const *names = n == 3 ? names3 : names2;
  const Type *t[4];
  RelResult r = rel_tensor_args(rc, args, n + 1, names, t);
  if (r != REL_OK) return r;
  char prim[MAXR + 1];
  snprintf(prim, sizeof prim, "NC%s", spatial_axes[n]);
  int64_t canon[MAXR];
  if (!canon_dims(rc, attrs, "layout", t[0], prim, pos, canon)) return REL_ERROR;
  for (int i = 1; i <= n; i++)
    if (!scalar_arg(rc, t[i], names[i])) return REL_ERROR;
  for (int i = 0; i < n; i++) canon[2 + i] = UNK;
  *out = from_canon(rc, dtype_of(t[0]), n + 2, pos, canon);
  return REL_OK;
}

/* image.resize{1,2,3}d (data): the spatial dims become size (n values,
** required), roi has 2n values (or None); dtype out_dtype or data's. */
RelResult rel_nn_resize(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int n = rc->op->id == OP_RESIZE1D ? 1 : rc->op->id == OP_RESIZE2D ? 2 : 3, pos[MAXR];
  int64_t size[2 * MAXSP];
  int cnt = attr_ints(attrs, "size", size, 2 * MAXSP);
  if (cnt < 0) return rel_error(rc, "attribute 'size' is required");
  if (cnt != n) return rel_error(rc, "attribute 'size' has %d values, expected %d", cnt, n);
  for (int i = 0; i < n; i++) {
    char b1[128];
    if (kn(size[i]) && size[i] < 1)
      return rel_error(rc, "attribute 'size' must be positive, found %s", vals_str(size, n, b1, sizeof b1));
  }
  const AttrValue *roi = rel_attr(attrs, "roi");
  if (roi->kind == AV_ARRAY && roi->u.arr.n != 2 * n)
    return rel_error(rc, "attribute 'roi' has %d values, expected %d", roi->u.arr.n, 2 * n);
  char prim[MAXR + 1];
  snprintf(prim, sizeof prim, "NC%s", spatial_axes[n]);
  int64_t canon[MAXR];
  if (!canon_dims(rc, attrs, "layout", data, prim, pos, canon)) return REL_ERROR;
  for (int i = 0; i < n; i++) canon[2 + i] = size[i];
  *out = from_canon(rc, out_dtype(attrs, dtype_of(data)), n + 2, pos, canon);
  return REL_OK;
}

/* dyn.image.resize2d (data, size [2], roi [4]): H, W → `?`. */
RelResult rel_nn_dyn_resize2d(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  if (bad_nargs(rc, nargs)) return REL_ERROR;
  static const char *const names[] = {"data", "size", "roi"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  char b1[128];
  for (int i = 1; i < 3; i++) {
    int64_t want = i == 1 ? 2 : 4;
    if (rank_of(t[i]) != 1 || (kn(dim_of(t[i], 0)) && dim_of(t[i], 0) != want))
      return rel_error(rc, "%s has shape %s, expected (%lld,)", names[i], shape_str(t[i], b1, sizeof b1),
                       (long long)want);
  }
  int pos[4];
  int64_t canon[4];
  if (!canon_dims(rc, attrs, "layout", t[0], "NCHW", pos, canon)) return REL_ERROR;
  canon[2] = canon[3] = UNK;
  *out = from_canon(rc, out_dtype(attrs, dtype_of(t[0])), 4, pos, canon);
  return REL_OK;
}

/* nn.depth_to_space (NCHW: C/b², H·b, W·b) and nn.space_to_depth
** (C·b², H/b, W/b); divisions floor, as TVM's. */
RelResult rel_nn_subpixel(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int64_t b = attr_int(attrs, "block_size", NULL);
  if (kn(b) && b < 1) return rel_error(rc, "attribute 'block_size' must be at least 1, found %lld", (long long)b);
  int pos[4];
  int64_t c[4];
  if (!canon_dims(rc, attrs, "layout", data, "NCHW", pos, c)) return REL_ERROR;
  if (rc->op->id == OP_DEPTH_TO_SPACE) {
    c[1] = d_fdiv(c[1], d_mul(b, b)), c[2] = d_mul(c[2], b), c[3] = d_mul(c[3], b);
  } else {
    c[1] = d_mul(c[1], d_mul(b, b)), c[2] = d_fdiv(c[2], b), c[3] = d_fdiv(c[3], b);
  }
  *out = from_canon(rc, dtype_of(data), 4, pos, c);
  return REL_OK;
}

/* nn.dilate (data): strides has one value per axis; (d − 1)·s + 1. */
RelResult rel_nn_dilate(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  const Type *data;
  RelResult r = data_arg(rc, args, nargs, &data);
  if (r != REL_OK) return r;
  int nd = rank_of(data);
  int64_t *s = scratch(rc, nd), *oshape = scratch(rc, nd);
  int cnt = attr_ints(attrs, "strides", s, nd);
  char b1[128];
  if (cnt != nd)
    return rel_error(rc, "attribute 'strides' has %d values, but data has rank %d (shape %s)", cnt < 0 ? 0 : cnt, nd,
                     shape_str(data, b1, sizeof b1));
  for (int i = 0; i < nd; i++) {
    if (kn(s[i]) && s[i] < 1)
      return rel_error(rc, "attribute 'strides' must be at least 1, found %s", vals_str(s, nd, b1, sizeof b1));
  }
  for (int i = 0; i < nd; i++) {
    int64_t d = dim_of(data, i);
    oshape[i] = kn(d) && d == 0 ? 0 : d_add(d_mul(d_sub(d, 1), s[i]), 1);
  }
  *out = mk_tensor(rc, dtype_of(data), nd, oshape);
  return REL_OK;
}
