/* test_print.c: the text printer on hand-built IR: scalar literals of
** every dtype (exactness), attribute values and string escapes, types,
** graph-normal form (numbering, sharing, scopes), let/if/match/ref/tuple/
** projection, variable renaming, attributes, metadata references, type
** comments, definition order, and a 100,000-long let chain and dataflow
** chain (no deep recursion). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ir/ir.h"
#include "ops/ops.h"

static Module *M;
static const Span SP = {0, 0, 0, 0};
#define F32 DTYPE(DT_FLOAT, 32)
#define HDR "#[version = \"0.0.5\"]\n"

static const OpDef op_add = {(OpId)0, "add", 2, NULL, OPP_BROADCAST};
static const OpDef op_mul = {(OpId)0, "multiply", 2, NULL, OPP_BROADCAST};
static const OpDef op_less = {(OpId)0, "less", 2, NULL, OPP_BROADCAST};

/* A schema of our own, so the test does not depend on the op table. */
static const AttrField test_fields[] = {
    {"axis", AK_INT, false, "1"},
    {"layout", AK_STR, false, "\"NCHW\""},
    {"units", AK_INT, true, NULL},
};
static const AttrsClass test_cls = {"TestAttrs", test_fields, 3};
static const OpDef op_test = {(OpId)0, "nn.test", 1, &test_cls, OPP_OPAQUE};

/* {==== Builders ====} */

static Symbol *S(const char *s) { return sym_intern_cstr(&M->syms, s); }

static Expr **list(int n, va_list ap) {
  Expr **a = n ? ARENA_ARRAY(M->arena, Expr *, n) : NULL;
  for (int i = 0; i < n; i++) a[i] = va_arg(ap, Expr *);
  return a;
}

static Expr *var(const char *name, Type *annot) { return ir_var(M, SP, name ? S(name) : NULL, annot); }
static Expr *op(const OpDef *o) { return ir_op(M, SP, o); }

static Expr *call(Expr *callee, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr **a = list(n, ap);
  va_end(ap);
  return ir_call(M, SP, callee, a, n, NULL);
}

static Expr *call2(const OpDef *o, Expr *a, Expr *b) { return call(op(o), 2, a, b); }

static Expr *tuple(int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr **a = list(n, ap);
  va_end(ap);
  return ir_tuple(M, SP, a, n);
}

static Expr *fn(Expr *body, Type *ret, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Expr **a = list(n, ap);
  va_end(ap);
  Expr *f = ir_expr_new(M, EXPR_FUNC, SP);
  f->u.func.params = a;
  f->u.func.nparams = n;
  f->u.func.body = body;
  f->u.func.ret = ret;
  return f;
}

static Expr *iff(Expr *c, Expr *t, Expr *e) {
  Expr *x = ir_expr_new(M, EXPR_IF, SP);
  x->u.if_.cond = c;
  x->u.if_.then_ = t;
  x->u.if_.else_ = e;
  return x;
}

static Expr *unary(ExprKind k, Expr *a) {
  Expr *x = ir_expr_new(M, k, SP);
  if (k == EXPR_REF_NEW) x->u.ref_new.value = a;
  else x->u.ref_read.ref = a;
  return x;
}

static Expr *f32(float v) { return ir_const_scalar(M, SP, F32, &v); }
static Expr *i32(int32_t v) { return ir_const_scalar(M, SP, DTYPE(DT_INT, 32), &v); }

static Type *tensor(DType dt, int ndim, const int64_t *shape) { return ir_tensor_type(M, SP, dt, ndim, shape); }
static Type *f32t(void) { return tensor(F32, 0, NULL); }

static Type *tvar(const char *name) {
  Type *t = ir_type_new(M, TYPE_VAR, SP);
  t->u.var.name = S(name);
  return t;
}

static Type **types(int n, ...) {
  va_list ap;
  va_start(ap, n);
  Type **a = ARENA_ARRAY(M->arena, Type *, n ? n : 1);
  for (int i = 0; i < n; i++) a[i] = va_arg(ap, Type *);
  va_end(ap);
  return a;
}

static Type *tcall(const char *name, int n, Type **args) {
  Type *t = ir_type_new(M, TYPE_CALL, SP);
  t->u.call.name = S(name);
  t->u.call.args = args;
  t->u.call.nargs = n;
  return t;
}

static void add_def(const char *name, Expr *f) {
  GlobalDef *d = ARENA_NEW(M->arena, GlobalDef);
  d->name = S(name);
  d->func = f;
  GlobalDef **defs = ARENA_ARRAY(M->arena, GlobalDef *, M->ndefs + 1);
  if (M->ndefs) memcpy(defs, M->defs, sizeof(GlobalDef *) * (size_t)M->ndefs);
  defs[M->ndefs++] = d;
  M->defs = defs;
}

static void add_type(TypeDef *td) {
  TypeDef **ts = ARENA_ARRAY(M->arena, TypeDef *, M->ntypes + 1);
  if (M->ntypes) memcpy(ts, M->types, sizeof(TypeDef *) * (size_t)M->ntypes);
  ts[M->ntypes++] = td;
  M->types = ts;
}

static void fresh(void) {
  module_free(M);
  M = module_new();
}

