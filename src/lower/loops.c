/* lower/loops.c: kernels as plain C loops, generated from the lowering
** table (lower/lower.def), never written per program or per operator.
**
** lower_loops first reads the function into a group (lower/group.c) and
** hands it to its schedule (lower/schedules.def): GEMV/GEMM with an
** epilogue (gemm.c), softmax and reductions (reduce.c), elementwise
** chains of several calls (elemwise.c), layout operators among
** elementwise calls (inject.c). What none takes and is a single
** call of a table operator on the parameters in order, or nn.dense in
** double, gets the loops below (another single call, with a constant
** operand or a parameter read twice, is a chain of one call); take with a
** scalar index, split, scatter_nd and reshapes are slice copies
** (select.c). A
** kernel that calls the float32 functions of fastmath.c (exp, tanh,
** sigmoid) is preceded by their guarded definitions.
**
** A kernel allocates its result from the static type, then walks the
** result's elements in row-major order, reading each operand at the
** position NumPy broadcasting gives it, and stores the row's template
** evaluated on the operands, converted to the result dtype:
**
**   static rlyrt_status NAME(rlyrt_object *const *args, rlyrt_object **out) {
**     static const int64_t shape[2] = {2, 3};
**     rlyrt_tensor *t = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 2, shape, false);
**     if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, "model.relay:3:10");
**     const float *restrict p0 = (const float *)RLYRT_AS_TENSOR(args[0])->dl.data;
**     const float *restrict p1 = (const float *)RLYRT_AS_TENSOR(args[1])->dl.data;
**     float *restrict o = (float *)t->dl.data;
**     for (int64_t i0 = 0; i0 < 2; i0++)
**       for (int64_t i1 = 0; i1 < 3; i1++) {
**         const double x0 = (double)p0[i0 * 3 + i1];
**         const double x1 = (double)p1[i1];
**         o[i0 * 3 + i1] = (float)(x0 + x1);
**       }
**     *out = &t->obj;
**     return RLYRT_OK;
**   }
**
** The loop nest is the result's shape with its size-1 dimensions dropped and
** adjacent dimensions merged wherever every operand steps through them
** alike, so operands of the result's shape (and scalars) give one flat
** loop, and a 0-d result no loop at all. Each operand has a baked-in
** stride per loop (0 where it is broadcast); an operand that is the same
** for every element is read once, before the loops.
**
** Floats are computed in double and rounded once when stored; integers are
** computed in their type, or in the unsigned type U where arithmetic could
** overflow, and wrapped to the width when stored (see lower.def). The text
** depends on nothing but fn, name and where: floats are printed as hex
** floats, strings with octal escapes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lower/kernel.h"
#include "lower/lower.h"
#include "ops/ops.h"

enum { MAX_NDIM = LOWER_MAX_NDIM, MAX_ARGS = 3 }; /* the runtime's largest rank; the table's largest arity */

/* {==== The table ====} */

static const LowerRow rows[] = {
#define LOWER(ID, arity, data, result, f, s, u, b) {OP_##ID, arity, data, RR_##result, {f, s, u, b}},
#include "lower/lower.def"
#undef LOWER
};

const LowerRow *lower_find_row(OpId op) {
  for (size_t i = 0; i < RLY_COUNTOF(rows); i++)
    if (rows[i].op == op) return &rows[i];
  return NULL;
}

/* {==== Dtypes ====} */

/* The class of a dtype loops handle; false for float16, bfloat16, vector
** lanes and odd widths. */
bool lower_dtype_class(DType t, DClass *c) {
  if (t.lanes != 1) return false;
  if (dtype_is_bool(t)) *c = DC_BOOL;
  else if (t.code == DT_FLOAT && (t.bits == 32 || t.bits == 64)) *c = DC_FLOAT;
  else if ((t.code == DT_INT || t.code == DT_UINT) && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64))
    *c = t.code == DT_INT ? DC_SINT : DC_UINT;
  else return false;
  return true;
}

