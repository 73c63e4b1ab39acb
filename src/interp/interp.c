/* interp.c: the reference interpreter (see interp.h).
**
** The machine: a work stack of items (evaluate this node in this
** activation; combine the values on top of the value stack; return from an
** activation) and a value stack of owned runtime objects. An activation is
** a table from expression id to value: parameters, let and pattern
** variables, captured variables, and the values of shared nodes (a node
** with several parents is computed once per activation). Every activation
** has exactly one K_RETURN item below its other items; when a call is made
** while that K_RETURN is on top of the work stack, the call is in tail
** position and the caller's activation is freed first (constant space for
** tail recursion, self and mutual).
**
** Requires: a type-checked module (operator calls use the inferred result
** types). Nothing here recurses on program data except pattern matching,
** whose depth is the pattern's nesting (bounded by the parser). */
#include "interp/interp.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/vec.h"
#include "interp/kcall.h"
#include "ir/walk.h"
#include "ops/ops.h"

/* {==== Activations ====} */

typedef struct Act {
  uint32_t *keys;        /* expression ids + 1 (0 = empty slot) */
  rlyrt_object **vals;   /* owned */
  uint32_t cap, count;
} Act;

static Act *act_new(void) { return rly_xcalloc(1, sizeof(Act)); }

static void act_free(Act *a) {
  if (!a) return;
  for (uint32_t i = 0; i < a->cap; i++)
    if (a->keys[i]) rlyrt_release(a->vals[i]);
  free(a->keys);
  free(a->vals);
  free(a);
}

static rlyrt_object *act_get(const Act *a, uint32_t id) {
  if (!a->cap) return NULL;
  uint32_t i = (id * 2654435761u) & (a->cap - 1);
  while (a->keys[i]) {
    if (a->keys[i] == id + 1) return a->vals[i];
    i = (i + 1) & (a->cap - 1);
  }
  return NULL;
}

/* Stores v (consumed) under id, replacing an older value. */
static void act_put(Act *a, uint32_t id, rlyrt_object *v) {
  if ((a->count + 1) * 2 > a->cap) {
    uint32_t cap = a->cap ? a->cap * 2 : 16;
    uint32_t *keys = rly_xcalloc(cap, sizeof(uint32_t));
    rlyrt_object **vals = rly_xcalloc(cap, sizeof(rlyrt_object *));
    for (uint32_t k = 0; k < a->cap; k++) {
      if (!a->keys[k]) continue;
      uint32_t i = ((a->keys[k] - 1) * 2654435761u) & (cap - 1);
      while (keys[i]) i = (i + 1) & (cap - 1);
      keys[i] = a->keys[k];
      vals[i] = a->vals[k];
    }
    free(a->keys);
    free(a->vals);
    a->keys = keys;
    a->vals = vals;
    a->cap = cap;
  }
  uint32_t i = (id * 2654435761u) & (a->cap - 1);
  while (a->keys[i] && a->keys[i] != id + 1) i = (i + 1) & (a->cap - 1);
  if (a->keys[i]) {
    rlyrt_release(a->vals[i]);
  } else {
    a->keys[i] = id + 1;
    a->count++;
  }
  a->vals[i] = v;
}

/* {==== Per-node facts ====} */

typedef enum { CALL_FUNC, CALL_GLOBAL, CALL_CTOR } CallableKind;

/* What a closure object runs (rlyrt_closure.code points here). */
typedef struct Callable {
  CallableKind kind;
  const Expr *fn;        /* FUNC: the function literal; GLOBAL: the def's function */
  const Ctor *ctor;      /* CTOR */
  Expr **free;           /* FUNC: captured variables, in env order */
  int nfree;
  Expr **nodes;          /* FUNC: shared nodes used inside and outside it, captured */
  int nnodes;            /*   after the variables (env[nfree + i]) */
  Expr *self;            /* FUNC: the recursive let variable naming this closure, or NULL */
} Callable;

typedef struct KCache {
  rlyrt_kernel_fn fn;
  rlyrt_kernel_call tmpl;
  bool ready;
} KCache;

struct Interp {
  Module *m;
  const SourceMap *sm;
  Arena *arena;          /* the interpreter's own facts */
  uint32_t n;            /* m->nexprs when created */
  uint8_t *shared;       /* per id: the node has several parents */
  Expr **self_of;        /* per FUNC id: the let variable it is bound to */
  Callable **callables;  /* per FUNC id / per GlobalDef index (lazily) */
  Callable **globals;
  Callable **ctors;      /* per ctor, indexed by the ctor's position in ctor_list */
  Vec(Ctor *) ctor_list;
  uint32_t *parent_start; /* per id + 1: parents of shared nodes, CSR into parents */
  Expr **parents;
  uint32_t *hoist_start;  /* per id + 1: CSR into hoist (IF and MATCH nodes) */
  Expr **hoist;           /* shared nodes evaluated after the condition (scrutinee) */
  KCache *kcache;        /* per CALL id */
  rlyrt_tensor **consts; /* per CONST id: a static tensor over the constant's data */
  Vec(rlyrt_tensor *) const_list;
};

