/* k_nn.c: reference kernels of the nn family: convolutions and their
** transposes, dense/matmul/batch_matmul, bias_add and prelu, the
** normalisations, softmax, dropout, every pooling op, pad, batch_flatten,
** upsampling, image.resize*, depth_to_space/space_to_depth and dilate, with
** the dyn.* variants that take sizes as tensor arguments.
**
** Semantics are TVM v0.16's (topi computes, SimplifyInference for the
** normalisations, spec sections 9.2 and 11), written as plain loops over
** the output elements. Floats are computed in double and stored in the
** result dtype; integers in int64_t with two's complement wrap-around to
** the result dtype, as TVM's generated code behaves, and integer averages
** divide truncating toward zero.
**
** Layouts are mapped generically: a layout attribute gives the position of
** each primal axis (N, C, D, H, W; O, I for weights), so every permutation
** that the type relation accepts works. Pools only need their spatial
** axes, so split layouts such as NCHW16c pool too.
**
** Inputs are borrowed; results are new tensors; shapes come from the static
** result type (c->outs) except for the dyn.* ops, which compute them from
** their tensor arguments. Inconsistent inputs are reported, never read out
** of bounds. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernel.h"

#define KERNEL(name, fn) rlyrt_status fn(rlyrt_kernel_call *c);
#include "relayc/kernels/k_nn.def"
#undef KERNEL

enum { MAXSP = 3, MAXR = 64 }; /* spatial dims of conv/pool/resize; any rank */

/* {==== Scalars and dtypes ====} */

static bool is_float(DLDataType t) { return t.code == kDLFloat; }
static bool is_bool(DLDataType t) { return t.code == kDLUInt && t.bits == 1; }

