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
** Shadowed clauses: a match clause whose pattern matches only values an
** earlier clause's pattern matches too (`_`, `%x`, a tuple of those, or
** the same constructor with fields that cover it) never runs, and is
** dropped first. The code generator tests clauses in order and never
** reaches such a clause, so function literals inside one would be
** compiled but never used.
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
  ir_kids(e, IR_KIDS_INNER, &D->kids);
  for (int i = 0; i < D->kids.len; i++)
    if (!D->pure[D->kids.data[i]->id]) return false;
  return true;
}

/* Does p match every value (`_`, a variable, a tuple of such)? */
static bool irrefutable(const Pattern *p) {
  if (p->kind == PAT_WILDCARD || p->kind == PAT_VAR) return true;
  if (p->kind != PAT_TUPLE) return false;
  for (int i = 0; i < p->u.tuple.n; i++)
    if (!irrefutable(p->u.tuple.fields[i])) return false;
  return true;
}

/* Does a match every value b matches? */
static bool subsumes(const Pattern *a, const Pattern *b) {
  if (irrefutable(a)) return true;
  switch (a->kind) {
  case PAT_WILDCARD:
  case PAT_VAR: return true;
  case PAT_CTOR:
    if (b->kind != PAT_CTOR || b->u.ctor.ctor != a->u.ctor.ctor || b->u.ctor.n != a->u.ctor.n) return false;
    for (int i = 0; i < a->u.ctor.n; i++)
      if (!subsumes(a->u.ctor.args[i], b->u.ctor.args[i])) return false;
    return true;
  case PAT_TUPLE:
    if (b->kind != PAT_TUPLE || b->u.tuple.n != a->u.tuple.n) return false;
    for (int i = 0; i < a->u.tuple.n; i++)
      if (!subsumes(a->u.tuple.fields[i], b->u.tuple.fields[i])) return false;
    return true;
  default: RLY_UNREACHABLE();
  }
}

static bool shadowed(const Expr *e, int i) {
  for (int j = 0; j < i; j++)
    if (subsumes(e->u.match.clauses[j].pat, e->u.match.clauses[i].pat)) return true;
  return false;
}

/* root without the shadowed clauses of its matches (root itself when it
** has none). */
static Expr *drop_shadowed(Module *m, Expr *root) {
  ExprVec order = {0};
  ir_postorder(root, IR_KIDS_INNER, &order);
  bool any = false;
  for (int i = 0; i < order.len && !any; i++) {
    Expr *e = order.data[i];
    for (int k = 1; e->kind == EXPR_MATCH && k < e->u.match.nclauses && !any; k++) any = shadowed(e, k);
  }
  Expr *result = root;
  if (any) {
    size_t n = m->nexprs ? m->nexprs : 1;
    Expr **to = rly_xcalloc(n, sizeof(Expr *));
    ExprVec kids = {0}, nk = {0};
    for (int i = 0; i < order.len; i++) {
      Expr *e = order.data[i];
      if (pass_is_atom(e)) {
        to[e->id] = e;
        continue;
      }
      kids.len = nk.len = 0;
      ir_kids(e, IR_KIDS_INNER, &kids);
      for (int k = 0; k < kids.len; k++) VEC_PUSH(&nk, to[kids.data[k]->id] ? to[kids.data[k]->id] : kids.data[k]);
      bool drop_any = false;
      for (int k = 1; e->kind == EXPR_MATCH && k < e->u.match.nclauses && !drop_any; k++) drop_any = shadowed(e, k);
      Expr *r = pass_rebuild(m, e, nk.data, drop_any);
      if (drop_any) { /* r is a fresh copy: keep the live clauses */
        int live = 0;
        for (int k = 0; k < e->u.match.nclauses; k++)
          if (!shadowed(e, k)) r->u.match.clauses[live++] = r->u.match.clauses[k];
        r->u.match.nclauses = live;
      }
      to[e->id] = r;
    }
    result = to[root->id];
    VEC_FREE(&kids);
    VEC_FREE(&nk);
    free(to);
  }
  VEC_FREE(&order);
  return result;
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
    else ir_kids(x, IR_KIDS_INNER, &D->kids);
    for (int i = 0; i < D->kids.len; i++) VEC_PUSH(&D->dead, D->kids.data[i]);
  }
}

Expr *pass_dce(PassCtx *ctx, Expr *root) {
  Module *m = ctx->m;
  root = drop_shadowed(m, root);
  size_t n = m->nexprs ? m->nexprs : 1;
  Dce D = {0};
  D.refs = rly_xcalloc(n, sizeof(uint32_t));
  D.pure = rly_xcalloc(n, 1);
  D.removed = rly_xcalloc(n, 1);
  ExprVec order = {0};
  ir_postorder(root, IR_KIDS_INNER, &order);

  D.refs[root->id] = 1;
  for (int i = 0; i < order.len; i++) {
    D.kids.len = 0;
    ir_kids(order.data[i], IR_KIDS_INNER, &D.kids);
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
      ir_kids(e, IR_KIDS_INNER, &D.kids);
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
