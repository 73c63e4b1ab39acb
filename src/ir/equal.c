/* equal.c: structural equality of expressions, types, attributes and
** modules, modulo the renaming of bound variables and type variables.
**
** Binders met at the same position on both sides are matched pairwise: let
** vars, function params, pattern vars and the free vars of an expression
** module; the type params of functions, function types and ADTs. Each match
** is kept in two maps (a -> b and b -> a) so that it is a bijection, and a
** use of a bound variable must map to the variable its binder was matched
** with. A variable bound on neither side compares by pointer, else by name
** and annotation. Globals, constructors and ADTs in type calls compare by
** name; operators and attrs classes by pointer (they live in the static
** operator table); constants by dtype, shape and bytes. Spans and checked
** types (Expr.type) are ignored.
**
** Expressions are compared with an explicit work stack of pairs, never by
** recursion, so a 200,000-long let chain or a deep call nest does not grow
** the C stack. Types, patterns and attribute values recurse: their depth is
** that of the source text.
**
** Expressions are DAGs. A pair (a->id, b->id) found equal is remembered, so
** a node shared on both sides is compared once. A node shared in a but
** duplicated in b is compared with each copy; if it holds binders, they are
** then matched with a second partner: the maps take the new partner and
** every remembered pair is forgotten, since it may have relied on the old
** one (correctness over speed). Between such events the maps only grow, so
** a remembered pair stays equal: its free variables were bound outside it,
** at binders whose partners have not changed. This relies on the invariants
** of ir.h: one binder per variable, uses only in its scope. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "ir/ir.h"

/* {==== Tables ====} */

/* Pointer -> pointer, open addressing (linear probing), heap. */
typedef struct PtrMap {
  const void **keys;
  const void **vals;
  uint32_t cap, count;  /* cap: 0 or a power of two */
} PtrMap;

static uint32_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (uint32_t)x;
}

