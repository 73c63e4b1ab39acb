/* pass.c: the pass registry (expanded from passes.def), the pipeline
** driver pass_run and type re-inference. See pass.h for the contracts;
** traversals (children, rebuilding, post-orders) are ir/walk.h's. */
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

bool pass_is_atom(const Expr *e) { return ir_is_atom(e); }

void pass_kids(const Expr *e, ExprVec *out) { ir_kids(e, IR_KIDS_INNER, out); }

void pass_postorder(Expr *root, ExprVec *out) { ir_postorder(root, IR_KIDS_INNER, out); }

Expr *pass_rebuild(Module *m, Expr *e, Expr *const *kids, bool force) {
  if (!force) {
    ExprVec old = {0};
    ir_kids(e, IR_KIDS_INNER, &old);
    bool same = true;
    for (int i = 0; same && i < old.len; i++) same = old.data[i] == kids[i];
    VEC_FREE(&old);
    if (same) return e;
  }
  Expr *n = ir_rebuild(m, e, IR_KIDS_INNER, kids);
  n->type = e->type;
  return n;
}

/* {==== Types ====} */

/* Calls f on every expression of m and on every binder (let vars, params,
** pattern vars, free vars): the full post-order of each root, binders
** included. Stops when f returns false; returns false then. */
typedef bool (*ExprVisit)(Expr *e);

static bool visit_root(Expr *root, ExprVisit f) {
  ExprVec all = {0};
  ir_postorder(root, IR_KIDS_INNER | IR_KIDS_BINDERS, &all);
  bool ok = true;
  for (int i = 0; ok && i < all.len; i++) ok = f(all.data[i]);
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
  if (p->flags & PASS_MODULE) {
    p->run(&ctx, NULL);
    return diag_count(d) == start;
  }
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
      /* NULL: the pass made the expression a definition (to_main.c) */
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
