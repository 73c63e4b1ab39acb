/* to_main.c: ExprToMain, an expression module becomes `def @main`.
** Requires: nothing. Preserves: types, spans, sharing. Never fails.
**
** A module that is one expression (with `free_var` declarations) becomes a
** module with one definition, `def @main(free variables) { expression }`,
** as TVM's IRModule.from_expr: the back end compiles definitions only.
** The function node is new (its type, when the expression is typed, is
** the function type of the free variables' types to the expression's),
** the expression itself is shared, and the free variables become its
** parameters (the same nodes, so every use stays bound). The module's
** list of definitions is a new array with @main appended.
**
** The pass acts on the expression root only (ctx->def == NULL); it returns
** NULL there, which tells pass_run that the module no longer has an
** expression. Definitions come back unchanged. */
#include "passes/pass.h"

/* The type of fn (params -> body), or NULL when a part has no type. */
static Type *func_type(Module *m, const Expr *fn) {
  const Expr *body = fn->u.func.body;
  if (!body->type) return NULL;
  int n = fn->u.func.nparams;
  Type *t = ir_type_new(m, TYPE_FUNC, fn->span);
  t->u.func.params = ARENA_ARRAY(m->arena, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) {
    if (!fn->u.func.params[i]->type) return NULL;
    t->u.func.params[i] = fn->u.func.params[i]->type;
  }
  t->u.func.nparams = n;
  t->u.func.ret = body->type;
  return t;
}

Expr *pass_to_main(PassCtx *ctx, Expr *root) {
  if (ctx->def) return root;
  Module *m = ctx->m;
  Expr *fn = ir_expr_new(m, EXPR_FUNC, root->span);
  fn->u.func.params = m->free_vars;
  fn->u.func.nparams = m->nfree_vars;
  fn->u.func.body = root;
  fn->type = func_type(m, fn);
  GlobalDef *g = ARENA_NEW(m->arena, GlobalDef);
  g->name = sym_intern_cstr(&m->syms, "main");
  g->span = root->span;
  g->func = fn;
  GlobalDef **defs = ARENA_ARRAY(m->arena, GlobalDef *, m->ndefs + 1);
  for (int i = 0; i < m->ndefs; i++) defs[i] = m->defs[i];
  defs[m->ndefs] = g;
  m->defs = defs;
  m->ndefs++;
  m->free_vars = NULL;
  m->nfree_vars = 0;
  return NULL;
}
