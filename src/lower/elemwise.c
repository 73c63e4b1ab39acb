/* lower/elemwise.c: fused elementwise and broadcast chains, and the
** elementwise epilogue of an anchor (nn.dense, nn.batch_matmul).
**
** A chain is the group's live calls, each an operator of the lowering table
** (lower.def) or nn.bias_add. Every call's shape broadcasts to the result's
** (NumPy rules compose, so each parameter is read at the position its own
** broadcast to the result gives; nn.bias_add's bias counts as [C, 1, ..., 1]),
** so the whole chain is one loop over the result: the parameters (leaves)
** are loaded, each call is computed into a local, and the last one is
** stored. Every call rounds its value to its dtype, as the reference
** kernels do call by call, so a fused chain gives the same bits as the
** calls one after the other (floats computed in double and rounded once
** per call, see lower.def), with one exception: float32 exp, fast_exp,
** tanh, fast_tanh and sigmoid use the vectorizable float functions of
** lower/fastmath.c (within a few ulps of the reference, not its bits).
** A chain's leaves may be fields of tuple parameters (`%p.1`, what FuseOps
** makes of a split's consumer), read in place from the tuple's tensors.
**
** The kernel's loops are a function of their own (NAME_loop) whose
** pointers are restrict parameters: gcc ignores restrict on locals loaded
** from the argument objects, and without it -O2 vectorizes nothing.
**
** An epilogue is the same chain with the anchor's value as one more leaf,
** read from the result buffer where the anchor has just stored it, and the
** result written back in place (each element is read, then written, by the
** same iteration). */
#include <string.h>

#include "lower/kernel.h"

/* {==== Analysis ====} */

static const Type *operand_type(const Group *g, int a) {
  return a >= 0 ? g->nodes[a].call->type : g->fn->u.func.params[-1 - a]->type;
}

static bool is_f32(DType t) { return t.code == DT_FLOAT && t.bits == 32 && t.lanes == 1; }

/* The leaf for (param, field, shape), added when new; -1 when full. */
static int leaf_for(Ewise *ew, int param, int field, DType dt, int ndim, const int64_t *shape) {
  for (int k = 0; k < ew->nleaves; k++) {
    const EwLeaf *l = &ew->leaves[k];
    if (l->param == param && l->field == field && l->ndim == ndim &&
        !memcmp(l->shape, shape, sizeof shape[0] * (size_t)ndim))
      return k;
  }
  if (ew->nleaves == EW_MAX_LEAVES) return -1;
  EwLeaf *l = &ew->leaves[ew->nleaves];
  l->param = param;
  l->field = field;
  l->dtype = dt;
  l->ndim = ndim;
  memcpy(l->shape, shape, sizeof shape[0] * (size_t)ndim);
  return ew->nleaves++;
}

/* Whether node i is `%p.k`, a field of a tuple parameter: a leaf. */
static bool param_field(const Group *g, int i) { return g->nodes[i].kind == GN_PROJ && g->nodes[i].args[0] < 0; }

bool ew_call_template(const Group *g, int i, const char **tmpl_out, bool *bounded, double *lo, double *hi) {
  const GNode *n = &g->nodes[i];
  const LowerRow *row = lower_find_row(n->op->id == OP_BIAS_ADD ? OP_ADD : n->op->id);
  if (!row || n->nargs != row->arity) return false;
  const Type *t = n->call->type, *ins[GROUP_MAX_ARGS];
  DClass cls[GROUP_MAX_ARGS], rcls;
  if (!lower_static_tensor(t) || !lower_dtype_class(t->u.tensor.dtype, &rcls)) return false;
  for (int j = 0; j < n->nargs; j++) {
    ins[j] = operand_type(g, n->args[j]);
    if (!lower_static_tensor(ins[j]) || !lower_dtype_class(ins[j]->u.tensor.dtype, &cls[j])) return false;
  }
  DType dt = ins[row->data]->u.tensor.dtype, rt = t->u.tensor.dtype;
  for (int j = row->data + 1; j < n->nargs; j++)
    if (!dtype_eq(ins[j]->u.tensor.dtype, dt)) return false;
  if (row->result == RR_SAME && !dtype_eq(rt, dt)) return false;
  if (row->result == RR_BOOL && !dtype_is_bool(rt)) return false;
  const char *tmpl = row->tmpl[cls[row->data]];
  if (is_f32(dt) && fm_tmpl(n->op->id)) tmpl = fm_tmpl(n->op->id); /* float, vectorizable */
  if (!tmpl) return false;
  for (int j = 0; j < n->nargs; j++) {
    const char name[2] = {(char)('A' + j), 0};
    if (!lower_tmpl_uses(tmpl, name)) return false;
  }
  *tmpl_out = tmpl;
  *bounded = lower_tmpl_uses(tmpl, "LO") || lower_tmpl_uses(tmpl, "HI");
  if (*bounded && (!lower_attr_double(n->call->u.call.attrs, "a_min", lo) ||
                   !lower_attr_double(n->call->u.call.attrs, "a_max", hi)))
    return false;
  return true;
}

