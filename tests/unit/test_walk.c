/* test_walk.c: the IR traversal library (ir/walk.h): children of every node
** kind with each flag, rebuilding, pattern binders, post-orders of deep
** chains and of DAGs with sharing, free variables, scope homes and
** Tarjan's components. The deep cases run on a thread with a 1 MiB stack,
** where recursion per node would overflow. IR is built by hand. */
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "check.h"
#include "ir/ir.h"
#include "ir/walk.h"

/* {==== Builders ====} */

static const Span NOSPAN = {0, 0, 0, 0};

static Symbol *sym(Module *m, const char *s) { return sym_intern_cstr(&m->syms, s); }

static Expr *var(Module *m, const char *name) { return ir_var(m, NOSPAN, sym(m, name), NULL); }

static Expr *i32(Module *m, int32_t v) { return ir_const_scalar(m, NOSPAN, DTYPE(DT_INT, 32), &v); }

static Expr **list(Module *m, int n, ...) {
  Expr **a = ARENA_ARRAY(m->arena, Expr *, n ? n : 1);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) a[i] = va_arg(ap, Expr *);
  va_end(ap);
  return a;
}

static Expr *tuple(Module *m, int n, Expr **fields) { return ir_tuple(m, NOSPAN, fields, n); }

static Expr *let(Module *m, Expr *v, Expr *value, Expr *body) { return ir_let(m, NOSPAN, v, value, body); }

static Expr *call(Module *m, Expr *callee, int n, Expr **args) { return ir_call(m, NOSPAN, callee, args, n, NULL); }

static Expr *func(Module *m, Expr **params, int n, Expr *body) {
  Expr *e = ir_expr_new(m, EXPR_FUNC, NOSPAN);
  e->u.func.params = params;
  e->u.func.nparams = n;
  e->u.func.body = body;
  return e;
}

static Expr *iff(Module *m, Expr *c, Expr *t, Expr *f) {
  Expr *e = ir_expr_new(m, EXPR_IF, NOSPAN);
  e->u.if_.cond = c, e->u.if_.then_ = t, e->u.if_.else_ = f;
  return e;
}

static Attrs *attrs1(Module *m, const char *key, AttrValue *v) {
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->n = 1;
  a->keys = ARENA_ARRAY(m->arena, Symbol *, 1);
  a->values = ARENA_ARRAY(m->arena, AttrValue *, 1);
  a->keys[0] = sym(m, key);
  a->values[0] = v;
  return a;
}

static AttrValue *av_expr(Module *m, Expr *e) {
  AttrValue *v = ir_attr_value_new(m, AV_EXPR, NOSPAN);
  v->u.expr = e;
  return v;
}

static AttrValue *av_int(Module *m, int64_t i) {
  AttrValue *v = ir_attr_value_new(m, AV_INT, NOSPAN);
  v->u.i.v = i;
  v->u.i.bits = 32;
  return v;
}

static Pattern *pvar(Module *m, Expr *v) {
  Pattern *p = ir_pattern_new(m, PAT_VAR, NOSPAN);
  p->u.var.var = v;
  return p;
}

static Pattern *pwild(Module *m) { return ir_pattern_new(m, PAT_WILDCARD, NOSPAN); }

static Pattern *ptuple(Module *m, int n, ...) {
  Pattern *p = ir_pattern_new(m, PAT_TUPLE, NOSPAN);
  p->u.tuple.n = n;
  p->u.tuple.fields = ARENA_ARRAY(m->arena, Pattern *, n ? n : 1);
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) p->u.tuple.fields[i] = va_arg(ap, Pattern *);
  va_end(ap);
  return p;
}

/* match (scrut) { pats[i] => bodies[i] } */
static Expr *match(Module *m, Expr *scrut, int n, Pattern **pats, Expr **bodies) {
  Expr *e = ir_expr_new(m, EXPR_MATCH, NOSPAN);
  e->u.match.scrut = scrut;
  e->u.match.nclauses = n;
  e->u.match.complete = true;
  e->u.match.clauses = ARENA_ARRAY(m->arena, Clause, n ? n : 1);
  for (int i = 0; i < n; i++) e->u.match.clauses[i] = (Clause){pats[i], bodies[i]};
  return e;
}