static const void *map_get(const PtrMap *m, const void *k) {
  if (!m->count) return NULL;
  uint32_t mask = m->cap - 1;
  for (uint32_t i = mix64((uintptr_t)k) & mask;; i = (i + 1) & mask) {
    if (m->keys[i] == k) return m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

static void map_insert(PtrMap *m, const void *k, const void *v) {
  uint32_t mask = m->cap - 1, i = mix64((uintptr_t)k) & mask;
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & mask;
  if (!m->keys[i]) m->count++;
  m->keys[i] = k;
  m->vals[i] = v;
}

static void map_put(PtrMap *m, const void *k, const void *v) {
  if ((m->count + 1) * 4 > m->cap * 3) {
    PtrMap old = *m;
    m->cap = old.cap ? old.cap * 2 : 32;
    m->count = 0;
    m->keys = rly_xcalloc(m->cap, sizeof(void *));
    m->vals = rly_xcalloc(m->cap, sizeof(void *));
    for (uint32_t i = 0; i < old.cap; i++)
      if (old.keys[i]) map_insert(m, old.keys[i], old.vals[i]);
    free(old.keys);
    free(old.vals);
  }
  map_insert(m, k, v);
}

static void map_free(PtrMap *m) {
  free(m->keys);
  free(m->vals);
}

/* A set of (a->id, b->id) pairs, open addressing, heap. */
#define PAIR_EMPTY UINT64_MAX

typedef struct PairSet {
  uint64_t *keys;
  uint32_t cap, count;
} PairSet;

static uint64_t pair_key(const Expr *a, const Expr *b) { return (uint64_t)a->id << 32 | b->id; }

static bool pairs_has(const PairSet *s, uint64_t k) {
  if (!s->count) return false;
  uint32_t mask = s->cap - 1;
  for (uint32_t i = mix64(k) & mask;; i = (i + 1) & mask) {
    if (s->keys[i] == k) return true;
    if (s->keys[i] == PAIR_EMPTY) return false;
  }
}

static void pairs_insert(PairSet *s, uint64_t k) {
  uint32_t mask = s->cap - 1, i = mix64(k) & mask;
  while (s->keys[i] != PAIR_EMPTY && s->keys[i] != k) i = (i + 1) & mask;
  if (s->keys[i] == PAIR_EMPTY) s->count++;
  s->keys[i] = k;
}

static void pairs_add(PairSet *s, uint64_t k) {
  if (k == PAIR_EMPTY) return;  /* both ids 2^32-1: never remembered */
  if ((s->count + 1) * 4 > s->cap * 3) {
    PairSet old = *s;
    s->cap = old.cap ? old.cap * 2 : 64;
    s->count = 0;
    s->keys = rly_xmalloc(s->cap * sizeof(uint64_t));
    memset(s->keys, 0xff, s->cap * sizeof(uint64_t));
    for (uint32_t i = 0; i < old.cap; i++)
      if (old.keys[i] != PAIR_EMPTY) pairs_insert(s, old.keys[i]);
    free(old.keys);
  }
  pairs_insert(s, k);
}

static void pairs_clear(PairSet *s) {
  if (!s->count) return;
  memset(s->keys, 0xff, s->cap * sizeof(uint64_t));
  s->count = 0;
}

/* {==== Context ====} */

typedef enum {
  T_EXPR,    /* compare expressions a and b */
  T_DONE,    /* every task pushed after this one succeeded: remember (a, b) */
  T_CLAUSE,  /* compare match clauses a and b: pattern (binding), then body */
} TaskKind;

typedef struct Task {
  TaskKind kind;
  const void *a, *b;
} Task;

typedef struct Eq {
  PtrMap var_ab, var_ba;    /* matched variable binders */
  PtrMap tvar_ab, tvar_ba;  /* matched type variable binders */
  PairSet same;             /* expression pairs known equal */
  Vec(Task) stack;          /* pending comparisons (a conjunction) */
} Eq;

static void eq_free(Eq *q) {
  map_free(&q->var_ab);
  map_free(&q->var_ba);
  map_free(&q->tvar_ab);
  map_free(&q->tvar_ba);
  free(q->same.keys);
  VEC_FREE(&q->stack);
}

static void push(Eq *q, TaskKind kind, const void *a, const void *b) {
  Task t = {kind, a, b};
  VEC_PUSH(&q->stack, t);
}

/* Matches binder a with binder b. A binder already matched with another
** partner (a shared node compared with two copies) takes the new one, and
** the remembered pairs are forgotten (file comment). */
static void bind(Eq *q, PtrMap *ab, PtrMap *ba, const void *a, const void *b) {
  const void *pa = map_get(ab, a), *pb = map_get(ba, b);
  if (pa == b && pb == a) return;
  if (pa || pb) pairs_clear(&q->same);
  map_put(ab, a, b);
  map_put(ba, b, a);
}

static bool names_eq(const Symbol *a, const Symbol *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return a->len == b->len && memcmp(a->text, b->text, a->len) == 0;
}

/* {==== Types ====} */

static bool type_eq(Eq *q, const Type *a, const Type *b);

static bool types_eq(Eq *q, Type *const *a, Type *const *b, int n) {
  for (int i = 0; i < n; i++)
    if (!type_eq(q, a[i], b[i])) return false;
  return true;
}

static bool bind_tvar(Eq *q, const Type *a, const Type *b) {
  if (!a || !b || a->kind != TYPE_VAR || b->kind != TYPE_VAR) return false;
  bind(q, &q->tvar_ab, &q->tvar_ba, a, b);
  return true;
}

static bool type_eq(Eq *q, const Type *a, const Type *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case TYPE_TENSOR:
    return dtype_eq(a->u.tensor.dtype, b->u.tensor.dtype) && a->u.tensor.ndim == b->u.tensor.ndim &&
           (a->u.tensor.ndim <= 0 ||
            memcmp(a->u.tensor.shape, b->u.tensor.shape, sizeof(int64_t) * (size_t)a->u.tensor.ndim) == 0);
  case TYPE_TUPLE:
    return a->u.tuple.n == b->u.tuple.n && types_eq(q, a->u.tuple.fields, b->u.tuple.fields, a->u.tuple.n);
  case TYPE_FUNC:
    if (a->u.func.nparams != b->u.func.nparams || a->u.func.ntparams != b->u.func.ntparams) return false;
    for (int i = 0; i < a->u.func.ntparams; i++)
      if (!bind_tvar(q, a->u.func.tparams[i], b->u.func.tparams[i])) return false;
    return types_eq(q, a->u.func.params, b->u.func.params, a->u.func.nparams) &&
           type_eq(q, a->u.func.ret, b->u.func.ret);
  case TYPE_VAR: {
    const void *ma = map_get(&q->tvar_ab, a), *mb = map_get(&q->tvar_ba, b);
    if (ma || mb) return ma == b && mb == a;
    return a == b || (a->u.var.name && names_eq(a->u.var.name, b->u.var.name));
  }
  case TYPE_CALL:
    return names_eq(a->u.call.name, b->u.call.name) && a->u.call.nargs == b->u.call.nargs &&
           types_eq(q, a->u.call.args, b->u.call.args, a->u.call.nargs);
  case TYPE_REF: return type_eq(q, a->u.ref.elem, b->u.ref.elem);
  case TYPE_INCOMPLETE: return true;  /* `_`: the ids are not part of the structure */
  case TYPE_KIND_COUNT: break;
  }
  RLY_UNREACHABLE();
}

/* {==== Attributes and constants ====} */

static bool double_same(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, sizeof a) == 0;  /* bitwise: 0.0 and -0.0 differ */
}

