/* rel_transform.c: type relations of the transform ops: reshaping,
** transposing, joining and splitting, slicing, indexing (take, gather,
** scatter), broadcasting and tiling, layout_transform, the init ops (full,
** zeros, ones, arange, one_hot), shape_of, cumulative scans, einsum, meshgrid,
** sparse_to_dense, and the dyn.* variants whose shapes come from tensor
** operands. The rules follow TVM v0.16 (spec sections 9.3 and 11); where
** TVM's relation crashes or answers nonsense on bad input, the relation here
** reports an error instead (noted at each place).
**
** Every relation is called with the argument types as far as they are known
** (rel.h): an unknown argument defers, a known wrong one is one error. Shapes
** may hold `?` (RLY_DIM_ANY): a result dim that depends on one is `?`, and
** `?` is never compared as a mismatch. Temporary arrays come from the
** module's arena (the relation runs once per call; the memory is small). */
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "ops/rel.h"

#define REL(id, fn) RelResult fn(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out);
#include "ops/rel_transform.def"
#undef REL

#define ANY RLY_DIM_ANY
/* A bound on ranks made from attribute values (num_newaxis, sections, the
** lengths of dyn.* shape operands), so that absurd values are an error
** rather than a huge allocation. */
#define MAX_RANK (1 << 20)

/* {==== Helpers ====} */

static int rank(const Type *t) { return t->u.tensor.ndim; }
static const int64_t *shape(const Type *t) { return t->u.tensor.shape; }
static DType dtype(const Type *t) { return t->u.tensor.dtype; }

/* A scratch array of n dims (n may be 0) in the module's arena. */
static int64_t *dims(RelCtx *rc, int n) { return ARENA_ARRAY(rc->m->arena, int64_t, n > 0 ? n : 1); }
static bool *flags(RelCtx *rc, int n) { return ARENA_ARRAY(rc->m->arena, bool, n > 0 ? n : 1); }

static RelResult ok(RelCtx *rc, Type **out, DType dt, int ndim, const int64_t *shp) {
  *out = rel_tensor(rc, dt, ndim, shp);
  return REL_OK;
}

/* True when two dims may be equal (`?` matches anything). */
static bool dim_eq(int64_t a, int64_t b) { return a == b || a == ANY || b == ANY; }

/* Saturating product of non-negative values (shapes that overflow int64 are
** absurd; saturating keeps the arithmetic defined). */
static int64_t smul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > INT64_MAX / b) return INT64_MAX;
  return a * b;
}

/* Number of elements of a shape; false when a dim is `?`. */
static bool num_elements(const int64_t *shp, int n, int64_t *count) {
  int64_t c = 1;
  for (int i = 0; i < n; i++) {
    if (shp[i] == ANY) return false;
    c = smul(c, shp[i]);
  }
  *count = c;
  return true;
}

/* TVM's is_int(): a signed integer dtype. */
static bool is_int_dtype(DType t) { return t.code == DT_INT; }
/* is_int() || is_uint() (bool, uint1, is neither). */
static bool is_index_dtype(DType t) { return t.code == DT_INT || (t.code == DT_UINT && t.bits != 1); }

static const char *dtstr(DType t, char buf[32]) { return dtype_name(t, buf); }

static const char *shp_str(const Type *t, char *buf, size_t n) { return rel_shape_str(shape(t), rank(t), buf, n); }

/* Formats an integer list as a tuple, "(0, -1)", "(3,)" (values as written,
** negative codes included, unlike rel_shape_str which shows -1 as `?`). */
static const char *list_str(const int64_t *v, int n, char *buf, size_t size) {
  size_t len = 0;
  buf[0] = 0;
  len += (size_t)snprintf(buf + len, size - len, "(");
  for (int i = 0; i < n && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "", (long long)v[i]);
  if (len < size) snprintf(buf + len, size - len, n == 1 ? ",)" : ")");
  return buf;
}

/* "axis 3 is out of range for rank 2" unless -ndim <= axis < ndim. */
static RelResult norm_axis(RelCtx *rc, const char *what, int64_t axis, int ndim, int64_t *out) {
  if (!rel_norm_axis(axis, ndim, out))
    return rel_error(rc, "%s %lld is out of range for rank %d", what, (long long)axis, ndim);
  return REL_OK;
}

/* An integer attribute that must be present. */
static RelResult need_int(RelCtx *rc, const Attrs *attrs, const char *field, int64_t *v) {
  if (rel_attr_int(attrs, field, v)) return REL_OK;
  if (rel_attr_is_none(attrs, field)) return rel_error(rc, "attribute '%s' is required", field);
  return rel_error(rc, "attribute '%s' must be an integer", field);
}

/* An integer-list attribute. Entries are integers, None, or symbolic
** (meta[tir.Var]); a bare integer counts as a one-entry list. */
enum { ITEM_INT, ITEM_NONE, ITEM_SYM };
typedef struct IntList {
  int n;
  int64_t *v;     /* the value where kind[i] == ITEM_INT */
  uint8_t *kind;
} IntList;

/* Reads field into *l; false when the whole value is None (or not a list). */
static bool get_list(RelCtx *rc, const Attrs *attrs, const char *field, IntList *l) {
  const AttrValue *v = rel_attr(attrs, field);
  int n;
  const AttrValue *const *items;
  const AttrValue *single[1] = {v};
  if (v->kind == AV_ARRAY) {
    n = v->u.arr.n;
    items = (const AttrValue *const *)v->u.arr.items;
  } else if (v->kind == AV_INT || v->kind == AV_META) {
    n = 1;
    items = single;
  } else {
    return false;
  }
  l->n = n;
  l->v = dims(rc, n);
  l->kind = ARENA_ARRAY(rc->m->arena, uint8_t, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) {
    const AttrValue *it = items[i];
    if (it->kind == AV_INT) {
      l->kind[i] = ITEM_INT;
      l->v[i] = it->u.i.v;
    } else {
      l->kind[i] = it->kind == AV_NONE ? ITEM_NONE : ITEM_SYM;
    }
  }
  return true;
}

/* A list attribute that must be present and hold plain integers. */
static RelResult need_list(RelCtx *rc, const Attrs *attrs, const char *field, IntList *l) {
  if (!get_list(rc, attrs, field, l)) return rel_error(rc, "attribute '%s' is required", field);
  for (int i = 0; i < l->n; i++)
    if (l->kind[i] != ITEM_INT)
      return rel_error(rc, "attribute '%s': entry %d is %s, expected an integer", field, i,
                       l->kind[i] == ITEM_NONE ? "None" : "symbolic");
  return REL_OK;
}

/* A shape attribute (full, zeros, ones, broadcast_to, sparse_to_dense):
** sizes >= 0; a symbolic entry is an unknown `?` dim. */
static RelResult need_shape(RelCtx *rc, const Attrs *attrs, const char *field, int *ndim, int64_t **shp) {
  IntList l;
  if (!get_list(rc, attrs, field, &l)) return rel_error(rc, "attribute '%s' is required", field);
  int64_t *s = dims(rc, l.n);
  for (int i = 0; i < l.n; i++) {
    if (l.kind[i] == ITEM_NONE) return rel_error(rc, "attribute '%s': entry %d is None, expected a size", field, i);
    if (l.kind[i] == ITEM_SYM) {
      s[i] = ANY;
    } else if (l.v[i] < 0) {
      char b[256];
      return rel_error(rc, "attribute '%s' %s has a negative size", field, list_str(l.v, l.n, b, sizeof b));
    } else {
      s[i] = l.v[i];
    }
  }
  *ndim = l.n;
  *shp = s;
  return REL_OK;
}

static bool str_is(const char *s, size_t n, const char *lit) { return n == strlen(lit) && memcmp(s, lit, n) == 0; }

/* A string attribute that must be one of the NULL-terminated choices. */
static RelResult need_choice(RelCtx *rc, const Attrs *attrs, const char *field, const char *const *choices, int *which) {
  size_t n;
  const char *s = rel_attr_str(attrs, field, &n);
  char list[256];
  size_t len = 0;
  list[0] = 0;
  for (int i = 0; choices[i]; i++) {
    if (str_is(s, n, choices[i])) {
      *which = i;
      return REL_OK;
    }
    len += (size_t)snprintf(list + len, sizeof list - len, "%s\"%s\"", i ? ", " : "", choices[i]);
    if (len >= sizeof list) len = sizeof list - 1;
  }
  return rel_error(rc, "attribute '%s' is \"%.*s\", expected one of %s", field, (int)(n > 64 ? 64 : n), s, list);
}

/* The dtype attribute field, or dflt when it is "". */
static DType attr_dtype_or(const Attrs *attrs, const char *field, DType dflt) {
  DType dt;
  return rel_attr_dtype(attrs, field, &dt) ? dt : dflt;
}

/* An operand that must be a scalar (0-d tensor). */
static RelResult need_scalar(RelCtx *rc, const Type *t, const char *what) {
  if (rank(t) == 0) return REL_OK;
  char b[256];
  return rel_error(rc, "%s must be a scalar (0-d tensor), found %s", what, rel_type_str(t, b, sizeof b));
}

/* The static length of a 1-D integer operand holding a shape, axes or
** indices (the dyn.* ops): it fixes the output rank. */
static RelResult static_len(RelCtx *rc, const Type *t, const char *what, int64_t *len) {
  char b[256];
  if (rank(t) != 1) return rel_error(rc, "%s must be a 1-D tensor, found %s", what, rel_type_str(t, b, sizeof b));
  if (!is_index_dtype(dtype(t)))
    return rel_error(rc, "%s must be a tensor of integers, found %s", what, rel_type_str(t, b, sizeof b));
  if (shape(t)[0] == ANY)
    return rel_error(rc, "%s has an unknown length (%s), so the output rank is unknown", what,
                     rel_type_str(t, b, sizeof b));
  if (shape(t)[0] > MAX_RANK)
    return rel_error(rc, "%s has %lld entries, more than the %d dims a tensor may have", what,
                     (long long)shape(t)[0], MAX_RANK);
  *len = shape(t)[0];
  return REL_OK;
}