/* The C type of an element (bool: one byte). */
const char *lower_elem_ctype(DType t) {
  static const char *const sint[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
  static const char *const uint[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  int k = t.bits == 8 ? 0 : t.bits == 16 ? 1 : t.bits == 32 ? 2 : 3;
  if (dtype_is_bool(t)) return "uint8_t";
  if (t.code == DT_FLOAT) return t.bits == 32 ? "float" : "double";
  return t.code == DT_INT ? sint[k] : uint[k];
}

/* The C type an operand is computed in: double for floats. */
const char *lower_compute_ctype(DType t) { return t.code == DT_FLOAT ? "double" : lower_elem_ctype(t); }

const char *lower_dl_code(DType t) {
  return t.code == DT_FLOAT ? "kDLFloat" : t.code == DT_INT ? "kDLInt" : "kDLUInt";
}

/* {==== Shapes and the loop nest ====} */

/* A tensor type whose dims are all known, with at most 2^62 elements
** (so strides and indices fit in int64_t with room to spare). */
bool lower_static_tensor(const Type *t) {
  if (!t || t->kind != TYPE_TENSOR || t->u.tensor.ndim > MAX_NDIM) return false;
  int64_t n = 1;
  for (int i = 0; i < t->u.tensor.ndim; i++) {
    int64_t d = t->u.tensor.shape[i];
    if (d < 0) return false;
    if (d > 0 && n > ((int64_t)1 << 62) / d) return false;
    n *= d;
  }
  return true;
}

typedef struct Loop {
  int64_t n;
  int64_t stride[MAX_ARGS]; /* elements of operand k per step; 0 when broadcast */
} Loop;

typedef struct Plan {
  int nloops;
  Loop loops[MAX_NDIM];
  int64_t numel;             /* of the result */
} Plan;

/* The stride of operand `in` (NumPy broadcasting, aligned at the right)
** along result dim d of rank ndim, whose size is n; false when the operand
** does not broadcast to the result. */
static bool operand_stride(const Type *in, int d, int ndim, int64_t n, int64_t *stride) {
  int rank = in->u.tensor.ndim, j = d - (ndim - rank);
  *stride = 0;
  if (j < 0) return true;
  const int64_t *shape = in->u.tensor.shape;
  if (shape[j] != n) return shape[j] == 1;
  *stride = 1;
  for (int k = j + 1; k < rank; k++) *stride *= shape[k];
  return true;
}

/* The loop nest over the result's shape for nargs operands. */
static bool plan_loops(const Type *res, const Type *const *ins, int nargs, Plan *p) {
  int ndim = res->u.tensor.ndim;
  p->nloops = 0;
  p->numel = 1;
  for (int d = 0; d < ndim; d++) {
    Loop l;
    memset(&l, 0, sizeof l);
    l.n = res->u.tensor.shape[d];
    p->numel *= l.n;
    for (int k = 0; k < nargs; k++)
      if (!operand_stride(ins[k], d, ndim, l.n, &l.stride[k])) return false;
    if (l.n == 1) continue;
    Loop *last = p->nloops ? &p->loops[p->nloops - 1] : NULL;
    bool merge = last != NULL;
    for (int k = 0; merge && k < nargs; k++) merge = last->stride[k] == l.stride[k] * l.n;
    if (merge) {
      last->n *= l.n;
      for (int k = 0; k < nargs; k++) last->stride[k] = l.stride[k];
    } else {
      p->loops[p->nloops++] = l;
    }
  }
  return true;
}

/* The flat index of operand k (k < 0: the result) at the loop counters,
** outer loops first. */
static void put_index(StrBuf *sb, const Plan *p, int k) {
  int64_t out_stride[MAX_NDIM], size = 1;
  for (int d = p->nloops - 1; d >= 0; d--) {
    out_stride[d] = size;
    size *= p->loops[d].n;
  }
  bool any = false;
  for (int d = 0; d < p->nloops; d++) {
    int64_t s = k < 0 ? out_stride[d] : p->loops[d].stride[k];
    if (!s) continue;
    if (any) sb_puts(sb, " + ");
    if (s == 1) sb_printf(sb, "i%d", d);
    else sb_printf(sb, "i%d * %lld", d, (long long)s);
    any = true;
  }
  if (!any) sb_putc(sb, '0');
}

static bool invariant(const Plan *p, int k) {
  for (int d = 0; d < p->nloops; d++)
    if (p->loops[d].stride[k]) return false;
  return true;
}

/* {==== Text ====} */

/* s as a C string literal: printable ASCII as is except " \ ? (no
** trigraphs), everything else as three-digit octal escapes. */
bool lower_par_worth(double work, double min) {
  const char *all = getenv("RLY_SPLIT_ALL");
  return work >= min || (all && strcmp(all, "1") == 0);
}

void lower_put_threads_preamble(StrBuf *sb) {
  sb_puts(sb, "#ifndef RLYRT_KERNEL_THREADS\n#define RLYRT_KERNEL_THREADS 1\n#endif\n");
}

void lower_put_cstring(StrBuf *sb, const char *s) {
  sb_putc(sb, '"');
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*c == '"' || *c == '\\' || *c == '?') sb_printf(sb, "\\%c", *c);
    else if (*c >= 32 && *c < 127) sb_putc(sb, (char)*c);
    else sb_printf(sb, "\\%03o", *c);
  }
  sb_putc(sb, '"');
}

