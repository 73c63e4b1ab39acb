/* test_ir.c: structural equality (ir/equal.c), the walker, rewriter and
** dataflow post-order (ir/walk.c) and the verifier (ir/verify.c), on IR
** built by hand. Operators are stand-ins declared here, so the test does not
** depend on the operator table's contents. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ir/ir.h"
#include "ir/walk.h"
#include "ops/ops.h"

/* {==== Builders ====} */

static const Span NOSPAN = {0, 0, 0, 0};

static Symbol *sym(Module *m, const char *s) { return sym_intern_cstr(&m->syms, s); }

static Expr *var(Module *m, const char *name) { return ir_var(m, NOSPAN, name ? sym(m, name) : NULL, NULL); }

static Expr *i32(Module *m, int32_t v) { return ir_const_scalar(m, NOSPAN, DTYPE(DT_INT, 32), &v); }

static Expr *i64(Module *m, int64_t v) { return ir_const_scalar(m, NOSPAN, DTYPE(DT_INT, 64), &v); }

static Expr *f32(Module *m, float v) { return ir_const_scalar(m, NOSPAN, DTYPE(DT_FLOAT, 32), &v); }

/* An arena array of n expressions (the variadic arguments). */
static Expr **list(Module *m, int n, ...) {
  Expr **a = n ? ARENA_ARRAY(m->arena, Expr *, n) : NULL;
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) a[i] = va_arg(ap, Expr *);
  va_end(ap);
  return a;
}

static Expr *tuple2(Module *m, Expr *a, Expr *b) { return ir_tuple(m, NOSPAN, list(m, 2, a, b), 2); }

static Expr *let(Module *m, Expr *v, Expr *value, Expr *body) { return ir_let(m, NOSPAN, v, value, body); }

static Expr *global(Module *m, const char *name) {
  Expr *g = ir_expr_new(m, EXPR_GLOBAL, NOSPAN);
  g->u.global.name = sym(m, name);
  g->u.global.def = module_find_def(m, g->u.global.name);
  return g;
}

/* @f(args...) */
static Expr *gcall(Module *m, const char *f, int n, Expr **args) {
  return ir_call(m, NOSPAN, global(m, f), args, n, NULL);
}

static Expr *func(Module *m, Expr **params, int n, Expr *body) {
  Expr *e = ir_expr_new(m, EXPR_FUNC, NOSPAN);
  e->u.func.params = params;
  e->u.func.nparams = n;
  e->u.func.body = body;
  return e;
}

static Type *tvar(Module *m, const char *name) {
  Type *t = ir_type_new(m, TYPE_VAR, NOSPAN);
  t->u.var.name = sym(m, name);
  return t;
}

static Attrs *generic_attrs(Module *m, const char *key, AttrValue *v) {
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->n = 1;
  a->keys = ARENA_ARRAY(m->arena, Symbol *, 1);
  a->values = ARENA_ARRAY(m->arena, AttrValue *, 1);
  a->keys[0] = sym(m, key);
  a->values[0] = v;
  return a;
}

static AttrValue *av_int(Module *m, int64_t v, int bits) {
  AttrValue *a = ir_attr_value_new(m, AV_INT, NOSPAN);
  a->u.i.v = v;
  a->u.i.bits = (uint8_t)bits;
  return a;
}

static AttrValue *av_float(Module *m, double v, int bits) {
  AttrValue *a = ir_attr_value_new(m, AV_FLOAT, NOSPAN);
  a->u.f.v = v;
  a->u.f.bits = (uint8_t)bits;
  return a;
}

static AttrValue *av_str(Module *m, const char *s) {
  AttrValue *a = ir_attr_value_new(m, AV_STR, NOSPAN);
  a->u.str.s = arena_strndup(m->arena, s, strlen(s));
  a->u.str.len = strlen(s);
  return a;
}

static void add_def(Module *m, const char *name, Expr *fn) {
  GlobalDef *d = ARENA_NEW(m->arena, GlobalDef);
  d->name = sym(m, name);
  d->func = fn;
  GlobalDef **defs = ARENA_ARRAY(m->arena, GlobalDef *, m->ndefs + 1);
  if (m->ndefs) memcpy(defs, m->defs, sizeof(GlobalDef *) * (size_t)m->ndefs);
  defs[m->ndefs++] = d;
  m->defs = defs;
}

/* type List[A] { Cons(A, List[A]), Nil } with the param named tp. */
static TypeDef *add_list_type(Module *m, const char *tp) {
  TypeDef *td = ARENA_NEW(m->arena, TypeDef);
  td->name = sym(m, "List");
  td->ntparams = 1;
  td->tparams = ARENA_ARRAY(m->arena, Type *, 1);
  td->tparams[0] = tvar(m, tp);
  Type *self = ir_type_new(m, TYPE_CALL, NOSPAN);
  self->u.call.name = td->name;
  self->u.call.adt = td;
  self->u.call.nargs = 1;
  self->u.call.args = ARENA_ARRAY(m->arena, Type *, 1);
  self->u.call.args[0] = td->tparams[0];
  td->nctors = 2;
  td->ctors = ARENA_ARRAY(m->arena, Ctor *, 2);
  const char *names[2] = {"Cons", "Nil"};
  for (int i = 0; i < 2; i++) {
    Ctor *c = ARENA_NEW(m->arena, Ctor);
    c->name = sym(m, names[i]);
    c->adt = td;
    c->tag = i;
    if (i == 0) {
      c->nfields = 2;
      c->fields = ARENA_ARRAY(m->arena, Type *, 2);
      c->fields[0] = td->tparams[0];
      c->fields[1] = self;
    }
    td->ctors[i] = c;
  }
  m->types = ARENA_ARRAY(m->arena, TypeDef *, 1);
  m->types[0] = td;
  m->ntypes = 1;
  return td;
}

/* let %v0 = 0; let %v1 = %v0; ... ; %v(n-1) — n lets, the value of each
** the previous var; the last body is `last` (or the last var if NULL). */
static Expr *let_chain(Module *m, int n, Expr *last) {
  Expr **vars = malloc(sizeof(Expr *) * (size_t)n);
  for (int i = 0; i < n; i++) vars[i] = var(m, "v");
  Expr *body = last ? last : vars[n - 1];
  for (int i = n; i-- > 0;) body = let(m, vars[i], i ? vars[i - 1] : i32(m, 0), body);
  free(vars);
  return body;
}