/* A tensor of n `?` dims. */
static RelResult ok_any(RelCtx *rc, Type **out, DType dt, int64_t n) {
  int64_t *s = dims(rc, (int)n);
  for (int64_t i = 0; i < n; i++) s[i] = ANY;
  return ok(rc, out, dt, (int)n, s);
}

/* {==== reshape, contrib_reverse_reshape, reshape_like ====} */

/* Applies the newshape codes (spec 9.3 and 11) ns0 (nn entries) to the data
** shape ish0 (ndim dims). reversed: contrib_reverse_reshape, which reads
** both lists from the right; the result is in normal order either way.
**   >0 a size; 0 copy the input dim (a size 0 with allowzero); -1 infer one
**   dim; -2 copy the remaining input dims; -3 merge two input dims; -4 split
**   one input dim into the next two values (one may be -1).
** The -1 is the product of the input dims no code consumed divided by the
** sizes written out (TVM's rule); `?` among those inputs gives `?`.
** TVM puts the inferred value at the -1's position in newshape rather than
** in the output (wrong after a -2 or -4); here it goes where the -1 is. */
static RelResult reshape_shape(RelCtx *rc, const int64_t *ish0, int ndim, const int64_t *ns0, int nn, bool allowzero,
                               bool reversed, int64_t **out, int *nout) {
  int64_t *ish = dims(rc, ndim), *ns = dims(rc, nn);
  for (int i = 0; i < ndim; i++) ish[i] = reversed ? ish0[ndim - 1 - i] : ish0[i];
  for (int i = 0; i < nn; i++) ns[i] = reversed ? ns0[nn - 1 - i] : ns0[i];
  int cap = 2 * nn + ndim + 1;
  int64_t *os = dims(rc, cap);
  bool *used_in = flags(rc, ndim), *used_out = flags(rc, cap);
  int no = 0, src = 0, infer = -1;
  char nsb[256];
  list_str(ns0, nn, nsb, sizeof nsb);
  for (int i = 0; i < nn; i++) {
    int64_t v = ns[i];
    int pos = reversed ? nn - 1 - i : i;
    if (v > 0) {
      os[no++] = v;
      src++;
    } else if (v == 0 && allowzero) {
      os[no++] = 0;
      src++;
    } else if (v == 0) {
      if (src >= ndim)
        return rel_error(rc, "newshape %s: the 0 at position %d has no input dimension to copy (data has rank %d)",
                         nsb, pos, ndim);
      used_in[src] = used_out[no] = true;
      os[no++] = ish[src++];
    } else if (v == -1) {
      if (infer >= 0) return rel_error(rc, "newshape %s has more than one -1", nsb);
      infer = no;
      os[no++] = 1;
      src++;
    } else if (v == -2) {
      while (src < ndim) {
        used_in[src] = used_out[no] = true;
        os[no++] = ish[src++];
      }
    } else if (v == -3) {
      if (src + 1 >= ndim)
        return rel_error(rc, "newshape %s: the -3 at position %d needs two input dimensions, but data has rank %d",
                         nsb, pos, ndim);
      int64_t d1 = ish[src], d2 = ish[src + 1];
      used_in[src] = used_in[src + 1] = true;
      src += 2;
      used_out[no] = true;
      os[no++] = d1 == ANY || d2 == ANY ? ANY : smul(d1, d2);
    } else if (v == -4) {
      if (i + 2 >= nn) return rel_error(rc, "newshape %s: the -4 at position %d must be followed by two sizes", nsb, pos);
      if (src >= ndim)
        return rel_error(rc, "newshape %s: the -4 at position %d has no input dimension to split (data has rank %d)",
                         nsb, pos, ndim);
      int64_t d0 = ish[src];
      used_in[src++] = true;
      int64_t d1 = ns[++i], d2 = ns[++i];
      if (d1 == -1 && d2 == -1) return rel_error(rc, "newshape %s: the two sizes after -4 cannot both be -1", nsb);
      if ((d1 < 1 && d1 != -1) || (d2 < 1 && d2 != -1))
        return rel_error(rc, "newshape %s: the sizes after -4 must be positive or -1, found %lld and %lld", nsb,
                         (long long)d1, (long long)d2);
      int64_t known = d1 == -1 ? d2 : d1;
      if (d0 != ANY && (d1 == -1 || d2 == -1) && d0 % known != 0)
        return rel_error(rc, "newshape %s: cannot split dimension %lld into (%lld, %lld)", nsb, (long long)d0,
                         (long long)d1, (long long)d2);
      if (d0 != ANY && d1 != -1 && d2 != -1 && smul(d1, d2) != d0)
        return rel_error(rc, "newshape %s: cannot split dimension %lld into (%lld, %lld)", nsb, (long long)d0,
                         (long long)d1, (long long)d2);
      if (d1 == -1) d1 = d0 == ANY ? ANY : d0 / d2;
      if (d2 == -1) d2 = d0 == ANY ? ANY : d0 / d1;
      used_out[no] = true;
      os[no++] = d1;
      used_out[no] = true;
      os[no++] = d2;
    } else {
      return rel_error(rc, "newshape %s has the invalid code %lld (expected a size, 0, -1, -2, -3 or -4)", nsb,
                       (long long)v);
    }
  }
  if (infer >= 0) {
    int64_t num = 1, den = 1;
    bool any = false;
    for (int i = 0; i < ndim && !any; i++) {
      if (used_in[i]) continue;
      if (ish[i] == ANY) any = true;
      else num = smul(num, ish[i]);
    }
    for (int j = 0; j < no && !any; j++)
      if (!used_out[j] && j != infer) den = smul(den, os[j]);
    if (any) {
      os[infer] = ANY;
    } else if (den == 0 || num % den != 0) {
      return rel_error(rc, "newshape %s: cannot infer the -1: %lld elements do not divide into parts of %lld", nsb,
                       (long long)num, (long long)den);
    } else {
      os[infer] = num / den;
    }
  }
  if (reversed)
    for (int i = 0; i < no / 2; i++) {
      int64_t t = os[i];
      os[i] = os[no - 1 - i];
      os[no - 1 - i] = t;
    }
  *out = os;
  *nout = no;
  return REL_OK;
}

/* reshape, contrib_reverse_reshape: data; newshape (req), allowzero. */
RelResult rel_reshape(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  IntList ns;
  if ((r = need_list(rc, attrs, "newshape", &ns)) != REL_OK) return r;
  bool reversed = rc->op->id == OP_CONTRIB_REVERSE_RESHAPE;
  bool allowzero = rel_attr_bool(attrs, "allowzero");
  int64_t *os = NULL;
  int no = 0;
  r = reshape_shape(rc, shape(data), rank(data), ns.v, ns.n, allowzero, reversed, &os, &no);
  if (r != REL_OK) return r;
  int64_t nin = 0, nout = 0;
  if (num_elements(shape(data), rank(data), &nin) && num_elements(os, no, &nout) && nin != nout) {
    char b1[256], b2[256];
    return rel_error(rc, "cannot reshape %s (%lld elements) into %s (%lld elements)", shp_str(data, b1, sizeof b1),
                     (long long)nin, rel_shape_str(os, no, b2, sizeof b2), (long long)nout);
  }
  return ok(rc, out, dtype(data), no, os);
}

/* One end of a reshape_like range: None = rank, negative counts from the end. */
static RelResult like_bound(RelCtx *rc, const Attrs *attrs, const char *field, int64_t dflt, int ndim, int64_t *v) {
  if (rel_attr_is_none(attrs, field)) {
    *v = dflt;
    return REL_OK;
  }
  RelResult r = need_int(rc, attrs, field, v);
  if (r != REL_OK) return r;
  if (*v < 0) *v += ndim;
  return REL_OK;
}

/* reshape_like: data, like; data's dims [lhs_begin, lhs_end) are replaced by
** like's dims [rhs_begin, rhs_end). The element count must agree when both
** shapes are static (TVM checks whenever data is static). */
RelResult rel_reshape_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "shape_like"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int nd = rank(t[0]), nl = rank(t[1]);
  int64_t lb = 0, le = 0, rb = 0, re = 0;
  if ((r = like_bound(rc, attrs, "lhs_begin", 0, nd, &lb)) != REL_OK) return r;
  if ((r = like_bound(rc, attrs, "lhs_end", nd, nd, &le)) != REL_OK) return r;
  if ((r = like_bound(rc, attrs, "rhs_begin", 0, nl, &rb)) != REL_OK) return r;
  if ((r = like_bound(rc, attrs, "rhs_end", nl, nl, &re)) != REL_OK) return r;
  if (lb < 0 || lb > le || le > nd)
    return rel_error(rc, "the data range [%lld, %lld) is not within rank %d", (long long)lb, (long long)le, nd);
  if (rb < 0 || rb > re || re > nl)
    return rel_error(rc, "the shape_like range [%lld, %lld) is not within rank %d", (long long)rb, (long long)re, nl);
  int no = (int)(lb + (re - rb) + (nd - le));
  int64_t *os = dims(rc, no);
  int k = 0;
  for (int64_t i = 0; i < lb; i++) os[k++] = shape(t[0])[i];
  for (int64_t i = rb; i < re; i++) os[k++] = shape(t[1])[i];
  for (int64_t i = le; i < nd; i++) os[k++] = shape(t[0])[i];
  int64_t nin = 0, nout = 0;
  if (num_elements(shape(t[0]), nd, &nin) && num_elements(os, no, &nout) && nin != nout) {
    char b1[256], b2[256];
    return rel_error(rc, "cannot reshape %s (%lld elements) into %s (%lld elements)", shp_str(t[0], b1, sizeof b1),
                     (long long)nin, rel_shape_str(os, no, b2, sizeof b2), (long long)nout);
  }
  return ok(rc, out, dtype(t[0]), no, os);
}

/* {==== transpose, squeeze, expand_dims ====} */