/* A parent-child edge of the DAG (ir_kids with IR_KIDS_INNER). */
typedef struct Edge {
  Expr *parent, *child;
  int slot; /* the child's scope: -1 the parent's, else the parent's branch, clause or body */
} Edge;

/* {==== Where shared nodes are evaluated ====}
**
** A shared node is evaluated once, in its home: the innermost scope
** (function body, if branch, match clause) holding all its uses, where
** evaluation first needs it (ir_homes). That is where ToANormalForm binds
** it and where the printer puts its `%N =` line. When the first use is
** inside an if or a match of the home (in a branch, maybe one that does
** not run), the node is evaluated after the condition or scrutinee and
** before the branch: plan_hoists lists, per if and match node, the shared
** nodes to evaluate there, in evaluation order. (A node used inside a
** function literal and outside it is evaluated when the closure is built:
** see func_callable.) */

typedef struct Hoist {
  Expr *at, *node;
  uint32_t order; /* the node's position in evaluation order */
} Hoist;

static int cmp_hoist(const void *a, const void *b) {
  const Hoist *x = a, *y = b;
  if (x->at->id != y->at->id) return x->at->id < y->at->id ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Fills I->hoist_start and I->hoist. order is the evaluation order (the
** post-order of the roots), edges every parent-child edge. */
static void plan_hoists(Interp *I, Expr *const *roots, int nroots, const ExprVec *order, const Edge *edges,
                        int nedges) {
  uint32_t n = I->n ? I->n : 1;
  uint32_t *pos = rly_xcalloc(n, sizeof(uint32_t));
  for (int i = 0; i < order->len; i++) pos[order->data[i]->id] = (uint32_t)i;
  IrHomes H;
  ir_homes(&H, n, roots, nroots, order);
  const IrScope *sc = H.scopes.data;
  /* A use of a shared node in a scope below its home: the if or match
  ** owning the branch between them evaluates the node first. */
  Vec(Hoist) hs = {0};
  for (int i = 0; i < nedges; i++) {
    const Edge *ed = &edges[i];
    Expr *c = ed->child;
    int home = H.home[c->id];
    if (!I->shared[c->id] || ir_is_atom(c) || home < 0) continue;
    int s = ed->slot < 0 ? H.home[ed->parent->id] : H.base[ed->parent->id] + ed->slot;
    if (s < 0 || s == home) continue;
    while (sc[s].parent != home) s = sc[s].parent;
    Expr *at = sc[s].owner;
    if (at->kind != EXPR_IF && at->kind != EXPR_MATCH) continue;
    Hoist h = {at, c, pos[c->id]};
    VEC_PUSH(&hs, h);
  }
  if (hs.len > 1) qsort(hs.data, (size_t)hs.len, sizeof(Hoist), cmp_hoist);
  I->hoist_start = rly_xcalloc((size_t)n + 1, sizeof(uint32_t));
  I->hoist = rly_xcalloc((size_t)hs.len + 1, sizeof(Expr *));
  int nh = 0;
  for (int i = 0; i < hs.len; i++) {
    if (i && hs.data[i].at == hs.data[i - 1].at && hs.data[i].node == hs.data[i - 1].node) continue;
    I->hoist[nh++] = hs.data[i].node;
    I->hoist_start[hs.data[i].at->id + 1]++;
  }
  for (uint32_t i = 0; i < n; i++) I->hoist_start[i + 1] += I->hoist_start[i];
  VEC_FREE(&hs);
  ir_homes_free(&H);
  free(pos);
}

Interp *interp_new(Module *m, const SourceMap *sm) {
  Interp *I = rly_xcalloc(1, sizeof(Interp));
  I->m = m;
  I->sm = sm;
  I->arena = arena_new(0);
  I->n = m->nexprs;
  size_t n = I->n ? I->n : 1;
  I->shared = rly_xcalloc(n, 1);
  I->self_of = rly_xcalloc(n, sizeof(Expr *));
  I->callables = rly_xcalloc(n, sizeof(Callable *));
  I->kcache = rly_xcalloc(n, sizeof(KCache));
  I->consts = rly_xcalloc(n, sizeof(rlyrt_tensor *));
  I->globals = rly_xcalloc((size_t)(m->ndefs ? m->ndefs : 1), sizeof(Callable *));
  for (int i = 0; i < m->ntypes; i++)
    for (int k = 0; k < m->types[i]->nctors; k++) VEC_PUSH(&I->ctor_list, m->types[i]->ctors[k]);
  I->ctors = rly_xcalloc((size_t)(I->ctor_list.len ? I->ctor_list.len : 1), sizeof(Callable *));
  /* Every node once, in evaluation order; its edges count parents (a node
  ** reached from two parents is shared) and are kept to find, later, the
  ** parents of shared nodes. */
  Vec(Expr *) roots = {0};
  for (int i = 0; i < m->ndefs; i++) VEC_PUSH(&roots, m->defs[i]->func);
  if (m->expr) VEC_PUSH(&roots, m->expr);
  ExprVec order = {0};
  ir_postorder_roots(roots.data, roots.len, IR_KIDS_INNER, &order);
  Vec(Edge) edges = {0};
  IrKidVec kids = {0};
  for (int i = 0; i < order.len; i++) {
    Expr *e = order.data[i];
    if (e->kind == EXPR_LET && e->u.let.value->kind == EXPR_FUNC && e->u.let.value->id < I->n)
      I->self_of[e->u.let.value->id] = e->u.let.var;
    kids.len = 0;
    ir_kids_info(e, IR_KIDS_INNER, &kids);
    for (int k = 0; k < kids.len; k++) {
      Expr *c = kids.data[k].e;
      if (!c || c->id >= I->n) continue;
      if (I->shared[c->id] < 2) I->shared[c->id]++;
      Edge ed = {e, c, kids.data[k].slot};
      VEC_PUSH(&edges, ed);
    }
  }
  VEC_FREE(&kids);
  /* Counts of 2 mean shared. */
  for (uint32_t i = 0; i < I->n; i++) I->shared[i] = I->shared[i] >= 2;
  /* Parents of shared nodes, grouped by child (CSR). */
  I->parent_start = rly_xcalloc(n + 1, sizeof(uint32_t));
  for (int i = 0; i < edges.len; i++)
    if (I->shared[edges.data[i].child->id]) I->parent_start[edges.data[i].child->id + 1]++;
  for (uint32_t i = 0; i < I->n; i++) I->parent_start[i + 1] += I->parent_start[i];
  uint32_t *fill = rly_xcalloc(n, sizeof(uint32_t));
  I->parents = rly_xcalloc((size_t)I->parent_start[I->n] + 1, sizeof(Expr *));
  for (int i = 0; i < edges.len; i++) {
    Edge *ed = &edges.data[i];
    uint32_t c = ed->child->id;
    if (I->shared[c]) I->parents[I->parent_start[c] + fill[c]++] = ed->parent;
  }
  free(fill);
  plan_hoists(I, roots.data, roots.len, &order, edges.data, edges.len);
  VEC_FREE(&edges);
  VEC_FREE(&order);
  VEC_FREE(&roots);
  return I;
}

void interp_free(Interp *I) {
  if (!I) return;
  for (int i = 0; i < I->const_list.len; i++) rlyrt_free(I->const_list.data[i]);
  VEC_FREE(&I->const_list);
  VEC_FREE(&I->ctor_list);
  free(I->shared);
  free(I->parent_start);
  free(I->parents);
  free(I->hoist_start);
  free(I->hoist);
  free(I->self_of);
  free(I->callables);
  free(I->kcache);
  free(I->consts);
  free(I->globals);
  free(I->ctors);
  arena_free(I->arena);
  free(I);
}

static int cmp_expr_id(const void *a, const void *b) {
  uint32_t x = (*(Expr *const *)a)->id, y = (*(Expr *const *)b)->id;
  return x < y ? -1 : x > y;
}

static Callable *func_callable(Interp *I, const Expr *fn) {
  if (I->callables[fn->id]) return I->callables[fn->id];
  Callable *c = ARENA_NEW(I->arena, Callable);
  c->kind = CALL_FUNC;
  c->fn = fn;
  /* Shared nodes used both inside the function and outside it belong to
  ** the enclosing scope: the closure captures their values. */
  ExprVec inside = {0};
  ir_postorder((Expr *)fn, IR_KIDS_ALL, &inside);
  uint8_t *in = rly_xcalloc(I->n ? I->n : 1, 1);
  for (int i = 0; i < inside.len; i++)
    if (inside.data[i]->id < I->n) in[inside.data[i]->id] = 1;
  Vec(Expr *) nodes = {0};
  if (inside.len > 1) qsort(inside.data, (size_t)inside.len, sizeof(Expr *), cmp_expr_id);
  for (int i = 0; i < inside.len; i++) {
    Expr *x = inside.data[i];
    if (x == fn || !I->shared[x->id] || ir_is_atom(x)) continue;
    for (uint32_t k = I->parent_start[x->id]; k < I->parent_start[x->id + 1]; k++) {
      Expr *par = I->parents[k];
      if (par != fn && !in[par->id]) {
        VEC_PUSH(&nodes, x);
        break;
      }
    }
  }
  c->nodes = VEC_TO_ARENA(I->arena, &nodes);
  c->nnodes = nodes.len;
  VEC_FREE(&nodes);
  VEC_FREE(&inside);
  free(in);
  /* Captured variables, in id order (deterministic). */
  ExprVec fv = {0};
  ir_free_vars((Expr *)fn, IR_KIDS_ATTRS, &fv);
  if (fv.len > 1) qsort(fv.data, (size_t)fv.len, sizeof(Expr *), cmp_expr_id);
  Vec(Expr *) free_vars = {0};
  Expr *self = I->self_of[fn->id];
  for (int i = 0; i < fv.len; i++) {
    Expr *v = fv.data[i];
    if (v == self) {
      c->self = self;
      continue;
    }
    VEC_PUSH(&free_vars, v);
  }
  c->free = VEC_TO_ARENA(I->arena, &free_vars);
  c->nfree = free_vars.len;
  VEC_FREE(&free_vars);
  VEC_FREE(&fv);
  I->callables[fn->id] = c;
  return c;
}

static Callable *global_callable(Interp *I, const GlobalDef *g) {
  int k = 0;
  while (k < I->m->ndefs && I->m->defs[k] != g) k++;
  if (k == I->m->ndefs) return NULL;
  if (!I->globals[k]) {
    Callable *c = ARENA_NEW(I->arena, Callable);
    c->kind = CALL_GLOBAL;
    c->fn = g->func;
    I->globals[k] = c;
  }
  return I->globals[k];
}

static Callable *ctor_callable(Interp *I, const Ctor *ctor) {
  int k = 0;
  while (k < I->ctor_list.len && I->ctor_list.data[k] != ctor) k++;
  RLY_ASSERT(k < I->ctor_list.len);
  if (!I->ctors[k]) {
    Callable *c = ARENA_NEW(I->arena, Callable);
    c->kind = CALL_CTOR;
    c->ctor = ctor;
    I->ctors[k] = c;
  }
  return I->ctors[k];
}

/* A static tensor over a constant's data (no copy; freed with I). */
static rlyrt_object *const_value(Interp *I, const Expr *e) {
  if (I->consts[e->id]) return &I->consts[e->id]->obj;
  const ConstData *c = e->u.constant.value;
  rlyrt_tensor *t = rlyrt_alloc(sizeof(rlyrt_tensor) + sizeof(int64_t) * (size_t)c->ndim, 64);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  t->obj.refcount = RLYRT_REFCOUNT_STATIC;
  t->obj.kind = RLYRT_TENSOR;
  t->dl.data = c->data;
  t->dl.device.device_type = kDLCPU;
  t->dl.ndim = c->ndim;
  t->dl.dtype = kcall_dtype(c->dtype);
  t->dl.shape = t->shape_buf;
  for (int i = 0; i < c->ndim; i++) t->shape_buf[i] = c->shape[i];
  I->consts[e->id] = t;
  VEC_PUSH(&I->const_list, t);
  return &t->obj;
}

/* {==== The machine ====} */

typedef enum {
  K_EVAL,       /* evaluate e in act, push its value */
  K_MEMO,       /* the value on top is e's: remember it in act (shared node) */
  K_TUPLE,      /* pop n fields, push the tuple */
  K_PROJ,       /* pop a tuple, push a field */
  K_CALL,       /* pop callee (unless op/ctor/global) and args, call */
  K_LET,        /* pop the value, bind the variable, evaluate the body */
  K_SEQ,        /* pop and drop the value of a sequenced expression, evaluate the body */
  K_IF,         /* pop the condition, evaluate a branch */
  K_MATCH,      /* pop the scrutinee, evaluate the first matching clause */
  K_REF_NEW,
  K_REF_READ,
  K_REF_WRITE,
  K_CLOSURE,    /* the captured shared nodes are on the value stack: build the closure */
  K_DROP,       /* pop and release a value (a shared node evaluated ahead of its use) */
  K_RETURN,     /* the activation is finished: free it */
} KKind;

typedef struct Item {
  KKind kind;
  Expr *e;
  Act *act;
} Item;

typedef struct Machine {
  Interp *I;
  Vec(Item) work;
  Vec(rlyrt_object *) vals;
} Machine;

static void push_item(Machine *M, KKind k, Expr *e, Act *act) {
  Item it = {k, e, act};
  VEC_PUSH(&M->work, it);
}

static void push_val(Machine *M, rlyrt_object *v) { VEC_PUSH(&M->vals, v); }
static rlyrt_object *pop_val(Machine *M) { return VEC_POP(&M->vals); }

/* Sets the run-time error "FILE:LINE:COL: message". */
static rlyrt_status fail_at(Machine *M, const Expr *e, rlyrt_status s, const char *fmt, ...) {
  StrBuf sb = {0};
  const Source *src = e ? srcmap_get(M->I->sm, e->span.file) : NULL;
  if (src && e->span.line) sb_printf(&sb, "%s:%u:%u: ", src->name, e->span.line, e->span.col);
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  rlyrt_error(s, "%s", sb_str(&sb));
  sb_free(&sb);
  return s;
}

static char *value_text(const rlyrt_object *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  rlyrt_value_print(f, v);
  fclose(f);
  if (buf && len > 200) strcpy(buf + 197, "...");
  return buf;
}

/* Builds the closure of function literal e from act (and, when it
** captures shared nodes, their values on top of the value stack). */
static rlyrt_status make_closure(Machine *M, Expr *e, Act *act) {
  Interp *I = M->I;
  Callable *c = func_callable(I, e);
  rlyrt_closure *clo = rlyrt_closure_new(c, c->nfree + c->nnodes);
  if (!clo) return fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate a closure");
  for (int i = c->nnodes - 1; i >= 0; i--) rlyrt_closure_set_take(clo, c->nfree + i, pop_val(M));
  for (int i = 0; i < c->nfree; i++) rlyrt_closure_set_take(clo, i, rlyrt_retain(act_get(act, c->free[i]->id)));
  push_val(M, &clo->obj);
  if (I->shared[e->id]) act_put(act, e->id, rlyrt_retain(&clo->obj));
  return RLYRT_OK;
}

/* After the condition or scrutinee of e (pushed next): the shared nodes
** whose home holds e and whose first use is in e's branches. */
static void push_hoists(Machine *M, Expr *e, Act *act) {
  Interp *I = M->I;
  if (e->id >= I->n) return;
  for (uint32_t k = I->hoist_start[e->id + 1]; k > I->hoist_start[e->id]; k--) {
    push_item(M, K_DROP, NULL, act);
    push_item(M, K_EVAL, I->hoist[k - 1], act);
  }
}

/* Starts evaluating e in act. */
static rlyrt_status eval(Machine *M, Expr *e, Act *act) {
  Interp *I = M->I;
  if (I->shared[e->id]) {
    rlyrt_object *memo = act_get(act, e->id);
    if (memo) {
      push_val(M, rlyrt_retain(memo));
      return RLYRT_OK;
    }
  }
  switch (e->kind) {
  case EXPR_VAR: {
    rlyrt_object *v = act_get(act, e->id);
    if (!v) return fail_at(M, e, RLYRT_E_INTERNAL, "variable %%%s has no value", e->u.var.name ? e->u.var.name->text : "_");
    push_val(M, rlyrt_retain(v));
    return RLYRT_OK;
  }
  case EXPR_CONST: {
    rlyrt_object *v = const_value(I, e);
    if (!v) return RLYRT_E_NOMEM;
    push_val(M, v);
    return RLYRT_OK;
  }
  case EXPR_GLOBAL: {
    Callable *c = global_callable(I, e->u.global.def);
    rlyrt_closure *clo = c ? rlyrt_closure_new(c, 0) : NULL;
    if (!clo) return fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate a closure");
    push_val(M, &clo->obj);
    return RLYRT_OK;
  }
  case EXPR_CTOR: {
    rlyrt_closure *clo = rlyrt_closure_new(ctor_callable(I, e->u.ctor.ctor), 0);
    if (!clo) return fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate a closure");
    push_val(M, &clo->obj);
    return RLYRT_OK;
  }
  case EXPR_OP:
    return fail_at(M, e, RLYRT_E_UNSUPPORTED, "operator %s used as a value", e->u.op.op->name);
  case EXPR_FUNC: {
    Callable *c = func_callable(I, e);
    if (c->nnodes) {
      /* Evaluate the captured shared nodes first (in this activation). */
      push_item(M, K_CLOSURE, e, act);
      for (int i = c->nnodes - 1; i >= 0; i--) push_item(M, K_EVAL, c->nodes[i], act);
      return RLYRT_OK;
    }
    return make_closure(M, e, act);
  }
  default: break;
  }
  /* Compound nodes: remember shared ones once computed. */
  if (I->shared[e->id]) push_item(M, K_MEMO, e, act);
  switch (e->kind) {
  case EXPR_TUPLE:
    push_item(M, K_TUPLE, e, act);
    for (int i = e->u.tuple.n - 1; i >= 0; i--) push_item(M, K_EVAL, e->u.tuple.fields[i], act);
    break;
  case EXPR_GET_ITEM:
    push_item(M, K_PROJ, e, act);
    push_item(M, K_EVAL, e->u.get_item.tuple, act);
    break;
  case EXPR_CALL: {
    Expr *callee = e->u.call.callee;
    push_item(M, K_CALL, e, act);
    for (int i = e->u.call.nargs - 1; i >= 0; i--) push_item(M, K_EVAL, e->u.call.args[i], act);
    if (callee->kind != EXPR_OP && callee->kind != EXPR_CTOR && callee->kind != EXPR_GLOBAL)
      push_item(M, K_EVAL, callee, act);
    break;
  }
  case EXPR_LET:
    push_item(M, e->u.let.var->u.var.name ? K_LET : K_SEQ, e, act);
    push_item(M, K_EVAL, e->u.let.value, act);
    break;
  case EXPR_IF:
    push_item(M, K_IF, e, act);
    push_hoists(M, e, act);
    push_item(M, K_EVAL, e->u.if_.cond, act);
    break;
  case EXPR_MATCH:
    push_item(M, K_MATCH, e, act);
    push_hoists(M, e, act);
    push_item(M, K_EVAL, e->u.match.scrut, act);
    break;
  case EXPR_REF_NEW:
    push_item(M, K_REF_NEW, e, act);
    push_item(M, K_EVAL, e->u.ref_new.value, act);
    break;
  case EXPR_REF_READ:
    push_item(M, K_REF_READ, e, act);
    push_item(M, K_EVAL, e->u.ref_read.ref, act);
    break;
  case EXPR_REF_WRITE:
    push_item(M, K_REF_WRITE, e, act);
    push_item(M, K_EVAL, e->u.ref_write.value, act);
    push_item(M, K_EVAL, e->u.ref_write.ref, act);
    break;
  default:
    return fail_at(M, e, RLYRT_E_INTERNAL, "cannot evaluate a %s", expr_kind_names[e->kind]);
  }
  return RLYRT_OK;
}

/* Enters a function: a new activation with the parameters bound (args
** consumed); the body is evaluated next. A call in tail position frees the
** caller's activation first. */
static rlyrt_status enter(Machine *M, const Expr *site, Callable *c, rlyrt_closure *clo, rlyrt_object **args, int nargs) {
  const Expr *fn = c->fn;
  if (fn->u.func.nparams != nargs) {
    for (int i = 0; i < nargs; i++) rlyrt_release(args[i]);
    rlyrt_release(clo ? &clo->obj : NULL);
    return fail_at(M, site, RLYRT_E_ARG, "the function expects %d arguments, found %d", fn->u.func.nparams, nargs);
  }
  Act *act = act_new();
  for (int i = 0; i < nargs; i++) act_put(act, fn->u.func.params[i]->id, args[i]);
  if (clo) {
    for (int i = 0; i < c->nfree; i++) act_put(act, c->free[i]->id, rlyrt_retain(clo->env[i]));
    for (int i = 0; i < c->nnodes; i++) act_put(act, c->nodes[i]->id, rlyrt_retain(clo->env[c->nfree + i]));
    if (c->self) act_put(act, c->self->id, rlyrt_retain(&clo->obj));
    rlyrt_release(&clo->obj);
  }
  if (M->work.len && VEC_LAST(&M->work).kind == K_RETURN) {
    Item done = VEC_POP(&M->work);
    act_free(done.act);
  }
  push_item(M, K_RETURN, NULL, act);
  push_item(M, K_EVAL, fn->u.func.body, act);
  return RLYRT_OK;
}

/* Pattern matching; binds into act only when the whole pattern matches. */
static bool matches(const Pattern *p, rlyrt_object *v) {
  switch (p->kind) {
  case PAT_WILDCARD:
  case PAT_VAR: return true;
  case PAT_CTOR: {
    if (!v || v->kind != RLYRT_ADT || RLYRT_AS_ADT(v)->tag != p->u.ctor.ctor->tag) return false;
    rlyrt_adt *a = RLYRT_AS_ADT(v);
    for (int i = 0; i < p->u.ctor.n && i < a->n; i++)
      if (!matches(p->u.ctor.args[i], a->fields[i])) return false;
    return true;
  }
  case PAT_TUPLE: {
    if (!v || v->kind != RLYRT_TUPLE || RLYRT_AS_TUPLE(v)->n != p->u.tuple.n) return false;
    for (int i = 0; i < p->u.tuple.n; i++)
      if (!matches(p->u.tuple.fields[i], RLYRT_AS_TUPLE(v)->fields[i])) return false;
    return true;
  }
  default: return false;
  }
}

static void bind(const Pattern *p, rlyrt_object *v, Act *act) {
  switch (p->kind) {
  case PAT_VAR: act_put(act, p->u.var.var->id, rlyrt_retain(v)); break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) bind(p->u.ctor.args[i], RLYRT_AS_ADT(v)->fields[i], act);
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) bind(p->u.tuple.fields[i], RLYRT_AS_TUPLE(v)->fields[i], act);
    break;
  default: break;
  }
}