/* A double constant, exactly (hex float; math.h's names for inf and NaN). */
void lower_put_double(StrBuf *sb, double v) {
  if (isnan(v)) sb_puts(sb, "NAN");
  else if (isinf(v)) sb_puts(sb, v < 0 ? "-HUGE_VAL" : "HUGE_VAL");
  else sb_printf(sb, "%a", v);
}

/* The identifier at s (letters, digits, '_'), or a number: its length. */
static size_t token_len(const char *s) {
  size_t n = 0;
  while (s[n] == '_' || (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') || (s[n] >= '0' && s[n] <= '9') ||
         (n && s[0] >= '0' && s[0] <= '9' && s[n] == '.'))
    n++;
  return n;
}

static bool token_is(const char *s, size_t n, const char *word) { return strlen(word) == n && !memcmp(s, word, n); }

/* Whether template t names the placeholder word. */
bool lower_tmpl_uses(const char *t, const char *word) {
  while (*t) {
    size_t n = token_len(t);
    if (n && token_is(t, n, word)) return true;
    t += n ? n : 1;
  }
  return false;
}

/* What a template's placeholders stand for. */
typedef struct Subst {
  const char *u; /* U */
  const char *t; /* T */
} Subst;

static void put_tmpl(StrBuf *sb, const char *t, const Subst *s) {
  while (*t) {
    size_t n = token_len(t);
    if (!n) {
      sb_putc(sb, *t++);
      continue;
    }
    if (n == 1 && *t >= 'A' && *t <= 'C') sb_printf(sb, "x%d", *t - 'A');
    else if (token_is(t, n, "U")) sb_puts(sb, s->u);
    else if (token_is(t, n, "T")) sb_puts(sb, s->t);
    else if (token_is(t, n, "LO")) sb_puts(sb, "lo");
    else if (token_is(t, n, "HI")) sb_puts(sb, "hi");
    else sb_putn(sb, t, n);
    t += n;
  }
}

void lower_put_tmpl(StrBuf *sb, const char *t, const char *const *ops, const char *u, const char *ct, const char *lo,
                    const char *hi) {
  while (*t) {
    size_t n = token_len(t);
    if (!n) {
      sb_putc(sb, *t++);
      continue;
    }
    if (n == 1 && *t >= 'A' && *t <= 'C') sb_puts(sb, ops[*t - 'A']);
    else if (token_is(t, n, "U")) sb_puts(sb, u);
    else if (token_is(t, n, "T")) sb_puts(sb, ct);
    else if (token_is(t, n, "LO")) sb_puts(sb, lo);
    else if (token_is(t, n, "HI")) sb_puts(sb, hi);
    else sb_putn(sb, t, n);
    t += n;
  }
}

/* The value e (of class from) converted to the dtype to, as the runtime
** stores values: anything to bool is e != 0; integers wrap; floats round;
** integers become floats through double; floats become integers by
** truncation, NaN giving 0 and values beyond the 64-bit range saturating
** before the wrap. */
void lower_put_convert(StrBuf *sb, const char *e, DClass from, DType to) {
  const char *ct = lower_elem_ctype(to);
  if (dtype_is_bool(to)) {
    sb_printf(sb, "(uint8_t)((%s) != 0)", e);
  } else if (to.code == DT_FLOAT) {
    sb_printf(sb, "(%s)%s(%s)", ct, from == DC_FLOAT || to.bits == 64 ? "" : "(double)", e);
  } else if (from != DC_FLOAT) {
    sb_printf(sb, "(%s)(%s)", ct, e);
  } else if (to.code == DT_INT) {
    sb_printf(sb,
              "(%s)(isnan(%s) ? 0 : (%s) >= 9223372036854775808.0 ? INT64_MAX : (%s) < -9223372036854775808.0 ? "
              "INT64_MIN : (int64_t)(%s))",
              ct, e, e, e, e);
  } else {
    sb_printf(sb,
              "(%s)(isnan(%s) ? 0u : (%s) >= 18446744073709551616.0 ? UINT64_MAX : (%s) >= 9223372036854775808.0 ? "
              "(uint64_t)(%s) : (%s) < -9223372036854775808.0 ? 9223372036854775808u : (uint64_t)(int64_t)(%s))",
              ct, e, e, e, e, e, e);
  }
}

/* {==== Clip bounds ====} */

/* A float attribute of the call (ints accepted); false when None. */
bool lower_attr_double(const Attrs *a, const char *field, double *v) {
  if (!a || !a->cls) return false;
  int i = attrs_class_field(a->cls, field, strlen(field));
  if (i < 0) return false;
  const AttrValue *x = a->values[i];
  if (x->kind == AV_FLOAT) *v = x->u.f.v;
  else if (x->kind == AV_INT) *v = (double)x->u.i.v;
  else return false;
  return true;
}

int64_t lower_attr_int(const Attrs *a, const char *field, int64_t def) {
  if (!a || !a->cls) return def;
  int i = attrs_class_field(a->cls, field, strlen(field));
  if (i < 0) return def;
  const AttrValue *x = a->values[i];
  if (x->kind == AV_INT) return x->u.i.v;
  if (x->kind == AV_BOOL) return x->u.b ? 1 : 0;
  return def;
}

/* Declares `const CT name = BOUND;`: v as a bound in dtype t, as the
** reference kernel makes it: rounded to a float dtype, or truncated and
** saturated to an integer dtype's range (NaN giving 0). */
void lower_put_bound(StrBuf *sb, const char *name, DType t, double v) {
  sb_printf(sb, "  const %s %s = ", lower_compute_ctype(t), name);
  if (t.code == DT_FLOAT) {
    lower_put_double(sb, t.bits == 32 ? (double)(float)v : v);
  } else {
    double x = isnan(v) ? 0 : trunc(v);
    bool is_signed = t.code == DT_INT;
    int bits = dtype_is_bool(t) ? 1 : t.bits;
    /* The dtype's range [lo, hi]; hi + 1 is a power of two, exact in double. */
    double hi1 = is_signed ? ldexp(1, bits - 1) : ldexp(1, bits);
    double lo = is_signed ? -hi1 : 0;
    if (x <= lo) {
      if (!is_signed) sb_puts(sb, "0");
      else if (bits == 64) sb_puts(sb, "INT64_MIN");
      else sb_printf(sb, "%lld", (long long)lo);
    } else if (x >= hi1 - 1) {
      if (bits == 64) sb_puts(sb, is_signed ? "INT64_MAX" : "UINT64_MAX");
      else sb_printf(sb, "%lld", (long long)(hi1 - 1));
    } else if (is_signed) {
      sb_printf(sb, "%lld", (long long)x);
    } else {
      sb_printf(sb, "%lluu", (unsigned long long)x);
    }
  }
  sb_puts(sb, ";\n");
}

/* {==== The kernel ====} */

/* What the checks found: the op's row, types and classes. */
typedef struct Kernel {
  const LowerRow *row;
  const Type *res;
  const Type *ins[MAX_ARGS];
  DClass cls[MAX_ARGS];
  DClass res_cls;
  const char *tmpl;
  bool bounded;      /* the template names LO and HI: */
  double lo, hi;     /*   the a_min and a_max attributes */
  Plan plan;
} Kernel;

/* Checks everything lower_loops needs; fills k. */
static bool analyse(const Expr *fn, Kernel *k) {
  if (!fn || fn->kind != EXPR_FUNC) return false;
  const Expr *call = fn->u.func.body;
  if (!call || call->kind != EXPR_CALL || call->u.call.callee->kind != EXPR_OP) return false;
  k->row = lower_find_row(call->u.call.callee->u.op.op->id);
  const LowerRow *row = k->row;
  int n = fn->u.func.nparams;
  if (!row || n != row->arity || call->u.call.nargs != n) return false;
  for (int i = 0; i < n; i++) {
    const Expr *p = fn->u.func.params[i];
    if (call->u.call.args[i] != p || !lower_static_tensor(p->type) || !lower_dtype_class(p->type->u.tensor.dtype, &k->cls[i]))
      return false;
    k->ins[i] = p->type;
  }
  k->res = call->type;
  if (!lower_static_tensor(k->res) || !lower_dtype_class(k->res->u.tensor.dtype, &k->res_cls)) return false;
  /* The data operands share one dtype; the result's follows the rule. */
  DType dt = k->ins[row->data]->u.tensor.dtype, rt = k->res->u.tensor.dtype;
  for (int i = row->data + 1; i < n; i++)
    if (!dtype_eq(k->ins[i]->u.tensor.dtype, dt)) return false;
  if (row->result == RR_SAME && !dtype_eq(rt, dt)) return false;
  if (row->result == RR_BOOL && !dtype_is_bool(rt)) return false;
  k->tmpl = row->tmpl[k->cls[row->data]];
  if (!k->tmpl) return false;
  for (int i = 0; i < n; i++) {
    const char name[2] = {(char)('A' + i), 0};
    if (!lower_tmpl_uses(k->tmpl, name)) return false; /* an unused operand would warn */
  }
  const Attrs *attrs = call->u.call.attrs;
  k->bounded = lower_tmpl_uses(k->tmpl, "LO") || lower_tmpl_uses(k->tmpl, "HI");
  if (k->bounded && (!lower_attr_double(attrs, "a_min", &k->lo) || !lower_attr_double(attrs, "a_max", &k->hi))) return false;
  return plan_loops(k->res, k->ins, n, &k->plan);
}

/* `const CT xK = (CT)pK[index];` at the given indentation. */
static void put_load(StrBuf *sb, const Kernel *k, int i, int indent) {
  DType t = k->ins[i]->u.tensor.dtype;
  const char *ct = lower_compute_ctype(t);
  sb_printf(sb, "%*sconst %s x%d = (%s)p%d[", indent, "", ct, i, ct, i);
  put_index(sb, &k->plan, i);
  sb_puts(sb, "];\n");
}

/* The loads that vary, the computation and the store, inside the loops. */
static void put_body(StrBuf *sb, const Kernel *k, int indent) {
  const Plan *p = &k->plan;
  for (int i = 0; i < k->row->arity; i++)
    if (!invariant(p, i)) put_load(sb, k, i, indent);
  DType dt = k->ins[k->row->data]->u.tensor.dtype;
  Subst s = {dt.bits == 64 ? "uint64_t" : "uint32_t", lower_elem_ctype(dt)};
  StrBuf e = {0};
  put_tmpl(&e, k->tmpl, &s);
  sb_printf(sb, "%*so[", indent, "");
  put_index(sb, p, -1);
  sb_puts(sb, "] = ");
  lower_put_convert(sb, sb_str(&e), k->cls[k->row->data], k->res->u.tensor.dtype);
  sb_puts(sb, ";\n");
  sb_free(&e);
}

static void put_loops(StrBuf *sb, const Kernel *k) {
  const Plan *p = &k->plan;
  int indent = 2;
  for (int d = 0; d < p->nloops; d++, indent += 2) {
    sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++)", indent, "", d, d, (long long)p->loops[d].n, d);
    sb_puts(sb, d + 1 < p->nloops ? "\n" : " {\n");
  }
  put_body(sb, k, indent);
  if (p->nloops) sb_printf(sb, "%*s}\n", indent - 2, "");
}

