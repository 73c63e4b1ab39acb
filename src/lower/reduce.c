/* lower/reduce.c: nn.softmax, nn.fast_softmax and nn.log_softmax along
** any axis, and sum, mean, max and min over any axes, with the group's
** elementwise tail as an epilogue (a second loop over the result, reading
** it where it was stored; lower/elemwise.c).
**
** The operand may be a parameter or an elementwise chain of the group
** (sum(exp(x)), softmax(x * 2)): see Prologue below.
**
** float32 computes in float32 and vectorizes; the loops are a function of
** their own with restrict parameters, in AVX-512, AVX2 and portable
** versions picked at run time (lower_put_isa_*, as the chains of
** lower/elemwise.c: the same text, compiled for each ISA). Lanes are
** independent accumulators (LANES of them), written as small constant
** loops `for (k = 0; k < LANES; k++) acc[k] += ...` that gcc and clang
** vectorize without reassociating anything:
**   - softmax rows: the maximum (NaN wins, as the reference kernel's), the
**     exp(x - max) (lower/fastmath.c's expf) stored and summed, the scale
**     by 1 / sum (log_softmax: x - max - logf(sum)); along the last axis
**     the lanes run along the row, along another axis across LANES inner
**     positions at a time. A chain operand is first computed into the
**     result's block (outer position) and the passes run there in place.
**   - reductions whose innermost (non-1) axis is reduced: LANES partial
**     sums (or maxima) along it, added pairwise at the end; max and min
**     also add v - v per lane, and a row where that is not 0 (a NaN or an
**     infinity) is folded again in the reference kernel's order, so the
**     NaN semantics are the reference's (TVM's select: a NaN is dropped by
**     a later number).
**   - reductions that keep their innermost axis: the result's row is the
**     accumulator, each reduced position folded into it in the reference
**     kernel's order, vectorized across the row.
** So float32 results are within float32 rounding of the reference kernel's
** (max and min exact but for the sign of a zero that ties, sum and mean
** to the accumulation error, softmax to that of expf and the sum), not
** its bits; tests compare them within a tolerance. float64 keeps double loops in the reference kernel's order
** (its bits); an empty reduction, softmax over an empty axis and float64
** softmax of a chain go to the reference kernels. */
#include <stdlib.h>
#include <string.h>

#include "lower/kernel.h"

enum { LANES = 32 }; /* float32 accumulators: 2 AVX-512, 4 AVX2, 8 SSE registers */

/* {==== A prologue: the chain that computes the anchor's operand ====}
** sum(exp(x)), softmax(x * 2): the operand is an elementwise chain of the
** group (on parameters, constants, tuple fields). A reduction computes it
** inside its innermost loop, element by element, into a local; a float32
** softmax computes it into the result's block (one outer position, the
** axis and the inner dims) and runs its passes there in place: no
** intermediate tensor either way. The leaves may broadcast in any way the
** chain's own loops allow (their index from the counters of the operand's
** dims, put_leaf_index). The group is cut in two: the chain (the operand's
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
** from the parameter or computed by the chain (float64 and scalar loops,
** `vv` declared before). */
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

/* {==== float32: vector lanes and ISA versions ====} */

/* The chain's value at the counters stored as `out[out_index] = ...;`. */
static void put_chain_store(StrBuf *sb, const Prologue *P, const Type *tx, const char *out, const char *out_index,
                            int indent) {
  StrBuf ix[EW_MAX_LEAVES];
  const char *index[EW_MAX_LEAVES];
  for (int k = 0; k < P->ew.nleaves; k++) {
    memset(&ix[k], 0, sizeof ix[k]);
    put_leaf_index(&ix[k], &P->ew.leaves[k], tx);
    index[k] = P->ew.leaves[k].param >= 0 ? sb_str(&ix[k]) : NULL;
  }
  ew_put_body(sb, &P->ew, indent, index, out, out_index, "");
  for (int k = 0; k < P->ew.nleaves; k++) sb_free(&ix[k]);
}

