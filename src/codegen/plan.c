/* plan.c: the static memory plan.
**
** Every intermediate tensor of static type that does not escape lives at a
** fixed offset in a workspace, and the offsets are reused once a tensor's
** last use has passed (greedy first fit in definition order; a tensor
** never shares bytes with the operands of the call that makes it).
**
** - A global whose body is straight-line (operator calls, tuples,
**   projections, atoms: no control flow, no calls of functions) plans
**   every tensor that is not the result, not put in a tuple and not bound
**   to another variable. It allocates its workspace with one rlyrt_alloc
**   per call (NAME_ws takes it; a typed entry point passes the caller's).
** - Any other function alone in its C function (recursive globals, loops,
**   closures) plans the kernel results that only kernels read (tensors,
**   and tuples of tensors such as split's, whose fields kernels read in
**   place): it pushes
**   its workspace on the thread's frame stack (rlyrt_frame_push) on entry
**   and pops it on return, so a recursion or a loop step allocates nothing
**   for them. Its statements are numbered in one pre-order over the nested
**   blocks (branches, clauses), so an interval is conservative across
**   branches; a tail call's jump back starts a new step in which every such
**   tensor is dead.
** - Loop state: a tail-recursive function whose tail call passes, as
**   tensor parameter k, a kernel result that only kernels and that call
**   read keeps parameter k in a state slot of the frame. */
#include <limits.h>
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

/* A tuple of static tensors in a frame: its header (the tuple object,
** at most CG_TUPLE_HEADER(n) bytes; the C code asserts it), then each
** field's data at a 64-aligned offset (cg_tuple_field_offset). Its fields'
** tensor objects are locals of the function. */
int64_t cg_tuple_field_offset(const Type *t, int k) {
  int64_t off = CG_TUPLE_HEADER(t->u.tuple.n);
  for (int i = 0; i < k; i++) off += (tensor_bytes(t->u.tuple.fields[i]) + 63) & ~(int64_t)63;
  return off;
}

/* Bytes of a kernel result kept in a frame: a tensor of static shape with
** dimensions, or a tuple of static tensors (split, batch_norm...); -1
** for anything else. */
static int64_t frame_bytes(const Type *t) {
  if (!t) return -1;
  if (t->kind == TYPE_TENSOR) return t->u.tensor.ndim > 0 ? tensor_bytes(t) : -1;
  if (t->kind != TYPE_TUPLE || t->u.tuple.n == 0) return -1;
  for (int i = 0; i < t->u.tuple.n; i++) {
    const Type *f = t->u.tuple.fields[i];
    if (!f || f->kind != TYPE_TENSOR || tensor_bytes(f) < 0) return -1;
  }
  return cg_tuple_field_offset(t, t->u.tuple.n);
}

typedef struct Block {
  int64_t off, size;
  int last;
} Block;

/* First fit: the blocks live now, sorted by offset; the high-water mark. */
typedef struct Fit {
  Vec(Block) live;
  int64_t top;
} Fit;

/* The offset of a tensor of bytes bytes made at statement def and last
** used at statement last (INT_MAX: all along): the lowest gap among the
** blocks still live at def. */
static int64_t fit_place(Fit *f, int64_t bytes, int def, int last) {
  int64_t size = (bytes + 63) & ~(int64_t)63;
  int w = 0;
  for (int k = 0; k < f->live.len; k++)
    if (f->live.data[k].last >= def) f->live.data[w++] = f->live.data[k];
  f->live.len = w;
  int64_t off = 0;
  int at = 0;
  for (; at < f->live.len; at++) {
    if (f->live.data[at].off - off >= size) break;
    off = f->live.data[at].off + f->live.data[at].size;
  }
  Block b = {off, size, last};
  VEC_PUSH(&f->live, b);
  for (int k = f->live.len - 1; k > at; k--) f->live.data[k] = f->live.data[k - 1];
  f->live.data[at] = b;
  if (off + size > f->top) f->top = off + size;
  return off;
}

static bool is_kernel_call(const Expr *v) {
  return v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_FUNC && ir_is_primitive(v->u.call.callee);
}

static void plan_frame(Cg *cg, CFunc *F);