/* The module's text (malloc'd). */
static char *print_opts(bool show_types, bool show_metadata) {
  PrintOptions o = {show_types, show_metadata};
  StrBuf sb = {0};
  ir_print_module(&sb, M, &o);
  char *s = strdup(sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* Checks the module's text (without metadata) against want. */
#define CHECK_MODULE(want)                                                    \
  do {                                                                        \
    char *got_ = print_opts(false, false);                                    \
    CHECK_STR(got_, want);                                                    \
    free(got_);                                                               \
  } while (0)

/* Text of an expression module whose expression is e (no free vars),
** without the version line. */
static char *expr_text(Expr *e) {
  M->expr = e;
  char *s = print_opts(false, false);
  size_t h = strlen(HDR);
  memmove(s, s + h, strlen(s) - h + 1);
  M->expr = NULL;
  return s;
}

#define CHECK_EXPR(e, want)                                                   \
  do {                                                                        \
    char *got_ = expr_text(e);                                                \
    CHECK_STR(got_, want);                                                    \
    free(got_);                                                               \
  } while (0)

static char *attr_text(const AttrValue *v) {
  StrBuf sb = {0};
  ir_print_attr_value(&sb, v);
  char *s = strdup(sb_str(&sb));
  sb_free(&sb);
  return s;
}

#define CHECK_ATTR(v, want)                                                   \
  do {                                                                        \
    char *got_ = attr_text(v);                                                \
    CHECK_STR(got_, want);                                                    \
    free(got_);                                                               \
  } while (0)

static char *type_text(const Type *t) {
  StrBuf sb = {0};
  ir_print_type(&sb, t);
  char *s = strdup(sb_str(&sb));
  sb_free(&sb);
  return s;
}

#define CHECK_TYPE(t, want)                                                   \
  do {                                                                        \
    char *got_ = type_text(t);                                                \
    CHECK_STR(got_, want);                                                    \
    free(got_);                                                               \
  } while (0)

/* {==== Scalars ====} */

static Expr *scalar(DType dt, const void *v) { return ir_const_scalar(M, SP, dt, v); }

static void test_scalars(void) {
  fresh();
  int32_t i5 = 5, im5 = -5, imin = INT32_MIN;
  int64_t l5 = 5, lneg = -9223372036854775807LL, lmin = INT64_MIN;
  int16_t s5 = 5, sneg = -42, smin = INT16_MIN;
  uint8_t t = 1, f = 0, u8 = 7;
  int8_t i8 = 3;
  CHECK_EXPR(scalar(DTYPE(DT_INT, 32), &i5), "5\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 32), &im5), "-5\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 64), &l5), "5i64\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 64), &lneg), "-9223372036854775807i64\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 16), &s5), "5i16\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 16), &sneg), "-42i16\n");
  CHECK_EXPR(scalar(DTYPE(DT_UINT, 1), &t), "True\n");
  CHECK_EXPR(scalar(DTYPE(DT_UINT, 1), &f), "False\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 32), &imin), "-2147483648\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 16), &smin), "-32768i16\n");
  /* No literal: the metadata table takes them. */
  CHECK_EXPR(scalar(DTYPE(DT_INT, 64), &lmin), "meta[relay.Constant][0]\n");
  CHECK_EXPR(scalar(DTYPE(DT_UINT, 8), &u8), "meta[relay.Constant][0]\n");
  CHECK_EXPR(scalar(DTYPE(DT_INT, 8), &i8), "meta[relay.Constant][0]\n");

  /* float32: shortest of %.6g / %.9g that reads back exactly. */
  fresh();
  CHECK_EXPR(f32(1.0f), "1f\n");
  CHECK_EXPR(f32(0.5f), "0.5f\n");
  CHECK_EXPR(f32(-2.5f), "-2.5f\n");
  CHECK_EXPR(f32(0.0f), "0f\n");
  CHECK_EXPR(f32(-0.0f), "-0f\n");
  CHECK_EXPR(f32(1e-5f), "1e-05f\n");
  CHECK_EXPR(f32(0.1f), "0.1f\n");
  CHECK_EXPR(f32(16777217.0f), "16777216f\n");
  CHECK_EXPR(f32(0.1234567f), "0.123456702f\n");
  CHECK_EXPR(f32(1e20f), "1e+20f\n");
  CHECK_EXPR(f32(3.4028234663852886e38f), "3.4028234663852886e+38f\n"); /* %.9g is > FLT_MAX */
  CHECK_EXPR(f32(-3.4028234663852886e38f), "-3.4028234663852886e+38f\n");
  CHECK_EXPR(f32(3.40282326e38f), "3.40282326e+38f\n");
  CHECK_EXPR(f32(INFINITY), "inff\n");
  CHECK_EXPR(f32(-INFINITY), "-inff\n");
  CHECK_EXPR(f32(NAN), "meta[relay.Constant][0]\n");
  /* Every printed float32 reads back to its bits. */
  uint32_t seed = 12345;
  int exact = 0;
  for (int i = 0; i < 2000; i++) {
    seed = seed * 1664525u + 1013904223u;
    uint32_t bits = seed;
    float v;
    memcpy(&v, &bits, sizeof v);
    if (isnan(v) || isinf(v)) continue;
    char *s = expr_text(f32(v));
    float back = strtof(s, NULL);
    exact += memcmp(&back, &v, sizeof v) == 0;
    if (memcmp(&back, &v, sizeof v) != 0) fprintf(stderr, "inexact: %s\n", s);
    free(s);
  }
  CHECK(exact > 1900);

  /* float16 (IEEE half bits) and float64. */
  fresh();
  uint16_t h3 = 0x4200, hthird = 0x3555, hmax = 0x7bff, hinf = 0x7c00, hneg = 0xc100, hsub = 0x0001;
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &h3), "3f16\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &hthird), "0.333252f16\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &hmax), "65504f16\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &hneg), "-2.5f16\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &hsub), "5.96046e-08f16\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 16), &hinf), "meta[relay.Constant][0]\n");
  double d2 = 2, dtenth = 0.1, dthird = 1.0 / 3, dinf = INFINITY;
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 64), &d2), "2f64\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 64), &dtenth), "0.1f64\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 64), &dthird), "0.33333333333333331f64\n");
  double dmax = 1.7976931348623157e308;
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 64), &dmax), "1.7976931348623157e+308f64\n");
  CHECK_EXPR(scalar(DTYPE(DT_FLOAT, 64), &dinf), "meta[relay.Constant][0]\n");
  uint16_t bf = 0x3f80;
  CHECK_EXPR(scalar(DTYPE(DT_BFLOAT, 16), &bf), "meta[relay.Constant][0]\n");
}