static int64_t add_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t mul_wrap(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* v wrapped to the integer dtype t (two's complement). */
static int64_t wrap_to(DLDataType t, int64_t v) {
  if (t.code == kDLInt) {
    switch (t.bits) {
    case 8: return (int8_t)v;
    case 16: return (int16_t)v;
    case 32: return (int32_t)v;
    default: return v;
    }
  }
  if (t.code == kDLUInt) {
    switch (t.bits) {
    case 1: return v != 0;
    case 8: return (uint8_t)v;
    case 16: return (uint16_t)v;
    case 32: return (uint32_t)v;
    default: return v;
    }
  }
  return v;
}

/* An integer sum of dtype t divided by count, truncating toward zero (TVM's
** div on integers). count must not be zero. */
static int64_t div_trunc(DLDataType t, int64_t sum, int64_t count) {
  sum = wrap_to(t, sum);
  if (t.code == kDLUInt && t.bits == 64 && count > 0) return (int64_t)((uint64_t)sum / (uint64_t)count);
  if (count == -1) return (int64_t)(0 - (uint64_t)sum);
  return sum / count;
}

/* The lowest value of dtype t (what max pooling pads with). */
static double lowest_f(DLDataType t) { return t.bits == 16 ? -65504.0 : t.bits == 32 ? -(double)FLT_MAX : -DBL_MAX; }
static int64_t lowest_i(DLDataType t) {
  if (t.code != kDLInt) return 0;
  return t.bits >= 64 ? INT64_MIN : -((int64_t)1 << (t.bits - 1));
}

/* dst[di] = src[si], both of one dtype. */
static void copy_elem(rlyrt_tensor *dst, int64_t di, const rlyrt_tensor *src, int64_t si) {
  size_t b = rlyrt_dtype_bytes(dst->dl.dtype);
  memcpy((char *)dst->dl.data + (size_t)di * b, (const char *)src->dl.data + (size_t)si * b, b);
}

/* dst[di] = cast(src[si]) with TVM's cast: float to int truncates, integers
** wrap, anything to bool is `!= 0`. */
static void cast_elem(rlyrt_tensor *dst, int64_t di, const rlyrt_tensor *src, int64_t si) {
  DLDataType t = dst->dl.dtype;
  if (is_float(t)) rlyrt_set_f64(dst, di, rlyrt_get_f64(src, si));
  else if (is_bool(t)) rlyrt_set_i64(dst, di, rlyrt_get_f64(src, si) != 0);
  else rlyrt_set_i64(dst, di, rlyrt_get_i64(src, si));
}

/* A double used as an index: NaN and huge values are pinned, not undefined. */
static int64_t to_index(double v) {
  if (isnan(v)) return 0;
  if (v > 1e15) return (int64_t)1e15;
  if (v < -1e15) return -(int64_t)1e15;
  return (int64_t)v;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static int64_t prod(const int64_t *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* Scratch memory through the runtime's allocator. */
static void *scratch(const rlyrt_kernel_call *c, size_t n, rlyrt_status *s) {
  void *p = rlyrt_alloc(n ? n : 1, 16);
  *s = p ? RLYRT_OK : rk_fail(c, RLYRT_E_NOMEM, "cannot allocate scratch memory");
  if (p) memset(p, 0, n ? n : 1);
  return p;
}

/* {==== Attributes and layouts ====} */

static const char *const sp_axes[MAXSP + 1] = {"", "W", "HW", "DHW"};

/* The number of spatial dims written in an op name ("nn.max_pool2d" -> 2). */
static int op_dims(const char *op, const char *after) {
  const char *p = strstr(op, after);
  if (!p) return 2;
  int d = p[strlen(after)] - '0';
  return d >= 1 && d <= 3 ? d : 2;
}

/* Reads n values of attribute name, one value standing for all; absent or
** None gives dflt. False when the count is wrong. */
static bool attr_per_dim(const rlyrt_kernel_call *c, const char *name, int n, int64_t dflt, int64_t *out) {
  int64_t v[2 * MAXSP];
  int cnt = rk_attr_ints(c, name, v, 2 * MAXSP);
  if (cnt < 0) {
    for (int i = 0; i < n; i++) out[i] = dflt;
    return true;
  }
  if (cnt != 1 && cnt != n) return false;
  for (int i = 0; i < n; i++) out[i] = v[cnt == 1 ? 0 : i];
  return true;
}

/* A padding attribute for n spatial dims: 1 value (all sides), n values
** (each dim, both sides) or 2n values (all befores, then all afters). */
static bool attr_padding(const rlyrt_kernel_call *c, const char *name, int n, int64_t *before, int64_t *after) {
  int64_t v[2 * MAXSP];
  int cnt = rk_attr_ints(c, name, v, 2 * MAXSP);
  if (cnt < 0) {
    for (int i = 0; i < n; i++) before[i] = after[i] = 0;
    return true;
  }
  if (cnt != 1 && cnt != n && cnt != 2 * n) return false;
  for (int i = 0; i < n; i++) {
    if (cnt == 1) before[i] = after[i] = v[0];
    else if (cnt == n) before[i] = after[i] = v[i];
    else before[i] = v[i], after[i] = v[n + i];
  }
  return true;
}

/* s is a permutation of the letters of primal ("NCHW"): pos[k] is the
** index in s of primal[k]. */
static bool layout_perm(const char *s, const char *primal, int *pos) {
  size_t n = strlen(primal);
  if (strlen(s) != n) return false;
  for (size_t k = 0; k < n; k++) {
    const char *p = strchr(s, primal[k]);
    if (!p || strchr(p + 1, primal[k])) return false;
    pos[k] = (int)(p - s);
  }
  return true;
}

/* Reads layout attribute name as a permutation of primal; "" means dflt
** (when given). */
static rlyrt_status get_layout(const rlyrt_kernel_call *c, const char *name, const char *primal, const int *dflt,
                               int *pos) {
  const char *s = rk_attr_str(c, name);
  if (!*s && dflt) {
    memcpy(pos, dflt, sizeof(int) * strlen(primal));
    return RLYRT_OK;
  }
  if (layout_perm(s, primal, pos)) return RLYRT_OK;
  return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported %s '%s' (expected a permutation of %s)", name, s, primal);
}

/* Finds the axes named by the letters of need in a layout that may split
** other axes (NCHW16c): upper-case letters are axes, a lower-case letter
** (with an optional factor) is a split axis. *ndim is the layout's rank. */
static bool layout_find(const char *s, const char *need, int *pos, int *ndim) {
  int idx[26];
  bool upper[26] = {false}, lower[26] = {false};
  int n = 0;
  for (int k = 0; k < 26; k++) idx[k] = -1;
  for (size_t i = 0; s[i];) {
    char ch = s[i];
    if (ch >= 'A' && ch <= 'Z') {
      if (upper[ch - 'A']) return false;
      upper[ch - 'A'] = true;
      idx[ch - 'A'] = n++;
      i++;
    } else if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z')) {
      while (s[i] >= '0' && s[i] <= '9') i++;
      if (s[i] < 'a' || s[i] > 'z') return false;
      lower[s[i] - 'a'] = true;
      n++;
      i++;
    } else {
      return false;
    }
  }
  for (size_t k = 0; need[k]; k++) {
    int l = need[k] - 'A';
    if (!upper[l] || lower[l]) return false;
    pos[k] = idx[l];
  }
  *ndim = n;
  return true;
}

/* The spatial axes of a pooling op's layout attribute in data. */
static rlyrt_status pool_layout(const rlyrt_kernel_call *c, const rlyrt_tensor *data, int n, int *pos) {
  const char *s = rk_attr_str(c, "layout");
  int nd;
  if (!layout_find(s, sp_axes[n], pos, &nd))
    return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported layout '%s' (pooling needs the axes %s, unsplit)", s,
                   sp_axes[n]);
  if (nd != data->dl.ndim)
    return rk_fail(c, RLYRT_E_ARG, "data has rank %d, but layout '%s' has %d dimensions", (int)data->dl.ndim, s, nd);
  return RLYRT_OK;
}

/* An axis attribute normalised against rank nd. */
static rlyrt_status norm_axis(const rlyrt_kernel_call *c, int64_t a, int nd, int *axis) {
  if (a < -nd || a >= nd) return rk_fail(c, RLYRT_E_ARG, "axis %lld is out of range for rank %d", (long long)a, nd);
  *axis = (int)(a < 0 ? a + nd : a);
  return RLYRT_OK;
}

/* The result's static type must have data's rank (the relation made it). */
static rlyrt_status same_rank(rlyrt_kernel_call *c, rlyrt_tensor *out, int nd) {
  int got = out->dl.ndim;
  if (got == nd) return RLYRT_OK;
  rlyrt_release(&out->obj);
  return rk_fail(c, RLYRT_E_INTERNAL, "the result has rank %d, expected %d", got, nd);
}

/* Releases t and returns the error s (for bad shapes found after allocating). */
static rlyrt_status drop(rlyrt_tensor *t, rlyrt_status s) {
  rlyrt_release(t ? &t->obj : NULL);
  return s;
}

/* Checks that out has data's dims except at the n spatial axes pos (what
** pools and resizes change); releases out on failure. */
static rlyrt_status check_kept_dims(rlyrt_kernel_call *c, rlyrt_tensor *out, const rlyrt_tensor *x, const int *pos,
                                    int n) {
  for (int a = 0; a < x->dl.ndim; a++) {
    bool spatial = false;
    for (int i = 0; i < n; i++) spatial = spatial || pos[i] == a;
    if (!spatial && out->dl.shape[a] != x->dl.shape[a])
      return drop(out, rk_fail(c, RLYRT_E_INTERNAL, "the result's dimension %d differs from data's", a));
  }
  return RLYRT_OK;
}

/* {==== Convolutions ====} */

/* nn.conv{1,2,3}d and nn.conv{1,2,3}d_transpose (data, weight), in the
** canonical views data NC<sp>, weight OI<sp> (IO<sp> for the transposes),
** out NC<sp> (out_layout, or data_layout when ""). With s strides, d
** dilation, p the padding before:
**   conv:      out[n, o, y] = sum_{i < C/groups, k} data[n, g*C/groups + i, y*s + k*d - p] * w[o, i, k],
**              g = o / (O/groups); padding reads zeros (a cross-correlation).
**              TVM's depthwise form (groups = C = weight.O, channels = C*m
**              with m = weight.I) reads data[n, o/m, ...] * w[o/m, o%m, k].
**   transpose: out[n, o, y] = sum over i < C/groups and k with y = x*s + k*d - p of
**              data[n, g*C/groups + i, x] * w[g*C/groups + i, o % Og, k], Og = weight.O, g = o / Og.
** Products are taken in the result dtype (out_dtype): floats in double,
** integers wrapping. */
rlyrt_status rk_nn_conv(rlyrt_kernel_call *c) {
  int n = op_dims(c->op, "nn.conv");
  bool tr = strstr(c->op, "transpose") != NULL;
  rlyrt_tensor *data, *w, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &data)) != RLYRT_OK || (s = rk_tensor_arg(c, 1, &w)) != RLYRT_OK) return s;
  char dprim[8], kprim[8];
  snprintf(dprim, sizeof dprim, "NC%s", sp_axes[n]);
  snprintf(kprim, sizeof kprim, "%s%s", tr ? "IO" : "OI", sp_axes[n]);
  int dpos[MAXSP + 2], kpos[MAXSP + 2], opos[MAXSP + 2];
  if ((s = get_layout(c, "data_layout", dprim, NULL, dpos)) != RLYRT_OK) return s;
  if ((s = get_layout(c, "kernel_layout", kprim, NULL, kpos)) != RLYRT_OK) return s;
  if ((s = get_layout(c, "out_layout", dprim, dpos, opos)) != RLYRT_OK) return s;
  if (data->dl.ndim != n + 2 || w->dl.ndim != n + 2)
    return rk_fail(c, RLYRT_E_ARG, "data and weight must have rank %d, found %d and %d", n + 2, (int)data->dl.ndim,
                   (int)w->dl.ndim);
  int64_t st[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP];
  if (!attr_per_dim(c, "strides", n, 1, st) || !attr_per_dim(c, "dilation", n, 1, dil) ||
      !attr_padding(c, "padding", n, pb, pa))
    return rk_fail(c, RLYRT_E_ARG, "bad strides, dilation or padding attribute");
  for (int i = 0; i < n; i++)
    if (st[i] < 1 || dil[i] < 1) return rk_fail(c, RLYRT_E_ARG, "strides and dilation must be at least 1");
  int64_t groups = rk_attr_int(c, "groups", 1);
  if (groups < 1) return rk_fail(c, RLYRT_E_ARG, "groups must be at least 1, found %lld", (long long)groups);
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  if ((s = same_rank(c, out, n + 2)) != RLYRT_OK) return s;

  const int64_t *ds = data->dl.shape, *ws = w->dl.shape, *os = out->dl.shape;
  int64_t nb = ds[dpos[0]], cin = ds[dpos[1]], w0 = ws[kpos[0]], w1 = ws[kpos[1]], cout = os[opos[1]];
  int64_t in[MAXSP], ks[MAXSP];
  for (int i = 0; i < n; i++) in[i] = ds[dpos[2 + i]], ks[i] = ws[kpos[2 + i]];
  /* Channels: cg input channels per group, og output channels per group,
  ** mult > 0 for the depthwise form. */
  int64_t cg, og = 1, mult = 0;
  bool ok = cin % groups == 0 && os[opos[0]] == nb;
  cg = cin / groups;
  if (!tr) {
    if (w1 == cg && w0 == cout && cout % groups == 0) og = cout / groups;
    else if (groups == cin && w0 == cin && w1 > 0 && cout == cin * w1) mult = w1, cg = 1;
    else ok = false;
  } else {
    ok = ok && w0 == cin && cout == w1 * groups;
    og = w1;
  }
  if (!ok) {
    char b[32];
    return drop(out, rk_fail(c, RLYRT_E_ARG,
                             "inconsistent channels: data %lld, weight (%lld, %lld), result %lld, groups %lld (%s)",
                             (long long)cin, (long long)w0, (long long)w1, (long long)cout, (long long)groups,
                             rlyrt_dtype_name(out->dl.dtype, b)));
  }

  bool fl = is_float(out->dl.dtype);
  int64_t nk = prod(ks, n), total = rlyrt_tensor_numel(out);
  int64_t oc[MAXSP + 2], dc[MAXSP + 2], wc[MAXSP + 2], k[MAXSP];
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, os, n + 2, oc);
    int64_t b = oc[opos[0]], o = oc[opos[1]];
    double accf = 0;
    int64_t acci = 0;
    for (int64_t ci = 0; ci < cg; ci++) {
      int64_t ch, wo, wi;
      if (tr) ch = (o / og) * cg + ci, wo = o % og, wi = ch;
      else if (mult) ch = o / mult, wo = o / mult, wi = o % mult;
      else ch = (o / og) * cg + ci, wo = o, wi = ci;
      dc[dpos[0]] = b, dc[dpos[1]] = ch;
      wc[kpos[0]] = tr ? wi : wo, wc[kpos[1]] = tr ? wo : wi;
      for (int64_t kk = 0; kk < nk; kk++) {
        rk_unravel(kk, ks, n, k);
        bool inside = true;
        for (int i = 0; i < n && inside; i++) {
          int64_t y = oc[opos[2 + i]], x;
          if (!tr) {
            x = y * st[i] + k[i] * dil[i] - pb[i];
          } else {
            int64_t t = y + pb[i] - k[i] * dil[i];
            if (t < 0 || t % st[i] != 0) inside = false;
            x = t / st[i];
          }
          inside = inside && x >= 0 && x < in[i];
          dc[dpos[2 + i]] = x;
          wc[kpos[2 + i]] = k[i];
        }
        if (!inside) continue;
        int64_t di = rk_ravel(dc, ds, n + 2), wj = rk_ravel(wc, ws, n + 2);
        if (fl) accf += rlyrt_get_f64(data, di) * rlyrt_get_f64(w, wj);
        else acci = add_wrap(acci, mul_wrap(rlyrt_get_i64(data, di), rlyrt_get_i64(w, wj)));
      }
    }
    if (fl) rlyrt_set_f64(out, idx, accf);
    else rlyrt_set_i64(out, idx, acci);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Dense, matmul, batch_matmul ====} */

