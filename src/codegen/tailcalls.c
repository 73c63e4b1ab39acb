/* tailcalls.c: groups of globals that tail-call each other.
**
** The graph: an edge from a global to every global it calls in tail
** position (through if and match branches). Its strongly connected
** components (ir_scc, Tarjan's algorithm) are the groups: a tail call within a
** group becomes a jump, and a group of several members is one C function
** with a `which` switch at the entry (function.c) and one frame for all
** its members (plan.c). Members are in def order, so names do not depend
** on the traversal. */
#include <stdlib.h>

#include "codegen/cg.h"

/* Appends the globals called in tail position in body. */
static void tail_calls(Expr *body, EVec *out) {
  EVec todo = {0};
  VEC_PUSH(&todo, body);
  while (todo.len) {
    Expr *e = VEC_POP(&todo);
    while (e->kind == EXPR_LET && e->u.let.body != e->u.let.var) e = e->u.let.body;
    if (e->kind != EXPR_LET) continue;
    Expr *v = e->u.let.value;
    if (v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_GLOBAL) VEC_PUSH(out, v->u.call.callee);
    else if (v->kind == EXPR_IF) {
      VEC_PUSH(&todo, v->u.if_.else_);
      VEC_PUSH(&todo, v->u.if_.then_);
    } else if (v->kind == EXPR_MATCH) {
      for (int i = v->u.match.nclauses - 1; i >= 0; i--) VEC_PUSH(&todo, v->u.match.clauses[i].body);
    } else if (v->kind == EXPR_LET) {
      VEC_PUSH(&todo, v);
    }
  }
  VEC_FREE(&todo);
}

void cg_make_groups(Cg *cg) {
  int n = cg->m->ndefs;
  /* The graph as a compact edge list: def v's edges are
  ** adj[start[v] .. start[v + 1] - 1], the defs it tail-calls in order. */
  int *start = rly_xcalloc((size_t)n + 1, sizeof(int));
  Vec(int) adj = {0};
  EVec calls = {0};
  for (int v = 0; v < n; v++) {
    start[v] = adj.len;
    calls.len = 0;
    tail_calls(cg->m->defs[v]->func->u.func.body, &calls);
    for (int k = 0; k < calls.len; k++) {
      GlobalDef *g = calls.data[k]->u.global.def;
      CFunc *F = g ? cg_func_of(cg, g->func) : NULL;
      if (F) VEC_PUSH(&adj, F->index);
    }
  }
  start[n] = adj.len;
  int *comp = rly_xcalloc((size_t)n + 1, sizeof(int));
  int *order = rly_xcalloc((size_t)n + 1, sizeof(int));
  int ncomp = ir_scc(n, start, adj.data, comp, order);
  /* Components are numbered callees first; order lists them one after the
  ** other. */
  for (int c = 0, at = 0; c < ncomp; c++) {
    Group *G = rly_xcalloc(1, sizeof *G);
    int gi = cg->groups.len;
    VEC_PUSH(&cg->groups, G);
    for (; at < n && comp[order[at]] == c; at++) {
      CFunc *F = cg->funcs.data[order[at]];
      F->group = gi;
      VEC_PUSH(&G->members, F);
    }
    /* Members in def order (deterministic). */
    for (int i = 1; i < G->members.len; i++)
      for (int j = i; j > 0 && G->members.data[j - 1]->index > G->members.data[j]->index; j--) {
        CFunc *t = G->members.data[j];
        G->members.data[j] = G->members.data[j - 1];
        G->members.data[j - 1] = t;
      }
    for (int i = 0; i < G->members.len; i++) G->members.data[i]->member = i;
    if (G->members.len == 1) snprintf(G->cname, sizeof G->cname, "%s", G->members.data[0]->cname);
    else snprintf(G->cname, sizeof G->cname, "GRP%d", gi);
  }
  free(start);
  free(comp);
  free(order);
  VEC_FREE(&adj);
  VEC_FREE(&calls);
}

CFunc *cg_jump_target(Cg *cg, CFunc *F, const Expr *call) {
  const Expr *callee = call->u.call.callee;
  if (callee->kind == EXPR_VAR && F->self_var && callee == F->self_var) return F;
  if (callee->kind == EXPR_GLOBAL && callee->u.global.def) {
    CFunc *T = cg_func_of(cg, callee->u.global.def->func);
    if (T && F->g && T->group == F->group) return T;
  }
  return NULL;
}
