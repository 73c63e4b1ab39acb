/* hoist_projection.c: HoistLoopProjection, the input projection of a
** recursive loop computed once, before the loop, as one matrix product.
** Requires: types. Preserves: types, spans, sharing. Never fails. A module
** pass (PASS_MODULE): it changes a loop's global and every call of it.
**
** The pattern is the one of an RNN stepped by a self-recursive global:
**
**   def @step(%t: int32, %xs: Tensor[(T, B, K)], %h, %w: Tensor[(N, K)], ...) {
**     if (%t == T) { %h } else {
**       ... nn.dense(take(%xs, %t, axis=0), %w) ...
**       @step(%t + 1, %xs, %h2, %w, ...)
**     }
**   }
**
** Each step multiplies one row of %xs by %w: a GEMV reading all of %w per
** step. Since %xs and %w are the same in every step, all the rows can be
** multiplied at once, before the loop, by one GEMM (what ONNX Runtime's
** LSTM does with its input weights). The pass adds a parameter %P to
** @step, holding nn.dense(%xs, %w) (shape (T, B, N)); the step reads
** take(%P, %t, axis=0), and every call from outside the loop passes
** nn.dense of its own arguments. The rows equal the per-step products up
** to the accumulation order of the kernels (the results are compared by
** tolerance, as every float32 kernel's are).
**
** Conditions (all are checked; anything else leaves the module as it is):
** - @step is not @main (its parameters are the module's interface), has no
**   type parameters, and is used only as the callee of calls: its own calls
**   (in its body, closures included) and calls from other roots, none of
**   which @step reaches through the globals it calls (a call inside a
**   bigger loop would compute the product every time round).
** - It calls itself at least once. A parameter is invariant when every
**   self-call passes that very parameter in its place; it is a counter when
**   every self-call passes it plus or minus one (`%t + 1`, `1 + %t`,
**   `%t - 1`): the loop visits the rows one after another, so it reads most
**   of the product it is given.
** - The call is nn.dense(take(D, I), W) (the take directly or through a
**   let variable of the body) with D and W invariant parameters
**   and I a counter parameter; take's axis is a number that is not D's
**   last axis (the dense multiplies along the last), batch_dims is 0; D and
**   the dense's result have static shapes; the product is at most
**   HOIST_MAX_BYTES. take keeps its mode, so an index out of range is
**   clipped or wrapped as it was.
** - Every call from outside passes a variable or a constant for D and for
**   W, so that the product reads them without evaluating anything twice.
** One product serves every dense of the same D, W and attributes. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ops/ops.h"
#include "passes/pass.h"

/* Products bigger than this stay in the loop: memory for speed has limits. */
#define HOIST_MAX_BYTES ((int64_t)64 << 20)

/* One product: nn.dense(params[data], params[weight], attrs). */
typedef Vec(int) IntVec;

typedef struct Proj {
  int data, weight;
  const Attrs *attrs;   /* the dense's */
  Expr *op;             /* its callee, shared by the products' calls */
  Type *type;           /* the product's: data's shape with N last */
  Expr *param;          /* the loop's new parameter */
} Proj;

typedef struct Hoist {
  Module *m;
  GlobalDef *def;       /* the loop */
  Expr *fn;             /* its function */
  uint8_t *invariant;   /* per parameter */
  uint8_t *counter;     /* per parameter */
  Vec(Proj) projs;
  ExprVec rewrite;      /* dense calls of the body to replace, in order */
  IntVec rewrite_proj; /* their products */
  Type *new_type;       /* the loop's new function type */
  Expr **bound;         /* per id of a let variable of the body: its value */
} Hoist;

static bool is_op(const Expr *e, OpId id) {
  return e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_OP && e->u.call.callee->u.op.op->id == (int)id;
}

static bool calls_def(const Expr *e, const GlobalDef *def) {
  return e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_GLOBAL && e->u.call.callee->u.global.def == def;
}