/* `const float v = ...;` (in a block of its own when computed by the chain). */
static void put_operand32(StrBuf *sb, const Prologue *P, const Type *tx, const char *idx, int indent) {
  if (!P) {
    sb_printf(sb, "%*sconst float v = x[%s];\n", indent, "", idx);
    return;
  }
  sb_printf(sb, "%*sfloat vv[1];\n", indent, "");
  put_chain_store(sb, P, tx, "vv", "0", indent);
  sb_printf(sb, "%*sconst float v = vv[0];\n", indent, "");
}

/* The flat index of x at the counters iD of the dims d in [from, to) of
** size > 1 ("0" when there are none). */
static void put_flat_index(StrBuf *sb, const Type *tx, int from, int to) {
  int nd = tx->u.tensor.ndim;
  bool any = false;
  for (int d = from; d < to; d++) {
    if (tx->u.tensor.shape[d] == 1) continue;
    int64_t s = 1;
    for (int q = d + 1; q < nd; q++) s *= tx->u.tensor.shape[q];
    if (any) sb_puts(sb, " + ");
    if (s == 1) sb_printf(sb, "i%d", d);
    else sb_printf(sb, "i%d * %lld", d, (long long)s);
    any = true;
  }
  if (!any) sb_putc(sb, '0');
}

/* `for (int64_t iD = 0; iD < N; iD++)` for the dims d in [from, to) of
** size > 1 whose mask is `which` (mask NULL: all); *indent grows. The
** loop of dim split (-1: none) runs over [lo, hi) only: one thread's part. */
static void put_dim_loops(StrBuf *sb, const Type *tx, int from, int to, const bool *mask, bool which, int *indent,
                          int split) {
  for (int d = from; d < to; d++) {
    if (tx->u.tensor.shape[d] == 1 || (mask && mask[d] != which)) continue;
    if (d == split)
      sb_printf(sb, "%*sfor (int64_t i%d = lo; i%d < hi; i%d++)\n", *indent, "", d, d, d);
    else
      sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++)\n", *indent, "", d, d,
                (long long)tx->u.tensor.shape[d], d);
    *indent += 2;
  }
}

/* Threads: the outermost dim of size > 1 among the first `to` dims of tx
** whose mask is `which` (mask NULL: any), when the reduction or softmax
** reads enough elements to split its outer positions over threads; -1
** otherwise. Each output is then computed by one thread, in the order of
** one thread: the same bits. */
static int split_dim(const Type *tx, int to, const bool *mask, bool which) {
  int64_t n = 1;
  for (int d = 0; d < tx->u.tensor.ndim; d++) n *= tx->u.tensor.shape[d];
  if (!lower_par_worth((double)n, LOWER_PAR_MIN_READ)) return -1;
  for (int d = 0; d < to; d++)
    if (tx->u.tensor.shape[d] > 1 && (!mask || mask[d] == which)) return d;
  return -1;
}

/* The lanes over n positions: blocks of W lanes, then the rest, each lane
** k at position `j + k`; body (at indent + 4) is the same text in both. */
static void put_lane_loops(StrBuf *sb, int indent, int64_t n, int w, const char *body) {
  int64_t full = n / w * w, rest = n - full;
  if (full) {
    sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j += %d)\n", indent, "", (long long)full, w);
    sb_printf(sb, "%*sfor (int k = 0; k < %d; k++) {\n%s%*s}\n", indent + 2, "", w, body, indent + 2, "");
  }
  if (rest) {
    sb_printf(sb, "%*s{\n%*sconst int64_t j = %lld;\n", indent, "", indent + 2, "", (long long)full);
    sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) {\n%s%*s}\n%*s}\n", indent + 2, "", (long long)rest, body,
              indent + 2, "", indent, "");
  }
}