static void emit(StrBuf *sb, const char *name, const Kernel *k, const char *where) {
  const Type *res = k->res;
  DType rt = res->u.tensor.dtype;
  int ndim = res->u.tensor.ndim;
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  if (ndim) {
    sb_printf(sb, "  static const int64_t shape[%d] = {", ndim);
    for (int d = 0; d < ndim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
    sb_puts(sb, "};\n");
  }
  if (k->plan.numel && k->bounded) {
    DType dt = k->ins[k->row->data]->u.tensor.dtype;
    lower_put_bound(sb, "lo", dt, k->lo);
    lower_put_bound(sb, "hi", dt, k->hi);
  }
  /* *out is NULL (allocate the result) or a tensor of the result's type to
  ** write into (a buffer of the caller's workspace). */
  sb_printf(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){%s, %d, 1}, %d, %s, false);\n",
            lower_dl_code(rt), dtype_is_bool(rt) ? 1 : rt.bits, ndim, ndim ? "shape" : "NULL");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (!k->plan.numel) {
    sb_puts(sb, "  (void)args;\n");
  } else {
    for (int i = 0; i < k->row->arity; i++) {
      const char *ct = lower_elem_ctype(k->ins[i]->u.tensor.dtype);
      sb_printf(sb, "  const %s *restrict p%d = (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", ct, i, ct, i);
    }
    const char *ot = lower_elem_ctype(rt);
    sb_printf(sb, "  %s *restrict o = (%s *)t->dl.data;\n", ot, ot);
    for (int i = 0; i < k->row->arity; i++)
      if (invariant(&k->plan, i)) put_load(sb, k, i, 2);
    put_loops(sb, k);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
}