/* transpose: axes None reverses the dims; otherwise a permutation of the
** axes (negative axes count from the end). */
RelResult rel_transpose(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int nd = rank(data);
  int64_t *os = dims(rc, nd);
  if (rel_attr_is_none(attrs, "axes")) {
    for (int i = 0; i < nd; i++) os[i] = shape(data)[nd - 1 - i];
    return ok(rc, out, dtype(data), nd, os);
  }
  IntList axes;
  if ((r = need_list(rc, attrs, "axes", &axes)) != REL_OK) return r;
  char b[256];
  if (axes.n != nd)
    return rel_error(rc, "axes %s are not a permutation of %d axes", list_str(axes.v, axes.n, b, sizeof b), nd);
  bool *seen = flags(rc, nd);
  for (int i = 0; i < nd; i++) {
    int64_t a = 0;
    if ((r = norm_axis(rc, "axis", axes.v[i], nd, &a)) != REL_OK) return r;
    if (seen[a])
      return rel_error(rc, "axes %s are not a permutation of %d axes", list_str(axes.v, axes.n, b, sizeof b), nd);
    seen[a] = true;
    os[i] = shape(data)[a];
  }
  return ok(rc, out, dtype(data), nd, os);
}

/* squeeze: axis None removes every dim of size 1 (TVM refuses `?` dims
** then: whether they are 1 is unknown); listed axes must have size 1 (a `?`
** is accepted). */
RelResult rel_squeeze(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int nd = rank(data);
  const int64_t *ds = shape(data);
  int64_t *os = dims(rc, nd);
  int no = 0;
  char b[256];
  if (rel_attr_is_none(attrs, "axis")) {
    for (int i = 0; i < nd; i++) {
      if (ds[i] == ANY)
        return rel_error(rc, "axis=None cannot squeeze %s: whether its unknown dimensions are 1 is not known",
                         shp_str(data, b, sizeof b));
      if (ds[i] != 1) os[no++] = ds[i];
    }
    return ok(rc, out, dtype(data), no, os);
  }
  IntList axes;
  if ((r = need_list(rc, attrs, "axis", &axes)) != REL_OK) return r;
  bool *drop = flags(rc, nd);
  for (int i = 0; i < axes.n; i++) {
    int64_t a = 0;
    if ((r = norm_axis(rc, "axis", axes.v[i], nd, &a)) != REL_OK) return r;
    if (ds[a] != 1 && ds[a] != ANY)
      return rel_error(rc, "cannot squeeze axis %lld of %s: its size is %lld, not 1", (long long)axes.v[i],
                       shp_str(data, b, sizeof b), (long long)ds[a]);
    drop[a] = true;
  }
  for (int i = 0; i < nd; i++)
    if (!drop[i]) os[no++] = ds[i];
  return ok(rc, out, dtype(data), no, os);
}

/* expand_dims: inserts num_newaxis dims of size 1 at axis, which ranges over
** -ndim-1..ndim (negative counts from the end of the result). */
RelResult rel_expand_dims(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int64_t axis = 0, nnew = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = need_int(rc, attrs, "num_newaxis", &nnew)) != REL_OK) return r;
  int nd = rank(data);
  if (nnew < 0) return rel_error(rc, "num_newaxis must be >= 0, found %lld", (long long)nnew);
  if (axis < -nd - 1 || axis > nd)
    return rel_error(rc, "axis %lld is out of range for rank %d (expected %d..%d)", (long long)axis, nd, -nd - 1, nd);
  if (nnew > MAX_RANK) return rel_error(rc, "num_newaxis %lld is too large", (long long)nnew);
  int64_t pivot = axis < 0 ? nd + axis + 1 : axis;
  int no = nd + (int)nnew;
  int64_t *os = dims(rc, no);
  int k = 0;
  for (int64_t i = 0; i < pivot; i++) os[k++] = shape(data)[i];
  for (int64_t i = 0; i < nnew; i++) os[k++] = 1;
  for (int64_t i = pivot; i < nd; i++) os[k++] = shape(data)[i];
  return ok(rc, out, dtype(data), no, os);
}

/* {==== concatenate, stack, split ====} */

/* The common checks of a tuple of tensors: at least one field, equal ranks
** and dtypes. */
static RelResult same_rank_dtype(RelCtx *rc, Type *const *fields, int n) {
  if (n == 0) return rel_error(rc, "the tuple must hold at least one tensor, found ()");
  char b1[32], b2[32];
  for (int i = 1; i < n; i++) {
    if (rank(fields[i]) != rank(fields[0]))
      return rel_error(rc, "fields 0 and %d have ranks %d and %d", i, rank(fields[0]), rank(fields[i]));
    if (!dtype_eq(dtype(fields[i]), dtype(fields[0])))
      return rel_error(rc, "fields 0 and %d have dtypes %s and %s", i, dtstr(dtype(fields[0]), b1),
                       dtstr(dtype(fields[i]), b2));
  }
  return REL_OK;
}

static RelResult fields_differ(RelCtx *rc, Type *const *fields, int i, int j, int dim) {
  char b1[256], b2[256];
  return rel_error(rc, "fields %d and %d differ in dimension %d: %s and %s", i, j, dim, shp_str(fields[i], b1, sizeof b1),
                   shp_str(fields[j], b2, sizeof b2));
}

/* concatenate: one tuple argument; the axis dim is the sum (`?` if any is
** `?`); other dims must agree. As in TVM, a non-axis dim that is `?` in
** some fields takes the static value only when the axis dim is `?`
** ((?, 3) ++ (?, ?) -> (?, 3), but (1, 3) ++ (1, ?) -> (2, ?)). */
RelResult rel_concatenate(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  Type *const *fs;
  int n;
  RelResult r = rel_tuple_arg(rc, args, 0, "data", &fs, &n);
  if (r != REL_OK) return r;
  if ((r = same_rank_dtype(rc, fs, n)) != REL_OK) return r;
  int nd = rank(fs[0]);
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  int64_t *os = dims(rc, nd);
  bool dyn = false;
  int64_t sum = 0;
  for (int i = 0; i < n; i++) {
    int64_t d = shape(fs[i])[axis];
    if (d == ANY) dyn = true;
    else sum += d;
  }
  os[axis] = dyn ? ANY : sum;
  for (int d = 0; d < nd; d++) {
    if (d == axis) continue;
    int first = -1, nstatic = 0;
    for (int i = 0; i < n; i++) {
      int64_t v = shape(fs[i])[d];
      if (v == ANY) continue;
      nstatic++;
      if (first < 0) first = i;
      else if (v != shape(fs[first])[d]) return fields_differ(rc, fs, first, i, d);
    }
    os[d] = nstatic == n || (nstatic > 0 && dyn) ? shape(fs[first])[d] : ANY;
  }
  return ok(rc, out, dtype(fs[0]), nd, os);
}

/* stack: one tuple argument of equal shapes; a new axis of size n at axis
** (-ndim-1..ndim). The other dims are the first field's (TVM). TVM skips the
** comparison of the input dim whose index equals the stacking axis; it is
** compared here. */
RelResult rel_stack(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  Type *const *fs;
  int n;
  RelResult r = rel_tuple_arg(rc, args, 0, "data", &fs, &n);
  if (r != REL_OK) return r;
  if ((r = same_rank_dtype(rc, fs, n)) != REL_OK) return r;
  int nd = rank(fs[0]);
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd + 1, &axis)) != REL_OK) return r;
  for (int i = 1; i < n; i++)
    for (int d = 0; d < nd; d++)
      if (!dim_eq(shape(fs[0])[d], shape(fs[i])[d])) return fields_differ(rc, fs, 0, i, d);
  int64_t *os = dims(rc, nd + 1);
  int k = 0;
  for (int64_t d = 0; d < axis; d++) os[k++] = shape(fs[0])[d];
  os[k++] = n;
  for (int64_t d = axis; d < nd; d++) os[k++] = shape(fs[0])[d];
  return ok(rc, out, dtype(fs[0]), nd + 1, os);
}

/* split: indices_or_sections an integer n (n equal parts; n must divide the
** axis dim) or a list of split points (strictly ascending, each > 0 and,
** for a static dim, < the dim, as TVM requires). A tuple of tensors. */
RelResult rel_split(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int nd = rank(data);
  char b[256];
  if (nd == 0) return rel_error(rc, "cannot split a scalar (data must have rank >= 1)");
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  int64_t dim = shape(data)[axis];
  const AttrValue *ios = rel_attr(attrs, "indices_or_sections");
  Type **parts;
  int nparts;
  if (ios->kind == AV_INT) {
    int64_t sec = ios->u.i.v;
    if (sec <= 0) return rel_error(rc, "the number of sections must be positive, found %lld", (long long)sec);
    if (dim != ANY && dim % sec != 0)
      return rel_error(rc, "%lld sections do not divide axis %lld of %s (size %lld)", (long long)sec, (long long)axis,
                       shp_str(data, b, sizeof b), (long long)dim);
    if (sec > MAX_RANK) return rel_error(rc, "%lld sections are too many", (long long)sec);
    nparts = (int)sec;
    parts = ARENA_ARRAY(rc->m->arena, Type *, nparts);
    int64_t *os = dims(rc, nd);
    memcpy(os, shape(data), sizeof(int64_t) * (size_t)nd);
    os[axis] = dim == ANY ? ANY : dim / sec;
    for (int i = 0; i < nparts; i++) parts[i] = rel_tensor(rc, dtype(data), nd, os);
  } else {
    IntList pts;
    if ((r = need_list(rc, attrs, "indices_or_sections", &pts)) != REL_OK) return r;
    nparts = pts.n + 1;
    parts = ARENA_ARRAY(rc->m->arena, Type *, nparts);
    int64_t *os = dims(rc, nd);
    memcpy(os, shape(data), sizeof(int64_t) * (size_t)nd);
    int64_t begin = 0;
    for (int i = 0; i < pts.n; i++) {
      if (pts.v[i] <= begin)
        return rel_error(rc, "split points %s must be positive and strictly ascending",
                         list_str(pts.v, pts.n, b, sizeof b));
      os[axis] = pts.v[i] - begin;
      begin = pts.v[i];
      parts[i] = rel_tensor(rc, dtype(data), nd, os);
    }
    if (dim != ANY && begin >= dim) {
      char b2[256];
      return rel_error(rc, "split points %s must be less than the size %lld of axis %lld of %s",
                       list_str(pts.v, pts.n, b, sizeof b), (long long)dim, (long long)axis,
                       shp_str(data, b2, sizeof b2));
    }
    os[axis] = dim == ANY ? ANY : dim - begin;
    parts[pts.n] = rel_tensor(rc, dtype(data), nd, os);
  }
  *out = rel_tuple(rc, parts, nparts);
  return REL_OK;
}

