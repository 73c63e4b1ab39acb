/* infer.c: whole-module type inference (see infer.h).
**
** Unification variables are TYPE_INCOMPLETE nodes; their bindings live in
** a substitution table indexed by the incomplete type's id (a side table,
** so types stay immutable). Expressions are visited one scope at a time in
** post-order (ir_postorder), so a 100,000-deep graph-binding chain or let
** chain does not recurse in C; nested scopes (function bodies, if branches,
** match clauses) recurse once per level of source nesting.
**
** Operator calls and projections of not-yet-known tuples become pending
** constraints, retried whenever progress is possible (after each strongly
** connected component of globals, and at the end).
**
** Requires: a parsed module (names resolved). Sets Expr.type on every
** expression it reaches (operators excepted) to a fully resolved type. */
#include "types/infer.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/vec.h"
#include "ir/walk.h"
#include "ops/rel.h"

typedef enum { PEND_REL, PEND_PROJ } PendKind;

typedef struct Pending {
  PendKind kind;
  Expr *e;       /* the call or the projection */
  Type *result;  /* the variable standing for its type */
  bool done;
} Pending;

typedef struct Infer {
  Module *m;
  Diag *d;
  Type **subst;          /* incomplete id -> binding (NULL: unbound) */
  uint32_t cap;
  Vec(Pending) pending;
  Type **sigs;           /* per def: its function type */
  int errors_at_start;
} Infer;

/* {==== Types: fresh variables, resolution, printing ====} */

static void ensure_subst(Infer *I, uint32_t id) {
  if (id < I->cap) return;
  uint32_t cap = I->cap ? I->cap : 256;
  while (cap <= id) cap *= 2;
  I->subst = rly_xrealloc(I->subst, sizeof(Type *) * cap);
  memset(I->subst + I->cap, 0, sizeof(Type *) * (cap - I->cap));
  I->cap = cap;
}

static Type *fresh(Infer *I, Span sp) {
  Type *t = ir_incomplete_type(I->m, sp);
  ensure_subst(I, t->u.incomplete.id);
  return t;
}

static Type *resolve(Infer *I, Type *t) {
  while (t && t->kind == TYPE_INCOMPLETE && t->u.incomplete.id < I->cap && I->subst[t->u.incomplete.id])
    t = I->subst[t->u.incomplete.id];
  return t;
}

static Type *func_type(Infer *I, Span sp, Type **params, int n, Type *ret, Type **tparams, int ntparams) {
  Type *f = ir_type_new(I->m, TYPE_FUNC, sp);
  f->u.func.params = params;
  f->u.func.nparams = n;
  f->u.func.ret = ret;
  f->u.func.tparams = tparams;
  f->u.func.ntparams = ntparams;
  return f;
}

static Type *tuple_type(Infer *I, Span sp, Type **fields, int n) {
  Type *t = ir_type_new(I->m, TYPE_TUPLE, sp);
  t->u.tuple.fields = fields;
  t->u.tuple.n = n;
  return t;
}

static Type *bool_type(Infer *I, Span sp) { return ir_tensor_type(I->m, sp, DTYPE(DT_UINT, 1), 0, NULL); }

/* The type with every bound variable replaced by its binding (shares what
** does not change). */
static Type *zonk(Infer *I, Type *t) {
  t = resolve(I, t);
  if (!t) return t;
  switch (t->kind) {
  case TYPE_TUPLE: {
    Type **fs = NULL;
    for (int i = 0; i < t->u.tuple.n; i++) {
      Type *z = zonk(I, t->u.tuple.fields[i]);
      if (z != t->u.tuple.fields[i] && !fs) {
        fs = ARENA_ARRAY(I->m->arena, Type *, t->u.tuple.n);
        memcpy(fs, t->u.tuple.fields, sizeof(Type *) * (size_t)t->u.tuple.n);
      }
      if (fs) fs[i] = z;
    }
    return fs ? tuple_type(I, t->span, fs, t->u.tuple.n) : t;
  }
  case TYPE_FUNC: {
    bool changed = false;
    Type **ps = ARENA_ARRAY(I->m->arena, Type *, t->u.func.nparams);
    for (int i = 0; i < t->u.func.nparams; i++) {
      ps[i] = zonk(I, t->u.func.params[i]);
      changed |= ps[i] != t->u.func.params[i];
    }
    Type *r = zonk(I, t->u.func.ret);
    changed |= r != t->u.func.ret;
    return changed ? func_type(I, t->span, ps, t->u.func.nparams, r, t->u.func.tparams, t->u.func.ntparams) : t;
  }
  case TYPE_CALL: {
    bool changed = false;
    Type **as = ARENA_ARRAY(I->m->arena, Type *, t->u.call.nargs);
    for (int i = 0; i < t->u.call.nargs; i++) {
      as[i] = zonk(I, t->u.call.args[i]);
      changed |= as[i] != t->u.call.args[i];
    }
    if (!changed) return t;
    Type *c = ir_type_new(I->m, TYPE_CALL, t->span);
    c->u.call = t->u.call;
    c->u.call.args = as;
    return c;
  }
  case TYPE_REF: {
    Type *e = zonk(I, t->u.ref.elem);
    if (e == t->u.ref.elem) return t;
    Type *r = ir_type_new(I->m, TYPE_REF, t->span);
    r->u.ref.elem = e;
    return r;
  }
  default: return t;
  }
}

