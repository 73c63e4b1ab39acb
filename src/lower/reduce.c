/* lower/reduce.c: nn.softmax, nn.fast_softmax and nn.log_softmax along
** any axis, and sum, mean, max and min over any axes, with the group's
** elementwise tail as an epilogue.
**
** Each row (outer x inner positions, dim elements apart by inner) takes
** three passes as in the reference kernel, in double and in the same
** order: the maximum (NaN wins), the sum of exp(x - max), then exp(x -
** max) / sum (log_softmax: x - max - log(sum)) rounded to the dtype. So
** the result is the reference kernel's to the bit. The epilogue is a
** second loop over the result (lower/elemwise.c), reading the softmax
** where it was stored.
**
** The operand of softmax is a parameter; that of a reduction may also be
** an elementwise chain of the group (sum(exp(x))), computed element by
** element inside the reduction's loop (see Prologue below). */
#include <stdlib.h>
#include <string.h>

#include "lower/kernel.h"

bool softmax_lower(StrBuf *sb, const char *name, const Group *g, int anchor, const char *where) {
  const GNode *a = &g->nodes[anchor];
  if (a->nargs != 1 || a->args[0] >= 0) return false;
  int p = -1 - a->args[0];
  const Type *tx = g->fn->u.func.params[p]->type, *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(tx) || !lower_static_tensor(res) || !dtype_eq(a->call->type->u.tensor.dtype, tx->u.tensor.dtype))
    return false;
  DType dt = tx->u.tensor.dtype;
  if (dt.code != DT_FLOAT || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1) return false;
  int ndim = tx->u.tensor.ndim;
  int64_t axis = lower_attr_int(a->call->u.call.attrs, "axis", -1);
  if (axis < 0) axis += ndim;
  if (axis < 0 || axis >= ndim) return false;
  int64_t outer = 1, inner = 1, dim = tx->u.tensor.shape[axis];
  for (int d = 0; d < axis; d++) outer *= tx->u.tensor.shape[d];
  for (int d = (int)axis + 1; d < ndim; d++) inner *= tx->u.tensor.shape[d];
  if (!outer || !inner || !dim) return false;
  /* The epilogue: the other live nodes, on the softmax's shape and dtype. */
  Ewise ew;
  bool epilogue = false;
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].live && i != anchor) epilogue = true;
  if (epilogue) {
    if (!dtype_eq(res->u.tensor.dtype, dt) || res->u.tensor.ndim != ndim) return false;
    for (int d = 0; d < ndim; d++)
      if (res->u.tensor.shape[d] != tx->u.tensor.shape[d]) return false;
    if (!ew_analyse(g, anchor, &ew)) return false;
    StrBuf probe = {0}; /* the leaves must broadcast to the result */
    bool ok = ew_put_loops(&probe, &ew, 2);
    sb_free(&probe);
    if (!ok) return false;
  } else if (anchor != g->nnodes - 1) {
    return false;
  }
  bool logsm = a->op->id == OP_LOG_SOFTMAX;
  const char *ct = lower_elem_ctype(dt);
  sb_printf(sb, "/* %s%s: softmax rows in double, as the reference kernel */\n", a->op->name,
            epilogue ? " and an elementwise epilogue" : "");
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_printf(sb, "  static const int64_t shape[%d] = {", ndim);
  for (int d = 0; d < ndim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)tx->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, %d, 1}, %d, "
            "shape, false);\n",
            dt.bits, ndim);
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_printf(sb, "  %s *restrict o = (%s *)t->dl.data;\n", ct, ct);
  sb_puts(sb, "  {\n");
  sb_printf(sb, "    const %s *restrict x = (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", ct, ct, p);
  sb_printf(sb, "    for (int64_t u = 0; u < %lld; u++)\n", (long long)outer);
  sb_printf(sb, "      for (int64_t v = 0; v < %lld; v++) {\n", (long long)inner);
  sb_printf(sb, "        const int64_t base = u * %lld + v;\n", (long long)(dim * inner));
  sb_puts(sb, "        double mx = -HUGE_VAL, sum = 0;\n");
  char at[64];
  snprintf(at, sizeof at, inner == 1 ? "base + j" : "base + j * %lld", (long long)inner);
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)dim);
  sb_printf(sb, "          const double e = (double)x[%s];\n", at);
  sb_puts(sb, "          if (e > mx || isnan(e)) mx = e;\n        }\n");
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) sum += exp((double)x[%s] - mx);\n", (long long)dim, at);
  if (logsm) sb_puts(sb, "        const double ls = log(sum);\n");
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)dim);
  sb_printf(sb, "          const double d = (double)x[%s] - mx;\n", at);
  sb_printf(sb, "          o[%s] = (%s)(%s);\n        }\n      }\n  }\n", at, ct, logsm ? "d - ls" : "exp(d) / sum");
  if (epilogue) {
    ew_put_bounds(sb, &ew);
    ew_put_loops(sb, &ew, 2);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

/* {==== sum, mean, max, min ====}
** On float32/float64, over any axes: the kept axes' loops outside, the
** reduced axes' loops inside, both in row-major order, accumulating in
** double as the reference kernel (sum and mean add in that order, max and
** min fold from the first element with its comparison, NaN included), so
** the result is the reference kernel's to the bit. An empty reduction is
** left to the reference kernel. The epilogue is a second loop, as for
** softmax. */

/* The reduced axes of attrs over rank ndim into mask; false when invalid. */
static bool reduce_axes(const Attrs *attrs, int ndim, bool *mask) {
  int f = attrs && attrs->cls ? attrs_class_field(attrs->cls, "axis", 4) : -1;
  const AttrValue *v = f >= 0 ? attrs->values[f] : NULL;
  int n = 0;
  int64_t axes[LOWER_MAX_NDIM];
  if (v && v->kind == AV_INT) {
    axes[n++] = v->u.i.v;
  } else if (v && v->kind == AV_ARRAY) {
    if (v->u.arr.n > LOWER_MAX_NDIM) return false;
    for (int i = 0; i < v->u.arr.n; i++) {
      if (v->u.arr.items[i]->kind != AV_INT) return false;
      axes[n++] = v->u.arr.items[i]->u.i.v;
    }
  } else if (v && v->kind != AV_NONE) {
    return false;
  }
  for (int i = 0; i < ndim; i++) mask[i] = n == 0;
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (a < 0 || a >= ndim || mask[a]) return false;
    mask[a] = true;
  }
  if (n > 0 && lower_attr_int(attrs, "exclude", 0))
    for (int i = 0; i < ndim; i++) mask[i] = !mask[i];
  return true;
}