/* {==== Attribute values ====} */

static AttrValue *av(AttrValueKind k) { return ir_attr_value_new(M, k, SP); }
static AttrValue *av_int(int64_t v, uint8_t bits) {
  AttrValue *a = av(AV_INT);
  a->u.i.v = v;
  a->u.i.bits = bits;
  return a;
}
static AttrValue *av_float(double v, uint8_t bits) {
  AttrValue *a = av(AV_FLOAT);
  a->u.f.v = v;
  a->u.f.bits = bits;
  return a;
}
static AttrValue *av_str(const char *s, size_t n) {
  AttrValue *a = av(AV_STR);
  a->u.str.s = s;
  a->u.str.len = n;
  return a;
}
static AttrValue *av_arr(int n, ...) {
  va_list ap;
  va_start(ap, n);
  AttrValue *a = av(AV_ARRAY);
  a->u.arr.n = n;
  a->u.arr.items = ARENA_ARRAY(M->arena, AttrValue *, n ? n : 1);
  for (int i = 0; i < n; i++) a->u.arr.items[i] = va_arg(ap, AttrValue *);
  va_end(ap);
  return a;
}

static void test_attr_values(void) {
  fresh();
  CHECK_ATTR(av_int(3, 32), "3");
  CHECK_ATTR(av_int(-1, 0), "-1");
  CHECK_ATTR(av_int(3, 64), "3i64");
  CHECK_ATTR(av_int(-3, 16), "-3i16");
  CHECK_ATTR(av_float(1e-5, 32), "1e-05f");
  CHECK_ATTR(av_float(0.25, 32), "0.25f");
  CHECK_ATTR(av_float(0, 32), "0f");
  CHECK_ATTR(av_float(-INFINITY, 32), "-inff");
  CHECK_ATTR(av_float(INFINITY, 64), "inff");
  CHECK_ATTR(av_float(2, 64), "2f64");
  CHECK_ATTR(av_float(0.5, 16), "0.5f16");
  CHECK_ATTR(av_float(0.797885, 32), "0.797885f");
  CHECK_ATTR(av_float((double)0.1f, 32), "0.10000000149011612f"); /* exact double */
  CHECK_ATTR(av_float(0.7978845608, 32), "0.79788456080000003f"); /* exact double */
  AttrValue *b = av(AV_BOOL);
  b->u.b = true;
  CHECK_ATTR(b, "True");
  b = av(AV_BOOL);
  CHECK_ATTR(b, "False");
  CHECK_ATTR(av(AV_NONE), "None");
  CHECK_ATTR(av_str("NCHW", 4), "\"NCHW\"");
  CHECK_ATTR(av_str("", 0), "\"\"");
  CHECK_ATTR(av_str("a\"b\\c\n\t\r\x01\x7f\xc3\xa9z", 13), "\"a\\\"b\\\\c\\n\\t\\r\\x01\\x7F\\xC3\\xA9z\"");
  CHECK_ATTR(av_str("a\0b", 3), "\"a\\x00b\"");
  CHECK_ATTR(av_arr(2, av_int(1, 32), av_int(1, 32)), "[1, 1]");
  CHECK_ATTR(av_arr(0), "[]");
  CHECK_ATTR(av_arr(2, av_arr(2, av_int(0, 32), av_int(0, 32)), av_arr(2, av_int(1, 64), av_int(1, 64))),
             "[[0, 0], [1i64, 1i64]]");
  CHECK_ATTR(av_arr(2, av_float(0, 32), av(AV_NONE)), "[0f, None]");
  AttrValue *mv = av(AV_META);
  mv->u.meta.key = S("VirtualDevice");
  mv->u.meta.index = 2;
  CHECK_ATTR(mv, "meta[VirtualDevice][2]");
  AttrValue *ev = av(AV_EXPR);
  ev->u.expr = ir_expr_new(M, EXPR_GLOBAL, SP);
  ev->u.expr->u.global.name = S("f");
  CHECK_ATTR(ev, "@f");
  ev = av(AV_EXPR);
  ev->u.expr = call2(&op_add, var("x", NULL), call2(&op_mul, var("y", NULL), f32(2)));
  CHECK_ATTR(ev, "add(%x, multiply(%y, 2f))");
}

/* {==== Types ====} */