/* {==== Dense ====}
** nn.dense on float32 or float64 with static shapes: data [..., K] (the
** leading dims are rows), weight [N, K], result [..., N], accumulated in
** double in the reference kernel's order (rk_nn_matmul), so the result is
** the same to the bit. */
static bool lower_dense(StrBuf *sb, const char *name, const Expr *fn, const char *where) {
  const Expr *call = fn->u.func.body;
  if (call->kind != EXPR_CALL || call->u.call.callee->kind != EXPR_OP ||
      strcmp(call->u.call.callee->u.op.op->name, "nn.dense") != 0 || fn->u.func.nparams != 2 ||
      call->u.call.nargs != 2 || call->u.call.args[0] != fn->u.func.params[0] ||
      call->u.call.args[1] != fn->u.func.params[1])
    return false;
  const Type *a = fn->u.func.params[0]->type, *b = fn->u.func.params[1]->type, *r = call->type;
  if (!lower_static_tensor(a) || !lower_static_tensor(b) || !lower_static_tensor(r)) return false;
  DType dt = r->u.tensor.dtype;
  if (dt.code != DT_FLOAT || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1) return false;
  if (!dtype_eq(a->u.tensor.dtype, dt) || !dtype_eq(b->u.tensor.dtype, dt)) return false;
  int na = a->u.tensor.ndim;
  if (na < 1 || b->u.tensor.ndim != 2 || r->u.tensor.ndim != na) return false;
  int64_t k = a->u.tensor.shape[na - 1], n = b->u.tensor.shape[0], nrows = 1;
  if (b->u.tensor.shape[1] != k || r->u.tensor.shape[na - 1] != n) return false;
  for (int i = 0; i < na - 1; i++) {
    if (r->u.tensor.shape[i] != a->u.tensor.shape[i]) return false;
    nrows *= a->u.tensor.shape[i];
  }
  const char *ct = lower_elem_ctype(dt);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_printf(sb, "  static const int64_t shape[%d] = {", na);
  for (int d = 0; d < na; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)r->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_printf(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, %d, 1}, %d, shape, false);\n",
            dt.bits, na);
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_printf(sb, "  const %s *restrict x = (const %s *)RLYRT_AS_TENSOR(args[0])->dl.data;\n", ct, ct);
  sb_printf(sb, "  const %s *restrict w = (const %s *)RLYRT_AS_TENSOR(args[1])->dl.data;\n", ct, ct);
  sb_printf(sb, "  %s *restrict o = (%s *)t->dl.data;\n", ct, ct);
  sb_printf(sb, "  for (int64_t i = 0; i < %lld; i++)\n", (long long)nrows);
  sb_printf(sb, "    for (int64_t j = 0; j < %lld; j++) {\n", (long long)n);
  sb_puts(sb, "      double acc = 0;\n");
  sb_printf(sb, "      for (int64_t q = 0; q < %lld; q++) acc += (double)x[i * %lld + q] * (double)w[j * %lld + q];\n",
            (long long)k, (long long)k, (long long)k);
  sb_printf(sb, "      o[i * %lld + j] = (%s)acc;\n    }\n", (long long)n, ct);
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

