/* graph_form.c: ToGraphNormalForm, restricted to dataflow lets.
** Requires: types. Preserves: types (no node gets a new type), spans,
** sharing. Never fails.
**
** Why: FuseOps fuses the dataflow graph only; a let variable is opaque to
** it (as in TVM), so a model written as a let chain (`let %i =
** sigmoid(%s.0); let %c2 = add(multiply(%f, %c), multiply(%i, %g));`) gets
** one kernel per let. This pass turns such lets into graph bindings: every
** use of the variable becomes the let's value itself, one shared node (a
** DAG, as `%0 = ...` is), never a copy, and the let goes. ToANormalForm
** binds a shared node once, in the innermost scope holding all its uses,
** at its first use (anf.c), so the value is still computed once.
**
** Place: from -O1, before SimplifyInference (which matches
** `nn.batch_norm(...).0`: a let-bound batch_norm's projection becomes one)
** and before FoldConstant and
** FuseOps. Before FoldConstant because a let-bound tuple made a node makes
** its projections projections of a tuple literal, which FoldConstant
** removes; run after it, FuseOps would group such a tuple with its
** projection into a kernel that returns its own parameter (correct since
** codegen copies such a result out of a stack box or frame, but a kernel
** for nothing).
** With --no-fuse it still runs (compile.c skips fuse_ops only): the same
** kernels, other variable numbers and binding places.
**
** Which lets go. `let %v = V; body` when all of these hold:
** - V is pure dataflow: a constant, a variable, a global, a constructor as
**   a value, a tuple or a projection of dataflow parts, or a call of an
**   operator (not of a function, closure, constructor or global) on
**   dataflow arguments. Such a value is the same wherever and whenever it
**   is computed (its variables are immutable, it reads no reference), so
**   only where it is computed changes. Kept: calls of anything but an
**   operator, if, match, let, references, function literals.
** - every use of %v is in the same function as the let: not inside a
**   function literal nested in the body. A value computed outside a closure
**   must not move into it: a closure may run many times (a loop is a
**   recursive closure or global), so it would be computed at every call.
**   Within one function, a use may be in an if branch or a match clause:
**   the value then moves into that branch when all its uses are there,
**   which computes it at most as often as before (never more: a branch
**   runs at most once per run of its scope).
** - %v is not used in V (a program that cannot run; anf reports it) nor in
**   an attribute expression, and %v's type is V's (an annotation that
**   differs, which unification allowed, keeps its let so no consumer's
**   type changes).
** - the let is not inside a Primitive function (a kernel: FuseOps and the
**   lowering own those).
** A dead let of a pure value goes as well (DeadCodeElimination would drop
** it anyway).
**
** Semantics. Operator calls are pure (as in DeadCodeElimination and TVM):
** a value that fails at run time (an integer division by zero) and moves
** into a branch that does not run no longer fails. The relative order of
** effects (references, calls) is unchanged: moved values have none.
**
** Algorithm, per root, iterative: the full post-order (IR_KIDS_INNER);
** ir_homes for the scope tree and each node's home, each scope's function
** depth (function bodies from the root down); per node whether it is
** dataflow; per let variable whether a use is unsafe (each use edge's
** scope, as ir_homes computes it, must have the let's function depth);
** then one rebuild in post-order where a variable of a removed let becomes
** its value's replacement and the let its body's. In the post-order a let's
** value comes before any use of its variable (the uses are in the body,
** which the post-order visits after the value), so the replacement is
** ready when a use needs it. */
#include <stdlib.h>

#include "base/vec.h"
#include "passes/pass.h"

typedef struct GraphForm {
  Module *m;
  uint32_t n;        /* ids below n: the input's nodes (table size) */
  ExprVec order;     /* full post-order of the root */
  IrHomes H;         /* scopes and homes */
  int *fdepth;       /* per scope: function bodies from the top scope down */
  uint8_t *kernel;   /* per scope: inside a Primitive function */
  int *pos;          /* per id: position in order, -1 not in it */
  uint8_t *flow;     /* per id: pure dataflow */
  Expr **let_of;     /* per let-var id: its let */
  uint8_t *unsafe;   /* per let-var id: a use forbids the substitution */
  uint8_t *drop;     /* per let id: the let goes */
  Expr **to;         /* per id: the replacement */
  IrKidVec info;     /* scratch */
  ExprVec kids;      /* scratch */
} GraphForm;

/* {==== Analysis ====} */

/* Function depth and Primitive-ness of every scope. A scope's parent has a
** smaller index (ir_scope_new needs the parent first). */
static void scope_depths(GraphForm *G) {
  const IrScopes *s = &G->H.scopes;
  size_t len = s->len ? (size_t)s->len : 1;
  G->fdepth = rly_xcalloc(len, sizeof(int));
  G->kernel = rly_xcalloc(len, 1);
  for (int i = 0; i < s->len; i++) {
    const IrScope *sc = &s->data[i];
    int up = sc->parent;
    RLY_ASSERT(up < i);
    bool fn = sc->owner && sc->owner->kind == EXPR_FUNC;
    G->fdepth[i] = (up >= 0 ? G->fdepth[up] : 0) + (fn ? 1 : 0);
    G->kernel[i] = (uint8_t)((up >= 0 && G->kernel[up]) || (fn && ir_is_primitive(sc->owner)));
  }
}