/* {==== strided_slice, slice_like ====} */

/* TVM's CanonicalizeIndex: negative indices wrap once, then clamp to
** [0, extent] (stride > 0) or [-1, extent-1] (stride < 0). */
static int64_t canon_index(int64_t index, int64_t extent, int64_t stride) {
  int64_t lo = stride < 0 ? -1 : 0, hi = stride < 0 ? extent - 1 : extent;
  if (index < 0) index += extent;
  return index < lo ? lo : index > hi ? hi : index;
}

/* Entry k of list l (n entries) as given: ITEM_INT with *v, ITEM_NONE for a
** None entry, or -1 when the list is shorter (a missing entry). */
static int entry(const IntList *l, bool has, int k, int64_t *v) {
  if (!has || k >= l->n) return -1;
  *v = l->v[k];
  return l->kind[k];
}

/* strided_slice: begin, end, strides, axes (each may be None), slice_mode
** "end" or "size". Without axes every axis is sliced and missing entries
** default (stride 1; begin 0, or the end for a negative stride; end the
** dim, or 0 for a negative stride, as TVM pads them); with axes, the lists
** must have one entry per listed axis. In "size" mode end is a length (-1 or
** any negative: to the end) and strides are ignored. Indices wrap and
** clamp; the size is ceil(|end - begin| / |stride|), and begin past end
** (before end for a negative stride) is an error, as in TVM. A `?` dim that
** is sliced gives `?`. A None list is taken as all-default entries. */
RelResult rel_strided_slice(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int nd = rank(data);
  static const char *const modes[] = {"end", "size", NULL};
  int mode = 0;
  if ((r = need_choice(rc, attrs, "slice_mode", modes, &mode)) != REL_OK) return r;
  bool size_mode = mode == 1;
  static const char *const fields[] = {"begin", "end", "strides", "axes"};
  IntList l[4];
  bool has[4];
  for (int f = 0; f < 4; f++) {
    has[f] = get_list(rc, attrs, fields[f], &l[f]);
    for (int i = 0; has[f] && i < l[f].n; i++)
      if (l[f].kind[i] == ITEM_SYM || (f == 3 && l[f].kind[i] == ITEM_NONE))
        return rel_error(rc, "attribute '%s': entry %d is %s, expected an integer", fields[f], i,
                         l[f].kind[i] == ITEM_NONE ? "None" : "symbolic");
  }
  int n = has[3] ? l[3].n : nd;
  for (int f = 0; f < 3; f++) {
    if (!has[f]) continue;
    if (has[3] && l[f].n != n)
      return rel_error(rc, "attribute '%s' has %d entries but axes has %d", fields[f], l[f].n, n);
    if (!has[3] && l[f].n > nd)
      return rel_error(rc, "attribute '%s' has %d entries but data has rank %d", fields[f], l[f].n, nd);
  }
  int64_t *os = dims(rc, nd);
  memcpy(os, shape(data), sizeof(int64_t) * (size_t)(nd > 0 ? nd : 0));
  bool *seen = flags(rc, nd);
  for (int k = 0; k < n; k++) {
    int64_t axis = k;
    if (has[3]) {
      if ((r = norm_axis(rc, "axis", l[3].v[k], nd, &axis)) != REL_OK) return r;
      if (seen[axis]) return rel_error(rc, "axis %lld is sliced twice", (long long)l[3].v[k]);
      seen[axis] = true;
    }
    int64_t stride = 1, bv = 0, ev = 0;
    if (entry(&l[2], has[2], k, &stride) != ITEM_INT) stride = 1;
    if (stride == 0) return rel_error(rc, "the stride of axis %lld is 0", (long long)axis);
    int64_t step = size_mode ? 1 : stride;
    /* Missing entries are padded with values picked by the real stride's
    ** sign; None entries mean the default for the effective step. */
    int bk = entry(&l[0], has[0], k, &bv), ek = entry(&l[1], has[1], k, &ev);
    if (bk == -1) bv = stride > 0 ? 0 : INT64_MAX;
    else if (bk == ITEM_NONE) bv = step > 0 ? 0 : INT64_MAX;
    if (ek == -1) ev = stride < 0 ? 0 : INT64_MAX;
    int64_t e;
    if (ek == ITEM_NONE) e = step < 0 ? 0 : INT64_MAX;
    else if (!size_mode) e = ev;
    else if (ev < 0) e = INT64_MAX;
    else e = bv > INT64_MAX - ev ? INT64_MAX : bv + ev;
    int64_t dim = shape(data)[axis];
    if (dim == ANY) {
      os[axis] = ANY;
      continue;
    }
    int64_t b = canon_index(bv, dim, step), en = canon_index(e, dim, step);
    if (step < 0 ? en > b : b > en) {
      char b1[256];
      return rel_error(rc, "axis %lld of %s: begin %lld is %s end %lld (stride %lld)", (long long)axis,
                       shp_str(data, b1, sizeof b1), (long long)bv, step < 0 ? "before" : "after", (long long)e,
                       (long long)step);
    }
    uint64_t interval = (uint64_t)(b > en ? b - en : en - b);
    uint64_t astep = step < 0 ? (uint64_t)0 - (uint64_t)step : (uint64_t)step;
    os[axis] = interval == 0 ? 0 : (int64_t)((interval - 1) / astep + 1);
  }
  return ok(rc, out, dtype(data), nd, os);
}

/* slice_like: data, shape_like; the listed axes (None: the first
** min(rank(data), rank(like)) axes) take shape_like's dim, which may not
** exceed data's. */
RelResult rel_slice_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "shape_like"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int nd = rank(t[0]), nl = rank(t[1]);
  const int64_t *ds = shape(t[0]), *ls = shape(t[1]);
  int64_t *os = dims(rc, nd);
  memcpy(os, ds, sizeof(int64_t) * (size_t)(nd > 0 ? nd : 0));
  int naxes;
  int64_t *axes;
  if (rel_attr_is_none(attrs, "axes")) {
    naxes = nd < nl ? nd : nl;
    axes = dims(rc, naxes);
    for (int i = 0; i < naxes; i++) axes[i] = i;
  } else {
    IntList l;
    if ((r = need_list(rc, attrs, "axes", &l)) != REL_OK) return r;
    if (l.n == 0) return rel_error(rc, "attribute 'axes' cannot be empty");
    naxes = l.n;
    axes = l.v;
  }
  char b1[256], b2[256];
  for (int i = 0; i < naxes; i++) {
    int64_t a = 0;
    if ((r = norm_axis(rc, "axis", axes[i], nd, &a)) != REL_OK) return r;
    if (a >= nl)
      return rel_error(rc, "axis %lld is out of range for shape_like of rank %d", (long long)axes[i], nl);
    if (ds[a] != ANY && ls[a] != ANY && ls[a] > ds[a])
      return rel_error(rc, "axis %lld: shape_like %s is larger than data %s", (long long)a, shp_str(t[1], b1, sizeof b1),
                       shp_str(t[0], b2, sizeof b2));
    os[a] = ls[a];
  }
  return ok(rc, out, dtype(t[0]), nd, os);
}

/* {==== take, gather, gather_nd, scatter_elements, scatter_nd ====} */

static RelResult need_index_dtype(RelCtx *rc, const Type *t, const char *what, bool uint_ok) {
  if (uint_ok ? is_index_dtype(dtype(t)) : is_int_dtype(dtype(t))) return REL_OK;
  char b[256];
  return rel_error(rc, "%s must be a tensor of integers, found %s", what, rel_type_str(t, b, sizeof b));
}

/* take: data, indices (integers); axis None flattens data (the result has
** indices' shape); else data[:axis] + indices[batch_dims:] + data[axis+1:].
** batch_dims may be negative (counted on indices' rank; TVM adds it to the
** axis instead, a slip), must not exceed axis, and the batch dims of data
** and indices must agree. mode is "clip", "wrap" or "fast". */
RelResult rel_take(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "indices"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "indices", true)) != REL_OK) return r;
  static const char *const modes[] = {"clip", "wrap", "fast", NULL};
  int mode = 0;
  if ((r = need_choice(rc, attrs, "mode", modes, &mode)) != REL_OK) return r;
  int nd = rank(t[0]), ni = rank(t[1]);
  if (rel_attr_is_none(attrs, "axis")) return ok(rc, out, dtype(t[0]), ni, shape(t[1]));
  int64_t axis = 0, bd = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  if ((r = need_int(rc, attrs, "batch_dims", &bd)) != REL_OK) return r;
  int64_t bd0 = bd;
  if (bd < 0) bd += ni;
  if (bd < 0 || bd > ni)
    return rel_error(rc, "batch_dims %lld is out of range for indices of rank %d", (long long)bd0, ni);
  if (bd > axis)
    return rel_error(rc, "batch_dims %lld must not exceed the axis %lld", (long long)bd0, (long long)axis);
  char b1[256], b2[256];
  for (int64_t i = 0; i < bd; i++)
    if (!dim_eq(shape(t[0])[i], shape(t[1])[i]))
      return rel_error(rc, "batch dimension %lld differs: data %s, indices %s", (long long)i, shp_str(t[0], b1, sizeof b1),
                       shp_str(t[1], b2, sizeof b2));
  int no = nd - 1 + ni - (int)bd;
  int64_t *os = dims(rc, no);
  int k = 0;
  for (int64_t i = 0; i < axis; i++) os[k++] = shape(t[0])[i];
  for (int64_t i = bd; i < ni; i++) os[k++] = shape(t[1])[i];
  for (int64_t i = axis + 1; i < nd; i++) os[k++] = shape(t[0])[i];
  return ok(rc, out, dtype(t[0]), no, os);
}

