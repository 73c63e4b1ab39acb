/* walk.c: the pre-order walker, the memoized post-order rewriter and the
** dataflow post-order of walk.h.
**
** Input: an expression DAG (nodes may have several parents; no cycles).
** Every traversal keeps an explicit stack on the heap, and marks nodes in a
** table indexed by Expr.id that grows when a larger id shows up; both are
** freed before returning. Patterns and attribute values are walked
** recursively: their depth is that of the source text, which is small. */
#include "ir/walk.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

/* {==== Id-indexed tables ====} */

/* A set of ids: one byte per id (clear = 0). */
typedef struct IdSet {
  uint8_t *on;
  size_t cap;
} IdSet;

static size_t grown_cap(size_t cap, uint32_t id) {
  size_t c = cap ? cap : 1024;
  while (c <= id) c *= 2;
  return c;
}

/* Adds id; returns true if it was not in the set. */
static bool idset_add(IdSet *s, uint32_t id) {
  if (id >= s->cap) {
    size_t c = grown_cap(s->cap, id);
    s->on = rly_xrealloc(s->on, c);
    memset(s->on + s->cap, 0, c - s->cap);
    s->cap = c;
  }
  if (s->on[id]) return false;
  s->on[id] = 1;
  return true;
}

/* id -> replacement (NULL: not rewritten yet). */
typedef struct Memo {
  Expr **to;
  size_t cap;
} Memo;

static Expr *memo_get(const Memo *m, uint32_t id) { return id < m->cap ? m->to[id] : NULL; }

static void memo_set(Memo *m, uint32_t id, Expr *e) {
  if (id >= m->cap) {
    size_t c = grown_cap(m->cap, id);
    m->to = rly_xrealloc(m->to, c * sizeof(Expr *));
    memset(m->to + m->cap, 0, (c - m->cap) * sizeof(Expr *));
    m->cap = c;
  }
  m->to[id] = e;
}

/* {==== Children ====} */

typedef struct ByteVec {
  uint8_t *data;
  int len, cap;
} ByteVec;

/* Where children are collected: the nodes and, when binder is not NULL,
** one flag per node telling whether it sits in a binder position. */
typedef struct Kids {
  ExprVec *out;
  ByteVec *binder;
} Kids;

static void kid(Kids *k, Expr *e, bool is_binder) {
  VEC_PUSH(k->out, e);
  if (k->binder) VEC_PUSH(k->binder, (uint8_t)is_binder);
}

static void pattern_vars(Kids *k, const Pattern *p) {
  if (!p) return;
  switch (p->kind) {
  case PAT_WILDCARD: break;
  case PAT_VAR: kid(k, p->u.var.var, true); break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) pattern_vars(k, p->u.ctor.args[i]);
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) pattern_vars(k, p->u.tuple.fields[i]);
    break;
  case PAT_KIND_COUNT: RLY_UNREACHABLE();
  }
}

static void value_exprs(Kids *k, const AttrValue *v) {
  if (!v) return;
  if (v->kind == AV_EXPR) kid(k, v->u.expr, false);
  else if (v->kind == AV_ARRAY)
    for (int i = 0; i < v->u.arr.n; i++) value_exprs(k, v->u.arr.items[i]);
}

static void attrs_exprs(Kids *k, const Attrs *a) {
  if (!a || !a->values) return;
  for (int i = 0; i < a->n; i++) value_exprs(k, a->values[i]);
}

/* Appends e's children in the order documented in walk.h (NULL children
** included, so positions line up with rebuild()). with_attrs adds the
** expressions inside attributes. */
static void children(Kids *k, const Expr *e, bool with_attrs) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR:
    break;
  case EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++) kid(k, e->u.tuple.fields[i], false);
    break;
  case EXPR_GET_ITEM: kid(k, e->u.get_item.tuple, false); break;
  case EXPR_CALL:
    kid(k, e->u.call.callee, false);
    for (int i = 0; i < e->u.call.nargs; i++) kid(k, e->u.call.args[i], false);
    if (with_attrs) attrs_exprs(k, e->u.call.attrs);
    break;
  case EXPR_LET:
    kid(k, e->u.let.var, true);
    kid(k, e->u.let.value, false);
    kid(k, e->u.let.body, false);
    break;
  case EXPR_IF:
    kid(k, e->u.if_.cond, false);
    kid(k, e->u.if_.then_, false);
    kid(k, e->u.if_.else_, false);
    break;
  case EXPR_FUNC:
    for (int i = 0; i < e->u.func.nparams; i++) kid(k, e->u.func.params[i], true);
    if (with_attrs) attrs_exprs(k, e->u.func.attrs);
    kid(k, e->u.func.body, false);
    break;
  case EXPR_MATCH:
    kid(k, e->u.match.scrut, false);
    for (int i = 0; i < e->u.match.nclauses; i++) {
      pattern_vars(k, e->u.match.clauses[i].pat);
      kid(k, e->u.match.clauses[i].body, false);
    }
    break;
  case EXPR_REF_NEW: kid(k, e->u.ref_new.value, false); break;
  case EXPR_REF_READ: kid(k, e->u.ref_read.ref, false); break;
  case EXPR_REF_WRITE:
    kid(k, e->u.ref_write.ref, false);
    kid(k, e->u.ref_write.value, false);
    break;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

