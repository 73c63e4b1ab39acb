/* plan.c: the static memory plan.
**
** Every intermediate tensor of static type that does not escape lives at a
** fixed offset in a workspace, and the offsets are reused once a tensor's
** last use has passed (a straight-line body: greedy by size, the largest
** first at the lowest free offset, place_by_size; frames: first fit in
** definition order; a tensor never shares bytes with the operands of the
** call that makes it).
**
** - A global whose body is straight-line (operator calls, tuples,
**   projections, atoms: no control flow, no calls of functions) plans
**   every tensor that is not the result, not put in a tuple and not bound
**   to another variable. It allocates its workspace with one rlyrt_scratch_alloc
**   per call (NAME_ws takes it; a typed entry point passes the caller's).
** - Any other C function (recursive globals, loops, closures, and a group
**   of globals that tail-call each other) plans the kernel results that
**   only kernels read (tensors, and tuples of tensors such as split's,
**   whose fields kernels read in place; at -O0 a projection statement
**   %x = %s.k of such a tuple is the field, an alias that keeps the tuple
**   live): it pushes its workspace on the thread's frame stack
**   (rlyrt_frame_push) on entry and pops it on return, so a recursion or a
**   loop step allocates nothing for them. Its statements are numbered in
**   one pre-order over the nested blocks (branches, clauses) and over the
**   members of a group one after the other, so an interval is
**   conservative across branches and the members share bytes; a jump
**   (a tail call within the C function) starts a new step in which every
**   such tensor is dead.
** - Loop state: a tensor parameter of a member that every jump to it
**   passes unchanged, a kernel result, or (from another member) one of
**   that member's parameters, and that some jump gives a new value,
**   keeps a state slot. The slots of all the members come first in the
**   frame and never overlap, so a jump's copies never read a slot that the
**   same jump writes; f(b, a) within one member keeps a and b off the
**   slots. */
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

/* The straight-line plan: the tensors largest first (then in definition
** order), each at the lowest offset where it overlaps no tensor placed
** before it whose interval [def, last] meets its own. First fit in
** definition order left ResNet-50's workspace at 10.4 MB for 7.2 MB live
** at most: its first blocks' 3.2 MB results went above everything the
** stem had written, and a write to memory that no earlier kernel of the
** call touched (the weights streamed since the last call have evicted it)
** costs about twice as much. Largest first, the big results take the
** offsets the big results before them freed. */
typedef struct Placed {
  int64_t size, off;
  int def, last;
  uint32_t id;
} Placed;

static int by_size(const void *a, const void *b) {
  const Placed *x = a, *y = b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return (x->def > y->def) - (x->def < y->def);
}

static int by_off(const void *a, const void *b) {
  const Placed *x = *(Placed *const *)a, *y = *(Placed *const *)b;
  return (x->off > y->off) - (x->off < y->off);
}

static int64_t place_by_size(Placed *t, int n) {
  if (n == 0) return 0;
  qsort(t, (size_t)n, sizeof *t, by_size);
  Placed **near = rly_xcalloc((size_t)n, sizeof *near);
  int64_t top = 0;
  for (int i = 0; i < n; i++) {
    int k = 0;
    for (int j = 0; j < i; j++)
      if (t[j].def <= t[i].last && t[i].def <= t[j].last) near[k++] = &t[j];
    qsort(near, (size_t)k, sizeof *near, by_off);
    int64_t off = 0;
    for (int j = 0; j < k; j++) {
      if (near[j]->off - off >= t[i].size) break;
      if (near[j]->off + near[j]->size > off) off = near[j]->off + near[j]->size;
    }
    t[i].off = off;
    if (off + t[i].size > top) top = off + t[i].size;
  }
  free(near);
  return top;
}

static bool is_kernel_call(const Expr *v) {
  return v->kind == EXPR_CALL && v->u.call.callee->kind == EXPR_FUNC && ir_is_primitive(v->u.call.callee);
}

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
  Vec(Placed) ts = {0};
  for (int i = 0; i < n; i++) {
    Expr *var = chain.data[i]->u.let.var;
    Expr *v = chain.data[i]->u.let.value;
    if (v->kind != EXPR_CALL || cg->mark[var->id] == esc) continue;
    if (i == n - 1 && chain.data[i]->u.let.body == var) continue;
    int64_t bytes = tensor_bytes(v->type);
    if (bytes <= 0 || v->type->u.tensor.ndim == 0) continue; /* scalars may live unboxed instead */
    Placed t = {(bytes + 63) & ~(int64_t)63, 0, i, last[i], var->id};
    VEC_PUSH(&ts, t);
  }
  F->plan_size = place_by_size(ts.data, ts.len);
  for (int k = 0; k < ts.len; k++) cg->plan_off[ts.data[k].id] = ts.data[k].off;
  VEC_FREE(&ts);
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