/* gather: data, indices (signed integers) of the same rank; indices' dims
** equal data's except at axis (>= 1 there). The result has indices' shape. */
RelResult rel_gather(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "indices"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "indices", false)) != REL_OK) return r;
  int nd = rank(t[0]);
  char b1[256], b2[256];
  if (rank(t[1]) != nd)
    return rel_error(rc, "indices %s must have the rank of data %s", shp_str(t[1], b1, sizeof b1),
                     shp_str(t[0], b2, sizeof b2));
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  for (int i = 0; i < nd; i++) {
    int64_t di = shape(t[1])[i];
    if (i == axis ? (di != ANY && di < 1) : !dim_eq(di, shape(t[0])[i]))
      return rel_error(rc, "indices %s and data %s differ in dimension %d (axis %lld)", shp_str(t[1], b1, sizeof b1),
                       shp_str(t[0], b2, sizeof b2), i, (long long)axis);
  }
  return ok(rc, out, dtype(t[0]), nd, shape(t[1]));
}

/* gather_nd: data (X_0..X_{N-1}), indices (M, Y_0..Y_{K-1}) with M static
** (or given by index_rank) and M + batch_dims <= N; the first batch_dims
** Y's equal the X's. Result (Y_0..Y_{K-1}, X_{M+B}..X_{N-1}). */
RelResult rel_gather_nd(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "indices"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "indices", true)) != REL_OK) return r;
  int nd = rank(t[0]), ni = rank(t[1]);
  char b1[256], b2[256];
  if (ni < 1) return rel_error(rc, "indices must have rank >= 1, found %s", shp_str(t[1], b1, sizeof b1));
  int64_t m = shape(t[1])[0], bd = 0, ir = 0;
  if (m == ANY && rel_attr_int(attrs, "index_rank", &ir)) {
    if (ir < 0) return rel_error(rc, "index_rank must be >= 0, found %lld", (long long)ir);
    m = ir;
  }
  if (m == ANY)
    return rel_error(rc, "the first dimension of indices %s must be static (or index_rank given)",
                     shp_str(t[1], b1, sizeof b1));
  if ((r = need_int(rc, attrs, "batch_dims", &bd)) != REL_OK) return r;
  if (bd < 0 || bd > ni - 1) return rel_error(rc, "batch_dims %lld is out of range for indices %s", (long long)bd,
                                              shp_str(t[1], b1, sizeof b1));
  if (m + bd > nd)
    return rel_error(rc, "indices %s index %lld dimensions after %lld batch dimensions, but data %s has rank %d",
                     shp_str(t[1], b1, sizeof b1), (long long)m, (long long)bd, shp_str(t[0], b2, sizeof b2), nd);
  for (int64_t i = 0; i < bd; i++)
    if (!dim_eq(shape(t[0])[i], shape(t[1])[i + 1]))
      return rel_error(rc, "batch dimension %lld differs: data %s, indices %s", (long long)i, shp_str(t[0], b1, sizeof b1),
                       shp_str(t[1], b2, sizeof b2));
  int no = (ni - 1) + (nd - (int)(m + bd));
  int64_t *os = dims(rc, no);
  int k = 0;
  for (int i = 1; i < ni; i++) os[k++] = shape(t[1])[i];
  for (int64_t i = m + bd; i < nd; i++) os[k++] = shape(t[0])[i];
  return ok(rc, out, dtype(t[0]), no, os);
}

static RelResult same_dtype(RelCtx *rc, const Type *a, const char *an, const Type *b, const char *bn) {
  if (dtype_eq(dtype(a), dtype(b))) return REL_OK;
  char b1[32], b2[32];
  return rel_error(rc, "%s and %s have dtypes %s and %s", an, bn, dtstr(dtype(a), b1), dtstr(dtype(b), b2));
}

/* scatter_elements: data, indices (integers), updates; indices and updates
** have the same shape and data's rank; updates has data's dtype. The result
** is data's type. reduction: update, add, mul, mean, min, max. */
RelResult rel_scatter_elements(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "indices", "updates"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "indices", true)) != REL_OK) return r;
  if ((r = same_dtype(rc, t[0], "data", t[2], "updates")) != REL_OK) return r;
  int nd = rank(t[0]);
  char b1[256], b2[256], b3[256];
  bool match = rank(t[1]) == nd && rank(t[2]) == nd;
  for (int i = 0; match && i < nd; i++) match = dim_eq(shape(t[1])[i], shape(t[2])[i]);
  if (!match)
    return rel_error(rc, "indices %s and updates %s must have the same shape, of the rank of data %s",
                     shp_str(t[1], b1, sizeof b1), shp_str(t[2], b2, sizeof b2), shp_str(t[0], b3, sizeof b3));
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  static const char *const reds[] = {"update", "add", "mul", "mean", "min", "max", NULL};
  int red = 0;
  if ((r = need_choice(rc, attrs, "reduction", reds, &red)) != REL_OK) return r;
  return ok(rc, out, dtype(t[0]), nd, shape(t[0]));
}

/* scatter_nd: data (X_0..X_{N-1}), indices (M, Y_0..Y_{K-1}) with M static
** and <= N, updates (Y_0..Y_{K-1}, X_M..X_{N-1}). The result is data's type.
** mode: update, add, mul, min, max. */
RelResult rel_scatter_nd(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "indices", "updates"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "indices", true)) != REL_OK) return r;
  if ((r = same_dtype(rc, t[0], "data", t[2], "updates")) != REL_OK) return r;
  int nd = rank(t[0]), ni = rank(t[1]);
  char b1[256], b2[256], b3[256];
  if (ni < 1) return rel_error(rc, "indices must have rank >= 1, found %s", shp_str(t[1], b1, sizeof b1));
  int64_t m = shape(t[1])[0];
  if (m == ANY)
    return rel_error(rc, "the first dimension of indices %s must be static", shp_str(t[1], b1, sizeof b1));
  if (m > nd)
    return rel_error(rc, "indices %s index %lld dimensions, but data %s has rank %d", shp_str(t[1], b1, sizeof b1),
                     (long long)m, shp_str(t[0], b2, sizeof b2), nd);
  int ne = (ni - 1) + (nd - (int)m);
  int64_t *want = dims(rc, ne);
  int k = 0;
  for (int i = 1; i < ni; i++) want[k++] = shape(t[1])[i];
  for (int64_t i = m; i < nd; i++) want[k++] = shape(t[0])[i];
  bool match = rank(t[2]) == ne;
  for (int i = 0; match && i < ne; i++) match = dim_eq(want[i], shape(t[2])[i]);
  if (!match) {
    char b4[256];
    return rel_error(rc, "updates must have shape %s for indices %s and data %s, found %s",
                     rel_shape_str(want, ne, b1, sizeof b1), shp_str(t[1], b2, sizeof b2), shp_str(t[0], b3, sizeof b3),
                     shp_str(t[2], b4, sizeof b4));
  }
  static const char *const modes[] = {"update", "add", "mul", "min", "max", NULL};
  int mode = 0;
  if ((r = need_choice(rc, attrs, "mode", modes, &mode)) != REL_OK) return r;
  return ok(rc, out, dtype(t[0]), nd, shape(t[0]));
}

/* {==== broadcast_to, broadcast_to_like, tile, repeat, reverse ====} */

/* True when shape a broadcasts to exactly shape b (right-aligned: each dim
** of a is 1, equal, or `?`). */
static bool broadcasts_to(const int64_t *a, int na, const int64_t *b, int nb) {
  if (na > nb) return false;
  for (int i = 0; i < na; i++) {
    int64_t x = a[na - 1 - i], y = b[nb - 1 - i];
    if (x != 1 && !dim_eq(x, y)) return false;
  }
  return true;
}

/* broadcast_to: data; shape (req). data must broadcast to the shape. */
RelResult rel_broadcast_to(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int no = 0;
  int64_t *os = NULL;
  if ((r = need_shape(rc, attrs, "shape", &no, &os)) != REL_OK) return r;
  if (!broadcasts_to(shape(data), rank(data), os, no)) {
    char b1[256], b2[256];
    return rel_error(rc, "cannot broadcast %s to %s", shp_str(data, b1, sizeof b1), rel_shape_str(os, no, b2, sizeof b2));
  }
  return ok(rc, out, dtype(data), no, os);
}

/* broadcast_to_like: data, like of the same dtype; data must broadcast to
** like's shape; the result is like's type. */
RelResult rel_broadcast_to_like(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  (void)attrs;
  static const char *const names[] = {"data", "broadcast_type"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = same_dtype(rc, t[0], "data", t[1], "broadcast_type")) != REL_OK) return r;
  if (!broadcasts_to(shape(t[0]), rank(t[0]), shape(t[1]), rank(t[1]))) {
    char b1[256], b2[256];
    return rel_error(rc, "cannot broadcast %s to %s", shp_str(t[0], b1, sizeof b1), shp_str(t[1], b2, sizeof b2));
  }
  return ok(rc, out, dtype(t[1]), rank(t[1]), shape(t[1]));
}

/* tile: data; reps (req, each >= 1). The shorter of data's shape and reps
** is padded with leading 1s; each dim is multiplied (`?` stays `?`; a
** symbolic rep gives `?`). */
RelResult rel_tile(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  IntList reps;
  if (!get_list(rc, attrs, "reps", &reps)) return rel_error(rc, "attribute 'reps' is required");
  char b[256];
  for (int i = 0; i < reps.n; i++) {
    if (reps.kind[i] == ITEM_NONE) return rel_error(rc, "attribute 'reps': entry %d is None, expected an integer", i);
    if (reps.kind[i] == ITEM_INT && reps.v[i] < 1)
      return rel_error(rc, "reps %s must be positive", list_str(reps.v, reps.n, b, sizeof b));
  }
  int nd = rank(data), no = nd > reps.n ? nd : reps.n;
  int64_t *os = dims(rc, no);
  for (int i = 0; i < no; i++) {
    int di = i - (no - nd), ri = i - (no - reps.n);
    int64_t d = di >= 0 ? shape(data)[di] : 1;
    int64_t rep = ri >= 0 ? (reps.kind[ri] == ITEM_INT ? reps.v[ri] : ANY) : 1;
    os[i] = d == ANY || rep == ANY ? ANY : smul(d, rep);
  }
  return ok(rc, out, dtype(data), no, os);
}