/* The index of v among fn's parameters, or -1. */
static int param_index(const Expr *fn, const Expr *v) {
  for (int i = 0; i < fn->u.func.nparams; i++)
    if (fn->u.func.params[i] == v) return i;
  return -1;
}

/* e is a 0-d integer constant equal to 1. */
static bool is_one(const Expr *e) {
  if (e->kind != EXPR_CONST) return false;
  const ConstData *c = e->u.constant.value;
  if (c->ndim != 0 || c->dtype.lanes != 1 || (c->dtype.code != DT_INT && c->dtype.code != DT_UINT)) return false;
  switch (c->dtype.bits) {
  case 8: return *(const int8_t *)c->data == 1;
  case 16: return *(const int16_t *)c->data == 1;
  case 32: return *(const int32_t *)c->data == 1;
  case 64: return *(const int64_t *)c->data == 1;
  default: return false;
  }
}

/* arg is p + 1, 1 + p or p - 1. */
static bool is_step_of(const Expr *arg, const Expr *p) {
  if (is_op(arg, OP_ADD) && arg->u.call.nargs == 2)
    return (arg->u.call.args[0] == p && is_one(arg->u.call.args[1])) ||
           (arg->u.call.args[1] == p && is_one(arg->u.call.args[0]));
  return is_op(arg, OP_SUBTRACT) && arg->u.call.nargs == 2 && arg->u.call.args[0] == p &&
         is_one(arg->u.call.args[1]);
}

static bool static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR) return false;
  for (int i = 0; i < t->u.tensor.ndim; i++)
    if (t->u.tensor.shape[i] < 0) return false;
  return true;
}

/* {==== Where the loop is called ====} */

/* Every root of m: the defs' functions, then the expression (if any). */
static int root_count(const Module *m) { return m->ndefs + (m->expr ? 1 : 0); }
static Expr *root_at(const Module *m, int i) { return i < m->ndefs ? m->defs[i]->func : m->expr; }

/* The defs whose globals root mentions, marked in seen[] (by def index). */
static void mark_callees(const Module *m, Expr *root, uint8_t *seen, IntVec *todo) {
  ExprVec all = {0};
  pass_postorder(root, &all);
  for (int i = 0; i < all.len; i++) {
    if (all.data[i]->kind != EXPR_GLOBAL) continue;
    GlobalDef *g = all.data[i]->u.global.def;
    for (int k = 0; k < m->ndefs; k++)
      if (m->defs[k] == g && !seen[k]) {
        seen[k] = 1;
        VEC_PUSH(todo, k);
      }
  }
  VEC_FREE(&all);
}

/* True when the loop (def index d) can change its calls: it is only ever
** called, at least once by itself, and no root that calls it from outside
** is reached from it. Fills H->invariant and H->counter. */
static bool loop_usable(Hoist *H, int d) {
  Module *m = H->m;
  Expr *fn = H->fn;
  int np = fn->u.func.nparams;
  uint8_t *reach = rly_xcalloc((size_t)m->ndefs, 1);
  IntVec todo = {0};
  mark_callees(m, fn, reach, &todo);
  while (todo.len) {
    int k = todo.data[--todo.len];
    mark_callees(m, m->defs[k]->func, reach, &todo);
  }
  VEC_FREE(&todo);
  for (int i = 0; i < np; i++) H->invariant[i] = H->counter[i] = 1;
  bool ok = true;
  int self_calls = 0;
  ExprVec all = {0};
  for (int r = 0; ok && r < root_count(m); r++) {
    all.len = 0;
    pass_postorder(root_at(m, r), &all);
    int uses = 0, calls = 0;
    for (int i = 0; i < all.len; i++) {
      Expr *e = all.data[i];
      if (e->kind == EXPR_GLOBAL && e->u.global.def == H->def) uses++;
      if (!calls_def(e, H->def)) continue;
      calls++;
      if (e->u.call.nargs != np) ok = false;
      if (r != d) continue;
      self_calls++;
      for (int k = 0; ok && k < np; k++) {
        const Expr *a = e->u.call.args[k], *p = fn->u.func.params[k];
        if (a != p) H->invariant[k] = 0;
        if (!is_step_of(a, p)) H->counter[k] = 0;
      }
    }
    /* a global node is one node per mention; a shared one (two calls of
    ** one node) counts once and fails this too, which is safe */
    if (uses != calls) ok = false;
    if (r != d && calls && r < m->ndefs && reach[r]) ok = false;
  }
  VEC_FREE(&all);
  free(reach);
  return ok && self_calls > 0;
}