static void test_types(void) {
  fresh();
  int64_t s13[] = {1, 3}, s5[] = {5}, sany[] = {RLY_DIM_ANY, 1};
  CHECK_TYPE(tensor(F32, 2, s13), "Tensor[(1, 3), float32]");
  CHECK_TYPE(tensor(F32, 1, s5), "Tensor[(5), float32]");
  CHECK_TYPE(tensor(DTYPE(DT_UINT, 16), 2, sany), "Tensor[(?, 1), uint16]");
  CHECK_TYPE(f32t(), "float32");
  CHECK_TYPE(tensor(DTYPE(DT_UINT, 1), 0, NULL), "bool");
  DType i8x4 = {DT_INT, 8, 4};
  CHECK_TYPE(tensor(i8x4, 0, NULL), "int8x4");
  CHECK_TYPE(tensor(DTYPE(DT_BFLOAT, 16), 0, NULL), "Tensor[(), bfloat16]");
  CHECK_TYPE(tensor(DTYPE(DT_BFLOAT, 16), 1, s5), "Tensor[(5), bfloat16]");

  Type *tup = ir_type_new(M, TYPE_TUPLE, SP);
  tup->u.tuple.fields = types(2, tvar("A"), f32t());
  tup->u.tuple.n = 2;
  CHECK_TYPE(tup, "(A, float32)");
  Type *tup1 = ir_type_new(M, TYPE_TUPLE, SP);
  tup1->u.tuple.fields = types(1, f32t());
  tup1->u.tuple.n = 1;
  CHECK_TYPE(tup1, "(float32,)");
  CHECK_TYPE(ir_type_new(M, TYPE_TUPLE, SP), "()");

  Type *ft = ir_type_new(M, TYPE_FUNC, SP);
  ft->u.func.params = types(2, f32t(), f32t());
  ft->u.func.nparams = 2;
  ft->u.func.ret = f32t();
  CHECK_TYPE(ft, "fn (float32, float32) -> float32");
  Type *ft0 = ir_type_new(M, TYPE_FUNC, SP);
  ft0->u.func.ret = tensor(DTYPE(DT_INT, 32), 0, NULL);
  CHECK_TYPE(ft0, "fn () -> int32");
  Type *a = tvar("A");
  Type *poly = ir_type_new(M, TYPE_FUNC, SP);
  poly->u.func.tparams = types(1, a);
  poly->u.func.ntparams = 1;
  poly->u.func.params = types(1, a);
  poly->u.func.nparams = 1;
  poly->u.func.ret = a;
  CHECK_TYPE(poly, "fn [A](A) -> A");

  CHECK_TYPE(tcall("List", 1, types(1, tvar("A"))), "List[A]");
  CHECK_TYPE(tcall("List", 1, types(1, tcall("Tree", 1, types(1, tvar("A"))))), "List[Tree[A]]");
  CHECK_TYPE(tcall("Storage", 0, NULL), "Storage");
  Type *r = ir_type_new(M, TYPE_REF, SP);
  r->u.ref.elem = f32t();
  CHECK_TYPE(r, "ref(float32)");
  CHECK_TYPE(ir_incomplete_type(M, SP), "_");
}

/* {==== Graph-normal form ====} */

static void test_gnf_sharing(void) {
  fresh();
  Expr *x = var("x", f32t());
  Expr *s = call2(&op_add, x, x);
  add_def("f", fn(call2(&op_mul, s, s), f32t(), 1, x));
  CHECK_MODULE(HDR
               "def @f(%x: float32) -> float32 {\n"
               "  %0 = add(%x, %x);\n"
               "  multiply(%0, %0)\n"
               "}\n");

  /* Arguments are printed before the callee (TVM's order). */
  fresh();
  Expr *y = var("y", NULL), *x2 = var("x", NULL);
  Expr *inner = call(fn(y, NULL, 1, y), 1, i32(1));
  CHECK_EXPR(call(fn(x2, NULL, 1, x2), 1, inner),
             "%0 = fn (%y) {\n"
             "  %y\n"
             "};\n"
             "%1 = %0(1);\n"
             "%2 = fn (%x) {\n"
             "  %x\n"
             "};\n"
             "%2(%1)\n");

  /* A let value used elsewhere is bound; a unique one is printed in place. */
  fresh();
  Expr *tup = tuple(2, i32(0), i32(0));
  Expr *lx = var("x", NULL);
  CHECK_EXPR(ir_let(M, SP, lx, tup, tup), "%0 = (0, 0);\nlet %x = %0;\n%0\n");
  Expr *lx2 = var("x", NULL);
  CHECK_EXPR(ir_let(M, SP, lx2, tuple(2, i32(0), i32(0)), lx2), "let %x = (0, 0);\n%x\n");

  /* Nested function: its body continues the numbering; function attrs. */
  fresh();
  Expr *p0 = var("p0", f32t()), *dx = var("x", f32t());
  Expr *prim = fn(call2(&op_mul, call2(&op_add, p0, p0), f32(2)), f32t(), 1, p0);
  Attrs *fa = ARENA_NEW(M->arena, Attrs);
  fa->n = 1;
  fa->keys = ARENA_ARRAY(M->arena, Symbol *, 1);
  fa->values = ARENA_ARRAY(M->arena, AttrValue *, 1);
  fa->keys[0] = S("Primitive");
  fa->values[0] = av_int(1, 32);
  prim->u.func.attrs = fa;
  add_def("main", fn(call(prim, 1, dx), NULL, 1, dx));
  CHECK_MODULE(HDR
               "def @main(%x: float32) {\n"
               "  %1 = fn (%p0: float32, Primitive=1) -> float32 {\n"
               "    %0 = add(%p0, %p0);\n"
               "    multiply(%0, 2f)\n"
               "  };\n"
               "  %1(%x)\n"
               "}\n");

  /* Curried call, deep nesting, tuple, projection of a bound tuple and of a
  ** tensor constant. */
  fresh();
  Expr *f = var("f", NULL), *a = var("a", NULL);
  int64_t shp[] = {2};
  ConstData *cd = ARENA_NEW(M->arena, ConstData);
  cd->dtype = F32;
  cd->ndim = 1;
  cd->shape = ARENA_ARRAY(M->arena, int64_t, 1);
  cd->shape[0] = shp[0];
  cd->nbytes = 8;
  cd->data = arena_alloc(M->arena, 8, 64);
  Expr *c = ir_const(M, SP, cd);
  Expr *t = tuple(2, a, call(call(f, 1, a), 1, a));
  Expr *body = tuple(3, ir_get_item(M, SP, t, 1), ir_get_item(M, SP, c, 0), tuple(1, c));
  add_def("g", fn(body, NULL, 2, f, a));
  CHECK_MODULE(HDR
               "def @g(%f, %a) {\n"
               "  %0 = %f(%a);\n"
               "  %1 = %0(%a);\n"
               "  %2 = (%a, %1);\n"
               "  %3 = %2.1;\n"
               "  %4 = meta[relay.Constant][0].0;\n"
               "  %5 = (meta[relay.Constant][0],);\n"
               "  (%3, %4, %5)\n"
               "}\n");
  /* Empty tuple, empty params, a scalar operand of a projection. */
  fresh();
  add_def("u", fn(tuple(2, tuple(0), ir_get_item(M, SP, i32(7), 0)), NULL, 0));
  CHECK_MODULE(HDR
               "def @u() {\n"
               "  %0 = ();\n"
               "  %1 = (7).0;\n"
               "  (%0, %1)\n"
               "}\n");
}