/* A group of one float32 call that has a vectorizable float function
** (fastmath.c): the chain's loop uses it, the single-call loops below
** would compute in double through libm. */
static bool single_fast(const Group *g) {
  const GNode *n = &g->nodes[g->nnodes - 1];
  const Type *t = n->call->type;
  if (n->kind != GN_CALL || !fm_tmpl(n->op->id) || !t || t->kind != TYPE_TENSOR) return false;
  DType d = t->u.tensor.dtype;
  return d.code == DT_FLOAT && d.bits == 32 && d.lanes == 1;
}

static bool schedule_group(StrBuf *out, const char *name, const Group *g, const char *where, bool single) {
  int anchor = -1, nlive = 0;
  if (g->nparams > 256 || g->nodes[g->nnodes - 1].kind != GN_CALL) return false;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind == GN_CONST) continue;
    if (g->nodes[i].kind == GN_PROJ && g->nodes[i].args[0] < 0) continue; /* %p.k: a leaf of the chain */
    if (g->nodes[i].kind == GN_TUPLE) continue; /* concatenate's operand (inject.c) */
    if (g->nodes[i].kind != GN_CALL) return false;
    nlive++;
    OpId id = g->nodes[i].op->id;
    if (id == OP_DENSE || id == OP_BATCH_MATMUL || id == OP_SOFTMAX || id == OP_FAST_SOFTMAX || id == OP_LOG_SOFTMAX ||
        id == OP_SUM || id == OP_MEAN || id == OP_MAX || id == OP_MIN || id == OP_CONV2D) {
      if (anchor >= 0) return false;
      anchor = i;
    }
  }
  if (anchor >= 0) {
    OpId id = g->nodes[anchor].op->id;
    if (id == OP_DENSE || id == OP_BATCH_MATMUL) return gemm_lower(out, name, g, anchor, where);
    if (id == OP_CONV2D) return conv_lower(out, name, g, anchor, where);
    if (id == OP_SUM || id == OP_MEAN || id == OP_MAX || id == OP_MIN) return reduce_lower(out, name, g, anchor, where);
    return softmax_lower(out, name, g, anchor, where);
  }
  if (nlive == 1 && pool_lower(out, name, g, where)) return true;
  if ((nlive > 1 || single || single_fast(g)) && ew_lower(out, name, g, where)) return true;
  return inj_lower(out, name, g, where);
}