/* repeat: data; repeats (req, >= 1), axis (req here: TVM's relation reads
** it unchecked). The axis dim is multiplied. */
RelResult rel_repeat(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int64_t reps = 0, axis = 0;
  if ((r = need_int(rc, attrs, "repeats", &reps)) != REL_OK) return r;
  if (reps < 1) return rel_error(rc, "repeats must be >= 1, found %lld", (long long)reps);
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  int nd = rank(data);
  if ((r = norm_axis(rc, "axis", axis, nd, &axis)) != REL_OK) return r;
  int64_t *os = dims(rc, nd);
  memcpy(os, shape(data), sizeof(int64_t) * (size_t)nd);
  os[axis] = os[axis] == ANY ? ANY : smul(os[axis], reps);
  return ok(rc, out, dtype(data), nd, os);
}

/* reverse: data; axis (req; TVM's relation reads it unchecked). ≡data. */
RelResult rel_reverse(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, rank(data), &axis)) != REL_OK) return r;
  return ok(rc, out, dtype(data), rank(data), shape(data));
}

/* reverse_sequence: data, seq_lengths (1-D signed integers, one per batch
** entry); seq_axis, batch_axis in range. ≡data. */
RelResult rel_reverse_sequence(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "seq_lengths"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  char b1[256], b2[256];
  if (rank(t[1]) != 1 || !is_int_dtype(dtype(t[1])))
    return rel_error(rc, "seq_lengths must be a 1-D tensor of integers, found %s", rel_type_str(t[1], b1, sizeof b1));
  int nd = rank(t[0]);
  int64_t seq = 0, batch = 0;
  if ((r = need_int(rc, attrs, "seq_axis", &seq)) != REL_OK) return r;
  if ((r = need_int(rc, attrs, "batch_axis", &batch)) != REL_OK) return r;
  if ((r = norm_axis(rc, "batch_axis", batch, nd, &batch)) != REL_OK) return r;
  if ((r = norm_axis(rc, "seq_axis", seq, nd, &seq)) != REL_OK) return r;
  if (!dim_eq(shape(t[1])[0], shape(t[0])[batch]))
    return rel_error(rc, "seq_lengths %s must have one entry per batch entry of data %s (batch_axis %lld)",
                     shp_str(t[1], b1, sizeof b1), shp_str(t[0], b2, sizeof b2), (long long)batch);
  return ok(rc, out, dtype(t[0]), nd, shape(t[0]));
}

/* {==== layout_transform ====} */

/* A parsed layout: axes in order; factor 0 for a primal (upper-case) axis,
** the split factor for a sub-axis (lower-case, e.g. the 16c of NCHW16c). */
typedef struct Layout {
  int n;
  char axis[64];
  int64_t factor[64];
} Layout;

static RelResult parse_layout(RelCtx *rc, const char *field, const char *s, size_t len, Layout *l) {
  l->n = 0;
  int64_t factor = 0;
  bool digits = false;
  int shown = (int)(len > 64 ? 64 : len);
  if (len == 0 || str_is(s, len, "__undef__")) return rel_error(rc, "attribute '%s' is an undefined layout", field);
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (factor > 100000000) return rel_error(rc, "layout \"%.*s\": the factor is too large", shown, s);
      factor = factor * 10 + (c - '0');
      digits = true;
      continue;
    }
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    if (!upper && !lower) return rel_error(rc, "layout \"%.*s\": invalid character '%c'", shown, s, c);
    if (upper && digits)
      return rel_error(rc, "layout \"%.*s\": a factor cannot precede the primal axis %c", shown, s, c);
    if (lower && factor <= 0)
      return rel_error(rc, "layout \"%.*s\": the sub-axis %c needs a positive factor (e.g. 16%c)", shown, s, c, c);
    if (l->n == 64) return rel_error(rc, "layout \"%.*s\" has too many axes", shown, s);
    for (int j = 0; j < l->n; j++)
      if (l->axis[j] == c) return rel_error(rc, "layout \"%.*s\": duplicate axis %c", shown, s, c);
    l->axis[l->n] = c;
    l->factor[l->n++] = upper ? 0 : factor;
    factor = 0;
    digits = false;
  }
  if (digits) return rel_error(rc, "layout \"%.*s\" ends with a factor and no sub-axis", shown, s);
  for (int j = 0; j < l->n; j++) {
    if (l->factor[j] == 0) continue;
    char p = (char)(l->axis[j] - 'a' + 'A');
    bool found = false;
    for (int k = 0; k < l->n; k++) found = found || l->axis[k] == p;
    if (!found) return rel_error(rc, "layout \"%.*s\": sub-axis %c has no primal axis %c", shown, s, l->axis[j], p);
  }
  return REL_OK;
}

/* Index of axis c in l, or -1. */
static int layout_find(const Layout *l, char c) {
  for (int i = 0; i < l->n; i++)
    if (l->axis[i] == c) return i;
  return -1;
}

/* layout_transform: data; src_layout, dst_layout (req). Both layouts have
** the same primal axes. Each primal axis's total extent (its dim times its
** sub-axis factor in src) is redistributed: the dst primal dim is the
** extent divided by the dst factor (an error when it does not divide, where
** TVM would silently floor), a dst sub-axis dim is its factor. src sub-axis
** dims must equal their factors. `?` extents stay `?`. */
RelResult rel_layout_transform(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  size_t sl, dl;
  const char *ss = rel_attr_str(attrs, "src_layout", &sl), *dsl = rel_attr_str(attrs, "dst_layout", &dl);
  Layout src, dst;
  if ((r = parse_layout(rc, "src_layout", ss, sl, &src)) != REL_OK) return r;
  if ((r = parse_layout(rc, "dst_layout", dsl, dl, &dst)) != REL_OK) return r;
  int ssh = (int)(sl > 64 ? 64 : sl), dsh = (int)(dl > 64 ? 64 : dl);
  char b[256];
  if (rank(data) != src.n)
    return rel_error(rc, "data %s has rank %d, but src_layout \"%.*s\" has %d axes", shp_str(data, b, sizeof b),
                     rank(data), ssh, ss, src.n);
  for (int pass = 0; pass < 2; pass++) {
    const Layout *a = pass ? &dst : &src, *o = pass ? &src : &dst;
    for (int i = 0; i < a->n; i++)
      if (a->factor[i] == 0 && layout_find(o, a->axis[i]) < 0)
        return rel_error(rc, "cannot convert layout \"%.*s\" to \"%.*s\": axis %c is only in the %s", ssh, ss, dsh, dsl,
                         a->axis[i], pass ? "destination" : "source");
  }
  for (int i = 0; i < src.n; i++) {
    int64_t d = shape(data)[i];
    if (src.factor[i] != 0 && d != ANY && d != src.factor[i])
      return rel_error(rc, "dimension %d of data %s is %lld, but src_layout \"%.*s\" gives sub-axis %c the factor %lld", i,
                       shp_str(data, b, sizeof b), (long long)d, ssh, ss, src.axis[i], (long long)src.factor[i]);
  }
  int64_t *os = dims(rc, dst.n);
  for (int i = 0; i < dst.n; i++) {
    if (dst.factor[i] != 0) {
      os[i] = dst.factor[i];
      continue;
    }
    char p = dst.axis[i], sub = (char)(p - 'A' + 'a');
    int si = layout_find(&src, p), ssub = layout_find(&src, sub), dsub = layout_find(&dst, sub);
    int64_t ext = shape(data)[si];
    if (ext != ANY && ssub >= 0) ext = smul(ext, src.factor[ssub]);
    int64_t f = dsub >= 0 ? dst.factor[dsub] : 1;
    if (ext != ANY && ext % f != 0)
      return rel_error(rc, "cannot convert %s from \"%.*s\" to \"%.*s\": axis %c has %lld elements, not divisible by %lld",
                       shp_str(data, b, sizeof b), ssh, ss, dsh, dsl, p, (long long)ext, (long long)f);
    os[i] = ext == ANY ? ANY : ext / f;
  }
  return ok(rc, out, dtype(data), dst.n, os);
}

/* {==== one_hot, full, zeros, ones, arange, shape_of ====} */

/* one_hot: indices, on_value, off_value (scalars) [, depth (a scalar, for
** dyn.one_hot)]; depth > 0 (static op), axis -1 (last) or 0..ndim; dtype ""
** takes on_value's (TVM would leave the dtype void). The depth dim is
** inserted at axis (`?` for dyn.one_hot). */
RelResult rel_one_hot(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  bool dyn = rc->op->id == OP_DYN_ONE_HOT;
  static const char *const names[] = {"indices", "on_value", "off_value", "depth"};
  const Type *t[4];
  RelResult r = rel_tensor_args(rc, args, dyn ? 4 : 3, names, t);
  if (r != REL_OK) return r;
  if ((r = need_scalar(rc, t[1], "on_value")) != REL_OK) return r;
  if ((r = need_scalar(rc, t[2], "off_value")) != REL_OK) return r;
  if (dyn && (r = need_scalar(rc, t[3], "depth")) != REL_OK) return r;
  int64_t depth = ANY, axis = 0;
  if (!dyn) {
    if ((r = need_int(rc, attrs, "depth", &depth)) != REL_OK) return r;
    if (depth <= 0) return rel_error(rc, "depth must be positive, found %lld", (long long)depth);
  }
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  int nd = rank(t[0]);
  if (axis < -1 || axis > nd)
    return rel_error(rc, "axis %lld is out of range for indices of rank %d (expected -1..%d)", (long long)axis, nd, nd);
  int64_t at = axis == -1 ? nd : axis;
  int64_t *os = dims(rc, nd + 1);
  int k = 0;
  for (int i = 0; i <= nd; i++) os[i] = i == at ? depth : shape(t[0])[k++];
  return ok(rc, out, attr_dtype_or(attrs, "dtype", dtype(t[1])), nd + 1, os);
}