/* Is e pure dataflow? Its children were decided before it (post-order). */
static bool node_flow(GraphForm *G, const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_CTOR: return true;
  case EXPR_CALL:
    if (e->u.call.callee->kind != EXPR_OP) return false;
    for (int i = 0; i < e->u.call.nargs; i++)
      if (!G->flow[e->u.call.args[i]->id]) return false;
    return true;
  case EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++)
      if (!G->flow[e->u.tuple.fields[i]->id]) return false;
    return true;
  case EXPR_GET_ITEM: return G->flow[e->u.get_item.tuple->id];
  default: return false; /* OP as a value, FUNC, LET, IF, MATCH, REF_* */
  }
}

/* Marks the let variables with a use that forbids substituting them: in an
** attribute expression, or in a scope of another function than their
** let's. e's uses are its children; each one's scope is as ir_homes has
** it (e's home for slot -1, e's slot-th scope otherwise). */
static void check_uses(GraphForm *G, Expr *e) {
  G->info.len = 0;
  ir_kids_info(e, IR_KIDS_INNER | IR_KIDS_ATTRS, &G->info);
  for (int k = 0; k < G->info.len; k++) {
    const IrKid *kid = &G->info.data[k];
    Expr *v = kid->e;
    if (!v || v->kind != EXPR_VAR || v->id >= G->n || !G->let_of[v->id]) continue;
    if (kid->role == IR_KID_ATTR) {
      G->unsafe[v->id] = 1;
      continue;
    }
    int use = kid->slot < 0 ? G->H.home[e->id] : G->H.base[e->id] + kid->slot;
    int at = G->H.home[G->let_of[v->id]->id];
    if (use < 0 || at < 0 || G->fdepth[use] != G->fdepth[at]) G->unsafe[v->id] = 1;
  }
}

/* Does let l go? (After check_uses saw every node.) */
static bool removable(const GraphForm *G, const Expr *l) {
  const Expr *v = l->u.let.var, *value = l->u.let.value;
  int at = G->H.home[l->id];
  if (at < 0 || G->kernel[at] || !G->flow[value->id] || G->unsafe[v->id]) return false;
  /* %v used inside its own value (or as it): reached no later than it. */
  if (G->pos[v->id] >= 0 && G->pos[v->id] <= G->pos[value->id]) return false;
  return v->type && value->type && ir_type_equal(v->type, value->type);
}

static bool analyse(GraphForm *G, Expr *root) {
  ir_homes(&G->H, G->n, &root, 1, &G->order);
  scope_depths(G);
  for (int i = 0; i < G->order.len; i++) {
    Expr *e = G->order.data[i];
    G->pos[e->id] = i;
    G->flow[e->id] = (uint8_t)node_flow(G, e);
    if (e->kind == EXPR_LET) G->let_of[e->u.let.var->id] = e;
  }
  for (int i = 0; i < G->order.len; i++) check_uses(G, G->order.data[i]);
  bool any = false;
  for (int i = 0; i < G->order.len; i++) {
    Expr *e = G->order.data[i];
    if (e->kind == EXPR_LET && removable(G, e)) G->drop[e->id] = 1, any = true;
  }
  return any;
}

/* {==== Rebuild ====} */

/* The replacement of e; its children's are known (post-order). */
static Expr *replace(GraphForm *G, Expr *e) {
  if (e->kind == EXPR_VAR) {
    Expr *l = G->let_of[e->id];
    if (l && G->drop[l->id]) {
      Expr *r = G->to[l->u.let.value->id];
      RLY_ASSERT(r != NULL);
      return r;
    }
    return e;
  }
  if (pass_is_atom(e)) return e;
  if (e->kind == EXPR_LET && G->drop[e->id]) return G->to[e->u.let.body->id];
  G->kids.len = 0;
  ir_kids(e, IR_KIDS_INNER, &G->kids);
  for (int k = 0; k < G->kids.len; k++) {
    Expr *r = G->to[G->kids.data[k]->id];
    RLY_ASSERT(r != NULL);
    G->kids.data[k] = r;
  }
  return pass_rebuild(G->m, e, G->kids.data, false);
}

Expr *pass_graph_form(PassCtx *ctx, Expr *root) {
  GraphForm G = {0};
  G.m = ctx->m;
  G.n = ctx->m->nexprs;
  size_t n = G.n ? G.n : 1;
  G.pos = rly_xmalloc(n * sizeof(int));
  for (size_t i = 0; i < n; i++) G.pos[i] = -1;
  G.flow = rly_xcalloc(n, 1);
  G.let_of = rly_xcalloc(n, sizeof(Expr *));
  G.unsafe = rly_xcalloc(n, 1);
  G.drop = rly_xcalloc(n, 1);
  ir_postorder(root, IR_KIDS_INNER, &G.order);

  Expr *result = root;
  if (analyse(&G, root)) {
    G.to = rly_xcalloc(n, sizeof(Expr *));
    for (int i = 0; i < G.order.len; i++) {
      Expr *e = G.order.data[i];
      G.to[e->id] = replace(&G, e);
    }
    result = G.to[root->id];
    free(G.to);
  }

  ir_homes_free(&G.H);
  free(G.fdepth);
  free(G.kernel);
  free(G.pos);
  free(G.flow);
  free(G.let_of);
  free(G.unsafe);
  free(G.drop);
  VEC_FREE(&G.order);
  VEC_FREE(&G.info);
  VEC_FREE(&G.kids);
  return result;
}