/* The group's schedule (schedules.def): an anchor (dense, batch_matmul,
** softmax, a reduction) with its elementwise tail, or a chain of several
** elementwise calls (or of one call, when single). The float32 functions
** the kernel calls (fastmath.c) are defined first. */
static bool lower_group(StrBuf *out, const char *name, const Expr *fn, const char *where, bool single) {
  Group *g = rly_xcalloc(1, sizeof *g); /* 27 KB: not on the stack */
  StrBuf grp = {0};
  bool ok = group_build(fn, g) && schedule_group(&grp, name, g, where, single);
  if (ok) {
    if (fm_used(sb_str(&grp))) fm_put_defs(out);
    sb_puts(out, sb_str(&grp));
  }
  sb_free(&grp);
  free(g);
  return ok;
}

/* Clang contracts a * b + c into an FMA within an expression when the
** target has FMA (--target native), which changes the bits the templates
** promise (floor_mod's product, a chain's double arithmetic); gcc does not
** in ISO C mode. The pragma holds to the end of the file. */
static const char no_contract[] = "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n";

bool lower_loops(StrBuf *out, const char *name, const Expr *fn, const char *where) {
  size_t start = out->len;
  sb_puts(out, no_contract);
  if (lower_group(out, name, fn, where, false)) return true;
  if (lower_dense(out, name, fn, where) || take_lower(out, name, fn, where) || split_lower(out, name, fn, where) ||
      scatter_nd_lower(out, name, fn, where) || reshape_lower(out, name, fn, where))
    return true;
  Kernel k;
  memset(&k, 0, sizeof k);
  if (analyse(fn, &k)) {
    emit(out, name, &k, where);
    return true;
  }
  /* One call that the loops below do not take (they read the parameters
  ** in order: not a constant operand, not a parameter read twice) is a
  ** chain of one call. */
  if (lower_group(out, name, fn, where, true)) return true;
  out->len = start; /* nothing appended */
  if (out->data) out->data[start] = 0;
  return false;
}

