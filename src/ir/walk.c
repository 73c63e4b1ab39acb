/* walk.c: children, rebuilding, pattern binders, the pre-order walker, the
** memoized post-order rewriter and the post-order of walk.h.
**
** Input: an expression DAG (nodes may have several parents; no cycles).
** The shape of every node kind (which fields are children, in which order,
** in which scope, which are binders) is written once, in enumerate(); every
** traversal goes through it. Traversals keep an explicit stack on the heap
** and mark nodes in a table indexed by Expr.id that grows when a larger id
** shows up; both are freed before returning. Patterns and attribute values
** are walked recursively: their depth is that of the source text. */
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

static bool idset_has(const IdSet *s, uint32_t id) { return id < s->cap && s->on[id]; }

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

/* Where enumerate() puts the children it selects: plain nodes or IrKids. */
typedef struct Sink {
  unsigned flags;
  ExprVec *nodes;
  IrKidVec *info;
} Sink;

static void put(Sink *s, Expr *e, int slot, uint8_t role) {
  if (slot >= 0 && !(s->flags & IR_KIDS_INNER)) return;
  if (role == IR_KID_BINDER && !(s->flags & IR_KIDS_BINDERS)) return;
  if (role == IR_KID_ATTR && !(s->flags & IR_KIDS_ATTRS)) return;
  if (s->nodes) {
    VEC_PUSH(s->nodes, e);
  } else {
    IrKid k = {e, slot, role};
    VEC_PUSH(s->info, k);
  }
}

static void pattern_binders(Sink *s, const Pattern *p, int slot) {
  if (!p) return;
  switch (p->kind) {
  case PAT_WILDCARD: break;
  case PAT_VAR: put(s, p->u.var.var, slot, IR_KID_BINDER); break;
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++) pattern_binders(s, p->u.ctor.args[i], slot);
    break;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++) pattern_binders(s, p->u.tuple.fields[i], slot);
    break;
  case PAT_KIND_COUNT: RLY_UNREACHABLE();
  }
}

static void value_exprs(Sink *s, const AttrValue *v) {
  if (!v) return;
  if (v->kind == AV_EXPR) put(s, v->u.expr, -1, IR_KID_ATTR);
  else if (v->kind == AV_ARRAY)
    for (int i = 0; i < v->u.arr.n; i++) value_exprs(s, v->u.arr.items[i]);
}

static void attrs_exprs(Sink *s, const Attrs *a) {
  if (!a || !a->values || !(s->flags & IR_KIDS_ATTRS)) return;
  for (int i = 0; i < a->n; i++) value_exprs(s, a->values[i]);
}