/* {==== A prologue: the chain that computes a reduction's operand ====}
** sum(exp(x)): the operand is an elementwise chain of the group (on
** parameters, constants, tuple fields). It is computed inside the
** reduction's innermost loop, element by element, into a local: no
** intermediate tensor. The group is cut in two: the chain (the operand's
** dependencies, the operand last) and the rest (the anchor and the
** epilogue), which may not read the chain's nodes but through the anchor. */
typedef struct Prologue {
  Group chain; /* nodes up to the operand, only its dependencies live */
  Group rest;  /* the group with those dependencies dead */
  Ewise ew;    /* the chain */
} Prologue;

static void mark_live(Group *g, int i) {
  if (i < 0 || g->nodes[i].live) return;
  g->nodes[i].live = true;
  for (int j = 0; j < g->nodes[i].nargs; j++) mark_live(g, g->nodes[i].args[j]);
}

/* Splits g at node x, the operand of the anchor; false when the chain is
** not an elementwise one on x's shape or the rest reads one of its nodes. */
static bool prologue_split(const Group *g, int anchor, int x, Prologue *P) {
  if (g->nodes[x].kind != GN_CALL) return false;
  P->chain = *g;
  P->chain.nnodes = x + 1;
  for (int i = 0; i <= x; i++) P->chain.nodes[i].live = false;
  mark_live(&P->chain, x);
  P->rest = *g;
  for (int i = 0; i <= x; i++)
    if (P->chain.nodes[i].live) P->rest.nodes[i].live = false;
  for (int i = 0; i < g->nnodes; i++) {
    if (!P->rest.nodes[i].live || i == anchor) continue;
    for (int j = 0; j < g->nodes[i].nargs; j++) {
      int a = g->nodes[i].args[j];
      if (a >= 0 && a <= x && P->chain.nodes[a].live) return false;
    }
  }
  if (!ew_analyse(&P->chain, -1, &P->ew)) return false;
  StrBuf probe = {0}; /* the leaves broadcast to x's shape */
  bool ok = ew_put_loops(&probe, &P->ew, 2);
  sb_free(&probe);
  return ok;
}