static void test_scopes(void) {
  /* A node used inside a branch and after the if is bound once, before
  ** the if (its home is the lowest scope that holds all its uses). */
  fresh();
  Expr *c = var("c", tensor(DTYPE(DT_UINT, 1), 0, NULL)), *x = var("x", f32t());
  Expr *s = call2(&op_add, x, x);
  add_def("a", fn(call2(&op_mul, iff(c, s, x), s), NULL, 2, c, x));
  CHECK_MODULE(HDR
               "def @a(%c: bool, %x: float32) {\n"
               "  %0 = add(%x, %x);\n"
               "  %1 = if (%c) {\n"
               "    %0\n"
               "  } else {\n"
               "    %x\n"
               "  };\n"
               "  multiply(%1, %0)\n"
               "}\n");
  /* Bound in the parent first: the branch refers to it. A condition that
  ** is not atomic is bound before the if; the branches' bindings are
  ** numbered before the if's own (inside first, as for functions). */
  fresh();
  c = var("c", NULL);
  x = var("x", f32t());
  s = call2(&op_add, x, x);
  Expr *cond = call2(&op_less, x, f32(1));
  Expr *then_ = call2(&op_mul, s, call2(&op_mul, x, x));
  add_def("b", fn(call2(&op_mul, s, iff(cond, then_, x)), NULL, 1, x));
  CHECK_MODULE(HDR
               "def @b(%x: float32) {\n"
               "  %0 = add(%x, %x);\n"
               "  %1 = less(%x, 1f);\n"
               "  %3 = if (%1) {\n"
               "    %2 = multiply(%x, %x);\n"
               "    multiply(%0, %2)\n"
               "  } else {\n"
               "    %x\n"
               "  };\n"
               "  multiply(%0, %3)\n"
               "}\n");
  /* One ref cell used in a branch and after: still one cell in the text. */
  fresh();
  c = var("c", NULL);
  Expr *cell = unary(EXPR_REF_NEW, i32(0));
  Expr *w = ir_expr_new(M, EXPR_REF_WRITE, SP);
  w->u.ref_write.ref = cell;
  w->u.ref_write.value = i32(1);
  add_def("cell", fn(tuple(2, iff(c, w, tuple(0)), unary(EXPR_REF_READ, cell)), NULL, 1, c));
  CHECK_MODULE(HDR
               "def @cell(%c) {\n"
               "  %0 = ref(0);\n"
               "  %1 = if (%c) {\n"
               "    ref_write(%0, 1)\n"
               "  } else {\n"
               "    ()\n"
               "  };\n"
               "  %2 = ref_read(%0);\n"
               "  (%1, %2)\n"
               "}\n");
  /* A node used inside a recursive closure and after its let mentions the
  ** let var: it cannot go above the let line, so each scope binds it. */
  fresh();
  Expr *f = var("f", NULL), *i = var("i", NULL), *n = var("n", NULL);
  Expr *again = call(f, 1, i32(1));
  Expr *loop = fn(call2(&op_add, again, i), NULL, 1, i);
  add_def("rec", fn(ir_let(M, SP, f, loop, tuple(2, call(f, 1, n), again)), NULL, 1, n));
  CHECK_MODULE(HDR
               "def @rec(%n) {\n"
               "  let %f = fn (%i) {\n"
               "    %0 = %f(1);\n"
               "    add(%0, %i)\n"
               "  };\n"
               "  %1 = %f(%n);\n"
               "  %2 = %f(1);\n"
               "  (%1, %2)\n"
               "}\n");
  /* A let value whose part mentions its own variable outside a function
  ** body: that part cannot be bound above the let line, so the value is a
  ** group with its own bindings (it reads back as the same tuple). */
  fresh();
  Expr *gv = var("g", NULL), *gn = var("n", NULL), *gp = var("p", NULL);
  Expr *selfref = fn(call(gv, 1, gp), NULL, 1, gp);
  add_def("grp", fn(ir_let(M, SP, gv, tuple(2, selfref, gn), gv), NULL, 1, gn));
  CHECK_MODULE(HDR
               "def @grp(%n) {\n"
               "  let %g = (\n"
               "    %0 = fn (%p) {\n"
               "      %g(%p)\n"
               "    };\n"
               "    (%0, %n)\n"
               "  );\n"
               "  %g\n"
               "}\n");
  /* A closure captures a binding of the enclosing body. */
  fresh();
  x = var("x", NULL);
  Expr *y = var("y", NULL), *z = var("z", NULL);
  s = call2(&op_add, x, x);
  add_def("cap", fn(tuple(2, fn(call2(&op_mul, s, y), NULL, 1, y), fn(call2(&op_mul, s, z), NULL, 1, z)),
                    NULL, 1, x));
  CHECK_MODULE(HDR
               "def @cap(%x) {\n"
               "  %0 = add(%x, %x);\n"
               "  %1 = fn (%y) {\n"
               "    multiply(%0, %y)\n"
               "  };\n"
               "  %2 = fn (%z) {\n"
               "    multiply(%0, %z)\n"
               "  };\n"
               "  (%1, %2)\n"
               "}\n");
  /* Numbering restarts per definition; definitions sorted by name. */
  fresh();
  y = var("y", NULL);
  add_def("zz", fn(call2(&op_add, call2(&op_add, y, y), y), NULL, 1, y));
  Expr *y2 = var("y", NULL);
  add_def("aa", fn(call2(&op_mul, call2(&op_mul, y2, y2), y2), NULL, 1, y2));
  CHECK_MODULE(HDR
               "def @aa(%y) {\n"
               "  %0 = multiply(%y, %y);\n"
               "  multiply(%0, %y)\n"
               "}\n"
               "\n"
               "def @zz(%y) {\n"
               "  %0 = add(%y, %y);\n"
               "  add(%0, %y)\n"
               "}\n");
}