/* {==== Equality ====} */

static void test_alpha(void) {
  Module *a = module_new(), *b = module_new();
  Expr *x = var(a, "x"), *y = var(b, "y");
  CHECK(ir_expr_equal(let(a, x, i32(a, 1), x), let(b, y, i32(b, 1), y)));
  /* Same module, different names. */
  Expr *z = var(a, "z");
  CHECK(ir_expr_equal(let(a, var(a, "w"), i32(a, 1), i32(a, 2)), let(a, z, i32(a, 1), i32(a, 2))));
  /* The body uses a free %x on one side, the bound var on the other. */
  Expr *y2 = var(b, "x"), *freex = var(b, "x");
  CHECK(!ir_expr_equal(let(a, x, i32(a, 1), x), let(b, y2, i32(b, 1), freex)));
  CHECK(!ir_expr_equal(let(b, y2, i32(b, 1), freex), let(a, x, i32(a, 1), x)));
  /* Free vars compare by name, across modules too. */
  CHECK(ir_expr_equal(var(a, "p"), var(b, "p")));
  CHECK(!ir_expr_equal(var(a, "p"), var(b, "q")));
  CHECK(!ir_expr_equal(var(a, NULL), var(a, NULL)));
  Expr *anon = var(a, NULL);
  CHECK(ir_expr_equal(anon, anon));
  /* Annotations of binders count. */
  Type *f32t = ir_tensor_type(a, NOSPAN, DTYPE(DT_FLOAT, 32), 0, NULL);
  Type *i32t = ir_tensor_type(b, NOSPAN, DTYPE(DT_INT, 32), 0, NULL);
  Expr *xa = ir_var(a, NOSPAN, sym(a, "x"), f32t), *xb = ir_var(b, NOSPAN, sym(b, "x"), i32t);
  CHECK(!ir_expr_equal(let(a, xa, i32(a, 1), xa), let(b, xb, i32(b, 1), xb)));
  /* Sequencing: anonymous let vars. */
  Expr *s1 = let(a, var(a, NULL), i32(a, 1), i32(a, 2));
  Expr *s2 = let(b, var(b, NULL), i32(b, 1), i32(b, 2));
  CHECK(ir_expr_equal(s1, s2));
  /* Recursive let: the var is in scope in its own value. */
  Expr *r1 = var(a, "loop"), *r2 = var(b, "f");
  Expr *p1 = var(a, "i"), *p2 = var(b, "j");
  Expr *rl1 = let(a, r1, func(a, list(a, 1, p1), 1, ir_call(a, NOSPAN, r1, list(a, 1, p1), 1, NULL)), r1);
  Expr *rl2 = let(b, r2, func(b, list(b, 1, p2), 1, ir_call(b, NOSPAN, r2, list(b, 1, p2), 1, NULL)), r2);
  CHECK(ir_expr_equal(rl1, rl2));
  module_free(a);
  module_free(b);
}

static void test_differences(void) {
  Module *m = module_new();
  CHECK(ir_expr_equal(i32(m, 1), i32(m, 1)));
  CHECK(!ir_expr_equal(i32(m, 1), i32(m, 2)));
  CHECK(!ir_expr_equal(i32(m, 1), i64(m, 1)));
  CHECK(!ir_expr_equal(f32(m, 0.0f), f32(m, -0.0f)));
  CHECK(!ir_expr_equal(i32(m, 1), var(m, "x")));
  /* Shapes of constants. */
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2};
  ConstData *ca = ARENA_NEW(m->arena, ConstData), *cb = ARENA_NEW(m->arena, ConstData);
  float data[6] = {1, 2, 3, 4, 5, 6};
  *ca = (ConstData){DTYPE(DT_FLOAT, 32), 2, sa, data, sizeof data};
  *cb = (ConstData){DTYPE(DT_FLOAT, 32), 2, sb, data, sizeof data};
  CHECK(!ir_expr_equal(ir_const(m, NOSPAN, ca), ir_const(m, NOSPAN, cb)));
  CHECK(ir_expr_equal(ir_const(m, NOSPAN, ca), ir_const(m, NOSPAN, ca)));
  /* Tuple arity and field order. */
  Expr *one = i32(m, 1), *two = i32(m, 2);
  CHECK(!ir_expr_equal(tuple2(m, one, two), ir_tuple(m, NOSPAN, list(m, 3, one, two, two), 3)));
  CHECK(!ir_expr_equal(tuple2(m, one, two), tuple2(m, two, one)));
  CHECK(ir_expr_equal(ir_tuple(m, NOSPAN, NULL, 0), ir_tuple(m, NOSPAN, NULL, 0)));
  /* Projection index, globals by name. */
  Expr *t = tuple2(m, one, two);
  CHECK(!ir_expr_equal(ir_get_item(m, NOSPAN, t, 0), ir_get_item(m, NOSPAN, t, 1)));
  CHECK(ir_expr_equal(global(m, "f"), global(m, "f")));
  CHECK(!ir_expr_equal(global(m, "f"), global(m, "g")));
  /* Call attributes. */
  Expr *c1 = gcall(m, "f", 1, list(m, 1, one)), *c2 = gcall(m, "f", 1, list(m, 1, one));
  c1->u.call.attrs = generic_attrs(m, "axis", av_int(m, 1, 32));
  c2->u.call.attrs = generic_attrs(m, "axis", av_int(m, 1, 32));
  CHECK(ir_expr_equal(c1, c2));
  c2->u.call.attrs = generic_attrs(m, "axis", av_int(m, 1, 64));
  CHECK(!ir_expr_equal(c1, c2));
  c2->u.call.attrs = generic_attrs(m, "axis", av_int(m, 2, 32));
  CHECK(!ir_expr_equal(c1, c2));
  c2->u.call.attrs = generic_attrs(m, "axes", av_int(m, 1, 32));
  CHECK(!ir_expr_equal(c1, c2));
  c2->u.call.attrs = NULL;
  CHECK(!ir_expr_equal(c1, c2));
  /* NULL attrs equal empty attrs. */
  Attrs empty = {0};
  CHECK(ir_attrs_equal(NULL, &empty));
  /* If, ref nodes. */
  Expr *if1 = ir_expr_new(m, EXPR_IF, NOSPAN), *if2 = ir_expr_new(m, EXPR_IF, NOSPAN);
  if1->u.if_.cond = if2->u.if_.cond = var(m, "c");
  if1->u.if_.then_ = one, if1->u.if_.else_ = two;
  if2->u.if_.then_ = two, if2->u.if_.else_ = one;
  CHECK(!ir_expr_equal(if1, if2));
  if2->u.if_.then_ = one, if2->u.if_.else_ = two;
  CHECK(ir_expr_equal(if1, if2));
  module_free(m);
}