/* acc += a[ai] * b[bi] in the result's arithmetic. */
static void mac(bool fl, double *accf, int64_t *acci, const rlyrt_tensor *a, int64_t ai, const rlyrt_tensor *b,
                int64_t bi) {
  if (fl) *accf += rlyrt_get_f64(a, ai) * rlyrt_get_f64(b, bi);
  else *acci = add_wrap(*acci, mul_wrap(rlyrt_get_i64(a, ai), rlyrt_get_i64(b, bi)));
}

/* nn.dense (data [.., K], weight [U, K]): out[.., u] = sum_k data[.., k] * weight[u, k].
** nn.matmul (a, b; transpose_a, transpose_b): a is [.., M, K] ([.., K, M]
** with transpose_a), b is [K, N] ([N, K] with transpose_b); out [.., M, N]. */
rlyrt_status rk_nn_matmul(rlyrt_kernel_call *c) {
  bool dense = strcmp(c->op, "nn.dense") == 0;
  bool ta = dense ? false : rk_attr_int(c, "transpose_a", 0) != 0;
  bool tb = dense ? true : rk_attr_int(c, "transpose_b", 0) != 0;
  rlyrt_tensor *a, *b, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &a)) != RLYRT_OK || (s = rk_tensor_arg(c, 1, &b)) != RLYRT_OK) return s;
  int na = a->dl.ndim;
  if (na < (ta ? 2 : 1) || b->dl.ndim != 2)
    return rk_fail(c, RLYRT_E_ARG, "bad ranks %d and %d", na, (int)b->dl.ndim);
  const int64_t *as = a->dl.shape;
  int64_t kk = ta ? as[na - 2] : as[na - 1], m = ta ? as[na - 1] : 1;
  int64_t rows = prod(as, ta ? na - 2 : na - 1); /* batch (ta) or rows */
  int64_t kb = b->dl.shape[tb ? 1 : 0], nn = b->dl.shape[tb ? 0 : 1];
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  if (kb != kk || out->dl.ndim != na || out->dl.shape[na - 1] != nn || rlyrt_tensor_numel(out) != rows * m * nn)
    return drop(out, rk_fail(c, RLYRT_E_ARG, "inconsistent shapes (reduction %lld and %lld)", (long long)kk,
                             (long long)kb));
  bool fl = is_float(out->dl.dtype);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < nn; j++) {
        double accf = 0;
        int64_t acci = 0;
        for (int64_t q = 0; q < kk; q++) {
          int64_t ai = ta ? (r * kk + q) * m + i : r * kk + q;
          int64_t bi = tb ? j * kk + q : q * nn + j;
          mac(fl, &accf, &acci, a, ai, b, bi);
        }
        int64_t oi = (r * m + i) * nn + j;
        if (fl) rlyrt_set_f64(out, oi, accf);
        else rlyrt_set_i64(out, oi, acci);
      }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.batch_matmul (a [Ba, M, K] or [Ba, K, M] with transpose_a, b [Bb, K, N]
** or [Bb, N, K] with transpose_b): out[q, i, j] = sum_k a[q, i, k] * b[q, k, j],
** a batch of 1 broadcasting. */
rlyrt_status rk_nn_batch_matmul(rlyrt_kernel_call *c) {
  bool ta = rk_attr_int(c, "transpose_a", 0) != 0, tb = rk_attr_int(c, "transpose_b", 0) != 0;
  rlyrt_tensor *a, *b, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &a)) != RLYRT_OK || (s = rk_tensor_arg(c, 1, &b)) != RLYRT_OK) return s;
  if (a->dl.ndim != 3 || b->dl.ndim != 3)
    return rk_fail(c, RLYRT_E_ARG, "both arguments must have rank 3, found %d and %d", (int)a->dl.ndim,
                   (int)b->dl.ndim);
  const int64_t *as = a->dl.shape, *bs = b->dl.shape;
  int64_t ba = as[0], bb = bs[0], m = as[ta ? 2 : 1], kk = as[ta ? 1 : 2], kb = bs[tb ? 2 : 1], nn = bs[tb ? 1 : 2];
  int64_t batch = ba > bb ? ba : bb;
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  const int64_t *os = out->dl.shape;
  if (kk != kb || (ba != bb && ba != 1 && bb != 1) || out->dl.ndim != 3 || os[0] != batch || os[1] != m ||
      os[2] != nn)
    return drop(out, rk_fail(c, RLYRT_E_ARG, "inconsistent shapes"));
  bool fl = is_float(out->dl.dtype);
  for (int64_t q = 0; q < batch; q++) {
    int64_t qa = ba == 1 ? 0 : q, qb = bb == 1 ? 0 : q;
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < nn; j++) {
        double accf = 0;
        int64_t acci = 0;
        for (int64_t r = 0; r < kk; r++) {
          int64_t ai = ta ? (qa * kk + r) * m + i : (qa * m + i) * kk + r;
          int64_t bi = tb ? (qb * nn + j) * kk + r : (qb * kk + r) * nn + j;
          mac(fl, &accf, &acci, a, ai, b, bi);
        }
        int64_t oi = (q * m + i) * nn + j;
        if (fl) rlyrt_set_f64(out, oi, accf);
        else rlyrt_set_i64(out, oi, acci);
      }
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Per-channel ops and normalisations ====} */

/* The stride of axis in a row-major shape, and the size of axis. */
static int64_t inner_of(const rlyrt_tensor *t, int axis) { return prod(t->dl.shape + axis + 1, t->dl.ndim - axis - 1); }

/* Checks that vector v is [data.shape[axis]]. */
static rlyrt_status check_vec(const rlyrt_kernel_call *c, const rlyrt_tensor *v, const char *what,
                              const rlyrt_tensor *data, int axis) {
  if (v->dl.ndim == 1 && v->dl.shape[0] == data->dl.shape[axis]) return RLYRT_OK;
  return rk_fail(c, RLYRT_E_ARG, "%s must have shape (%lld,)", what, (long long)data->dl.shape[axis]);
}