/* {==== Finding the products ====} */

/* The external calls' arguments k are all variables or constants. */
static bool outside_args_simple(Hoist *H, int d, int k) {
  bool ok = true;
  ExprVec all = {0};
  for (int r = 0; ok && r < root_count(H->m); r++) {
    if (r == d) continue;
    all.len = 0;
    pass_postorder(root_at(H->m, r), &all);
    for (int i = 0; ok && i < all.len; i++) {
      if (!calls_def(all.data[i], H->def)) continue;
      const Expr *a = all.data[i]->u.call.args[k];
      ok = a->kind == EXPR_VAR || a->kind == EXPR_CONST;
    }
  }
  VEC_FREE(&all);
  return ok;
}

/* The product dense (a candidate call of the body) needs, added to
** H->projs when new; -1 when dense does not fit the pattern. */
static int product_of(Hoist *H, int d, const Expr *dense) {
  if (!is_op(dense, OP_DENSE) || dense->u.call.nargs != 2) return -1;
  const Expr *take = dense->u.call.args[0];
  if (take->kind == EXPR_VAR && H->bound[take->id]) take = H->bound[take->id];
  if (!is_op(take, OP_TAKE) || take->u.call.nargs != 2) return -1;
  int data = param_index(H->fn, take->u.call.args[0]);
  int index = param_index(H->fn, take->u.call.args[1]);
  int weight = param_index(H->fn, dense->u.call.args[1]);
  if (data < 0 || index < 0 || weight < 0 || !H->invariant[data] || !H->invariant[weight] || !H->counter[index])
    return -1;
  const Attrs *ta = take->u.call.attrs;
  if (!ta || !ta->cls) return -1;
  int fa = attrs_class_field(ta->cls, "axis", 4), fb = attrs_class_field(ta->cls, "batch_dims", 10);
  if (fa < 0 || ta->values[fa]->kind != AV_INT) return -1;
  if (fb >= 0 && !(ta->values[fb]->kind == AV_INT && ta->values[fb]->u.i.v == 0)) return -1;
  const Type *dt = take->u.call.args[0]->type, *rt = dense->type;
  if (!static_tensor(dt) || !static_tensor(rt)) return -1;
  int rank = dt->u.tensor.ndim;
  int64_t axis = ta->values[fa]->u.i.v;
  if (axis < 0) axis += rank;
  if (rank < 2 || axis < 0 || axis >= rank - 1 || rt->u.tensor.ndim != rank - 1) return -1;
  int64_t shape[16], bytes = (int64_t)dtype_bytes(rt->u.tensor.dtype);
  if (rank > 16) return -1;
  for (int i = 0; i < rank - 1; i++) shape[i] = dt->u.tensor.shape[i];
  shape[rank - 1] = rt->u.tensor.shape[rank - 2];
  for (int i = 0; i < rank; i++) {
    if (shape[i] && bytes > HOIST_MAX_BYTES / shape[i]) return -1;
    bytes *= shape[i];
  }
  for (int i = 0; i < H->projs.len; i++) {
    Proj *p = &H->projs.data[i];
    if (p->data == data && p->weight == weight && ir_attrs_equal(p->attrs, dense->u.call.attrs)) return i;
  }
  if (!outside_args_simple(H, d, data) || !outside_args_simple(H, d, weight)) return -1;
  Proj p = {data, weight, dense->u.call.attrs, dense->u.call.callee, NULL, NULL};
  p.type = ir_tensor_type(H->m, dense->span, rt->u.tensor.dtype, rank, shape);
  char name[64];
  snprintf(name, sizeof name, "%s_proj%d", H->fn->u.func.params[data]->u.var.name->text, H->projs.len);
  p.param = ir_var(H->m, dense->span, sym_intern_cstr(&H->m->syms, name), p.type);
  p.param->type = p.type;
  VEC_PUSH(&H->projs, p);
  return H->projs.len - 1;
}

