/* fold_constant.c: FoldConstant, evaluation at compile time of what
** depends on constants only.
** Requires: types. Preserves: types (a folded node's constant takes its
** type), spans, sharing. Never fails: a call whose kernel reports an error
** (an integer division by zero) stays, to fail at run time.
**
** - A call of an operator whose arguments are all constants (or tuples of
**   constants, as concatenate takes) and whose result type is fully
**   static is run through the runtime's reference kernel (the same kernel
**   the interpreter runs, through kcall_prepare) and replaced by a CONST
**   node; a tuple result (split) becomes a tuple of constants. Not folded:
**   annotations and placement ops (annotation.*, on_device, device_copy),
**   nn.dropout (random at training time), ops without a reference kernel,
**   results over 256 MiB; calls of functions, globals and constructors,
**   refs, if and match are never evaluated here.
** - `shape_of(x)` of an x whose type has a static shape becomes the shape
**   (in shape_of's dtype) when x has no effects (a variable, a constant or
**   an operator call).
** - A projection of a tuple literal whose fields have no effects is that
**   field (TVM does it for any tuple literal).
** - `let %x = c; body` with c a constant (after folding) is body with c
**   in place of %x, as TVM inlines let-bound constants (the let stays
**   when a Primitive function, left as it is, reads %x).
** Primitive functions (kernels) are left as they are.
**
** Constants print as `meta[relay.Constant][i]` (0-d ones of simple dtypes
** as literals), so a folded module prints with its metadata section.
**
** One post-order over every node of the root (pass_postorder), rebuilding
** a node when a child changed, folding after the children. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "interp/kcall.h"
#include "ops/ops.h"
#include "passes/pass.h"
#include "relayc/runtime.h"

enum { MAX_FOLD_BYTES = 256 << 20 };

typedef struct Fold {
  Module *m;
  Arena *scratch;   /* kernel-call descriptions; freed at the end */
  Expr **new_of;    /* per id: the replacement */
  Expr **let_of;    /* per var id: the let binding it */
  uint8_t *inside;  /* per id: inside a Primitive function */
} Fold;


/* {==== Constants <-> runtime tensors ====} */

static rlyrt_tensor *tensor_of(const ConstData *c) {
  DLDataType dt = kcall_dtype(c->dtype);
  rlyrt_tensor *t = rlyrt_tensor_new(dt, c->ndim, c->shape, false);
  if (t && c->nbytes) memcpy(t->dl.data, c->data, c->nbytes);
  return t;
}

static ConstData *const_of(Module *m, const rlyrt_tensor *t) {
  ConstData *c = ARENA_NEW(m->arena, ConstData);
  c->dtype.code = t->dl.dtype.code;
  c->dtype.bits = t->dl.dtype.bits;
  c->dtype.lanes = t->dl.dtype.lanes;
  c->ndim = t->dl.ndim;
  c->shape = c->ndim ? arena_dup(m->arena, t->dl.shape, sizeof(int64_t) * (size_t)c->ndim) : NULL;
  c->nbytes = rlyrt_tensor_nbytes(t);
  c->data = arena_alloc(m->arena, c->nbytes ? c->nbytes : 1, 64);
  if (c->nbytes) memcpy(c->data, t->dl.data, c->nbytes);
  return c;
}

/* The runtime value of a constant or a tuple of constants; NULL if e is
** neither (or memory ran out). */
static rlyrt_object *value_of(const Expr *e) {
  if (e->kind == EXPR_CONST) {
    rlyrt_tensor *t = tensor_of(e->u.constant.value);
    return t ? &t->obj : NULL;
  }
  if (e->kind != EXPR_TUPLE) return NULL;
  for (int i = 0; i < e->u.tuple.n; i++)
    if (e->u.tuple.fields[i]->kind != EXPR_CONST) return NULL;
  rlyrt_tuple *tup = rlyrt_tuple_new(e->u.tuple.n);
  if (!tup) return NULL;
  for (int i = 0; i < e->u.tuple.n; i++) {
    rlyrt_tensor *t = tensor_of(e->u.tuple.fields[i]->u.constant.value);
    if (!t) {
      rlyrt_release(&tup->obj);
      return NULL;
    }
    rlyrt_tuple_set_take(tup, i, &t->obj);
  }
  return &tup->obj;
}

/* {==== Folding ====} */

static bool static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR) return false;
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.shape[i] == RLY_DIM_ANY) return false;
  return true;
}