static bool has_incomplete(Infer *I, Type *t) {
  t = resolve(I, t);
  if (!t) return true;
  switch (t->kind) {
  case TYPE_INCOMPLETE: return true;
  case TYPE_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      if (has_incomplete(I, t->u.tuple.fields[i])) return true;
    return false;
  case TYPE_FUNC:
    for (int i = 0; i < t->u.func.nparams; i++)
      if (has_incomplete(I, t->u.func.params[i])) return true;
    return has_incomplete(I, t->u.func.ret);
  case TYPE_CALL:
    for (int i = 0; i < t->u.call.nargs; i++)
      if (has_incomplete(I, t->u.call.args[i])) return true;
    return false;
  case TYPE_REF: return has_incomplete(I, t->u.ref.elem);
  default: return false;
  }
}

/* Printed type for messages; the StrBuf is the caller's. */
static const char *show(Infer *I, StrBuf *sb, Type *t) {
  sb_clear(sb);
  Type *z = zonk(I, t);
  if (!z) sb_puts(sb, "_");
  else ir_print_type(sb, z);
  return sb_str(sb);
}

/* Reports "WHAT: expected A, found B". */
static void mismatch(Infer *I, Span at, const char *what, Type *expected, Type *found) {
  StrBuf a = {0}, b = {0};
  diag_error(I->d, at, "%s: expected %s, found %s", what, show(I, &a, expected), show(I, &b, found));
  sb_free(&a);
  sb_free(&b);
}

/* {==== Unification ====} */

static bool occurs(Infer *I, uint32_t id, Type *t) {
  t = resolve(I, t);
  if (!t) return false;
  switch (t->kind) {
  case TYPE_INCOMPLETE: return t->u.incomplete.id == id;
  case TYPE_TUPLE:
    for (int i = 0; i < t->u.tuple.n; i++)
      if (occurs(I, id, t->u.tuple.fields[i])) return true;
    return false;
  case TYPE_FUNC:
    for (int i = 0; i < t->u.func.nparams; i++)
      if (occurs(I, id, t->u.func.params[i])) return true;
    return occurs(I, id, t->u.func.ret);
  case TYPE_CALL:
    for (int i = 0; i < t->u.call.nargs; i++)
      if (occurs(I, id, t->u.call.args[i])) return true;
    return false;
  case TYPE_REF: return occurs(I, id, t->u.ref.elem);
  default: return false;
  }
}

/* Unifies a and b; returns the unified type, or NULL when they cannot be
** made equal (the caller reports, with context). */
static Type *unify(Infer *I, Type *a, Type *b) {
  a = resolve(I, a);
  b = resolve(I, b);
  if (a == b) return a;
  if (!a || !b) return NULL;
  if (a->kind == TYPE_INCOMPLETE || b->kind == TYPE_INCOMPLETE) {
    Type *v = a->kind == TYPE_INCOMPLETE ? a : b, *t = v == a ? b : a;
    if (occurs(I, v->u.incomplete.id, t)) return NULL;
    ensure_subst(I, v->u.incomplete.id);
    I->subst[v->u.incomplete.id] = t;
    return t;
  }
  if (a->kind != b->kind) return NULL;
  switch (a->kind) {
  case TYPE_TENSOR: {
    if (!dtype_eq(a->u.tensor.dtype, b->u.tensor.dtype) || a->u.tensor.ndim != b->u.tensor.ndim) return NULL;
    bool take_b = false;
    for (int i = 0; i < a->u.tensor.ndim; i++) {
      int64_t x = a->u.tensor.shape[i], y = b->u.tensor.shape[i];
      if (x == y) continue;
      if (x != RLY_DIM_ANY && y != RLY_DIM_ANY) return NULL;
      if (x == RLY_DIM_ANY) take_b = true;
    }
    if (!take_b) return a;
    /* The most specific shape: concrete dims win over `?`. */
    Type *t = ir_tensor_type(I->m, a->span, a->u.tensor.dtype, a->u.tensor.ndim, a->u.tensor.shape);
    for (int i = 0; i < t->u.tensor.ndim; i++)
      if (t->u.tensor.shape[i] == RLY_DIM_ANY) t->u.tensor.shape[i] = b->u.tensor.shape[i];
    return t;
  }
  case TYPE_TUPLE:
    if (a->u.tuple.n != b->u.tuple.n) return NULL;
    for (int i = 0; i < a->u.tuple.n; i++)
      if (!unify(I, a->u.tuple.fields[i], b->u.tuple.fields[i])) return NULL;
    return a;
  case TYPE_FUNC:
    if (a->u.func.nparams != b->u.func.nparams) return NULL;
    for (int i = 0; i < a->u.func.nparams; i++)
      if (!unify(I, a->u.func.params[i], b->u.func.params[i])) return NULL;
    if (!unify(I, a->u.func.ret, b->u.func.ret)) return NULL;
    return a;
  case TYPE_VAR:
    return NULL; /* rigid: only equal to itself (a != b here) */
  case TYPE_CALL:
    if (a->u.call.name != b->u.call.name) return NULL;
    /* An ADT written without its type arguments (`List`) matches any. */
    if (a->u.call.nargs == 0 && b->u.call.nargs) return b;
    if (b->u.call.nargs == 0) return a;
    if (a->u.call.nargs != b->u.call.nargs) return NULL;
    for (int i = 0; i < a->u.call.nargs; i++)
      if (!unify(I, a->u.call.args[i], b->u.call.args[i])) return NULL;
    return a;
  case TYPE_REF:
    return unify(I, a->u.ref.elem, b->u.ref.elem) ? a : NULL;
  default:
    return NULL;
  }
}