/* Expressions inside values are pushed on q's stack, not compared yet. */
static bool value_eq(Eq *q, const AttrValue *a, const AttrValue *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case AV_NONE: return true;
  case AV_INT: return a->u.i.v == b->u.i.v && a->u.i.bits == b->u.i.bits;
  case AV_FLOAT: return a->u.f.bits == b->u.f.bits && double_same(a->u.f.v, b->u.f.v);
  case AV_BOOL: return a->u.b == b->u.b;
  case AV_STR:
    return a->u.str.len == b->u.str.len &&
           (a->u.str.len == 0 || memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0);
  case AV_ARRAY:
    if (a->u.arr.n != b->u.arr.n) return false;
    for (int i = 0; i < a->u.arr.n; i++)
      if (!value_eq(q, a->u.arr.items[i], b->u.arr.items[i])) return false;
    return true;
  case AV_META: return names_eq(a->u.meta.key, b->u.meta.key) && a->u.meta.index == b->u.meta.index;
  case AV_EXPR:
    if (!a->u.expr || !b->u.expr) return a->u.expr == b->u.expr;
    push(q, T_EXPR, a->u.expr, b->u.expr);
    return true;
  }
  return false;
}

/* NULL attrs are the same as attrs without class and without pairs. */
static bool attrs_eq(Eq *q, const Attrs *a, const Attrs *b) {
  const AttrsClass *ca = a ? a->cls : NULL, *cb = b ? b->cls : NULL;
  int na = a ? a->n : 0, nb = b ? b->n : 0;
  if (ca != cb || na != nb) return false;
  for (int i = 0; i < na; i++) {
    if (!ca) {
      const Symbol *ka = a->keys ? a->keys[i] : NULL, *kb = b->keys ? b->keys[i] : NULL;
      if (!names_eq(ka, kb)) return false;
    }
    if (!a->values || !b->values) return a->values == b->values;
    if (!value_eq(q, a->values[i], b->values[i])) return false;
  }
  return true;
}