/* Bytes of a static tensor or tuple-of-tensors type; -1 for other types. */
static int64_t type_bytes(const Type *t) {
  if (static_tensor(t)) {
    int64_t n = (int64_t)dtype_bytes(t->u.tensor.dtype);
    for (int i = 0; i < t->u.tensor.ndim; i++) {
      if (t->u.tensor.shape[i] && n > INT64_MAX / t->u.tensor.shape[i]) return INT64_MAX;
      n *= t->u.tensor.shape[i];
    }
    return n;
  }
  if (t && t->kind == TYPE_TUPLE) {
    int64_t sum = 0;
    for (int i = 0; i < t->u.tuple.n; i++) {
      int64_t b = type_bytes(t->u.tuple.fields[i]);
      if (b < 0) return -1;
      sum = b > INT64_MAX - sum ? INT64_MAX : sum + b;
    }
    return sum;
  }
  return -1;
}

static bool never_fold(const OpDef *op) {
  switch (op->id) {
  case OP_COMPILER_BEGIN:
  case OP_COMPILER_END:
  case OP_STOP_FUSION:
  case OP_ON_DEVICE:
  case OP_DEVICE_COPY:
  case OP_DROPOUT: return true;
  default: return false;
  }
}

/* Evaluating e has no effect (its value may be dropped). */
static bool no_effects(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_CONST:
  case EXPR_GLOBAL:
  case EXPR_OP:
  case EXPR_CTOR:
  case EXPR_FUNC: return true;
  case EXPR_CALL: return e->u.call.callee->kind == EXPR_OP;
  default: return false;
  }
}

/* The constant (or tuple of constants) the operator call e evaluates to;
** NULL when it cannot or must not be folded. e is typed. */
static Expr *fold_call(Fold *F, Expr *e) {
  const OpDef *op = e->u.call.callee->u.op.op;
  Module *m = F->m;
  if (op->id == OP_SHAPE_OF && e->u.call.nargs == 1) {
    const Expr *x = e->u.call.args[0];
    if (!static_tensor(x->type) || !static_tensor(e->type) || !no_effects(x)) return NULL;
    const Type *xt = x->type;
    DType dt = e->type->u.tensor.dtype;
    ConstData *c = ARENA_NEW(m->arena, ConstData);
    c->dtype = dt;
    c->ndim = 1;
    c->shape = ARENA_NEW(m->arena, int64_t);
    c->shape[0] = xt->u.tensor.ndim;
    c->nbytes = dtype_bytes(dt) * (size_t)xt->u.tensor.ndim;
    c->data = arena_alloc(m->arena, c->nbytes ? c->nbytes : 1, 64);
    for (int i = 0; i < xt->u.tensor.ndim; i++) {
      int64_t d = xt->u.tensor.shape[i];
      if (dt.bits == 64) memcpy((int64_t *)c->data + i, &d, 8);
      else if (dt.bits == 32) ((int32_t *)c->data)[i] = (int32_t)d;
      else return NULL;
    }
    Expr *k = ir_const(m, e->span, c);
    k->type = e->type;
    return k;
  }
  if (never_fold(op)) return NULL;
  for (int i = 0; i < e->u.call.nargs; i++) {
    const Expr *a = e->u.call.args[i];
    if (a->kind == EXPR_CONST) continue;
    if (a->kind != EXPR_TUPLE) return NULL;
    for (int k = 0; k < a->u.tuple.n; k++)
      if (a->u.tuple.fields[k]->kind != EXPR_CONST) return NULL;
  }
  int64_t bytes = type_bytes(e->type);
  if (bytes < 0 || bytes > MAX_FOLD_BYTES) return NULL;
  rlyrt_kernel_fn fn = rlyrt_kernel_lookup(op->name);
  if (!fn) return NULL;
  rlyrt_kernel_call kc;
  char err[256];
  if (!kcall_prepare(F->scratch, e, &kc, err, sizeof err)) return NULL;
  int n = e->u.call.nargs;
  rlyrt_object **args = rly_xcalloc((size_t)(n ? n : 1), sizeof(rlyrt_object *));
  bool ok = true;
  for (int i = 0; ok && i < n; i++) ok = (args[i] = value_of(e->u.call.args[i])) != NULL;
  Expr *out = NULL;
  if (ok) {
    kc.args = args;
    kc.nargs = n;
    kc.result = NULL;
    if (fn(&kc) == RLYRT_OK && kc.result) {
      rlyrt_object *r = kc.result;
      const Type *t = e->type;
      if (r->kind == RLYRT_TENSOR && t->kind == TYPE_TENSOR) {
        out = ir_const(m, e->span, const_of(m, (rlyrt_tensor *)r));
        out->type = e->type;
      } else if (r->kind == RLYRT_TUPLE && t->kind == TYPE_TUPLE && RLYRT_AS_TUPLE(r)->n == t->u.tuple.n) {
        rlyrt_tuple *tup = RLYRT_AS_TUPLE(r);
        Expr **fields = ARENA_ARRAY(m->arena, Expr *, tup->n ? tup->n : 1);
        for (int i = 0; i < tup->n && fields; i++) {
          if (!tup->fields[i] || tup->fields[i]->kind != RLYRT_TENSOR) {
            fields = NULL;
            break;
          }
          fields[i] = ir_const(m, e->span, const_of(m, (rlyrt_tensor *)tup->fields[i]));
          fields[i]->type = t->u.tuple.fields[i];
        }
        if (fields) {
          out = ir_tuple(m, e->span, fields, tup->n);
          out->type = e->type;
        }
      }
      rlyrt_release(r);
    }
    rlyrt_clear_error();
  }
  for (int i = 0; i < n; i++) rlyrt_release(args[i]);
  free(args);
  return out;
}