/* nn.bias_add (data, bias): out = data + bias[channel]; nn.prelu (data,
** alpha): out = data > 0 ? data : data * alpha[channel]; the channel is the
** coordinate at axis. */
rlyrt_status rk_nn_bias_add(rlyrt_kernel_call *c) {
  bool prelu = strcmp(c->op, "nn.prelu") == 0;
  rlyrt_tensor *data, *v, *out;
  rlyrt_status s;
  int axis = 0;
  if ((s = rk_tensor_arg(c, 0, &data)) != RLYRT_OK || (s = rk_tensor_arg(c, 1, &v)) != RLYRT_OK) return s;
  if ((s = norm_axis(c, rk_attr_int(c, "axis", 1), data->dl.ndim, &axis)) != RLYRT_OK) return s;
  if ((s = check_vec(c, v, prelu ? "alpha" : "bias", data, axis)) != RLYRT_OK) return s;
  if ((s = rk_alloc(c, data->dl.dtype, data->dl.ndim, data->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t inner = inner_of(data, axis), dim = data->dl.shape[axis], total = rlyrt_tensor_numel(data);
  bool fl = is_float(data->dl.dtype);
  for (int64_t i = 0; i < total; i++) {
    int64_t ch = (i / inner) % dim;
    if (fl) {
      double x = rlyrt_get_f64(data, i), p = rlyrt_get_f64(v, ch);
      rlyrt_set_f64(out, i, prelu ? (x > 0 ? x : x * p) : x + p);
    } else {
      int64_t x = rlyrt_get_i64(data, i), p = rlyrt_get_i64(v, ch);
      rlyrt_set_i64(out, i, prelu ? (x > 0 ? x : mul_wrap(x, p)) : add_wrap(x, p));
    }
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.batch_norm (data, gamma, beta, moving_mean, moving_var), inference:
** out = (x - mean[ch]) / sqrt(var[ch] + epsilon) * gamma[ch] + beta[ch]
** (scale=False drops gamma, center=False drops beta); the result is the
** tuple (out, moving_mean, moving_var). */
rlyrt_status rk_nn_batch_norm(rlyrt_kernel_call *c) {
  static const char *const names[] = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  rlyrt_tensor *t[5], *outs[3] = {NULL, NULL, NULL};
  rlyrt_status s;
  int axis = 0;
  for (int i = 0; i < 5; i++)
    if ((s = rk_tensor_arg(c, i, &t[i])) != RLYRT_OK) return s;
  if ((s = norm_axis(c, rk_attr_int(c, "axis", 1), t[0]->dl.ndim, &axis)) != RLYRT_OK) return s;
  for (int i = 1; i < 5; i++)
    if ((s = check_vec(c, t[i], names[i], t[0], axis)) != RLYRT_OK) return s;
  double eps = rk_attr_float(c, "epsilon", 1e-5);
  bool center = rk_attr_int(c, "center", 1) != 0, scale = rk_attr_int(c, "scale", 1) != 0;
  if ((s = rk_alloc(c, t[0]->dl.dtype, t[0]->dl.ndim, t[0]->dl.shape, &outs[0])) != RLYRT_OK) return s;
  for (int i = 1; i < 3; i++) {
    rlyrt_tensor *src = t[i + 2];
    if ((s = rk_alloc(c, src->dl.dtype, 1, src->dl.shape, &outs[i])) != RLYRT_OK) {
      for (int j = 0; j < i; j++) rlyrt_release(&outs[j]->obj);
      return s;
    }
    memcpy(outs[i]->dl.data, src->dl.data, rlyrt_tensor_nbytes(src));
  }
  int64_t inner = inner_of(t[0], axis), dim = t[0]->dl.shape[axis], total = rlyrt_tensor_numel(t[0]);
  for (int64_t i = 0; i < total; i++) {
    int64_t ch = (i / inner) % dim;
    double y = (rlyrt_get_f64(t[0], i) - rlyrt_get_f64(t[3], ch)) / sqrt(rlyrt_get_f64(t[4], ch) + eps);
    if (scale) y *= rlyrt_get_f64(t[1], ch);
    if (center) y += rlyrt_get_f64(t[2], ch);
    rlyrt_set_f64(outs[0], i, y);
  }
  return rk_set_result(c, outs, 3);
}

/* Groups of elements that a normalisation reduces together: the group of
** an element is its coordinates with the reduced axes dropped; for
** group_norm the channel coordinate becomes channel / (C / num_groups). */
typedef struct norm_groups {
  bool red[MAXR];  /* reduced axes */
  int gaxis;       /* group_norm's channel axis, else -1 */
  int64_t gsize;   /* channels per group */
} norm_groups;

/* The size of group axis a. */
static int64_t group_dim(const norm_groups *g, const int64_t *shape, int a) {
  return a == g->gaxis ? shape[a] / g->gsize : g->red[a] ? 1 : shape[a];
}

/* The number of groups. */
static int64_t group_count(const norm_groups *g, const int64_t *shape, int nd) {
  int64_t n = 1;
  for (int a = 0; a < nd; a++) n *= group_dim(g, shape, a);
  return n;
}

/* The group index of the element at coords. */
static int64_t group_key(const norm_groups *g, const int64_t *shape, int nd, const int64_t *coords) {
  int64_t key = 0;
  for (int a = 0; a < nd; a++) {
    int64_t co = a == g->gaxis ? coords[a] / g->gsize : g->red[a] ? 0 : coords[a];
    key = key * group_dim(g, shape, a) + co;
  }
  return key;
}

/* Per-group mean and biased variance of x (scratch arrays, freed by the
** caller with rlyrt_free), with each element's group in *keys. */
static rlyrt_status moments(const rlyrt_kernel_call *c, const rlyrt_tensor *x, const norm_groups *g, double **mean,
                            double **var, int64_t **keys) {
  int nd = x->dl.ndim;
  int64_t total = rlyrt_tensor_numel(x), nkeys = group_count(g, x->dl.shape, nd), coords[MAXR];
  rlyrt_status s;
  *mean = NULL, *var = NULL, *keys = NULL;
  double *cnt = NULL;
  if (!(*keys = scratch(c, sizeof(int64_t) * (size_t)total, &s))) return s;
  if (!(*mean = scratch(c, sizeof(double) * (size_t)nkeys, &s)) || !(*var = scratch(c, sizeof(double) * (size_t)nkeys, &s)) ||
      !(cnt = scratch(c, sizeof(double) * (size_t)nkeys, &s))) {
    rlyrt_free(*keys), rlyrt_free(*mean), rlyrt_free(*var);
    *mean = *var = NULL, *keys = NULL;
    return s;
  }
  for (int64_t i = 0; i < total; i++) {
    rk_unravel(i, x->dl.shape, nd, coords);
    int64_t k = (*keys)[i] = group_key(g, x->dl.shape, nd, coords);
    (*mean)[k] += rlyrt_get_f64(x, i);
    cnt[k] += 1;
  }
  for (int64_t k = 0; k < nkeys; k++) (*mean)[k] /= cnt[k];
  for (int64_t i = 0; i < total; i++) {
    double d = rlyrt_get_f64(x, i) - (*mean)[(*keys)[i]];
    (*var)[(*keys)[i]] += d * d;
  }
  for (int64_t k = 0; k < nkeys; k++) (*var)[k] /= cnt[k];
  rlyrt_free(cnt);
  return RLYRT_OK;
}

/* nn.layer_norm (over axis), nn.group_norm (over the channels of a group
** and every axis after the channel axis), nn.instance_norm (over every axis
** but 0 and axis), each (data, gamma, beta) as SimplifyInference expands
** them: out = (x - mean) / sqrt(var + epsilon) * gamma[ch] + beta[ch], var
** biased, ch the coordinate at axis. */
rlyrt_status rk_nn_norm(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *gamma, *beta, *out;
  rlyrt_status s;
  int axis = 0;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK || (s = rk_tensor_arg(c, 1, &gamma)) != RLYRT_OK ||
      (s = rk_tensor_arg(c, 2, &beta)) != RLYRT_OK)
    return s;
  int nd = x->dl.ndim;
  bool layer = strcmp(c->op, "nn.layer_norm") == 0, group = strcmp(c->op, "nn.group_norm") == 0;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  if ((s = norm_axis(c, rk_attr_int(c, "axis", layer ? -1 : 1), nd, &axis)) != RLYRT_OK) return s;
  if ((s = check_vec(c, gamma, "gamma", x, axis)) != RLYRT_OK || (s = check_vec(c, beta, "beta", x, axis)) != RLYRT_OK)
    return s;
  norm_groups g;
  memset(&g, 0, sizeof g);
  g.gaxis = -1;
  if (layer) {
    g.red[axis] = true;
  } else if (group) {
    int64_t ng = rk_attr_int(c, "num_groups", 0), ch = x->dl.shape[axis];
    if (ng < 1 || ch % ng != 0)
      return rk_fail(c, RLYRT_E_ARG, "num_groups=%lld does not divide the %lld channels", (long long)ng,
                     (long long)ch);
    for (int a = axis + 1; a < nd; a++) g.red[a] = true;
    g.gaxis = axis, g.gsize = ch / ng;
  } else {
    for (int a = 1; a < nd; a++) g.red[a] = a != axis;
  }
  double eps = rk_attr_float(c, "epsilon", 1e-5);
  bool center = rk_attr_int(c, "center", 1) != 0, scale = rk_attr_int(c, "scale", 1) != 0;
  if ((s = rk_alloc(c, x->dl.dtype, nd, x->dl.shape, &out)) != RLYRT_OK) return s;
  double *mean, *var;
  int64_t *keys;
  if ((s = moments(c, x, &g, &mean, &var, &keys)) != RLYRT_OK) return drop(out, s);
  int64_t inner = inner_of(x, axis), dim = x->dl.shape[axis], total = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < total; i++) {
    int64_t ch = (i / inner) % dim, k = keys[i];
    double y = (rlyrt_get_f64(x, i) - mean[k]) / sqrt(var[k] + eps);
    if (scale) y *= rlyrt_get_f64(gamma, ch);
    if (center) y += rlyrt_get_f64(beta, ch);
    rlyrt_set_f64(out, i, y);
  }
  rlyrt_free(mean), rlyrt_free(var), rlyrt_free(keys);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.l2_normalize (data): out = x / sqrt(max(sum(x*x over axis), eps));
** axis None or [] sums over every axis. */
rlyrt_status rk_nn_l2_normalize(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  int nd = x->dl.ndim;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  norm_groups g;
  memset(&g, 0, sizeof g);
  g.gaxis = -1;
  int64_t ax[MAXR];
  int cnt = rk_attr_ints(c, "axis", ax, MAXR);
  if (cnt > MAXR) return rk_fail(c, RLYRT_E_ARG, "too many axes");
  for (int i = 0; i < cnt; i++) {
    int a = 0;
    if ((s = norm_axis(c, ax[i], nd, &a)) != RLYRT_OK) return s;
    g.red[a] = true;
  }
  if (cnt <= 0)
    for (int a = 0; a < nd; a++) g.red[a] = true;
  double eps = rk_attr_float(c, "eps", 0);
  if ((s = rk_alloc(c, x->dl.dtype, nd, x->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t total = rlyrt_tensor_numel(x), nkeys = group_count(&g, x->dl.shape, nd), coords[MAXR];
  double *sum = scratch(c, sizeof(double) * (size_t)nkeys, &s);
  if (!sum) return drop(out, s);
  for (int64_t i = 0; i < total; i++) {
    rk_unravel(i, x->dl.shape, nd, coords);
    double v = rlyrt_get_f64(x, i);
    sum[group_key(&g, x->dl.shape, nd, coords)] += v * v;
  }
  for (int64_t i = 0; i < total; i++) {
    rk_unravel(i, x->dl.shape, nd, coords);
    double q = sum[group_key(&g, x->dl.shape, nd, coords)];
    rlyrt_set_f64(out, i, rlyrt_get_f64(x, i) / sqrt(q > eps ? q : eps));
  }
  rlyrt_free(sum);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.lrn (data): out = x / (bias + alpha * sum / size)^beta, the sum of
** squares over the window [ch - size/2, ch - size/2 + size - 1] along axis
** (zero outside the tensor), as topi's lrn. */
rlyrt_status rk_nn_lrn(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  int axis = 0;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = norm_axis(c, rk_attr_int(c, "axis", 1), x->dl.ndim, &axis)) != RLYRT_OK) return s;
  int64_t size = rk_attr_int(c, "size", 5);
  if (size < 1) return rk_fail(c, RLYRT_E_ARG, "size must be at least 1, found %lld", (long long)size);
  double bias = rk_attr_float(c, "bias", 2), alpha = rk_attr_float(c, "alpha", 1e-4), beta = rk_attr_float(c, "beta", 0.75);
  if ((s = rk_alloc(c, x->dl.dtype, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t inner = inner_of(x, axis), dim = x->dl.shape[axis], total = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < total; i++) {
    int64_t ch = (i / inner) % dim, base = i - ch * inner;
    double sq = 0;
    for (int64_t j = ch - size / 2; j < ch - size / 2 + size; j++) {
      if (j < 0 || j >= dim) continue;
      double v = rlyrt_get_f64(x, base + j * inner);
      sq += v * v;
    }
    rlyrt_set_f64(out, i, rlyrt_get_f64(x, i) / pow(bias + alpha * sq / (double)size, beta));
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.softmax and nn.fast_softmax: exp(x - max) / sum(exp(x - max)) along
** axis; nn.log_softmax: x - max - log(sum(exp(x - max))). fast_softmax's
** approximate exp is computed exactly here. */
rlyrt_status rk_nn_softmax(rlyrt_kernel_call *c) {
  bool logsm = strcmp(c->op, "nn.log_softmax") == 0;
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  int axis = 0;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = norm_axis(c, rk_attr_int(c, "axis", -1), x->dl.ndim, &axis)) != RLYRT_OK) return s;
  if ((s = rk_alloc(c, x->dl.dtype, x->dl.ndim, x->dl.shape, &out)) != RLYRT_OK) return s;
  int64_t inner = inner_of(x, axis), dim = x->dl.shape[axis];
  int64_t outer = dim && inner ? rlyrt_tensor_numel(x) / (dim * inner) : 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t in = 0; in < inner; in++) {
      int64_t base = o * dim * inner + in;
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < dim; j++) {
        double v = rlyrt_get_f64(x, base + j * inner);
        if (v > mx || isnan(v)) mx = v;
      }
      for (int64_t j = 0; j < dim; j++) sum += exp(rlyrt_get_f64(x, base + j * inner) - mx);
      for (int64_t j = 0; j < dim; j++) {
        double d = rlyrt_get_f64(x, base + j * inner) - mx;
        rlyrt_set_f64(out, base + j * inner, logsm ? d - log(sum) : exp(d) / sum);
      }
    }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.dropout (data), inference: the tuple (data, mask of ones). */
rlyrt_status rk_nn_dropout(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *outs[2] = {NULL, NULL};
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = rk_alloc(c, x->dl.dtype, x->dl.ndim, x->dl.shape, &outs[0])) != RLYRT_OK) return s;
  if ((s = rk_alloc(c, x->dl.dtype, x->dl.ndim, x->dl.shape, &outs[1])) != RLYRT_OK) return drop(outs[0], s);
  memcpy(outs[0]->dl.data, x->dl.data, rlyrt_tensor_nbytes(x));
  int64_t total = rlyrt_tensor_numel(x);
  for (int64_t i = 0; i < total; i++) rlyrt_set_f64(outs[1], i, 1.0);
  return rk_set_result(c, outs, 2);
}

/* {==== Pooling ====} */

/* nn.{max,avg}_pool{1,2,3}d (data), as topi's pool_impl_nd. Window k
** (dilation d) of output position y starts at y*s - pad_before; ceil_mode
** only changes the output size (the relation's). Max pools pad with the
** dtype's lowest value. Avg pools sum the in-bounds elements and divide by
**   count_include_pad: prod over dims of (min(start + (k-1)*d, in + pad_after - 1) - start) / d + 1,
**   otherwise:         max(1, prod of the number of window taps inside the input),
** with C's truncating division, as TVM's generated code; integer averages
** wrap the sum to the dtype, then divide truncating. */
rlyrt_status rk_nn_pool(rlyrt_kernel_call *c) {
  int n = op_dims(c->op, "pool");
  bool is_max = strstr(c->op, "max") != NULL;
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  int pos[MAXSP];
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = pool_layout(c, x, n, pos)) != RLYRT_OK) return s;
  int nd = x->dl.ndim;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  int64_t k[MAXSP], st[MAXSP], dil[MAXSP], pb[MAXSP], pa[MAXSP];
  if (!attr_per_dim(c, "pool_size", n, 1, k) || !attr_per_dim(c, "strides", n, 1, st) ||
      !attr_per_dim(c, "dilation", n, 1, dil) || !attr_padding(c, "padding", n, pb, pa))
    return rk_fail(c, RLYRT_E_ARG, "bad pool_size, strides, dilation or padding attribute");
  for (int i = 0; i < n; i++)
    if (k[i] < 1 || st[i] < 1 || dil[i] < 1)
      return rk_fail(c, RLYRT_E_ARG, "pool_size, strides and dilation must be at least 1");
  bool include_pad = rk_attr_int(c, "count_include_pad", 0) != 0;
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  if ((s = same_rank(c, out, nd)) != RLYRT_OK || (s = check_kept_dims(c, out, x, pos, n)) != RLYRT_OK) return s;
  DLDataType dt = x->dl.dtype;
  bool fl = is_float(dt);
  int64_t nk = prod(k, n), total = rlyrt_tensor_numel(out), oc[MAXR], ic[MAXR], kc[MAXSP];
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, out->dl.shape, nd, oc);
    memcpy(ic, oc, sizeof(int64_t) * (size_t)nd);
    double accf = is_max ? lowest_f(dt) : 0;
    int64_t acci = is_max ? lowest_i(dt) : 0;
    for (int64_t kk = 0; kk < nk; kk++) {
      rk_unravel(kk, k, n, kc);
      bool inside = true;
      for (int i = 0; i < n; i++) {
        int64_t xi = oc[pos[i]] * st[i] - pb[i] + kc[i] * dil[i];
        inside = inside && xi >= 0 && xi < x->dl.shape[pos[i]];
        ic[pos[i]] = xi;
      }
      if (!inside) continue; /* padding: the lowest value, or zero */
      int64_t ii = rk_ravel(ic, x->dl.shape, nd);
      if (fl) {
        double v = rlyrt_get_f64(x, ii);
        accf = is_max ? (v > accf ? v : accf) : accf + v;
      } else {
        int64_t v = rlyrt_get_i64(x, ii);
        acci = is_max ? (v > acci ? v : acci) : add_wrap(acci, v);
      }
    }
    if (!is_max) {
      int64_t count = 1;
      for (int i = 0; i < n; i++) {
        int64_t in = x->dl.shape[pos[i]], start = oc[pos[i]] * st[i] - pb[i], end = start + (k[i] - 1) * dil[i];
        if (include_pad) {
          if (end > in + pa[i] - 1) end = in + pa[i] - 1;
          count *= (end - start) / dil[i] + 1;
        } else {
          int64_t jumps = (dil[i] - 1 - start) / dil[i];
          if (jumps < 0) jumps = 0;
          if (end > in - 1) end = in - 1;
          count *= (end - (start + dil[i] * jumps)) / dil[i] + 1;
        }
      }
      if (!include_pad && count < 1) count = 1;
      if (fl) {
        accf /= (double)count;
      } else {
        if (count == 0) return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "division by zero"));
        acci = div_trunc(dt, acci, count);
      }
    }
    if (fl) rlyrt_set_f64(out, idx, accf);
    else rlyrt_set_i64(out, idx, acci);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.adaptive_{avg,max}_pool{1,2,3}d and nn.global_{avg,max}_pool2d
** (data): output position o of a dim of size in -> out pools the input
** window [floor(o*in/out), ceil((o+1)*in/out)) (global pools: the whole
** dim). Averages divide by the window's size, truncating for integers. */
rlyrt_status rk_nn_adaptive_pool(rlyrt_kernel_call *c) {
  int n = op_dims(c->op, "pool");
  bool is_max = strstr(c->op, "max") != NULL;
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  int pos[MAXSP];
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = pool_layout(c, x, n, pos)) != RLYRT_OK) return s;
  int nd = x->dl.ndim;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  if ((s = same_rank(c, out, nd)) != RLYRT_OK || (s = check_kept_dims(c, out, x, pos, n)) != RLYRT_OK) return s;
  DLDataType dt = x->dl.dtype;
  bool fl = is_float(dt);
  int64_t total = rlyrt_tensor_numel(out), oc[MAXR], ic[MAXR], st[MAXSP], ext[MAXSP], wc[MAXSP];
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, out->dl.shape, nd, oc);
    memcpy(ic, oc, sizeof(int64_t) * (size_t)nd);
    for (int i = 0; i < n; i++) {
      int64_t in = x->dl.shape[pos[i]], on = out->dl.shape[pos[i]], o = oc[pos[i]];
      st[i] = o * in / on;
      ext[i] = ((o + 1) * in + on - 1) / on - st[i];
    }
    int64_t nw = prod(ext, n);
    double accf = is_max ? lowest_f(dt) : 0;
    int64_t acci = is_max ? lowest_i(dt) : 0;
    for (int64_t w = 0; w < nw; w++) {
      rk_unravel(w, ext, n, wc);
      for (int i = 0; i < n; i++) ic[pos[i]] = st[i] + wc[i];
      int64_t ii = rk_ravel(ic, x->dl.shape, nd);
      if (fl) {
        double v = rlyrt_get_f64(x, ii);
        accf = is_max ? (v > accf ? v : accf) : accf + v;
      } else {
        int64_t v = rlyrt_get_i64(x, ii);
        acci = is_max ? (v > acci ? v : acci) : add_wrap(acci, v);
      }
    }
    if (!is_max) {
      if (fl) accf /= (double)nw;
      else if (nw == 0) return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "division by zero"));
      else acci = div_trunc(dt, acci, nw);
    }
    if (fl) rlyrt_set_f64(out, idx, accf);
    else rlyrt_set_i64(out, idx, acci);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Pad, batch_flatten, dilate ====} */