/* {==== Let, refs, ADTs, match ====} */

static Ctor *mk_ctor(TypeDef *td, const char *name, int nfields, Type **fields) {
  Ctor *c = ARENA_NEW(M->arena, Ctor);
  c->name = S(name);
  c->adt = td;
  c->fields = fields;
  c->nfields = nfields;
  c->tag = td->nctors;
  td->ctors[td->nctors++] = c;
  return c;
}

static Expr *ctor_expr(Ctor *c) {
  Expr *e = ir_expr_new(M, EXPR_CTOR, SP);
  e->u.ctor.ctor = c;
  return e;
}

static Pattern *pvar(Expr *v) {
  Pattern *p = ir_pattern_new(M, PAT_VAR, SP);
  p->u.var.var = v;
  return p;
}

static Pattern *pctor(Ctor *c, int n, ...) {
  va_list ap;
  va_start(ap, n);
  Pattern *p = ir_pattern_new(M, PAT_CTOR, SP);
  p->u.ctor.ctor = c;
  p->u.ctor.n = n;
  p->u.ctor.args = ARENA_ARRAY(M->arena, Pattern *, n ? n : 1);
  for (int i = 0; i < n; i++) p->u.ctor.args[i] = va_arg(ap, Pattern *);
  va_end(ap);
  return p;
}

static Pattern *ptuple(int n, ...) {
  va_list ap;
  va_start(ap, n);
  Pattern *p = ir_pattern_new(M, PAT_TUPLE, SP);
  p->u.tuple.n = n;
  p->u.tuple.fields = ARENA_ARRAY(M->arena, Pattern *, n ? n : 1);
  for (int i = 0; i < n; i++) p->u.tuple.fields[i] = va_arg(ap, Pattern *);
  va_end(ap);
  return p;
}

static void test_let_ref_match(void) {
  /* Anonymous let (sequencing) and refs, with a free variable. */
  fresh();
  Expr *x = var("x", f32t());
  Expr *r = unary(EXPR_REF_NEW, x);
  Expr *w = ir_expr_new(M, EXPR_REF_WRITE, SP);
  w->u.ref_write.ref = r;
  w->u.ref_write.value = f32(1);
  M->free_vars = ARENA_ARRAY(M->arena, Expr *, 1);
  M->free_vars[0] = x;
  M->nfree_vars = 1;
  M->expr = ir_let(M, SP, var(NULL, NULL), w, unary(EXPR_REF_READ, r));
  CHECK_MODULE(HDR
               "free_var %x: float32;\n"
               "%0 = ref(%x);\n"
               "ref_write(%0, 1f);\n"
               "ref_read(%0)\n");

  /* Let with annotation, a fn literal value, a let-valued let, a let as a
  ** call argument. */
  fresh();
  Expr *a = var("a", f32t());
  Expr *lf = var("f", NULL), *p = var("p", NULL);
  Expr *ly = var("y", NULL), *lz = var("z", f32t()), *lw = var("w", NULL);
  Expr *inner = ir_let(M, SP, ly, call2(&op_add, a, a), ly);
  Expr *arglet = ir_let(M, SP, lw, a, lw);
  Expr *body = ir_let(M, SP, lf, fn(call(lf, 1, p), NULL, 1, p),
                      ir_let(M, SP, lz, inner, call2(&op_add, call(lf, 1, lz), arglet)));
  add_def("main", fn(body, NULL, 1, a));
  CHECK_MODULE(HDR
               "def @main(%a: float32) {\n"
               "  let %f = fn (%p) {\n"
               "    %f(%p)\n"
               "  };\n"
               "  let %z: float32 = (\n"
               "    let %y = add(%a, %a);\n"
               "    %y\n"
               "  );\n"
               "  %0 = %f(%z);\n"
               "  %1 = (\n"
               "    let %w = %a;\n"
               "    %w\n"
               "  );\n"
               "  add(%0, %1)\n"
               "}\n");

  /* ADTs, match and match?, all pattern kinds, constructor calls. */
  fresh();
  Type *A = tvar("A");
  TypeDef *list = ARENA_NEW(M->arena, TypeDef);
  list->name = S("List");
  list->tparams = types(1, A);
  list->ntparams = 1;
  list->ctors = ARENA_ARRAY(M->arena, Ctor *, 2);
  Type *listA = tcall("List", 1, types(1, A));
  listA->u.call.adt = list;
  Ctor *cons = mk_ctor(list, "Cons", 2, types(2, A, listA));
  Ctor *nil = mk_ctor(list, "Nil", 0, NULL);
  TypeDef *empty = ARENA_NEW(M->arena, TypeDef);
  empty->name = S("Empty");
  TypeDef *storage = ARENA_NEW(M->arena, TypeDef);
  storage->name = S("Storage");
  storage->is_extern = true;
  TypeDef *ext = ARENA_NEW(M->arena, TypeDef);
  ext->name = S("T");
  ext->is_extern = true;
  ext->tparams = types(1, tvar("B"));
  ext->ntparams = 1;
  add_type(list);
  add_type(storage);
  add_type(empty);
  add_type(ext);

  Expr *xs = var("xs", listA), *rest = var("rest", listA), *hd = var("x", NULL);
  Expr *len = ir_expr_new(M, EXPR_GLOBAL, SP);
  len->u.global.name = S("len");
  Clause *cl = ARENA_ARRAY(M->arena, Clause, 2);
  Pattern *wild = ir_pattern_new(M, PAT_WILDCARD, SP);
  cl[0].pat = pctor(cons, 2, wild, pvar(rest));
  cl[0].body = call2(&op_add, i32(1), call(len, 1, rest));
  cl[1].pat = pctor(nil, 0);
  cl[1].body = i32(0);
  Expr *mt = ir_expr_new(M, EXPR_MATCH, SP);
  mt->u.match.scrut = xs;
  mt->u.match.clauses = cl;
  mt->u.match.nclauses = 2;
  mt->u.match.complete = true;
  Expr *lenfn = fn(mt, tensor(DTYPE(DT_INT, 32), 0, NULL), 1, xs);
  lenfn->u.func.tparams = types(1, A);
  lenfn->u.func.ntparams = 1;
  len->u.global.def = NULL;
  add_def("len", lenfn);

  /* match? on a tuple that is bound first; nested patterns. */
  Expr *u = var("u", NULL), *v = var("v", NULL), *pv = var("x", NULL);
  Clause *cl2 = ARENA_ARRAY(M->arena, Clause, 3);
  cl2[0].pat = ptuple(2, pctor(cons, 2, pvar(hd), pctor(nil, 0)), ptuple(1, wild));
  cl2[0].body = call(ctor_expr(cons), 2, hd, call(ctor_expr(nil), 0));
  cl2[1].pat = ptuple(2, ptuple(0), pvar(pv));
  cl2[1].body = call(ctor_expr(nil), 0);
  cl2[2].pat = wild;
  cl2[2].body = ctor_expr(cons);
  Expr *mt2 = ir_expr_new(M, EXPR_MATCH, SP);
  mt2->u.match.scrut = tuple(2, u, v);
  mt2->u.match.clauses = cl2;
  mt2->u.match.nclauses = 3;
  add_def("pick", fn(mt2, NULL, 2, u, v));
  pv->u.var.annot = f32t();
  CHECK_MODULE(HDR
               "type Empty {\n"
               "}\n"
               "\n"
               "type List[A] {\n"
               "  Cons(A, List[A]),\n"
               "  Nil,\n"
               "}\n"
               "\n"
               "extern type Storage\n"
               "\n"
               "extern type T[B]\n"
               "\n"
               "def @len[A](%xs: List[A]) -> int32 {\n"
               "  match (%xs) {\n"
               "    Cons(_, %rest: List[A]) => {\n"
               "      %0 = @len(%rest);\n"
               "      add(1, %0)\n"
               "    },\n"
               "    Nil => {\n"
               "      0\n"
               "    },\n"
               "  }\n"
               "}\n"
               "\n"
               "def @pick(%u, %v) {\n"
               "  %0 = (%u, %v);\n"
               "  match? (%0) {\n"
               "    (Cons(%x, Nil), (_,)) => {\n"
               "      Cons(%x, Nil)\n"
               "    },\n"
               "    ((), %x_1: float32) => {\n"
               "      Nil\n"
               "    },\n"
               "    _ => {\n"
               "      Cons\n"
               "    },\n"
               "  }\n"
               "}\n");
}