/* The flat index of chain leaf l at the counters iD of the dims of tx
** (size-1 dims have none): its broadcast strides. */
static void put_leaf_index(StrBuf *sb, const EwLeaf *l, const Type *tx) {
  int nd = tx->u.tensor.ndim;
  const int64_t *shape = tx->u.tensor.shape;
  bool any = false;
  for (int d = 0; d < nd; d++) {
    int j = d - (nd - l->ndim);
    if (shape[d] == 1 || j < 0 || l->shape[j] != shape[d]) continue;
    int64_t s = 1;
    for (int q = j + 1; q < l->ndim; q++) s *= l->shape[q];
    if (any) sb_puts(sb, " + ");
    if (s == 1) sb_printf(sb, "i%d", d);
    else sb_printf(sb, "i%d * %lld", d, (long long)s);
    any = true;
  }
  if (!any) sb_putc(sb, '0');
}

/* `const double v = ...;`: the operand's element at the counters, loaded
** from the parameter or computed by the chain. */
static void put_operand(StrBuf *sb, const Prologue *P, const Type *tx, const char *idx, int indent) {
  if (!P) {
    sb_printf(sb, "%*sconst double v = (double)x[%s];\n", indent, "", idx);
    return;
  }
  StrBuf ix[EW_MAX_LEAVES];
  const char *index[EW_MAX_LEAVES];
  for (int k = 0; k < P->ew.nleaves; k++) {
    memset(&ix[k], 0, sizeof ix[k]);
    put_leaf_index(&ix[k], &P->ew.leaves[k], tx);
    index[k] = P->ew.leaves[k].param >= 0 ? sb_str(&ix[k]) : NULL;
  }
  ew_put_body(sb, &P->ew, indent, index, "vv", "0", "");
  sb_printf(sb, "%*sconst double v = (double)vv[0];\n", indent, "");
  for (int k = 0; k < P->ew.nleaves; k++) sb_free(&ix[k]);
}

static bool reduce_emit(StrBuf *sb, const char *name, const Group *g, int anchor, const Prologue *P,
                        const char *where);

bool reduce_lower(StrBuf *sb, const char *name, const Group *g, int anchor, const char *where) {
  const GNode *a = &g->nodes[anchor];
  if (a->nargs != 1) return false;
  if (a->args[0] < 0) return reduce_emit(sb, name, g, anchor, NULL, where);
  Prologue *P = rly_xcalloc(1, sizeof *P); /* 80 KB: not on the stack */
  bool ok = prologue_split(g, anchor, a->args[0], P) && reduce_emit(sb, name, &P->rest, anchor, P, where);
  free(P);
  return ok;
}

