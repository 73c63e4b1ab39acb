/* pass.c: the pass registry (expanded from passes.def), the pipeline
** driver pass_run, type re-inference, and the helpers passes share
** (children in evaluation order, rebuilding a node, the full post-order).
** See pass.h for the contracts. */
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "types/infer.h"

const PassInfo pass_table[PASS_COUNT] = {
#define PASS(id, name, flags) {#id, name, flags, pass_##id},
#include "passes/passes.def"
#undef PASS
};

const PassInfo *pass_find(const char *name) {
  if (!name) return NULL;
  for (int i = 0; i < PASS_COUNT; i++)
    if (strcmp(pass_table[i].id, name) == 0 || strcmp(pass_table[i].name, name) == 0) return &pass_table[i];
  return NULL;
}

/* {==== Helpers ====} */

bool pass_is_atom(const Expr *e) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR: return true;
  default: return false;
  }
}

void pass_kids(const Expr *e, ExprVec *out) {
  switch (e->kind) {
  case EXPR_VAR:
  case EXPR_GLOBAL:
  case EXPR_CONST:
  case EXPR_OP:
  case EXPR_CTOR: break;
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
  case EXPR_IF:
    VEC_PUSH(out, e->u.if_.cond);
    VEC_PUSH(out, e->u.if_.then_);
    VEC_PUSH(out, e->u.if_.else_);
    break;
  case EXPR_FUNC: VEC_PUSH(out, e->u.func.body); break;
  case EXPR_MATCH:
    VEC_PUSH(out, e->u.match.scrut);
    for (int i = 0; i < e->u.match.nclauses; i++) VEC_PUSH(out, e->u.match.clauses[i].body);
    break;
  case EXPR_REF_NEW: VEC_PUSH(out, e->u.ref_new.value); break;
  case EXPR_REF_READ: VEC_PUSH(out, e->u.ref_read.ref); break;
  case EXPR_REF_WRITE:
    VEC_PUSH(out, e->u.ref_write.ref);
    VEC_PUSH(out, e->u.ref_write.value);
    break;
  case EXPR_KIND_COUNT: RLY_UNREACHABLE();
  }
}

static Expr **dup_exprs(Module *m, Expr *const *src, int n) {
  return n ? arena_dup(m->arena, src, sizeof(Expr *) * (size_t)n) : NULL;
}

Expr *pass_rebuild(Module *m, Expr *e, Expr *const *kids, bool force) {
  int nk;
  switch (e->kind) {
  case EXPR_TUPLE: nk = e->u.tuple.n; break;
  case EXPR_GET_ITEM:
  case EXPR_FUNC:
  case EXPR_REF_NEW:
  case EXPR_REF_READ: nk = 1; break;
  case EXPR_CALL: nk = 1 + e->u.call.nargs; break;
  case EXPR_LET:
  case EXPR_REF_WRITE: nk = 2; break;
  case EXPR_IF: nk = 3; break;
  case EXPR_MATCH: nk = 1 + e->u.match.nclauses; break;
  default: RLY_UNREACHABLE();
  }
  if (!force) {
    ExprVec old = {0};
    pass_kids(e, &old);
    bool same = old.len == nk;
    for (int i = 0; same && i < nk; i++) same = old.data[i] == kids[i];
    VEC_FREE(&old);
    if (same) return e;
  }
  Expr *n = ir_expr_new(m, e->kind, e->span);
  n->type = e->type;
  n->u = e->u;
  switch (e->kind) {
  case EXPR_TUPLE: n->u.tuple.fields = dup_exprs(m, kids, nk); break;
  case EXPR_GET_ITEM: n->u.get_item.tuple = kids[0]; break;
  case EXPR_CALL:
    n->u.call.callee = kids[0];
    n->u.call.args = dup_exprs(m, kids + 1, e->u.call.nargs);
    break;
  case EXPR_LET:
    n->u.let.value = kids[0];
    n->u.let.body = kids[1];
    break;
  case EXPR_IF:
    n->u.if_.cond = kids[0];
    n->u.if_.then_ = kids[1];
    n->u.if_.else_ = kids[2];
    break;
  case EXPR_FUNC: n->u.func.body = kids[0]; break;
  case EXPR_MATCH: {
    int nc = e->u.match.nclauses;
    n->u.match.scrut = kids[0];
    n->u.match.clauses = nc ? ARENA_ARRAY(m->arena, Clause, nc) : NULL;
    for (int i = 0; i < nc; i++) {
      n->u.match.clauses[i].pat = e->u.match.clauses[i].pat;
      n->u.match.clauses[i].body = kids[1 + i];
    }
    break;
  }
  case EXPR_REF_NEW: n->u.ref_new.value = kids[0]; break;
  case EXPR_REF_READ: n->u.ref_read.ref = kids[0]; break;
  case EXPR_REF_WRITE:
    n->u.ref_write.ref = kids[0];
    n->u.ref_write.value = kids[1];
    break;
  default: RLY_UNREACHABLE();
  }
  return n;
}

typedef struct PoFrame {
  Expr *e;
  bool done;  /* children pushed already: emit e */
} PoFrame;