/* i reflected into [0, n) without repeating the edge (NumPy's "reflect",
** which TVM's single reflection agrees with when the padding is < n). */
static int64_t reflect_index(int64_t i, int64_t n) {
  if (n == 1) return 0;
  int64_t p = 2 * (n - 1);
  i %= p;
  if (i < 0) i += p;
  return i < n ? i : p - i;
}

/* nn.pad (data, pad_value; pad_width attribute) and dyn.nn.pad (data,
** pad_width [rank, 2] tensor, pad_value): out index o of an axis reads
** data[o - before] when inside; outside, "constant" gives pad_value (cast
** to data's dtype), "edge" the nearest edge element, "reflect" the
** mirrored element. Negative widths crop. */
rlyrt_status rk_nn_pad(rlyrt_kernel_call *c) {
  bool dyn = strncmp(c->op, "dyn.", 4) == 0;
  rlyrt_tensor *x, *pv, *pw = NULL, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if (dyn && (s = rk_tensor_arg(c, 1, &pw)) != RLYRT_OK) return s;
  if ((s = rk_tensor_arg(c, dyn ? 2 : 1, &pv)) != RLYRT_OK) return s;
  int nd = x->dl.ndim;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  if (rlyrt_tensor_numel(pv) != 1) return rk_fail(c, RLYRT_E_ARG, "pad_value must be a scalar");
  int64_t before[MAXR], after[MAXR], oshape[MAXR];
  if (dyn) {
    if (pw->dl.ndim != 2 || pw->dl.shape[0] != nd || pw->dl.shape[1] != 2)
      return rk_fail(c, RLYRT_E_ARG, "pad_width must have shape (%d, 2)", nd);
    for (int i = 0; i < nd; i++) before[i] = rlyrt_get_i64(pw, 2 * i), after[i] = rlyrt_get_i64(pw, 2 * i + 1);
  } else {
    const rlyrt_attr *a = rlyrt_attr_get(c->attrs, "pad_width");
    if (!a || a->kind != RLYRT_ATTR_ARRAY || a->n != nd) return rk_fail(c, RLYRT_E_ARG, "pad_width needs %d pairs", nd);
    for (int i = 0; i < nd; i++) {
      const rlyrt_attr *p = &a->items[i];
      if (p->kind != RLYRT_ATTR_ARRAY || p->n != 2 || p->items[0].kind != RLYRT_ATTR_INT ||
          p->items[1].kind != RLYRT_ATTR_INT)
        return rk_fail(c, RLYRT_E_ARG, "pad_width entry %d must be a pair of integers", i);
      before[i] = p->items[0].i, after[i] = p->items[1].i;
    }
  }
  for (int i = 0; i < nd; i++) {
    oshape[i] = x->dl.shape[i] + before[i] + after[i];
    if (oshape[i] < 0)
      return rk_fail(c, RLYRT_E_RUNTIME, "padding axis %d of size %lld by [%lld, %lld] leaves a negative size", i,
                     (long long)x->dl.shape[i], (long long)before[i], (long long)after[i]);
  }
  const char *mode = rk_attr_str(c, "pad_mode");
  int m = strcmp(mode, "constant") == 0 ? 0 : strcmp(mode, "edge") == 0 ? 1 : strcmp(mode, "reflect") == 0 ? 2 : -1;
  if (m < 0) return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported pad_mode '%s'", mode);
  if ((s = rk_alloc(c, dyn ? c->outs[0].dtype : x->dl.dtype, nd, oshape, &out)) != RLYRT_OK) return s;
  if (!rlyrt_dtype_eq(out->dl.dtype, x->dl.dtype))
    return drop(out, rk_fail(c, RLYRT_E_INTERNAL, "the result's dtype differs from data's"));
  int64_t total = rlyrt_tensor_numel(out), oc[MAXR], ic[MAXR];
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, oshape, nd, oc);
    bool inside = true;
    for (int i = 0; i < nd; i++) {
      int64_t v = oc[i] - before[i], dim = x->dl.shape[i];
      if (v < 0 || v >= dim) {
        if (m == 0) inside = false;
        else if (dim == 0) return drop(out, rk_fail(c, RLYRT_E_RUNTIME, "cannot pad an empty axis %d in %s mode", i, mode));
        else v = m == 1 ? clamp64(v, 0, dim - 1) : reflect_index(v, dim);
      }
      ic[i] = v;
    }
    if (inside) copy_elem(out, idx, x, rk_ravel(ic, x->dl.shape, nd));
    else cast_elem(out, idx, pv, 0);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.batch_flatten (data): [d0, d1*d2*...], the elements in order. */