/* `float NAME[W]` set to init, and the lanes folded into NAME[0] pairwise
** with `NAME[k] = COMBINE` (a template in a = NAME[k], b = NAME[k + w]). */
static void put_lanes_decl(StrBuf *sb, int indent, const char *acc, int w, const char *init) {
  sb_printf(sb, "%*sfloat %s[%d];\n", indent, "", acc, w);
  sb_printf(sb, "%*sfor (int k = 0; k < %d; k++) %s[k] = %s;\n", indent, "", w, acc, init);
}
static void put_lanes_fold(StrBuf *sb, int indent, const char *acc, int w, const char *fold) {
  for (int h = w / 2; h >= 1; h /= 2) { /* constant halves: each one vector operation */
    sb_printf(sb, "%*sfor (int k = 0; k < %d; k++) {\n", indent, "", h);
    sb_printf(sb, "%*sconst float a = %s[k], b = %s[k + %d];\n", indent + 2, "", acc, acc, h);
    sb_printf(sb, "%*s%s[k] = %s;\n%*s}\n", indent + 2, "", acc, fold, indent, "");
  }
}

/* The float32 loops `body` (indent 2; reads the inputs, writes o) as the
** function NAME_run(float *restrict o, PARAMS), one version per ISA when
** versions (the same text, each compiled for its ISA). */
static void put_run_functions(StrBuf *sb, const char *name, const Prologue *P, const char *pre, const char *body,
                              bool versions, bool par) {
  if (versions) lower_put_isa_preamble(sb);
  for (int i = 0; i < (versions ? lower_isa_count() : 1); i++) {
    if (versions) {
      lower_put_isa_if(sb, i);
      if (lower_isa_target(i)) sb_printf(sb, "__attribute__((target(\"%s\"))) ", lower_isa_target(i));
      sb_printf(sb, "static void %s_run_%s(float *restrict o", name, lower_isa_suffix(i));
    } else {
      sb_printf(sb, "static void %s_run(float *restrict o", name);
    }
    if (P) ew_put_pointer_list(sb, &P->ew, EW_PTR_PARAMS);
    else sb_puts(sb, ", const float *restrict x");
    sb_puts(sb, par ? ", int64_t lo, int64_t hi) {\n" : ") {\n");
    if (P) ew_put_bounds(sb, &P->ew);
    sb_puts(sb, pre);
    sb_puts(sb, body);
    sb_puts(sb, "}\n");
    if (versions) sb_puts(sb, "#endif\n");
  }
}

/* The call of NAME_run (the best version) on the result and the inputs
** (and, with par, the part [lo, hi) of the split dim). */
static void put_run_call(StrBuf *sb, const char *name, const Prologue *P, int p, bool versions, bool par) {
  StrBuf args = {0}, fn = {0};
  sb_puts(&args, "o");
  if (P) ew_put_pointer_list(&args, &P->ew, EW_PTR_ARGS);
  else sb_printf(&args, ", (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data", p);
  if (par) sb_puts(&args, ", lo, hi");
  sb_printf(&fn, "%s_run", name);
  if (versions) lower_put_isa_call(sb, sb_str(&fn), sb_str(&args));
  else sb_printf(sb, "  %s(%s);\n", sb_str(&fn), sb_str(&args));
  sb_free(&args);
  sb_free(&fn);
}

/* The run of NAME_run over the whole result: split over threads when
** split >= 0 (parts of dim split of tx, NAME_part), else one call. */
static void put_run(StrBuf *sb, const char *name, const Prologue *P, int p, bool versions, const Type *tx, int split) {
  if (split < 0) {
    put_run_call(sb, name, P, p, versions, false);
    return;
  }
  long long n0 = (long long)tx->u.tensor.shape[split];
  sb_puts(sb, "  const int32_t nt = RLYRT_KERNEL_THREADS;\n  if (nt > 1) {\n");
  sb_printf(sb, "    %s_job J = {args, o, (%lld + 4 * nt - 1) / (4 * nt)};\n", name, n0);
  sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + J.step - 1) / J.step, %s_part, &J);\n", n0, name);
  sb_printf(sb, "  } else {\n    const int64_t lo = 0, hi = %lld;\n", n0);
  put_run_call(sb, name, P, p, versions, true);
  sb_puts(sb, "  }\n");
}

