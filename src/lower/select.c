/* lower/select.c: take with a scalar index, split, scatter_nd and
** reshapes, as slice copies.
**
** take(data, i, axis=a) with a 0-d integer index picks one slab of data:
** the result is data[:a] + data[a+1:], and for each of the outer positions
** (the dims before a) one contiguous run of inner elements (the dims after
** a) is copied. The index follows the reference kernel's mode
** (runtime/kernels/k_transform.c, take_index): "clip" (the default) clamps
** it into [0, n-1], "wrap" takes it modulo n (a negative one too); an
** unsigned index above INT64_MAX counts as INT64_MAX. Mode "fast" (an out
** of range index is an error) and an empty axis (always an error) stay
** with the reference kernel: loop kernels fail only for memory.
**
** split(data, indices_or_sections, axis) is a tuple of parts, each part
** per outer position one contiguous run; the split points are computed
** from the attributes as the reference kernel does (equal sections that
** divide the axis, or strictly ascending points inside it) and must agree
** with the result's type, or the reference kernel keeps the call.
**
** scatter_nd(data, indices, updates) in mode "update" (what the ONNX
** importer makes of a Loop's scan outputs: one row written per step):
** data copied, then for each index tuple y (indices (M, Y...), updates
** (Y..., X_M...)) the run updates[y, :] written at data's position
** indices[:, y], in row-major order of y as the reference kernel. An index
** out of range fails with the reference kernel's message (its
** rk_transform_scatter_nd), after the writes before it, which the failed
** call's result does not keep.
**
** A group that only reshapes its one parameter or a field of it (reshape,
** expand_dims, squeeze, batch_flatten, in any chain: the elements keep
** their order) is one copy of its bytes.
**
** All are plain memcpy calls on static shapes: the result's type gives
** every size, so the text holds constants only. */
#include <string.h>

#include "lower/kernel.h"

/* The op call that is fn's whole body, on fn's parameters in order. */
static const Expr *single_call(const Expr *fn, const char *op, int nargs) {
  const Expr *call = fn->u.func.body;
  if (!call || call->kind != EXPR_CALL || call->u.call.callee->kind != EXPR_OP) return NULL;
  if (strcmp(call->u.call.callee->u.op.op->name, op) != 0 || call->u.call.nargs != nargs ||
      fn->u.func.nparams != nargs)
    return NULL;
  for (int i = 0; i < nargs; i++)
    if (call->u.call.args[i] != fn->u.func.params[i]) return NULL;
  return call;
}

/* The bytes of one element of a tensor type loops handle; 0 otherwise. */
static int64_t elem_bytes(const Type *t) {
  DClass c;
  if (!lower_static_tensor(t) || !lower_dtype_class(t->u.tensor.dtype, &c)) return 0;
  return c == DC_BOOL ? 1 : t->u.tensor.dtype.bits / 8;
}

static int64_t prod(const int64_t *d, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; i++) n *= d[i];
  return n;
}

/* take's mode: 0 clip (also ""), 1 wrap, -1 anything else ("fast"). */
static int take_mode(const Attrs *a) {
  int i = a && a->cls ? attrs_class_field(a->cls, "mode", 4) : -1;
  if (i < 0) return 0;
  const AttrValue *v = a->values[i];
  if (v->kind != AV_STR) return -1;
  if (!v->u.str.len || (v->u.str.len == 4 && !memcmp(v->u.str.s, "clip", 4))) return 0;
  return v->u.str.len == 4 && !memcmp(v->u.str.s, "wrap", 4) ? 1 : -1;
}

/* `static const int64_t NAME[n] = {...};` (nothing for n == 0). */
static void put_shape(StrBuf *sb, const char *name, const Type *t) {
  int n = t->u.tensor.ndim;
  if (!n) return;
  sb_printf(sb, "  static const int64_t %s[%d] = {", name, n);
  for (int d = 0; d < n; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)t->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
}

/* `rlyrt_tensor_new(...)` for type t with its shape array NAME. */
static void put_new(StrBuf *sb, const Type *t, const char *shape) {
  DType d = t->u.tensor.dtype;
  sb_printf(sb, "rlyrt_tensor_new((DLDataType){%s, %d, 1}, %d, %s, false)", lower_dl_code(d),
            dtype_is_bool(d) ? 1 : d.bits, t->u.tensor.ndim, t->u.tensor.ndim ? shape : "NULL");
}

