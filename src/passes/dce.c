/* dce.c: DeadCodeElimination.
** Requires: nothing (types are optional). Preserves: types, spans, sharing.
** Never fails.
**
** Removes every `let %x = v; body` whose variable is never used and whose
** value is pure, replacing it by its body. Works on any IR (a DAG, not only
** A-normal form), in function bodies, branches and clauses too; keeps every
** def. Removing a let can make others dead (`let %a = ...; let %b = f(%a);`
** with %b unused frees %a): all such lets go in one run.
**
** Pure (evaluating it changes nothing the rest of the program can see):
** variables, globals, constants, operators and constructors as values;
** function literals (building a closure runs nothing); tuples and
** projections of pure parts; calls of operators and of constructors with
** pure arguments; `if`, `let` and complete `match` (not `match?`, which
** can fail) whose parts are all pure. Everything else is kept: reference
** cells (ref, ref_read, ref_write), calls of globals, closures and other
** function values (they may have effects or not terminate). As in TVM,
** operator calls count as pure: a dead operator call that would fail at
** run time (an integer division by zero) is removed with its let.
**
** A recursive closure whose only uses are its own recursive calls is kept
** (its variable is used).
**
** Algorithm: reference counts over the full post-order (each edge from a
** live node counts once), decisions in post-order (a let after everything
** inside it, so inner dead lets go first), cascading decrements when a
** value becomes unreferenced, then one rebuild in post-order. Iterative.
**
** Types and spans: kept (rebuilt nodes copy them; a removed let's place is
** taken by its body, which has the let's type). */
#include <stdlib.h>

#include "base/vec.h"
#include "passes/pass.h"

typedef struct Dce {
  uint32_t *refs;     /* per id: live parents (edges) */
  uint8_t *pure;      /* per id */
  uint8_t *removed;   /* per LET id */
  ExprVec kids;       /* scratch */
  ExprVec dead;       /* nodes whose count reached 0, to cascade */
} Dce;

static bool node_pure(Dce *D, const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR:
  case EXPR_FUNC: return true;
  case EXPR_CALL:
    if (e->u.call.callee->kind != EXPR_OP && e->u.call.callee->kind != EXPR_CTOR) return false;
    break;
  case EXPR_MATCH:
    if (!e->u.match.complete) return false;
    break;
  case EXPR_TUPLE:
  case EXPR_GET_ITEM:
  case EXPR_LET:
  case EXPR_IF: break;
  case EXPR_REF_NEW:
  case EXPR_REF_READ:
  case EXPR_REF_WRITE: return false;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
  D->kids.len = 0;
  pass_kids(e, &D->kids);
  for (int i = 0; i < D->kids.len; i++)
    if (!D->pure[D->kids.data[i]->id]) return false;
  return true;
}

/* Drops one reference to e; cascades when e becomes unreferenced. */
static void drop(Dce *D, Expr *e) {
  VEC_PUSH(&D->dead, e);
  while (D->dead.len) {
    Expr *x = VEC_POP(&D->dead);
    RLY_ASSERT(D->refs[x->id] > 0);
    if (--D->refs[x->id] > 0) continue;
    D->kids.len = 0;
    if (x->kind == EXPR_LET && D->removed[x->id]) VEC_PUSH(&D->kids, x->u.let.body); /* value dropped already */
    else pass_kids(x, &D->kids);
    for (int i = 0; i < D->kids.len; i++) VEC_PUSH(&D->dead, D->kids.data[i]);
  }
}

Expr *pass_dce(PassCtx *ctx, Expr *root) {
  Module *m = ctx->m;
  size_t n = m->nexprs ? m->nexprs : 1;
  Dce D = {0};
  D.refs = rly_xcalloc(n, sizeof(uint32_t));
  D.pure = rly_xcalloc(n, 1);
  D.removed = rly_xcalloc(n, 1);
  ExprVec order = {0};
  pass_postorder(root, &order);

  D.refs[root->id] = 1;
  for (int i = 0; i < order.len; i++) {
    D.kids.len = 0;
    pass_kids(order.data[i], &D.kids);
    for (int k = 0; k < D.kids.len; k++) D.refs[D.kids.data[k]->id]++;
  }

  bool any = false;
  for (int i = 0; i < order.len; i++) {
    Expr *e = order.data[i];
    D.pure[e->id] = node_pure(&D, e);
    if (e->kind != EXPR_LET || D.refs[e->id] == 0) continue;
    if (D.refs[e->u.let.var->id] == 0 && D.pure[e->u.let.value->id]) {
      D.removed[e->id] = 1;
      any = true;
      drop(&D, e->u.let.value);
    }
  }

  Expr *result = root;
  if (any) {
    /* Rebuild bottom-up; dead nodes are skipped (nothing live uses them). */
    Expr **to = rly_xcalloc(n, sizeof(Expr *));
    ExprVec nk = {0};
    for (int i = 0; i < order.len; i++) {
      Expr *e = order.data[i];
      if (D.refs[e->id] == 0) continue;
      if (pass_is_atom(e)) {
        to[e->id] = e;
        continue;
      }
      if (e->kind == EXPR_LET && D.removed[e->id]) {
        to[e->id] = to[e->u.let.body->id];
        continue;
      }
      D.kids.len = nk.len = 0;
      pass_kids(e, &D.kids);
      for (int k = 0; k < D.kids.len; k++) {
        Expr *r = to[D.kids.data[k]->id];
        RLY_ASSERT(r != NULL);
        VEC_PUSH(&nk, r);
      }
      to[e->id] = pass_rebuild(m, e, nk.data, false);
    }
    result = to[root->id];
    VEC_FREE(&nk);
    free(to);
  }

  VEC_FREE(&order);
  VEC_FREE(&D.kids);
  VEC_FREE(&D.dead);
  free(D.refs);
  free(D.pure);
  free(D.removed);
  return result;
}