static bool const_eq(const ConstData *a, const ConstData *b) {
  if (!a || !b) return a == b;
  if (!dtype_eq(a->dtype, b->dtype) || a->ndim != b->ndim || a->nbytes != b->nbytes) return false;
  if (a->ndim > 0 && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) != 0) return false;
  return a->nbytes == 0 || memcmp(a->data, b->data, a->nbytes) == 0;
}

static bool ctor_eq(const Ctor *a, const Ctor *b) {
  if (!a || !b) return a == b;
  if (!names_eq(a->name, b->name)) return false;
  if (!a->adt || !b->adt) return a->adt == b->adt;
  return names_eq(a->adt->name, b->adt->name);
}

/* {==== Expressions ====} */

/* Binders: both must be vars with equal annotations. */
static bool bind_var(Eq *q, const Expr *a, const Expr *b) {
  if (!a || !b || a->kind != EXPR_VAR || b->kind != EXPR_VAR) return false;
  if (!type_eq(q, a->u.var.annot, b->u.var.annot)) return false;
  bind(q, &q->var_ab, &q->var_ba, a, b);
  return true;
}

static bool var_use_eq(Eq *q, const Expr *a, const Expr *b) {
  const void *ma = map_get(&q->var_ab, a), *mb = map_get(&q->var_ba, b);
  if (ma || mb) return ma == b && mb == a;
  if (a == b) return true;
  return a->u.var.name && names_eq(a->u.var.name, b->u.var.name) &&
         type_eq(q, a->u.var.annot, b->u.var.annot);
}

static bool pattern_eq(Eq *q, const Pattern *a, const Pattern *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case PAT_WILDCARD: return true;
  case PAT_VAR: return bind_var(q, a->u.var.var, b->u.var.var);
  case PAT_CTOR:
    if (!ctor_eq(a->u.ctor.ctor, b->u.ctor.ctor) || a->u.ctor.n != b->u.ctor.n) return false;
    for (int i = 0; i < a->u.ctor.n; i++)
      if (!pattern_eq(q, a->u.ctor.args[i], b->u.ctor.args[i])) return false;
    return true;
  case PAT_TUPLE:
    if (a->u.tuple.n != b->u.tuple.n) return false;
    for (int i = 0; i < a->u.tuple.n; i++)
      if (!pattern_eq(q, a->u.tuple.fields[i], b->u.tuple.fields[i])) return false;
    return true;
  case PAT_KIND_COUNT: break;
  }
  RLY_UNREACHABLE();
}

/* Pushes the children pairs of (a, b) in reverse, so that they are popped
** in evaluation order (binders before the scopes that use them). */
static void push_exprs(Eq *q, Expr *const *a, Expr *const *b, int n) {
  for (int i = n; i-- > 0;) push(q, T_EXPR, a[i], b[i]);
}

