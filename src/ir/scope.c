/* scope.c: free variables, the static scope tree and the homes of shared
** nodes (walk.h).
**
** Input: an expression DAG. Both analyses go over ir_kids edges with heap
** stacks (ir_postorder, a pre-order loop here), so deep let chains and
** nesting take heap memory only. */
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ir/walk.h"

/* {==== Free variables ====} */

void ir_free_vars(Expr *e, unsigned flags, ExprVec *out) {
  if (!e) return;
  unsigned kf = IR_KIDS_INNER | IR_KIDS_BINDERS | (flags & (IR_KIDS_ATTRS | IR_KIDS_OPAQUE_PRIMITIVE));
  /* Per id: 1 seen (pre-order dedup), 2 bound inside e, 4 listed as used. */
  uint8_t *mark = NULL;
  size_t cap = 0;
  IrKidVec stack = {0}, kids = {0};
  ExprVec uses = {0};
  IrKid top = {e, -1, IR_KID_VALUE};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    IrKid it = VEC_POP(&stack);
    Expr *x = it.e;
    if (!x) continue;
    if (x->id >= cap) {
      size_t c = cap ? cap : 1024;
      while (c <= x->id) c *= 2;
      mark = rly_xrealloc(mark, c);
      memset(mark + cap, 0, c - cap);
      cap = c;
    }
    if (x->kind == EXPR_VAR) {
      if (it.role == IR_KID_BINDER) mark[x->id] |= 2;
      else if (!(mark[x->id] & 4)) {
        mark[x->id] |= 4;
        VEC_PUSH(&uses, x);
      }
      continue;
    }
    if (mark[x->id] & 1) continue;
    mark[x->id] |= 1;
    kids.len = 0;
    ir_kids_info(x, kf, &kids);
    for (int i = kids.len; i-- > 0;) VEC_PUSH(&stack, kids.data[i]);
  }
  /* Binders can come after uses in this order only in IR that is not well
  ** formed; filtering at the end makes the answer independent of it. */
  for (int i = 0; i < uses.len; i++)
    if (!(mark[uses.data[i]->id] & 2)) VEC_PUSH(out, uses.data[i]);
  VEC_FREE(&uses);
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  free(mark);
}

/* {==== Scope trees ====} */

int ir_scope_new(IrScopes *s, int parent, Expr *owner, int slot) {
  IrScope sc = {parent, parent >= 0 ? s->data[parent].depth + 1 : 0, owner, slot};
  VEC_PUSH(s, sc);
  return s->len - 1;
}

int ir_scope_lca(const IrScopes *s, int a, int b) {
  if (a < 0 || b < 0) return a < 0 ? b : a;
  const IrScope *t = s->data;
  while (t[a].depth > t[b].depth) a = t[a].parent;
  while (t[b].depth > t[a].depth) b = t[b].parent;
  while (a != b && a >= 0 && b >= 0) {
    a = t[a].parent;
    b = t[b].parent;
  }
  return a == b ? a : -1;
}

/* {==== Homes ====} */

void ir_homes(IrHomes *h, uint32_t n, Expr *const *roots, int nroots, const ExprVec *order) {
  memset(h, 0, sizeof *h);
  h->n = n;
  size_t sz = n ? n : 1;
  h->home = rly_xmalloc(sizeof(int) * sz);
  h->base = rly_xmalloc(sizeof(int) * sz);
  for (size_t i = 0; i < sz; i++) h->home[i] = h->base[i] = -1;
  for (int r = 0; r < nroots; r++)
    if (roots[r] && h->home[roots[r]->id] < 0) h->home[roots[r]->id] = ir_scope_new(&h->scopes, -1, NULL, 0);
  /* Parents before children: a node's home is final before its children's
  ** uses are recorded. */
  IrKidVec kids = {0};
  for (int i = order->len; i-- > 0;) {
    Expr *e = order->data[i];
    int home = h->home[e->id];
    if (home < 0) continue;  /* uses only in different trees: nowhere */
    int ns = ir_nscopes(e);
    if (ns) h->base[e->id] = h->scopes.len;
    for (int k = 0; k < ns; k++) ir_scope_new(&h->scopes, home, e, k);
    kids.len = 0;
    ir_kids_info(e, IR_KIDS_INNER, &kids);
    for (int k = 0; k < kids.len; k++) {
      Expr *c = kids.data[k].e;
      if (!c) continue;
      RLY_ASSERT(c->id < n);
      int use = kids.data[k].slot < 0 ? home : h->base[e->id] + kids.data[k].slot;
      int *ch = &h->home[c->id];
      *ch = *ch < 0 ? use : ir_scope_lca(&h->scopes, *ch, use);
    }
  }
  VEC_FREE(&kids);
}

void ir_homes_free(IrHomes *h) {
  VEC_FREE(&h->scopes);
  free(h->home);
  free(h->base);
  h->home = h->base = NULL;
}
