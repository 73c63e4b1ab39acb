/* ir.c: data types, node constructors and module bookkeeping. */
#include "ir/ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const expr_kind_names[EXPR_KIND_COUNT] = {
#define NODE(K, field, name) name,
#include "ir/nodes.def"
#undef NODE
};

const char *const type_kind_names[TYPE_KIND_COUNT] = {
#define TYPEKIND(K, name) name,
#include "ir/types.def"
#undef TYPEKIND
};

/* {==== Data types ====} */

bool dtype_eq(DType a, DType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }

bool dtype_is_bool(DType t) { return t.code == DT_UINT && t.bits == 1; }

static bool parse_uint(const char *s, size_t n, unsigned long *out) {
  if (n == 0 || n > 6) return false;
  unsigned long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (unsigned long)(s[i] - '0');
  }
  *out = v;
  return true;
}

bool dtype_parse(const char *s, size_t n, DType *out) {
  /* Split off an "x<lanes>" suffix. */
  size_t base = n;
  unsigned long lanes = 1;
  for (size_t i = n; i > 0; i--) {
    if (s[i - 1] == 'x') {
      if (!parse_uint(s + i, n - i, &lanes) || lanes < 2 || lanes > 65535) return false;
      base = i - 1;
      break;
    }
    if (s[i - 1] < '0' || s[i - 1] > '9') break;
  }
  DType t = {0, 0, (uint16_t)lanes};
  size_t plen;
  if (base == 4 && memcmp(s, "bool", 4) == 0) {
    t.code = DT_UINT;
    t.bits = 1;
    *out = t;
    return true;
  } else if (base > 6 && memcmp(s, "bfloat", 6) == 0) {
    t.code = DT_BFLOAT, plen = 6;
  } else if (base > 5 && memcmp(s, "float", 5) == 0) {
    t.code = DT_FLOAT, plen = 5;
  } else if (base > 4 && memcmp(s, "uint", 4) == 0) {
    t.code = DT_UINT, plen = 4;
  } else if (base > 3 && memcmp(s, "int", 3) == 0) {
    t.code = DT_INT, plen = 3;
  } else {
    return false;
  }
  unsigned long bits;
  if (!parse_uint(s + plen, base - plen, &bits)) return false;
  switch (t.code) {
  case DT_FLOAT: if (bits != 16 && bits != 32 && bits != 64) return false; break;
  case DT_BFLOAT: if (bits != 16) return false; break;
  case DT_UINT: if (bits != 1 && bits != 8 && bits != 16 && bits != 32 && bits != 64) return false; break;
  default: if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return false; break;
  }
  t.bits = (uint8_t)bits;
  *out = t;
  return true;
}

const char *dtype_name(DType t, char buf[32]) {
  static const char *codes[] = {"int", "uint", "float", "handle", "bfloat"};
  const char *c = t.code < RLY_COUNTOF(codes) ? codes[t.code] : "unknown";
  if (dtype_is_bool(t) && t.lanes == 1) snprintf(buf, 32, "bool");
  else if (t.lanes == 1) snprintf(buf, 32, "%s%u", c, (unsigned)t.bits);
  else snprintf(buf, 32, "%s%ux%u", c, (unsigned)t.bits, (unsigned)t.lanes);
  return buf;
}

size_t dtype_bytes(DType t) {
  size_t b = ((size_t)t.bits + 7) / 8;
  return b * (t.lanes ? t.lanes : 1);
}

int64_t const_numel(const ConstData *c) {
  int64_t n = 1;
  for (int i = 0; i < c->ndim; i++) n *= c->shape[i];
  return n;
}

/* {==== Modules ====} */

Module *module_new(void) {
  Module *m = rly_xcalloc(1, sizeof(Module));
  m->arena = arena_new(256 * 1024);
  symtab_init(&m->syms, m->arena);
  return m;
}

void module_free(Module *m) {
  if (!m) return;
  symtab_free(&m->syms);
  arena_free(m->arena);
  free(m);
}

GlobalDef *module_find_def(const Module *m, Symbol *name) {
  for (int i = 0; i < m->ndefs; i++)
    if (m->defs[i]->name == name) return m->defs[i];
  return NULL;
}

TypeDef *module_find_type(const Module *m, Symbol *name) {
  for (int i = 0; i < m->ntypes; i++)
    if (m->types[i]->name == name) return m->types[i];
  return NULL;
}

Ctor *module_find_ctor(const Module *m, Symbol *name) {
  for (int i = 0; i < m->ntypes; i++)
    for (int j = 0; j < m->types[i]->nctors; j++)
      if (m->types[i]->ctors[j]->name == name) return m->types[i]->ctors[j];
  return NULL;
}

/* {==== Constructors ====} */