static rlyrt_status call_kernel(Machine *M, Expr *e, rlyrt_object **args, int nargs, rlyrt_object **out) {
  Interp *I = M->I;
  KCache *kc = &I->kcache[e->id];
  if (!kc->ready) {
    const OpDef *op = e->u.call.callee->u.op.op;
    kc->fn = rlyrt_kernel_lookup(op->name);
    if (!kc->fn) return fail_at(M, e, RLYRT_E_UNSUPPORTED, "%s has no reference kernel", op->name);
    char err[256];
    if (!kcall_prepare(I->arena, e, &kc->tmpl, err, sizeof err)) return fail_at(M, e, RLYRT_E_UNSUPPORTED, "%s", err);
    kc->ready = true;
  }
  rlyrt_kernel_call call = kc->tmpl;
  call.args = args;
  call.nargs = nargs;
  call.result = NULL;
  rlyrt_status s = kc->fn(&call);
  if (s != RLYRT_OK) {
    char msg[900];
    snprintf(msg, sizeof msg, "%s", rlyrt_last_error());
    return fail_at(M, e, s, "%s", msg);
  }
  *out = call.result;
  return RLYRT_OK;
}

/* Pushes the ADT value ctor(args) (args consumed). */
static rlyrt_status construct(Machine *M, const Expr *e, const Ctor *ctor, rlyrt_object **args, int n) {
  rlyrt_adt *a = rlyrt_adt_new(ctor->tag, ctor->name->text, n);
  if (!a) {
    for (int i = 0; i < n; i++) rlyrt_release(args[i]);
    return fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate %s", ctor->name->text);
  }
  for (int i = 0; i < n; i++) rlyrt_adt_set_take(a, i, args[i]);
  push_val(M, &a->obj);
  return RLYRT_OK;
}