/* {==== Rewriting ====} */

/* A new global node of the loop, with its new type. */
static Expr *loop_ref(Hoist *H, const Expr *old) {
  Expr *g = ir_expr_new(H->m, EXPR_GLOBAL, old->span);
  g->u.global = old->u.global;
  g->type = H->new_type;
  return g;
}

/* The call c (of the loop, c rebuilt from c0) with the products appended:
** the new parameters in a self-call, the products of its own arguments
** otherwise. */
static Expr *extend_call(Hoist *H, const Expr *c0, const Expr *c, bool self) {
  int n = c->u.call.nargs, np = H->projs.len;
  Expr **args = ARENA_ARRAY(H->m->arena, Expr *, n + np);
  memcpy(args, c->u.call.args, sizeof(Expr *) * (size_t)n);
  for (int i = 0; i < np; i++) {
    Proj *p = &H->projs.data[i];
    if (self) {
      args[n + i] = p->param;
      continue;
    }
    Expr **dargs = ARENA_ARRAY(H->m->arena, Expr *, 2);
    dargs[0] = c->u.call.args[p->data];
    dargs[1] = c->u.call.args[p->weight];
    Expr *dense = ir_call(H->m, c0->span, p->op, dargs, 2, (Attrs *)p->attrs);
    dense->type = p->type;
    args[n + i] = dense;
  }
  Expr *r = ir_call(H->m, c0->span, loop_ref(H, c0->u.call.callee), args, n + np, c->u.call.attrs);
  r->type = c0->type;
  return r;
}

/* take(P, index) in place of the dense call d. */
static Expr *read_product(Hoist *H, const Expr *d, int proj) {
  const Expr *take = d->u.call.args[0];
  if (take->kind == EXPR_VAR && H->bound[take->id]) take = H->bound[take->id];
  Expr **args = ARENA_ARRAY(H->m->arena, Expr *, 2);
  args[0] = H->projs.data[proj].param;
  args[1] = take->u.call.args[1];
  Expr *r = ir_call(H->m, d->span, take->u.call.callee, args, 2, take->u.call.attrs);
  r->type = d->type;
  return r;
}

/* root rewritten: the loop's calls extended, and in the loop's own body
** (self) the chosen dense calls replaced. */
static Expr *rewrite_root(Hoist *H, Expr *root, bool self) {
  ExprVec all = {0}, kids = {0};
  pass_postorder(root, &all);
  Expr **new_of = rly_xcalloc(H->m->nexprs ? H->m->nexprs : 1, sizeof(Expr *));
  for (int i = 0; i < all.len; i++) {
    Expr *e = all.data[i];
    if (pass_is_atom(e)) {
      new_of[e->id] = e;
      continue;
    }
    kids.len = 0;
    pass_kids(e, &kids);
    for (int k = 0; k < kids.len; k++) kids.data[k] = new_of[kids.data[k]->id];
    Expr *r = pass_rebuild(H->m, e, kids.data, false);
    if (calls_def(e, H->def)) r = extend_call(H, e, r, self);
    for (int k = 0; self && k < H->rewrite.len; k++)
      if (H->rewrite.data[k] == e) r = read_product(H, e, H->rewrite_proj.data[k]);
    new_of[e->id] = r;
  }
  Expr *out = new_of[root->id];
  free(new_of);
  VEC_FREE(&all);
  VEC_FREE(&kids);
  return out;
}