static void test_attr_values(void) {
  Module *m = module_new();
  CHECK(ir_attr_value_equal(av_float(m, 0.5, 32), av_float(m, 0.5, 32)));
  CHECK(!ir_attr_value_equal(av_float(m, 0.5, 32), av_float(m, 0.25, 32)));
  CHECK(!ir_attr_value_equal(av_float(m, 0.5, 32), av_float(m, 0.5, 64)));
  CHECK(ir_attr_value_equal(av_float(m, NAN, 32), av_float(m, NAN, 32)));
  CHECK(!ir_attr_value_equal(av_float(m, NAN, 32), av_float(m, 1.0, 32)));
  CHECK(!ir_attr_value_equal(av_float(m, 0.0, 32), av_float(m, -0.0, 32)));
  CHECK(!ir_attr_value_equal(av_int(m, 1, 32), av_float(m, 1.0, 32)));
  CHECK(ir_attr_value_equal(av_str(m, "NCHW"), av_str(m, "NCHW")));
  CHECK(!ir_attr_value_equal(av_str(m, "NCHW"), av_str(m, "NHWC")));
  AttrValue *arr1 = ir_attr_value_new(m, AV_ARRAY, NOSPAN), *arr2 = ir_attr_value_new(m, AV_ARRAY, NOSPAN);
  AttrValue *items1[2] = {av_int(m, 1, 32), av_int(m, 2, 32)};
  AttrValue *items2[2] = {av_int(m, 1, 32), av_int(m, 3, 32)};
  arr1->u.arr.items = items1, arr1->u.arr.n = 2;
  arr2->u.arr.items = items2, arr2->u.arr.n = 2;
  CHECK(ir_attr_value_equal(arr1, arr1));
  CHECK(!ir_attr_value_equal(arr1, arr2));
  arr2->u.arr.n = 1;
  CHECK(!ir_attr_value_equal(arr1, arr2));
  AttrValue *e1 = ir_attr_value_new(m, AV_EXPR, NOSPAN), *e2 = ir_attr_value_new(m, AV_EXPR, NOSPAN);
  e1->u.expr = i32(m, 4), e2->u.expr = i32(m, 4);
  CHECK(ir_attr_value_equal(e1, e2));
  e2->u.expr = i32(m, 5);
  CHECK(!ir_attr_value_equal(e1, e2));
  /* Function attributes, generic keys in order. */
  Expr *fa = func(m, NULL, 0, i32(m, 0)), *fb = func(m, NULL, 0, i32(m, 0));
  fa->u.func.attrs = generic_attrs(m, "Primitive", av_int(m, 1, 32));
  fb->u.func.attrs = generic_attrs(m, "Primitive", av_int(m, 1, 32));
  CHECK(ir_expr_equal(fa, fb));
  fb->u.func.attrs = generic_attrs(m, "Primitive", av_int(m, 2, 32));
  CHECK(!ir_expr_equal(fa, fb));
  module_free(m);
}

static void test_bijection(void) {
  Module *m = module_new();
  Expr *a = var(m, "a"), *b = var(m, "b"), *c = var(m, "a"), *d = var(m, "b");
  CHECK(!ir_expr_equal(func(m, list(m, 2, a, b), 2, a), func(m, list(m, 2, c, d), 2, d)));
  CHECK(ir_expr_equal(func(m, list(m, 2, a, b), 2, a), func(m, list(m, 2, c, d), 2, c)));
  Expr *x = var(m, "x"), *y = var(m, "y"), *x2 = var(m, "x"), *y2 = var(m, "y");
  Expr *fxx = func(m, list(m, 2, x, y), 2, tuple2(m, x, x));
  Expr *fxy = func(m, list(m, 2, x2, y2), 2, tuple2(m, x2, y2));
  CHECK(!ir_expr_equal(fxx, fxy));
  CHECK(!ir_expr_equal(fxy, fxx));
  /* Names swapped but positions kept: equal. */
  Expr *p = var(m, "x"), *q = var(m, "y"), *r = var(m, "y"), *s = var(m, "x");
  CHECK(ir_expr_equal(func(m, list(m, 2, p, q), 2, tuple2(m, p, q)),
                      func(m, list(m, 2, r, s), 2, tuple2(m, r, s))));
  /* Nested lets: an inner var may not stand for an outer one. */
  Expr *o1 = var(m, "o"), *i1 = var(m, "i"), *o2 = var(m, "o"), *i2 = var(m, "i");
  CHECK(!ir_expr_equal(let(m, o1, i32(m, 1), let(m, i1, i32(m, 1), o1)),
                       let(m, o2, i32(m, 1), let(m, i2, i32(m, 1), i2))));
  /* Arity of params. */
  CHECK(!ir_expr_equal(func(m, list(m, 1, var(m, "x")), 1, i32(m, 0)), func(m, NULL, 0, i32(m, 0))));
  module_free(m);
}