rlyrt_status rk_nn_batch_flatten(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if (x->dl.ndim < 1) return rk_fail(c, RLYRT_E_ARG, "data must have rank at least 1");
  int64_t shape[2] = {x->dl.shape[0], prod(x->dl.shape + 1, x->dl.ndim - 1)};
  if ((s = rk_alloc(c, x->dl.dtype, 2, shape, &out)) != RLYRT_OK) return s;
  memcpy(out->dl.data, x->dl.data, rlyrt_tensor_nbytes(x));
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.dilate (data): out[i*s] = data[i] per axis, dilation_value elsewhere. */
rlyrt_status rk_nn_dilate(rlyrt_kernel_call *c) {
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  int nd = x->dl.ndim;
  if (nd > MAXR) return rk_fail(c, RLYRT_E_UNSUPPORTED, "rank %d is too large", nd);
  int64_t st[MAXR], oshape[MAXR], oc[MAXR];
  if (rk_attr_ints(c, "strides", st, MAXR) != nd)
    return rk_fail(c, RLYRT_E_ARG, "strides must have one value per axis (%d)", nd);
  for (int i = 0; i < nd; i++) {
    if (st[i] < 1) return rk_fail(c, RLYRT_E_ARG, "strides must be at least 1");
    oshape[i] = x->dl.shape[i] == 0 ? 0 : (x->dl.shape[i] - 1) * st[i] + 1;
  }
  double fill = rk_attr_float(c, "dilation_value", 0);
  if ((s = rk_alloc(c, x->dl.dtype, nd, oshape, &out)) != RLYRT_OK) return s;
  int64_t total = rlyrt_tensor_numel(out);
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, oshape, nd, oc);
    bool hit = true;
    for (int i = 0; i < nd; i++) {
      hit = hit && oc[i] % st[i] == 0;
      oc[i] /= st[i];
    }
    if (hit) copy_elem(out, idx, x, rk_ravel(oc, x->dl.shape, nd));
    else if (is_bool(out->dl.dtype)) rlyrt_set_i64(out, idx, fill != 0);
    else rlyrt_set_f64(out, idx, fill);
  }
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== Resize and upsampling ====} */

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { CT_HALF_PIXEL, CT_ALIGN_CORNERS, CT_ASYMMETRIC, CT_PYTORCH_HALF_PIXEL, CT_TF_HALF_PIXEL_FOR_NN, CT_TF_CROP };
enum { R_ROUND, R_PREFER_FLOOR, R_PREFER_CEIL, R_FLOOR, R_CEIL };

/* One resize: n spatial dims at axes pos (of data and out alike). */
typedef struct resize_spec {
  int n;
  int pos[MAXSP];
  int method, ctm, rounding;
  double roi[2 * MAXSP];  /* starts, then ends (tf_crop_and_resize) */
  double alpha, extrapolation;
  bool exclude;
  bool int_div;           /* static resize2d: exact integer upscales by division */
} resize_spec;

static rlyrt_status parse_method(const rlyrt_kernel_call *c, const char *m, resize_spec *r) {
  if (strcmp(m, "nearest_neighbor") == 0 || strcmp(m, "nearest") == 0) r->method = M_NEAREST;
  else if (strcmp(m, "linear") == 0 || strcmp(m, "bilinear") == 0 || strcmp(m, "trilinear") == 0) r->method = M_LINEAR;
  else if (strcmp(m, "cubic") == 0 || strcmp(m, "bicubic") == 0) r->method = M_CUBIC;
  else return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported method '%s'", m);
  return RLYRT_OK;
}