/* NAME_job and NAME_part: positions [i * step, (i + 1) * step) of dim split. */
static void put_part(StrBuf *sb, const char *name, const Prologue *P, int p, bool versions, const Type *tx, int split) {
  long long n0 = (long long)tx->u.tensor.shape[split];
  lower_put_threads_preamble(sb);
  sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  float *o;\n  int64_t step;\n} %s_job;\n", name,
            name);
  sb_printf(sb, "static void %s_part(void *ctx, int64_t i, int32_t slot) {\n", name);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  rlyrt_object *const *args = J->args;\n", name, name);
  sb_printf(sb, "  float *o = J->o;\n  const int64_t lo = i * J->step, hi = lo + J->step < %lld ? lo + J->step : %lld;\n",
            n0, n0);
  sb_puts(sb, "  (void)slot;\n");
  put_run_call(sb, name, P, p, versions, true);
  sb_puts(sb, "}\n");
}

/* {==== Softmax ====} */

/* The float32 softmax loops: outer positions (dims before the axis), the
** chain computed into the block when there is one, then the passes over
** the row (inner 1: lanes along it) or over W inner positions at a time. */
static void put_softmax32(StrBuf *sb, const Prologue *P, const Type *tx, int axis, bool logsm, int split) {
  int nd = tx->u.tensor.ndim;
  int64_t dim = tx->u.tensor.shape[axis], inner = 1;
  for (int d = axis + 1; d < nd; d++) inner *= tx->u.tensor.shape[d];
  int indent = 2;
  put_dim_loops(sb, tx, 0, axis, NULL, true, &indent, split);
  sb_printf(sb, "%*s{\n", indent, "");
  indent += 2;
  StrBuf base = {0};
  put_flat_index(&base, tx, 0, axis);
  if (P) { /* the chain into the block: the passes then run on o in place */
    StrBuf all = {0};
    put_flat_index(&all, tx, 0, nd);
    int in = indent;
    sb_printf(sb, "%*s{\n", in, "");
    in += 2;
    put_dim_loops(sb, tx, axis, nd, NULL, true, &in, -1);
    sb_printf(sb, "%*s{\n", in, "");
    put_chain_store(sb, P, tx, "o", sb_str(&all), in + 2);
    sb_printf(sb, "%*s}\n%*s}\n", in, "", indent, "");
    sb_free(&all);
  }
  sb_printf(sb, "%*sfloat *orow = o + %s;\n", indent, "", sb_str(&base));
  if (P) sb_printf(sb, "%*sconst float *xr = orow;\n", indent, "");
  else sb_printf(sb, "%*sconst float *xr = x + %s;\n", indent, "", sb_str(&base));
  sb_free(&base);
  StrBuf body = {0};
  int I = indent;
  if (inner == 1) {
    put_lanes_decl(sb, I, "m", LANES, "-HUGE_VALF");
    sb_printf(&body, "%*sconst float v = xr[j + k];\n%*sm[k] = v > m[k] || v != v ? v : m[k];\n", I + 4, "", I + 4, "");
    put_lane_loops(sb, I, dim, LANES, sb_str(&body));
    put_lanes_fold(sb, I, "m", LANES, "b > a || b != b ? b : a");
    sb_printf(sb, "%*sconst float mx = m[0];\n", I, "");
    put_lanes_decl(sb, I, "s", LANES, "0");
    body.len = 0;
    sb_printf(&body, "%*sconst float e = rlyk_expf(xr[j + k] - mx);\n", I + 4, "");
    if (!logsm) sb_printf(&body, "%*sorow[j + k] = e;\n", I + 4, "");
    sb_printf(&body, "%*ss[k] += e;\n", I + 4, "");
    put_lane_loops(sb, I, dim, LANES, sb_str(&body));
    put_lanes_fold(sb, I, "s", LANES, "a + b");
    if (logsm) {
      sb_printf(sb, "%*sconst float ls = logf(s[0]);\n", I, "");
      sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j++) orow[j] = xr[j] - mx - ls;\n", I, "", (long long)dim);
    } else {
      sb_printf(sb, "%*sconst float r = 1.0f / s[0];\n", I, "");
      sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j++) orow[j] = orow[j] * r;\n", I, "", (long long)dim);
    }
  } else { /* W inner positions at a time: blocks of LANES, then the rest */
    int64_t full = inner / LANES * LANES, rest = inner - full;
    for (int blk = 0; blk < 2; blk++) {
      int64_t w = blk ? rest : LANES;
      if (!(blk ? rest : full)) continue;
      if (!blk) sb_printf(sb, "%*sfor (int64_t c = 0; c < %lld; c += %d) {\n", I, "", (long long)full, LANES);
      else sb_printf(sb, "%*s{\n%*sconst int64_t c = %lld;\n", I, "", I + 2, "", (long long)full);
      int J = I + 2;
      char at[96];
      snprintf(at, sizeof at, "j * %lld + c + k", (long long)inner);
      sb_printf(sb, "%*sfloat m[%lld], s[%lld];\n", J, "", (long long)w, (long long)w);
      sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) m[k] = -HUGE_VALF, s[k] = 0;\n", J, "", (long long)w);
      sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j++)\n", J, "", (long long)dim);
      sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) {\n", J + 2, "", (long long)w);
      sb_printf(sb, "%*sconst float v = xr[%s];\n%*sm[k] = v > m[k] || v != v ? v : m[k];\n%*s}\n", J + 4, "", at,
                J + 4, "", J + 2, "");
      sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j++)\n", J, "", (long long)dim);
      sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) {\n", J + 2, "", (long long)w);
      sb_printf(sb, "%*sconst float e = rlyk_expf(xr[%s] - m[k]);\n", J + 4, "", at);
      if (!logsm) sb_printf(sb, "%*sorow[%s] = e;\n", J + 4, "", at);
      sb_printf(sb, "%*ss[k] += e;\n%*s}\n", J + 4, "", J + 2, "");
      if (logsm) sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) s[k] = logf(s[k]);\n", J, "", (long long)w);
      else sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) s[k] = 1.0f / s[k];\n", J, "", (long long)w);
      sb_printf(sb, "%*sfor (int64_t j = 0; j < %lld; j++)\n", J, "", (long long)dim);
      sb_printf(sb, "%*sfor (int k = 0; k < %lld; k++) ", J + 2, "", (long long)w);
      if (logsm) sb_printf(sb, "orow[%s] = xr[%s] - m[k] - s[k];\n", at, at);
      else sb_printf(sb, "orow[%s] = orow[%s] * s[k];\n", at, at);
      sb_printf(sb, "%*s}\n", I, "");
    }
  }
  sb_free(&body);
  sb_printf(sb, "%*s}\n", indent - 2, "");
}