static void test_types(void) {
  Module *a = module_new(), *b = module_new();
  /* fn[A](%x: A) -> A { %x }  ==  fn[B](%y: B) -> B { %y } */
  Type *ta = tvar(a, "A"), *tb = tvar(b, "B");
  Expr *xa = ir_var(a, NOSPAN, sym(a, "x"), ta), *yb = ir_var(b, NOSPAN, sym(b, "y"), tb);
  Expr *fa = func(a, list(a, 1, xa), 1, xa), *fb = func(b, list(b, 1, yb), 1, yb);
  fa->u.func.tparams = ARENA_ARRAY(a->arena, Type *, 1), fa->u.func.tparams[0] = ta, fa->u.func.ntparams = 1;
  fb->u.func.tparams = ARENA_ARRAY(b->arena, Type *, 1), fb->u.func.tparams[0] = tb, fb->u.func.ntparams = 1;
  fa->u.func.ret = ta, fb->u.func.ret = tb;
  CHECK(ir_expr_equal(fa, fb));
  /* fn[A, B](%x: A) -> A  vs  fn[A, B](%x: B) -> A */
  Type *a1 = tvar(a, "A"), *b1 = tvar(a, "B"), *a2 = tvar(b, "A"), *b2 = tvar(b, "B");
  Expr *x1 = ir_var(a, NOSPAN, sym(a, "x"), a1), *x2 = ir_var(b, NOSPAN, sym(b, "x"), b2);
  Expr *g1 = func(a, list(a, 1, x1), 1, x1), *g2 = func(b, list(b, 1, x2), 1, x2);
  g1->u.func.tparams = ARENA_ARRAY(a->arena, Type *, 2), g1->u.func.ntparams = 2;
  g2->u.func.tparams = ARENA_ARRAY(b->arena, Type *, 2), g2->u.func.ntparams = 2;
  g1->u.func.tparams[0] = a1, g1->u.func.tparams[1] = b1;
  g2->u.func.tparams[0] = a2, g2->u.func.tparams[1] = b2;
  g1->u.func.ret = a1, g2->u.func.ret = a2;
  CHECK(!ir_expr_equal(g1, g2));
  /* Function types: fn[A](A) -> A == fn[B](B) -> B; != fn[B](B) -> C. */
  Type *ft1 = ir_type_new(a, TYPE_FUNC, NOSPAN), *ft2 = ir_type_new(b, TYPE_FUNC, NOSPAN);
  Type *A = tvar(a, "A"), *B = tvar(b, "B");
  ft1->u.func.tparams = &A, ft1->u.func.ntparams = 1, ft1->u.func.params = &A, ft1->u.func.nparams = 1;
  ft1->u.func.ret = A;
  ft2->u.func.tparams = &B, ft2->u.func.ntparams = 1, ft2->u.func.params = &B, ft2->u.func.nparams = 1;
  ft2->u.func.ret = B;
  CHECK(ir_type_equal(ft1, ft2));
  ft2->u.func.ret = tvar(b, "C");
  CHECK(!ir_type_equal(ft1, ft2));
  /* Unbound type vars: by name. */
  CHECK(ir_type_equal(tvar(a, "T"), tvar(b, "T")));
  CHECK(!ir_type_equal(tvar(a, "T"), tvar(b, "U")));
  /* Tensor types. */
  int64_t s1[2] = {1, 3}, s2[2] = {1, RLY_DIM_ANY};
  Type *t1 = ir_tensor_type(a, NOSPAN, DTYPE(DT_FLOAT, 32), 2, s1);
  CHECK(ir_type_equal(t1, ir_tensor_type(b, NOSPAN, DTYPE(DT_FLOAT, 32), 2, s1)));
  CHECK(!ir_type_equal(t1, ir_tensor_type(b, NOSPAN, DTYPE(DT_FLOAT, 32), 2, s2)));
  CHECK(!ir_type_equal(t1, ir_tensor_type(b, NOSPAN, DTYPE(DT_FLOAT, 16), 2, s1)));
  CHECK(!ir_type_equal(t1, ir_tensor_type(b, NOSPAN, DTYPE(DT_FLOAT, 32), 1, s1)));
  CHECK(ir_type_equal(ir_incomplete_type(a, NOSPAN), ir_incomplete_type(b, NOSPAN)));
  module_free(a);
  module_free(b);
}

/* (t, t) nested n times over a leaf: 2^n paths, n + 1 nodes. */
static Expr *pow_dag(Module *m, int n) {
  Expr *t = gcall(m, "f", 1, list(m, 1, var(m, "free")));
  for (int i = 0; i < n; i++) t = tuple2(m, t, t);
  return t;
}

static void test_dag(void) {
  Module *m = module_new();
  /* %0 = @f(%x); (%0, %0)  ==  (@f(%x), @f(%x)) */
  Expr *x = var(m, "x");
  Expr *shared = gcall(m, "f", 1, list(m, 1, x));
  Expr *dag = tuple2(m, shared, shared);
  Expr *tree = tuple2(m, gcall(m, "f", 1, list(m, 1, x)), gcall(m, "f", 1, list(m, 1, x)));
  CHECK(ir_expr_equal(dag, tree));
  CHECK(ir_expr_equal(tree, dag));
  /* A shared function (binders inside) vs two copies. */
  Expr *p = var(m, "p"), *q1 = var(m, "q"), *q2 = var(m, "r");
  Expr *sf = func(m, list(m, 1, p), 1, p);
  Expr *copies = tuple2(m, func(m, list(m, 1, q1), 1, q1), func(m, list(m, 1, q2), 1, q2));
  CHECK(ir_expr_equal(tuple2(m, sf, sf), copies));
  CHECK(ir_expr_equal(copies, tuple2(m, sf, sf)));
  Expr *q3 = var(m, "s");
  Expr *other = tuple2(m, func(m, list(m, 1, q1), 1, q1), func(m, list(m, 1, q3), 1, i32(m, 0)));
  CHECK(!ir_expr_equal(tuple2(m, sf, sf), other));
  /* let %f = fn(%p) { %p }; (%f, %f) shared inside both branches of a tuple
  ** whose second copy differs in which var it returns. */
  Expr *u = var(m, "u"), *v = var(m, "v");
  Expr *inner = func(m, list(m, 2, u, v), 2, u);
  Expr *inner_u = func(m, list(m, 2, var(m, "u"), var(m, "v")), 2, NULL);
  inner_u->u.func.body = inner_u->u.func.params[0];
  Expr *inner_v = func(m, list(m, 2, var(m, "u"), var(m, "v")), 2, NULL);
  inner_v->u.func.body = inner_v->u.func.params[1];
  CHECK(ir_expr_equal(tuple2(m, inner, inner), tuple2(m, inner_u, inner_u)));
  CHECK(!ir_expr_equal(tuple2(m, inner, inner), tuple2(m, inner_u, inner_v)));
  /* A shared node over an outer binder vs copies over two binders. */
  Expr *ox = var(m, "x"), *oy = var(m, "y"), *bx = var(m, "x"), *by = var(m, "y");
  Expr *st = gcall(m, "f", 1, list(m, 1, ox));
  Expr *sa = let(m, ox, i32(m, 1), let(m, oy, i32(m, 1), tuple2(m, st, st)));
  Expr *sb = let(m, bx, i32(m, 1),
                 let(m, by, i32(m, 1), tuple2(m, gcall(m, "f", 1, list(m, 1, bx)), gcall(m, "f", 1, list(m, 1, by)))));
  CHECK(!ir_expr_equal(sa, sb));
  CHECK(!ir_expr_equal(sb, sa));
  /* Exponential paths, linear nodes: must finish at once. */
  Expr *d1 = pow_dag(m, 64), *d2 = pow_dag(m, 64);
  CHECK(ir_expr_equal(d1, d2));
  module_free(m);
}