Expr *ir_expr_new(Module *m, ExprKind kind, Span span) {
  Expr *e = ARENA_NEW(m->arena, Expr);
  e->kind = kind;
  e->id = m->nexprs++;
  e->span = span;
  return e;
}

Expr *ir_var(Module *m, Span span, Symbol *name, Type *annot) {
  Expr *e = ir_expr_new(m, EXPR_VAR, span);
  e->u.var.name = name;
  e->u.var.annot = annot;
  return e;
}

Expr *ir_call(Module *m, Span span, Expr *callee, Expr **args, int nargs, Attrs *attrs) {
  Expr *e = ir_expr_new(m, EXPR_CALL, span);
  e->u.call.callee = callee;
  e->u.call.args = args;
  e->u.call.nargs = nargs;
  e->u.call.attrs = attrs;
  return e;
}

Expr *ir_let(Module *m, Span span, Expr *var, Expr *value, Expr *body) {
  Expr *e = ir_expr_new(m, EXPR_LET, span);
  e->u.let.var = var;
  e->u.let.value = value;
  e->u.let.body = body;
  return e;
}

Expr *ir_tuple(Module *m, Span span, Expr **fields, int n) {
  Expr *e = ir_expr_new(m, EXPR_TUPLE, span);
  e->u.tuple.fields = fields;
  e->u.tuple.n = n;
  return e;
}

Expr *ir_get_item(Module *m, Span span, Expr *tuple, int index) {
  Expr *e = ir_expr_new(m, EXPR_GET_ITEM, span);
  e->u.get_item.tuple = tuple;
  e->u.get_item.index = index;
  return e;
}

Expr *ir_op(Module *m, Span span, const OpDef *op) {
  Expr *e = ir_expr_new(m, EXPR_OP, span);
  e->u.op.op = op;
  return e;
}

Expr *ir_const(Module *m, Span span, ConstData *value) {
  Expr *e = ir_expr_new(m, EXPR_CONST, span);
  e->u.constant.value = value;
  return e;
}

Expr *ir_const_scalar(Module *m, Span span, DType dt, const void *v) {
  ConstData *c = ARENA_NEW(m->arena, ConstData);
  c->dtype = dt;
  c->ndim = 0;
  c->nbytes = dtype_bytes(dt);
  c->data = arena_alloc(m->arena, c->nbytes, 64);
  memcpy(c->data, v, c->nbytes);
  return ir_const(m, span, c);
}

Type *ir_type_new(Module *m, TypeKind kind, Span span) {
  Type *t = ARENA_NEW(m->arena, Type);
  t->kind = kind;
  t->span = span;
  return t;
}

Type *ir_tensor_type(Module *m, Span span, DType dt, int ndim, const int64_t *shape) {
  Type *t = ir_type_new(m, TYPE_TENSOR, span);
  t->u.tensor.dtype = dt;
  t->u.tensor.ndim = ndim;
  if (ndim) t->u.tensor.shape = arena_dup(m->arena, shape, sizeof(int64_t) * (size_t)ndim);
  return t;
}

Type *ir_incomplete_type(Module *m, Span span) {
  Type *t = ir_type_new(m, TYPE_INCOMPLETE, span);
  t->u.incomplete.id = m->ntypevars++;
  return t;
}

Pattern *ir_pattern_new(Module *m, PatternKind kind, Span span) {
  Pattern *p = ARENA_NEW(m->arena, Pattern);
  p->kind = kind;
  p->span = span;
  return p;
}

AttrValue *ir_attr_value_new(Module *m, AttrValueKind kind, Span span) {
  AttrValue *v = ARENA_NEW(m->arena, AttrValue);
  v->kind = kind;
  v->span = span;
  return v;
}

/* {==== Half precision ====} */

uint16_t half_from_double(double v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  double a = fabs(v);
  if (isnan(v)) return 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00; /* rounds to infinity */
  if (a < 0x1p-25) return sign;           /* rounds to zero */
  int e;
  double m = frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  int exp = e - 1;         /* a = (2m) * 2^exp, 2m in [1, 2) */
  if (exp < -14) {
    /* Subnormal: units of 2^-24. */
    double q = nearbyint(a * 0x1p24);
    return sign | (uint16_t)q;
  }
  double frac = (2 * m - 1) * 1024.0;
  double q = nearbyint(frac);
  uint32_t bits = (uint32_t)(exp + 15) << 10;
  bits += (uint32_t)q; /* a carry into the exponent is the correct rounding */
  return sign | (uint16_t)bits;
}

double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0) v = ldexp(frac, -24);
  else if (exp == 31) v = frac ? NAN : INFINITY;
  else v = ldexp(1024 + frac, exp - 25);
  return sign ? -v : v;
}