/* {==== Names ====} */

static void test_names(void) {
  fresh();
  Expr *x1 = var("x", NULL), *x2 = var("x", NULL), *x3 = var("x_1", NULL), *d = var("1", NULL);
  Expr *e = var("", NULL), *n = var(NULL, NULL), *dotted = var("conv1.weight", NULL);
  Expr *slash = var("base/x", NULL), *odd = var("a b:c", NULL), *dot0 = var("t.0", NULL);
  Expr *t = var("t", NULL), *x4 = var("x", NULL);
  Expr *inner = fn(x4, NULL, 1, x4);
  Expr *body = tuple(10, x1, x2, x3, d, e, n, call(inner, 1, dotted), slash, odd,
                     tuple(2, ir_get_item(M, SP, t, 0), dot0));
  add_def("f", fn(body, NULL, 11, x1, x2, x3, d, e, n, dotted, slash, odd, dot0, t));
  CHECK_MODULE(HDR
               "def @f(%x, %x_1, %x_1_1, %v1, %v, %v_1, %conv1.weight, %base/x, %a_b_c, %t.0, %t) {\n"
               "  %0 = fn (%x_2) {\n"
               "    %x_2\n"
               "  };\n"
               "  %1 = %0(%conv1.weight);\n"
               "  %2 = (%t).0;\n"
               "  %3 = (%2, %t.0);\n"
               "  (%x, %x_1, %x_1_1, %v1, %v, %v_1, %1, %base/x, %a_b_c, %3)\n"
               "}\n");
  /* Names restart per definition. */
  Expr *y = var("x", NULL);
  add_def("g", fn(y, NULL, 1, y));
  char *s = print_opts(false, false);
  CHECK(strstr(s, "def @g(%x) {\n  %x\n}\n") != NULL);
  free(s);
}

/* {==== Attributes, metadata, type comments ====} */