/* The one description of every kind's children (walk.h's table). */
static void enumerate(Sink *s, const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR: break;
  case EXPR_TUPLE:
    for (int i = 0; i < e->u.tuple.n; i++) put(s, e->u.tuple.fields[i], -1, IR_KID_VALUE);
    break;
  case EXPR_GET_ITEM: put(s, e->u.get_item.tuple, -1, IR_KID_VALUE); break;
  case EXPR_CALL:
    put(s, e->u.call.callee, -1, IR_KID_VALUE);
    for (int i = 0; i < e->u.call.nargs; i++) put(s, e->u.call.args[i], -1, IR_KID_VALUE);
    attrs_exprs(s, e->u.call.attrs);
    break;
  case EXPR_LET:
    put(s, e->u.let.var, -1, IR_KID_BINDER);
    put(s, e->u.let.value, -1, IR_KID_VALUE);
    put(s, e->u.let.body, -1, IR_KID_VALUE);
    break;
  case EXPR_IF:
    put(s, e->u.if_.cond, -1, IR_KID_VALUE);
    put(s, e->u.if_.then_, 0, IR_KID_VALUE);
    put(s, e->u.if_.else_, 1, IR_KID_VALUE);
    break;
  case EXPR_FUNC:
    if ((s->flags & IR_KIDS_OPAQUE_PRIMITIVE) && ir_is_primitive(e)) break;
    for (int i = 0; i < e->u.func.nparams; i++) put(s, e->u.func.params[i], 0, IR_KID_BINDER);
    attrs_exprs(s, e->u.func.attrs);
    put(s, e->u.func.body, 0, IR_KID_VALUE);
    break;
  case EXPR_MATCH:
    put(s, e->u.match.scrut, -1, IR_KID_VALUE);
    for (int i = 0; i < e->u.match.nclauses; i++) {
      if ((s->flags & (IR_KIDS_INNER | IR_KIDS_BINDERS)) == (IR_KIDS_INNER | IR_KIDS_BINDERS))
        pattern_binders(s, e->u.match.clauses[i].pat, i);
      put(s, e->u.match.clauses[i].body, i, IR_KID_VALUE);
    }
    break;
  case EXPR_REF_NEW: put(s, e->u.ref_new.value, -1, IR_KID_VALUE); break;
  case EXPR_REF_READ: put(s, e->u.ref_read.ref, -1, IR_KID_VALUE); break;
  case EXPR_REF_WRITE:
    put(s, e->u.ref_write.ref, -1, IR_KID_VALUE);
    put(s, e->u.ref_write.value, -1, IR_KID_VALUE);
    break;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

void ir_kids(const Expr *e, unsigned flags, ExprVec *out) {
  Sink s = {flags, out, NULL};
  enumerate(&s, e);
}

void ir_kids_info(const Expr *e, unsigned flags, IrKidVec *out) {
  Sink s = {flags, NULL, out};
  enumerate(&s, e);
}

int ir_nscopes(const Expr *e) {
  switch (e->kind) {
  case EXPR_IF: return 2;
  case EXPR_FUNC: return 1;
  case EXPR_MATCH: return e->u.match.nclauses;
  default: return 0;
  }
}

bool ir_is_atom(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR: return true;
  default: return false;
  }
}

bool ir_is_primitive(const Expr *fn) {
  if (!fn || fn->kind != EXPR_FUNC) return false;
  const Attrs *a = fn->u.func.attrs;
  if (!a || a->cls) return false;
  for (int i = 0; i < a->n; i++)
    if (a->keys[i] && strcmp(a->keys[i]->text, "Primitive") == 0) return true;
  return false;
}

/* {==== Patterns ====} */

void ir_pattern_vars(const Pattern *p, ExprVec *out) {
  Sink s = {IR_KIDS_INNER | IR_KIDS_BINDERS, out, NULL};
  pattern_binders(&s, p, 0);
}