bool ew_analyse(const Group *g, int anchor, Ewise *ew) {
  memset(ew, 0, sizeof *ew);
  ew->g = g;
  ew->anchor = anchor;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(res)) return false;
  for (int i = 0; i < g->nnodes; i++) {
    const GNode *n = &g->nodes[i];
    for (int j = 0; j < GROUP_MAX_ARGS; j++) ew->leaf_of[i][j] = -1;
    if (!n->live || i == anchor || n->kind == GN_CONST || param_field(g, i)) continue;
    if (n->kind != GN_CALL) return false;
    bool bias = n->op->id == OP_BIAS_ADD;
    if (!ew_call_template(g, i, &ew->tmpl[i], &ew->bounded[i], &ew->lo[i], &ew->hi[i])) return false;
    const Type *t = n->call->type, *ins[GROUP_MAX_ARGS];
    for (int j = 0; j < n->nargs; j++) {
      int a = n->args[j];
      if (a >= 0 && a != anchor && g->nodes[a].kind == GN_CONST) {
        const ConstData *c = g->nodes[a].call->u.constant.value;
        if (const_numel(c) != 1 || !dtype_eq(c->dtype, g->nodes[a].call->type->u.tensor.dtype)) return false;
      } else if (a >= 0 && a != anchor && g->nodes[a].kind != GN_CALL && !param_field(g, a)) {
        return false;
      }
      ins[j] = operand_type(g, a);
    }
    /* The leaves: parameters at their broadcast shape, and the anchor. */
    for (int j = 0; j < n->nargs; j++) {
      int a = n->args[j];
      bool cnst = a >= 0 && a != anchor && g->nodes[a].kind == GN_CONST;
      bool proj = a >= 0 && a != anchor && param_field(g, a);
      if (a >= 0 && a != anchor && !cnst && !proj) continue;
      int64_t shape[LOWER_MAX_NDIM];
      int ndim = ins[j]->u.tensor.ndim;
      if (ndim) memcpy(shape, ins[j]->u.tensor.shape, sizeof shape[0] * (size_t)ndim); /* 0-d: shape is NULL */
      if (bias && j == 1) { /* [C] along axis of the data's rank r: [C, 1, ..., 1] of rank r - axis */
        int r = ins[0]->u.tensor.ndim;
        int64_t axis = lower_attr_int(n->call->u.call.attrs, "axis", 1);
        if (axis < 0) axis += r;
        if (ndim != 1 || axis < 0 || axis >= r || ins[0]->u.tensor.shape[axis] != shape[0]) return false;
        ndim = r - (int)axis;
        for (int d = 1; d < ndim; d++) shape[d] = 1;
      } else if (bias && t->u.tensor.ndim != ins[0]->u.tensor.ndim) {
        return false;
      }
      int param = cnst ? -2 - a : proj ? -1 - g->nodes[a].args[0] : a >= 0 ? -1 : -1 - a; /* else a >= 0: the anchor */
      int k = leaf_for(ew, param, proj ? g->nodes[a].index : -1, ins[j]->u.tensor.dtype, ndim, shape);
      if (k < 0) return false;
      ew->leaf_of[i][j] = k;
    }
    if (bias && n->args[1] >= 0) return false; /* a computed bias: its shape is not the leaf's */
  }
  return true;
}

/* {==== Text ====} */