static rlyrt_status parse_ctm(const rlyrt_kernel_call *c, const char *m, resize_spec *r) {
  static const char *const names[] = {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                                      "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  for (int i = 0; i < 6; i++)
    if (strcmp(m, names[i]) == 0) {
      r->ctm = i;
      return RLYRT_OK;
    }
  return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported coordinate_transformation_mode '%s'", m);
}

/* rounding_method "" means "round" with align_corners, else "floor". */
static rlyrt_status parse_rounding(const rlyrt_kernel_call *c, const char *m, resize_spec *r) {
  static const char *const names[] = {"round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (!*m) {
    r->rounding = r->ctm == CT_ALIGN_CORNERS ? R_ROUND : R_FLOOR;
    return RLYRT_OK;
  }
  for (int i = 0; i < 5; i++)
    if (strcmp(m, names[i]) == 0) {
      r->rounding = i;
      return RLYRT_OK;
    }
  return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported rounding_method '%s'", m);
}

/* The input coordinate of output coordinate x along spatial dim i (topi's
** get_inx); align_corners with one output gives 0. */
static double in_coord(const resize_spec *r, int i, int64_t x, int64_t in, int64_t out) {
  double scale = (double)in / (double)out, xd = (double)x;
  switch (r->ctm) {
  case CT_HALF_PIXEL: return (xd + 0.5) * scale - 0.5;
  case CT_ALIGN_CORNERS: return out > 1 ? (double)(in - 1) / (double)(out - 1) * xd : 0.0;
  case CT_ASYMMETRIC: return scale * xd;
  case CT_PYTORCH_HALF_PIXEL: return out > 1 ? (xd + 0.5) * scale - 0.5 : 0.0;
  case CT_TF_HALF_PIXEL_FOR_NN: return (xd + 0.5) * scale;
  default: {
    double a = r->roi[i], b = r->roi[r->n + i];
    return out > 1 ? a * (double)(in - 1) + xd * (b - a) * (double)(in - 1) / (double)(out - 1)
                   : 0.5 * (a + b) * (double)(in - 1);
  }
  }
}

/* The nearest index of coordinate v (topi's get_closest_index: "round" is
** round half away from zero; floor and ceil allow 1e-5 of error). */
static int64_t nearest_index(const resize_spec *r, double v) {
  switch (r->rounding) {
  case R_ROUND: return to_index(round(v));
  case R_PREFER_FLOOR: return to_index(ceil(v - 0.5));
  case R_PREFER_CEIL: return to_index(floor(v + 0.5));
  case R_FLOOR: return to_index(floor(v + 1e-5));
  default: return to_index(ceil(v - 1e-5));
  }
}

/* Cubic convolution weights of the taps at floor(v) - 1 .. floor(v) + 2 for
** fraction t (alpha = cubic_alpha). */
static void cubic_weights(double t, double alpha, double *w) {
  double t2 = t * t, t3 = t2 * t;
  w[0] = alpha * (t3 - 2 * t2 + t);
  w[1] = (alpha + 2) * t3 - (alpha + 3) * t2 + 1;
  w[2] = -(alpha + 2) * t3 + (2 * alpha + 3) * t2 - alpha * t;
  w[3] = -alpha * t3 + alpha * t2;
}

/* Fills out (shape set) from data by r, as topi's _resize_{1,2,3}d: the
** value is interpolated in double, clamping taps to the input, and stored
** with a cast (float to int truncates). */
static rlyrt_status resize_run(const rlyrt_kernel_call *c, const resize_spec *r, const rlyrt_tensor *x,
                               rlyrt_tensor *out) {
  int nd = x->dl.ndim, n = r->n;
  int64_t in[MAXSP], on[MAXSP];
  for (int i = 0; i < n; i++) in[i] = x->dl.shape[r->pos[i]], on[i] = out->dl.shape[r->pos[i]];
  int64_t total = rlyrt_tensor_numel(out);
  if (total == 0) return RLYRT_OK;
  for (int i = 0; i < n; i++)
    if (in[i] < 1) return rk_fail(c, RLYRT_E_ARG, "cannot resize an empty input dimension");
  int64_t oc[MAXR], ic[MAXR], taps[MAXSP], tc[MAXSP], base[MAXSP];
  double xin[MAXSP], wt[MAXSP][4];
  for (int i = 0; i < n; i++) taps[i] = r->method == M_NEAREST ? 1 : r->method == M_LINEAR ? 2 : 4;
  int64_t ntaps = prod(taps, n);
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, out->dl.shape, nd, oc);
    memcpy(ic, oc, sizeof(int64_t) * (size_t)nd);
    bool outside = false;
    for (int i = 0; i < n; i++) {
      int64_t y = oc[r->pos[i]];
      xin[i] = in_coord(r, i, y, in[i], on[i]);
      outside = outside || xin[i] < 0 || xin[i] > (double)(in[i] - 1);
      if (r->method == M_NEAREST) {
        bool div = r->int_div && r->ctm == CT_ASYMMETRIC && on[i] % in[i] == 0 &&
                   (double)(on[i] / in[i]) <= 1.0 / (1e-5 * (double)in[i] + 1e-5);
        base[i] = div ? y / (on[i] / in[i]) : nearest_index(r, xin[i]);
        wt[i][0] = 1;
      } else {
        double f = floor(xin[i]), t = xin[i] - f;
        base[i] = to_index(f) - (r->method == M_CUBIC ? 1 : 0);
        if (r->method == M_LINEAR) {
          wt[i][0] = 1 - t, wt[i][1] = t;
        } else {
          cubic_weights(t, r->alpha, wt[i]);
          if (r->exclude) {
            double sum = 0;
            for (int j = 0; j < 4; j++) {
              if (base[i] + j < 0 || base[i] + j > in[i] - 1) wt[i][j] = 0;
              sum += wt[i][j];
            }
            for (int j = 0; j < 4; j++) wt[i][j] /= sum;
          }
        }
      }
    }
    double v = 0;
    if (r->ctm == CT_TF_CROP && outside) {
      v = r->extrapolation;
    } else {
      for (int64_t t = 0; t < ntaps; t++) {
        rk_unravel(t, taps, n, tc);
        double w = 1;
        for (int i = 0; i < n; i++) {
          w *= wt[i][tc[i]];
          ic[r->pos[i]] = clamp64(base[i] + tc[i], 0, in[i] - 1);
        }
        v += w * rlyrt_get_f64(x, rk_ravel(ic, x->dl.shape, nd));
      }
    }
    if (is_bool(out->dl.dtype)) rlyrt_set_i64(out, idx, v != 0);
    else rlyrt_set_f64(out, idx, v);
  }
  return RLYRT_OK;
}

/* The result shape of a dyn.* op: data's shape with the spatial dims
** (axes pos) replaced by size; checks it against the static type. */
static rlyrt_status dyn_alloc(rlyrt_kernel_call *c, const rlyrt_tensor *x, int n, const int *pos, const int64_t *size,
                              rlyrt_tensor **out) {
  int64_t shape[MAXR];
  int nd = x->dl.ndim;
  memcpy(shape, x->dl.shape, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < n; i++) {
    if (size[i] < 0) return rk_fail(c, RLYRT_E_RUNTIME, "negative output size %lld", (long long)size[i]);
    shape[pos[i]] = size[i];
  }
  if (c->nouts < 1 || c->outs[0].ndim != nd) return rk_fail(c, RLYRT_E_INTERNAL, "the result must have rank %d", nd);
  for (int i = 0; i < nd; i++)
    if (c->outs[0].shape[i] >= 0 && c->outs[0].shape[i] != shape[i])
      return rk_fail(c, RLYRT_E_RUNTIME, "output dimension %d is %lld, but the type says %lld", i,
                     (long long)shape[i], (long long)c->outs[0].shape[i]);
  return rk_alloc(c, c->outs[0].dtype, nd, shape, out);
}