/* The kids of e with flags, as a string of the given names ("a b c"):
** each node is named by its position in names[] (by pointer), '?' else. */
static const char *kids_text(const Expr *e, unsigned flags, Expr *const *nodes, const char *const *names, int n) {
  static char buf[512];
  ExprVec out = {0};
  ir_kids(e, flags, &out);
  buf[0] = 0;
  for (int i = 0; i < out.len; i++) {
    const char *nm = "?";
    for (int k = 0; k < n; k++)
      if (nodes[k] == out.data[i]) nm = names[k];
    if (i) strcat(buf, " ");
    strcat(buf, nm);
  }
  VEC_FREE(&out);
  return buf;
}

/* {==== Children ====} */

static void test_kids(void) {
  Module *m = module_new();
  Expr *a = var(m, "a"), *b = var(m, "b"), *c = var(m, "c"), *x = var(m, "x"), *y = var(m, "y");
  Expr *k = i32(m, 1), *at = var(m, "at");
  Expr *nodes[] = {a, b, c, x, y, k, at};
  const char *names[] = {"a", "b", "c", "x", "y", "k", "at"};
  int nn = 7;
#define KIDS(e, f) kids_text((e), (f), nodes, names, nn)

  /* Atoms: no children whatever the flags. */
  Expr *atoms[] = {a, k, ir_expr_new(m, EXPR_GLOBAL, NOSPAN), ir_expr_new(m, EXPR_OP, NOSPAN),
                   ir_expr_new(m, EXPR_CTOR, NOSPAN)};
  for (int i = 0; i < 5; i++) {
    CHECK_STR(KIDS(atoms[i], IR_KIDS_ALL), "");
    CHECK(ir_is_atom(atoms[i]));
    CHECK_EQ(ir_nscopes(atoms[i]), 0);
  }

  Expr *t = tuple(m, 3, list(m, 3, a, b, a));
  CHECK_STR(KIDS(t, 0), "a b a");
  CHECK(!ir_is_atom(t));
  Expr *g = ir_get_item(m, NOSPAN, t, 1);
  CHECK_STR(KIDS(g, 0), "?");
  Expr *cl = ir_call(m, NOSPAN, c, list(m, 2, a, b), 2, attrs1(m, "w", av_expr(m, at)));
  CHECK_STR(KIDS(cl, 0), "c a b");
  CHECK_STR(KIDS(cl, IR_KIDS_INNER | IR_KIDS_BINDERS), "c a b");
  CHECK_STR(KIDS(cl, IR_KIDS_ATTRS), "c a b at");
  Expr *l = let(m, x, a, b);
  CHECK_STR(KIDS(l, 0), "a b");
  CHECK_STR(KIDS(l, IR_KIDS_BINDERS), "x a b");
  CHECK_STR(KIDS(l, IR_KIDS_INNER), "a b");
  Expr *i = iff(m, c, a, b);
  CHECK_STR(KIDS(i, 0), "c");
  CHECK_STR(KIDS(i, IR_KIDS_INNER), "c a b");
  CHECK_EQ(ir_nscopes(i), 2);
  Expr *fn = func(m, list(m, 2, x, y), 2, a);
  fn->u.func.attrs = attrs1(m, "q", av_expr(m, at));
  CHECK_STR(KIDS(fn, 0), "");
  CHECK_STR(KIDS(fn, IR_KIDS_BINDERS), "");  /* params are in the body's scope */
  CHECK_STR(KIDS(fn, IR_KIDS_INNER), "a");
  CHECK_STR(KIDS(fn, IR_KIDS_INNER | IR_KIDS_BINDERS), "x y a");
  CHECK_STR(KIDS(fn, IR_KIDS_ALL), "x y at a");
  CHECK_EQ(ir_nscopes(fn), 1);
  CHECK(!ir_is_primitive(fn));
  Expr *prim = func(m, list(m, 1, x), 1, x);
  prim->u.func.attrs = attrs1(m, "Primitive", av_int(m, 1));
  CHECK(ir_is_primitive(prim));
  CHECK_STR(KIDS(prim, IR_KIDS_ALL), "x x");
  CHECK_STR(KIDS(prim, IR_KIDS_ALL | IR_KIDS_OPAQUE_PRIMITIVE), "");
  CHECK_STR(KIDS(fn, IR_KIDS_ALL | IR_KIDS_OPAQUE_PRIMITIVE), "x y at a");
  Pattern *p0 = ptuple(m, 3, pvar(m, x), pwild(m), ptuple(m, 1, pvar(m, y)));
  Expr *mt = match(m, c, 2, (Pattern *[]){p0, pwild(m)}, (Expr *[]){a, b});
  CHECK_STR(KIDS(mt, 0), "c");
  CHECK_STR(KIDS(mt, IR_KIDS_BINDERS), "c");
  CHECK_STR(KIDS(mt, IR_KIDS_INNER), "c a b");
  CHECK_STR(KIDS(mt, IR_KIDS_INNER | IR_KIDS_BINDERS), "c x y a b");
  CHECK_EQ(ir_nscopes(mt), 2);
  Expr *rn = ir_expr_new(m, EXPR_REF_NEW, NOSPAN);
  rn->u.ref_new.value = a;
  Expr *rr = ir_expr_new(m, EXPR_REF_READ, NOSPAN);
  rr->u.ref_read.ref = b;
  Expr *rw = ir_expr_new(m, EXPR_REF_WRITE, NOSPAN);
  rw->u.ref_write.ref = b, rw->u.ref_write.value = c;
  CHECK_STR(KIDS(rn, 0), "a");
  CHECK_STR(KIDS(rr, 0), "b");
  CHECK_STR(KIDS(rw, IR_KIDS_ALL), "b c");

  /* Slots and roles. */
  IrKidVec info = {0};
  ir_kids_info(mt, IR_KIDS_ALL, &info);
  CHECK_EQ(info.len, 5);
  if (info.len == 5) {
    int slots[] = {-1, 0, 0, 0, 1}, roles[] = {IR_KID_VALUE, IR_KID_BINDER, IR_KID_BINDER, IR_KID_VALUE, IR_KID_VALUE};
    for (int n = 0; n < 5; n++) {
      CHECK_EQ(info.data[n].slot, slots[n]);
      CHECK_EQ(info.data[n].role, roles[n]);
    }
  }
  info.len = 0;
  ir_kids_info(fn, IR_KIDS_ALL, &info);
  CHECK_EQ(info.len, 4);
  if (info.len == 4) {
    CHECK(info.data[0].slot == 0 && info.data[0].role == IR_KID_BINDER);
    CHECK(info.data[2].e == at && info.data[2].slot == -1 && info.data[2].role == IR_KID_ATTR);
    CHECK(info.data[3].slot == 0 && info.data[3].role == IR_KID_VALUE);
  }
  info.len = 0;
  ir_kids_info(i, IR_KIDS_INNER, &info);
  CHECK(info.len == 3 && info.data[0].slot == -1 && info.data[1].slot == 0 && info.data[2].slot == 1);
  info.len = 0;
  ir_kids_info(l, IR_KIDS_BINDERS, &info);
  CHECK(info.len == 3 && info.data[0].role == IR_KID_BINDER && info.data[0].slot == -1);
  VEC_FREE(&info);
#undef KIDS
  module_free(m);
}