/* A one-element constant's value as a C expression of its compute type. */
void ew_put_const(StrBuf *sb, const ConstData *c) {
  DType t = c->dtype;
  const unsigned char *d = c->data;
  if (t.code == DT_FLOAT) {
    double v;
    if (t.bits == 32) {
      float f;
      memcpy(&f, d, 4);
      v = f;
    } else {
      memcpy(&v, d, 8);
    }
    lower_put_double(sb, v);
    return;
  }
  uint64_t u = 0;
  memcpy(&u, d, (size_t)(dtype_is_bool(t) ? 1 : t.bits / 8)); /* little-endian */
  int bits = dtype_is_bool(t) ? 8 : t.bits;
  if (t.code == DT_INT && bits < 64 && (u >> (bits - 1)) & 1) u |= ~(uint64_t)0 << bits; /* sign-extend */
  if (t.code == DT_INT) {
    int64_t v = (int64_t)u;
    if (v == INT64_MIN) sb_puts(sb, "INT64_MIN");
    else sb_printf(sb, "(%s)%lld", lower_elem_ctype(t), (long long)v);
  } else {
    sb_printf(sb, "(%s)%lluu", lower_elem_ctype(t), (unsigned long long)u);
  }
}

/* float32 values are kept as float: the ops below give, in float, the
** bits the reference kernels get by computing in double and rounding once
** (for + - * / and sqrt, double has more than 2 * 24 + 2 bits, so rounding
** twice is the same as rounding once; the others are exact), and float
** loops vectorize twice as wide. exp, tanh and sigmoid have float
** functions of their own (fm_tmpl); every other op computes in double. */
static bool float_exact(OpId op) {
  switch (op) {
  case OP_ADD: case OP_SUBTRACT: case OP_MULTIPLY: case OP_DIVIDE: case OP_SQRT: case OP_BIAS_ADD:
  case OP_RELU: case OP_MAXIMUM: case OP_MINIMUM: case OP_NEGATIVE: case OP_ABS: case OP_COPY: case OP_CLIP:
  case OP_WHERE: case OP_EQUAL: case OP_NOT_EQUAL: case OP_LESS: case OP_LESS_EQUAL: case OP_GREATER:
  case OP_GREATER_EQUAL:
    return true;
  default: return false;
  }
}

/* The C type a value of dtype t is kept in within a chain. */
const char *ew_value_ctype(DType t) { return is_f32(t) ? "float" : lower_compute_ctype(t); }

void ew_put_bounds(StrBuf *sb, const Ewise *ew) {
  const Group *g = ew->g;
  for (int k = 0; k < ew->nleaves; k++) {
    if (ew->leaves[k].param > -2) continue;
    const ConstData *c = g->nodes[-2 - ew->leaves[k].param].call->u.constant.value;
    sb_printf(sb, "  const %s x%d = ", ew_value_ctype(c->dtype), k);
    ew_put_const(sb, c);
    sb_puts(sb, ";\n");
  }
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || i == ew->anchor || !ew->bounded[i]) continue;
    const GNode *n = &g->nodes[i];
    const LowerRow *row = lower_find_row(n->op->id);
    if (!row) continue;
    DType dt = operand_type(g, n->args[row->data])->u.tensor.dtype;
    for (int b = 0; b < 2; b++) {
      char name[16];
      StrBuf t = {0};
      snprintf(name, sizeof name, "%s%d", b ? "hi" : "lo", i);
      lower_put_bound(&t, name, dt, b ? ew->hi[i] : ew->lo[i]);
      /* a float32 bound is rounded to float already: keep it as one */
      const char *text = sb_str(&t), *dbl = "  const double ";
      if (is_f32(dt) && !strncmp(text, dbl, strlen(dbl))) sb_printf(sb, "  const float %s", text + strlen(dbl));
      else sb_puts(sb, text);
      sb_free(&t);
    }
  }
}

/* The type of leaf k's elements. */
static DType leaf_dtype(const Ewise *ew, int k) { return ew->leaves[k].dtype; }

/* The name of the pointer a parameter leaf reads. */
static void put_ptr(StrBuf *sb, const EwLeaf *l) {
  if (l->field >= 0) sb_printf(sb, "p%d_%d", l->param, l->field);
  else sb_printf(sb, "p%d", l->param);
}