/* float64 (a parameter): the reference kernel's loops in double. */
static void put_softmax64(StrBuf *sb, int p, int64_t outer, int64_t dim, int64_t inner, bool logsm) {
  sb_puts(sb, "  {\n");
  sb_printf(sb, "    const double *restrict x = (const double *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", p);
  sb_printf(sb, "    for (int64_t u = 0; u < %lld; u++)\n", (long long)outer);
  sb_printf(sb, "      for (int64_t v = 0; v < %lld; v++) {\n", (long long)inner);
  sb_printf(sb, "        const int64_t base = u * %lld + v;\n", (long long)(dim * inner));
  sb_puts(sb, "        double mx = -HUGE_VAL, sum = 0;\n");
  char at[64];
  snprintf(at, sizeof at, inner == 1 ? "base + j" : "base + j * %lld", (long long)inner);
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)dim);
  sb_printf(sb, "          const double e = x[%s];\n", at);
  sb_puts(sb, "          if (e > mx || isnan(e)) mx = e;\n        }\n");
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) sum += exp(x[%s] - mx);\n", (long long)dim, at);
  if (logsm) sb_puts(sb, "        const double ls = log(sum);\n");
  sb_printf(sb, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)dim);
  sb_printf(sb, "          const double d = x[%s] - mx;\n", at);
  sb_printf(sb, "          o[%s] = %s;\n        }\n      }\n  }\n", at, logsm ? "d - ls" : "exp(d) / sum");
}

