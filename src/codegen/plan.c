/* plan.c: the static memory plan.
**
** A global whose body is straight-line (operator calls, tuples,
** projections, atoms: no control flow, no calls of functions) gets a
** workspace: every intermediate tensor of static type that does not escape
** (is not the result, not put in a tuple, not bound to another variable)
** lives at a fixed offset in it, and the offsets are reused once a
** tensor's last use has passed. Greedy first fit in definition order; a
** tensor never shares bytes with the operands of the call that makes it.
** The function allocates its workspace with one rlyrt_alloc per call; a
** typed entry point takes the caller's. */
#include <stdlib.h>

#include "codegen/cg.h"

static int64_t tensor_bytes(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.dtype.lanes != 1) return -1;
  int64_t n = (int64_t)dtype_bytes(t->u.tensor.dtype);
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    if (t->u.tensor.shape[i] < 0) return -1;
    if (t->u.tensor.shape[i] && n > (INT64_C(1) << 40) / t->u.tensor.shape[i]) return -1;
    n *= t->u.tensor.shape[i];
  }
  return n;
}

typedef struct Block {
  int64_t off, size;
  int last;
} Block;

void cg_plan_function(Cg *cg, CFunc *F) {
  if (!F->g || cg->groups.data[F->group]->members.len != 1) return;
  EVec chain = {0};
  Expr *e = F->fn->u.func.body;
  for (; e->kind == EXPR_LET; e = e->u.let.body) VEC_PUSH(&chain, e);
  int n = chain.len;
  bool ok = ir_is_atom(e) && e->kind != EXPR_OP;
  for (int i = 0; i < n && ok; i++) {
    Expr *v = chain.data[i]->u.let.value;
    ok = (v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_FUNC && ir_is_primitive(v->u.call.callee)) ||
         v->kind == EXPR_TUPLE || v->kind == EXPR_GET_ITEM || (ir_is_atom(v) && v->kind != EXPR_OP);
  }
  if (!ok) {
    VEC_FREE(&chain);
    return;
  }
  /* Escaping variables, and last uses (statement index; n = the result). */
  uint32_t esc = ++cg->gen;
  int *last = rly_xcalloc((size_t)(n ? n : 1), sizeof(int));
  for (int i = 0; i < n; i++) last[i] = i;
  /* The statement binding each variable of the chain (cand/last are free
  ** before emission). */
  uint32_t bind = ++cg->bgen;
  for (int i = 0; i < n; i++) {
    cg->cand[chain.data[i]->u.let.var->id] = bind;
    cg->last[chain.data[i]->u.let.var->id] = i;
  }
  for (int i = 0; i <= n; i++) {
    Expr *v = i < n ? chain.data[i]->u.let.value : e;
    Expr **ops = NULL;
    int nops = 0;
    bool escapes = false;
    Expr *one[1];
    if (v->kind == EXPR_CALL) {
      ops = v->u.call.args;
      nops = v->u.call.nargs;
    } else if (v->kind == EXPR_TUPLE) {
      ops = v->u.tuple.fields;
      nops = v->u.tuple.n;
      escapes = true;
    } else if (v->kind == EXPR_GET_ITEM) {
      one[0] = v->u.get_item.tuple;
      ops = one;
      nops = 1;
      escapes = true;
    } else {
      one[0] = v;
      ops = one;
      nops = 1;
      escapes = true;
    }
    if (i == n) escapes = true;
    for (int k = 0; k < nops; k++) {
      if (ops[k]->kind != EXPR_VAR) continue;
      if (escapes) cg->mark[ops[k]->id] = esc;
      if (cg->cand[ops[k]->id] == bind) {
        int j = cg->last[ops[k]->id];
        if (last[j] < i) last[j] = i;
      }
    }
  }
  Vec(Block) live = {0};
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    Expr *v = chain.data[i]->u.let.value;
    if (v->kind != EXPR_CALL || cg->mark[var->id] == esc) continue;
    if (i == n - 1 && chain.data[i]->u.let.body == var) continue;
    int64_t bytes = tensor_bytes(v->type);
    if (bytes <= 0 || v->type->u.tensor.ndim == 0) continue; /* scalars may live unboxed instead */
    int64_t size = (bytes + 63) & ~(int64_t)63;
    /* Drop blocks whose tensors are dead before statement i. */
    int w = 0;
    for (int k = 0; k < live.len; k++)
      if (live.data[k].last >= i) live.data[w++] = live.data[k];
    live.len = w;
    /* Lowest gap that fits (blocks sorted by offset). */
    int64_t off = 0;
    int at = 0;
    for (; at < live.len; at++) {
      if (live.data[at].off - off >= size) break;
      off = live.data[at].off + live.data[at].size;
    }
    Block b = {off, size, last[i]};
    VEC_PUSH(&live, b);
    for (int k = live.len - 1; k > at; k--) live.data[k] = live.data[k - 1];
    live.data[at] = b;
    cg->plan_off[var->id] = off;
    if (off + size > top) top = off + size;
  }
  F->plan_size = top;
  VEC_FREE(&live);
  free(last);
  VEC_FREE(&chain);
}