/* The straight-line plan of a global alone in its group. */
static bool plan_straight(Cg *cg, CFunc *F) {
  EVec chain = {0};
  Expr *e = F->fn->u.func.body;
  for (; e->kind == EXPR_LET; e = e->u.let.body) VEC_PUSH(&chain, e);
  int n = chain.len;
  bool ok = ir_is_atom(e) && e->kind != EXPR_OP;
  for (int i = 0; i < n && ok; i++) {
    Expr *v = chain.data[i]->u.let.value;
    ok = is_kernel_call(v) || v->kind == EXPR_TUPLE || v->kind == EXPR_GET_ITEM || (ir_is_atom(v) && v->kind != EXPR_OP);
  }
  if (!ok) {
    VEC_FREE(&chain);
    return false;
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
  Fit fit = {0};
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    Expr *v = chain.data[i]->u.let.value;
    if (v->kind != EXPR_CALL || cg->mark[var->id] == esc) continue;
    if (i == n - 1 && chain.data[i]->u.let.body == var) continue;
    int64_t bytes = tensor_bytes(v->type);
    if (bytes <= 0 || v->type->u.tensor.ndim == 0) continue; /* scalars may live unboxed instead */
    cg->plan_off[var->id] = fit_place(&fit, bytes, i, last[i]);
  }
  int64_t top = fit.top;
  F->plan_size = top;
  VEC_FREE(&fit.live);
  free(last);
  VEC_FREE(&chain);
  return true;
}

/* {==== Frames ====} */

/* A kernel result that may live in the frame. */
typedef struct Cand {
  Expr *var;
  int def, last;
} Cand;

/* A tail call of the function itself (a jump back to its top). */
typedef struct Jump {
  Expr *call;
  int at;
} Jump;

typedef struct FrameWalk {
  Cg *cg;
  CFunc *F;
  int n;               /* statements numbered so far */
  uint32_t esc, cand;  /* stamps in cg->mark (escapes) and cg->cand (candidates) */
  Vec(Cand) cands;
  Vec(Jump) jumps;
  EVec tmp;
} FrameWalk;

static int cand_index(const FrameWalk *w, const Expr *a) {
  if (a->kind != EXPR_VAR || w->cg->cand[a->id] != w->cand) return -1;
  return w->cg->last[a->id];
}

/* Every variable v uses escapes (a use that is not a kernel's operand). */
static void escape_all(FrameWalk *w, Expr *v) {
  if (v->kind == EXPR_VAR) {
    w->cg->mark[v->id] = w->esc;
    return;
  }
  w->tmp.len = 0;
  ir_free_vars(v, IR_KIDS_OPAQUE_PRIMITIVE, &w->tmp);
  for (int k = 0; k < w->tmp.len; k++) w->cg->mark[w->tmp.data[k]->id] = w->esc;
}

static void walk_block(FrameWalk *w, Expr *body, bool tail);

/* Statement value v (bound to var, or NULL: the value of its block). */
static void walk_value(FrameWalk *w, Expr *v, Expr *var, bool tail) {
  int at = w->n++;
  switch (v->kind) {
  case EXPR_IF:
    escape_all(w, v->u.if_.cond);
    walk_block(w, v->u.if_.then_, tail);
    walk_block(w, v->u.if_.else_, tail);
    break;
  case EXPR_MATCH:
    escape_all(w, v->u.match.scrut);
    for (int k = 0; k < v->u.match.nclauses; k++) walk_block(w, v->u.match.clauses[k].body, tail);
    break;
  case EXPR_LET: walk_block(w, v, tail); break;
  case EXPR_CALL:
    if (is_kernel_call(v)) {
      for (int k = 0; k < v->u.call.nargs; k++) {
        int c = cand_index(w, v->u.call.args[k]);
        if (c >= 0) w->cands.data[c].last = at;
      }
      int64_t bytes = frame_bytes(v->type);
      if (var && bytes > 0) {
        Cand c = {var, at, at};
        w->cg->cand[var->id] = w->cand;
        w->cg->last[var->id] = w->cands.len;
        VEC_PUSH(&w->cands, c);
      }
      break;
    }
    if (tail && cg_jump_target(w->cg, w->F, v) == w->F) { /* decided after the walk (loop state) */
      Jump j = {v, at};
      VEC_PUSH(&w->jumps, j);
      for (int k = 0; k < v->u.call.nargs; k++) {
        int c = cand_index(w, v->u.call.args[k]);
        if (c >= 0) w->cands.data[c].last = at;
      }
      escape_all(w, v->u.call.callee);
      break;
    }
    escape_all(w, v);
    break;
  default: escape_all(w, v); break;
  }
}