/* One step: compares what can be compared at once and pushes the children.
** Returns false on a difference. */
static bool expr_step(Eq *q, const Expr *a, const Expr *b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind) return false;
  switch (a->kind) {  /* leaves: compared here, never remembered */
  case EXPR_VAR: return var_use_eq(q, a, b);
  case EXPR_GLOBAL: return names_eq(a->u.global.name, b->u.global.name);
  case EXPR_CONST: return const_eq(a->u.constant.value, b->u.constant.value);
  case EXPR_OP: return a->u.op.op == b->u.op.op;
  case EXPR_CTOR: return ctor_eq(a->u.ctor.ctor, b->u.ctor.ctor);
  default: break;
  }
  uint64_t key = pair_key(a, b);
  if (pairs_has(&q->same, key)) return true;
  push(q, T_DONE, a, b);
  switch (a->kind) {
  case EXPR_TUPLE:
    if (a->u.tuple.n != b->u.tuple.n) return false;
    push_exprs(q, a->u.tuple.fields, b->u.tuple.fields, a->u.tuple.n);
    return true;
  case EXPR_GET_ITEM:
    if (a->u.get_item.index != b->u.get_item.index) return false;
    push(q, T_EXPR, a->u.get_item.tuple, b->u.get_item.tuple);
    return true;
  case EXPR_CALL:
    if (a->u.call.nargs != b->u.call.nargs) return false;
    if (!attrs_eq(q, a->u.call.attrs, b->u.call.attrs)) return false;
    push_exprs(q, a->u.call.args, b->u.call.args, a->u.call.nargs);
    push(q, T_EXPR, a->u.call.callee, b->u.call.callee);
    return true;
  case EXPR_LET:
    /* The var is in scope in its value (recursive let) and in the body. A
    ** let chain stays iterative: the body is one more task. */
    if (!bind_var(q, a->u.let.var, b->u.let.var)) return false;
    push(q, T_EXPR, a->u.let.body, b->u.let.body);
    push(q, T_EXPR, a->u.let.value, b->u.let.value);
    return true;
  case EXPR_IF:
    push(q, T_EXPR, a->u.if_.else_, b->u.if_.else_);
    push(q, T_EXPR, a->u.if_.then_, b->u.if_.then_);
    push(q, T_EXPR, a->u.if_.cond, b->u.if_.cond);
    return true;
  case EXPR_FUNC: {
    int np = a->u.func.nparams, nt = a->u.func.ntparams;
    if (np != b->u.func.nparams || nt != b->u.func.ntparams) return false;
    for (int i = 0; i < nt; i++)  /* type params scope over the param types */
      if (!bind_tvar(q, a->u.func.tparams[i], b->u.func.tparams[i])) return false;
    for (int i = 0; i < np; i++)
      if (!bind_var(q, a->u.func.params[i], b->u.func.params[i])) return false;
    if (!type_eq(q, a->u.func.ret, b->u.func.ret)) return false;
    if (!attrs_eq(q, a->u.func.attrs, b->u.func.attrs)) return false;
    push(q, T_EXPR, a->u.func.body, b->u.func.body);
    return true;
  }
  case EXPR_MATCH:
    if (a->u.match.complete != b->u.match.complete || a->u.match.nclauses != b->u.match.nclauses)
      return false;
    for (int i = a->u.match.nclauses; i-- > 0;)
      push(q, T_CLAUSE, &a->u.match.clauses[i], &b->u.match.clauses[i]);
    push(q, T_EXPR, a->u.match.scrut, b->u.match.scrut);
    return true;
  case EXPR_REF_NEW:
    push(q, T_EXPR, a->u.ref_new.value, b->u.ref_new.value);
    return true;
  case EXPR_REF_READ:
    push(q, T_EXPR, a->u.ref_read.ref, b->u.ref_read.ref);
    return true;
  case EXPR_REF_WRITE:
    push(q, T_EXPR, a->u.ref_write.value, b->u.ref_write.value);
    push(q, T_EXPR, a->u.ref_write.ref, b->u.ref_write.ref);
    return true;
  default: break;
  }
  RLY_UNREACHABLE();
}

/* Runs the pending comparisons; false at the first difference. */
static bool eq_run(Eq *q) {
  while (q->stack.len) {
    Task t = VEC_POP(&q->stack);
    switch (t.kind) {
    case T_EXPR:
      if (!expr_step(q, t.a, t.b)) return false;
      break;
    case T_DONE: pairs_add(&q->same, pair_key(t.a, t.b)); break;
    case T_CLAUSE: {
      const Clause *ca = t.a, *cb = t.b;
      if (!pattern_eq(q, ca->pat, cb->pat)) return false;
      push(q, T_EXPR, ca->body, cb->body);
      break;
    }
    }
  }
  return true;
}

/* {==== Entry points ====} */

bool ir_expr_equal(const Expr *a, const Expr *b) {
  Eq q = {0};
  push(&q, T_EXPR, a, b);
  bool ok = eq_run(&q);
  eq_free(&q);
  return ok;
}

bool ir_type_equal(const Type *a, const Type *b) {
  Eq q = {0};
  bool ok = type_eq(&q, a, b);
  eq_free(&q);
  return ok;
}