/* {==== Rebuilding and patterns ====} */

static void test_rebuild(void) {
  Module *m = module_new();
  Expr *a = var(m, "a"), *b = var(m, "b"), *c = var(m, "c"), *x = var(m, "x"), *y = var(m, "y"), *z = var(m, "z");
  Type *ty = ir_tensor_type(m, NOSPAN, DTYPE(DT_INT, 32), 0, NULL);

  Expr *cl = call(m, c, 2, list(m, 2, a, b));
  cl->type = ty;
  Expr *r = ir_rebuild(m, cl, IR_KIDS_INNER, list(m, 3, a, b, c));
  CHECK(r != cl && r->kind == EXPR_CALL && r->id != cl->id && r->type == NULL);
  CHECK(r->u.call.callee == a && r->u.call.args[0] == b && r->u.call.args[1] == c && r->u.call.nargs == 2);
  CHECK(cl->u.call.callee == c && cl->u.call.args[0] == a);  /* the original is untouched */

  Expr *l = let(m, x, a, b);
  r = ir_rebuild(m, l, IR_KIDS_INNER, list(m, 2, b, a));
  CHECK(r->u.let.var == x && r->u.let.value == b && r->u.let.body == a);
  r = ir_rebuild(m, l, IR_KIDS_INNER | IR_KIDS_BINDERS, list(m, 3, y, b, y));
  CHECK(r->u.let.var == y && r->u.let.value == b && r->u.let.body == y);

  Expr *fn = func(m, list(m, 2, x, y), 2, x);
  r = ir_rebuild(m, fn, IR_KIDS_INNER, list(m, 1, y));
  CHECK(r->u.func.params == fn->u.func.params && r->u.func.body == y);
  r = ir_rebuild(m, fn, IR_KIDS_INNER | IR_KIDS_BINDERS, list(m, 3, z, y, z));
  CHECK(r->u.func.params != fn->u.func.params && r->u.func.params[0] == z && r->u.func.params[1] == y);
  CHECK(r->u.func.nparams == 2 && r->u.func.body == z && fn->u.func.params[0] == x);

  Expr *i = iff(m, a, b, c);
  r = ir_rebuild(m, i, IR_KIDS_INNER, list(m, 3, c, b, a));
  CHECK(r->u.if_.cond == c && r->u.if_.then_ == b && r->u.if_.else_ == a);

  Expr *g = ir_get_item(m, NOSPAN, a, 3);
  r = ir_rebuild(m, g, IR_KIDS_INNER, list(m, 1, b));
  CHECK(r->u.get_item.tuple == b && r->u.get_item.index == 3);

  Expr *t = tuple(m, 2, list(m, 2, a, b));
  r = ir_rebuild(m, t, IR_KIDS_INNER, list(m, 2, b, b));
  CHECK(r->u.tuple.n == 2 && r->u.tuple.fields != t->u.tuple.fields && r->u.tuple.fields[0] == b);

  Expr *rw = ir_expr_new(m, EXPR_REF_WRITE, NOSPAN);
  rw->u.ref_write.ref = a, rw->u.ref_write.value = b;
  r = ir_rebuild(m, rw, IR_KIDS_INNER, list(m, 2, c, a));
  CHECK(r->u.ref_write.ref == c && r->u.ref_write.value == a);

  /* Patterns: vars listed left to right; a rebuild shares unchanged parts. */
  Pattern *inner = ptuple(m, 1, pvar(m, y));
  Pattern *left = ptuple(m, 2, pvar(m, x), pwild(m));
  Pattern *p = ptuple(m, 2, left, inner);
  ExprVec vs = {0};
  ir_pattern_vars(p, &vs);
  CHECK(vs.len == 2 && vs.data[0] == x && vs.data[1] == y);
  vs.len = 0;
  ir_pattern_vars(NULL, &vs);
  ir_pattern_vars(pwild(m), &vs);
  CHECK_EQ(vs.len, 0);
  VEC_FREE(&vs);
  int pos = 0;
  CHECK(ir_pattern_rebuild(m, p, list(m, 2, x, y), &pos) == p && pos == 2);
  pos = 0;
  Pattern *q = ir_pattern_rebuild(m, p, list(m, 2, x, z), &pos);
  CHECK(q != p && pos == 2 && q->u.tuple.fields[0] == left && q->u.tuple.fields[1] != inner);
  CHECK(q->u.tuple.fields[1]->u.tuple.fields[0]->u.var.var == z && inner->u.tuple.fields[0]->u.var.var == y);

  Expr *mt = match(m, a, 2, (Pattern *[]){p, pvar(m, z)}, (Expr *[]){x, z});
  r = ir_rebuild(m, mt, IR_KIDS_INNER, list(m, 3, b, y, c));
  CHECK(r->u.match.scrut == b && r->u.match.clauses[0].pat == p && r->u.match.clauses[0].body == y);
  CHECK(r->u.match.clauses[1].body == c && r->u.match.nclauses == 2 && r->u.match.complete);
  r = ir_rebuild(m, mt, IR_KIDS_INNER | IR_KIDS_BINDERS, list(m, 6, b, x, c, y, a, a));
  CHECK(r->u.match.scrut == b && r->u.match.clauses[0].pat != p && r->u.match.clauses[0].body == y);
  CHECK(r->u.match.clauses[0].pat->u.tuple.fields[0] == left);
  CHECK(r->u.match.clauses[1].pat->u.var.var == a && r->u.match.clauses[1].body == a);
  CHECK(mt->u.match.clauses[1].pat->u.var.var == z);
  module_free(m);
}