/* Whether leaf k reads a parameter (or field) no earlier leaf reads: the
** one that declares its pointer. */
static bool first_reader(const Ewise *ew, int k) {
  const EwLeaf *l = &ew->leaves[k];
  if (l->param < 0) return false;
  for (int q = 0; q < k; q++)
    if (ew->leaves[q].param == l->param && ew->leaves[q].field == l->field) return false;
  return true;
}

void ew_put_pointers(StrBuf *sb, const Ewise *ew, int indent) {
  for (int k = 0; k < ew->nleaves; k++) {
    const EwLeaf *l = &ew->leaves[k];
    if (!first_reader(ew, k)) continue;
    const char *ct = lower_elem_ctype(l->dtype);
    sb_printf(sb, "%*sconst %s *restrict ", indent, "", ct);
    put_ptr(sb, l);
    if (l->field >= 0)
      sb_printf(sb, " = (const %s *)RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(args[%d])->fields[%d])->dl.data;\n", ct, l->param,
                l->field);
    else
      sb_printf(sb, " = (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", ct, l->param);
  }
}

void ew_put_body(StrBuf *sb, const Ewise *ew, int indent, const char *const *index, const char *out,
                 const char *out_index, const char *anchor_expr) {
  const Group *g = ew->g;
  for (int k = 0; k < ew->nleaves; k++) {
    if (!index[k] || ew->leaves[k].param <= -2) continue;
    const char *ct = ew_value_ctype(leaf_dtype(ew, k));
    if (ew->leaves[k].param < 0) sb_printf(sb, "%*sconst %s x%d = (%s)%s;\n", indent, "", ct, k, ct, anchor_expr);
    else {
      sb_printf(sb, "%*sconst %s x%d = (%s)", indent, "", ct, k, ct);
      put_ptr(sb, &ew->leaves[k]);
      sb_printf(sb, "[%s];\n", index[k]);
    }
  }
  for (int i = 0; i < g->nnodes; i++) {
    const GNode *n = &g->nodes[i];
    if (!n->live || i == ew->anchor || n->kind != GN_CALL) continue;
    char ops[GROUP_MAX_ARGS][32], lo[32], hi[32];
    const char *opp[GROUP_MAX_ARGS];
    for (int j = 0; j < n->nargs; j++) {
      if (ew->leaf_of[i][j] >= 0) snprintf(ops[j], sizeof ops[j], "x%d", ew->leaf_of[i][j]);
      else snprintf(ops[j], sizeof ops[j], "n%d", n->args[j]);
      opp[j] = ops[j];
    }
    snprintf(lo, sizeof lo, "lo%d", i);
    snprintf(hi, sizeof hi, "hi%d", i);
    if (i == g->nnodes - 1) sb_printf(sb, "%*s%s[%s] = ", indent, "", out, out_index);
    else sb_printf(sb, "%*sconst %s n%d = ", indent, "", ew_value_ctype(n->call->type->u.tensor.dtype), i);
    ew_put_call(sb, g, i, ew->tmpl[i], opp, lo, hi);
    sb_puts(sb, ";\n");
  }
}

void ew_put_call(StrBuf *sb, const Group *g, int i, const char *tmpl, const char *const *operands, const char *lo,
                 const char *hi) {
  const GNode *n = &g->nodes[i];
  const LowerRow *row = lower_find_row(n->op->id == OP_BIAS_ADD ? OP_ADD : n->op->id);
  char ops[GROUP_MAX_ARGS][48], l[48], h[48];
  const char *opp[GROUP_MAX_ARGS];
  DClass cls;
  DType dt = operand_type(g, n->args[row->data])->u.tensor.dtype, rt = n->call->type->u.tensor.dtype;
  /* float operands of a double computation, unless the op is exact in
  ** float or has a float32 function (fastmath.c) */
  bool widen = is_f32(dt) && !float_exact(n->op->id) && !fm_tmpl(n->op->id);
  for (int j = 0; j < n->nargs; j++) {
    snprintf(ops[j], sizeof ops[j], widen && j >= row->data ? "((double)%s)" : "%s", operands[j]);
    opp[j] = ops[j];
  }
  snprintf(l, sizeof l, widen ? "((double)%s)" : "%s", lo);
  snprintf(h, sizeof h, widen ? "((double)%s)" : "%s", hi);
  lower_dtype_class(dt, &cls);
  StrBuf e = {0};
  lower_put_tmpl(&e, tmpl, opp, dt.bits == 64 ? "uint64_t" : "uint32_t", lower_elem_ctype(dt), l, h);
  lower_put_convert(sb, sb_str(&e), cls, rt);
  sb_free(&e);
}