/* The dataflow children of e (walk.h, ir_postorder). */
static void dataflow_children(ExprVec *out, const Expr *e) {
  switch (e->kind) {
  case EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++) VEC_PUSH(out, e->u.tuple.fields[i]);
    break;
  case EXPR_GET_ITEM: VEC_PUSH(out, e->u.get_item.tuple); break;
  case EXPR_CALL:
    VEC_PUSH(out, e->u.call.callee);
    for (int i = 0; i < e->u.call.nargs; i++) VEC_PUSH(out, e->u.call.args[i]);
    break;
  case EXPR_LET:
    VEC_PUSH(out, e->u.let.value);
    VEC_PUSH(out, e->u.let.body);
    break;
  case EXPR_IF: VEC_PUSH(out, e->u.if_.cond); break;
  case EXPR_MATCH: VEC_PUSH(out, e->u.match.scrut); break;
  case EXPR_REF_NEW: VEC_PUSH(out, e->u.ref_new.value); break;
  case EXPR_REF_READ: VEC_PUSH(out, e->u.ref_read.ref); break;
  case EXPR_REF_WRITE:
    VEC_PUSH(out, e->u.ref_write.ref);
    VEC_PUSH(out, e->u.ref_write.value);
    break;
  default: break;  /* leaves of the dataflow graph */
  }
}

/* {==== ir_walk ====} */

bool ir_walk(Walker *w, Expr *root) {
  ExprVec stack = {0}, kids = {0};
  Kids k = {&kids, NULL};
  IdSet seen = {0};
  bool ok = true;
  if (root) VEC_PUSH(&stack, root);
  while (stack.len) {
    Expr *e = VEC_POP(&stack);
    if (!e || !idset_add(&seen, e->id)) continue;
    WalkResult r = w->visit(w, e);
    if (r == WALK_ABORT) {
      ok = false;
      break;
    }
    if (r == WALK_PRUNE) continue;
    kids.len = 0;
    children(&k, e, true);
    for (int i = kids.len; i-- > 0;) VEC_PUSH(&stack, kids.data[i]);
  }
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  free(seen.on);
  return ok;
}

/* {==== ir_rewrite ====} */

static Expr **copy_exprs(Module *m, Expr *const *src, int n) {
  return n ? arena_dup(m->arena, src, sizeof(Expr *) * (size_t)n) : NULL;
}

/* Rebuilds pattern p with its vars taken, in order, from k[*pos...]. Returns
** p itself when none of its vars changed. */
static Pattern *rebuild_pattern(Module *m, Pattern *p, Expr **k, int *pos) {
  if (!p) return NULL;
  Pattern **subs, **fresh = NULL;
  int n;
  switch (p->kind) {
  case PAT_WILDCARD: return p;
  case PAT_VAR: {
    Expr *v = k[(*pos)++];
    if (v == p->u.var.var) return p;
    Pattern *q = ir_pattern_new(m, PAT_VAR, p->span);
    q->u.var.var = v;
    return q;
  }
  case PAT_CTOR: subs = p->u.ctor.args, n = p->u.ctor.n; break;
  case PAT_TUPLE: subs = p->u.tuple.fields, n = p->u.tuple.n; break;
  default: RLY_UNREACHABLE();
  }
  for (int i = 0; i < n; i++) {
    Pattern *s = rebuild_pattern(m, subs[i], k, pos);
    if (s != subs[i] && !fresh) fresh = arena_dup(m->arena, subs, sizeof(Pattern *) * (size_t)n);
    if (fresh) fresh[i] = s;
  }
  if (!fresh) return p;
  Pattern *q = ir_pattern_new(m, p->kind, p->span);
  q->u = p->u;
  if (p->kind == PAT_CTOR) q->u.ctor.args = fresh;
  else q->u.tuple.fields = fresh;
  return q;
}