/* {==== Post-order ====} */

static int index_of(const ExprVec *v, const Expr *e) {
  for (int i = 0; i < v->len; i++)
    if (v->data[i] == e) return i;
  return -1;
}

static void test_postorder_dag(void) {
  Module *m = module_new();
  /* s = f(a); t = (s, s); fn(p) { if (c) { s } else { t.0 } }; root = (t, fn, s) */
  Expr *f = var(m, "f"), *a = var(m, "a"), *c = var(m, "c"), *p = var(m, "p");
  Expr *s = call(m, f, 1, list(m, 1, a));
  Expr *t = tuple(m, 2, list(m, 2, s, s));
  Expr *g = ir_get_item(m, NOSPAN, t, 0);
  Expr *br = iff(m, c, s, g);
  Expr *fn = func(m, list(m, 1, p), 1, br);
  Expr *root = tuple(m, 3, list(m, 3, t, fn, s));
  ExprVec po = {0};
  ir_postorder(root, IR_KIDS_INNER, &po);
  /* f a s t c g if fn root: every node once, children first. */
  CHECK_EQ(po.len, 9);
  Expr *want[] = {f, a, s, t, c, g, br, fn, root};
  for (int i = 0; i < 9 && i < po.len; i++) CHECK(po.data[i] == want[i]);
  po.len = 0;
  ir_postorder(root, IR_KIDS_INNER | IR_KIDS_BINDERS, &po);
  CHECK_EQ(po.len, 10);
  CHECK(index_of(&po, p) >= 0 && index_of(&po, p) < index_of(&po, c));
  po.len = 0;
  ir_postorder(root, 0, &po);  /* the scope of root: fn is a leaf */
  CHECK_EQ(po.len, 6);
  CHECK(index_of(&po, br) < 0 && index_of(&po, fn) == 4);
  /* Several roots: nodes of an earlier root are not repeated. */
  po.len = 0;
  Expr *roots[] = {t, NULL, root};
  ir_postorder_roots(roots, 3, IR_KIDS_INNER, &po);
  CHECK_EQ(po.len, 9);
  CHECK(po.data[3] == t && po.data[8] == root);
  po.len = 0;
  ir_postorder(NULL, IR_KIDS_ALL, &po);
  CHECK_EQ(po.len, 0);
  VEC_FREE(&po);
  module_free(m);
}