static void test_match(void) {
  Module *a = module_new(), *b = module_new();
  TypeDef *la = add_list_type(a, "A"), *lb = add_list_type(b, "T");
  CHECK(ir_module_equal(a, b));
  /* match (%xs) { Cons(%h, _) => %h, Nil => 0 } */
  Expr *ms[2];
  Module *mods[2] = {a, b};
  TypeDef *lists[2] = {la, lb};
  for (int k = 0; k < 2; k++) {
    Module *m = mods[k];
    Expr *h = var(m, k ? "head" : "h");
    Pattern *pv = ir_pattern_new(m, PAT_VAR, NOSPAN);
    pv->u.var.var = h;
    Pattern *pw = ir_pattern_new(m, PAT_WILDCARD, NOSPAN);
    Pattern *pc = ir_pattern_new(m, PAT_CTOR, NOSPAN);
    pc->u.ctor.ctor = lists[k]->ctors[0];
    pc->u.ctor.n = 2;
    pc->u.ctor.args = ARENA_ARRAY(m->arena, Pattern *, 2);
    pc->u.ctor.args[0] = pv, pc->u.ctor.args[1] = pw;
    Pattern *pn = ir_pattern_new(m, PAT_CTOR, NOSPAN);
    pn->u.ctor.ctor = lists[k]->ctors[1];
    Expr *e = ir_expr_new(m, EXPR_MATCH, NOSPAN);
    e->u.match.scrut = var(m, "xs");
    e->u.match.complete = true;
    e->u.match.nclauses = 2;
    e->u.match.clauses = ARENA_ARRAY(m->arena, Clause, 2);
    e->u.match.clauses[0] = (Clause){pc, h};
    e->u.match.clauses[1] = (Clause){pn, i32(m, 0)};
    ms[k] = e;
  }
  CHECK(ir_expr_equal(ms[0], ms[1]));
  ms[1]->u.match.complete = false;
  CHECK(!ir_expr_equal(ms[0], ms[1]));
  ms[1]->u.match.complete = true;
  ms[1]->u.match.clauses[0].body = var(b, "head");  /* a free var, not the pattern's */
  CHECK(!ir_expr_equal(ms[0], ms[1]));
  /* Constructors by name. */
  Expr *c1 = ir_expr_new(a, EXPR_CTOR, NOSPAN), *c2 = ir_expr_new(b, EXPR_CTOR, NOSPAN);
  c1->u.ctor.ctor = la->ctors[0], c2->u.ctor.ctor = lb->ctors[0];
  CHECK(ir_expr_equal(c1, c2));
  c2->u.ctor.ctor = lb->ctors[1];
  CHECK(!ir_expr_equal(c1, c2));
  /* A different ctor field type: not equal modules. */
  lb->ctors[0]->fields[0] = tvar(b, "Other");
  CHECK(!ir_module_equal(a, b));
  module_free(a);
  module_free(b);
}

static void test_module_equal(void) {
  Module *a = module_new(), *b = module_new();
  /* a: def @f(%x) { @g(%x) }  def @g(%y) { %y }; b: same defs, other order
  ** and names of params. */
  Expr *x = var(a, "x"), *y = var(a, "y");
  add_def(a, "g", func(a, list(a, 1, y), 1, y));
  add_def(a, "f", func(a, list(a, 1, x), 1, gcall(a, "g", 1, list(a, 1, x))));
  Expr *p = var(b, "p"), *q = var(b, "q");
  add_def(b, "f", func(b, list(b, 1, p), 1, gcall(b, "g", 1, list(b, 1, p))));
  add_def(b, "g", func(b, list(b, 1, q), 1, q));
  CHECK(ir_module_equal(a, b));
  CHECK(ir_module_equal(a, a));
  b->defs[1]->func->u.func.body = i32(b, 0);
  CHECK(!ir_module_equal(a, b));
  module_free(b);
  /* Different def names. */
  b = module_new();
  Expr *r = var(b, "r"), *s = var(b, "s");
  add_def(b, "f", func(b, list(b, 1, r), 1, gcall(b, "g", 1, list(b, 1, r))));
  add_def(b, "h", func(b, list(b, 1, s), 1, s));
  CHECK(!ir_module_equal(a, b));
  module_free(a);
  module_free(b);
  /* Expression modules: free vars matched by position. */
  a = module_new(), b = module_new();
  Expr *fa = var(a, "a"), *fb = var(b, "b");
  a->free_vars = list(a, 1, fa), a->nfree_vars = 1, a->expr = tuple2(a, fa, fa);
  b->free_vars = list(b, 1, fb), b->nfree_vars = 1, b->expr = tuple2(b, fb, fb);
  CHECK(ir_module_equal(a, b));
  b->expr = tuple2(b, fb, var(b, "b"));
  CHECK(!ir_module_equal(a, b));
  module_free(a);
  module_free(b);
}

static Expr *rename_leaf(Rewriter *rw, Expr *e) {
  return e->kind == EXPR_VAR ? var(rw->m, "other") : e;
}

enum { LONG_CHAIN = 200000 };

static WalkResult count_visit(Walker *w, Expr *e) {
  (void)e;
  (*(int *)w->data)++;
  return WALK_CONTINUE;
}

