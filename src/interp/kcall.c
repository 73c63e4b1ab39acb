/* kcall.c: IR attributes and types -> rlyrt_kernel_call. */
#include "interp/kcall.h"

#include <stdio.h>
#include <string.h>

#include "ops/ops.h"

DLDataType kcall_dtype(DType t) {
  DLDataType d;
  d.code = t.code;
  d.bits = t.bits;
  d.lanes = t.lanes;
  return d;
}

static void convert(Arena *arena, const AttrValue *v, rlyrt_attr *out) {
  memset(out, 0, sizeof *out);
  switch (v->kind) {
  case AV_INT: out->kind = RLYRT_ATTR_INT; out->i = v->u.i.v; break;
  case AV_BOOL: out->kind = RLYRT_ATTR_INT; out->i = v->u.b; break;
  case AV_FLOAT: out->kind = RLYRT_ATTR_FLOAT; out->f = v->u.f.v; break;
  case AV_STR: out->kind = RLYRT_ATTR_STR; out->s = arena_strndup(arena, v->u.str.s, v->u.str.len); break;
  case AV_ARRAY: {
    out->kind = RLYRT_ATTR_ARRAY;
    out->n = v->u.arr.n;
    rlyrt_attr *items = ARENA_ARRAY(arena, rlyrt_attr, v->u.arr.n ? v->u.arr.n : 1);
    for (int i = 0; i < v->u.arr.n; i++) convert(arena, v->u.arr.items[i], &items[i]);
    out->items = items;
    break;
  }
  default: out->kind = RLYRT_ATTR_NONE; break; /* None, metadata objects, expressions */
  }
}

rlyrt_attrs *kcall_attrs(Arena *arena, const Attrs *attrs) {
  rlyrt_attrs *a = ARENA_NEW(arena, rlyrt_attrs);
  if (!attrs || !attrs->cls) return a;
  rlyrt_attr *items = ARENA_ARRAY(arena, rlyrt_attr, attrs->n ? attrs->n : 1);
  for (int i = 0; i < attrs->n; i++) {
    convert(arena, attrs->values[i], &items[i]);
    items[i].name = attrs->cls->fields[i].name;
  }
  a->n = attrs->n;
  a->items = items;
  return a;
}

static bool tensor_type(const Type *t, rlyrt_tensor_type *out) {
  if (!t || t->kind != TYPE_TENSOR) return false;
  out->dtype = kcall_dtype(t->u.tensor.dtype);
  out->ndim = t->u.tensor.ndim;
  out->shape = t->u.tensor.shape; /* RLY_DIM_ANY is -1, as the runtime wants */
  return true;
}

bool kcall_prepare(Arena *arena, const Expr *e, rlyrt_kernel_call *kc, char *err, size_t errlen) {
  memset(kc, 0, sizeof *kc);
  const OpDef *op = e->u.call.callee->u.op.op;
  kc->op = op->name;
  kc->attrs = kcall_attrs(arena, e->u.call.attrs);
  const Type *t = e->type;
  if (t && t->kind == TYPE_TUPLE) {
    rlyrt_tensor_type *outs = ARENA_ARRAY(arena, rlyrt_tensor_type, t->u.tuple.n ? t->u.tuple.n : 1);
    for (int i = 0; i < t->u.tuple.n; i++)
      if (!tensor_type(t->u.tuple.fields[i], &outs[i])) {
        snprintf(err, errlen, "%s: field %d of the result is not a tensor", op->name, i);
        return false;
      }
    kc->outs = outs;
    kc->nouts = t->u.tuple.n;
    kc->tuple_result = true;
    return true;
  }
  rlyrt_tensor_type *out = ARENA_NEW(arena, rlyrt_tensor_type);
  if (!tensor_type(t, out)) {
    snprintf(err, errlen, "%s: the result is not a tensor", op->name);
    return false;
  }
  kc->outs = out;
  kc->nouts = 1;
  return true;
}