static void walk_block(FrameWalk *w, Expr *body, bool tail) {
  Expr *end = body;
  for (; end->kind == EXPR_LET && end->u.let.body != end->u.let.var; end = end->u.let.body)
    walk_value(w, end->u.let.value, end->u.let.var, false);
  if (end->kind == EXPR_LET) walk_value(w, end->u.let.value, NULL, tail); /* let %x = v; %x: v is the value */
  else walk_value(w, end, NULL, false);
}

/* Does tensor parameter k of F get a state slot? Every jump passes it
** unchanged or passes a kernel result (a fresh tensor, copied in), and
** some jump passes a new value. */
static bool state_ok(const FrameWalk *w, int k) {
  const Expr *p = w->F->fn->u.func.params[k];
  int64_t bytes = tensor_bytes(p->type);
  if (bytes <= 0 || p->type->u.tensor.ndim == 0) return false;
  bool changes = false;
  for (int j = 0; j < w->jumps.len; j++) {
    const Expr *a = w->jumps.data[j].call->u.call.args[k];
    if (a != p && cand_index(w, a) < 0) return false;
    changes |= a != p;
  }
  return changes;
}

/* Plans the frame of F: the state slots first (live all along), then the
** kernel results only kernels read (or a jump passes to a state slot). */
static void plan_frame(Cg *cg, CFunc *F) {
  FrameWalk w = {cg, F, 0, ++cg->gen, ++cg->bgen, {0}, {0}, {0}};
  walk_block(&w, F->fn->u.func.body, true);
  int np = F->fn->u.func.nparams;
  bool *state = rly_xcalloc((size_t)(np ? np : 1), sizeof(bool));
  for (int k = 0; k < np; k++) state[k] = state_ok(&w, k);
  /* A candidate passed by a jump to a parameter that is not state is
  ** retained by the next step: it escapes. */
  for (int j = 0; j < w.jumps.len; j++) {
    Expr *call = w.jumps.data[j].call;
    for (int k = 0; k < call->u.call.nargs; k++)
      if (!state[k] && call->u.call.args[k]->kind == EXPR_VAR) cg->mark[call->u.call.args[k]->id] = w.esc;
  }
  Fit fit = {0};
  F->nstate = 0;
  for (int k = 0; k < np; k++)
    if (state[k]) {
      Expr *p = F->fn->u.func.params[k];
      cg->plan_off[p->id] = fit_place(&fit, tensor_bytes(p->type), 0, INT_MAX);
      F->nstate++;
    }
  for (int c = 0; c < w.cands.len; c++) {
    Cand *cd = &w.cands.data[c];
    if (cg->mark[cd->var->id] == w.esc) continue;
    cg->plan_off[cd->var->id] = fit_place(&fit, frame_bytes(cd->var->type), cd->def, cd->last);
  }
  F->frame_size = fit.top;
  VEC_FREE(&fit.live);
  free(state);
  VEC_FREE(&w.cands);
  VEC_FREE(&w.jumps);
  VEC_FREE(&w.tmp);
}

void cg_plan_function(Cg *cg, CFunc *F) {
  bool alone = F->g ? cg->groups.data[F->group]->members.len == 1 : true;
  if (!alone) return; /* a group of globals that jump to each other: not yet */
  if (F->g && plan_straight(cg, F)) return;
  plan_frame(cg, F);
}

bool cg_state_param(const Cg *cg, const Expr *v) {
  const CFunc *F = cg->cur;
  if (!F || !F->nstate || v->kind != EXPR_VAR || cg->plan_off[v->id] < 0) return false;
  for (int k = 0; k < F->fn->u.func.nparams; k++)
    if (F->fn->u.func.params[k] == v) return true;
  return false;
}