void pass_postorder(Expr *root, ExprVec *out) {
  if (!root) return;
  Vec(PoFrame) stack = {0};
  ExprVec kids = {0};
  uint8_t *seen = NULL;
  size_t cap = 0;
  PoFrame top = {root, false};
  VEC_PUSH(&stack, top);
  while (stack.len) {
    PoFrame f = VEC_POP(&stack);
    if (f.done) {
      VEC_PUSH(out, f.e);
      continue;
    }
    uint32_t id = f.e->id;
    if (id >= cap) {
      size_t c = cap ? cap : 1024;
      while (c <= id) c *= 2;
      seen = rly_xrealloc(seen, c);
      memset(seen + cap, 0, c - cap);
      cap = c;
    }
    if (seen[id]) continue;
    seen[id] = 1;
    PoFrame self = {f.e, true};
    VEC_PUSH(&stack, self);
    kids.len = 0;
    pass_kids(f.e, &kids);
    for (int i = kids.len; i-- > 0;) {
      Expr *c = kids.data[i];
      if (c->id < cap && seen[c->id]) continue;
      PoFrame cf = {c, false};
      VEC_PUSH(&stack, cf);
    }
  }
  VEC_FREE(&stack);
  VEC_FREE(&kids);
  free(seen);
}

/* {==== Types ====} */

/* Calls f on every expression of m (pass_postorder of each root) and on
** every binder (let vars, params, pattern vars, free vars). Stops when f
** returns false; returns false then. */
typedef bool (*ExprVisit)(Expr *e);

static bool pattern_binders(const Pattern *p, ExprVisit f) {
  if (!p) return true;
  switch (p->kind) {
  case PAT_VAR: return f(p->u.var.var);
  case PAT_CTOR:
    for (int i = 0; i < p->u.ctor.n; i++)
      if (!pattern_binders(p->u.ctor.args[i], f)) return false;
    return true;
  case PAT_TUPLE:
    for (int i = 0; i < p->u.tuple.n; i++)
      if (!pattern_binders(p->u.tuple.fields[i], f)) return false;
    return true;
  default: return true;
  }
}

static bool visit_root(Expr *root, ExprVisit f) {
  ExprVec all = {0};
  pass_postorder(root, &all);
  bool ok = true;
  for (int i = 0; ok && i < all.len; i++) {
    Expr *e = all.data[i];
    ok = f(e);
    if (ok && e->kind == EXPR_LET) ok = f(e->u.let.var);
    if (ok && e->kind == EXPR_FUNC)
      for (int k = 0; ok && k < e->u.func.nparams; k++) ok = f(e->u.func.params[k]);
    if (ok && e->kind == EXPR_MATCH)
      for (int k = 0; ok && k < e->u.match.nclauses; k++) ok = pattern_binders(e->u.match.clauses[k].pat, f);
  }
  VEC_FREE(&all);
  return ok;
}

static bool visit_module(const Module *m, ExprVisit f) {
  for (int i = 0; i < m->ndefs; i++)
    if (!visit_root(m->defs[i]->func, f)) return false;
  for (int i = 0; i < m->nfree_vars; i++)
    if (!f(m->free_vars[i])) return false;
  return !m->expr || visit_root(m->expr, f);
}

static bool has_type(Expr *e) { return e->type != NULL; }

static bool clear_type(Expr *e) {
  e->type = NULL;
  return true;
}

bool pass_module_typed(const Module *m) { return visit_module(m, has_type); }

bool pass_retype(Module *m, Diag *d) {
  visit_module(m, clear_type);
  return ty_infer_module(m, d);
}

/* {==== The driver ====} */

/* Runs p on every root of m. A root where p reported an error keeps its
** old form; the others are still transformed, so that one run reports the
** errors of every definition. Returns false when p reported any. */
static bool run_one(Module *m, const PassInfo *p, Diag *d) {
  PassCtx ctx = {m, d, p, NULL};
  int start = diag_count(d);
  for (int i = 0; i < m->ndefs; i++) {
    int before = diag_count(d);
    ctx.def = m->defs[i];
    Expr *f = p->run(&ctx, m->defs[i]->func);
    if (diag_count(d) > before) continue;
    RLY_ASSERT(f && f->kind == EXPR_FUNC);
    m->defs[i]->func = f;
  }
  if (m->expr) {
    int before = diag_count(d);
    ctx.def = NULL;
    Expr *e = p->run(&ctx, m->expr);
    if (diag_count(d) == before) {
      RLY_ASSERT(e != NULL);
      m->expr = e;
    }
  }
  return diag_count(d) == start;
}

bool pass_run(Module *m, const char *const *names, int n, Diag *d) {
  Span nowhere = {0, 0, 0, 0};
  const PassInfo **passes = rly_xcalloc((size_t)(n > 0 ? n : 1), sizeof(PassInfo *));
  bool ok = true;
  for (int i = 0; i < n; i++) {
    passes[i] = pass_find(names[i]);
    if (!passes[i]) {
      StrBuf known = {0};
      for (int k = 0; k < PASS_COUNT; k++) sb_printf(&known, "%s%s", k ? ", " : "", pass_table[k].id);
      diag_error(d, nowhere, "unknown pass '%s' (known passes: %s)", names[i] ? names[i] : "", sb_str(&known));
      sb_free(&known);
      ok = false;
    }
  }
  bool was_typed = pass_module_typed(m), typed = was_typed;
  for (int i = 0; ok && i < n; i++) {
    const PassInfo *p = passes[i];
    if ((p->flags & PASS_NEEDS_TYPES) && !typed) {
      if (!pass_retype(m, d)) {
        ok = false;
        break;
      }
      typed = true;
    }
    if (!run_one(m, p, d)) {
      ok = false;
      break;
    }
    if (!(p->flags & PASS_KEEPS_TYPES)) typed = false;
#ifndef NDEBUG
    if (!ir_verify(m, d)) {
      diag_error(d, nowhere, "internal error: the IR is invalid after %s", p->name);
      ok = false;
      break;
    }
    if (typed && !pass_module_typed(m)) {
      diag_error(d, nowhere, "internal error: %s left an expression without a type", p->name);
      ok = false;
      break;
    }
#endif
  }
  if (ok && was_typed && !typed) ok = pass_retype(m, d);
  free(passes);
  return ok;
}