/* Runs items until the work stack is empty. */
static rlyrt_status run(Machine *M) {
  Interp *I = M->I;
  while (M->work.len) {
    Item it = VEC_POP(&M->work);
    Expr *e = it.e;
    rlyrt_status s = RLYRT_OK;
    switch (it.kind) {
    case K_EVAL: s = eval(M, e, it.act); break;
    case K_MEMO: act_put(it.act, e->id, rlyrt_retain(VEC_LAST(&M->vals))); break;
    case K_RETURN: act_free(it.act); break;
    case K_CLOSURE: s = make_closure(M, e, it.act); break;
    case K_DROP: rlyrt_release(pop_val(M)); break;
    case K_TUPLE: {
      int n = e->u.tuple.n;
      rlyrt_tuple *t = rlyrt_tuple_new(n);
      if (!t) return fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate a tuple");
      for (int i = n - 1; i >= 0; i--) rlyrt_tuple_set_take(t, i, pop_val(M));
      push_val(M, &t->obj);
      break;
    }
    case K_PROJ: {
      rlyrt_object *t = pop_val(M);
      int i = e->u.get_item.index;
      if (!t || t->kind != RLYRT_TUPLE || i >= RLYRT_AS_TUPLE(t)->n) {
        rlyrt_release(t);
        return fail_at(M, e, RLYRT_E_INTERNAL, "projection .%d of a value that is not a tuple of that size", i);
      }
      push_val(M, rlyrt_retain(RLYRT_AS_TUPLE(t)->fields[i]));
      rlyrt_release(t);
      break;
    }
    case K_CALL: {
      Expr *callee = e->u.call.callee;
      int n = e->u.call.nargs;
      rlyrt_object *argv[16];
      rlyrt_object **args = n <= 16 ? argv : rly_xmalloc(sizeof(rlyrt_object *) * (size_t)n);
      for (int i = n - 1; i >= 0; i--) args[i] = pop_val(M);
      if (callee->kind == EXPR_OP) {
        rlyrt_object *out = NULL;
        s = call_kernel(M, e, args, n, &out);
        for (int i = 0; i < n; i++) rlyrt_release(args[i]);
        if (s == RLYRT_OK) push_val(M, out);
      } else if (callee->kind == EXPR_CTOR) {
        s = construct(M, e, callee->u.ctor.ctor, args, n);
      } else if (callee->kind == EXPR_GLOBAL) {
        s = enter(M, e, global_callable(I, callee->u.global.def), NULL, args, n);
      } else {
        rlyrt_object *f = pop_val(M);
        if (!f || f->kind != RLYRT_CLOSURE) {
          for (int i = 0; i < n; i++) rlyrt_release(args[i]);
          rlyrt_release(f);
          s = fail_at(M, e, RLYRT_E_INTERNAL, "calling a value that is not a function");
        } else {
          rlyrt_closure *clo = RLYRT_AS_CLOSURE(f);
          Callable *c = (Callable *)clo->code;
          if (c->kind == CALL_CTOR) {
            s = construct(M, e, c->ctor, args, n);
            rlyrt_release(f);
          } else if (c->kind == CALL_GLOBAL) {
            rlyrt_release(f);
            s = enter(M, e, c, NULL, args, n);
          } else {
            s = enter(M, e, c, clo, args, n);
          }
        }
      }
      if (args != argv) free(args);
      break;
    }
    case K_LET:
      act_put(it.act, e->u.let.var->id, pop_val(M));
      push_item(M, K_EVAL, e->u.let.body, it.act);
      break;
    case K_SEQ:
      rlyrt_release(pop_val(M));
      push_item(M, K_EVAL, e->u.let.body, it.act);
      break;
    case K_IF: {
      rlyrt_object *c = pop_val(M);
      bool yes = c && c->kind == RLYRT_TENSOR && rlyrt_tensor_numel(RLYRT_AS_TENSOR(c)) == 1 &&
                 rlyrt_get_i64(RLYRT_AS_TENSOR(c), 0) != 0;
      rlyrt_release(c);
      push_item(M, K_EVAL, yes ? e->u.if_.then_ : e->u.if_.else_, it.act);
      break;
    }
    case K_MATCH: {
      rlyrt_object *v = pop_val(M);
      int k = 0;
      while (k < e->u.match.nclauses && !matches(e->u.match.clauses[k].pat, v)) k++;
      if (k == e->u.match.nclauses) {
        char *text = value_text(v);
        s = fail_at(M, e, RLYRT_E_MATCH, "match%s found no clause for %s", e->u.match.complete ? "" : "?",
                    text ? text : "the value");
        free(text);
      } else {
        bind(e->u.match.clauses[k].pat, v, it.act);
        push_item(M, K_EVAL, e->u.match.clauses[k].body, it.act);
      }
      rlyrt_release(v);
      break;
    }
    case K_REF_NEW: {
      rlyrt_ref *r = rlyrt_ref_new_take(pop_val(M));
      if (!r) s = fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate a reference");
      else push_val(M, &r->obj);
      break;
    }
    case K_REF_READ: {
      rlyrt_object *r = pop_val(M);
      if (!r || r->kind != RLYRT_REF) {
        rlyrt_release(r);
        s = fail_at(M, e, RLYRT_E_INTERNAL, "ref_read of a value that is not a reference");
      } else {
        push_val(M, rlyrt_retain(RLYRT_AS_REF(r)->value));
        rlyrt_release(r);
      }
      break;
    }
    case K_REF_WRITE: {
      rlyrt_object *v = pop_val(M), *r = pop_val(M);
      if (!r || r->kind != RLYRT_REF) {
        rlyrt_release(v);
        rlyrt_release(r);
        s = fail_at(M, e, RLYRT_E_INTERNAL, "ref_write to a value that is not a reference");
      } else {
        rlyrt_ref_write_take(RLYRT_AS_REF(r), v);
        rlyrt_release(r);
        rlyrt_tuple *unit = rlyrt_tuple_new(0);
        if (!unit) s = fail_at(M, e, RLYRT_E_NOMEM, "cannot allocate ()");
        else push_val(M, &unit->obj);
      }
      break;
    }
    }
    if (s != RLYRT_OK) return s;
  }
  return RLYRT_OK;
}