/* The loop's function with the new parameters and type. */
static Expr *new_function(Hoist *H, Expr *body) {
  Expr *fn = H->fn;
  int n = fn->u.func.nparams, np = H->projs.len;
  Expr *f = ir_expr_new(H->m, EXPR_FUNC, fn->span);
  f->u.func = fn->u.func;
  f->u.func.params = ARENA_ARRAY(H->m->arena, Expr *, n + np);
  memcpy(f->u.func.params, fn->u.func.params, sizeof(Expr *) * (size_t)n);
  for (int i = 0; i < np; i++) f->u.func.params[n + i] = H->projs.data[i].param;
  f->u.func.nparams = n + np;
  f->u.func.body = body;
  f->type = H->new_type;
  return f;
}

static Type *extended_type(Hoist *H) {
  const Type *t = H->fn->type;
  int n = t->u.func.nparams, np = H->projs.len;
  Type *r = ir_type_new(H->m, TYPE_FUNC, t->span);
  r->u.func = t->u.func;
  r->u.func.params = ARENA_ARRAY(H->m->arena, Type *, n + np);
  memcpy(r->u.func.params, t->u.func.params, sizeof(Type *) * (size_t)n);
  for (int i = 0; i < np; i++) r->u.func.params[n + i] = H->projs.data[i].type;
  r->u.func.nparams = n + np;
  return r;
}

/* Hoists the products of def d, if any. */
static void hoist_def(Module *m, int d) {
  GlobalDef *def = m->defs[d];
  Expr *fn = def->func;
  if (strcmp(def->name->text, "main") == 0 || fn->u.func.ntparams || !fn->type || fn->type->kind != TYPE_FUNC ||
      fn->type->u.func.ntparams || fn->type->u.func.nparams != fn->u.func.nparams)
    return;
  int np = fn->u.func.nparams;
  Hoist H = {.m = m, .def = def, .fn = fn};
  H.invariant = rly_xcalloc((size_t)(np ? np : 1), 1);
  H.counter = rly_xcalloc((size_t)(np ? np : 1), 1);
  if (loop_usable(&H, d)) {
    ExprVec all = {0};
    pass_postorder(fn->u.func.body, &all);
    H.bound = rly_xcalloc(m->nexprs ? m->nexprs : 1, sizeof(Expr *));
    for (int i = 0; i < all.len; i++)
      if (all.data[i]->kind == EXPR_LET) H.bound[all.data[i]->u.let.var->id] = all.data[i]->u.let.value;
    for (int i = 0; i < all.len; i++) {
      int p = product_of(&H, d, all.data[i]);
      if (p < 0) continue;
      VEC_PUSH(&H.rewrite, all.data[i]);
      VEC_PUSH(&H.rewrite_proj, p);
    }
    VEC_FREE(&all);
  }
  if (H.projs.len) {
    H.new_type = extended_type(&H);
    Expr *body = rewrite_root(&H, fn->u.func.body, true);
    Expr *nf = new_function(&H, body);
    for (int r = 0; r < root_count(m); r++) {
      if (r == d) continue;
      Expr *root = root_at(m, r), *nr = rewrite_root(&H, root, false);
      if (r < m->ndefs) m->defs[r]->func = nr;
      else m->expr = nr;
    }
    def->func = nf;
  }
  free(H.bound);
  VEC_FREE(&H.projs);
  VEC_FREE(&H.rewrite);
  VEC_FREE(&H.rewrite_proj);
  free(H.invariant);
  free(H.counter);
}

Expr *pass_hoist_projection(PassCtx *ctx, Expr *root) {
  (void)root;
  for (int d = 0; d < ctx->m->ndefs; d++) hoist_def(ctx->m, d);
  return NULL;
}