/* full: fill_value (a scalar); shape (req), dtype ("" = fill_value's). */
RelResult rel_full(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *fill;
  RelResult r = rel_tensor_arg(rc, args, 0, "fill_value", &fill);
  if (r != REL_OK) return r;
  if ((r = need_scalar(rc, fill, "fill_value")) != REL_OK) return r;
  int no = 0;
  int64_t *os = NULL;
  if ((r = need_shape(rc, attrs, "shape", &no, &os)) != REL_OK) return r;
  return ok(rc, out, attr_dtype_or(attrs, "dtype", dtype(fill)), no, os);
}

/* zeros, ones: no arguments; shape (req), dtype ("" = float32, the Python
** API's default; TVM's relation would leave the dtype void). */
RelResult rel_init(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)args;
  (void)nargs;
  int no = 0;
  int64_t *os = NULL;
  RelResult r = need_shape(rc, attrs, "shape", &no, &os);
  if (r != REL_OK) return r;
  return ok(rc, out, attr_dtype_or(attrs, "dtype", DTYPE(DT_FLOAT, 32)), no, os);
}

/* arange: start, stop, step, each a scalar of the dtype attribute (req). The
** result is Tensor[(?), dtype]: TVM's relation gives a static length only
** when the start/stop/step attributes are relay Constants, which in text
** are metadata references whose values the relation does not see. */
RelResult rel_arange(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"start", "stop", "step"};
  const Type *t[3];
  RelResult r = rel_tensor_args(rc, args, 3, names, t);
  if (r != REL_OK) return r;
  DType dt;
  if (!rel_attr_dtype(attrs, "dtype", &dt)) return rel_error(rc, "attribute 'dtype' is required");
  char b1[32], b2[256];
  for (int i = 0; i < 3; i++)
    if (rank(t[i]) != 0 || !dtype_eq(dtype(t[i]), dt))
      return rel_error(rc, "argument %d (%s) must be a %s scalar, found %s", i + 1, names[i], dtstr(dt, b1),
                       rel_type_str(t[i], b2, sizeof b2));
  int64_t len = ANY;
  return ok(rc, out, dt, 1, &len);
}

/* shape_of: data; dtype ("" = int32). Tensor[(ndim), dtype]; for a 0-d
** input TVM's RankShape gives a 0-d result, kept here. */
RelResult rel_shape_of(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  DType dt = attr_dtype_or(attrs, "dtype", DTYPE(DT_INT, 32));
  if (!is_index_dtype(dt)) {
    char b[32];
    return rel_error(rc, "dtype must be an integer type, found %s", dtstr(dt, b));
  }
  int64_t n = rank(data);
  return ok(rc, out, dt, n ? 1 : 0, &n);
}

/* {==== cumsum, cumprod, einsum, meshgrid, sparse_to_dense ====} */

/* cumsum, cumprod: data; axis (None: over the flattened data, a 1-D result;
** a 0-d input gives (1), as NumPy, where TVM's relation reads out of
** bounds), dtype ("" = data's), exclusive. */
RelResult rel_scan(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *data;
  RelResult r = rel_tensor_arg(rc, args, 0, "data", &data);
  if (r != REL_OK) return r;
  DType dt = attr_dtype_or(attrs, "dtype", dtype(data));
  if (rel_attr_is_none(attrs, "axis")) {
    int64_t n;
    if (!num_elements(shape(data), rank(data), &n)) n = ANY;
    return ok(rc, out, dt, 1, &n);
  }
  int64_t axis = 0;
  if ((r = need_int(rc, attrs, "axis", &axis)) != REL_OK) return r;
  if ((r = norm_axis(rc, "axis", axis, rank(data), &axis)) != REL_OK) return r;
  return ok(rc, out, dt, rank(data), shape(data));
}

/* The broadcast of two label extents (TVM's einsum rule): equal, or 1 with
** anything; a `?` gives `?`. False when they conflict. */
static bool einsum_extent(int64_t a, int64_t b, int64_t *r) {
  if (a == ANY || b == ANY) *r = ANY;
  else if (a == b || b == 1) *r = a;
  else if (a == 1) *r = b;
  else return false;
  return true;
}

/* The ellipsis inside parsed einsum subscripts. */
#define ELLIPSIS '.'

/* einsum: one tuple argument of tensors of one dtype; equation (req) as
** NumPy writes it: subscripts of letters, ',' between operands, an optional
** "->output" (without it the output is every label used exactly once, in
** ASCII order, after the ellipsis if an operand has one), spaces ignored.
** Each operand has one label per dim; "..." (at most once per subscript)
** stands for the dims the labels leave over. A label's extents broadcast
** (equal, or 1; TVM's rule), and so do the ellipsis sub-shapes; a label
** repeated within an operand (ii) takes its diagonal. Output labels must
** occur in the inputs, once each. */
RelResult rel_einsum(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  Type *const *fs;
  int n;
  RelResult r = rel_tuple_arg(rc, args, 0, "data", &fs, &n);
  if (r != REL_OK) return r;
  if (n == 0) return rel_error(rc, "the tuple must hold at least one tensor, found ()");
  char b1[32], b2[32];
  for (int i = 1; i < n; i++)
    if (!dtype_eq(dtype(fs[i]), dtype(fs[0])))
      return rel_error(rc, "fields 0 and %d have dtypes %s and %s", i, dtstr(dtype(fs[0]), b1), dtstr(dtype(fs[i]), b2));
  if (rel_attr_is_none(attrs, "equation")) return rel_error(rc, "attribute 'equation' is required");
  size_t len;
  const char *eq = rel_attr_str(attrs, "equation", &len);
  int shown = (int)(len > 128 ? 128 : len);
  /* Parse: the labels of every subscript go to one buffer; sub k is
  ** labels[start[k] .. start[k+1]). */
  char *labels = ARENA_ARRAY(rc->m->arena, char, len + 1);
  int *start = ARENA_ARRAY(rc->m->arena, int, len + 2);
  int nsubs = 0, nl = 0;
  bool arrow = false, ell = false;
  start[0] = 0;
  for (size_t i = 0; i < len; i++) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '-' || c == ',') {
      if (c == '-' && (arrow || i + 1 >= len || eq[i + 1] != '>'))
        return rel_error(rc, "equation \"%.*s\": '-' must start the one '->'", shown, eq);
      if (c == ',' && arrow) return rel_error(rc, "equation \"%.*s\": ',' after '->'", shown, eq);
      if (c == '-') {
        i++;
        arrow = true;
      }
      start[++nsubs] = nl;
      ell = false;
    } else if (c == '.') {
      if (ell || i + 2 >= len || eq[i + 1] != '.' || eq[i + 2] != '.')
        return rel_error(rc, "equation \"%.*s\": '.' must be part of one '...' per subscript", shown, eq);
      labels[nl++] = ELLIPSIS;
      ell = true;
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      labels[nl++] = c;
    } else {
      return rel_error(rc, "equation \"%.*s\": invalid character '%c' (subscripts are letters)", shown, eq, c);
    }
  }
  start[nsubs + 1] = nl;
  int ninputs = arrow ? nsubs : nsubs + 1;
  if (ninputs != n)
    return rel_error(rc, "equation \"%.*s\" has %d operand%s, but the tuple has %d tensor%s", shown, eq, ninputs,
                     ninputs == 1 ? "" : "s", n, n == 1 ? "" : "s");
  /* Extents of labels and the common ellipsis shape. */
  int64_t ext[128] = {0};
  bool seen[128] = {false};
  int maxr = 0;
  for (int k = 0; k < n; k++) maxr = rank(fs[k]) > maxr ? rank(fs[k]) : maxr;
  int64_t *ellshape = dims(rc, maxr), *tmp = dims(rc, maxr);
  int nell = 0;
  bool any_ell = false;
  char sb[256];
  for (int k = 0; k < n; k++) {
    const char *sub = labels + start[k];
    int sl = start[k + 1] - start[k], nlab = 0, rk = rank(fs[k]);
    bool has_ell = false;
    for (int j = 0; j < sl; j++) {
      if (sub[j] == ELLIPSIS) has_ell = true;
      else nlab++;
    }
    if (has_ell ? nlab > rk : nlab != rk)
      return rel_error(rc, "equation \"%.*s\": operand %d has %d label%s for rank %d (%s)", shown, eq, k, nlab,
                       nlab == 1 ? "" : "s", rk, shp_str(fs[k], sb, sizeof sb));
    int d = 0;
    for (int j = 0; j < sl; j++) {
      char c = sub[j];
      if (c == ELLIPSIS) {
        int ne = rk - nlab, nt;
        if (!rel_broadcast(ellshape, nell, shape(fs[k]) + d, ne, tmp, &nt)) {
          char e1[256], e2[256];
          return rel_error(rc, "equation \"%.*s\": the dims %s under the '...' of operand %d do not broadcast with %s",
                           shown, eq, rel_shape_str(shape(fs[k]) + d, ne, e1, sizeof e1), k,
                           rel_shape_str(ellshape, nell, e2, sizeof e2));
        }
        memcpy(ellshape, tmp, sizeof(int64_t) * (size_t)nt);
        nell = nt;
        any_ell = true;
        d += ne;
        continue;
      }
      int64_t x = shape(fs[k])[d++];
      int64_t prev = ext[(unsigned char)c];
      if (!seen[(unsigned char)c]) {
        ext[(unsigned char)c] = x;
        seen[(unsigned char)c] = true;
      } else if (!einsum_extent(prev, x, &ext[(unsigned char)c])) {
        return rel_error(rc, "equation \"%.*s\": label '%c' has sizes %lld and %lld", shown, eq, c, (long long)prev,
                         (long long)x);
      }
    }
  }
  /* The output subscript (implicit: the labels used once, sorted). */
  const char *osub;
  int osl;
  char implicit[128];
  if (arrow) {
    osub = labels + start[nsubs];
    osl = start[nsubs + 1] - start[nsubs];
  } else {
    int count[128] = {0};
    for (int j = 0; j < nl; j++) count[(unsigned char)labels[j]]++;
    osl = 0;
    for (int c = 0; c < 128; c++)
      if (count[c] && (c == ELLIPSIS || count[c] == 1)) implicit[osl++] = (char)c;
    osub = implicit;
  }
  int64_t *os = dims(rc, osl + maxr);
  int no = 0;
  bool used[128] = {false};
  for (int j = 0; j < osl; j++) {
    char c = osub[j];
    if (c == ELLIPSIS) {
      if (any_ell) memcpy(os + no, ellshape, sizeof(int64_t) * (size_t)nell);
      no += any_ell ? nell : 0;
      continue;
    }
    if (!seen[(unsigned char)c])
      return rel_error(rc, "equation \"%.*s\": output label '%c' does not occur in the inputs", shown, eq, c);
    if (used[(unsigned char)c])
      return rel_error(rc, "equation \"%.*s\": output label '%c' occurs twice", shown, eq, c);
    used[(unsigned char)c] = true;
    os[no++] = ext[(unsigned char)c];
  }
  return ok(rc, out, dtype(fs[0]), no, os);
}

