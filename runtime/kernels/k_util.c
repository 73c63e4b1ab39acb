/* k_util.c: helpers shared by the reference kernels (see kernel.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernels/kernel.h"

rlyrt_status rk_fail(const rlyrt_kernel_call *c, rlyrt_status s, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return rlyrt_error(s, "%s: %s", c->op, msg);
}

rlyrt_status rk_tensor_arg(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t) {
  if (i >= c->nargs || !c->args[i] || c->args[i]->kind != RLYRT_TENSOR)
    return rk_fail(c, RLYRT_E_ARG, "argument %d must be a tensor", i + 1);
  *t = RLYRT_AS_TENSOR(c->args[i]);
  return RLYRT_OK;
}

rlyrt_status rk_tuple_arg(const rlyrt_kernel_call *c, int i, rlyrt_tuple **t) {
  if (i >= c->nargs || !c->args[i] || c->args[i]->kind != RLYRT_TUPLE)
    return rk_fail(c, RLYRT_E_ARG, "argument %d must be a tuple of tensors", i + 1);
  rlyrt_tuple *tt = RLYRT_AS_TUPLE(c->args[i]);
  for (int32_t k = 0; k < tt->n; k++)
    if (!tt->fields[k] || tt->fields[k]->kind != RLYRT_TENSOR)
      return rk_fail(c, RLYRT_E_ARG, "field %d of argument %d must be a tensor", (int)k, i + 1);
  *t = tt;
  return RLYRT_OK;
}

rlyrt_status rk_alloc(const rlyrt_kernel_call *c, DLDataType dt, int32_t ndim, const int64_t *shape, rlyrt_tensor **t) {
  *t = rlyrt_tensor_new(dt, ndim, shape, true);
  if (!*t) return rk_fail(c, RLYRT_E_NOMEM, "cannot allocate the result: %s", rlyrt_last_error());
  return RLYRT_OK;
}

rlyrt_status rk_alloc_out(const rlyrt_kernel_call *c, int i, rlyrt_tensor **t) {
  if (i >= c->nouts) return rk_fail(c, RLYRT_E_INTERNAL, "no static type for result %d", i);
  const rlyrt_tensor_type *ty = &c->outs[i];
  for (int32_t k = 0; k < ty->ndim; k++)
    if (ty->shape[k] < 0) return rk_fail(c, RLYRT_E_INTERNAL, "result %d has a dimension known only at run time", i);
  return rk_alloc(c, ty->dtype, ty->ndim, ty->shape, t);
}

rlyrt_status rk_set_result(rlyrt_kernel_call *c, rlyrt_tensor **outs, int n) {
  if (!c->tuple_result && n == 1) {
    c->result = &outs[0]->obj;
    return RLYRT_OK;
  }
  rlyrt_tuple *t = rlyrt_tuple_new(n);
  if (!t) {
    for (int i = 0; i < n; i++) rlyrt_release(&outs[i]->obj);
    return rk_fail(c, RLYRT_E_NOMEM, "cannot allocate the result tuple");
  }
  for (int i = 0; i < n; i++) rlyrt_tuple_set_take(t, i, &outs[i]->obj);
  c->result = &t->obj;
  return RLYRT_OK;
}

const rlyrt_attr *rlyrt_attr_get(const rlyrt_attrs *a, const char *name) {
  if (!a) return NULL;
  for (int32_t i = 0; i < a->n; i++)
    if (a->items[i].name && strcmp(a->items[i].name, name) == 0) return &a->items[i];
  return NULL;
}

bool rk_attr_is_none(const rlyrt_kernel_call *c, const char *name) {
  const rlyrt_attr *v = rlyrt_attr_get(c->attrs, name);
  return !v || v->kind == RLYRT_ATTR_NONE;
}

int64_t rk_attr_int(const rlyrt_kernel_call *c, const char *name, int64_t dflt) {
  const rlyrt_attr *v = rlyrt_attr_get(c->attrs, name);
  if (!v) return dflt;
  if (v->kind == RLYRT_ATTR_INT) return v->i;
  if (v->kind == RLYRT_ATTR_FLOAT) return (int64_t)v->f;
  if (v->kind == RLYRT_ATTR_ARRAY && v->n == 1 && v->items[0].kind == RLYRT_ATTR_INT) return v->items[0].i;
  return dflt;
}

double rk_attr_float(const rlyrt_kernel_call *c, const char *name, double dflt) {
  const rlyrt_attr *v = rlyrt_attr_get(c->attrs, name);
  if (!v) return dflt;
  if (v->kind == RLYRT_ATTR_FLOAT) return v->f;
  if (v->kind == RLYRT_ATTR_INT) return (double)v->i;
  return dflt;
}

const char *rk_attr_str(const rlyrt_kernel_call *c, const char *name) {
  const rlyrt_attr *v = rlyrt_attr_get(c->attrs, name);
  return v && v->kind == RLYRT_ATTR_STR && v->s ? v->s : "";
}

int rk_attr_ints(const rlyrt_kernel_call *c, const char *name, int64_t *out, int max) {
  const rlyrt_attr *v = rlyrt_attr_get(c->attrs, name);
  if (!v || v->kind == RLYRT_ATTR_NONE) return -1;
  if (v->kind == RLYRT_ATTR_INT) {
    if (max > 0) out[0] = v->i;
    return 1;
  }
  if (v->kind != RLYRT_ATTR_ARRAY) return -1;
  for (int32_t i = 0; i < v->n && i < max; i++)
    out[i] = v->items[i].kind == RLYRT_ATTR_INT ? v->items[i].i : (int64_t)v->items[i].f;
  return v->n;
}

bool rk_dtype_parse(const char *s, DLDataType *out) {
  static const struct {
    const char *name;
    uint8_t code, bits;
  } names[] = {
      {"bool", kDLUInt, 1},     {"int8", kDLInt, 8},      {"int16", kDLInt, 16},   {"int32", kDLInt, 32},
      {"int64", kDLInt, 64},    {"uint8", kDLUInt, 8},    {"uint16", kDLUInt, 16}, {"uint32", kDLUInt, 32},
      {"uint64", kDLUInt, 64},  {"float16", kDLFloat, 16}, {"float32", kDLFloat, 32}, {"float64", kDLFloat, 64},
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      out->code = names[i].code;
      out->bits = names[i].bits;
      out->lanes = 1;
      return true;
    }
  return false;
}

bool rk_attr_dtype(const rlyrt_kernel_call *c, const char *name, DLDataType *out) {
  const char *s = rk_attr_str(c, name);
  return *s && rk_dtype_parse(s, out);
}

void rk_unravel(int64_t index, const int64_t *shape, int ndim, int64_t *coords) {
  for (int i = ndim - 1; i >= 0; i--) {
    int64_t d = shape[i] ? shape[i] : 1;
    coords[i] = index % d;
    index /= d;
  }
}

int64_t rk_ravel(const int64_t *coords, const int64_t *shape, int ndim) {
  int64_t idx = 0;
  for (int i = 0; i < ndim; i++) idx = idx * shape[i] + coords[i];
  return idx;
}

int64_t rk_broadcast_index(const int64_t *out_coords, int out_ndim, const int64_t *in_shape, int in_ndim) {
  int64_t idx = 0;
  for (int i = 0; i < in_ndim; i++) {
    int oi = out_ndim - in_ndim + i;
    int64_t c = in_shape[i] == 1 ? 0 : out_coords[oi];
    idx = idx * in_shape[i] + c;
  }
  return idx;
}