static void test_long_chain(void) {
  Module *a = module_new(), *b = module_new();
  Expr *ca = let_chain(a, LONG_CHAIN, NULL), *cb = let_chain(b, LONG_CHAIN, NULL);
  CHECK(ir_expr_equal(ca, cb));
  Expr *cc = let_chain(b, LONG_CHAIN, i32(b, 7));
  CHECK(!ir_expr_equal(ca, cc));
  int n = 0;
  Walker w = {count_visit, &n};
  CHECK(ir_walk(&w, ca));
  CHECK_EQ(n, 2 * LONG_CHAIN + 1);  /* lets, vars, one constant */
  a->expr = ca;
  Diag d;
  diag_init(&d, NULL);
  CHECK(ir_verify(a, &d));
  CHECK_EQ(diag_count(&d), 0);
  diag_free(&d);
  /* Identity rewrite: same root. */
  Rewriter rw = {a, NULL, NULL, NULL};
  CHECK(ir_rewrite(&rw, ca) == ca);
  ExprVec po = {0};
  ir_postorder(ca, 0, &po);
  CHECK_EQ(po.len, 2 * LONG_CHAIN + 1);  /* lets, vars (as values and the last body), the constant */
  CHECK(po.len && po.data[po.len - 1] == ca);
  VEC_FREE(&po);
  /* 100,000 nested calls and tuples. */
  Expr *q = var(a, "q");
  add_def(a, "f", func(a, list(a, 1, q), 1, q));
  Expr *deep = var(a, "leaf");
  for (int i = 0; i < 100000; i++)
    deep = i % 2 ? gcall(a, "f", 1, list(a, 1, deep)) : ir_tuple(a, NOSPAN, list(a, 1, deep), 1);
  Expr *deep2 = var(b, "leaf");
  for (int i = 0; i < 100000; i++)
    deep2 = i % 2 ? gcall(b, "f", 1, list(b, 1, deep2)) : ir_tuple(b, NOSPAN, list(b, 1, deep2), 1);
  CHECK(ir_expr_equal(deep, deep2));
  n = 0;
  CHECK(ir_walk(&w, deep));
  CHECK_EQ(n, 100000 + 50000 + 1);  /* tuples and calls, globals, the leaf */
  a->expr = deep;
  diag_init(&d, NULL);
  CHECK(!ir_verify(a, &d));  /* %leaf is not bound */
  CHECK_EQ(diag_count(&d), 1);
  diag_free(&d);
  Rewriter rn = {a, NULL, rename_leaf, NULL};
  Expr *renamed = ir_rewrite(&rn, deep);
  CHECK(renamed != deep && !ir_expr_equal(renamed, deep));
  CHECK(ir_rewrite(&rw, deep) == deep);
  module_free(a);
  module_free(b);
}

/* {==== Walker ====} */

typedef struct Trace {
  int n;
  uint32_t ids[64];
  int abort_after;
} Trace;

static WalkResult trace_visit(Walker *w, Expr *e) {
  Trace *t = w->data;
  if (t->n < 64) t->ids[t->n] = e->id;
  t->n++;
  if (t->abort_after && t->n >= t->abort_after) return WALK_ABORT;
  return e->kind == EXPR_FUNC ? WALK_PRUNE : WALK_CONTINUE;
}

static void test_walker(void) {
  Module *m = module_new();
  /* let %x = 1; (%x, fn(%p) { %p }, %x) */
  Expr *x = var(m, "x"), *one = i32(m, 1), *p = var(m, "p");
  Expr *fn = func(m, list(m, 1, p), 1, p);
  Expr *t = ir_tuple(m, NOSPAN, list(m, 3, x, fn, x), 3);
  Expr *root = let(m, x, one, t);
  Trace tr = {0};
  Walker w = {trace_visit, &tr};
  CHECK(ir_walk(&w, root));
  CHECK_EQ(tr.n, 5);  /* let, x, 1, tuple, fn (pruned: not p) */
  CHECK_EQ(tr.ids[0], root->id);
  CHECK_EQ(tr.ids[1], x->id);
  CHECK_EQ(tr.ids[2], one->id);
  CHECK_EQ(tr.ids[3], t->id);
  CHECK_EQ(tr.ids[4], fn->id);
  Trace ab = {0};
  ab.abort_after = 2;
  Walker wa = {trace_visit, &ab};
  CHECK(!ir_walk(&wa, root));
  CHECK_EQ(ab.n, 2);
  CHECK(ir_walk(&w, NULL));
  module_free(m);
}

/* {==== Rewriter ====} */

typedef struct Subst {
  Expr *from, *to;
  int posts;
} Subst;

static Expr *subst_post(Rewriter *rw, Expr *e) {
  Subst *s = rw->data;
  s->posts++;
  return e == s->from ? s->to : e;
}

static Expr *skip_funcs(Rewriter *rw, Expr *e) {
  (void)rw;
  return e->kind == EXPR_FUNC ? REWRITE_SKIP : e;
}

static Expr *const_to_two(Rewriter *rw, Expr *e) {
  if (e->kind == EXPR_CONST) return i32(rw->m, 2);
  return e;
}

static Expr *funcs_to_zero(Rewriter *rw, Expr *e) {
  return e->kind == EXPR_FUNC ? i32(rw->m, 0) : e;
}

static Expr *count_posts(Rewriter *rw, Expr *e) {
  (*(int *)rw->data)++;
  return e;
}