static bool softmax_emit(StrBuf *sb, const char *name, const Group *g, int anchor, const Prologue *P,
                         const char *where);

bool softmax_lower(StrBuf *sb, const char *name, const Group *g, int anchor, const char *where) {
  const GNode *a = &g->nodes[anchor];
  if (a->nargs != 1) return false;
  if (a->args[0] < 0) return softmax_emit(sb, name, g, anchor, NULL, where);
  Prologue *P = rly_xcalloc(1, sizeof *P); /* 80 KB: not on the stack */
  bool ok = prologue_split(g, anchor, a->args[0], P) && softmax_emit(sb, name, &P->rest, anchor, P, where);
  free(P);
  return ok;
}

/* The softmax of the parameter the anchor reads (P NULL) or of the chain P
** computes (float32 only); g is the group (P: the rest). */
static bool softmax_emit(StrBuf *sb, const char *name, const Group *g, int anchor, const Prologue *P,
                         const char *where) {
  const GNode *a = &g->nodes[anchor];
  int p = a->args[0] < 0 ? -1 - a->args[0] : -1;
  const Type *tx = p >= 0 ? g->fn->u.func.params[p]->type : g->nodes[a->args[0]].call->type;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(tx) || !lower_static_tensor(res) || !dtype_eq(a->call->type->u.tensor.dtype, tx->u.tensor.dtype))
    return false;
  DType dt = tx->u.tensor.dtype;
  if (dt.code != DT_FLOAT || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1) return false;
  if (P && dt.bits != 32) return false;
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
  bool logsm = a->op->id == OP_LOG_SOFTMAX, f32 = dt.bits == 32;
  bool versions = f32 && outer * dim * inner >= 16;
  const char *ct = lower_elem_ctype(dt);
  int split = f32 ? split_dim(tx, (int)axis, NULL, true) : -1;
  if (f32) {
    StrBuf body = {0};
    put_softmax32(&body, P, tx, (int)axis, logsm, split);
    sb_printf(sb, "/* %s%s%s: softmax rows float32, vector lanes */\n", P ? "an elementwise chain and " : "",
              a->op->name, epilogue ? " and an elementwise epilogue" : "");
    put_run_functions(sb, name, P, "", sb_str(&body), versions, split >= 0);
    if (split >= 0) put_part(sb, name, P, p, versions, tx, split);
    sb_free(&body);
  } else {
    sb_printf(sb, "/* %s%s: softmax rows in double, as the reference kernel */\n", a->op->name,
              epilogue ? " and an elementwise epilogue" : "");
  }
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
  if (f32) put_run(sb, name, P, p, versions, tx, split);
  else put_softmax64(sb, p, outer, dim, inner, logsm);
  if (epilogue) {
    ew_put_bounds(sb, &ew);
    ew_put_loops(sb, &ew, 2);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

/* {==== sum, mean, max, min ====}
** Over any axes (keepdims, exclude). float64 (and a float32 reduction of
** one element): the kept axes' loops outside, the reduced axes' loops
** inside, both in row-major order, accumulating in double as the
** reference kernel (sum and mean add in that order, max and min fold from
** the first element with its comparison, NaN included), so the result is
** the reference kernel's to the bit. float32: put_reduce32 below. An
** empty reduction is left to the reference kernel. The epilogue is a
** second loop, as for softmax. */

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

static bool reduce_emit(StrBuf *sb, const char *name, const Group *g, int anchor, const Prologue *P,
                        const char *where);

/* {==== float32 reductions ====}
** L, the innermost axis of size > 1, picks the loops: reduced, LANES
** partial results along it per output (max and min check their row for a
** NaN or an infinity with v - v, and fold it again in order when there is
** one); kept, the result's row along it is the accumulator, every reduced
** position folded into it in order. */
static void put_reduce32(StrBuf *sb, const Prologue *P, const Type *tx, const bool *mask, int L, OpId op,
                         int64_t count, int split) {
  int nd = tx->u.tensor.ndim;
  int64_t nl = tx->u.tensor.shape[L];
  bool fold = op == OP_MAX || op == OP_MIN;
  const char *init = op == OP_MAX ? "-HUGE_VALF" : op == OP_MIN ? "HUGE_VALF" : "0";
  /* a accumulated with v, in the reference kernel's comparison */
  const char *step = op == OP_MAX ? "%s > v ? %s : v" : op == OP_MIN ? "%s < v ? %s : v" : "%s + v";
  char mean[96] = "";
  if (op == OP_MEAN) {
    if (count < (1 << 24)) snprintf(mean, sizeof mean, " / %lld.0f", (long long)count);
    else snprintf(mean, sizeof mean, " / %lld.0", (long long)count);
  }
  StrBuf idx = {0};
  put_flat_index(&idx, tx, 0, nd);
  if (split >= 0) { /* the outputs before the part: its first position's */
    int64_t after = 1;
    for (int d = split + 1; d < nd; d++)
      if (!mask[d]) after *= tx->u.tensor.shape[d];
    sb_printf(sb, "  int64_t oi = lo * %lld;\n", (long long)after);
  } else {
    sb_puts(sb, "  int64_t oi = 0;\n");
  }
  int indent = 2;
  if (mask[L]) {
    put_dim_loops(sb, tx, 0, nd, mask, false, &indent, split);
    sb_printf(sb, "%*s{\n", indent, "");
    int I = indent + 2;
    put_lanes_decl(sb, I, "acc", LANES, init);
    if (fold) put_lanes_decl(sb, I, "chk", LANES, "0");
    int J = I;
    put_dim_loops(sb, tx, 0, L, mask, true, &J, -1);
    sb_printf(sb, "%*s{\n", J, "");
    StrBuf body = {0}, opnd = {0};
    char iL[16];
    snprintf(iL, sizeof iL, "i%d", L);
    put_operand32(&opnd, P, tx, sb_str(&idx), J + 6);
    if (lower_tmpl_uses(sb_str(&opnd), iL)) sb_printf(&body, "%*sconst int64_t %s = j + k;\n", J + 6, "", iL);
    else sb_printf(&body, "%*s(void)j;\n", J + 6, "");
    sb_puts(&body, sb_str(&opnd));
    sb_free(&opnd);
    sb_printf(&body, "%*sacc[k] = ", J + 6, "");
    sb_printf(&body, step, "acc[k]", "acc[k]");
    sb_puts(&body, ";\n");
    if (fold) sb_printf(&body, "%*schk[k] += v - v;\n", J + 6, "");
    put_lane_loops(sb, J + 2, nl, LANES, sb_str(&body));
    sb_free(&body);
    sb_printf(sb, "%*s}\n", J, "");
    put_lanes_fold(sb, I, "acc", LANES, op == OP_MAX ? "a > b ? a : b" : op == OP_MIN ? "a < b ? a : b" : "a + b");
    if (fold) { /* a NaN or an infinity: the reference kernel's fold, in order */
      put_lanes_fold(sb, I, "chk", LANES, "a + b");
      sb_printf(sb, "%*sif (chk[0] != 0) {\n", I, "");
      sb_printf(sb, "%*sacc[0] = %s;\n", I + 2, "", init);
      int K = I + 2;
      put_dim_loops(sb, tx, 0, nd, mask, true, &K, -1);
      sb_printf(sb, "%*s{\n", K, "");
      put_operand32(sb, P, tx, sb_str(&idx), K + 2);
      sb_printf(sb, "%*sacc[0] = ", K + 2, "");
      sb_printf(sb, step, "acc[0]", "acc[0]");
      sb_printf(sb, ";\n%*s}\n%*s}\n", K, "", I, "");
    }
    if (op == OP_MEAN) sb_printf(sb, "%*so[oi++] = (float)(acc[0]%s);\n", I, "", mean);
    else sb_printf(sb, "%*so[oi++] = acc[0];\n", I, "");
    sb_printf(sb, "%*s}\n", indent, "");
  } else {
    put_dim_loops(sb, tx, 0, L, mask, false, &indent, split);
    sb_printf(sb, "%*s{\n", indent, "");
    int I = indent + 2;
    sb_printf(sb, "%*sfloat *orow = o + oi;\n", I, "");
    sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++) orow[i%d] = %s;\n", I, "", L, L, (long long)nl, L, L,
              init);
    int J = I;
    put_dim_loops(sb, tx, 0, nd, mask, true, &J, -1);
    sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++) {\n", J, "", L, L, (long long)nl, L);
    put_operand32(sb, P, tx, sb_str(&idx), J + 2);
    char at[32];
    snprintf(at, sizeof at, "orow[i%d]", L);
    sb_printf(sb, "%*s%s = ", J + 2, "", at);
    sb_printf(sb, step, at, at);
    sb_printf(sb, ";\n%*s}\n", J, "");
    if (op == OP_MEAN)
      sb_printf(sb, "%*sfor (int64_t i%d = 0; i%d < %lld; i%d++) orow[i%d] = (float)(orow[i%d]%s);\n", I, "", L, L,
                (long long)nl, L, L, L, mean);
    sb_printf(sb, "%*soi += %lld;\n%*s}\n", I, "", (long long)nl, indent, "");
  }
  sb_free(&idx);
}

