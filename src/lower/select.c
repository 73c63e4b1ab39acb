/* lower/select.c: take with a scalar index, and split, as slice copies.
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
** Both are plain memcpy calls on static shapes: the result's type gives
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