/* Unifies, or reports "WHAT: expected A, found B" at `at`. Returns the
** unified type (or expected, after an error, to go on). */
static Type *expect_type(Infer *I, Span at, const char *what, Type *expected, Type *found) {
  Type *u = unify(I, expected, found);
  if (!u) {
    mismatch(I, at, what, expected, found);
    return expected;
  }
  return u;
}

/* {==== Instantiation ====} */

typedef struct TSubst {
  Type **from, **to;
  int n;
} TSubst;

static Type *subst_tvars(Infer *I, Type *t, const TSubst *s) {
  t = resolve(I, t);
  if (!t) return t;
  switch (t->kind) {
  case TYPE_VAR:
    for (int i = 0; i < s->n; i++)
      if (s->from[i] == t) return s->to[i];
    return t;
  case TYPE_TUPLE: {
    Type **fs = ARENA_ARRAY(I->m->arena, Type *, t->u.tuple.n);
    for (int i = 0; i < t->u.tuple.n; i++) fs[i] = subst_tvars(I, t->u.tuple.fields[i], s);
    return tuple_type(I, t->span, fs, t->u.tuple.n);
  }
  case TYPE_FUNC: {
    Type **ps = ARENA_ARRAY(I->m->arena, Type *, t->u.func.nparams);
    for (int i = 0; i < t->u.func.nparams; i++) ps[i] = subst_tvars(I, t->u.func.params[i], s);
    return func_type(I, t->span, ps, t->u.func.nparams, subst_tvars(I, t->u.func.ret, s), t->u.func.tparams,
                     t->u.func.ntparams);
  }
  case TYPE_CALL: {
    Type *c = ir_type_new(I->m, TYPE_CALL, t->span);
    c->u.call = t->u.call;
    c->u.call.args = ARENA_ARRAY(I->m->arena, Type *, t->u.call.nargs);
    for (int i = 0; i < t->u.call.nargs; i++) c->u.call.args[i] = subst_tvars(I, t->u.call.args[i], s);
    return c;
  }
  case TYPE_REF: {
    Type *r = ir_type_new(I->m, TYPE_REF, t->span);
    r->u.ref.elem = subst_tvars(I, t->u.ref.elem, s);
    return r;
  }
  default: return t;
  }
}

/* A polymorphic function type with its type parameters replaced by fresh
** variables (the result has no type parameters). */
static Type *instantiate(Infer *I, Type *fn, Span at) {
  fn = resolve(I, fn);
  if (!fn || fn->kind != TYPE_FUNC || fn->u.func.ntparams == 0) return fn;
  TSubst s = {fn->u.func.tparams, ARENA_ARRAY(I->m->arena, Type *, fn->u.func.ntparams), fn->u.func.ntparams};
  for (int i = 0; i < s.n; i++) s.to[i] = fresh(I, at);
  Type *r = subst_tvars(I, fn, &s);
  r->u.func.tparams = NULL;
  r->u.func.ntparams = 0;
  return r;
}

/* The ADT type T[args] of a constructor's type definition. */
static Type *adt_type(Infer *I, TypeDef *adt, Type **args, Span sp) {
  Type *t = ir_type_new(I->m, TYPE_CALL, sp);
  t->u.call.name = adt->name;
  t->u.call.adt = adt;
  t->u.call.args = args;
  t->u.call.nargs = adt->ntparams;
  return t;
}

/* A constructor's type instantiated: fn(fields) -> T[fresh...]. */
static Type *ctor_type(Infer *I, Ctor *c, Span at) {
  TypeDef *adt = c->adt;
  TSubst s = {adt->tparams, ARENA_ARRAY(I->m->arena, Type *, adt->ntparams), adt->ntparams};
  for (int i = 0; i < s.n; i++) s.to[i] = fresh(I, at);
  Type **fields = ARENA_ARRAY(I->m->arena, Type *, c->nfields);
  for (int i = 0; i < c->nfields; i++) fields[i] = subst_tvars(I, c->fields[i], &s);
  return func_type(I, at, fields, c->nfields, adt_type(I, adt, s.to, at), NULL, 0);
}

/* {==== Pending constraints ====} */

