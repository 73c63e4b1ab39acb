/* lower/group.c: a Primitive function's body as a list of operator calls.
**
** Fusion puts several calls in one Primitive function, written as nested
** calls, `%0 = ...;` bindings (shared subexpressions) or let. The group is
** those calls in evaluation order (operands first, each shared call once),
** with every operand a parameter or an earlier call; the last call is the
** function's result. Calls the result does not depend on are kept but
** marked dead. */
#include <string.h>

#include "lower/kernel.h"

typedef struct Builder {
  Group *g;
  const Expr *bound_var[GROUP_MAX_NODES];
  int bound_node[GROUP_MAX_NODES];
  int nbound;
} Builder;

/* The operand e: >= 0 a node, < 0 a parameter (-1 - index); false when e
** is anything else. */
static bool operand(Builder *b, const Expr *e, int *out, int depth) {
  Group *g = b->g;
  if (depth > 4 * GROUP_MAX_NODES) return false;
  if (e->kind == EXPR_VAR) {
    for (int i = 0; i < g->nparams; i++)
      if (g->fn->u.func.params[i] == e) {
        *out = -1 - i;
        return true;
      }
    for (int i = b->nbound - 1; i >= 0; i--)
      if (b->bound_var[i] == e) {
        *out = b->bound_node[i];
        return true;
      }
    return false;
  }
  if (e->kind == EXPR_LET) {
    int v;
    if (b->nbound == GROUP_MAX_NODES || !operand(b, e->u.let.value, &v, depth + 1)) return false; /* v < 0: an alias */
    b->bound_var[b->nbound] = e->u.let.var;
    b->bound_node[b->nbound++] = v;
    return operand(b, e->u.let.body, out, depth + 1);
  }
  for (int i = 0; i < g->nnodes; i++) /* a shared node: once */
    if (g->nodes[i].call == e) {
      *out = i;
      return true;
    }
  GNode n;
  memset(&n, 0, sizeof n);
  n.call = e;
  Expr *const *args = NULL;
  switch (e->kind) {
  case EXPR_CALL:
    if (e->u.call.callee->kind != EXPR_OP) return false;
    n.kind = GN_CALL;
    n.op = e->u.call.callee->u.op.op;
    n.nargs = e->u.call.nargs;
    args = e->u.call.args;
    break;
  case EXPR_CONST: n.kind = GN_CONST; break;
  case EXPR_TUPLE:
    n.kind = GN_TUPLE;
    n.nargs = e->u.tuple.n;
    args = e->u.tuple.fields;
    break;
  case EXPR_GET_ITEM:
    n.kind = GN_PROJ;
    n.nargs = 1;
    n.index = e->u.get_item.index;
    args = &e->u.get_item.tuple;
    break;
  default: return false;
  }
  if (n.nargs > GROUP_MAX_ARGS) return false;
  for (int i = 0; i < n.nargs; i++)
    if (!operand(b, args[i], &n.args[i], depth + 1)) return false;
  if (g->nnodes == GROUP_MAX_NODES) return false;
  g->nodes[g->nnodes] = n;
  *out = g->nnodes++;
  return true;
}

static void mark_live(Group *g, int i) {
  if (i < 0 || g->nodes[i].live) return;
  g->nodes[i].live = true;
  for (int j = 0; j < g->nodes[i].nargs; j++) mark_live(g, g->nodes[i].args[j]);
}

bool group_build(const Expr *fn, Group *g) {
  memset(g, 0, sizeof *g);
  if (!fn || fn->kind != EXPR_FUNC || !fn->u.func.body) return false;
  g->fn = fn;
  g->nparams = fn->u.func.nparams;
  Builder b;
  memset(&b, 0, sizeof b);
  b.g = g;
  int r;
  if (!operand(&b, fn->u.func.body, &r, 0) || r < 0) return false;
  /* The result is the last node: when dead calls (let-bound, unused)
  ** follow it, it moves to the end, unless one of them uses it. */
  if (r != g->nnodes - 1) {
    for (int i = r + 1; i < g->nnodes; i++)
      for (int j = 0; j < g->nodes[i].nargs; j++)
        if (g->nodes[i].args[j] == r) return false; /* the result used by another call: not a DAG's end */
    GNode res = g->nodes[r];
    for (int i = r; i + 1 < g->nnodes; i++) g->nodes[i] = g->nodes[i + 1];
    g->nodes[g->nnodes - 1] = res;
    for (int i = 0; i < g->nnodes; i++)
      for (int j = 0; j < g->nodes[i].nargs; j++) {
        int *a = &g->nodes[i].args[j];
        if (*a == r) *a = g->nnodes - 1;
        else if (*a > r) (*a)--;
      }
  }
  mark_live(g, g->nnodes - 1);
  return true;
}