bool take_lower(StrBuf *sb, const char *name, const Expr *fn, const char *where) {
  const Expr *call = single_call(fn, "take", 2);
  if (!call) return false;
  const Type *td = fn->u.func.params[0]->type, *ti = fn->u.func.params[1]->type, *tr = call->type;
  int64_t esz = elem_bytes(td);
  if (!esz || !lower_static_tensor(ti) || ti->u.tensor.ndim != 0 || !lower_static_tensor(tr)) return false;
  DType it = ti->u.tensor.dtype;
  if ((it.code != DT_INT && it.code != DT_UINT) || dtype_is_bool(it) || it.lanes != 1) return false;
  if (!dtype_eq(tr->u.tensor.dtype, td->u.tensor.dtype)) return false;
  const Attrs *at = call->u.call.attrs;
  int mode = take_mode(at);
  bool wrap = mode == 1;
  if (mode < 0) return false; /* "fast" may fail */
  int f = at && at->cls ? attrs_class_field(at->cls, "axis", 4) : -1;
  if (f < 0 || at->values[f]->kind != AV_INT || lower_attr_int(at, "batch_dims", 0) != 0) return false;
  int nd = td->u.tensor.ndim;
  int64_t axis = at->values[f]->u.i.v;
  if (axis < 0) axis += nd;
  if (axis < 0 || axis >= nd || tr->u.tensor.ndim != nd - 1) return false;
  const int64_t *ds = td->u.tensor.shape;
  for (int d = 0; d < nd - 1; d++)
    if (tr->u.tensor.shape[d] != ds[d < axis ? d : d + 1]) return false;
  int64_t n = ds[axis], outer = prod(ds, 0, (int)axis), inner = prod(ds, (int)axis + 1, nd);
  if (n == 0) return false; /* the reference kernel fails */
  const char *ict = lower_elem_ctype(it);
  sb_printf(sb, "/* take: a slice along axis %lld by a scalar index (%s) */\n", (long long)axis,
            wrap ? "wrap" : "clip");
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  put_shape(sb, "shape", tr);
  sb_puts(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : ");
  put_new(sb, tr, "shape");
  sb_puts(sb, ";\n  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (it.code == DT_UINT && it.bits == 64)
    sb_printf(sb, "  const uint64_t u = *(const uint64_t *)RLYRT_AS_TENSOR(args[1])->dl.data;\n"
                  "  const int64_t i = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;\n");
  else
    sb_printf(sb, "  const int64_t i = (int64_t)*(const %s *)RLYRT_AS_TENSOR(args[1])->dl.data;\n", ict);
  if (wrap) sb_printf(sb, "  const int64_t k = (i %% %lld + %lld) %% %lld;\n", (long long)n, (long long)n, (long long)n);
  else sb_printf(sb, "  const int64_t k = i < 0 ? 0 : i > %lld ? %lld : i;\n", (long long)(n - 1), (long long)(n - 1));
  if (outer * inner != 0) {
    sb_puts(sb, "  const char *x = (const char *)RLYRT_AS_TENSOR(args[0])->dl.data;\n");
    sb_puts(sb, "  char *o = (char *)t->dl.data;\n");
    sb_printf(sb, "  for (int64_t u = 0; u < %lld; u++)\n", (long long)outer);
    sb_printf(sb, "    memcpy(o + u * %lld, x + (u * %lld + k) * %lld, %lld);\n", (long long)(inner * esz),
              (long long)n, (long long)(inner * esz), (long long)(inner * esz));
  } else {
    sb_puts(sb, "  (void)k;\n");
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

/* The split points of call on an axis of size dim into begins[0..nparts]
** as the reference kernel computes them; false where it would fail. */
static bool split_points(const Attrs *at, int64_t dim, int nparts, int64_t *begins) {
  int f = at && at->cls ? attrs_class_field(at->cls, "indices_or_sections", 19) : -1;
  if (f < 0) return false;
  const AttrValue *v = at->values[f];
  if (v->kind == AV_INT) {
    if (v->u.i.v != nparts || dim % nparts) return false;
    for (int p = 0; p <= nparts; p++) begins[p] = dim / nparts * p;
    return true;
  }
  if (v->kind != AV_ARRAY || v->u.arr.n + 1 != nparts) return false;
  begins[0] = 0;
  for (int p = 0; p < v->u.arr.n; p++) {
    const AttrValue *x = v->u.arr.items[p];
    if (x->kind != AV_INT || x->u.i.v <= begins[p] || x->u.i.v >= dim) return false;
    begins[p + 1] = x->u.i.v;
  }
  begins[nparts] = dim;
  return true;
}

enum { SPLIT_MAX_PARTS = 64 };

bool split_lower(StrBuf *sb, const char *name, const Expr *fn, const char *where) {
  const Expr *call = single_call(fn, "split", 1);
  if (!call) return false;
  const Type *td = fn->u.func.params[0]->type, *tr = call->type;
  int64_t esz = elem_bytes(td);
  if (!esz || !tr || tr->kind != TYPE_TUPLE || tr->u.tuple.n < 1 || tr->u.tuple.n > SPLIT_MAX_PARTS) return false;
  int nd = td->u.tensor.ndim, nparts = tr->u.tuple.n;
  int64_t axis = lower_attr_int(call->u.call.attrs, "axis", 0), begins[SPLIT_MAX_PARTS + 1];
  if (axis < 0) axis += nd;
  if (nd == 0 || axis < 0 || axis >= nd) return false;
  const int64_t *ds = td->u.tensor.shape;
  if (!split_points(call->u.call.attrs, ds[axis], nparts, begins)) return false;
  for (int p = 0; p < nparts; p++) { /* the types agree with the points */
    const Type *tp = tr->u.tuple.fields[p];
    if (!lower_static_tensor(tp) || !dtype_eq(tp->u.tensor.dtype, td->u.tensor.dtype) || tp->u.tensor.ndim != nd)
      return false;
    for (int d = 0; d < nd; d++)
      if (tp->u.tensor.shape[d] != (d == axis ? begins[p + 1] - begins[p] : ds[d])) return false;
  }
  int64_t outer = prod(ds, 0, (int)axis), inner = prod(ds, (int)axis + 1, nd), dim = ds[axis];
  sb_printf(sb, "/* split: %d parts along axis %lld, slice copies */\n", nparts, (long long)axis);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  for (int p = 0; p < nparts; p++) {
    char nm[32];
    snprintf(nm, sizeof nm, "shape%d", p);
    put_shape(sb, nm, tr->u.tuple.fields[p]);
  }
  /* *out preset: a tuple of tensors of the parts' types to write into. */
  sb_printf(sb, "  rlyrt_tensor *t[%d];\n  const bool given = *out != NULL;\n", nparts);
  sb_printf(sb, "  rlyrt_tuple *r = given ? RLYRT_AS_TUPLE(*out) : rlyrt_tuple_new(%d);\n", nparts);
  sb_puts(sb, "  if (!r) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  for (int p = 0; p < nparts; p++) {
    char nm[32];
    snprintf(nm, sizeof nm, "shape%d", p);
    sb_printf(sb, "  t[%d] = given ? RLYRT_AS_TENSOR(r->fields[%d]) : ", p, p);
    put_new(sb, tr->u.tuple.fields[p], nm);
    sb_puts(sb, ";\n");
    sb_printf(sb, "  if (!t[%d]) {\n    rlyrt_release(&r->obj);\n    return rlyrt_error_at(RLYRT_E_NOMEM, ", p);
    lower_put_cstring(sb, where ? where : "");
    sb_puts(sb, ");\n  }\n");
    sb_printf(sb, "  if (!given) rlyrt_tuple_set_take(r, %d, &t[%d]->obj);\n", p, p);
  }
  if (outer * inner * dim != 0) {
    sb_puts(sb, "  const char *x = (const char *)RLYRT_AS_TENSOR(args[0])->dl.data;\n");
    for (int p = 0; p < nparts; p++) {
      int64_t run = (begins[p + 1] - begins[p]) * inner * esz;
      if (!run) continue;
      sb_printf(sb, "  for (int64_t u = 0; u < %lld; u++)\n", (long long)outer);
      sb_printf(sb, "    memcpy((char *)t[%d]->dl.data + u * %lld, x + u * %lld + %lld, %lld);\n", p, (long long)run,
                (long long)(dim * inner * esz), (long long)(begins[p] * inner * esz), (long long)run);
    }
  } else {
    sb_puts(sb, "  (void)args;\n");
  }
  sb_puts(sb, "  *out = &r->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

bool scatter_nd_lower(StrBuf *sb, const char *name, const Expr *fn, const char *where) {
  const Expr *call = single_call(fn, "scatter_nd", 3);
  if (!call) return false;
  const Type *td = fn->u.func.params[0]->type, *ti = fn->u.func.params[1]->type, *tu = fn->u.func.params[2]->type;
  const Type *tr = call->type;
  int64_t esz = elem_bytes(td);
  if (!esz || !lower_static_tensor(ti) || !lower_static_tensor(tu) || !lower_static_tensor(tr) || !elem_bytes(tu))
    return false;
  DType it = ti->u.tensor.dtype;
  if ((it.code != DT_INT && it.code != DT_UINT) || dtype_is_bool(it) || it.lanes != 1) return false;
  if (!dtype_eq(tu->u.tensor.dtype, td->u.tensor.dtype) || !dtype_eq(tr->u.tensor.dtype, td->u.tensor.dtype))
    return false;
  const Attrs *at = call->u.call.attrs;
  int f = at && at->cls ? attrs_class_field(at->cls, "mode", 4) : -1;
  if (f >= 0) { /* "update" (the default) only */
    const AttrValue *v = at->values[f];
    if (v->kind != AV_STR || !(v->u.str.len == 0 || (v->u.str.len == 6 && !memcmp(v->u.str.s, "update", 6))))
      return false;
  }
  /* the reference kernel's shape rules */
  int nd = td->u.tensor.ndim, ni = ti->u.tensor.ndim;
  const int64_t *ds = td->u.tensor.shape, *is = ti->u.tensor.shape, *us = tu->u.tensor.shape;
  if (ni < 1 || is[0] > nd || tr->u.tensor.ndim != nd) return false;
  for (int d = 0; d < nd; d++)
    if (tr->u.tensor.shape[d] != ds[d]) return false;
  int m = (int)is[0];
  if (tu->u.tensor.ndim != ni - 1 + nd - m) return false;
  for (int i = 1; i < ni; i++)
    if (us[i - 1] != is[i]) return false;
  for (int i = m; i < nd; i++)
    if (us[ni - 1 + i - m] != ds[i]) return false;
  int64_t ny = prod(is, 1, ni), nx = prod(ds, m, nd), total = prod(ds, 0, nd);
  sb_printf(sb, "/* scatter_nd: slice copies (update), the data then %lld runs of %lld elements */\n",
            (long long)ny, (long long)nx);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  put_shape(sb, "shape", tr);
  if (m) put_shape(sb, "dims", td);
  sb_puts(sb, "  const bool given = *out != NULL;\n");
  sb_puts(sb, "  rlyrt_tensor *t = given ? RLYRT_AS_TENSOR(*out) : ");
  put_new(sb, tr, "shape");
  sb_puts(sb, ";\n  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_puts(sb, "  char *o = (char *)t->dl.data;\n");
  sb_puts(sb, "  const char *x = (const char *)RLYRT_AS_TENSOR(args[0])->dl.data;\n");
  if (total) sb_printf(sb, "  if (o != x) memcpy(o, x, %lld);\n", (long long)(total * esz));
  else sb_puts(sb, "  (void)x;\n");
  if (ny) {
    const char *ict = lower_elem_ctype(it);
    bool u64 = it.code == DT_UINT && it.bits == 64;
    sb_printf(sb, "  const %s *ind = (const %s *)RLYRT_AS_TENSOR(args[1])->dl.data;\n", ict, ict);
    sb_puts(sb, "  const char *u = (const char *)RLYRT_AS_TENSOR(args[2])->dl.data;\n");
    sb_printf(sb, "  for (int64_t y = 0; y < %lld; y++) {\n", (long long)ny);
    sb_puts(sb, "    int64_t flat = 0;\n");
    if (!m) { /* indices (0, Y...): each y writes the whole result */
      sb_puts(sb, "    (void)ind;\n");
    } else {
      sb_printf(sb, "    for (int j = 0; j < %d; j++) {\n", m);
      if (u64)
        sb_printf(sb, "      const uint64_t v = ind[j * %lld + y];\n"
                      "      const int64_t idx = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;\n",
                  (long long)ny);
      else sb_printf(sb, "      const int64_t idx = (int64_t)ind[j * %lld + y];\n", (long long)ny);
      sb_puts(sb, "      if (idx < 0 || idx >= dims[j]) {\n");
      sb_puts(sb, "        if (!given) rlyrt_release(&t->obj);\n");
      sb_puts(sb, "        rlyrt_error(RLYRT_E_RUNTIME, \"scatter_nd: index %lld is out of range for axis %d of size "
                  "%lld\", (long long)idx, j, (long long)dims[j]);\n");
      sb_puts(sb, "        return rlyrt_error_at(RLYRT_E_RUNTIME, ");
      lower_put_cstring(sb, where ? where : "");
      sb_puts(sb, ");\n      }\n");
      sb_puts(sb, "      flat = flat * dims[j] + idx;\n    }\n");
    }
    if (nx) sb_printf(sb, "    memcpy(o + flat * %lld, u + y * %lld, %lld);\n", (long long)(nx * esz),
                      (long long)(nx * esz), (long long)(nx * esz));
    else sb_puts(sb, "    (void)flat, (void)u;\n");
    sb_puts(sb, "  }\n");
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

bool reshape_lower(StrBuf *sb, const char *name, const Expr *fn, const char *where) {
  static const char *const ops[] = {"reshape", "expand_dims", "squeeze", "nn.batch_flatten"};
  if (fn->u.func.nparams != 1) return false;
  const Expr *e = fn->u.func.body;
  int n = 0;
  for (; e && e->kind == EXPR_CALL; n++) {
    const Expr *callee = e->u.call.callee;
    bool known = false;
    for (size_t i = 0; callee->kind == EXPR_OP && i < RLY_COUNTOF(ops); i++)
      known = known || strcmp(callee->u.op.op->name, ops[i]) == 0;
    if (!known || e->u.call.nargs != 1) return false;
    e = e->u.call.args[0];
  }
  /* the parameter, or a field of it (`%p.k`, a tuple parameter) */
  int field = -1;
  if (e && e->kind == EXPR_GET_ITEM) {
    field = e->u.get_item.index;
    e = e->u.get_item.tuple;
  }
  if (!n || e != fn->u.func.params[0]) return false;
  const Type *td = field < 0 ? e->type : e->type && e->type->kind == TYPE_TUPLE && field < e->type->u.tuple.n
                                              ? e->type->u.tuple.fields[field]
                                              : NULL;
  const Type *tr = fn->u.func.body->type;
  if (!td) return false;
  int64_t esz = elem_bytes(td);
  if (!esz || !lower_static_tensor(tr) || !dtype_eq(tr->u.tensor.dtype, td->u.tensor.dtype)) return false;
  int64_t total = prod(td->u.tensor.shape, 0, td->u.tensor.ndim);
  if (total != prod(tr->u.tensor.shape, 0, tr->u.tensor.ndim)) return false;
  sb_printf(sb, "/* reshape: a copy of %lld bytes */\n", (long long)(total * esz));
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  put_shape(sb, "shape", tr);
  sb_puts(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : ");
  put_new(sb, tr, "shape");
  sb_puts(sb, ";\n  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (!total) sb_puts(sb, "  (void)args;\n");
  else if (field < 0)
    sb_printf(sb, "  memcpy(t->dl.data, RLYRT_AS_TENSOR(args[0])->dl.data, %lld);\n", (long long)(total * esz));
  else
    sb_printf(sb, "  memcpy(t->dl.data, RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(args[0])->fields[%d])->dl.data, %lld);\n", field,
              (long long)(total * esz));
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}