/* A variable bound to a projection %s.k of a tuple candidate (-O0: the
** projections are statements): it is the tuple's field, in the frame with
** the tuple, which lives until the alias's last use. */
typedef struct Alias {
  Expr *var;
  int cand, field;
} Alias;

/* A tail call of a member of the C function (a jump to its label). */
typedef struct Jump {
  Expr *call;
  int at;
  int from, to; /* members */
} Jump;

typedef struct FrameWalk {
  Cg *cg;
  CFunc *const *fs;    /* the members of the C function */
  int nf, cur;         /* their number; the member being walked */
  int n;               /* statements numbered so far (one numbering for all members) */
  uint32_t esc, cand;  /* stamps in cg->mark (escapes) and cg->cand (candidates) */
  Vec(Cand) cands;
  Vec(Alias) aliases;
  Vec(Jump) jumps;
  EVec tmp;
} FrameWalk;

/* The candidate a is (or whose field it is, for an alias), or -1. */
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

/* Marks statement at as a use of the candidates among args. */
static void use_args(FrameWalk *w, Expr *const *args, int n, int at) {
  for (int k = 0; k < n; k++) {
    int c = cand_index(w, args[k]);
    if (c >= 0) w->cands.data[c].last = at;
  }
}

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
  case EXPR_GET_ITEM: {
    /* %x = %s.k of a tuple candidate: %x is the field, an alias. */
    int c = cand_index(w, v->u.get_item.tuple);
    if (var && c >= 0 && w->cg->cand[var->id] != w->cand && frame_bytes(var->type) > 0 &&
        var->type->kind == TYPE_TENSOR) {
      w->cands.data[c].last = at;
      Alias a = {var, c, v->u.get_item.index};
      w->cg->cand[var->id] = w->cand;
      w->cg->last[var->id] = c;
      VEC_PUSH(&w->aliases, a);
      break;
    }
    escape_all(w, v);
    break;
  }
  case EXPR_CALL: {
    if (is_kernel_call(v)) {
      use_args(w, v->u.call.args, v->u.call.nargs, at);
      int64_t bytes = frame_bytes(v->type);
      if (var && bytes > 0) {
        Cand c = {var, at, at};
        w->cg->cand[var->id] = w->cand;
        w->cg->last[var->id] = w->cands.len;
        VEC_PUSH(&w->cands, c);
      }
      break;
    }
    CFunc *T = tail ? cg_jump_target(w->cg, w->fs[w->cur], v) : NULL;
    if (T) { /* what it passes is decided after the walk (loop state) */
      Jump j = {v, at, w->cur, T == w->fs[w->cur] ? w->cur : T->member};
      VEC_PUSH(&w->jumps, j);
      use_args(w, v->u.call.args, v->u.call.nargs, at);
      escape_all(w, v->u.call.callee);
      break;
    }
    escape_all(w, v);
    break;
  }
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

static int param_index(const CFunc *F, const Expr *a) {
  for (int k = 0; k < F->fn->u.func.nparams; k++)
    if (F->fn->u.func.params[k] == a) return k;
  return -1;
}

/* May tensor parameter k of member m keep a state slot? Every jump to m
** passes a kernel result, or the parameter itself (a jump from m), or a
** parameter of the member it comes from (another member: its slots never
** overlap m's, so the copy reads what it should). A jump from m passing
** one of m's other parameters (f(b, a)) would overwrite a slot that the
** jump still reads: that parameter is not state. */
static bool state_valid(const FrameWalk *w, int m, int k) {
  const Expr *p = w->fs[m]->fn->u.func.params[k];
  int64_t bytes = tensor_bytes(p->type);
  if (bytes <= 0 || p->type->u.tensor.ndim == 0) return false;
  for (int j = 0; j < w->jumps.len; j++) {
    const Jump *J = &w->jumps.data[j];
    if (J->to != m) continue;
    const Expr *a = J->call->u.call.args[k];
    if (cand_index(w, a) >= 0) continue;
    if (J->from == m ? a == p : param_index(w->fs[J->from], a) >= 0) continue;
    return false;
  }
  return true;
}

