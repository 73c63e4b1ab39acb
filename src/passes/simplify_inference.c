/* simplify_inference.c: SimplifyInference, the inference-time rewrites of
** TVM's pass of that name.
** Requires: types. Preserves: spans and sharing; the nodes it builds are
** left untyped, so pass_run re-infers the types afterwards. Never fails.
**
** - `nn.batch_norm(x, gamma, beta, mean, var).0` becomes, as TVM writes it,
**     scale = 1 / sqrt(var + epsilon) [* gamma when scale=True]
**     shift = -mean * scale           [+ beta when center=True]
**     x * expand(scale) + expand(shift)
**   where expand() is `expand_dims(v, axis=1, num_newaxis=ndim-axis-1)`
**   (nothing when axis is the last axis), so that a [C] vector broadcasts
**   along axis. `.1` and `.2` are the moving mean and variance themselves
**   (the inference kernel returns copies of them); a batch_norm used whole
**   (not through a projection) stays.
** - `nn.dropout(x).0` becomes x (inference: the identity); `.1` stays.
** - nn.layer_norm, nn.instance_norm and nn.group_norm become
**     (x - mean(x)) / sqrt(variance(x, mean) + epsilon) [* gamma] [+ beta]
**   over their reduced axes (keepdims, biased variance), gamma and beta
**   expanded along axis as above. layer_norm reduces axis; instance_norm
**   every axis but 0 and axis; group_norm reshapes the channel axis into
**   (num_groups, C / num_groups), reduces that second part and every axis
**   after it, and reshapes back (static shapes only: otherwise it stays).
** - nn.l2_normalize(x) becomes x / sqrt(maximum(sum(x * x, axis,
**   keepdims), eps)).
** Epsilons are scalar constants of the data's dtype (float32 `1e-05f`).
**
** One post-order over every node of the root (pass_postorder: function
** bodies, branches and clauses too), rebuilding a node when a child
** changed; the original node supplies the types the rewrites read. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ops/ops.h"
#include "passes/pass.h"

typedef struct Simp {
  Module *m;
  Span at; /* the span of the node being rewritten */
} Simp;

/* {==== Building calls ====} */

/* The attributes of op with every field at its default. */
static Attrs *default_attrs(Module *m, const OpDef *op) {
  const AttrsClass *cls = op->attrs;
  if (!cls) return NULL;
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->cls = cls;
  a->n = cls->nfields;
  a->values = ARENA_ARRAY(m->arena, AttrValue *, cls->nfields ? cls->nfields : 1);
  for (int i = 0; i < cls->nfields; i++) a->values[i] = attr_default_value(m, &cls->fields[i]);
  return a;
}

static AttrValue **field(Attrs *a, const char *name) {
  int i = attrs_class_field(a->cls, name, strlen(name));
  RLY_ASSERT(i >= 0);
  return &a->values[i];
}

static AttrValue *int_value(Simp *S, int64_t v) {
  AttrValue *x = ir_attr_value_new(S->m, AV_INT, S->at);
  x->u.i.v = v;
  x->u.i.bits = 32;
  return x;
}

static AttrValue *bool_value(Simp *S, bool b) {
  AttrValue *x = ir_attr_value_new(S->m, AV_BOOL, S->at);
  x->u.b = b;
  return x;
}

static AttrValue *ints_value(Simp *S, const int64_t *v, int n) {
  AttrValue *x = ir_attr_value_new(S->m, AV_ARRAY, S->at);
  x->u.arr.n = n;
  x->u.arr.items = ARENA_ARRAY(S->m->arena, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) x->u.arr.items[i] = int_value(S, v[i]);
  return x;
}

static Expr *call(Simp *S, OpId id, Attrs *attrs, Expr *a, Expr *b) {
  Expr **args = ARENA_ARRAY(S->m->arena, Expr *, 2);
  args[0] = a;
  args[1] = b;
  return ir_call(S->m, S->at, ir_op(S->m, S->at, op_get(id)), args, b ? 2 : 1, attrs);
}

static Expr *binary(Simp *S, OpId id, Expr *a, Expr *b) { return call(S, id, NULL, a, b); }
static Expr *unary(Simp *S, OpId id, Expr *a) { return call(S, id, NULL, a, NULL); }

/* A 0-d constant of dtype dt holding v (floats rounded as TVM rounds an
** attribute to float first: (float)v). */
static Expr *scalar(Simp *S, DType dt, double v) {
  union {
    float f32;
    double f64;
    uint16_t f16;
    int64_t i64;
    int32_t i32;
  } u;
  memset(&u, 0, sizeof u);
  if (dt.code == DT_FLOAT && dt.bits == 64) u.f64 = (double)(float)v;
  else if (dt.code == DT_FLOAT && dt.bits == 16) u.f16 = half_from_double((double)(float)v);
  else if (dt.code == DT_FLOAT) u.f32 = (float)v;
  else if (dt.bits == 64) u.i64 = (int64_t)v;
  else u.i32 = (int32_t)v;
  return ir_const_scalar(S->m, S->at, dt, &u);
}