/* {==== The chain as one loop ====} */

typedef struct EwLoop {
  int64_t n;
  int64_t stride[EW_MAX_LEAVES]; /* 0: broadcast */
} EwLoop;

/* The loop nest over the result's shape: size-1 dims dropped, adjacent
** dims merged where every leaf steps through them alike. */
static bool plan(const Ewise *ew, const Type *res, EwLoop *loops, int *nloops) {
  int ndim = res->u.tensor.ndim;
  *nloops = 0;
  for (int d = 0; d < ndim; d++) {
    EwLoop l;
    memset(&l, 0, sizeof l);
    l.n = res->u.tensor.shape[d];
    for (int k = 0; k < ew->nleaves; k++) {
      const EwLeaf *f = &ew->leaves[k];
      int j = d - (ndim - f->ndim);
      if (j < 0) continue;
      if (f->shape[j] != l.n) {
        if (f->shape[j] != 1) return false;
        continue;
      }
      l.stride[k] = 1;
      for (int q = j + 1; q < f->ndim; q++) l.stride[k] *= f->shape[q];
    }
    if (l.n == 1) continue;
    EwLoop *last = *nloops ? &loops[*nloops - 1] : NULL;
    bool merge = last != NULL;
    for (int k = 0; merge && k < ew->nleaves; k++) merge = last->stride[k] == l.stride[k] * l.n;
    if (merge) {
      last->n *= l.n;
      for (int k = 0; k < ew->nleaves; k++) last->stride[k] = l.stride[k];
    } else {
      loops[(*nloops)++] = l;
    }
  }
  return true;
}

/* The flat index of leaf k (k < 0: the result) at the counters. */
static void put_index(StrBuf *sb, const EwLoop *loops, int nloops, int k) {
  int64_t out_stride[LOWER_MAX_NDIM], size = 1;
  for (int d = nloops - 1; d >= 0; d--) {
    out_stride[d] = size;
    size *= loops[d].n;
  }
  bool any = false;
  for (int d = 0; d < nloops; d++) {
    int64_t s = k < 0 ? out_stride[d] : loops[d].stride[k];
    if (!s) continue;
    if (any) sb_puts(sb, " + ");
    if (s == 1) sb_printf(sb, "i%d", d);
    else sb_printf(sb, "i%d * %lld", d, (long long)s);
    any = true;
  }
  if (!any) sb_putc(sb, '0');
}

/* The ops of the group's live nodes, for the kernel's comment line. */
static void put_ops(StrBuf *sb, const Group *g) {
  bool first = true;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind != GN_CALL) continue;
    sb_printf(sb, "%s%s", first ? "" : ", ", g->nodes[i].op->name);
    first = false;
  }
}