#undef ELLIPSIS

/* meshgrid: one tuple argument of scalars and 1-D tensors of one dtype;
** indexing "ij" or "xy" (which swaps the first two grid dims). A tuple of n
** grids, each of shape (len_0, ..., len_{n-1}) (a scalar counts 1). */
RelResult rel_meshgrid(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  Type *const *fs;
  int n;
  RelResult r = rel_tuple_arg(rc, args, 0, "data", &fs, &n);
  if (r != REL_OK) return r;
  if (n == 0) return rel_error(rc, "the tuple must hold at least one tensor, found ()");
  static const char *const modes[] = {"ij", "xy", NULL};
  int mode = 0;
  if ((r = need_choice(rc, attrs, "indexing", modes, &mode)) != REL_OK) return r;
  int64_t *gs = dims(rc, n);
  char b1[256], b2[32];
  for (int i = 0; i < n; i++) {
    if (rank(fs[i]) > 1)
      return rel_error(rc, "field %d must be a scalar or a 1-D tensor, found %s", i, rel_type_str(fs[i], b1, sizeof b1));
    if (!dtype_eq(dtype(fs[i]), dtype(fs[0])))
      return rel_error(rc, "fields 0 and %d have dtypes %s and %s", i, dtstr(dtype(fs[0]), b2),
                       dtstr(dtype(fs[i]), b1));
    gs[i] = rank(fs[i]) == 0 ? 1 : shape(fs[i])[0];
  }
  if (mode == 1 && n >= 2) {
    int64_t t = gs[0];
    gs[0] = gs[1];
    gs[1] = t;
  }
  Type **grids = ARENA_ARRAY(rc->m->arena, Type *, n);
  for (int i = 0; i < n; i++) grids[i] = rel_tensor(rc, dtype(fs[0]), n, gs);
  *out = rel_tuple(rc, grids, n);
  return REL_OK;
}

/* sparse_to_dense: sparse_indices (signed integers, rank <= 2), sparse_values
** (rank <= 1), default_value (a scalar of the values' dtype); output_shape
** (attribute; for dyn.sparse_to_dense a 1-D fourth operand, every dim `?`).
** The result has the values' dtype. (TVM's relation lets rank 3 indices and
** rank 2 values through although its documentation allows 2 and 1.) */
RelResult rel_sparse_to_dense(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  bool dyn = rc->op->id == OP_DYN_SPARSE_TO_DENSE;
  static const char *const names[] = {"sparse_indices", "sparse_values", "default_value", "output_shape"};
  const Type *t[4];
  RelResult r = rel_tensor_args(rc, args, dyn ? 4 : 3, names, t);
  if (r != REL_OK) return r;
  char b[256];
  if (!is_int_dtype(dtype(t[0])) || rank(t[0]) > 2)
    return rel_error(rc, "sparse_indices must be a 0-D, 1-D or 2-D tensor of integers, found %s",
                     rel_type_str(t[0], b, sizeof b));
  if (rank(t[1]) > 1)
    return rel_error(rc, "sparse_values must be a 0-D or 1-D tensor, found %s", rel_type_str(t[1], b, sizeof b));
  if ((r = need_scalar(rc, t[2], "default_value")) != REL_OK) return r;
  if ((r = same_dtype(rc, t[1], "sparse_values", t[2], "default_value")) != REL_OK) return r;
  if (dyn) {
    int64_t len = 0;
    if ((r = static_len(rc, t[3], "output_shape", &len)) != REL_OK) return r;
    return ok_any(rc, out, dtype(t[1]), len);
  }
  int no = 0;
  int64_t *os = NULL;
  if ((r = need_shape(rc, attrs, "output_shape", &no, &os)) != REL_OK) return r;
  return ok(rc, out, dtype(t[1]), no, os);
}

/* {==== dyn.* ops: shapes from tensor operands ====}
** The output rank comes from the static length of a 1-D shape operand; its
** dims are `?` (they are values, not types). An unknown length is an error,
** as in TVM. */

/* dyn.broadcast_to: data, shape; data's rank may not exceed the length. */
RelResult rel_dyn_broadcast_to(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  (void)attrs;
  static const char *const names[] = {"data", "shape"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "shape", &len)) != REL_OK) return r;
  char b[256];
  if (rank(t[0]) > len)
    return rel_error(rc, "cannot broadcast %s to a shape of %lld dims", shp_str(t[0], b, sizeof b), (long long)len);
  return ok_any(rc, out, dtype(t[0]), len);
}

/* dyn.expand_dims: data, axis (an integer scalar); num_newaxis >= 0. */
RelResult rel_dyn_expand_dims(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "axis"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = need_scalar(rc, t[1], "axis")) != REL_OK) return r;
  if ((r = need_index_dtype(rc, t[1], "axis", true)) != REL_OK) return r;
  int64_t nnew = 0;
  if ((r = need_int(rc, attrs, "num_newaxis", &nnew)) != REL_OK) return r;
  if (nnew < 0) return rel_error(rc, "num_newaxis must be >= 0, found %lld", (long long)nnew);
  if (nnew > MAX_RANK) return rel_error(rc, "num_newaxis %lld is too large", (long long)nnew);
  return ok_any(rc, out, dtype(t[0]), rank(t[0]) + nnew);
}

/* dyn.full: fill_value (a scalar), shape; dtype ("" = fill_value's). */
RelResult rel_dyn_full(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"fill_value", "shape"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  if ((r = need_scalar(rc, t[0], "fill_value")) != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "shape", &len)) != REL_OK) return r;
  return ok_any(rc, out, attr_dtype_or(attrs, "dtype", dtype(t[0])), len);
}

/* dyn.zeros, dyn.ones: shape; dtype ("" = float32, as for zeros/ones). */
RelResult rel_dyn_init(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  const Type *t;
  RelResult r = rel_tensor_arg(rc, args, 0, "shape", &t);
  if (r != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t, "shape", &len)) != REL_OK) return r;
  return ok_any(rc, out, attr_dtype_or(attrs, "dtype", DTYPE(DT_FLOAT, 32)), len);
}

/* dyn.reshape: data, newshape; the newshape attribute is unused. */
RelResult rel_dyn_reshape(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  (void)attrs;
  static const char *const names[] = {"data", "newshape"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "newshape", &len)) != REL_OK) return r;
  return ok_any(rc, out, dtype(t[0]), len);
}

/* dyn.squeeze: data, axes; rank(data) - len(axes) `?` dims. */
RelResult rel_dyn_squeeze(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  (void)attrs;
  static const char *const names[] = {"data", "axes"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "axes", &len)) != REL_OK) return r;
  char b[256];
  if (len > rank(t[0]))
    return rel_error(rc, "cannot squeeze %lld axes of %s (rank %d)", (long long)len, shp_str(t[0], b, sizeof b),
                     rank(t[0]));
  return ok_any(rc, out, dtype(t[0]), rank(t[0]) - len);
}

/* dyn.strided_slice: data, begin, end, strides (1-D, of one length <= the
** rank): the first len(begin) dims are `?`, the rest are data's. */
RelResult rel_dyn_strided_slice(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  static const char *const names[] = {"data", "begin", "end", "strides"};
  const Type *t[4];
  RelResult r = rel_tensor_args(rc, args, 4, names, t);
  if (r != REL_OK) return r;
  static const char *const modes[] = {"end", "size", NULL};
  int mode = 0;
  if ((r = need_choice(rc, attrs, "slice_mode", modes, &mode)) != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "begin", &len)) != REL_OK) return r;
  char b1[256], b2[256];
  for (int i = 2; i < 4; i++) {
    if (rank(t[i]) != 1 || !is_index_dtype(dtype(t[i])))
      return rel_error(rc, "%s must be a 1-D tensor of integers, found %s", names[i], rel_type_str(t[i], b1, sizeof b1));
    if (!dim_eq(shape(t[i])[0], len))
      return rel_error(rc, "begin %s and %s %s have different lengths", rel_type_str(t[1], b1, sizeof b1), names[i],
                       rel_type_str(t[i], b2, sizeof b2));
  }
  int nd = rank(t[0]);
  if (len > nd)
    return rel_error(rc, "begin has %lld entries but data %s has rank %d", (long long)len, shp_str(t[0], b1, sizeof b1),
                     nd);
  int64_t *os = dims(rc, nd);
  for (int i = 0; i < nd; i++) os[i] = i < len ? ANY : shape(t[0])[i];
  return ok(rc, out, dtype(t[0]), nd, os);
}

/* dyn.tile: data, reps; max(rank(data), len(reps)) `?` dims. */
RelResult rel_dyn_tile(RelCtx *rc, Type *const *args, int nargs, const Attrs *attrs, Type **out) {
  (void)nargs;
  (void)attrs;
  static const char *const names[] = {"data", "reps"};
  const Type *t[2];
  RelResult r = rel_tensor_args(rc, args, 2, names, t);
  if (r != REL_OK) return r;
  int64_t len = 0;
  if ((r = static_len(rc, t[1], "reps", &len)) != REL_OK) return r;
  return ok_any(rc, out, dtype(t[0]), len > rank(t[0]) ? len : rank(t[0]));
}