/* Which tensor parameters get state slots (state[base[m] + k]): the valid
** ones that some jump gives a new value: a kernel result, or another
** member's state parameter (least fixed point), so that a value passed on
** from member to member stays in slots and is copied, not kept. */
static void choose_state(const FrameWalk *w, const int *base, bool *state) {
  bool *valid = rly_xcalloc((size_t)base[w->nf] + 1, sizeof(bool));
  for (int m = 0; m < w->nf; m++)
    for (int k = 0; k < w->fs[m]->fn->u.func.nparams; k++) valid[base[m] + k] = state_valid(w, m, k);
  for (bool changed = true; changed;) {
    changed = false;
    for (int j = 0; j < w->jumps.len; j++) {
      const Jump *J = &w->jumps.data[j];
      for (int k = 0; k < J->call->u.call.nargs; k++) {
        int s = base[J->to] + k;
        if (!valid[s] || state[s]) continue;
        const Expr *a = J->call->u.call.args[k];
        int q = J->from != J->to ? param_index(w->fs[J->from], a) : -1;
        if (cand_index(w, a) >= 0 || (q >= 0 && state[base[J->from] + q])) state[s] = changed = true;
      }
    }
  }
  free(valid);
}

/* Plans the frame of the C function of members fs (one, or a group of
** globals that jump to each other): the state slots of every member first
** (live all along, never overlapping), then the kernel results only
** kernels read (or a jump passes to a state slot), numbered in one order
** over all the members, so that the members' steps share bytes. */
static void plan_frames(Cg *cg, CFunc *const *fs, int nf) {
  FrameWalk w = {cg, fs, nf, 0, 0, ++cg->gen, ++cg->bgen, {0}, {0}, {0}, {0}};
  for (w.cur = 0; w.cur < nf; w.cur++) walk_block(&w, fs[w.cur]->fn->u.func.body, true);
  int *base = rly_xcalloc((size_t)nf + 1, sizeof(int));
  for (int m = 0; m < nf; m++) base[m + 1] = base[m] + fs[m]->fn->u.func.nparams;
  bool *state = rly_xcalloc((size_t)base[nf] + 1, sizeof(bool));
  choose_state(&w, base, state);
  /* A candidate passed by a jump to a parameter that is not state is
  ** retained by the next step: it escapes. */
  for (int j = 0; j < w.jumps.len; j++) {
    Jump *J = &w.jumps.data[j];
    for (int k = 0; k < J->call->u.call.nargs; k++)
      if (!state[base[J->to] + k] && J->call->u.call.args[k]->kind == EXPR_VAR)
        cg->mark[J->call->u.call.args[k]->id] = w.esc;
  }
  /* A tuple whose field escapes through an alias escapes. */
  for (int a = 0; a < w.aliases.len; a++)
    if (cg->mark[w.aliases.data[a].var->id] == w.esc) cg->mark[w.cands.data[w.aliases.data[a].cand].var->id] = w.esc;
  Fit fit = {0};
  for (int m = 0; m < nf; m++) {
    CFunc *F = fs[m];
    F->nstate = 0;
    for (int k = 0; k < F->fn->u.func.nparams; k++)
      if (state[base[m] + k]) {
        Expr *p = F->fn->u.func.params[k];
        cg->plan_off[p->id] = fit_place(&fit, tensor_bytes(p->type), 0, INT_MAX);
        F->nstate++;
      }
  }
  for (int c = 0; c < w.cands.len; c++) {
    Cand *cd = &w.cands.data[c];
    if (cg->mark[cd->var->id] == w.esc) continue;
    cg->plan_off[cd->var->id] = fit_place(&fit, frame_bytes(cd->var->type), cd->def, cd->last);
  }
  for (int a = 0; a < w.aliases.len; a++) {
    const Alias *al = &w.aliases.data[a];
    const Expr *t = w.cands.data[al->cand].var;
    if (cg->plan_off[t->id] >= 0)
      cg->plan_off[al->var->id] = cg->plan_off[t->id] + cg_tuple_field_offset(t->type, al->field);
  }
  for (int m = 0; m < nf; m++) fs[m]->frame_size = fit.top;
  VEC_FREE(&fit.live);
  free(state);
  free(base);
  VEC_FREE(&w.cands);
  VEC_FREE(&w.aliases);
  VEC_FREE(&w.jumps);
  VEC_FREE(&w.tmp);
}

void cg_plan_function(Cg *cg, CFunc *F) {
  if (F->g) {
    Group *G = cg->groups.data[F->group];
    if (G->members.len > 1) { /* one frame for the group's C function, planned once */
      if (F->member == 0) plan_frames(cg, G->members.data, G->members.len);
      return;
    }
    if (plan_straight(cg, F)) return;
  }
  plan_frames(cg, &F, 1);
}

bool cg_state_param_of(const Cg *cg, const CFunc *F, const Expr *v) {
  if (!F || !F->nstate || v->kind != EXPR_VAR || cg->plan_off[v->id] < 0) return false;
  return param_index(F, v) >= 0;
}

bool cg_state_param(const Cg *cg, const Expr *v) { return cg_state_param_of(cg, cg->cur, v); }