Pattern *ir_pattern_rebuild(Module *m, Pattern *p, Expr *const *vars, int *pos) {
  if (!p) return NULL;
  Pattern **subs, **fresh = NULL;
  int n;
  switch (p->kind) {
  case PAT_WILDCARD: return p;
  case PAT_VAR: {
    Expr *v = vars[(*pos)++];
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
    Pattern *s = ir_pattern_rebuild(m, subs[i], vars, pos);
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

/* {==== Rebuilding ====} */

static Expr **copy_exprs(Module *m, Expr *const *src, int n) {
  return n ? arena_dup(m->arena, src, sizeof(Expr *) * (size_t)n) : NULL;
}

Expr *ir_rebuild(Module *m, const Expr *e, unsigned flags, Expr *const *k) {
  RLY_ASSERT((flags & IR_KIDS_INNER) && !(flags & (IR_KIDS_ATTRS | IR_KIDS_OPAQUE_PRIMITIVE)));
  bool binders = (flags & IR_KIDS_BINDERS) != 0;
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
    if (binders) n->u.let.var = *k++;
    n->u.let.value = k[0];
    n->u.let.body = k[1];
    break;
  case EXPR_IF:
    n->u.if_.cond = k[0];
    n->u.if_.then_ = k[1];
    n->u.if_.else_ = k[2];
    break;
  case EXPR_FUNC:
    if (binders) {
      n->u.func.params = copy_exprs(m, k, e->u.func.nparams);
      k += e->u.func.nparams;
    }
    n->u.func.body = k[0];
    break;
  case EXPR_MATCH: {
    int pos = 1, nc = e->u.match.nclauses;
    n->u.match.scrut = k[0];
    n->u.match.clauses = nc ? ARENA_ARRAY(m->arena, Clause, nc) : NULL;
    for (int i = 0; i < nc; i++) {
      Pattern *p = e->u.match.clauses[i].pat;
      n->u.match.clauses[i].pat = binders ? ir_pattern_rebuild(m, p, k, &pos) : p;
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
  default: RLY_UNREACHABLE();  /* atoms have no children to change */
  }
  return n;
}

/* {==== ir_walk ====} */

bool ir_walk(Walker *w, Expr *root) {
  ExprVec stack = {0}, kids = {0};
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
    ir_kids(e, IR_KIDS_ALL, &kids);
    for (int i = kids.len; i-- > 0;) VEC_PUSH(&stack, kids.data[i]);
  }
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  free(seen.on);
  return ok;
}

/* {==== ir_rewrite ====} */

typedef struct Frame {
  Expr *e;
  bool children_done;
} Frame;

enum { REWRITE_KIDS = IR_KIDS_INNER | IR_KIDS_BINDERS };

Expr *ir_rewrite(Rewriter *rw, Expr *root) {
  if (!root) return NULL;
  Memo memo = {0};
  Vec(Frame) stack = {0};
  IrKidVec kids = {0};
  ExprVec fresh = {0};
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
      kids.len = 0;
      ir_kids_info(e, REWRITE_KIDS, &kids);
      for (int i = kids.len; i-- > 0;) {
        Expr *c = kids.data[i].e;
        if (c && !memo_get(&memo, c->id)) {
          Frame cf = {c, false};
          VEC_PUSH(&stack, cf);
        }
      }
      continue;
    }
    /* Every child has its replacement now (the DAG has no cycles, so each
    ** child was finished above this frame). */
    kids.len = fresh.len = 0;
    ir_kids_info(e, REWRITE_KIDS, &kids);
    bool changed = false;
    for (int i = 0; i < kids.len; i++) {
      Expr *c = kids.data[i].e, *r = c;
      if (c) {
        r = memo_get(&memo, c->id);
        RLY_ASSERT(r != NULL);
        if (kids.data[i].role == IR_KID_BINDER && r->kind != EXPR_VAR) r = c;
      }
      VEC_PUSH(&fresh, r);
      changed |= r != c;
    }
    Expr *out = changed ? ir_rebuild(rw->m, e, REWRITE_KIDS, fresh.data) : e;
    if (rw->post) out = rw->post(rw, out);
    RLY_ASSERT(out != NULL);
    memo_set(&memo, e->id, out);
  }
  Expr *result = memo_get(&memo, root->id);
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  VEC_FREE(&fresh);
  free(memo.to);
  return result;
}

/* {==== Post-order ====} */

/* ir_postorder from root, with seen shared by the caller's roots. */
static void postorder_from(Expr *root, unsigned flags, ExprVec *out, IdSet *seen, ExprVec *kids) {
  if (!root || idset_has(seen, root->id)) return;
  Vec(Frame) stack = {0};
  Frame top = {root, false};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    Frame f = VEC_POP(&stack);
    if (f.children_done) {
      VEC_PUSH(out, f.e);
      continue;
    }
    if (!idset_add(seen, f.e->id)) continue;
    Frame self = {f.e, true};
    VEC_PUSH(&stack, self);
    kids->len = 0;
    ir_kids(f.e, flags, kids);
    for (int i = kids->len; i-- > 0;) {
      Expr *c = kids->data[i];
      if (c && !idset_has(seen, c->id)) {
        Frame cf = {c, false};
        VEC_PUSH(&stack, cf);
      }
    }
  }
  VEC_FREE(&stack);
}

void ir_postorder_roots(Expr *const *roots, int nroots, unsigned flags, ExprVec *out) {
  IdSet seen = {0};
  ExprVec kids = {0};
  for (int i = 0; i < nroots; i++) postorder_from(roots[i], flags, out, &seen, &kids);
  VEC_FREE(&kids);
  free(seen.on);
}

void ir_postorder(Expr *root, unsigned flags, ExprVec *out) { ir_postorder_roots(&root, 1, flags, out); }