static bool try_pending(Infer *I, Pending *p) {
  Expr *e = p->e;
  if (p->kind == PEND_PROJ) {
    Type *t = resolve(I, e->u.get_item.tuple->type);
    if (!t || t->kind == TYPE_INCOMPLETE) return false;
    int idx = e->u.get_item.index;
    if (t->kind != TYPE_TUPLE) {
      StrBuf sb = {0};
      diag_error(I->d, e->span, "projection .%d of a value of type %s, which is not a tuple", idx, show(I, &sb, t));
      sb_free(&sb);
    } else if (idx >= t->u.tuple.n) {
      StrBuf sb = {0};
      diag_error(I->d, e->span, "projection .%d out of range for a tuple of %d field%s: %s", idx, t->u.tuple.n,
                 t->u.tuple.n == 1 ? "" : "s", show(I, &sb, t));
      sb_free(&sb);
    } else {
      unify(I, p->result, t->u.tuple.fields[idx]);
    }
    return true;
  }
  /* An operator call. */
  const OpDef *op = e->u.call.callee->u.op.op;
  int n = e->u.call.nargs;
  Type *argv[64];
  Type **args = n <= 64 ? argv : rly_xmalloc(sizeof(Type *) * (size_t)n);
  for (int i = 0; i < n; i++) args[i] = zonk(I, e->u.call.args[i]->type);
  RelCtx rc = {I->m, I->d, e->span, op};
  Type *out = NULL;
  RelResult r;
  if (op->nargs >= 0 && n != op->nargs) {
    r = REL_ERROR; /* the parser reported the arity */
  } else {
    TypeRel rel = op_type_rel(op);
    RLY_ASSERT(rel); /* every op of the table has one (checked by test_rel) */
    r = rel(&rc, args, n, e->u.call.attrs, &out);
  }
  if (args != argv) free(args);
  if (r == REL_DEFER) return false;
  if (r == REL_OK) {
    if (!unify(I, p->result, out)) mismatch(I, e->span, op->name, p->result, out);
    /* The operator node's own type: the function type of this use. */
    Type **ps = ARENA_ARRAY(I->m->arena, Type *, n);
    for (int i = 0; i < n; i++) ps[i] = e->u.call.args[i]->type;
    unify(I, e->u.call.callee->type, func_type(I, e->span, ps, n, p->result, NULL, 0));
  }
  return true;
}

/* Retries pending constraints until none makes progress. */
static void solve(Infer *I) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (int i = 0; i < I->pending.len; i++) {
      Pending *p = &I->pending.data[i];
      if (p->done) continue;
      if (try_pending(I, p)) {
        p->done = true;
        progress = true;
      }
    }
    /* Compact. */
    int k = 0;
    for (int i = 0; i < I->pending.len; i++)
      if (!I->pending.data[i].done) I->pending.data[k++] = I->pending.data[i];
    I->pending.len = k;
  }
}

static void add_pending(Infer *I, PendKind kind, Expr *e, Type *result) {
  Pending p = {kind, e, result, false};
  if (try_pending(I, &p)) return;
  VEC_PUSH(&I->pending, p);
}

/* {==== Patterns and exhaustiveness ====} */

static void check_pattern(Infer *I, Pattern *p, Type *t) {
  switch (p->kind) {
  case PAT_WILDCARD: break;
  case PAT_VAR: {
    Expr *v = p->u.var.var;
    if (v->u.var.annot) {
      v->type = expect_type(I, p->span, "pattern variable annotation", v->u.var.annot, t);
    } else {
      v->type = t;
    }
    break;
  }
  case PAT_CTOR: {
    Ctor *c = p->u.ctor.ctor;
    Type *ct = ctor_type(I, c, p->span);
    if (!unify(I, ct->u.func.ret, t)) {
      StrBuf a = {0}, b = {0};
      diag_error(I->d, p->span, "pattern %s (of type %s) does not match the scrutinee's type %s", c->name->text,
                 show(I, &a, ct->u.func.ret), show(I, &b, t));
      sb_free(&a);
      sb_free(&b);
      break;
    }
    int n = p->u.ctor.n < c->nfields ? p->u.ctor.n : c->nfields;
    for (int i = 0; i < n; i++) check_pattern(I, p->u.ctor.args[i], ct->u.func.params[i]);
    break;
  }
  case PAT_TUPLE: {
    int n = p->u.tuple.n;
    Type *r = resolve(I, t);
    if (r && r->kind == TYPE_INCOMPLETE) {
      Type **fs = ARENA_ARRAY(I->m->arena, Type *, n);
      for (int i = 0; i < n; i++) fs[i] = fresh(I, p->span);
      unify(I, r, tuple_type(I, p->span, fs, n));
      r = resolve(I, r);
    }
    if (!r || r->kind != TYPE_TUPLE || r->u.tuple.n != n) {
      StrBuf a = {0};
      diag_error(I->d, p->span, "tuple pattern with %d field%s does not match the scrutinee's type %s", n,
                 n == 1 ? "" : "s", show(I, &a, t));
      sb_free(&a);
      break;
    }
    for (int i = 0; i < n; i++) check_pattern(I, p->u.tuple.fields[i], r->u.tuple.fields[i]);
    break;
  }
  default: RLY_UNREACHABLE();
  }
}

/* A row of patterns (NULL = a wildcard made up by specialisation). */
typedef struct Row {
  Pattern **cols;
} Row;

static bool is_wild(const Pattern *p) { return !p || p->kind == PAT_WILDCARD || p->kind == PAT_VAR; }