bool ir_attrs_equal(const Attrs *a, const Attrs *b) {
  Eq q = {0};
  bool ok = attrs_eq(&q, a, b) && eq_run(&q);
  eq_free(&q);
  return ok;
}

bool ir_attr_value_equal(const AttrValue *a, const AttrValue *b) {
  Eq q = {0};
  bool ok = value_eq(&q, a, b) && eq_run(&q);
  eq_free(&q);
  return ok;
}

static int sym_cmp(const Symbol *a, const Symbol *b) {
  if (a == b) return 0;
  if (!a || !b) return a ? 1 : -1;
  uint32_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->text, b->text, n);
  if (c) return c;
  return a->len < b->len ? -1 : a->len > b->len;
}

static int def_cmp(const void *x, const void *y) {
  return sym_cmp((*(GlobalDef *const *)x)->name, (*(GlobalDef *const *)y)->name);
}

static int typedef_cmp(const void *x, const void *y) {
  return sym_cmp((*(TypeDef *const *)x)->name, (*(TypeDef *const *)y)->name);
}

/* A heap copy of an array of n pointers (each size bytes), sorted by cmp. */
static void *sorted_dup(const void *src, int n, size_t size, int (*cmp)(const void *, const void *)) {
  void *dst = rly_xmalloc(size * (size_t)(n ? n : 1));
  if (n) memcpy(dst, src, size * (size_t)n);
  if (n > 1) qsort(dst, (size_t)n, size, cmp);
  return dst;
}

static bool typedef_eq(Eq *q, const TypeDef *a, const TypeDef *b) {
  if (!names_eq(a->name, b->name) || a->is_extern != b->is_extern || a->ntparams != b->ntparams ||
      a->nctors != b->nctors)
    return false;
  for (int i = 0; i < a->ntparams; i++)
    if (!bind_tvar(q, a->tparams[i], b->tparams[i])) return false;
  for (int i = 0; i < a->nctors; i++) {
    const Ctor *ca = a->ctors[i], *cb = b->ctors[i];
    if (!names_eq(ca->name, cb->name) || ca->tag != cb->tag || ca->nfields != cb->nfields ||
        !types_eq(q, ca->fields, cb->fields, ca->nfields))
      return false;
  }
  return true;
}

bool ir_module_equal(const Module *a, const Module *b) {
  if (!a || !b) return a == b;
  if (a->ndefs != b->ndefs || a->ntypes != b->ntypes || a->nfree_vars != b->nfree_vars ||
      !a->expr != !b->expr)
    return false;
  Eq q = {0};
  bool ok = true;
  TypeDef **ta = sorted_dup(a->types, a->ntypes, sizeof(TypeDef *), typedef_cmp);
  TypeDef **tb = sorted_dup(b->types, b->ntypes, sizeof(TypeDef *), typedef_cmp);
  for (int i = 0; ok && i < a->ntypes; i++) ok = typedef_eq(&q, ta[i], tb[i]);
  free(ta);
  free(tb);
  GlobalDef **da = sorted_dup(a->defs, a->ndefs, sizeof(GlobalDef *), def_cmp);
  GlobalDef **db = sorted_dup(b->defs, b->ndefs, sizeof(GlobalDef *), def_cmp);
  for (int i = 0; ok && i < a->ndefs; i++) {
    ok = names_eq(da[i]->name, db[i]->name);
    if (ok) {
      push(&q, T_EXPR, da[i]->func, db[i]->func);
      ok = eq_run(&q);
    }
  }
  free(da);
  free(db);
  for (int i = 0; ok && i < a->nfree_vars; i++) ok = bind_var(&q, a->free_vars[i], b->free_vars[i]);
  if (ok && a->expr) {
    push(&q, T_EXPR, a->expr, b->expr);
    ok = eq_run(&q);
  }
  eq_free(&q);
  return ok;
}