static void test_rewriter(void) {
  Module *m = module_new();
  /* let %x = 1; %s = @f(%x, %x); (%s, %s, @g(%k)) */
  Expr *x = var(m, "x"), *k = var(m, "k");
  Expr *s = gcall(m, "f", 2, list(m, 2, x, x));
  Expr *untouched = gcall(m, "g", 1, list(m, 1, k));
  Expr *t = ir_tuple(m, NOSPAN, list(m, 3, s, s, untouched), 3);
  Expr *root = let(m, x, i32(m, 1), t);
  Expr *y = var(m, "y");
  Subst sub = {x, y, 0};
  Rewriter rw = {m, NULL, subst_post, &sub};
  Expr *r = ir_rewrite(&rw, root);
  CHECK(r != root);
  CHECK(r->kind == EXPR_LET && r->u.let.var == y);
  Expr *nt = r->u.let.body;
  CHECK(nt != t && nt->kind == EXPR_TUPLE);
  Expr *ns = nt->u.tuple.fields[0];
  CHECK(ns == nt->u.tuple.fields[1]);  /* sharing kept */
  CHECK(ns != s && ns->u.call.args[0] == y && ns->u.call.args[1] == y);
  CHECK(ns->u.call.callee == s->u.call.callee);  /* unchanged child shared */
  CHECK(nt->u.tuple.fields[2] == untouched);
  CHECK(ns->id >= root->id && ns->span.line == s->span.line && ns->type == NULL);
  /* Every node once: let, 1, x, tuple, call, @f, @g call, @g, k. */
  CHECK_EQ(sub.posts, 9);
  /* The original is unchanged and the results differ only in names. */
  CHECK(t->u.tuple.fields[0] == s && s->u.call.args[0] == x);
  CHECK(ir_expr_equal(r, root));

  /* A non-var replacement of a var: uses change, the binder stays. */
  Expr *c = i32(m, 9);
  Subst sub2 = {x, c, 0};
  Rewriter rw2 = {m, NULL, subst_post, &sub2};
  Expr *r2 = ir_rewrite(&rw2, root);
  CHECK(r2->u.let.var == x);
  CHECK(r2->u.let.body->u.tuple.fields[0]->u.call.args[0] == c);

  /* pre: REWRITE_SKIP keeps a function whole. */
  Expr *fn = func(m, list(m, 1, var(m, "p")), 1, i32(m, 1));
  Expr *pair = tuple2(m, fn, i32(m, 1));
  Rewriter rw3 = {m, skip_funcs, const_to_two, NULL};
  Expr *r3 = ir_rewrite(&rw3, pair);
  CHECK(r3 != pair && r3->u.tuple.fields[0] == fn);
  CHECK(r3->u.tuple.fields[1]->kind == EXPR_CONST && *(int32_t *)r3->u.tuple.fields[1]->u.constant.value->data == 2);

  /* Rewriting a function's params and a match's pattern vars. */
  Expr *pp = var(m, "p");
  Expr *f2 = func(m, list(m, 1, pp), 1, pp);
  Expr *pq = var(m, "q");
  Subst sub4 = {pp, pq, 0};
  Rewriter rw4 = {m, NULL, subst_post, &sub4};
  Expr *r4 = ir_rewrite(&rw4, f2);
  CHECK(r4 != f2 && r4->u.func.params[0] == pq && r4->u.func.body == pq);
  CHECK(f2->u.func.params[0] == pp);

  Expr *h = var(m, "h");
  Pattern *pv = ir_pattern_new(m, PAT_VAR, NOSPAN);
  pv->u.var.var = h;
  Pattern *pt = ir_pattern_new(m, PAT_TUPLE, NOSPAN);
  pt->u.tuple.n = 2;
  pt->u.tuple.fields = ARENA_ARRAY(m->arena, Pattern *, 2);
  pt->u.tuple.fields[0] = ir_pattern_new(m, PAT_WILDCARD, NOSPAN);
  pt->u.tuple.fields[1] = pv;
  Expr *mt = ir_expr_new(m, EXPR_MATCH, NOSPAN);
  mt->u.match.scrut = var(m, "z");
  mt->u.match.nclauses = 1;
  mt->u.match.clauses = ARENA_ARRAY(m->arena, Clause, 1);
  mt->u.match.clauses[0] = (Clause){pt, h};
  Expr *h2 = var(m, "h2");
  Subst sub5 = {h, h2, 0};
  Rewriter rw5 = {m, NULL, subst_post, &sub5};
  Expr *r5 = ir_rewrite(&rw5, mt);
  CHECK(r5 != mt);
  Pattern *np = r5->u.match.clauses[0].pat;
  CHECK(np != pt && np->u.tuple.fields[0] == pt->u.tuple.fields[0]);
  CHECK(np->u.tuple.fields[1]->u.var.var == h2 && r5->u.match.clauses[0].body == h2);
  CHECK(pv->u.var.var == h);

  /* pre returning a replacement: neither descended into nor post-visited. */
  Rewriter rw6 = {m, funcs_to_zero, count_posts, NULL};
  int posts = 0;
  rw6.data = &posts;
  Expr *r6 = ir_rewrite(&rw6, pair);
  CHECK(r6 != pair && r6->u.tuple.fields[0]->kind == EXPR_CONST);
  CHECK(r6->u.tuple.fields[1] == pair->u.tuple.fields[1]);
  CHECK_EQ(posts, 2);  /* the constant and the tuple */
  CHECK(ir_rewrite(&rw3, NULL) == NULL);
  module_free(m);
}

static void test_postorder(void) {
  Module *m = module_new();
  /* %0 = @f(%x); %1 = (%0, %0); if (%c) { fn(%p) { %p } } else { %1.0 } */
  Expr *x = var(m, "x"), *c = var(m, "c"), *p = var(m, "p");
  Expr *e0 = gcall(m, "f", 1, list(m, 1, x));
  Expr *e1 = tuple2(m, e0, e0);
  Expr *fn = func(m, list(m, 1, p), 1, p);
  Expr *g = ir_get_item(m, NOSPAN, e1, 0);
  Expr *iff = ir_expr_new(m, EXPR_IF, NOSPAN);
  iff->u.if_.cond = c, iff->u.if_.then_ = fn, iff->u.if_.else_ = g;
  Expr *root = tuple2(m, e1, iff);
  ExprVec po = {0};
  ir_postorder(root, 0, &po);
  /* @f, %x, call, tuple, %c, if, root: branches are other scopes. */
  CHECK_EQ(po.len, 7);
  if (po.len == 7) {
    CHECK(po.data[0] == e0->u.call.callee);
    CHECK(po.data[1] == x);
    CHECK(po.data[2] == e0);
    CHECK(po.data[3] == e1);
    CHECK(po.data[4] == c);
    CHECK(po.data[5] == iff);
    CHECK(po.data[6] == root);
  }
  po.len = 0;
  ir_postorder(fn, 0, &po);
  CHECK_EQ(po.len, 1);
  VEC_FREE(&po);
  module_free(m);
}

/* {==== Verifier ====} */

static const AttrField fake_fields[] = {
    {.name = "axis", .kind = AK_INT, .nullable = false, .def = "0"},
};
static const AttrsClass fake_cls = {.name = "FakeAttrs", .fields = fake_fields, .nfields = 1};
static const OpDef fake_add = {.id = (OpId)0, .name = "fake_add", .nargs = 2, .attrs = NULL,
                               .pattern = OPP_BROADCAST};
static const OpDef fake_sum = {.id = (OpId)0, .name = "fake_sum", .nargs = 1, .attrs = &fake_cls,
                               .pattern = OPP_COMM_REDUCE};

/* Runs the verifier; returns the number of errors; first message in msg. */
static int verify_errors(Module *m, char *msg, size_t cap) {
  Diag d;
  diag_init(&d, NULL);
  bool ok = ir_verify(m, &d);
  int n = diag_count(&d);
  CHECK(ok == (n == 0));
  if (msg) snprintf(msg, cap, "%s", d.items.len ? d.items.data[0].msg : "");
  diag_free(&d);
  return n;
}