/* Is some value matched by no row? (Maranget's usefulness of the all-
** wildcards vector.) If so, wit[0..ncols) receive a witness, one text per
** column (heap strings, caller frees). */
static bool uncovered(Row *rows, int nrows, int ncols, char **wit) {
  if (ncols == 0) return nrows == 0;
  /* What the first column shows: an ADT's constructors or a tuple. */
  TypeDef *adt = NULL;
  int tuple_n = -1;
  for (int r = 0; r < nrows; r++) {
    Pattern *h = rows[r].cols[0];
    if (h && h->kind == PAT_CTOR) adt = h->u.ctor.ctor->adt;
    if (h && h->kind == PAT_TUPLE) tuple_n = h->u.tuple.n;
  }
  int nheads = adt ? adt->nctors : tuple_n >= 0 ? 1 : 0;
  bool *present = rly_xcalloc((size_t)(nheads ? nheads : 1), 1);
  int npresent = 0;
  for (int r = 0; r < nrows && adt; r++) {
    Pattern *h = rows[r].cols[0];
    if (h && h->kind == PAT_CTOR && !present[h->u.ctor.ctor->tag]) {
      present[h->u.ctor.ctor->tag] = true;
      npresent++;
    }
  }
  if (tuple_n >= 0) npresent = 1, present[0] = true;
  bool complete = nheads > 0 && npresent == nheads;
  bool found = false;
  if (complete) {
    for (int k = 0; k < nheads && !found; k++) {
      int nf = adt ? adt->ctors[k]->nfields : tuple_n;
      int nc = nf + ncols - 1;
      Row *spec = rly_xmalloc(sizeof(Row) * (size_t)(nrows ? nrows : 1));
      Pattern **cells = rly_xcalloc((size_t)(nrows ? nrows : 1) * (size_t)(nc ? nc : 1), sizeof(Pattern *));
      int ns = 0;
      for (int r = 0; r < nrows; r++) {
        Pattern *h = rows[r].cols[0];
        Pattern **row = cells + (size_t)ns * (size_t)(nc ? nc : 1);
        if (is_wild(h)) {
          for (int i = 0; i < nf; i++) row[i] = NULL;
        } else if (adt && h->kind == PAT_CTOR && h->u.ctor.ctor->tag == k) {
          for (int i = 0; i < nf; i++) row[i] = i < h->u.ctor.n ? h->u.ctor.args[i] : NULL;
        } else if (!adt && h->kind == PAT_TUPLE && h->u.tuple.n == nf) {
          for (int i = 0; i < nf; i++) row[i] = h->u.tuple.fields[i];
        } else {
          continue;
        }
        for (int i = 1; i < ncols; i++) row[nf + i - 1] = rows[r].cols[i];
        spec[ns++].cols = row;
      }
      char **sub = rly_xcalloc((size_t)(nc ? nc : 1), sizeof(char *));
      if (uncovered(spec, ns, nc, sub)) {
        found = true;
        StrBuf sb = {0};
        if (adt) sb_puts(&sb, adt->ctors[k]->name->text);
        if (!adt || nf) {
          sb_putc(&sb, '(');
          for (int i = 0; i < nf; i++) sb_printf(&sb, "%s%s", i ? ", " : "", sub[i] ? sub[i] : "_");
          if (!adt && nf == 1) sb_putc(&sb, ',');
          sb_putc(&sb, ')');
        }
        wit[0] = sb.data ? sb.data : strdup("");
        for (int i = 1; i < ncols; i++) {
          wit[i] = sub[nf + i - 1];
          sub[nf + i - 1] = NULL;
        }
      }
      for (int i = 0; i < nc; i++) free(sub[i]);
      free(sub);
      free(cells);
      free(spec);
    }
  } else {
    /* Default matrix: the rows whose head is a wildcard. */
    Row *def = rly_xmalloc(sizeof(Row) * (size_t)(nrows ? nrows : 1));
    int nd = 0;
    for (int r = 0; r < nrows; r++)
      if (is_wild(rows[r].cols[0])) def[nd++].cols = rows[r].cols + 1;
    char **sub = rly_xcalloc((size_t)ncols, sizeof(char *));
    if (uncovered(def, nd, ncols - 1, sub + 1)) {
      found = true;
      if (adt) {
        int k = 0;
        while (k < nheads && present[k]) k++;
        Ctor *c = adt->ctors[k];
        StrBuf sb = {0};
        sb_puts(&sb, c->name->text);
        if (c->nfields) {
          sb_putc(&sb, '(');
          for (int i = 0; i < c->nfields; i++) sb_puts(&sb, i ? ", _" : "_");
          sb_putc(&sb, ')');
        }
        wit[0] = sb.data;
      } else {
        wit[0] = strdup("_");
      }
      for (int i = 1; i < ncols; i++) wit[i] = sub[i];
    } else {
      for (int i = 1; i < ncols; i++) free(sub[i]);
    }
    free(sub);
    free(def);
  }
  free(present);
  return found;
}

static void check_exhaustive(Infer *I, Expr *e) {
  int n = e->u.match.nclauses;
  Row *rows = rly_xmalloc(sizeof(Row) * (size_t)(n ? n : 1));
  for (int i = 0; i < n; i++) rows[i].cols = &e->u.match.clauses[i].pat;
  char *wit = NULL;
  if (uncovered(rows, n, 1, &wit))
    diag_error(I->d, e->span, "match is not exhaustive: no clause matches %s (use match? for a partial match)",
               wit ? wit : "_");
  free(wit);
  free(rows);
}

/* {==== Expressions ====} */

static void infer_scope(Infer *I, Expr *root);

/* Where to report about child: a variable node carries its declaration's
** span, so its use is reported at the parent. */
static Span use_span(const Expr *child, const Expr *parent) {
  return child->kind == EXPR_VAR || !child->span.line ? parent->span : child->span;
}

static Type *const_type(Infer *I, Expr *e) {
  ConstData *c = e->u.constant.value;
  if (!c) return fresh(I, e->span);
  return ir_tensor_type(I->m, e->span, c->dtype, c->ndim, c->shape);
}

static int def_index(Infer *I, GlobalDef *g) {
  for (int i = 0; i < I->m->ndefs; i++)
    if (I->m->defs[i] == g) return i;
  return -1;
}