static void test_attrs_meta_types(void) {
  fresh();
  Expr *x = var("x", f32t());
  Attrs *at = ARENA_NEW(M->arena, Attrs);
  at->cls = &test_cls;
  at->n = 3;
  at->values = ARENA_ARRAY(M->arena, AttrValue *, 3);
  at->values[0] = av_int(2, 32);
  at->values[1] = av_str("NCHW", 4);
  at->values[2] = av(AV_NONE);
  Expr *c1 = ir_call(M, SP, op(&op_test), ARENA_ARRAY(M->arena, Expr *, 1), 1, at);
  c1->u.call.args[0] = x;
  Attrs *at2 = ARENA_NEW(M->arena, Attrs);
  at2->cls = &test_cls;
  at2->n = 3;
  at2->values = ARENA_ARRAY(M->arena, AttrValue *, 3);
  at2->values[0] = av_int(1, 32);
  at2->values[1] = av_str("NHWC", 4);
  at2->values[2] = av_int(8, 32);
  Expr *c2 = ir_call(M, SP, op(&op_test), ARENA_ARRAY(M->arena, Expr *, 1), 1, at2);
  c2->u.call.args[0] = c1;
  /* Generic attributes on a call of a function value. */
  Expr *g = var("g", NULL);
  Attrs *ga = ARENA_NEW(M->arena, Attrs);
  ga->n = 2;
  ga->keys = ARENA_ARRAY(M->arena, Symbol *, 2);
  ga->values = ARENA_ARRAY(M->arena, AttrValue *, 2);
  ga->keys[0] = S("name");
  ga->values[0] = av_str("func_call_attrs", 15);
  ga->keys[1] = S("attrs_type_key");
  ga->values[1] = av_str("attrs.TestAttrs", 15);
  Expr *c3 = ir_call(M, SP, g, ARENA_ARRAY(M->arena, Expr *, 1), 1, ga);
  c3->u.call.args[0] = c2;
  /* Tensor constants: indices in order of first printing. */
  ConstData *cd[2];
  for (int i = 0; i < 2; i++) {
    cd[i] = ARENA_NEW(M->arena, ConstData);
    cd[i]->dtype = F32;
    cd[i]->ndim = 1;
    cd[i]->shape = ARENA_ARRAY(M->arena, int64_t, 1);
    cd[i]->shape[0] = 1;
    cd[i]->nbytes = 4;
    cd[i]->data = arena_alloc(M->arena, 4, 64);
  }
  Expr *k0 = ir_const(M, SP, cd[0]), *k1 = ir_const(M, SP, cd[1]);
  Expr *k1b = ir_const(M, SP, cd[1]); /* another node, same data: same index */
  Expr *sum = call2(&op_add, call2(&op_add, c3, k1), call2(&op_mul, k0, k1b));
  Expr *fx = fn(sum, f32t(), 2, x, g);
  add_def("main", fx);
  const char *want =
      HDR
      "def @main(%x: float32, %g) -> float32 {\n"
      "  %0 = nn.test(%x, axis=2, units=None);\n"
      "  %1 = nn.test(%0, layout=\"NHWC\", units=8);\n"
      "  %2 = %g(%1, name=\"func_call_attrs\", attrs_type_key=\"attrs.TestAttrs\");\n"
      "  %3 = add(%2, meta[relay.Constant][0]);\n"
      "  %4 = multiply(meta[relay.Constant][1], meta[relay.Constant][0]);\n"
      "  add(%3, %4)\n"
      "}\n";
  CHECK_MODULE(want);
  char *s = print_opts(false, true);
  size_t n = strlen(want);
  CHECK(strncmp(s, want, n) == 0);
  CHECK(strncmp(s + n, "\n#[metadata]\n", 13) == 0);
  CHECK(s[strlen(s) - 1] == '\n');
  free(s);

  /* Type comments on bindings, let lines and tails. */
  fresh();
  x = var("x", f32t());
  Expr *a = call2(&op_add, x, x);
  a->type = f32t();
  Expr *mlt = call2(&op_mul, a, a);
  mlt->type = f32t();
  Expr *lv = var("v", NULL);
  Expr *neg = call2(&op_mul, mlt, x);
  neg->type = f32t();
  add_def("t", fn(ir_let(M, SP, lv, neg, lv), NULL, 1, x));
  add_def("u", fn(mlt, NULL, 1, x));
  s = print_opts(true, false);
  CHECK_STR(s, HDR
               "def @t(%x: float32) {\n"
               "  %0 = add(%x, %x) /* ty=float32 */;\n"
               "  %1 = multiply(%0, %0) /* ty=float32 */;\n"
               "  let %v = multiply(%1, %x) /* ty=float32 */;\n"
               "  %v\n"
               "}\n"
               "\n"
               "def @u(%x: float32) {\n"
               "  %0 = add(%x, %x) /* ty=float32 */;\n"
               "  multiply(%0, %0) /* ty=float32 */\n"
               "}\n");
  free(s);
  /* No tensor constants: no metadata section even when asked for. */
  char *nm = print_opts(false, true);
  CHECK(strstr(nm, "#[metadata]") == NULL);
  free(nm);
  /* Deterministic: the same text twice. */
  char *s1 = print_opts(true, true), *s2 = print_opts(true, true);
  CHECK_STR(s1, s2);
  free(s1);
  free(s2);
}

/* {==== Long chains ====} */

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static void test_long_chains(void) {
  enum { N = 100000 };
  /* let %x = 0; let %x_1 = add(%x, 1); ... */
  fresh();
  Expr **vars = malloc(sizeof(Expr *) * N);
  for (int i = 0; i < N; i++) vars[i] = var("x", NULL);
  Expr *body = vars[N - 1];
  for (int i = N - 1; i >= 1; i--) body = ir_let(M, SP, vars[i], call2(&op_add, vars[i - 1], i32(1)), body);
  body = ir_let(M, SP, vars[0], i32(0), body);
  add_def("main", fn(body, NULL, 0));
  char *s = print_opts(false, false);
  CHECK(starts_with(s, HDR "def @main() {\n  let %x = 0;\n  let %x_1 = add(%x, 1);\n"));
  CHECK(strstr(s, "  let %x_99999 = add(%x_99998, 1);\n  %x_99999\n}\n") != NULL);
  free(s);
  free(vars);

  /* add(add(add(%x, 1), 1), ...): a 100,000-deep expression. */
  fresh();
  Expr *x = var("x", NULL);
  Expr *e = x;
  for (int i = 0; i < N; i++) e = call2(&op_add, e, i32(1));
  add_def("deep", fn(e, NULL, 1, x));
  s = print_opts(false, false);
  CHECK(starts_with(s, HDR "def @deep(%x) {\n  %0 = add(%x, 1);\n  %1 = add(%0, 1);\n"));
  CHECK(strstr(s, "  %99998 = add(%99997, 1);\n  add(%99998, 1)\n}\n") != NULL);
  free(s);
}

int main(void) {
  test_scalars();
  test_attr_values();
  test_types();
  test_gnf_sharing();
  test_scopes();
  test_let_ref_match();
  test_names();
  test_attrs_meta_types();
  test_long_chains();
  module_free(M);
  return check_report("test_print");
}