/* The loops of ew_put_loops, the parameters' pointers declared before.
** With lo and hi (C expressions), the outermost loop runs over [lo, hi)
** only: a part of the result, for one thread. */
static bool put_loops(StrBuf *sb, const Ewise *ew, int indent0, const char *lo, const char *hi) {
  const Group *g = ew->g;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  EwLoop loops[LOWER_MAX_NDIM];
  int nloops;
  if (!plan(ew, res, loops, &nloops)) return false;
  /* Leaves read once before the loops, then the loops. */
  StrBuf idx[EW_MAX_LEAVES], oi = {0}, anchor = {0};
  const char *inside[EW_MAX_LEAVES];
  for (int k = 0; k < ew->nleaves; k++) {
    memset(&idx[k], 0, sizeof idx[k]);
    put_index(&idx[k], loops, nloops, k);
    bool inv = true;
    for (int d = 0; d < nloops; d++) inv = inv && !loops[d].stride[k];
    inside[k] = (inv && ew->leaves[k].param >= 0) || ew->leaves[k].param <= -2 ? NULL : sb_str(&idx[k]);
    if (inv && ew->leaves[k].param >= 0) {
      const char *ct = ew_value_ctype(leaf_dtype(ew, k));
      sb_printf(sb, "%*sconst %s x%d = (%s)", indent0, "", ct, k, ct);
      put_ptr(sb, &ew->leaves[k]);
      sb_printf(sb, "[%s];\n", sb_str(&idx[k]));
    }
  }
  int indent = indent0;
  for (int d = 0; d < nloops; d++, indent += 2) {
    if (d == 0 && lo)
      sb_printf(sb, "%*sfor (int64_t i0 = %s; i0 < %s; i0++)%s", indent, "", lo, hi, nloops > 1 ? "\n" : " {\n");
    else
      sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++)%s", indent, "", d, d, (long long)loops[d].n, d,
                d + 1 < nloops ? "\n" : " {\n");
  }
  put_index(&oi, loops, nloops, -1);
  sb_printf(&anchor, "o[%s]", sb_str(&oi));
  ew_put_body(sb, ew, indent, inside, "o", sb_str(&oi), sb_str(&anchor));
  if (nloops) sb_printf(sb, "%*s}\n", indent - 2, "");
  sb_free(&oi);
  sb_free(&anchor);
  for (int k = 0; k < ew->nleaves; k++) sb_free(&idx[k]);
  return true;
}

bool ew_put_loops(StrBuf *sb, const Ewise *ew, int indent) {
  StrBuf probe = {0}; /* nothing appended when the leaves do not broadcast */
  bool ok = put_loops(&probe, ew, indent, NULL, NULL);
  if (ok) {
    ew_put_pointers(sb, ew, indent);
    sb_puts(sb, sb_str(&probe));
  }
  sb_free(&probe);
  return ok;
}

void ew_put_pointer_list(StrBuf *sb, const Ewise *ew, EwPtrList how) {
  for (int k = 0; k < ew->nleaves; k++) {
    const EwLeaf *l = &ew->leaves[k];
    if (!first_reader(ew, k)) continue;
    const char *ct = lower_elem_ctype(l->dtype);
    if (how != EW_PTR_ARGS) {
      if (how == EW_PTR_PARAMS) sb_printf(sb, ", const %s *restrict ", ct);
      else sb_puts(sb, ", ");
      put_ptr(sb, l);
    } else if (l->field >= 0) {
      sb_printf(sb, ", (const %s *)RLYRT_AS_TENSOR(RLYRT_AS_TUPLE(args[%d])->fields[%d])->dl.data", ct, l->param,
                l->field);
    } else {
      sb_printf(sb, ", (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data", ct, l->param);
    }
  }
}