/* Frees what an interrupted run left behind. */
static void unwind(Machine *M) {
  while (M->vals.len) rlyrt_release(VEC_POP(&M->vals));
  for (int i = 0; i < M->work.len; i++)
    if (M->work.data[i].kind == K_RETURN) act_free(M->work.data[i].act);
  M->work.len = 0;
}

static rlyrt_status finish(Machine *M, rlyrt_status s, rlyrt_object **out) {
  if (s == RLYRT_OK && M->vals.len == 1) {
    *out = VEC_POP(&M->vals);
  } else {
    if (s == RLYRT_OK) s = rlyrt_error(RLYRT_E_INTERNAL, "the interpreter ended with %d values", M->vals.len);
    *out = NULL;
  }
  unwind(M);
  VEC_FREE(&M->vals);
  VEC_FREE(&M->work);
  return s;
}

rlyrt_status interp_call(Interp *I, const GlobalDef *g, rlyrt_object *const *args, int nargs, rlyrt_object **out) {
  Machine M;
  memset(&M, 0, sizeof M);
  M.I = I;
  rlyrt_clear_error();
  Callable *c = global_callable(I, g);
  if (!c) return rlyrt_error(RLYRT_E_ARG, "no such function");
  rlyrt_object **owned = rly_xmalloc(sizeof(rlyrt_object *) * (size_t)(nargs ? nargs : 1));
  for (int i = 0; i < nargs; i++) owned[i] = rlyrt_retain(args[i]);
  rlyrt_status s = enter(&M, NULL, c, NULL, owned, nargs);
  free(owned);
  if (s == RLYRT_OK) s = run(&M);
  return finish(&M, s, out);
}

rlyrt_status interp_eval_expr(Interp *I, rlyrt_object *const *vals, rlyrt_object **out) {
  Machine M;
  memset(&M, 0, sizeof M);
  M.I = I;
  rlyrt_clear_error();
  if (!I->m->expr) return rlyrt_error(RLYRT_E_ARG, "the module has no expression to evaluate");
  Act *act = act_new();
  for (int i = 0; i < I->m->nfree_vars; i++) act_put(act, I->m->free_vars[i]->id, rlyrt_retain(vals[i]));
  push_item(&M, K_RETURN, NULL, act);
  push_item(&M, K_EVAL, I->m->expr, act);
  return finish(&M, run(&M), out);
}