/* A copy of e (fresh id, same span, type NULL) whose children are k, in the
** order of children(e, with_attrs = false). */
static Expr *rebuild(Module *m, const Expr *e, Expr **k) {
  Expr *n = ir_expr_new(m, e->kind, e->span);
  n->u = e->u;
  switch (e->kind) {
  case EXPR_TUPLE: n->u.tuple.fields = copy_exprs(m, k, e->u.tuple.n); break;
  case EXPR_GET_ITEM: n->u.get_item.tuple = k[0]; break;
  case EXPR_CALL:
    n->u.call.callee = k[0];
    n->u.call.args = copy_exprs(m, k + 1, e->u.call.nargs);
    break;
  case EXPR_LET:
    n->u.let.var = k[0];
    n->u.let.value = k[1];
    n->u.let.body = k[2];
    break;
  case EXPR_IF:
    n->u.if_.cond = k[0];
    n->u.if_.then_ = k[1];
    n->u.if_.else_ = k[2];
    break;
  case EXPR_FUNC:
    n->u.func.params = copy_exprs(m, k, e->u.func.nparams);
    n->u.func.body = k[e->u.func.nparams];
    break;
  case EXPR_MATCH: {
    int pos = 1, nc = e->u.match.nclauses;
    n->u.match.scrut = k[0];
    n->u.match.clauses = nc ? ARENA_ARRAY(m->arena, Clause, nc) : NULL;
    for (int i = 0; i < nc; i++) {
      n->u.match.clauses[i].pat = rebuild_pattern(m, e->u.match.clauses[i].pat, k, &pos);
      n->u.match.clauses[i].body = k[pos++];
    }
    break;
  }
  case EXPR_REF_NEW: n->u.ref_new.value = k[0]; break;
  case EXPR_REF_READ: n->u.ref_read.ref = k[0]; break;
  case EXPR_REF_WRITE:
    n->u.ref_write.ref = k[0];
    n->u.ref_write.value = k[1];
    break;
  default: RLY_UNREACHABLE();  /* leaves have no children to change */
  }
  return n;
}

typedef struct Frame {
  Expr *e;
  bool children_done;
} Frame;

Expr *ir_rewrite(Rewriter *rw, Expr *root) {
  if (!root) return NULL;
  Memo memo = {0};
  Vec(Frame) stack = {0};
  ExprVec kids = {0};
  ByteVec binder = {0};
  Kids k = {&kids, &binder};
  Frame top = {root, false};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    Frame f = VEC_POP(&stack);
    Expr *e = f.e;
    if (!f.children_done) {
      if (memo_get(&memo, e->id)) continue;  /* reached before through another parent */
      if (rw->pre) {
        Expr *r = rw->pre(rw, e);
        if (r != e) {
          RLY_ASSERT(r != NULL);
          memo_set(&memo, e->id, r == REWRITE_SKIP ? e : r);
          continue;
        }
      }
      Frame self = {e, true};
      VEC_PUSH(&stack, self);
      kids.len = binder.len = 0;
      children(&k, e, false);
      for (int i = kids.len; i-- > 0;) {
        Expr *c = kids.data[i];
        if (c && !memo_get(&memo, c->id)) {
          Frame cf = {c, false};
          VEC_PUSH(&stack, cf);
        }
      }
      continue;
    }
    /* Every child has its replacement now (the DAG has no cycles, so each
    ** child was finished above this frame). */
    kids.len = binder.len = 0;
    children(&k, e, false);
    bool changed = false;
    for (int i = 0; i < kids.len; i++) {
      Expr *c = kids.data[i];
      if (!c) continue;
      Expr *r = memo_get(&memo, c->id);
      RLY_ASSERT(r != NULL);
      if (binder.data[i] && r->kind != EXPR_VAR) r = c;
      kids.data[i] = r;
      changed |= r != c;
    }
    Expr *out = changed ? rebuild(rw->m, e, kids.data) : e;
    if (rw->post) out = rw->post(rw, out);
    RLY_ASSERT(out != NULL);
    memo_set(&memo, e->id, out);
  }
  Expr *result = memo_get(&memo, root->id);
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  VEC_FREE(&binder);
  free(memo.to);
  return result;
}

/* {==== ir_postorder ====} */

void ir_postorder(Expr *root, ExprVec *out) {
  Vec(Frame) stack = {0};
  ExprVec kids = {0};
  IdSet seen = {0};
  if (root) {
    Frame top = {root, false};
    VEC_PUSH(&stack, top);
  }
  while (stack.len) {
    Frame f = VEC_POP(&stack);
    if (f.children_done) {
      VEC_PUSH(out, f.e);
      continue;
    }
    if (!idset_add(&seen, f.e->id)) continue;
    Frame self = {f.e, true};
    VEC_PUSH(&stack, self);
    kids.len = 0;
    dataflow_children(&kids, f.e);
    for (int i = kids.len; i-- > 0;) {
      Expr *c = kids.data[i];
      if (c && (c->id >= seen.cap || !seen.on[c->id])) {
        Frame cf = {c, false};
        VEC_PUSH(&stack, cf);
      }
    }
  }
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  free(seen.on);
}