bool ew_lower(StrBuf *sb, const char *name, const Group *g, const char *where) {
  Ewise ew;
  if (!ew_analyse(g, -1, &ew)) return false;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  EwLoop loops[LOWER_MAX_NDIM];
  int nloops;
  if (!plan(&ew, res, loops, &nloops)) return false;
  DType rt = res->u.tensor.dtype;
  int ndim = res->u.tensor.ndim;
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) numel *= res->u.tensor.shape[d];
  const char *ot = lower_elem_ctype(rt);
  sb_puts(sb, "/* ");
  put_ops(sb, g);
  sb_puts(sb, ": elementwise chain, one loop */\n");
  /* float32 chains have AVX-512 and AVX2 versions too, picked at run
  ** time as the GEMM kernels' are: the same operations (no contraction),
  ** so the same bits, 16 or 8 wide instead of SSE2's 4. */
  bool versions = numel >= 16 && is_f32(rt);
  /* Threads: a large result is split along its outermost loop into parts
  ** (NAME_part), each computed by one thread; every element is computed
  ** as in one thread, so the same bits. The loops then take their range
  ** of that loop as parameters. A flat loop's parts are whole 64-byte
  ** lines. */
  bool par = lower_par_worth((double)numel, LOWER_PAR_MIN_ELEMS) && nloops >= 1 && loops[0].n >= 2;
  if (versions) lower_put_isa_preamble(sb);
  if (par) lower_put_threads_preamble(sb);
  for (int i = 0; numel && i < (versions ? lower_isa_count() : 1); i++) {
    /* The loops in a function of their own: gcc trusts restrict on
    ** parameters, not on locals loaded from the argument objects, and
    ** at -O2 it vectorizes no loop that would need an aliasing check. */
    if (versions) {
      lower_put_isa_if(sb, i);
      if (lower_isa_target(i)) sb_printf(sb, "__attribute__((target(\"%s\"))) ", lower_isa_target(i));
      sb_printf(sb, "static void %s_loop_%s(%s *restrict o", name, lower_isa_suffix(i), ot);
    } else {
      sb_printf(sb, "static void %s_loop(%s *restrict o", name, ot);
    }
    ew_put_pointer_list(sb, &ew, EW_PTR_PARAMS);
    sb_puts(sb, par ? ", int64_t lo, int64_t hi) {\n" : ") {\n");
    ew_put_bounds(sb, &ew);
    put_loops(sb, &ew, 2, par ? "lo" : NULL, par ? "hi" : NULL);
    sb_puts(sb, "}\n");
    if (versions) sb_puts(sb, "#endif\n");
  }
  StrBuf call = {0}; /* the loops over [lo, hi) of the outermost loop, on the result o */
  {
    StrBuf cargs = {0}, fn = {0};
    sb_puts(&cargs, "o");
    ew_put_pointer_list(&cargs, &ew, EW_PTR_ARGS);
    if (par) sb_puts(&cargs, ", lo, hi");
    sb_printf(&fn, "%s_loop", name);
    if (versions) lower_put_isa_call(&call, sb_str(&fn), sb_str(&cargs));
    else sb_printf(&call, "  %s(%s);\n", sb_str(&fn), sb_str(&cargs));
    sb_free(&cargs);
    sb_free(&fn);
  }
  if (par && numel) {
    /* One part: rows [i * step, (i + 1) * step) of the outermost loop. */
    sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  %s *o;\n  int64_t step;\n} %s_job;\n", name,
              ot, name);
    sb_printf(sb, "static void %s_part(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  rlyrt_object *const *args = J->args;\n", name, name);
    sb_printf(sb, "  %s *o = J->o;\n  const int64_t lo = i * J->step, hi = lo + J->step < %lld ? lo + J->step : %lld;\n",
              ot, (long long)loops[0].n, (long long)loops[0].n);
    sb_puts(sb, "  (void)slot;\n");
    sb_puts(sb, sb_str(&call));
    sb_puts(sb, "}\n");
  }
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  if (ndim) {
    sb_printf(sb, "  static const int64_t shape[%d] = {", ndim);
    for (int d = 0; d < ndim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
    sb_puts(sb, "};\n");
  }
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){%s, %d, 1}, %d, %s, "
            "false);\n",
            lower_dl_code(rt), dtype_is_bool(rt) ? 1 : rt.bits, ndim, ndim ? "shape" : "NULL");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (!numel) {
    sb_puts(sb, "  (void)args;\n");
  } else {
    sb_printf(sb, "  %s *o = (%s *)t->dl.data;\n", ot, ot);
    if (par) {
      /* Four parts per thread (a slow thread delays the call less). */
      long long n0 = (long long)loops[0].n, align = nloops == 1 ? 64 / (rt.bits / 8 ? rt.bits / 8 : 1) : 1;
      sb_puts(sb, "  const int32_t nt = RLYRT_KERNEL_THREADS;\n  if (nt > 1) {\n");
      sb_printf(sb, "    int64_t step = (%lld + 4 * nt - 1) / (4 * nt);\n", n0);
      if (align > 1) sb_printf(sb, "    step = (step + %lld) / %lld * %lld;\n", align - 1, align, align);
      sb_printf(sb, "    %s_job J = {args, o, step};\n", name);
      sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + step - 1) / step, %s_part, &J);\n", n0, name);
      sb_printf(sb, "  } else {\n    const int64_t lo = 0, hi = %lld;\n", n0);
      sb_puts(sb, sb_str(&call));
      sb_puts(sb, "  }\n");
    } else {
      sb_puts(sb, sb_str(&call));
    }
  }
  sb_free(&call);
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}
