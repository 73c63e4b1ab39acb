/* lift.c: lambda lifting and closure conversion, as an analysis.
**
** Every Relay function becomes a C function (CFunc): the globals first, in
** def order (G<d>_NAME), then every function literal that is not Primitive
** (F<index>), in pre-order. For each: its locals (parameters and binders of
** its body outside nested functions) and its free variables (variables used
** in its body, nested functions included, and bound outside it), in order
** of first use: the closure's environment. A let variable bound to a
** function literal and used inside it is the closure's `self`, never an
** environment slot, so recursion makes no refcount cycle. The IR is not
** rewritten. Traversals keep an explicit stack: let chains of any length
** do not recurse in C. */
#include <stdlib.h>
#include <string.h>

#include "codegen/cg.h"

/* Analyses of one function: locals (binders outside nested functions, in
** pre-order) and free variables (ir_free_vars, less the self variable). */
static void analyse(CFunc *F) {
  for (int i = 0; i < F->fn->u.func.nparams; i++) VEC_PUSH(&F->locals, F->fn->u.func.params[i]);
  /* Pre-order over the body, binders included; depth counts the function
  ** literals entered (a Primitive one has no children: the kernel's). */
  typedef struct { Expr *e; int depth; bool binder; } Item;
  Vec(Item) stack = {0};
  IrKidVec kids = {0};
  Item root = {F->fn->u.func.body, 0, false};
  VEC_PUSH(&stack, root);
  while (stack.len) {
    Item it = VEC_POP(&stack);
    Expr *e = it.e;
    if (e->kind == EXPR_VAR) {
      if (it.binder && it.depth == 0) VEC_PUSH(&F->locals, e);
      continue;
    }
    int depth = it.depth + (e->kind == EXPR_FUNC);
    kids.len = 0;
    ir_kids_info(e, IR_KIDS_INNER | IR_KIDS_BINDERS | IR_KIDS_OPAQUE_PRIMITIVE, &kids);
    for (int i = kids.len - 1; i >= 0; i--) {
      Item k = {kids.data[i].e, depth, kids.data[i].role == IR_KID_BINDER};
      VEC_PUSH(&stack, k);
    }
  }
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  ir_free_vars(F->fn, IR_KIDS_OPAQUE_PRIMITIVE, &F->fvs);
  int n = 0;
  for (int i = 0; i < F->fvs.len; i++)
    if (F->fvs.data[i] != F->self_var) F->fvs.data[n++] = F->fvs.data[i];
  F->fvs.len = n;
}

static CFunc *new_func(Cg *cg, Expr *fn, GlobalDef *g) {
  CFunc *F = rly_xcalloc(1, sizeof *F);
  F->fn = fn;
  F->g = g;
  F->index = cg->funcs.len;
  F->group = -1;
  VEC_PUSH(&cg->funcs, F);
  cg_grow_ids(cg);
  cg->func_of[fn->id] = F->index + 1;
  return F;
}

CFunc *cg_func_of(Cg *cg, const Expr *fn) {
  if (fn->id >= cg->nids || !cg->func_of[fn->id]) return NULL;
  return cg->funcs.data[cg->func_of[fn->id] - 1];
}

void cg_sanitize(const char *s, char *out, size_t n) {
  size_t k = 0;
  for (; *s && k + 1 < n; s++) {
    char c = *s;
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out[k++] = ok ? c : '_';
  }
  out[k] = 0;
}

/* A CFunc for a function literal that is not Primitive (a Primitive one
** is a kernel: its insides are not looked at). */
static WalkResult visit_literal(Walker *w, Expr *e) {
  Cg *cg = w->data;
  if (e->kind != EXPR_FUNC) return WALK_CONTINUE;
  if (ir_is_primitive(e)) return WALK_PRUNE;
  CFunc *F = new_func(cg, e, NULL);
  char at[200];
  cg_where(cg, e->span, at, sizeof at);
  snprintf(F->cname, sizeof F->cname, "F%d", F->index);
  snprintf(F->where, sizeof F->where, "fn at %s", at);
  return WALK_CONTINUE;
}

/* The let variable bound to a closure, its candidate self reference. */
static WalkResult visit_self(Walker *w, Expr *e) {
  Cg *cg = w->data;
  if (e->kind == EXPR_FUNC && ir_is_primitive(e)) return WALK_PRUNE;
  if (e->kind == EXPR_LET && e->u.let.value->kind == EXPR_FUNC) {
    CFunc *F = cg_func_of(cg, e->u.let.value);
    if (F) F->self_var = e->u.let.var;
  }
  return WALK_CONTINUE;
}

/* Finds every non-primitive function literal under the defs, and the let
** variables bound to them (candidate self references). */
void cg_collect_funcs(Cg *cg) {
  for (int d = 0; d < cg->m->ndefs; d++) {
    GlobalDef *g = cg->m->defs[d];
    CFunc *F = new_func(cg, g->func, g);
    char nm[80];
    cg_sanitize(g->name->text, nm, sizeof nm);
    snprintf(F->cname, sizeof F->cname, "G%d_%s", d, nm);
    snprintf(F->where, sizeof F->where, "@%s", g->name->text);
  }
  Walker w = {0};
  w.data = cg;
  w.visit = visit_literal;
  for (int d = 0; d < cg->m->ndefs; d++) ir_walk(&w, cg->m->defs[d]->func->u.func.body);
  /* Self variables: `let %f = fn ... %f ...`. */
  w.visit = visit_self;
  for (int d = 0; d < cg->m->ndefs; d++) ir_walk(&w, cg->m->defs[d]->func->u.func.body);
  for (int i = 0; i < cg->funcs.len; i++) analyse(cg->funcs.data[i]);
}