/* The replacement of n (e rebuilt with its children's replacements). */
static Expr *fold(Fold *F, Expr *n) {
  if (n->kind == EXPR_CALL && n->u.call.callee->kind == EXPR_OP) {
    Expr *k = fold_call(F, n);
    return k ? k : n;
  }
  if (n->kind == EXPR_GET_ITEM && n->u.get_item.tuple->kind == EXPR_TUPLE) {
    Expr *t = n->u.get_item.tuple;
    for (int i = 0; i < t->u.tuple.n; i++)
      if (!no_effects(t->u.tuple.fields[i])) return n;
    return t->u.tuple.fields[n->u.get_item.index];
  }
  /* The let goes when its variable was replaced everywhere (or unused). */
  if (n->kind == EXPR_LET && n->u.let.value->kind == EXPR_CONST && F->new_of[n->u.let.var->id] != n->u.let.var)
    return n->u.let.body;
  return n;
}

Expr *pass_fold_constant(PassCtx *ctx, Expr *root) {
  if (root->kind == EXPR_FUNC && ir_is_primitive(root)) return root;
  Module *m = ctx->m;
  Fold F = {.m = m, .scratch = arena_new(1 << 16)};
  ExprVec all = {0}, kids = {0}, inner = {0};
  pass_postorder(root, &all);
  size_t cap = m->nexprs ? m->nexprs : 1;
  F.new_of = rly_xcalloc(cap, sizeof(Expr *));
  F.let_of = rly_xcalloc(cap, sizeof(Expr *));
  F.inside = rly_xcalloc(cap, 1);
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    if (e->kind == EXPR_LET) F.let_of[e->u.let.var->id] = e;
    if (e->kind == EXPR_FUNC && ir_is_primitive(e) && !F.inside[e->id]) {
      inner.len = 0;
      pass_postorder(e->u.func.body, &inner);
      for (int k = 0; k < inner.len; k++) F.inside[inner.data[k]->id] = 1;
    }
  }
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    Expr *r = e;
    if (e->kind == EXPR_VAR) {
      const Expr *let = F.let_of[e->id];
      const Expr *v = let ? F.new_of[let->u.let.value->id] : NULL;
      if (v && v->kind == EXPR_CONST && !F.inside[e->id]) r = (Expr *)v;
    } else if (!pass_is_atom(e)) {
      kids.len = 0;
      pass_kids(e, &kids);
      for (int k = 0; k < kids.len; k++) kids.data[k] = F.new_of[kids.data[k]->id];
      r = pass_rebuild(m, e, kids.data, false);
      if (!F.inside[e->id]) r = fold(&F, r);
    }
    F.new_of[e->id] = r;
  }
  Expr *out = F.new_of[root->id];
  free(F.new_of);
  free(F.let_of);
  free(F.inside);
  VEC_FREE(&all);
  VEC_FREE(&kids);
  VEC_FREE(&inner);
  arena_free(F.scratch);
  return out;
}