/* {==== Scalars ====} */

const char *lower_scalar_ctype(DType t) {
  DClass c;
  return lower_dtype_class(t, &c) ? lower_elem_ctype(t) : NULL;
}

bool lower_scalar(StrBuf *out, const Expr *fn, const char *const *ops, const char *dest, int indent) {
  Kernel k;
  memset(&k, 0, sizeof k);
  if (!analyse(fn, &k) || k.res->u.tensor.ndim != 0) return false;
  for (int i = 0; i < k.row->arity; i++)
    if (k.ins[i]->u.tensor.ndim != 0) return false;
  DType dt = k.ins[k.row->data]->u.tensor.dtype;
  sb_printf(out, "%*s{\n", indent, "");
  if (dt.code == DT_FLOAT) sb_printf(out, "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n");
  if (k.bounded) {
    StrBuf b = {0};
    lower_put_bound(&b, "lo", dt, k.lo);
    lower_put_bound(&b, "hi", dt, k.hi);
    sb_printf(out, "%*s%s", indent, "", sb_str(&b)); /* lower_put_bound indents by 2 itself */
    sb_free(&b);
  }
  for (int i = 0; i < k.row->arity; i++) {
    const char *ct = lower_compute_ctype(k.ins[i]->u.tensor.dtype);
    sb_printf(out, "%*s  const %s x%d = (%s)(%s);\n", indent, "", ct, i, ct, ops[i]);
  }
  Subst s = {dt.bits == 64 ? "uint64_t" : "uint32_t", lower_elem_ctype(dt)};
  StrBuf e = {0};
  put_tmpl(&e, k.tmpl, &s);
  sb_printf(out, "%*s  %s = ", indent, "", dest);
  lower_put_convert(out, sb_str(&e), k.cls[k.row->data], k.res->u.tensor.dtype);
  sb_puts(out, ";\n");
  sb_printf(out, "%*s}\n", indent, "");
  sb_free(&e);
  return true;
}