/* The float32 kernel: NAME_run (its ISA versions) and the epilogue (ew). */
static bool reduce_emit32(StrBuf *sb, const char *name, const GNode *a, const Prologue *P, int p, const Type *tx,
                          const Type *tr, const bool *mask, int L, int64_t count, const Ewise *ew,
                          const char *where) {
  int rdim = tr->u.tensor.ndim;
  int64_t numel = count;
  for (int d = 0; d < rdim; d++) numel *= tr->u.tensor.shape[d];
  bool versions = numel >= 16;
  /* Threads: the outermost kept dim (before L when L is kept). */
  int split = split_dim(tx, mask[L] ? tx->u.tensor.ndim : L, mask, false);
  StrBuf body = {0};
  put_reduce32(&body, P, tx, mask, L, a->op->id, count, split);
  sb_printf(sb, "/* %s%s%s: reduction float32, vector lanes */\n", P ? "an elementwise chain and " : "",
            a->op->name, ew ? " and an elementwise epilogue" : "");
  put_run_functions(sb, name, P, "", sb_str(&body), versions, split >= 0);
  if (split >= 0) put_part(sb, name, P, p, versions, tx, split);
  sb_free(&body);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  if (rdim) {
    sb_printf(sb, "  static const int64_t shape[%d] = {", rdim);
    for (int d = 0; d < rdim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)tr->u.tensor.shape[d]);
    sb_puts(sb, "};\n");
  }
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, %d, "
            "%s, false);\n",
            rdim, rdim ? "shape" : "NULL");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_puts(sb, "  float *restrict o = (float *)t->dl.data;\n");
  put_run(sb, name, P, p, versions, tx, split);
  if (ew) {
    ew_put_bounds(sb, ew);
    ew_put_loops(sb, ew, 2);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
  return true;
}

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
  int L = -1; /* the innermost axis of size > 1 */
  for (int d = 0; d < ndim; d++)
    if (tx->u.tensor.shape[d] > 1) L = d;
  if (dt.bits == 32 && L >= 0)
    return reduce_emit32(sb, name, a, P, p, tx, tr, mask, L, count, epilogue ? &ew : NULL, where);
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