/* {==== Free variables ====} */

static bool is_list(const ExprVec *v, int n, ...) {
  if (v->len != n) return false;
  va_list ap;
  va_start(ap, n);
  bool ok = true;
  for (int i = 0; i < n; i++) ok &= v->data[i] == va_arg(ap, Expr *);
  va_end(ap);
  return ok;
}

static void test_free_vars(void) {
  Module *m = module_new();
  /* fn (%p) {
  **   let %x = g(%u, %p);
  **   let %h = fn (%q) { (%q, %x, %w, %h) };   -- nested closure, recursive
  **   match (%x) { (%y, _) => h(%y, %v), %z => %z }
  ** } with %at in the attributes of the call g. */
  Expr *p = var(m, "p"), *x = var(m, "x"), *q = var(m, "q"), *hv = var(m, "h"), *y = var(m, "y"), *z = var(m, "z");
  Expr *u = var(m, "u"), *w = var(m, "w"), *v = var(m, "v"), *gv = var(m, "g"), *at = var(m, "at");
  Expr *gcall = ir_call(m, NOSPAN, gv, list(m, 2, u, p), 2, attrs1(m, "k", av_expr(m, at)));
  Expr *inner = func(m, list(m, 1, q), 1, tuple(m, 4, list(m, 4, q, x, w, hv)));
  Expr *body_m = match(m, x, 2, (Pattern *[]){ptuple(m, 2, pvar(m, y), pwild(m)), pvar(m, z)},
                       (Expr *[]){call(m, hv, 2, list(m, 2, y, v)), z});
  Expr *outer = func(m, list(m, 1, p), 1, let(m, x, gcall, let(m, hv, inner, body_m)));
  ExprVec fv = {0};
  ir_free_vars(outer, 0, &fv);
  CHECK(is_list(&fv, 4, gv, u, w, v));  /* order of first use */
  fv.len = 0;
  ir_free_vars(outer, IR_KIDS_ATTRS, &fv);
  CHECK(is_list(&fv, 5, gv, u, at, w, v));
  fv.len = 0;
  ir_free_vars(inner, 0, &fv);
  CHECK(is_list(&fv, 3, x, w, hv));  /* the recursive closure sees its own let var */
  fv.len = 0;
  ir_free_vars(body_m, 0, &fv);
  CHECK(is_list(&fv, 3, x, hv, v));  /* pattern vars are bound */
  /* A Primitive function is looked into unless it is opaque. */
  Expr *pp = var(m, "pp"), *leak = var(m, "leak");
  Expr *prim = func(m, list(m, 1, pp), 1, tuple(m, 2, list(m, 2, pp, leak)));
  prim->u.func.attrs = attrs1(m, "Primitive", av_int(m, 1));
  Expr *outer2 = func(m, list(m, 1, p), 1, call(m, prim, 1, list(m, 1, w)));
  fv.len = 0;
  ir_free_vars(outer2, 0, &fv);
  CHECK(is_list(&fv, 2, leak, w));
  fv.len = 0;
  ir_free_vars(outer2, IR_KIDS_OPAQUE_PRIMITIVE, &fv);
  CHECK(is_list(&fv, 1, w));
  /* Shared nodes (a DAG): a use is listed once. */
  Expr *sh = call(m, gv, 1, list(m, 1, u));
  Expr *dag = func(m, list(m, 1, p), 1, tuple(m, 3, list(m, 3, sh, sh, u)));
  fv.len = 0;
  ir_free_vars(dag, 0, &fv);
  CHECK(is_list(&fv, 2, gv, u));
  VEC_FREE(&fv);
  module_free(m);
}