static Expr *op_call(Module *m, const OpDef *op, Expr **args, int nargs, Attrs *attrs) {
  return ir_call(m, NOSPAN, ir_op(m, NOSPAN, op), args, nargs, attrs);
}

static Attrs *class_attrs(Module *m, const AttrsClass *cls, int n) {
  Attrs *a = ARENA_NEW(m->arena, Attrs);
  a->cls = cls;
  a->n = n;
  a->values = ARENA_ARRAY(m->arena, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) a->values[i] = av_int(m, 0, 32);
  return a;
}

static void test_verify(void) {
  char msg[256];
  Module *m = module_new();
  /* def @main(%x) { let %y = fake_add(%x, %x); fake_sum(%y, axis=0) } */
  Expr *x = var(m, "x"), *y = var(m, "y");
  Expr *body = let(m, y, op_call(m, &fake_add, list(m, 2, x, x), 2, NULL),
                   op_call(m, &fake_sum, list(m, 1, y), 1, class_attrs(m, &fake_cls, 1)));
  add_def(m, "main", func(m, list(m, 1, x), 1, body));
  add_def(m, "g", func(m, NULL, 0, gcall(m, "main", 1, list(m, 1, i32(m, 1)))));
  add_list_type(m, "A");
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 0);
  module_free(m);

  /* Unbound variable. */
  m = module_new();
  Expr *free_z = var(m, "z");
  add_def(m, "main", func(m, list(m, 1, var(m, "x")), 1, tuple2(m, free_z, free_z)));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);  /* once per variable */
  CHECK(strstr(msg, "%z") && strstr(msg, "not bound"));
  /* A diagnostics list already full of earlier errors still fails. */
  Diag full;
  diag_init(&full, NULL);
  for (int i = 0; i < 25; i++) diag_error(&full, NOSPAN, "earlier error %d", i);
  CHECK(!ir_verify(m, &full));
  diag_free(&full);
  /* ... fine when it is a free var of the module. */
  m->free_vars = list(m, 1, free_z), m->nfree_vars = 1;
  CHECK_EQ(verify_errors(m, NULL, 0), 0);
  module_free(m);

  /* Used outside its scope, bound twice. */
  m = module_new();
  Expr *v = var(m, "v");
  m->expr = tuple2(m, let(m, v, i32(m, 1), v), v);
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "outside the scope") != NULL);
  m->expr = let(m, v, i32(m, 1), let(m, v, i32(m, 2), v));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "bound twice") != NULL);
  /* A shared node reached twice is fine. */
  Expr *w = var(m, "w");
  Expr *sh = let(m, w, i32(m, 1), w);
  m->expr = tuple2(m, sh, sh);
  CHECK_EQ(verify_errors(m, NULL, 0), 0);
  module_free(m);

  /* Operator arity and attrs class. */
  m = module_new();
  Expr *a = var(m, "a");
  m->free_vars = list(m, 1, a), m->nfree_vars = 1;
  m->expr = op_call(m, &fake_add, list(m, 1, a), 1, NULL);
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "fake_add") && strstr(msg, "1 arguments"));
  m->expr = op_call(m, &fake_sum, list(m, 1, a), 1, NULL);
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "FakeAttrs") != NULL);
  m->expr = op_call(m, &fake_sum, list(m, 1, a), 1, class_attrs(m, &fake_cls, 2));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  m->expr = op_call(m, &fake_add, list(m, 2, a, a), 2, class_attrs(m, &fake_cls, 1));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  m->expr = op_call(m, &fake_add, list(m, 2, a, a), 2, generic_attrs(m, "k", av_int(m, 1, 32)));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  /* Negative projection, unknown global, bad ids. */
  m->expr = ir_get_item(m, NOSPAN, tuple2(m, a, a), -1);
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  m->expr = global(m, "nowhere");
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  Expr *k1 = i32(m, 1), *k2 = i32(m, 2);
  k2->id = k1->id;
  m->expr = tuple2(m, k1, k2);
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "already used") != NULL);
  k2->id = m->nexprs + 5;
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  /* Function params must be vars. */
  m->expr = func(m, list(m, 1, i32(m, 0)), 1, i32(m, 0));
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  module_free(m);

  /* Constructors: tag, pattern arity. */
  m = module_new();
  TypeDef *list_t = add_list_type(m, "A");
  Expr *ce = ir_expr_new(m, EXPR_CTOR, NOSPAN);
  ce->u.ctor.ctor = list_t->ctors[1];
  m->expr = ce;
  CHECK_EQ(verify_errors(m, NULL, 0), 0);
  Pattern *pc = ir_pattern_new(m, PAT_CTOR, NOSPAN);
  pc->u.ctor.ctor = list_t->ctors[0];  /* Cons with no fields: arity 0 != 2 */
  Expr *mt = ir_expr_new(m, EXPR_MATCH, NOSPAN);
  mt->u.match.scrut = ce;
  mt->u.match.nclauses = 1;
  mt->u.match.clauses = ARENA_ARRAY(m->arena, Clause, 1);
  mt->u.match.clauses[0] = (Clause){pc, i32(m, 0)};
  m->expr = mt;
  CHECK_EQ(verify_errors(m, msg, sizeof msg), 1);
  CHECK(strstr(msg, "Cons") != NULL);
  list_t->ctors[1]->tag = 0;
  CHECK(verify_errors(m, NULL, 0) >= 2);  /* the ADT and the node */
  list_t->ctors[1]->tag = 1;
  /* A pattern var is in scope in its clause body only. */
  Expr *hv = var(m, "h");
  Pattern *ph = ir_pattern_new(m, PAT_VAR, NOSPAN);
  ph->u.var.var = hv;
  mt->u.match.clauses[0] = (Clause){ph, hv};
  m->expr = mt;
  CHECK_EQ(verify_errors(m, NULL, 0), 0);
  m->expr = tuple2(m, mt, hv);
  CHECK_EQ(verify_errors(m, NULL, 0), 1);
  module_free(m);
}

int main(void) {
  test_alpha();
  test_differences();
  test_attr_values();
  test_bijection();
  test_types();
  test_dag();
  test_match();
  test_module_equal();
  test_long_chain();
  test_walker();
  test_rewriter();
  test_postorder();
  test_verify();
  return check_report("test_ir");
}