/* `expand_dims(v, axis=1, num_newaxis=ndim-axis-1)`, or v when axis is
** the last axis (TVM's ExpandBiasToMatchAxis for one axis). */
static Expr *expand(Simp *S, Expr *v, int ndim, int axis) {
  int pad = ndim - axis - 1;
  if (pad <= 0) return v;
  Attrs *a = default_attrs(S->m, op_get(OP_EXPAND_DIMS));
  *field(a, "axis") = int_value(S, 1);
  *field(a, "num_newaxis") = int_value(S, pad);
  return call(S, OP_EXPAND_DIMS, a, v, NULL);
}

/* mean / variance over axes with keepdims. */
static Expr *reduce(Simp *S, OpId id, Expr *x, Expr *mean, const int64_t *axes, int naxes) {
  Attrs *a = default_attrs(S->m, op_get(id));
  *field(a, "axis") = ints_value(S, axes, naxes);
  *field(a, "keepdims") = bool_value(S, true);
  return call(S, id, a, x, mean);
}

/* {==== The rewrites ====} */

static const AttrValue *attr(const Expr *call_e, const char *name) {
  const Attrs *a = call_e->u.call.attrs;
  int i = attrs_class_field(a->cls, name, strlen(name));
  RLY_ASSERT(i >= 0);
  return a->values[i];
}

static int64_t attr_int(const Expr *e, const char *name) {
  const AttrValue *v = attr(e, name);
  return v->kind == AV_INT ? v->u.i.v : v->kind == AV_BOOL ? v->u.b : 0;
}

static double attr_float(const Expr *e, const char *name) {
  const AttrValue *v = attr(e, name);
  return v->kind == AV_FLOAT ? v->u.f.v : v->kind == AV_INT ? (double)v->u.i.v : 0;
}

static bool attr_bool(const Expr *e, const char *name) { return attr_int(e, name) != 0; }

static const Type *tensor_type(const Type *t) { return t && t->kind == TYPE_TENSOR ? t : NULL; }

/* axis normalised into [0, ndim), or -1 when out of range. */
static int norm_axis(int64_t axis, int ndim) {
  if (axis < 0) axis += ndim;
  return axis >= 0 && axis < ndim ? (int)axis : -1;
}

/* bn is the (rebuilt) batch_norm call, orig_ty its tuple type. */
static Expr *batch_norm(Simp *S, Expr *bn, const Type *orig_ty) {
  const Type *dt = orig_ty && orig_ty->kind == TYPE_TUPLE ? tensor_type(orig_ty->u.tuple.fields[0]) : NULL;
  if (!dt) return NULL;
  int ndim = dt->u.tensor.ndim, axis = norm_axis(attr_int(bn, "axis"), ndim);
  if (axis < 0) return NULL;
  Expr **a = bn->u.call.args; /* data, gamma, beta, moving_mean, moving_var */
  Expr *eps = scalar(S, dt->u.tensor.dtype, attr_float(bn, "epsilon"));
  Expr *sq = unary(S, OP_SQRT, binary(S, OP_ADD, a[4], eps));
  Expr *scale = binary(S, OP_DIVIDE, scalar(S, dt->u.tensor.dtype, 1.0), sq);
  if (attr_bool(bn, "scale")) scale = binary(S, OP_MULTIPLY, scale, a[1]);
  Expr *shift = binary(S, OP_MULTIPLY, unary(S, OP_NEGATIVE, a[3]), scale);
  if (attr_bool(bn, "center")) shift = binary(S, OP_ADD, shift, a[2]);
  Expr *out = binary(S, OP_MULTIPLY, a[0], expand(S, scale, ndim, axis));
  return binary(S, OP_ADD, out, expand(S, shift, ndim, axis));
}

/* (x - mean) / sqrt(var + eps) over axes, then gamma and beta along axis. */
static Expr *normalize(Simp *S, const Expr *e, Expr *x, const Type *ty, const int64_t *axes, int naxes) {
  Expr *mean = reduce(S, OP_MEAN, x, NULL, axes, naxes);
  Expr *var = reduce(S, OP_VARIANCE, x, mean, axes, naxes);
  Expr *eps = scalar(S, ty->u.tensor.dtype, attr_float(e, "epsilon"));
  Expr *denom = unary(S, OP_SQRT, binary(S, OP_ADD, var, eps));
  return binary(S, OP_DIVIDE, binary(S, OP_SUBTRACT, x, mean), denom);
}

static Expr *scale_center(Simp *S, const Expr *e, Expr *out, int ndim, int axis) {
  if (attr_bool(e, "scale")) out = binary(S, OP_MULTIPLY, out, expand(S, e->u.call.args[1], ndim, axis));
  if (attr_bool(e, "center")) out = binary(S, OP_ADD, out, expand(S, e->u.call.args[2], ndim, axis));
  return out;
}

enum { MAXDIM = 64 };

static bool static_shape(const Type *t) {
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.shape[i] == RLY_DIM_ANY) return false;
  return true;
}

