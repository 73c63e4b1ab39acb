/* rel_util.c: helpers shared by the operator type relations. */
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "ops/rel.h"

RelResult rel_error(RelCtx *rc, const char *fmt, ...) {
  StrBuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  diag_error(rc->d, rc->span, "%s: %s", rc->op->name, sb_str(&sb));
  sb_free(&sb);
  return REL_ERROR;
}

static void arg_name(int i, const char *what, char *buf, size_t n) {
  if (what) snprintf(buf, n, "argument %d (%s)", i + 1, what);
  else snprintf(buf, n, "argument %d", i + 1);
}

RelResult rel_tensor_arg(RelCtx *rc, Type *const *args, int i, const char *what, const Type **t) {
  const Type *a = args[i];
  if (!a || a->kind == TYPE_INCOMPLETE) return REL_DEFER;
  if (a->kind != TYPE_TENSOR) {
    char name[64], ty[256];
    arg_name(i, what, name, sizeof name);
    return rel_error(rc, "%s must be a tensor, found %s", name, rel_type_str(a, ty, sizeof ty));
  }
  *t = a;
  return REL_OK;
}

RelResult rel_tensor_args(RelCtx *rc, Type *const *args, int n, const char *const *names, const Type **ts) {
  for (int i = 0; i < n; i++) {
    RelResult r = rel_tensor_arg(rc, args, i, names ? names[i] : NULL, &ts[i]);
    if (r != REL_OK) return r;
  }
  return REL_OK;
}

RelResult rel_tuple_arg(RelCtx *rc, Type *const *args, int i, const char *what, Type *const **fields, int *n) {
  const Type *a = args[i];
  if (!a || a->kind == TYPE_INCOMPLETE) return REL_DEFER;
  char name[64], ty[256];
  arg_name(i, what, name, sizeof name);
  if (a->kind != TYPE_TUPLE)
    return rel_error(rc, "%s must be a tuple of tensors, found %s", name, rel_type_str(a, ty, sizeof ty));
  for (int k = 0; k < a->u.tuple.n; k++) {
    const Type *f = a->u.tuple.fields[k];
    if (!f || f->kind == TYPE_INCOMPLETE) return REL_DEFER;
    if (f->kind != TYPE_TENSOR)
      return rel_error(rc, "field %d of %s must be a tensor, found %s", k, name, rel_type_str(f, ty, sizeof ty));
  }
  *fields = a->u.tuple.fields;
  *n = a->u.tuple.n;
  return REL_OK;
}

Type *rel_tensor(RelCtx *rc, DType dt, int ndim, const int64_t *shape) {
  return ir_tensor_type(rc->m, rc->span, dt, ndim, shape);
}

Type *rel_tuple(RelCtx *rc, Type *const *fields, int n) {
  Type *t = ir_type_new(rc->m, TYPE_TUPLE, rc->span);
  t->u.tuple.n = n;
  if (n) t->u.tuple.fields = arena_dup(rc->m->arena, fields, sizeof(Type *) * (size_t)n);
  return t;
}

bool rel_broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    int64_t r;
    if (da == db) r = da;
    else if (da == 1) r = db;
    else if (db == 1) r = da;
    else if (da == RLY_DIM_ANY || db == RLY_DIM_ANY) r = RLY_DIM_ANY;
    else return false;
    out[i] = r;
  }
  *nout = n;
  return true;
}

const char *rel_shape_str(const int64_t *shape, int ndim, char *buf, size_t n) {
  StrBuf sb = {0};
  sb_putc(&sb, '(');
  for (int i = 0; i < ndim; i++) {
    if (i) sb_puts(&sb, ", ");
    if (shape[i] == RLY_DIM_ANY) sb_putc(&sb, '?');
    else sb_printf(&sb, "%lld", (long long)shape[i]);
  }
  if (ndim == 1) sb_putc(&sb, ',');
  sb_putc(&sb, ')');
  snprintf(buf, n, "%s", sb_str(&sb));
  sb_free(&sb);
  return buf;
}

const char *rel_type_str(const Type *t, char *buf, size_t n) {
  StrBuf sb = {0};
  if (!t) sb_puts(&sb, "_");
  else ir_print_type(&sb, t);
  snprintf(buf, n, "%s", sb_str(&sb));
  sb_free(&sb);
  return buf;
}

bool rel_norm_axis(int64_t axis, int ndim, int64_t *out) {
  if (axis < -ndim || axis >= ndim) return false;
  *out = axis < 0 ? axis + ndim : axis;
  return true;
}

const AttrValue *rel_attr(const Attrs *attrs, const char *field) {
  RLY_ASSERT(attrs && attrs->cls);
  int i = attrs_class_field(attrs->cls, field, strlen(field));
  RLY_ASSERT(i >= 0);
  return attrs->values[i];
}

bool rel_attr_is_none(const Attrs *attrs, const char *field) { return rel_attr(attrs, field)->kind == AV_NONE; }

bool rel_attr_int(const Attrs *attrs, const char *field, int64_t *out) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_INT) *out = v->u.i.v;
  else if (v->kind == AV_BOOL) *out = v->u.b;
  else if (v->kind == AV_ARRAY && v->u.arr.n == 1 && v->u.arr.items[0]->kind == AV_INT) *out = v->u.arr.items[0]->u.i.v;
  else return false;
  return true;
}

bool rel_attr_bool(const Attrs *attrs, const char *field) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_BOOL) return v->u.b;
  if (v->kind == AV_INT) return v->u.i.v != 0;
  return false;
}

double rel_attr_double(const Attrs *attrs, const char *field) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_FLOAT) return v->u.f.v;
  if (v->kind == AV_INT) return (double)v->u.i.v;
  return 0;
}

const char *rel_attr_str(const Attrs *attrs, const char *field, size_t *len) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind != AV_STR) {
    if (len) *len = 0;
    return "";
  }
  if (len) *len = v->u.str.len;
  return v->u.str.s;
}

bool rel_attr_dtype(const Attrs *attrs, const char *field, DType *out) {
  size_t n;
  const char *s = rel_attr_str(attrs, field, &n);
  return n && dtype_parse(s, n, out);
}

int rel_attr_ints(const Attrs *attrs, const char *field, int64_t *out, int max) {
  const AttrValue *v = rel_attr(attrs, field);
  if (v->kind == AV_NONE) return -1;
  if (v->kind == AV_INT) {
    if (max > 0) out[0] = v->u.i.v;
    return 1;
  }
  if (v->kind != AV_ARRAY) return -2;
  for (int i = 0; i < v->u.arr.n; i++) {
    const AttrValue *it = v->u.arr.items[i];
    if (it->kind != AV_INT) return -2;
    if (i < max) out[i] = it->u.i.v;
  }
  return v->u.arr.n;
}