static void infer_call(Infer *I, Expr *e) {
  Expr *callee = e->u.call.callee;
  int n = e->u.call.nargs;
  if (callee->kind == EXPR_OP) {
    e->type = fresh(I, e->span);
    add_pending(I, PEND_REL, e, e->type);
    return;
  }
  Type *ft;
  const char *what;
  char name[300];
  if (callee->kind == EXPR_CTOR) {
    ft = resolve(I, callee->type);
    snprintf(name, sizeof name, "constructor %s", callee->u.ctor.ctor->name->text);
    what = name;
  } else {
    ft = resolve(I, callee->type);
    if (callee->kind == EXPR_GLOBAL) snprintf(name, sizeof name, "@%s", callee->u.global.name->text);
    else if (callee->kind == EXPR_VAR && callee->u.var.name) snprintf(name, sizeof name, "%%%s", callee->u.var.name->text);
    else snprintf(name, sizeof name, "the function");
    what = name;
  }
  if (ft && ft->kind == TYPE_INCOMPLETE) {
    /* Calling something not known yet: it is a function of these args. */
    Type **ps = ARENA_ARRAY(I->m->arena, Type *, n);
    for (int i = 0; i < n; i++) ps[i] = e->u.call.args[i]->type;
    Type *ret = fresh(I, e->span);
    unify(I, ft, func_type(I, e->span, ps, n, ret, NULL, 0));
    e->type = ret;
    return;
  }
  if (!ft || ft->kind != TYPE_FUNC) {
    StrBuf sb = {0};
    diag_error(I->d, e->span, "%s is not a function: it has type %s", what, show(I, &sb, ft));
    sb_free(&sb);
    e->type = fresh(I, e->span);
    return;
  }
  ft = instantiate(I, ft, e->span);
  if (ft->u.func.nparams != n) {
    diag_error(I->d, e->span, "%s expects %d argument%s, found %d", what, ft->u.func.nparams,
               ft->u.func.nparams == 1 ? "" : "s", n);
    e->type = ft->u.func.ret;
    return;
  }
  for (int i = 0; i < n; i++) {
    Expr *a = e->u.call.args[i];
    if (!unify(I, ft->u.func.params[i], a->type)) {
      char ctx[400];
      snprintf(ctx, sizeof ctx, "argument %d of %s", i + 1, what);
      mismatch(I, use_span(a, e), ctx, ft->u.func.params[i], a->type);
    }
  }
  e->type = ft->u.func.ret;
}

static void infer_func(Infer *I, Expr *e) {
  int n = e->u.func.nparams;
  Type **ps = ARENA_ARRAY(I->m->arena, Type *, n);
  for (int i = 0; i < n; i++) {
    Expr *p = e->u.func.params[i];
    if (!p->type) p->type = p->u.var.annot ? p->u.var.annot : fresh(I, p->span);
    ps[i] = p->type;
  }
  infer_scope(I, e->u.func.body);
  Type *ret = e->u.func.body->type;
  if (e->u.func.ret) {
    Span at = e->u.func.body->kind == EXPR_VAR ? e->u.func.ret->span : e->u.func.body->span;
    ret = expect_type(I, at, "function body", e->u.func.ret, ret);
  }
  e->type = func_type(I, e->span, ps, n, ret, e->u.func.tparams, e->u.func.ntparams);
}

static void infer_match(Infer *I, Expr *e) {
  Type *st = e->u.match.scrut->type;
  Type *result = NULL;
  int errors = diag_count(I->d);
  for (int i = 0; i < e->u.match.nclauses; i++) {
    Clause *c = &e->u.match.clauses[i];
    check_pattern(I, c->pat, st);
    infer_scope(I, c->body);
    if (!result) result = c->body->type;
    else result = expect_type(I, use_span(c->body, e), "match clauses disagree", result, c->body->type);
  }
  e->type = result ? result : fresh(I, e->span);
  if (e->u.match.complete && diag_count(I->d) == errors) check_exhaustive(I, e);
}

/* Unifies a let's variable with its value (once per let). */
static void bind_let_var(Infer *I, Expr *let) {
  Expr *v = let->u.let.var, *value = let->u.let.value;
  if (v->type && value->type && resolve(I, v->type) == resolve(I, value->type)) return;
  if (!v->type) v->type = v->u.var.annot ? v->u.var.annot : value->type;
  if (!value->type) return;
  char what[300];
  if (v->u.var.name) snprintf(what, sizeof what, "let %%%s", v->u.var.name->text);
  else snprintf(what, sizeof what, "sequenced expression");
  if (!unify(I, v->type, value->type)) {
    mismatch(I, value->kind == EXPR_VAR ? let->span : value->span, what, v->type, value->type);
    value->type = v->type; /* report once */
  }
}

static int cmp_let_value(const void *a, const void *b) {
  uint32_t x = (*(Expr *const *)a)->u.let.value->id, y = (*(Expr *const *)b)->u.let.value->id;
  return x < y ? -1 : x > y;
}