/* {==== Scopes and homes ====} */

static void test_scopes(void) {
  IrScopes s = {0};
  int r = ir_scope_new(&s, -1, NULL, 0);
  int a = ir_scope_new(&s, r, NULL, 0), b = ir_scope_new(&s, r, NULL, 1);
  int a1 = ir_scope_new(&s, a, NULL, 0), a2 = ir_scope_new(&s, a1, NULL, 0);
  int r2 = ir_scope_new(&s, -1, NULL, 0);
  CHECK_EQ(s.data[a2].depth, 3);
  CHECK_EQ(ir_scope_lca(&s, a2, b), r);
  CHECK_EQ(ir_scope_lca(&s, a2, a), a);
  CHECK_EQ(ir_scope_lca(&s, a1, a1), a1);
  CHECK_EQ(ir_scope_lca(&s, -1, a2), a2);
  CHECK_EQ(ir_scope_lca(&s, b, -1), b);
  CHECK_EQ(ir_scope_lca(&s, a2, r2), -1);
  VEC_FREE(&s);

  Module *m = module_new();
  /* fn (%p) {
  **   both = f(%p)   used in both branches of the if  -> the fn body
  **   one  = f(both) used in the then branch only      -> the then branch
  **   cap  = f(%c)   used inside a closure and after it -> the root's scope
  **   if (%c) { (both, one, one) } else { both }
  ** }; the root is (fn, cap, fn2) with fn2 = fn () { cap } */
  Expr *f = var(m, "f"), *p = var(m, "p"), *c = var(m, "c");
  Expr *both = call(m, f, 1, list(m, 1, p));
  Expr *one = call(m, f, 1, list(m, 1, both));
  Expr *thn = tuple(m, 3, list(m, 3, both, one, one));
  Expr *br = iff(m, c, thn, both);
  Expr *fn = func(m, list(m, 1, p), 1, br);
  Expr *cap = call(m, f, 1, list(m, 1, c));
  Expr *fn2 = func(m, NULL, 0, cap);
  Expr *root = tuple(m, 3, list(m, 3, fn, cap, fn2));
  ExprVec order = {0};
  ir_postorder(root, IR_KIDS_INNER, &order);
  IrHomes h;
  ir_homes(&h, m->nexprs, &root, 1, &order);
  int top = h.home[root->id];
  CHECK_EQ(top, 0);
  CHECK(h.scopes.data[top].parent == -1 && h.scopes.data[top].owner == NULL);
  int body = h.base[fn->id];
  CHECK(body >= 0 && h.scopes.data[body].parent == top && h.scopes.data[body].owner == fn);
  CHECK_EQ(h.home[br->id], body);
  CHECK_EQ(h.home[both->id], body);
  int then_ = h.base[br->id];
  CHECK(h.scopes.data[then_].owner == br && h.scopes.data[then_].slot == 0);
  CHECK(h.scopes.data[then_ + 1].owner == br && h.scopes.data[then_ + 1].slot == 1);
  CHECK_EQ(h.home[one->id], then_);
  CHECK_EQ(h.home[thn->id], then_);
  CHECK_EQ(h.home[cap->id], top);
  CHECK_EQ(h.home[c->id], top);
  CHECK_EQ(h.base[cap->id], -1);
  CHECK_EQ(h.scopes.len, 5);  /* top, fn body, then, else, fn2 body */
  ir_homes_free(&h);
  VEC_FREE(&order);
  module_free(m);
}