/* A normalisation call e (rebuilt) with result type ty. */
static Expr *norm(Simp *S, Expr *e, const Type *ty) {
  ty = tensor_type(ty);
  if (!ty || ty->u.tensor.ndim > MAXDIM - 1) return NULL;
  const OpDef *op = e->u.call.callee->u.op.op;
  int ndim = ty->u.tensor.ndim;
  Expr *x = e->u.call.args[0];
  int64_t axes[MAXDIM];
  int naxes = 0;
  if (op->id == OP_L2_NORMALIZE) {
    Attrs *a = default_attrs(S->m, op_get(OP_SUM));
    *field(a, "axis") = (AttrValue *)attr(e, "axis");
    *field(a, "keepdims") = bool_value(S, true);
    Expr *sum = call(S, OP_SUM, a, binary(S, OP_MULTIPLY, x, x), NULL);
    Expr *eps = scalar(S, ty->u.tensor.dtype, attr_float(e, "eps"));
    return binary(S, OP_DIVIDE, x, unary(S, OP_SQRT, binary(S, OP_MAXIMUM, sum, eps)));
  }
  int axis = norm_axis(attr_int(e, "axis"), ndim);
  if (axis < 0) return NULL;
  if (op->id == OP_LAYER_NORM) {
    axes[naxes++] = axis;
    return scale_center(S, e, normalize(S, e, x, ty, axes, naxes), ndim, axis);
  }
  if (op->id == OP_INSTANCE_NORM) {
    for (int i = 1; i < ndim; i++)
      if (i != axis) axes[naxes++] = i;
    return scale_center(S, e, normalize(S, e, x, ty, axes, naxes), ndim, axis);
  }
  /* group_norm */
  int64_t groups = attr_int(e, "num_groups"), ch = ty->u.tensor.shape[axis];
  if (!static_shape(ty) || groups < 1 || ch % groups != 0) return NULL;
  int64_t shape[MAXDIM], back[MAXDIM];
  int n = 0;
  for (int i = 0; i < ndim; i++) {
    back[i] = ty->u.tensor.shape[i];
    if (i == axis) {
      shape[n++] = groups;
      shape[n++] = ch / groups;
    } else {
      shape[n++] = ty->u.tensor.shape[i];
    }
  }
  for (int i = axis + 1; i < n; i++) axes[naxes++] = i;
  Attrs *r1 = default_attrs(S->m, op_get(OP_RESHAPE));
  *field(r1, "newshape") = ints_value(S, shape, n);
  Expr *grouped = call(S, OP_RESHAPE, r1, x, NULL);
  Expr *out = normalize(S, e, grouped, ty, axes, naxes);
  Attrs *r2 = default_attrs(S->m, op_get(OP_RESHAPE));
  *field(r2, "newshape") = ints_value(S, back, ndim);
  out = call(S, OP_RESHAPE, r2, out, NULL);
  return scale_center(S, e, out, ndim, axis);
}

static bool is_op_call(const Expr *e, OpId id) {
  return e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_OP && e->u.call.callee->u.op.op->id == (int)id;
}

/* The replacement of n (orig rebuilt with rewritten children), or n. */
static Expr *simplify(Simp *S, const Expr *orig, Expr *n) {
  S->at = n->span;
  if (n->kind == EXPR_GET_ITEM) {
    Expr *t = n->u.get_item.tuple;
    int i = n->u.get_item.index;
    const Type *tt = orig->u.get_item.tuple->type;
    if (is_op_call(t, OP_DROPOUT) && i == 0) return t->u.call.args[0];
    if (is_op_call(t, OP_BATCH_NORM)) {
      if (i == 1) return t->u.call.args[3];
      if (i == 2) return t->u.call.args[4];
      Expr *r = batch_norm(S, t, tt);
      return r ? r : n;
    }
    return n;
  }
  if (is_op_call(n, OP_LAYER_NORM) || is_op_call(n, OP_INSTANCE_NORM) || is_op_call(n, OP_GROUP_NORM) ||
      is_op_call(n, OP_L2_NORMALIZE)) {
    Expr *r = norm(S, n, orig->type);
    return r ? r : n;
  }
  return n;
}

Expr *pass_simplify_inference(PassCtx *ctx, Expr *root) {
  Simp S = {.m = ctx->m};
  ExprVec all = {0}, kids = {0};
  pass_postorder(root, &all);
  uint32_t n = ctx->m->nexprs;
  Expr **new_of = rly_xcalloc(n ? n : 1, sizeof(Expr *));
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    if (pass_is_atom(e)) {
      new_of[e->id] = e;
      continue;
    }
    kids.len = 0;
    pass_kids(e, &kids);
    for (int k = 0; k < kids.len; k++) kids.data[k] = new_of[kids.data[k]->id];
    Expr *r = pass_rebuild(ctx->m, e, kids.data, false);
    new_of[e->id] = simplify(&S, e, r);
  }
  Expr *out = new_of[root->id];
  free(new_of);
  VEC_FREE(&all);
  VEC_FREE(&kids);
  return out;
}