static void infer_node(Infer *I, Expr *e) {
  if (e->type) return;
  switch (e->kind) {
  case EXPR_VAR: e->type = e->u.var.annot ? e->u.var.annot : fresh(I, e->span); break;
  case EXPR_GLOBAL: {
    int k = e->u.global.def ? def_index(I, e->u.global.def) : -1;
    e->type = k >= 0 ? instantiate(I, I->sigs[k], e->span) : fresh(I, e->span);
    break;
  }
  case EXPR_CONST: e->type = const_type(I, e); break;
  case EXPR_TUPLE: {
    int n = e->u.tuple.n;
    Type **fs = ARENA_ARRAY(I->m->arena, Type *, n);
    for (int i = 0; i < n; i++) fs[i] = e->u.tuple.fields[i]->type;
    e->type = tuple_type(I, e->span, fs, n);
    break;
  }
  case EXPR_GET_ITEM:
    e->type = fresh(I, e->span);
    add_pending(I, PEND_PROJ, e, e->type);
    break;
  case EXPR_CALL: infer_call(I, e); break;
  case EXPR_LET:
    bind_let_var(I, e);
    e->type = e->u.let.body->type;
    break;
  case EXPR_IF: {
    Expr *c = e->u.if_.cond;
    if (!unify(I, bool_type(I, c->span), c->type)) {
      StrBuf sb = {0};
      diag_error(I->d, use_span(c, e), "if condition must be a bool scalar (bool), found %s", show(I, &sb, c->type));
      sb_free(&sb);
    }
    infer_scope(I, e->u.if_.then_);
    infer_scope(I, e->u.if_.else_);
    Type *t = unify(I, e->u.if_.then_->type, e->u.if_.else_->type);
    if (!t) {
      StrBuf a = {0}, b = {0};
      diag_error(I->d, e->span, "if branches differ: then %s, else %s", show(I, &a, e->u.if_.then_->type),
                 show(I, &b, e->u.if_.else_->type));
      sb_free(&a);
      sb_free(&b);
      t = e->u.if_.then_->type;
    }
    e->type = t;
    break;
  }
  case EXPR_FUNC: infer_func(I, e); break;
  case EXPR_OP:
    diag_error(I->d, e->span, "operator %s can only be called, not used as a value", e->u.op.op->name);
    e->type = fresh(I, e->span);
    break;
  case EXPR_CTOR: e->type = ctor_type(I, e->u.ctor.ctor, e->span); break;
  case EXPR_MATCH: infer_match(I, e); break;
  case EXPR_REF_NEW: {
    Type *r = ir_type_new(I->m, TYPE_REF, e->span);
    r->u.ref.elem = e->u.ref_new.value->type;
    e->type = r;
    break;
  }
  case EXPR_REF_READ: {
    Type *elem = fresh(I, e->span);
    Type *r = ir_type_new(I->m, TYPE_REF, e->span);
    r->u.ref.elem = elem;
    if (!unify(I, r, e->u.ref_read.ref->type)) {
      StrBuf sb = {0};
      diag_error(I->d, e->span, "ref_read of a value of type %s, which is not a reference", show(I, &sb, e->u.ref_read.ref->type));
      sb_free(&sb);
    }
    e->type = elem;
    break;
  }
  case EXPR_REF_WRITE: {
    Type *r = ir_type_new(I->m, TYPE_REF, e->span);
    r->u.ref.elem = e->u.ref_write.value->type;
    Type *rt = resolve(I, e->u.ref_write.ref->type);
    if (rt && rt->kind != TYPE_REF && rt->kind != TYPE_INCOMPLETE) {
      StrBuf sb = {0};
      diag_error(I->d, e->span, "ref_write to a value of type %s, which is not a reference", show(I, &sb, rt));
      sb_free(&sb);
    } else if (!unify(I, rt, r)) {
      mismatch(I, use_span(e->u.ref_write.value, e), "ref_write", rt->u.ref.elem, e->u.ref_write.value->type);
    }
    e->type = tuple_type(I, e->span, NULL, 0);
    break;
  }
  default: RLY_UNREACHABLE();
  }
}

static void infer_scope(Infer *I, Expr *root) {
  ExprVec order = {0};
  ir_postorder(root, 0, &order);
  /* The callee of an operator call is not a value: give it a placeholder
  ** type first, so that only operators used as values reach infer_node. */
  for (int i = 0; i < order.len; i++) {
    Expr *e = order.data[i];
    if (e->kind == EXPR_CALL && e->u.call.callee->kind == EXPR_OP && !e->u.call.callee->type)
      e->u.call.callee->type = fresh(I, e->u.call.callee->span);
  }
  /* A let's variable takes its value's type as soon as the value is known,
  ** before the body is visited, so that a mismatch is found where the
  ** variable is misused rather than at the let. */
  Vec(Expr *) lets = {0};
  for (int i = 0; i < order.len; i++)
    if (order.data[i]->kind == EXPR_LET) VEC_PUSH(&lets, order.data[i]);
  if (lets.len > 1) qsort(lets.data, (size_t)lets.len, sizeof(Expr *), cmp_let_value);
  for (int i = 0; i < order.len; i++) {
    Expr *e = order.data[i];
    infer_node(I, e);
    if (!lets.len) continue;
    int lo = 0, hi = lets.len;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (lets.data[mid]->u.let.value->id < e->id) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < lets.len && lets.data[lo]->u.let.value == e; lo++) bind_let_var(I, lets.data[lo]);
  }
  VEC_FREE(&lets);
  VEC_FREE(&order);
}

/* {==== Globals: signatures, components, finishing ====} */

typedef struct RefCollect {
  Infer *I;
  Vec(int) refs;
} RefCollect;

