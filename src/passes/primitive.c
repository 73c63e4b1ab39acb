/* primitive.c: one Primitive function per operator call.
** Requires: types. Preserves: spans; types are re-inferred afterwards.
** Never fails.
**
** Every call of an operator `op(a, b)` becomes the call of a function
** literal marked Primitive=1 whose body is that operator call on its own
** parameters:
**   (fn (%p: Ta, %p1: Tb, Primitive=1) { op(%p, %p1) })(a, b)
** with the parameters annotated with the arguments' types. This is the
** interface between the program and its kernels: the code generator makes
** one C kernel of each Primitive function. Fusion (later) will put chains
** of operators into one Primitive function; the code generator does not
** change then. Run after ToANormalForm: the arguments are then atoms, and
** the call stays the value of its let. */
#include "passes/pass.h"

static Expr *wrap(Rewriter *rw, Expr *e) {
  if (e->kind != EXPR_CALL || e->u.call.callee->kind != EXPR_OP) return e;
  Module *m = rw->m;
  int n = e->u.call.nargs;
  Expr **params = ARENA_ARRAY(m->arena, Expr *, n ? n : 1);
  Symbol *pname = sym_intern_cstr(&m->syms, "p");
  for (int i = 0; i < n; i++) {
    const Expr *a = e->u.call.args[i];
    params[i] = ir_var(m, a->span, pname, a->type);
  }
  Expr *body = ir_call(m, e->span, e->u.call.callee, params, n, e->u.call.attrs);
  Expr *fn = ir_expr_new(m, EXPR_FUNC, e->span);
  fn->u.func.params = params;
  fn->u.func.nparams = n;
  fn->u.func.body = body;
  Attrs *attrs = ARENA_NEW(m->arena, Attrs);
  attrs->n = 1;
  attrs->keys = ARENA_ARRAY(m->arena, Symbol *, 1);
  attrs->values = ARENA_ARRAY(m->arena, AttrValue *, 1);
  attrs->keys[0] = sym_intern_cstr(&m->syms, "Primitive");
  attrs->values[0] = ir_attr_value_new(m, AV_INT, e->span);
  attrs->values[0]->u.i.v = 1;
  attrs->values[0]->u.i.bits = 32;
  fn->u.func.attrs = attrs;
  Expr **args = ARENA_ARRAY(m->arena, Expr *, n ? n : 1);
  for (int i = 0; i < n; i++) args[i] = e->u.call.args[i];
  return ir_call(m, e->span, fn, args, n, NULL);
}

static Expr *pre(Rewriter *rw, Expr *e) {
  (void)rw;
  /* Already a primitive function: leave it (and its operator call) alone. */
  return e->kind == EXPR_FUNC && ir_is_primitive(e) ? REWRITE_SKIP : e;
}

Expr *pass_primitive(PassCtx *ctx, Expr *root) {
  Rewriter rw = {.m = ctx->m, .pre = pre, .post = wrap};
  return ir_rewrite(&rw, root);
}