/* {==== Strongly connected components ====} */

static void test_scc(void) {
  /* 0 -> 1 -> 2 -> 0 (a cycle), 2 -> 3, 3 -> 3 (a self edge), 4 -> 0,
  ** 4 -> 5, 5 -> 4, 6 alone. */
  int start[] = {0, 1, 2, 4, 5, 7, 8, 8};
  int adj[] = {1, 2, 0, 3, 3, 0, 5, 4};
  int comp[7], order[7];
  int nc = ir_scc(7, start, adj, comp, order);
  CHECK_EQ(nc, 4);
  /* {3} completes first (reached from 2), then {0 1 2}, then {4 5}, {6}. */
  CHECK_EQ(comp[3], 0);
  CHECK(comp[0] == 1 && comp[1] == 1 && comp[2] == 1);
  CHECK(comp[4] == 2 && comp[5] == 2);
  CHECK_EQ(comp[6], 3);
  int want[] = {3, 2, 1, 0, 5, 4, 6};
  for (int i = 0; i < 7; i++) CHECK_EQ(order[i], want[i]);
  CHECK_EQ(ir_scc(0, start, adj, comp, order), 0);
}

/* {==== Deep programs on a small stack ====} */

enum { DEEP = 100000 };

static void *deep(void *arg) {
  (void)arg;
  Module *m = module_new();
  /* let %v0 = 0; let %v1 = f(%v0, %u); ... %v{DEEP-1} */
  Expr *f = var(m, "f"), *u = var(m, "u");
  Expr **vars = malloc(sizeof(Expr *) * DEEP);
  Expr **vals = malloc(sizeof(Expr *) * DEEP);
  for (int i = 0; i < DEEP; i++) {
    vars[i] = var(m, "v");
    vals[i] = i ? call(m, f, 2, list(m, 2, vars[i - 1], u)) : i32(m, 0);
  }
  Expr *body = vars[DEEP - 1];
  for (int i = DEEP; i-- > 0;) body = let(m, vars[i], vals[i], body);
  Expr *fn = func(m, NULL, 0, body);
  ExprVec po = {0};
  ir_postorder(fn, IR_KIDS_ALL, &po);
  /* lets, vars, calls (DEEP - 1), the constant, f, u, fn */
  CHECK_EQ(po.len, 3 * DEEP + 3);
  CHECK(po.len && po.data[po.len - 1] == fn);
  ExprVec fv = {0};
  ir_free_vars(fn, 0, &fv);
  CHECK(is_list(&fv, 2, f, u));
  VEC_FREE(&fv);
  IrHomes h;
  po.len = 0;
  ir_postorder(fn, IR_KIDS_INNER, &po);
  ir_homes(&h, m->nexprs, &fn, 1, &po);
  CHECK_EQ(h.home[vals[DEEP / 2]->id], h.base[fn->id]);
  ir_homes_free(&h);
  /* A DAG as deep: each node is a tuple of the previous one, twice. */
  Expr *d = u;
  for (int i = 0; i < DEEP; i++) d = tuple(m, 2, list(m, 2, d, d));
  po.len = 0;
  ir_postorder(d, 0, &po);
  CHECK_EQ(po.len, DEEP + 1);
  Rewriter rw = {m, NULL, NULL, NULL};
  CHECK(ir_rewrite(&rw, d) == d);
  VEC_FREE(&po);
  /* A call graph that is one long path, and one long cycle. */
  int *start = malloc(sizeof(int) * (DEEP + 1)), *adj = malloc(sizeof(int) * DEEP);
  int *comp = malloc(sizeof(int) * DEEP), *order = malloc(sizeof(int) * DEEP);
  for (int i = 0; i < DEEP; i++) start[i] = i, adj[i] = i + 1 < DEEP ? i + 1 : DEEP - 1;
  start[DEEP] = DEEP;
  CHECK_EQ(ir_scc(DEEP, start, adj, comp, order), DEEP);
  CHECK(order[0] == DEEP - 1 && comp[0] == DEEP - 1);
  adj[DEEP - 1] = 0;
  CHECK_EQ(ir_scc(DEEP, start, adj, comp, order), 1);
  CHECK(order[DEEP - 1] == 0 && order[0] == DEEP - 1);
  free(start);
  free(adj);
  free(comp);
  free(order);
  free(vars);
  free(vals);
  module_free(m);
  return NULL;
}

int main(void) {
  test_kids();
  test_rebuild();
  test_postorder_dag();
  test_free_vars();
  test_scopes();
  test_scc();
  /* The deep cases run on a 1 MiB stack: recursion per node would overflow it. */
  pthread_attr_t attr;
  pthread_t t;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, (size_t)1 << 20);
  int rc = pthread_create(&t, &attr, deep, NULL);
  CHECK_EQ(rc, 0);
  if (rc == 0) pthread_join(t, NULL);
  pthread_attr_destroy(&attr);
  return check_report("test_walk");
}