/* image.resize{1,2,3}d (data; size, roi attributes) and dyn.image.resize2d
** (data, size [2], roi [4]): spatial dims of the layout (a permutation of
** NC<sp>) become size. method nearest_neighbor/linear/cubic,
** coordinate_transformation_mode, rounding_method, cubic_alpha,
** cubic_exclude and extrapolation_value as topi's resize; roi is
** [starts..., ends...] in the layout's spatial order (D, H, W). Static
** resize2d indexes exact integer nearest/asymmetric upscales by integer
** division, as topi does when the sizes are constants. */
rlyrt_status rk_nn_resize(rlyrt_kernel_call *c) {
  bool dyn = strncmp(c->op, "dyn.", 4) == 0;
  int n = op_dims(c->op, "resize");
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  resize_spec r;
  memset(&r, 0, sizeof r);
  r.n = n;
  char prim[8];
  int pos[MAXSP + 2];
  snprintf(prim, sizeof prim, "NC%s", sp_axes[n]);
  if ((s = get_layout(c, "layout", prim, NULL, pos)) != RLYRT_OK) return s;
  if (x->dl.ndim != n + 2) return rk_fail(c, RLYRT_E_ARG, "data must have rank %d", n + 2);
  for (int i = 0; i < n; i++) r.pos[i] = pos[2 + i];
  if ((s = parse_method(c, rk_attr_str(c, "method"), &r)) != RLYRT_OK) return s;
  if ((s = parse_ctm(c, rk_attr_str(c, "coordinate_transformation_mode"), &r)) != RLYRT_OK) return s;
  if ((s = parse_rounding(c, rk_attr_str(c, "rounding_method"), &r)) != RLYRT_OK) return s;
  r.alpha = rk_attr_float(c, "cubic_alpha", -0.5);
  r.exclude = rk_attr_int(c, "cubic_exclude", 0) != 0;
  r.extrapolation = rk_attr_float(c, "extrapolation_value", 0);
  r.int_div = !dyn && n == 2;
  if (dyn) {
    rlyrt_tensor *size, *roi;
    if ((s = rk_tensor_arg(c, 1, &size)) != RLYRT_OK || (s = rk_tensor_arg(c, 2, &roi)) != RLYRT_OK) return s;
    if (rlyrt_tensor_numel(size) != n || rlyrt_tensor_numel(roi) != 2 * n)
      return rk_fail(c, RLYRT_E_ARG, "size must have %d values and roi %d", n, 2 * n);
    int64_t sz[MAXSP];
    for (int i = 0; i < n; i++) sz[i] = rlyrt_get_i64(size, i);
    for (int i = 0; i < 2 * n; i++) r.roi[i] = rlyrt_get_f64(roi, i);
    if ((s = dyn_alloc(c, x, n, r.pos, sz, &out)) != RLYRT_OK) return s;
  } else {
    const rlyrt_attr *roi = rlyrt_attr_get(c->attrs, "roi");
    if (roi && roi->kind == RLYRT_ATTR_ARRAY) {
      if (roi->n != 2 * n) return rk_fail(c, RLYRT_E_ARG, "roi must have %d values", 2 * n);
      for (int i = 0; i < 2 * n; i++)
        r.roi[i] = roi->items[i].kind == RLYRT_ATTR_FLOAT ? roi->items[i].f : (double)roi->items[i].i;
    }
    if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
    if ((s = same_rank(c, out, n + 2)) != RLYRT_OK) return s;
  }
  if ((s = check_kept_dims(c, out, x, r.pos, n)) != RLYRT_OK) return s;
  if ((s = resize_run(c, &r, x, out)) != RLYRT_OK) return drop(out, s);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* nn.upsampling (scale_h, scale_w, method nearest_neighbor/bilinear/bicubic,
** align_corners) and nn.upsampling3d (scale_d/h/w, method
** nearest_neighbor/trilinear, coordinate_transformation_mode), and their
** dyn.* forms with the scales as scalar arguments: topi's upsampling, a
** resize to round(dim * scale) with coordinate_transformation_mode
** align_corners or asymmetric (2-D) or the attribute (3-D) and the default
** rounding. The static sizes are the type's; the dyn sizes round half
** away from zero, as TVM's shape function. */
rlyrt_status rk_nn_upsampling(rlyrt_kernel_call *c) {
  bool dyn = strncmp(c->op, "dyn.", 4) == 0, three = strstr(c->op, "3d") != NULL;
  int n = three ? 3 : 2;
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  resize_spec r;
  memset(&r, 0, sizeof r);
  r.n = n;
  char prim[8];
  int pos[MAXSP + 2];
  snprintf(prim, sizeof prim, "NC%s", sp_axes[n]);
  if ((s = get_layout(c, "layout", prim, NULL, pos)) != RLYRT_OK) return s;
  if (x->dl.ndim != n + 2) return rk_fail(c, RLYRT_E_ARG, "data must have rank %d", n + 2);
  for (int i = 0; i < n; i++) r.pos[i] = pos[2 + i];
  if ((s = parse_method(c, rk_attr_str(c, "method"), &r)) != RLYRT_OK) return s;
  if (three) {
    if ((s = parse_ctm(c, rk_attr_str(c, "coordinate_transformation_mode"), &r)) != RLYRT_OK) return s;
  } else {
    r.ctm = rk_attr_int(c, "align_corners", 0) ? CT_ALIGN_CORNERS : CT_ASYMMETRIC;
  }
  if ((s = parse_rounding(c, "", &r)) != RLYRT_OK) return s;
  r.alpha = -0.5;
  r.int_div = !dyn && !three;
  if (dyn) {
    int64_t sz[MAXSP];
    for (int i = 0; i < n; i++) {
      rlyrt_tensor *sc;
      if ((s = rk_tensor_arg(c, 1 + i, &sc)) != RLYRT_OK) return s;
      if (rlyrt_tensor_numel(sc) != 1) return rk_fail(c, RLYRT_E_ARG, "scale %d must be a scalar", i + 1);
      double v = round((double)x->dl.shape[r.pos[i]] * rlyrt_get_f64(sc, 0));
      if (!(v >= 0 && v < 1e15)) return rk_fail(c, RLYRT_E_RUNTIME, "bad scale %g", rlyrt_get_f64(sc, 0));
      sz[i] = (int64_t)v;
    }
    if ((s = dyn_alloc(c, x, n, r.pos, sz, &out)) != RLYRT_OK) return s;
  } else {
    if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
    if ((s = same_rank(c, out, n + 2)) != RLYRT_OK) return s;
  }
  if ((s = check_kept_dims(c, out, x, r.pos, n)) != RLYRT_OK) return s;
  if ((s = resize_run(c, &r, x, out)) != RLYRT_OK) return drop(out, s);
  c->result = &out->obj;
  return RLYRT_OK;
}

/* {==== depth_to_space, space_to_depth ====} */

/* nn.depth_to_space (data): with block b and C' = C/b² output channels,
**   DCR: out[n, ch, y*b + i, x*b + j] = data[n, (i*b + j)*C' + ch, y, x],
**   CRD: out[n, ch, y*b + i, x*b + j] = data[n, ch*b² + i*b + j, y, x];
** nn.space_to_depth (data): out[n, (i*b + j)*C + ch, y, x] = data[n, ch,
** y*b + i, x*b + j] (TVM's space_to_depth has no mode). The layout is a
** permutation of NCHW. */
rlyrt_status rk_nn_subpixel(rlyrt_kernel_call *c) {
  bool d2s = strcmp(c->op, "nn.depth_to_space") == 0;
  rlyrt_tensor *x, *out;
  rlyrt_status s;
  int pos[4];
  if ((s = rk_tensor_arg(c, 0, &x)) != RLYRT_OK) return s;
  if ((s = get_layout(c, "layout", "NCHW", NULL, pos)) != RLYRT_OK) return s;
  if (x->dl.ndim != 4) return rk_fail(c, RLYRT_E_ARG, "data must have rank 4");
  int64_t b = rk_attr_int(c, "block_size", 1);
  if (b < 1) return rk_fail(c, RLYRT_E_ARG, "block_size must be at least 1");
  const char *mode = rk_attr_str(c, "mode");
  bool crd = strcmp(mode, "CRD") == 0;
  if (d2s && !crd && strcmp(mode, "DCR") != 0) return rk_fail(c, RLYRT_E_UNSUPPORTED, "unsupported mode '%s'", mode);
  if ((s = rk_alloc_out(c, 0, &out)) != RLYRT_OK) return s;
  if ((s = same_rank(c, out, 4)) != RLYRT_OK) return s;
  const int64_t *xs = x->dl.shape, *os = out->dl.shape;
  int64_t cin = xs[pos[1]], cout = os[pos[1]];
  bool ok = os[pos[0]] == xs[pos[0]] &&
            (d2s ? cout * b * b == cin && os[pos[2]] == xs[pos[2]] * b && os[pos[3]] == xs[pos[3]] * b
                 : cout == cin * b * b && os[pos[2]] == xs[pos[2]] / b && os[pos[3]] == xs[pos[3]] / b);
  if (!ok) return drop(out, rk_fail(c, RLYRT_E_INTERNAL, "the result's shape does not match block_size %lld", (long long)b));
  int64_t total = rlyrt_tensor_numel(out), oc[4], ic[4];
  for (int64_t idx = 0; idx < total; idx++) {
    rk_unravel(idx, os, 4, oc);
    int64_t ch = oc[pos[1]], y = oc[pos[2]], xx = oc[pos[3]];
    ic[pos[0]] = oc[pos[0]];
    if (d2s) {
      int64_t i = y % b, j = xx % b;
      ic[pos[1]] = crd ? ch * b * b + i * b + j : (i * b + j) * cout + ch;
      ic[pos[2]] = y / b, ic[pos[3]] = xx / b;
    } else {
      int64_t blk = ch / cin;
      ic[pos[1]] = ch % cin;
      ic[pos[2]] = y * b + blk / b, ic[pos[3]] = xx * b + blk % b;
    }
    copy_elem(out, idx, x, rk_ravel(ic, xs, 4));
  }
  c->result = &out->obj;
  return RLYRT_OK;
}