static WalkResult collect_global(Walker *w, Expr *e) {
  RefCollect *rc = w->data;
  if (e->kind == EXPR_GLOBAL && e->u.global.def) {
    int k = def_index(rc->I, e->u.global.def);
    if (k >= 0) VEC_PUSH(&rc->refs, k);
  }
  return WALK_CONTINUE;
}

typedef struct Finish {
  Infer *I;
  bool report;   /* report unresolved types (only when nothing else failed) */
  bool reported;
} Finish;

static WalkResult finish_expr(Walker *w, Expr *e) {
  Finish *f = w->data;
  if (!e->type) return WALK_CONTINUE;
  e->type = zonk(f->I, e->type);
  /* Functions, globals, constructors and operators get their types from
  ** other nodes: report the variable or expression that is unknown. */
  bool derived = e->kind == EXPR_FUNC || e->kind == EXPR_GLOBAL || e->kind == EXPR_CTOR || e->kind == EXPR_OP;
  if (f->report && !f->reported && !derived && has_incomplete(f->I, e->type)) {
    StrBuf sb = {0};
    if (e->kind == EXPR_VAR && e->u.var.name)
      diag_error(f->I->d, e->span, "cannot infer the type of %%%s (got %s); add a type annotation",
                 e->u.var.name->text, show(f->I, &sb, e->type));
    else
      diag_error(f->I->d, e->span, "cannot infer a complete type here (got %s); add a type annotation",
                 show(f->I, &sb, e->type));
    sb_free(&sb);
    f->reported = true;
  }
  return WALK_CONTINUE;
}

bool ty_infer_module(Module *m, Diag *d) {
  Infer I;
  memset(&I, 0, sizeof I);
  I.m = m;
  I.d = d;
  I.errors_at_start = diag_count(d);
  ensure_subst(&I, m->ntypevars + 1);
  int n = m->ndefs;
  I.sigs = rly_xcalloc((size_t)(n ? n : 1), sizeof(Type *));
  /* Signatures from the annotations, with variables where there are none. */
  for (int i = 0; i < n; i++) {
    Expr *fn = m->defs[i]->func;
    Type **ps = ARENA_ARRAY(m->arena, Type *, fn->u.func.nparams);
    for (int k = 0; k < fn->u.func.nparams; k++) {
      Expr *p = fn->u.func.params[k];
      p->type = p->u.var.annot ? p->u.var.annot : fresh(&I, p->span);
      ps[k] = p->type;
    }
    Type *ret = fn->u.func.ret ? fn->u.func.ret : fresh(&I, fn->span);
    I.sigs[i] = func_type(&I, fn->span, ps, fn->u.func.nparams, ret, fn->u.func.tparams, fn->u.func.ntparams);
  }
  /* Components of the call graph, callees first. */
  size_t nn = (size_t)(n ? n : 1);
  int *comp = rly_xmalloc(sizeof(int) * nn), *corder = rly_xmalloc(sizeof(int) * nn);
  int *start = rly_xmalloc(sizeof(int) * (nn + 1));
  RefCollect rc = {&I, {0}};
  Walker rw = {collect_global, &rc};
  for (int i = 0; i < n; i++) {
    start[i] = rc.refs.len;
    ir_walk(&rw, m->defs[i]->func);
  }
  start[n] = rc.refs.len;
  ir_scc(n, start, rc.refs.data, comp, corder);
  VEC_FREE(&rc.refs);
  free(start);
  /* Infer each component, then settle what it can; stop once more errors
  ** were reported than are shown. */
  for (int k = 0; k < n && !diag_full(d);) {
    int c = comp[corder[k]];
    int first = k;
    while (k < n && comp[corder[k]] == c) k++;
    for (int j = first; j < k; j++) {
      int i = corder[j];
      Expr *fn = m->defs[i]->func;
      infer_node(&I, fn);
      Type *sig = I.sigs[i];
      if (!unify(&I, sig->u.func.ret, fn->type->u.func.ret)) {
        char what[300];
        snprintf(what, sizeof what, "@%s returns", m->defs[i]->name->text);
        mismatch(&I, fn->u.func.body->span, what, sig->u.func.ret, fn->type->u.func.ret);
      }
    }
    solve(&I);
    for (int j = first; j < k; j++) I.sigs[corder[j]] = zonk(&I, I.sigs[corder[j]]);
  }
  if (m->expr && !diag_full(d)) infer_scope(&I, m->expr);
  solve(&I);
  bool clean = diag_count(d) == I.errors_at_start;
  if (clean && I.pending.len) {
    Pending *p = &I.pending.data[0];
    if (p->kind == PEND_REL)
      diag_error(d, p->e->span, "cannot infer the argument types of %s; add type annotations",
                 p->e->u.call.callee->u.op.op->name);
    else
      diag_error(d, p->e->span, "cannot infer the type of the tuple projected here; add a type annotation");
    clean = false;
  }
  Finish f = {&I, clean, false};
  Walker w = {finish_expr, &f};
  for (int i = 0; i < n; i++) {
    ir_walk(&w, m->defs[i]->func);
    m->defs[i]->func->type = zonk(&I, m->defs[i]->func->type);
  }
  if (m->expr) ir_walk(&w, m->expr);
  for (int i = 0; i < m->nfree_vars; i++)
    if (m->free_vars[i]->type) m->free_vars[i]->type = zonk(&I, m->free_vars[i]->type);
  free(comp);
  free(corder);
  free(I.sigs);
  free(I.subst);
  VEC_FREE(&I.pending);
  return diag_count(d) == I.errors_at_start;
}