/* The reduction of the parameter the anchor reads (P NULL) or of the
** chain P computes; g is the group (P: the rest, the chain's nodes dead). */
static bool reduce_emit(StrBuf *sb, const char *name, const Group *g, int anchor, const Prologue *P,
                        const char *where) {
  const GNode *a = &g->nodes[anchor];
  int p = a->args[0] < 0 ? -1 - a->args[0] : -1;
  const Type *tx = p >= 0 ? g->fn->u.func.params[p]->type : g->nodes[a->args[0]].call->type;
  const Type *tr = a->call->type, *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(tx) || !lower_static_tensor(tr) || !lower_static_tensor(res)) return false;
  DType dt = tx->u.tensor.dtype;
  if (dt.code != DT_FLOAT || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1 || !dtype_eq(tr->u.tensor.dtype, dt))
    return false;
  int ndim = tx->u.tensor.ndim;
  bool mask[LOWER_MAX_NDIM];
  if (!reduce_axes(a->call->u.call.attrs, ndim, mask)) return false;
  int64_t count = 1, nout = 1, stride[LOWER_MAX_NDIM], s = 1;
  for (int d = ndim - 1; d >= 0; d--) {
    stride[d] = s;
    s *= tx->u.tensor.shape[d];
  }
  for (int d = 0; d < ndim; d++) {
    if (mask[d]) count *= tx->u.tensor.shape[d];
    else nout *= tx->u.tensor.shape[d];
  }
  if (!count || !nout) return false;
  /* The epilogue: the other live nodes, on the reduction's shape and dtype. */
  Ewise ew;
  bool epilogue = false;
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].live && i != anchor) epilogue = true;
  if (epilogue) {
    if (!dtype_eq(res->u.tensor.dtype, dt) || res->u.tensor.ndim != tr->u.tensor.ndim) return false;
    for (int d = 0; d < tr->u.tensor.ndim; d++)
      if (res->u.tensor.shape[d] != tr->u.tensor.shape[d]) return false;
    if (!ew_analyse(g, anchor, &ew)) return false;
    StrBuf probe = {0};
    bool ok = ew_put_loops(&probe, &ew, 2);
    sb_free(&probe);
    if (!ok) return false;
  } else if (anchor != g->nnodes - 1) {
    return false;
  }
  OpId op = a->op->id;
  bool fold = op == OP_MAX || op == OP_MIN;
  const char *ct = lower_elem_ctype(dt);
  int rdim = tr->u.tensor.ndim;
  sb_printf(sb, "/* %s%s%s: reduction in double, as the reference kernel */\n", P ? "an elementwise chain, " : "",
            a->op->name, epilogue ? " and an elementwise epilogue" : "");
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  if (rdim) {
    sb_printf(sb, "  static const int64_t shape[%d] = {", rdim);
    for (int d = 0; d < rdim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)tr->u.tensor.shape[d]);
    sb_puts(sb, "};\n");
  }
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, %d, 1}, %d, "
            "%s, false);\n",
            dt.bits, rdim, rdim ? "shape" : "NULL");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_printf(sb, "  %s *restrict o = (%s *)t->dl.data;\n", ct, ct);
  sb_puts(sb, "  {\n");
  if (P) { /* the chain's pointers, bounds and constants; its value per element */
    ew_put_pointers(sb, &P->ew, 4);
    ew_put_bounds(sb, &P->ew);
    sb_printf(sb, "    %s vv[1];\n", ct);
  } else {
    sb_printf(sb, "    const %s *restrict x = (const %s *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", ct, ct, p);
  }
  sb_puts(sb, "    int64_t oi = 0;\n");
  int indent = 4;
  StrBuf idx = {0};
  for (int pass = 0; pass < 2; pass++) { /* kept axes, then reduced ones */
    if (pass) {
      sb_printf(sb, "%*s{\n", indent, "");
      indent += 2;
      sb_printf(sb, "%*sdouble acc = 0;\n", indent, "");
      if (fold) sb_printf(sb, "%*sbool first = true;\n", indent, "");
    }
    for (int d = 0; d < ndim; d++) {
      if (mask[d] != (pass == 1) || tx->u.tensor.shape[d] == 1) continue;
      sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++)\n", indent, "", d, d,
                (long long)tx->u.tensor.shape[d], d);
      indent += 2;
      if (idx.len) sb_puts(&idx, " + ");
      if (stride[d] == 1) sb_printf(&idx, "i%d", d);
      else sb_printf(&idx, "i%d * %lld", d, (long long)stride[d]);
    }
  }
  sb_printf(sb, "%*s{\n", indent, "");
  put_operand(sb, P, tx, idx.len ? sb_str(&idx) : "0", indent + 2);
  if (op == OP_MAX) sb_printf(sb, "%*s  acc = first || !(acc > v) ? v : acc;\n", indent, "");
  else if (op == OP_MIN) sb_printf(sb, "%*s  acc = first || !(acc < v) ? v : acc;\n", indent, "");
  else sb_printf(sb, "%*s  acc += v;\n", indent, "");
  if (fold) sb_printf(sb, "%*s  first = false;\n", indent, "");
  sb_printf(sb, "%*s}\n", indent, "");
  /* back to the block that holds acc */
  indent = 4;
  for (int d = 0; d < ndim; d++)
    if (!mask[d] && tx->u.tensor.shape[d] != 1) indent += 2;
  indent += 2;
  if (op == OP_MEAN) sb_printf(sb, "%*so[oi++] = (%s)(acc / %lld.0);\n", indent, "", ct, (long long)count);
  else sb_printf(sb, "%*so[oi++] = (%s)acc;\n", indent, "", ct);
  sb_printf(sb, "%*s}\n", indent - 2, "");
  sb_puts(sb, "  }\n");
  sb_free(&idx);
  if (epilogue) {
    ew_put_bounds(sb, &ew);
    ew_put_loops(sb, &ew, 2);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}
