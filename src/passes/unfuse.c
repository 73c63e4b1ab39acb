/* unfuse.c: Unfuse, Primitive functions of the input made ordinary.
** Requires: nothing. Preserves: types, spans, sharing. Never fails.
**
** A module printed after TVM's FuseOps holds function literals marked
** Primitive=1 (fused groups). The back end makes its own Primitive
** functions (WrapPrimitives, later fusion), so the ones written in the
** input lose the attribute, keeping their other attributes: they become
** ordinary functions whose operator calls WrapPrimitives then wraps one by
** one.
**
** Algorithm: one memoized rebuild over the full post-order
** (pass_postorder): each Primitive function becomes a new function node
** with the same parameters, body and type and the attribute left out; its
** ancestors are rebuilt (pass_rebuild copies their types). A module
** without Primitive functions comes back unchanged: no node is built. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "passes/pass.h"

static bool is_primitive_key(const Symbol *key) { return key && strcmp(key->text, "Primitive") == 0; }

/* a without its Primitive keys; NULL when nothing is left. */
static Attrs *without_primitive(Module *m, const Attrs *a) {
  Attrs *b = ARENA_NEW(m->arena, Attrs);
  b->keys = ARENA_ARRAY(m->arena, Symbol *, a->n);
  b->values = ARENA_ARRAY(m->arena, AttrValue *, a->n);
  for (int i = 0; i < a->n; i++)
    if (!is_primitive_key(a->keys[i])) {
      b->keys[b->n] = a->keys[i];
      b->values[b->n++] = a->values[i];
    }
  return b->n ? b : NULL;
}

Expr *pass_unfuse(PassCtx *ctx, Expr *root) {
  Module *m = ctx->m;
  ExprVec order = {0};
  pass_postorder(root, &order);
  bool any = false;
  for (int i = 0; i < order.len && !any; i++) any = ir_is_primitive(order.data[i]);
  Expr *result = root;
  if (any) {
    Expr **to = rly_xcalloc(m->nexprs ? m->nexprs : 1, sizeof(Expr *));
    ExprVec kids = {0}, nk = {0};
    for (int i = 0; i < order.len; i++) {
      Expr *e = order.data[i];
      if (pass_is_atom(e)) {
        to[e->id] = e;
        continue;
      }
      kids.len = nk.len = 0;
      pass_kids(e, &kids);
      for (int k = 0; k < kids.len; k++) {
        Expr *r = to[kids.data[k]->id];
        RLY_ASSERT(r != NULL);
        VEC_PUSH(&nk, r);
      }
      bool prim = ir_is_primitive(e);
      Expr *r = pass_rebuild(m, e, nk.data, prim);
      if (prim) r->u.func.attrs = without_primitive(m, e->u.func.attrs); /* r is new: still being built */
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
