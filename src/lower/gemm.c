/* lower/gemm.c: nn.dense and nn.batch_matmul on float32, with the group's
** elementwise tail as an epilogue.
**
** Two schedules (schedules.def): a GEMV for dense with few rows (the weight
** is read once, row by row, four dot products at a time in vector
** accumulators), and a packed GEMM for the rest, the BLIS way: for each
** NC-wide block of columns and KC-deep block of the reduction, B's block
** is packed into NR-wide panels; for each MC-high block of rows, A's block
** into MR-high panels; an MR x NR micro-kernel keeps its tile of C in
** vector registers over the KC steps (one broadcast of A and NR/W loads of
** B per step, MR * NR/W FMAs). Tiles at the edges compute in full on
** zero-padded panels and store only their valid part. After the last KC
** block a tile is final: the epilogue (lower/elemwise.c) runs over it
** while it is still in L1.
**
** Weights packed at build time. When B is a constant of the module passed
** to the kernel (a model's weight: codegen/kernels.c asks
** lower_loops_prepacked when a call has constant arguments), the compiler
** packs it once (lower_prepack; codegen/consts.c stores the result in the
** blob, 64-aligned, instead of B unless something else reads B) and the
** kernel reads it without packing: one layout for every ISA, panels PW =
** 32 (NR_MAX) columns wide over the whole reduction, zero-padded past N,
** float[batch][panel][k][32]. A KC block of a panel is then a contiguous
** slice, and a micro-kernel reads its NR columns (32, 16 or 8) of each row
** at their offset in the panel, PW floats after the previous row's: the
** same loads and FMAs in the same order as on B packed at run time, so the
** same bits. Such a kernel has its own text (the call site passes the
** packed constant), so a kernel shared by several calls is called alike.
** The GEMV reads B as it is and is never given a packed B.
**
** Accumulation is in float32, in the order k = 0, 1, ... within a KC block,
** the blocks added in order: results differ from the reference kernel
** (double accumulation) by rounding only, and are the same on every run.
**
** ISA. The artifact is built for baseline x86-64 unless --target says
** otherwise, so each kernel carries three versions of its loops: AVX-512F
** (W = 16 lanes, MR x NR = 12 x 32), AVX2 with FMA (W = 8, 6 x 16) as
** functions with target attributes, and a portable one on GCC/Clang vector
** extensions (W = 4, 4 x 8: SSE2 on x86-64, whatever the target has
** elsewhere). The kernel picks the best one the CPU supports at each call
** (__builtin_cpu_supports: a read of a variable libgcc fills at load).
** Compiling with -DRLYRT_ISA_MAX=0 or 1 caps the choice (the tests run
** every version); on other architectures only the portable one exists.
** A file compiled for AVX2+FMA or AVX-512 already (--target native:
** -march=native) keeps only the versions from that level up, and calls
** its own level without a test (RLYRT_ISA_MIN).
** The loops and the packing are the same text for every ISA; only the
** vector operations (the Isa table) differ. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lower/conv.h"

/* {==== The ISAs ====} */

typedef struct Isa {
  const char *suffix;  /* of the function: NAME_avx512 */
  const char *target;  /* target attribute, or NULL */
  const char *check;   /* the condition the kernel tests, or NULL */
  int level;           /* RLYRT_ISA_MAX at or above which it is used */
  int w, mr, nr;       /* lanes; the register tile */
  const char *vtype;   /* %s: the kernel's name (the portable vector type) */
  const char *zero;    /* %s: the kernel's name */
  const char *load;    /* %s: pointer */
  const char *store;   /* %s: pointer, %s: value */
  const char *fma;     /* %s * %s + %s */
  const char *bcast;   /* %s: a float lvalue (read W times in the portable one) */
} Isa;

static const Isa isas[] = {
    {"avx512", "avx512f", "__builtin_cpu_supports(\"avx512f\")", 2, 16, 12, 32, "__m512", "_mm512_setzero_ps()",
     "_mm512_loadu_ps(%s)", "_mm512_storeu_ps(%s, %s)", "_mm512_fmadd_ps(%s, %s, %s)", "_mm512_set1_ps(%s)"},
    {"avx2", "avx2,fma", "__builtin_cpu_supports(\"avx2\") && __builtin_cpu_supports(\"fma\")", 1, 8, 6, 16,
     "__m256", "_mm256_setzero_ps()", "_mm256_loadu_ps(%s)", "_mm256_storeu_ps(%s, %s)",
     "_mm256_fmadd_ps(%s, %s, %s)", "_mm256_set1_ps(%s)"},
    {"base", NULL, NULL, 0, 4, 4, 8, "%s_v4", "(%s_v4){0, 0, 0, 0}", "%s_ld4(%s)", "%s_st4(%s, %s)",
     "(%s) * (%s) + (%s)", "(%s_v4){%s, %s, %s, %s}"},
};

enum { KC = 256, MC = 120, NC = 1024, MR_MAX = 12, NR_MAX = 32 }; /* MC: a multiple of every MR, NC of every NR */
enum { RLY_MAX_THREADS_CAP = 256 }; /* the runtime's RLYRT_MAX_THREADS */

static bool portable(const Isa *isa) { return isa->target == NULL; }

/* {==== ISA versions, shared with the other lowerings (kernel.h) ====} */

void lower_put_isa_preamble(StrBuf *sb) {
  sb_puts(sb, "#if !defined(RLYRT_ISA_X86) && defined(__x86_64__) && defined(__GNUC__)\n"
              "#define RLYRT_ISA_X86 1\n"
              "#include <immintrin.h>\n"
              "#endif\n"
              "#ifndef RLYRT_ISA_MAX\n"
              "#define RLYRT_ISA_MAX 2\n"
              "#endif\n"
              /* the level the whole file is compiled for (--target native) */
              "#ifndef RLYRT_ISA_MIN\n"
              "#if RLYRT_ISA_X86 && defined(__AVX512F__) && RLYRT_ISA_MAX >= 2\n"
              "#define RLYRT_ISA_MIN 2\n"
              "#elif RLYRT_ISA_X86 && defined(__AVX2__) && defined(__FMA__) && RLYRT_ISA_MAX >= 1\n"
              "#define RLYRT_ISA_MIN 1\n"
              "#else\n"
              "#define RLYRT_ISA_MIN 0\n"
              "#endif\n"
              "#endif\n"
              /* for ISA versions with loops that GCC's -O2 cost model
              ** ("very cheap") leaves scalar: reads at a stride (a pool's
              ** taps, a plane split by phase), an epilogue's nest with
              ** bounds known at run time only. Its dynamic model
              ** vectorizes them; Clang's -O2 does without being asked.
              ** And one register-allocation region for the function: with
              ** the default (per loop), GCC 12 kept one of an 8 x 32
              ** micro-kernel's B vectors on the stack, 8 reloads per k
              ** step, with 13 vector registers free (a 32 -> 16 1x1 at
              ** 112x112: 154 -> 127 us; ResNet-18, 1 thread: 3.7%) */
              "#ifndef RLYRT_VEC_STRIDED\n"
              "#if defined(__GNUC__) && !defined(__clang__)\n"
              "#define RLYRT_VEC_STRIDED __attribute__((optimize(\"-fvect-cost-model=dynamic\", \"-fira-region=one\")))\n"
              "#else\n"
              "#define RLYRT_VEC_STRIDED\n"
              "#endif\n"
              "#endif\n"
              /* a vector that stays in a register (an empty asm that reads
              ** and writes it: the compiler cannot fold it into each use
              ** as a memory operand) */
              "#ifndef RLYRT_IN_REG\n"
              "#define RLYRT_IN_REG(x) __asm__(\"\" : \"+v\"(x))\n"
              "#endif\n");
}

int lower_isa_count(void) { return (int)RLY_COUNTOF(isas); }
const char *lower_isa_suffix(int i) { return isas[i].suffix; }
const char *lower_isa_target(int i) { return isas[i].target; }
void gemm_isa_tile(int i, int *w, int *mr, int *nr) {
  *w = isas[i].w;
  *mr = isas[i].mr;
  *nr = isas[i].nr;
}

void lower_put_isa_attrs(StrBuf *sb, int i) {
  if (isas[i].target) sb_printf(sb, "__attribute__((target(\"%s\"))) RLYRT_VEC_STRIDED ", isas[i].target);
}

void lower_put_isa_if(StrBuf *sb, int i) {
  const Isa *isa = &isas[i];
  if (isa->target)
    sb_printf(sb, "#if RLYRT_ISA_X86 && RLYRT_ISA_MAX >= %d && RLYRT_ISA_MIN <= %d\n", isa->level, isa->level);
  else sb_puts(sb, "#if RLYRT_ISA_MIN == 0\n");
}

void lower_put_isa_call(StrBuf *sb, const char *fn, const char *args) { lower_put_isa_call_in(sb, fn, args, ~0u); }

void lower_put_isa_call_in(StrBuf *sb, const char *fn, const char *args, unsigned mask) {
  mask &= (1u << RLY_COUNTOF(isas)) - 1;
  for (size_t i = 0; i < RLY_COUNTOF(isas); i++) {
    const Isa *isa = &isas[i];
    if (!(mask >> i & 1)) continue;
    /* the best version the CPU runs; the file's own level needs no test */
    int l = isa->level;
    if (isa->target) {
      sb_printf(sb, "#if RLYRT_ISA_X86 && RLYRT_ISA_MAX >= %d && RLYRT_ISA_MIN <= %d\n", l, l);
      sb_printf(sb, "#if RLYRT_ISA_MIN < %d\n  if (%s)\n#endif\n", l, isa->check);
      sb_printf(sb, "    %s_%s(%s);\n", fn, isa->suffix, args);
      /* else: where a later version of the mask is compiled too */
      if (mask >> (i + 1)) {
        sb_printf(sb, "#if RLYRT_ISA_MIN < %d && (0", l);
        for (size_t j = i + 1; j < RLY_COUNTOF(isas); j++) {
          if (!(mask >> j & 1)) continue;
          if (isas[j].target)
            sb_printf(sb, " || (RLYRT_ISA_MAX >= %d && RLYRT_ISA_MIN <= %d)", isas[j].level, isas[j].level);
          else sb_puts(sb, " || RLYRT_ISA_MIN == 0");
        }
        sb_puts(sb, ")\n  else\n#endif\n");
      }
      sb_puts(sb, "#endif\n");
    } else {
      sb_printf(sb, "#if RLYRT_ISA_MIN == 0\n    %s_%s(%s);\n#endif\n", fn, isa->suffix, args);
    }
  }
}

void lower_put_isa_picked(StrBuf *sb, int i) {
  /* no better version compiled in, or the CPU runs none; this one compiled
  ** for the file's own level, or the CPU runs it */
  sb_puts(sb, "(1");
  for (int b = 0; b < i; b++)
    if (isas[b].target)
      sb_printf(sb, "\n#if RLYRT_ISA_X86 && RLYRT_ISA_MAX >= %d && RLYRT_ISA_MIN < %d\n && !(%s)\n#endif\n", isas[b].level,
                isas[b].level, isas[b].check);
  if (isas[i].target)
    sb_printf(sb, "\n#if RLYRT_ISA_MIN < %d\n && %s\n#endif\n", isas[i].level, isas[i].check);
  sb_puts(sb, ")");
}

/* The vector operations as text: the portable ISA's need the kernel name. */
static void v_type(StrBuf *sb, const Isa *isa, const char *name) {
  if (portable(isa)) sb_printf(sb, isa->vtype, name);
  else sb_puts(sb, isa->vtype);
}
static void v_zero(StrBuf *sb, const Isa *isa, const char *name) {
  if (portable(isa)) sb_printf(sb, isa->zero, name);
  else sb_puts(sb, isa->zero);
}
static void v_load(StrBuf *sb, const Isa *isa, const char *name, const char *p) {
  if (portable(isa)) sb_printf(sb, isa->load, name, p);
  else sb_printf(sb, isa->load, p);
}
static void v_store(StrBuf *sb, const Isa *isa, const char *name, const char *p, const char *v) {
  if (portable(isa)) sb_printf(sb, isa->store, name, p, v);
  else sb_printf(sb, isa->store, p, v);
}
static void v_bcast(StrBuf *sb, const Isa *isa, const char *name, const char *s) {
  if (portable(isa)) sb_printf(sb, isa->bcast, name, s, s, s, s);
  else sb_printf(sb, isa->bcast, s);
}

/* The horizontal sum of vector v as a float expression. */
static void v_hsum(StrBuf *sb, const Isa *isa, const char *name, const char *v) {
  if (isa->w == 16) sb_printf(sb, "_mm512_reduce_add_ps(%s)", v);
  else if (isa->w == 8) sb_printf(sb, "%s_hsum8(%s)", name, v);
  else sb_printf(sb, "((%s[0] + %s[1]) + (%s[2] + %s[3]))", v, v, v, v);
}

void gemm_put_vop(StrBuf *sb, int i, const char *name, GemmVop op, const char *a, const char *b, const char *c) {
  const Isa *isa = &isas[i];
  switch (op) {
  case GV_TYPE: v_type(sb, isa, name); break;
  case GV_ZERO: v_zero(sb, isa, name); break;
  case GV_LOAD: v_load(sb, isa, name, a); break;
  case GV_STORE: v_store(sb, isa, name, a, b); break;
  case GV_FMA: sb_printf(sb, isa->fma, a, b, c); break;
  case GV_BCAST: v_bcast(sb, isa, name, a); break;
  }
}

/* {==== The problem ====} */

typedef struct Gemm {
  const Group *g;
  int anchor;
  bool gemv;
  int pa, pb;                   /* the parameters of A and B */
  int64_t q, m, n, k;           /* batches; C is q x [m, n]; the reduction k */
  int64_t a_sq, a_si, a_sk;     /* A(q, i, k) = a[q * a_sq + i * a_si + k * a_sk] */
  int64_t b_sq, b_sk, b_sj;     /* B(q, k, j) */
  bool epilogue;
  bool prepacked;               /* B is a constant, packed at build time (lower_prepack) */
  bool par;                     /* enough work to split over threads (LOWER_PAR_MIN_FLOPS) */
  Ewise ew;
  int64_t l_sq[EW_MAX_LEAVES], l_si[EW_MAX_LEAVES], l_sj[EW_MAX_LEAVES]; /* the leaves' strides on C's view */
} Gemm;

/* The PW-wide panels of B packed at build time. */
static int64_t prepack_panels(const Gemm *G) { return (G->n + LOWER_PACK_NR - 1) / LOWER_PACK_NR; }

/* The floats of one thread's packed A block (MC x KC, or less for a
** smaller problem), and of the packed B block (NC x KC). */
static int64_t gemm_ap_floats(const Gemm *G) {
  int64_t kc = G->k < KC ? G->k : KC;
  int64_t mc = G->m < MC ? (G->m + MR_MAX - 1) / MR_MAX * MR_MAX : MC;
  return mc * kc;
}
static int64_t gemm_bp_floats(const Gemm *G) {
  int64_t kc = G->k < KC ? G->k : KC;
  int64_t nc = G->n < NC ? (G->n + NR_MAX - 1) / NR_MAX * NR_MAX : NC;
  return nc * kc;
}

static bool is_f32(const Type *t) {
  DType d = t->u.tensor.dtype;
  return d.code == DT_FLOAT && d.bits == 32 && d.lanes == 1;
}

/* The strides of leaf k on the view [q, m, n] of the result; false when
** it does not fit that view (a broadcast inside dense's leading dims). */
static bool leaf_strides(Gemm *G, int k, const Type *res, bool batched) {
  const EwLeaf *f = &G->ew.leaves[k];
  int ndim = res->u.tensor.ndim;
  const int64_t *shape = res->u.tensor.shape;
  int64_t stride[LOWER_MAX_NDIM];
  for (int d = 0; d < ndim; d++) {
    int j = d - (ndim - f->ndim);
    stride[d] = 0;
    if (j < 0) continue;
    if (f->shape[j] != shape[d]) {
      if (f->shape[j] != 1) return false;
      continue;
    }
    stride[d] = 1;
    for (int t = j + 1; t < f->ndim; t++) stride[d] *= f->shape[t];
  }
  G->l_sj[k] = ndim ? stride[ndim - 1] : 0;
  if (batched) {
    G->l_sq[k] = stride[0];
    G->l_si[k] = stride[1];
    return true;
  }
  /* dense: the leading dims flatten to rows; the leaf must step alike. */
  G->l_sq[k] = 0;
  G->l_si[k] = 0;
  int64_t below = 1; /* rows per step of dim d */
  bool have = false;
  for (int d = ndim - 2; d >= 0; d--) {
    if (shape[d] != 1) {
      if (!have) {
        if (below != 1 && stride[d] % below) return false;
        G->l_si[k] = stride[d] / below;
        have = true;
      } else if (stride[d] != G->l_si[k] * below) {
        return false;
      }
    }
    below *= shape[d];
  }
  return true;
}

static bool analyse(const Group *g, int anchor, Gemm *G) {
  memset(G, 0, sizeof *G);
  G->g = g;
  G->anchor = anchor;
  const GNode *a = &g->nodes[anchor];
  if (a->nargs != 2 || a->args[0] >= 0 || a->args[1] >= 0) return false;
  G->pa = -1 - a->args[0];
  G->pb = -1 - a->args[1];
  const Type *ta = g->fn->u.func.params[G->pa]->type, *tb = g->fn->u.func.params[G->pb]->type, *tc = a->call->type;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(ta) || !lower_static_tensor(tb) || !lower_static_tensor(tc) || !lower_static_tensor(res))
    return false;
  if (!is_f32(ta) || !is_f32(tb) || !is_f32(tc) || !is_f32(res)) return false;
  const int64_t *as = ta->u.tensor.shape, *bs = tb->u.tensor.shape, *cs = tc->u.tensor.shape;
  int na = ta->u.tensor.ndim;
  bool batched = a->op->id == OP_BATCH_MATMUL;
  if (a->op->id == OP_DENSE) {
    if (na < 1 || tb->u.tensor.ndim != 2 || tc->u.tensor.ndim != na) return false;
    G->q = 1;
    G->k = as[na - 1];
    G->n = bs[0];
    G->m = 1;
    for (int i = 0; i < na - 1; i++) G->m *= as[i];
    if (bs[1] != G->k || cs[na - 1] != G->n) return false;
    G->a_si = G->k, G->a_sk = 1;
    G->b_sk = 1, G->b_sj = G->k;
  } else if (batched) {
    bool tra = lower_attr_int(a->call->u.call.attrs, "transpose_a", 0) != 0;
    bool trb = lower_attr_int(a->call->u.call.attrs, "transpose_b", 0) != 0;
    if (na != 3 || tb->u.tensor.ndim != 3 || tc->u.tensor.ndim != 3) return false;
    G->q = cs[0], G->m = cs[1], G->n = cs[2];
    G->k = as[tra ? 1 : 2];
    if (as[tra ? 2 : 1] != G->m || bs[trb ? 2 : 1] != G->k || bs[trb ? 1 : 2] != G->n) return false;
    if ((as[0] != G->q && as[0] != 1) || (bs[0] != G->q && bs[0] != 1)) return false;
    G->a_sq = as[0] == 1 ? 0 : G->m * G->k;
    G->b_sq = bs[0] == 1 ? 0 : G->k * G->n;
    if (tra) G->a_si = 1, G->a_sk = G->m;
    else G->a_si = G->k, G->a_sk = 1;
    if (trb) G->b_sk = 1, G->b_sj = G->k;
    else G->b_sk = G->n, G->b_sj = 1;
  } else {
    return false;
  }
  if (G->q < 1 || G->m < 1 || G->n < 1 || G->k < 1) return false; /* empty: the exact loops handle it */
  /* The schedule: the first row of the table that takes this anchor. */
  bool found = false;
#define SCHEDULE(ID, ANCHOR, MIN_ROWS, MAX_ROWS, what)                                                             \
  if (!found && (int)OP_##ANCHOR == (int)a->op->id && G->m >= MIN_ROWS && G->m <= MAX_ROWS) {                                \
    found = true;                                                                                                  \
    G->gemv = strcmp(#ID, "GEMV") == 0;                                                                            \
  }
  enum { OP_NONE = -1 };
#include "lower/schedules.def"
#undef SCHEDULE
  if (!found) return false;
  /* A GEMV streams its weight once (two FLOPs per element read from
  ** memory or L3, not from L1): it counts elements read, as reductions do. */
  if (G->gemv)
    G->par = lower_par_worth((double)G->q * (double)G->n * (double)G->k, LOWER_PAR_MIN_READ);
  else
    G->par = lower_par_worth(2.0 * (double)G->q * (double)G->m * (double)G->n * (double)G->k, LOWER_PAR_MIN_FLOPS);
  /* The epilogue: every other live node, on the anchor's shape. */
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].live && i != anchor) G->epilogue = true;
  if (!G->epilogue) return anchor == g->nnodes - 1;
  if (res->u.tensor.ndim != tc->u.tensor.ndim) return false;
  for (int d = 0; d < res->u.tensor.ndim; d++)
    if (res->u.tensor.shape[d] != tc->u.tensor.shape[d]) return false;
  if (!ew_analyse(g, anchor, &G->ew)) return false;
  for (int k = 0; k < G->ew.nleaves; k++)
    if (G->ew.leaves[k].param >= 0 && !leaf_strides(G, k, res, batched)) return false;
  return true;
}

/* {==== Text ====} */

/* `a * s` for an index term, nothing when s is 0. */
static void put_term(StrBuf *sb, bool *any, const char *var, int64_t s) {
  if (!s) return;
  if (*any) sb_puts(sb, " + ");
  if (s == 1) sb_puts(sb, var);
  else sb_printf(sb, "%s * %lld", var, (long long)s);
  *any = true;
}

/* The epilogue's loops. */
static void put_epilogue_loops(StrBuf *sb, const Ewise *ew, const int64_t *l_sq, const int64_t *l_si,
                               const int64_t *l_sj, int64_t ldc, int indent, const char *i0, const char *i1,
                               const char *j0, const char *j1) {
  StrBuf idx[EW_MAX_LEAVES], anchor = {0}, out_index = {0};
  const char *index[EW_MAX_LEAVES];
  for (int k = 0; k < ew->nleaves; k++) {
    memset(&idx[k], 0, sizeof idx[k]);
    if (ew->leaves[k].param < 0) {
      index[k] = ew->leaves[k].param == -1 ? "anchor" : NULL;
      continue;
    } else {
      bool any = false;
      put_term(&idx[k], &any, "q", l_sq[k]);
      put_term(&idx[k], &any, "ei", l_si[k]);
      put_term(&idx[k], &any, "ej", l_sj[k]);
      if (!any) sb_putc(&idx[k], '0');
    }
    index[k] = sb_str(&idx[k]);
  }
  sb_printf(&out_index, "ei * %lld + ej", (long long)ldc);
  sb_printf(&anchor, "c[ei * %lld + ej]", (long long)ldc);
  sb_printf(sb, "%*sfor (int64_t ei = %s; ei < %s; ei++)\n", indent, "", i0, i1);
  sb_printf(sb, "%*sfor (int64_t ej = %s; ej < %s; ej++) {\n", indent + 2, "", j0, j1);
  ew_put_body(sb, ew, indent + 4, index, "c", sb_str(&out_index), sb_str(&anchor));
  sb_printf(sb, "%*s}\n", indent + 2, "");
  for (int k = 0; k < ew->nleaves; k++) sb_free(&idx[k]);
  sb_free(&anchor);
  sb_free(&out_index);
}

/* The epilogue over rows [i0, i1) and columns [j0, j1) of batch q of C
** (the float pointer c points at the batch) as a function NAME_epi, inlined
** in each ISA version: its pointers are restrict parameters, which gcc
** trusts (pointers loaded into restrict locals it does not, and at -O2 it
** vectorizes no loop that would need an aliasing check). The clip bounds
** and constants are its locals. Marked unused: the versions compiled may
** all run the epilogue in registers (-mavx2 drops the portable one). */
void gemm_put_epilogue_fn(StrBuf *sb, const char *name, const Ewise *ew, const int64_t *l_sq, const int64_t *l_si,
                          const int64_t *l_sj, int64_t ldc) {
  sb_printf(sb, "static inline __attribute__((always_inline, unused)) void %s_epi(float *restrict c", name);
  ew_put_pointer_list(sb, ew, EW_PTR_PARAMS);
  sb_puts(sb, ", int64_t q, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {\n  (void)q;\n");
  ew_put_bounds(sb, ew);
  put_epilogue_loops(sb, ew, l_sq, l_si, l_sj, ldc, 2, "i0", "i1", "j0", "j1");
  sb_puts(sb, "}\n");
}

static void put_epilogue_fn(StrBuf *sb, const char *name, const Gemm *G) {
  gemm_put_epilogue_fn(sb, name, &G->ew, G->l_sq, G->l_si, G->l_sj, G->n);
}

/* The call of NAME_epi over rows [i0, i1) and columns [j0, j1). */
void gemm_put_epilogue_call(StrBuf *sb, const char *name, const Ewise *ew, int indent, const char *i0, const char *i1,
                            const char *j0, const char *j1) {
  sb_printf(sb, "%*s%s_epi(c", indent, "", name);
  ew_put_pointer_list(sb, ew, EW_PTR_NAMES);
  sb_printf(sb, ", q, %s, %s, %s, %s);\n", i0, i1, j0, j1);
}

/* {==== The epilogue in registers ====} */

static bool dtype_f32(DType d) { return d.code == DT_FLOAT && d.bits == 32 && d.lanes == 1; }

/* The vector intrinsic (AVX-512 or AVX2, "_mm512_" + it) of a float32
** operator whose template it computes to the bit: max(a, b) is a > b ? a :
** b, min(a, b) a < b ? a : b, as maxps and minps (NaN and signed zeros
** included); relu is max(a, 0), clip max(min(a, HI), LO). NULL: none. */
static const char *vec_op(OpId id) {
  switch (id) {
  case OP_ADD: case OP_BIAS_ADD: return "add_ps";
  case OP_SUBTRACT: return "sub_ps";
  case OP_MULTIPLY: return "mul_ps";
  case OP_MAXIMUM: case OP_RELU: return "max_ps";
  case OP_MINIMUM: return "min_ps";
  case OP_CLIP: return "min_ps";
  default: return NULL;
  }
}

void gemm_put_epi_bounds(StrBuf *sb, const Ewise *ew, int ind) {
  StrBuf bd = {0};
  ew_put_bounds(&bd, ew);
  for (const char *t = sb_str(&bd); *t;) { /* ew_put_bounds indents by 2 */
    const char *e = strchr(t, '\n');
    size_t len = e ? (size_t)(e - t) : strlen(t);
    sb_printf(sb, "%*s%.*s\n", ind - 2, "", (int)len, t);
    t += len + (e ? 1 : 0);
  }
  sb_free(&bd);
}

bool gemm_epi_vec_ok(int i, const Ewise *ew, const int64_t *l_sj) {
  if (portable(&isas[i])) return false; /* C has no ?: on vectors */
  const Group *g = ew->g;
  for (int k = 0; k < ew->nleaves; k++) {
    if (!dtype_f32(ew->leaves[k].dtype)) return false;
    if (ew->leaves[k].param >= 0 && l_sj[k] != 0 && l_sj[k] != 1) return false;
    if (ew->leaves[k].param <= -2) {
      const ConstData *c = g->nodes[-2 - ew->leaves[k].param].call->u.constant.value;
      if (!dtype_f32(c->dtype)) return false;
    }
  }
  for (int n = 0; n < g->nnodes; n++) {
    const GNode *nd = &g->nodes[n];
    if (!nd->live || n == ew->anchor || nd->kind == GN_CONST) continue;
    if (nd->kind != GN_CALL || !vec_op(nd->op->id) || !dtype_f32(nd->call->type->u.tensor.dtype)) return false;
    if (nd->op->id == OP_CLIP && !ew->bounded[n]) return false;
  }
  return true;
}

void gemm_put_epi_vec(StrBuf *sb, int i, const TileEpi *te, int ind, const char *acc, const char *row, const char *col,
                      const char *mask) {
  const Isa *isa = &isas[i];
  const Ewise *ew = te->ew;
  const Group *g = ew->g;
  const char *px = isa->w == 16 ? "_mm512_" : "_mm256_", *vt = isa->w == 16 ? "__m512" : "__m256";
  bool used[EW_MAX_LEAVES] = {0};
  for (int n = 0; n < g->nnodes; n++)
    if (g->nodes[n].live && n != ew->anchor && g->nodes[n].kind == GN_CALL)
      for (int j = 0; j < g->nodes[n].nargs; j++)
        if (ew->leaf_of[n][j] >= 0) used[ew->leaf_of[n][j]] = true;
  sb_printf(sb, "%*s{\n", ind, "");
  for (int k = 0; k < ew->nleaves; k++) {
    const EwLeaf *l = &ew->leaves[k];
    if (!used[k]) continue;
    sb_printf(sb, "%*s  const %s v%d = ", ind, "", vt, k);
    if (l->param == -1) sb_puts(sb, acc);
    else if (l->param <= -2) sb_printf(sb, "%sset1_ps(x%d)", px, k);
    else {
      StrBuf ix = {0};
      bool any = false;
      put_term(&ix, &any, "q", te->l_sq[k]);
      if (te->l_si[k]) {
        if (any) sb_puts(&ix, " + ");
        sb_printf(&ix, "(%s) * %lld", row, (long long)te->l_si[k]);
        any = true;
      }
      if (te->l_sj[k]) {
        if (any) sb_puts(&ix, " + ");
        sb_printf(&ix, "(%s)", col);
        any = true;
      }
      if (!any) sb_putc(&ix, '0');
      char ptr[32];
      if (l->field >= 0) snprintf(ptr, sizeof ptr, "p%d_%d", l->param, l->field);
      else snprintf(ptr, sizeof ptr, "p%d", l->param);
      if (te->l_sj[k] && mask) sb_printf(sb, "%smaskz_loadu_ps(%s, %s + %s)", px, mask, ptr, sb_str(&ix));
      else if (te->l_sj[k]) sb_printf(sb, "%sloadu_ps(%s + %s)", px, ptr, sb_str(&ix));
      else sb_printf(sb, "%sset1_ps(%s[%s])", px, ptr, sb_str(&ix));
      sb_free(&ix);
    }
    sb_puts(sb, ";\n");
  }
  int last = -1;
  for (int n = 0; n < g->nnodes; n++) {
    const GNode *nd = &g->nodes[n];
    if (!nd->live || n == ew->anchor || nd->kind != GN_CALL) continue;
    char a[2][16];
    for (int j = 0; j < nd->nargs && j < 2; j++) {
      if (ew->leaf_of[n][j] >= 0) snprintf(a[j], sizeof a[j], "v%d", ew->leaf_of[n][j]);
      else snprintf(a[j], sizeof a[j], "n%d", nd->args[j]);
    }
    sb_printf(sb, "%*s  const %s n%d = ", ind, "", vt, n);
    switch (nd->op->id) {
    case OP_RELU: sb_printf(sb, "%smax_ps(%s, %ssetzero_ps())", px, a[0], px); break;
    case OP_CLIP:
      sb_printf(sb, "%smax_ps(%smin_ps(%s, %sset1_ps(hi%d)), %sset1_ps(lo%d))", px, px, a[0], px, n, px, n);
      break;
    default: sb_printf(sb, "%s%s(%s, %s)", px, vec_op(nd->op->id), a[0], a[1]); break;
    }
    sb_puts(sb, ";\n");
    last = n;
  }
  if (last >= 0) sb_printf(sb, "%*s  %s = n%d;\n", ind, "", acc, last);
  sb_printf(sb, "%*s}\n", ind, "");
}

static void put_epilogue(StrBuf *sb, const char *name, const Gemm *G, int indent, const char *i0, const char *i1,
                         const char *j0, const char *j1) {
  gemm_put_epilogue_call(sb, name, &G->ew, indent, i0, i1, j0, j1);
}

/* The pointers an ISA function reads: A, B, the epilogue's parameters. */
static void put_pointers(StrBuf *sb, const Gemm *G) {
  sb_printf(sb, "  const float *restrict a = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", G->pa);
  sb_printf(sb, "  const float *restrict b = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", G->pb);
  if (!G->epilogue) return;
  ew_put_pointers(sb, &G->ew, 2);
}

/* The attributes of isa's functions ("" for the portable one): the
** target, and GCC's dynamic vectorizer cost model, without which -O2
** leaves the epilogue's loops (gemm_put_epilogue_fn, inlined) scalar. */
static void put_target(StrBuf *sb, const Isa *isa) { lower_put_isa_attrs(sb, (int)(isa - isas)); }

static void put_fn_head(StrBuf *sb, const Isa *isa, const char *name, bool buffers, bool prepacked) {
  put_target(sb, isa);
  sb_printf(sb, "static void %s_%s(rlyrt_object *const *args, float *restrict o%s) {\n", name, isa->suffix,
            !buffers ? "" : prepacked ? ", float *restrict ap" : ", float *restrict ap, float *restrict bp");
}

/* GEMV: C[i, j] = sum_k A[i, k] B[j, k] (dense: B is the weight, [N, K]),
** JB weight rows at a time for each of the few rows of A. */
static void put_gemv(StrBuf *sb, const Isa *isa, const char *name, const Gemm *G) {
  int w = isa->w;
  int jb = G->m == 1 ? 4 : G->m == 2 ? 2 : 1;
  long long n = G->n, k = G->k, m = G->m;
  if (G->par) { /* the output columns [lo, hi) only (lo a multiple of jb) */
    put_target(sb, isa);
    sb_printf(sb, "static void %s_%s(rlyrt_object *const *args, float *restrict o, int64_t lo, int64_t hi) {\n", name,
              isa->suffix);
  } else {
    put_fn_head(sb, isa, name, false, false);
  }
  put_pointers(sb, G);
  sb_puts(sb, "  const int64_t q = 0;\n  float *restrict c = o;\n  (void)q;\n");
  for (int pass = 0; pass < 2; pass++) {
    /* pass 0: blocks of jb rows of B; pass 1: the rest one by one */
    int jn = pass ? 1 : jb;
    long long n0 = n / jb * jb, kv = k / w * w; /* exact bounds: no empty loop for the compiler to wonder about */
    if (pass ? n0 == n : n0 == 0) continue;
    if (G->par && !pass) sb_printf(sb, "  for (int64_t j = lo; j < (hi < %lld ? hi : %lld); j += %d) {\n", n0, n0, jn);
    else if (G->par) sb_printf(sb, "  for (int64_t j = lo > %lld ? lo : %lld; j < hi; j++) {\n", n0, n0);
    else if (!pass) sb_printf(sb, "  for (int64_t j = 0; j < %lld; j += %d) {\n", n0, jn);
    else sb_printf(sb, "  for (int64_t j = %lld; j < %lld; j++) {\n", n0, n);
    for (int t = 0; t < jn; t++) sb_printf(sb, "    const float *restrict b%d = b + (j + %d) * %lld;\n", t, t, k);
    for (long long r = 0; r < m; r++) {
      sb_printf(sb, "    const float *restrict a%lld = a + %lld;\n", r, r * k);
      for (int t = 0; t < jn; t++) {
        sb_printf(sb, "    ");
        v_type(sb, isa, name);
        sb_printf(sb, " s%lld_%d = ", r, t);
        v_zero(sb, isa, name);
        sb_puts(sb, ";\n");
      }
    }
    if (kv) {
      sb_printf(sb, "    for (int64_t l = 0; l < %lld; l += %d) {\n", kv, w);
      for (int t = 0; t < jn; t++) {
        char p[32];
        snprintf(p, sizeof p, "b%d + l", t);
        sb_puts(sb, "      const ");
        v_type(sb, isa, name);
        sb_printf(sb, " vb%d = ", t);
        v_load(sb, isa, name, p);
        sb_puts(sb, ";\n");
      }
      for (long long r = 0; r < m; r++) {
        char p[32];
        snprintf(p, sizeof p, "a%lld + l", r);
        sb_puts(sb, "      const ");
        v_type(sb, isa, name);
        sb_printf(sb, " va%lld = ", r);
        v_load(sb, isa, name, p);
        sb_puts(sb, ";\n");
        for (int t = 0; t < jn; t++) {
          char acc[32], va[32], vb[32];
          snprintf(acc, sizeof acc, "s%lld_%d", r, t);
          snprintf(va, sizeof va, "va%lld", r);
          snprintf(vb, sizeof vb, "vb%d", t);
          sb_printf(sb, "      %s = ", acc);
          sb_printf(sb, isa->fma, va, vb, acc);
          sb_puts(sb, ";\n");
        }
      }
      sb_puts(sb, "    }\n");
    }
    for (long long r = 0; r < m; r++)
      for (int t = 0; t < jn; t++) {
        char acc[32];
        snprintf(acc, sizeof acc, "s%lld_%d", r, t);
        sb_printf(sb, "    float f%lld_%d = ", r, t);
        v_hsum(sb, isa, name, acc);
        sb_puts(sb, ";\n");
      }
    if (kv < k) {
      sb_printf(sb, "    for (int64_t l = %lld; l < %lld; l++) {\n", kv, k);
      for (long long r = 0; r < m; r++)
        for (int t = 0; t < jn; t++) sb_printf(sb, "      f%lld_%d += a%lld[l] * b%d[l];\n", r, t, r, t);
      sb_puts(sb, "    }\n");
    }
    for (long long r = 0; r < m; r++)
      for (int t = 0; t < jn; t++) sb_printf(sb, "    c[%lld + j + %d] = f%lld_%d;\n", r * n, t, r, t);
    sb_puts(sb, "  }\n");
  }
  if (G->epilogue) {
    char mm[32], nn[32];
    snprintf(mm, sizeof mm, "%lld", m);
    snprintf(nn, sizeof nn, "%lld", n);
    put_epilogue(sb, name, G, 2, "0", mm, G->par ? "lo" : "0", G->par ? "hi" : nn);
  }
  sb_puts(sb, "}\n");
}

/* The address of B's vector at column x of the tile, step l
** (gemm_put_tile_rows's bpw). */
static void b_vec_addr(char *buf, size_t size, const char *b_step, int bpw, int x) {
  if (bpw && x >= bpw) snprintf(buf, size, "pb + %d * kc + l * %s + %d", x / bpw * bpw, b_step, x % bpw);
  else snprintf(buf, size, "pb + l * %s + %d", b_step, x);
}

/* The accumulators, the k loop and the store of a tile of mr rows by nv
** vectors of the ISA's (all nr / w of them, or fewer for an edge tile:
** then only the buffered store; full: whether the tile can be full). */
static void put_tile_body(StrBuf *sb, const Isa *isa, const char *name, int ind, int mr, const char *a_step,
                          const char *b_step, int bpw, long long n, const TileEpi *te, int nv, bool full,
                          const char *kpre) {
  int w = isa->w, nr = isa->nr;
  for (int r = 0; r < mr; r++) {
    sb_printf(sb, "%*s", ind, "");
    v_type(sb, isa, name);
    for (int v = 0; v < nv; v++) {
      sb_printf(sb, "%s c%d_%d = ", v ? "," : "", r, v);
      v_zero(sb, isa, name);
    }
    sb_puts(sb, ";\n");
  }
  /* Registers: mr x nv accumulators, nv vectors of B and the broadcast.
  ** Where that is one more than the ISA has (AVX2's 16: tiles of 7 pixels
  ** by 2 vectors), the compiler spilled an accumulator, a chain through
  ** the stack at each k step (ResNet-50's 7x7 layers at 40% of the FMA
  ** peak on a Zen 3). Instead the last vector of B is loaded again by
  ** each FMA (a memory operand, from L1): its address passes through an
  ** empty asm so that the loads are not merged back into a register. */
  int nregs = isa->w == 8 ? 16 : isa->w == 16 ? 32 : 0;
  bool reload = !portable(isa) && nregs && nv > 1 && mr * nv + nv + 1 > nregs;
  sb_printf(sb, "%*sfor (int64_t l = 0; l < kc; l++) {\n", ind, "");
  if (kpre) sb_printf(sb, "%*s  %s\n", ind, "", kpre);
  for (int v = 0; v < nv - (reload ? 1 : 0); v++) {
    char p[64];
    b_vec_addr(p, sizeof p, b_step, bpw, v * w);
    sb_printf(sb, "%*s  const ", ind, "");
    v_type(sb, isa, name);
    sb_printf(sb, " b%d = ", v);
    v_load(sb, isa, name, p);
    sb_puts(sb, ";\n");
  }
  for (int r = 0; r < mr; r++) {
    char s[48];
    if (strstr(a_step, "[l]")) snprintf(s, sizeof s, "pa[%s + %d]", a_step, r);
    else snprintf(s, sizeof s, "pa[l * %s + %d]", a_step, r);
    sb_printf(sb, "%*s  {\n%*s    const ", ind, "", ind, "");
    v_type(sb, isa, name);
    sb_puts(sb, " x = ");
    v_bcast(sb, isa, name, s);
    sb_puts(sb, ";\n");
    for (int v = 0; v < nv; v++) {
      char acc[32], bv[80];
      snprintf(acc, sizeof acc, "c%d_%d", r, v);
      snprintf(bv, sizeof bv, "b%d", v);
      if (reload && v == nv - 1) {
        char p[64];
        b_vec_addr(p, sizeof p, b_step, bpw, v * w);
        sb_printf(sb, "%*s    const float *bl = %s;\n", ind, "", p);
        sb_printf(sb, "%*s    __asm__ volatile(\"\" : \"+r\"(bl));\n", ind, "");
        snprintf(bv, sizeof bv, isa->load, "bl"); /* not portable: one %s */
      }
      sb_printf(sb, "%*s    %s = ", ind, "", acc);
      sb_printf(sb, isa->fma, "x", bv, acc);
      sb_puts(sb, ";\n");
    }
    sb_printf(sb, "%*s  }\n", ind, "");
  }
  sb_printf(sb, "%*s}\n", ind, "");
  /* Store: the full tile directly, an edge tile through a buffer. */
  if (full) {
    /* A full tile (of the rows computed): added to C (after the first KC
    ** block) from registers. */
    sb_printf(sb, "%*sif (mr == %d && nr == NR) {\n", ind, "", mr);
    sb_printf(sb, "%*s  if (pc) {\n", ind, "");
    for (int r = 0; r < mr; r++)
      for (int v = 0; v < nv; v++) {
        char p[64], acc[32];
        snprintf(p, sizeof p, "ct + %lld", (long long)r * n + v * w);
        snprintf(acc, sizeof acc, "c%d_%d", r, v);
        sb_printf(sb, "%*s    %s = ", ind, "", acc);
        if (portable(isa)) {
          sb_printf(sb, "%s + ", acc);
          v_load(sb, isa, name, p);
        } else {
          sb_printf(sb, "%s(%s, ", isa->w == 16 ? "_mm512_add_ps" : "_mm256_add_ps", acc);
          v_load(sb, isa, name, p);
          sb_puts(sb, ")");
        }
        sb_puts(sb, ";\n");
      }
    sb_printf(sb, "%*s  }\n", ind, "");
    if (te) { /* after the last KC block: the epilogue, in registers */
      int in = ind + 4;
      if (te->k > KC) sb_printf(sb, "%*s  if (pc + KC >= %lld) {\n", ind, "", (long long)te->k);
      else sb_printf(sb, "%*s  {\n", ind, "");
      gemm_put_epi_bounds(sb, te->ew, in);
      for (int r = 0; r < mr; r++)
        for (int v = 0; v < nv; v++) {
          char acc[32], row[96], col[96];
          snprintf(acc, sizeof acc, "c%d_%d", r, v);
          snprintf(row, sizeof row, "%s + %d", te->row0, r);
          snprintf(col, sizeof col, "%s + %d", te->col0, v * w);
          gemm_put_epi_vec(sb, (int)(isa - isas), te, in, acc, row, col, NULL);
        }
      sb_printf(sb, "%*s  }\n", ind, "");
    }
    for (int r = 0; r < mr; r++)
      for (int v = 0; v < nv; v++) {
        char p[64], acc[32];
        snprintf(p, sizeof p, "ct + %lld", (long long)r * n + v * w);
        snprintf(acc, sizeof acc, "c%d_%d", r, v);
        sb_printf(sb, "%*s  ", ind, "");
        v_store(sb, isa, name, p, acc);
        sb_puts(sb, ";\n");
      }
    sb_printf(sb, "%*s} else {\n", ind, "");
  } else sb_printf(sb, "%*s{\n", ind, "");
  sb_printf(sb, "%*s  float tile[%d * NR];\n", ind, "", mr);
  for (int r = 0; r < mr; r++)
    for (int v = 0; v < nv; v++) {
      char p[48], acc[32];
      snprintf(p, sizeof p, "tile + %d", r * nr + v * w);
      snprintf(acc, sizeof acc, "c%d_%d", r, v);
      sb_printf(sb, "%*s  ", ind, "");
      v_store(sb, isa, name, p, acc);
      sb_puts(sb, ";\n");
    }
  sb_printf(sb, "%*s  for (int64_t r = 0; r < mr && r < %d; r++)\n", ind, "", mr);
  if (nv * w < nr) sb_printf(sb, "%*s    for (int64_t cc = 0; cc < nr && cc < %d; cc++)\n", ind, "", nv * w);
  else sb_printf(sb, "%*s    for (int64_t cc = 0; cc < nr; cc++)\n", ind, "");
  sb_printf(sb, "%*s      ct[r * %lld + cc] = (pc ? ct[r * %lld + cc] : 0.0f) + tile[r * NR + cc];\n", ind, "", n, n);
  sb_printf(sb, "%*s}\n", ind, "");
}

/* The micro-kernel (see kernel.h): accumulators, the k loop, the store.
** half: a tile of at most NR / 2 columns (the last of a row of C whose
** length leaves that over) computes its first NR / 2 columns only, half
** the FMAs: 196 pixels (14x14) in tiles of 32 computed 224, now 208.
** kpre: a statement at the top of each k step (a prefetch), or NULL. */
void gemm_put_tile_rows(StrBuf *sb, int i, const char *name, int ind, int mr, const char *a_step, const char *b_step,
                        int bpw, int64_t ldc, const TileEpi *te, bool half, const char *kpre) {
  const Isa *isa = &isas[i];
  int w = isa->w, nr = isa->nr, nv = nr / w;
  long long n = (long long)ldc;
  /* C's tile is read (and written) after the k loop: fetch it meanwhile. */
  sb_printf(sb, "%*sfor (int64_t r = 0; r < MR && ir + r < mc; r++) {\n", ind, "");
  sb_printf(sb, "%*s  __builtin_prefetch(ct + r * %lld, 1);\n", ind, "", n);
  if (nr * 4 > 64) sb_printf(sb, "%*s  __builtin_prefetch(ct + r * %lld + 16, 1);\n", ind, "", n);
  sb_printf(sb, "%*s}\n", ind, "");
  sb_printf(sb, "%*sconst int64_t mr = mc - ir < MR ? mc - ir : MR, nr = nc - jr < NR ? nc - jr : NR;\n", ind, "");
  half = half && nv % 2 == 0;
  if (half) {
    sb_printf(sb, "%*sif (nr <= %d) {\n", ind, "", nr / 2);
    put_tile_body(sb, isa, name, ind + 2, mr, a_step, b_step, bpw, n, te, nv / 2, false, kpre);
    sb_printf(sb, "%*s} else {\n", ind, "");
  }
  put_tile_body(sb, isa, name, ind + (half ? 2 : 0), mr, a_step, b_step, bpw, n, te, nv, true, kpre);
  if (half) sb_printf(sb, "%*s}\n", ind, "");
}

/* GEMM: five loops around the MR x NR micro-kernel. */
/* The packing of one operand's KC-deep block into W-wide panels (loop
** variable o over lim, lane x): dst[l * W + x] is the operand at
** (base + o + x, pc + l), 0 past lim; s_x and s_k its strides; o starts
** at from (0, or a multiple of W). A and B are packed by the same code, at
** indentation ind. */
static void put_pack(StrBuf *sb, int ind, const char *o, const char *from, const char *lim, const char *w,
                     const char *x, const char *dst, const char *src, const char *base, int64_t s_x, int64_t s_k) {
  sb_printf(sb, "%*sfor (int64_t %s = %s; %s < %s; %s += %s) {\n", ind, "", o, from, o, lim, o, w);
  sb_printf(sb, "%*s  float *restrict dst = %s + %s * kc;\n", ind, "", dst, o);
  if (s_k == 1) {
    sb_printf(sb, "%*s  for (int64_t %s = 0; %s < %s; %s++) {\n", ind, "", x, x, w, x);
    sb_printf(sb, "%*s    if (%s + %s < %s) {\n", ind, "", o, x, lim);
    sb_printf(sb, "%*s      const float *restrict src = %s + (%s + %s + %s) * %lld + pc;\n", ind, "", src, base, o, x,
              (long long)s_x);
    sb_printf(sb, "%*s      for (int64_t l = 0; l < kc; l++) dst[l * %s + %s] = src[l];\n", ind, "", w, x);
    sb_printf(sb, "%*s    } else {\n", ind, "");
    sb_printf(sb, "%*s      for (int64_t l = 0; l < kc; l++) dst[l * %s + %s] = 0;\n", ind, "", w, x);
    sb_printf(sb, "%*s    }\n%*s  }\n", ind, "", ind, "");
  } else {
    sb_printf(sb, "%*s  for (int64_t l = 0; l < kc; l++)\n", ind, "");
    sb_printf(sb, "%*s    for (int64_t %s = 0; %s < %s; %s++)\n", ind, "", x, x, w, x);
    sb_printf(sb, "%*s      dst[l * %s + %s] = %s + %s < %s ? %s[(%s + %s + %s) * %lld + (pc + l) * %lld] : 0;\n", ind, "", w,
              x, o, x, lim, src, base, o, x, (long long)s_x, (long long)s_k);
  }
  sb_printf(sb, "%*s}\n", ind, "");
}

/* The GEMM of ISA isa as four functions:
**   NAME_blk_SFX   one block: rows [ic, ic + MC) and columns [jc + j0,
**                  jc + j1) of batch q, reduction block pc: packs its A
**                  block (into ap) and runs the micro-kernels and, after
**                  the last KC block, the epilogue on each tile;
**   NAME_task_SFX  block t of a job (rlyrt_parallel_for's item): its slot's
**                  A buffer;
**   NAME_packb_SFX NR-wide panels [p0, p1) of B's (pc, jc) block into bp
**                  (B not packed at build time);
**   NAME_one_SFX   batch q: the loops over jc and pc: packs B's block (by
**                  parts), then runs its blocks (MC rows by jstep columns)
**                  on nt threads;
**   NAME_SFX       the batches: with at least as many batches as threads,
**                  each batch on one thread (NAME_batch_SFX, its slot's A
**                  and B buffers), else one after the other.
** Every tile of C is computed by one block, over the whole reduction in
** order (the pc loop is outside the threads), so the bits do not depend
** on nt. Blocks of several column groups each pack their own copy of A
** (little: 1 / (2 jstep) of the block's work); with nt = 1 there is one
** group of the whole width, as without threads. */
static void put_gemm(StrBuf *sb, const Isa *isa, const char *name, const Gemm *G) {
  int mr = isa->mr, nr = isa->nr;
  long long m = G->m, n = G->n, k = G->k;
  const char *sfx = isa->suffix;
  StrBuf en = {0};
  if (G->prepacked)
    sb_printf(&en, "  enum { MR = %d, NR = %d, KC = %d, MC = %d, NC = %d, PW = %d };\n", mr, nr, KC, MC, NC, LOWER_PACK_NR);
  else sb_printf(&en, "  enum { MR = %d, NR = %d, KC = %d, MC = %d, NC = %d };\n", mr, nr, KC, MC, NC);
  long long bq_step =
      G->prepacked ? (G->b_sq ? (long long)(prepack_panels(G) * LOWER_PACK_NR * G->k) : 0LL) : (long long)G->b_sq;
  /* One block. */
  put_target(sb, isa);
  sb_printf(sb, "static void %s_blk_%s(rlyrt_object *const *args, float *restrict o, float *restrict ap, %s"
                "int64_t q, int64_t jc, int64_t nc, int64_t pc, int64_t kc, int64_t ic, int64_t j0, int64_t j1) {\n",
            name, sfx, G->prepacked ? "" : "const float *restrict bp, ");
  sb_puts(sb, sb_str(&en));
  put_pointers(sb, G);
  sb_printf(sb, "  const float *restrict aq = a + q * %lld;\n", (long long)G->a_sq);
  /* prepacked: batch q's panels, PW-wide over the whole reduction */
  if (G->prepacked) sb_printf(sb, "  const float *restrict bq = b + q * %lld;\n", bq_step);
  else sb_puts(sb, "  (void)b;\n");
  sb_printf(sb, "  float *restrict c = o + q * %lld;\n", m * n);
  sb_printf(sb, "  const int64_t mc = %lld - ic < MC ? %lld - ic : MC;\n", m, m);
  /* Pack A[ic.., pc..] into MR-high panels: ap[panel][l][row]. */
  put_pack(sb, 2, "ir", "0", "mc", "MR", "r", "ap", "aq", "ic", G->a_si, G->a_sk);
  /* The micro-kernels. Packed at build time, B's panels are PW wide over
  ** the whole reduction: rows pc.. of panel p start at bq + (p * K + pc)
  ** * PW, a tile's columns at its offset in the panel, a row of them PW
  ** floats after the one before. */
  sb_puts(sb, "  for (int64_t jr = j0; jr < j1; jr += NR)\n");
  sb_puts(sb, "    for (int64_t ir = 0; ir < mc; ir += MR) {\n");
  if (G->prepacked)
    sb_printf(sb, "      const float *restrict pa = ap + ir * kc, *restrict pb = bq + (jc + jr) / PW * %lld + pc * PW + "
                  "(jc + jr) %% PW;\n", k * LOWER_PACK_NR);
  else sb_puts(sb, "      const float *restrict pa = ap + ir * kc, *restrict pb = bp + jr * kc;\n");
  sb_printf(sb, "      float *restrict ct = c + (ic + ir) * %lld + jc + jr;\n", n);
  /* the epilogue on full tiles in registers where it can (see conv.c) */
  bool in_regs = G->epilogue && gemm_epi_vec_ok((int)(isa - isas), &G->ew, G->l_sj);
  TileEpi te = {&G->ew, G->l_sq, G->l_si, G->l_sj, "ic + ir", "jc + jr", G->k};
  gemm_put_tile_rows(sb, (int)(isa - isas), name, 6, mr, "MR", G->prepacked ? "PW" : "NR", 0, G->n, in_regs ? &te : NULL,
                     G->n % isa->nr && G->n % isa->nr <= isa->nr / 2, NULL);
  if (in_regs) {
    sb_printf(sb, "      if (pc + KC >= %lld && !(mr == MR && nr == NR)) {\n", k);
    put_epilogue(sb, name, G, 8, "ic + ir", "ic + ir + mr", "jc + jr", "jc + jr + nr");
    sb_puts(sb, "      }\n");
  } else if (G->epilogue) {
    /* the last KC block: the tile is final; a full one with constant
    ** trip counts, so that the compiler vectorizes the epilogue */
    sb_printf(sb, "      if (pc + KC >= %lld) {\n", k);
    sb_puts(sb, "        if (mr == MR && nr == NR) {\n");
    put_epilogue(sb, name, G, 10, "ic + ir", "ic + ir + MR", "jc + jr", "jc + jr + NR");
    sb_puts(sb, "        } else {\n");
    put_epilogue(sb, name, G, 10, "ic + ir", "ic + ir + mr", "jc + jr", "jc + jr + nr");
    sb_puts(sb, "        }\n");
    sb_puts(sb, "      }\n");
  }
  sb_puts(sb, "    }\n}\n");
  /* Block t of a job: row block t / nj, column group t % nj. */
  sb_printf(sb, "static void %s_task_%s(void *ctx, int64_t t, int32_t slot) {\n", name, sfx);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
  sb_printf(sb, "  const int64_t ic = t / J->nj * %d, j0 = t %% J->nj * J->jstep;\n", MC);
  sb_puts(sb, "  const int64_t j1 = j0 + J->jstep < J->nc ? j0 + J->jstep : J->nc;\n");
  sb_printf(sb, "  %s_blk_%s(J->args, J->o, J->ap + slot * J->apsz, %sJ->q, J->jc, J->nc, J->pc, J->kc, ic, j0, j1);\n",
            name, sfx, G->prepacked ? "" : "J->bp, ");
  sb_puts(sb, "}\n");
  if (!G->prepacked) {
    /* Panels [t * pstep, ...) of B[pc.., jc..]: bp[panel][l][col]. */
    put_target(sb, isa);
    sb_printf(sb, "static void %s_packb_%s(void *ctx, int64_t t, int32_t slot) {\n", name, sfx);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
    sb_printf(sb, "  enum { NR = %d };\n  (void)slot;\n", nr);
    sb_printf(sb, "  const float *restrict bq = (const float *)RLYRT_AS_TENSOR(J->args[%d])->dl.data + J->q * %lld;\n",
              G->pb, bq_step);
    sb_puts(sb, "  float *restrict bp = J->bp;\n");
    sb_puts(sb, "  const int64_t jc = J->jc, pc = J->pc, kc = J->kc, p0 = t * J->pstep;\n");
    sb_puts(sb, "  const int64_t p1 = p0 + J->pstep < J->nc ? p0 + J->pstep : J->nc;\n");
    put_pack(sb, 2, "jr", "p0", "p1", "NR", "cc", "bp", "bq", "jc", G->b_sj, G->b_sk);
    sb_puts(sb, "}\n");
  }
  /* The loops around the blocks, for batch q. */
  const char *bpp = G->prepacked ? "" : "float *bp, ";
  sb_printf(sb, "static void %s_one_%s(rlyrt_object *const *args, float *o, float *ap, %sint32_t nt, int64_t q) {\n",
            name, sfx, bpp);
  sb_printf(sb, "  enum { NR = %d, KC = %d, MC = %d, NC = %d };\n", nr, KC, MC, NC);
  sb_printf(sb, "  %s_job J = {args, o, ap, %s, 0, 0, 0, 0, 0, 1, 0, 0, %lld, %lld};\n", name,
            G->prepacked ? "NULL" : "bp", (long long)gemm_ap_floats(G), (long long)gemm_bp_floats(G));
  sb_printf(sb, "  const int64_t nic = (%lld + MC - 1) / MC;\n", m);
  sb_puts(sb, "  {\n");
  sb_printf(sb, "    for (int64_t jc = 0; jc < %lld; jc += NC) {\n", n);
  sb_printf(sb, "      const int64_t nc = %lld - jc < NC ? %lld - jc : NC;\n", n, n);
  /* Column groups: about four blocks per thread, each at least 128
  ** columns (a multiple of every NR). One thread: one group. */
  sb_puts(sb, "      int64_t nj = nt > 1 ? (4 * nt + nic - 1) / nic : 1, jstep = (nc + nj - 1) / nj;\n");
  sb_puts(sb, "      jstep = jstep < 128 ? 128 : (jstep + 31) / 32 * 32;\n");
  sb_puts(sb, "      nj = (nc + jstep - 1) / jstep;\n");
  sb_printf(sb, "      for (int64_t pc = 0; pc < %lld; pc += KC) {\n", k);
  sb_printf(sb, "        const int64_t kc = %lld - pc < KC ? %lld - pc : KC;\n", k, k);
  sb_puts(sb, "        J.q = q, J.jc = jc, J.nc = nc, J.pc = pc, J.kc = kc, J.nj = nj, J.jstep = jstep;\n");
  if (!G->prepacked) {
    sb_puts(sb, "        const int64_t npanels = (nc + NR - 1) / NR, per = nt > 1 ? (npanels + 2 * nt - 1) / (2 * nt) : npanels;\n");
    sb_puts(sb, "        J.pstep = per * NR;\n");
    sb_printf(sb, "        rlyrt_parallel_for(nt, (npanels + per - 1) / per, %s_packb_%s, &J);\n", name, sfx);
  }
  sb_printf(sb, "        rlyrt_parallel_for(nt, nic * nj, %s_task_%s, &J);\n", name, sfx);
  sb_puts(sb, "      }\n    }\n  }\n}\n");
  /* Batches: at least as many as threads, each runs on one thread with its
  ** slot's A and B buffers (one fork for the whole call). */
  if (G->q > 1) {
    sb_printf(sb, "static void %s_batch_%s(void *ctx, int64_t q, int32_t slot) {\n", name, sfx);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
    sb_printf(sb, "  %s_one_%s(J->args, J->o, J->ap + slot * J->apsz, %s1, q);\n}\n", name, sfx,
              G->prepacked ? "" : "J->bp + slot * J->bpsz, ");
  }
  sb_printf(sb, "static void %s_%s(rlyrt_object *const *args, float *o, float *ap, %sint32_t nt) {\n", name, sfx, bpp);
  if (G->q > 1) {
    sb_printf(sb, "  if (nt > 1 && %lld >= nt) {\n", (long long)G->q);
    sb_printf(sb, "    %s_job J = {args, o, ap, %s, 0, 0, 0, 0, 0, 1, 0, 0, %lld, %lld};\n", name,
              G->prepacked ? "NULL" : "bp", (long long)gemm_ap_floats(G), (long long)gemm_bp_floats(G));
    sb_printf(sb, "    rlyrt_parallel_for(nt, %lld, %s_batch_%s, &J);\n    return;\n  }\n", (long long)G->q, name, sfx);
  }
  sb_printf(sb, "  for (int64_t q = 0; q < %lld; q++) %s_one_%s(args, o, ap, %snt, q);\n}\n", (long long)G->q, name, sfx,
            G->prepacked ? "" : "bp, ");
  sb_free(&en);
}

/* The portable vector type and its helpers; AVX2's horizontal sum. */
void gemm_put_v4(StrBuf *sb, const char *name, bool store) {
  sb_puts(sb, "#if RLYRT_ISA_MIN == 0\n");
  sb_printf(sb, "typedef float %s_v4 __attribute__((vector_size(16)));\n", name);
  sb_printf(sb, "static inline %s_v4 %s_ld4(const float *p) {\n  %s_v4 v;\n  memcpy(&v, p, sizeof v);\n  return v;\n}\n",
            name, name, name);
  if (store) sb_printf(sb, "static inline void %s_st4(float *p, %s_v4 v) { memcpy(p, &v, sizeof v); }\n", name, name);
  sb_puts(sb, "#endif\n");
}

static void put_helpers(StrBuf *sb, const char *name, const Gemm *G) {
  gemm_put_v4(sb, name, !G->gemv);
  if (G->gemv)
    sb_printf(sb,
              "#if RLYRT_ISA_X86 && RLYRT_ISA_MAX >= 1 && RLYRT_ISA_MIN <= 1\n"
              "__attribute__((target(\"avx2,fma\"))) static inline float %s_hsum8(__m256 v) {\n"
              "  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));\n"
              "  h = _mm_add_ps(h, _mm_movehl_ps(h, h));\n"
              "  h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));\n"
              "  return _mm_cvtss_f32(h);\n"
              "}\n"
              "#endif\n",
              name);
}

static void put_ops(StrBuf *sb, const Group *g) {
  bool first = true;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind != GN_CALL) continue;
    sb_printf(sb, "%s%s", first ? "" : ", ", g->nodes[i].op->name);
    first = false;
  }
}

/* The kernel of the problem G. */
static void put_kernel(StrBuf *sb, const char *name, const Gemm *G, const char *where) {
  const Group *g = G->g;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  int ndim = res->u.tensor.ndim;
  sb_puts(sb, "/* ");
  put_ops(sb, g);
  sb_printf(sb, ": %s float32%s, %lld x [%lld x %lld] x %lld%s */\n", G->gemv ? "GEMV" : "packed GEMM",
            G->prepacked ? " (B packed at build time)" : "", (long long)G->q, (long long)G->m, (long long)G->n,
            (long long)G->k, G->epilogue ? ", elementwise epilogue" : "");
  lower_put_isa_preamble(sb);
  lower_put_threads_preamble(sb);
  put_helpers(sb, name, G);
  if (G->epilogue) put_epilogue_fn(sb, name, G);
  /* Threads: a GEMM's job (the blocks of one (q, jc, pc) step), a GEMV's
  ** parts (ranges of output columns). */
  if (!G->gemv)
    sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  float *o, *ap, *bp;\n"
                  "  int64_t q, jc, nc, pc, kc, nj, jstep, pstep, apsz, bpsz;\n} %s_job;\n", name, name);
  for (size_t i = 0; i < RLY_COUNTOF(isas); i++) {
    const Isa *isa = &isas[i];
    lower_put_isa_if(sb, (int)i);
    if (G->gemv) put_gemv(sb, isa, name, G);
    else put_gemm(sb, isa, name, G);
    sb_puts(sb, "#endif\n");
  }
  if (G->gemv && G->par) {
    sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  float *o;\n  int64_t step;\n} %s_job;\n",
              name, name);
    sb_printf(sb, "static void %s_part(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  rlyrt_object *const *args = J->args;\n", name, name);
    sb_printf(sb, "  float *o = J->o;\n  const int64_t lo = i * J->step, hi = lo + J->step < %lld ? lo + J->step : %lld;\n",
              (long long)G->n, (long long)G->n);
    sb_puts(sb, "  (void)slot;\n");
    lower_put_isa_call(sb, name, "args, o, lo, hi");
    sb_puts(sb, "}\n");
  }
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_printf(sb, "  static const int64_t shape[%d] = {", ndim);
  for (int d = 0; d < ndim; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_printf(sb,
            "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, %d, "
            "shape, false);\n",
            ndim);
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  if (G->par) sb_printf(sb, "  %sint32_t nt = RLYRT_KERNEL_THREADS;\n", G->gemv ? "const " : "");
  if (!G->gemv) {
    /* A buffer for each thread's A block; one B block, shared (one each
    ** when batches run on threads). No more threads than a fork has items:
    ** Q batches, or row blocks by at most NC / 128 column groups. */
    if (!G->par) {
      sb_puts(sb, "  const int32_t nt = 1;\n");
    } else {
      int64_t nic = (G->m + MC - 1) / MC, most = nic * (NC / 128);
      if (G->q > most) most = G->q;
      if (most < RLY_MAX_THREADS_CAP) sb_printf(sb, "  if (nt > %lld) nt = %lld;\n", (long long)most, (long long)most);
    }
    sb_printf(sb, "  float *ap = (float *)rlyrt_scratch_alloc((size_t)nt * %lld)", (long long)(gemm_ap_floats(G) * 4));
    if (G->prepacked) {
      sb_puts(sb, ";\n");
      sb_puts(sb, "  if (!ap) {\n    if (!*out) rlyrt_release(&t->obj);\n    return rlyrt_error_at(RLYRT_E_NOMEM, ");
    } else {
      /* batches split over threads: one B block per thread too */
      if (G->q > 1)
        sb_printf(sb, ", *bp = ap ? (float *)rlyrt_scratch_alloc((size_t)nt * %lld) : NULL;\n", (long long)(gemm_bp_floats(G) * 4));
      else
        sb_printf(sb, ", *bp = ap ? (float *)rlyrt_scratch_alloc(%lld) : NULL;\n", (long long)(gemm_bp_floats(G) * 4));
      sb_puts(sb, "  if (!bp) {\n    rlyrt_scratch_free(ap);\n    if (!*out) rlyrt_release(&t->obj);\n"
                  "    return rlyrt_error_at(RLYRT_E_NOMEM, ");
    }
    lower_put_cstring(sb, where ? where : "");
    sb_puts(sb, ");\n  }\n");
  }
  sb_puts(sb, "  float *o = (float *)t->dl.data;\n");
  if (!G->gemv) {
    lower_put_isa_call(sb, name, G->prepacked ? "args, o, ap, nt" : "args, o, ap, bp, nt");
    sb_puts(sb, G->prepacked ? "  rlyrt_scratch_free(ap);\n" : "  rlyrt_scratch_free(bp);\n  rlyrt_scratch_free(ap);\n");
  } else if (G->par) {
    /* Four parts per thread, each a multiple of 16 columns. */
    sb_puts(sb, "  if (nt > 1) {\n");
    sb_printf(sb, "    const int64_t step = ((%lld + 4 * nt - 1) / (4 * nt) + 15) / 16 * 16;\n", (long long)G->n);
    sb_printf(sb, "    %s_job J = {args, o, step};\n", name);
    sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + step - 1) / step, %s_part, &J);\n", (long long)G->n, name);
    sb_printf(sb, "  } else {\n    const int64_t lo = 0, hi = %lld;\n", (long long)G->n);
    lower_put_isa_call(sb, name, "args, o, lo, hi");
    sb_puts(sb, "  }\n");
  } else {
    lower_put_isa_call(sb, name, "args, o");
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
}

bool gemm_lower(StrBuf *sb, const char *name, const Group *g, int anchor, const char *where) {
  Gemm G;
  if (!analyse(g, anchor, &G)) return false;
  put_kernel(sb, name, &G, where);
  return true;
}

/* {==== B packed at build time ====} */

/* The anchor of g when it is a dense or batch_matmul that the GEMM
** schedules may take (the checks of lower_loops' schedule_group), or -1. */
static int gemm_anchor(const Group *g) {
  int anchor = -1;
  if (g->nparams > 256 || g->nodes[g->nnodes - 1].kind != GN_CALL) return -1;
  for (int i = 0; i < g->nnodes; i++) {
    const GNode *nd = &g->nodes[i];
    if (!nd->live || nd->kind == GN_CONST) continue;
    if (nd->kind == GN_PROJ && nd->args[0] < 0) continue;
    if (nd->kind != GN_CALL) return -1;
    OpId id = nd->op->id;
    if (id == OP_DENSE || id == OP_BATCH_MATMUL || id == OP_SOFTMAX || id == OP_FAST_SOFTMAX || id == OP_LOG_SOFTMAX ||
        id == OP_SUM || id == OP_MEAN || id == OP_MAX || id == OP_MIN) {
      if (anchor >= 0) return -1;
      anchor = i;
    }
  }
  if (anchor < 0) return -1;
  OpId id = g->nodes[anchor].op->id;
  return id == OP_DENSE || id == OP_BATCH_MATMUL ? anchor : -1;
}

/* lower_loops' guard against clang's FMA contraction (see loops.c). */
static const char no_contract[] = "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n";

bool lower_loops_prepacked(StrBuf *out, const char *name, const Expr *fn, const char *where, const bool *is_const,
                           LowerPrepack *p) {
  memset(p, 0, sizeof *p);
  p->param = -1;
  if (conv_lower_prepacked(out, name, fn, where, is_const, p)) return true;
  Group *g = rly_xcalloc(1, sizeof *g);
  Gemm G;
  int anchor = -1;
  bool ok = group_build(fn, g) && (anchor = gemm_anchor(g)) >= 0 && analyse(g, anchor, &G) && !G.gemv &&
            G.pb < g->nparams && is_const[G.pb] && G.pa != G.pb;
  /* B's parameter is read packed: nothing else may read it. */
  for (int k = 0; ok && G.epilogue && k < G.ew.nleaves; k++)
    if (G.ew.leaves[k].param == G.pb) ok = false;
  for (int i = 0; ok && i < g->nnodes; i++)
    for (int j = 0; ok && g->nodes[i].live && j < g->nodes[i].nargs; j++)
      if (g->nodes[i].args[j] == -1 - G.pb && !(i == anchor && j == 1)) ok = false;
  if (ok) {
    G.prepacked = true;
    StrBuf k = {0};
    put_kernel(&k, name, &G, where);
    sb_puts(out, no_contract);
    if (fm_used(sb_str(&k))) fm_put_defs(out);
    sb_puts(out, sb_str(&k));
    sb_free(&k);
    p->param = G.pb;
    p->q = G.b_sq ? G.q : 1;
    p->k = G.k;
    p->n = G.n;
    p->b_sq = G.b_sq;
    p->b_sk = G.b_sk;
    p->b_sj = G.b_sj;
  }
  free(g);
  return ok;
}

void *lower_prepack(const LowerPrepack *p, const void *b, size_t *nbytes) {
  const int64_t pw = p->pw ? p->pw : LOWER_PACK_NR, pad = p->pad > pw ? p->pad : pw;
  const int64_t np = (p->n + pad - 1) / pad * pad / pw;
  size_t n = (size_t)(p->q * np * p->k * pw);
  float *d = rly_xmalloc(n ? n * sizeof *d : 1);
  /* a Winograd filter: its transform, B[q][j][l] (lower/winograd.c) */
  float *u = p->wino ? wino_transform_filter(p, b) : NULL;
  const float *s = u ? u : b;
  /* A Winograd filter goes panel by panel, float[np][q][k][pw]: a task
  ** reads one panel's every point, one stream from memory. With kc, the
  ** panels of a block of kc rows go together. */
  for (int64_t q = 0; q < p->q; q++)
    for (int64_t t = 0; t < np; t++)
      for (int64_t l = 0; l < p->k; l++) {
        float *o = d + (p->wino ? (t * p->q + q) * p->k + l : (q * np + t) * p->k + l) * pw;
        if (p->kc > 0) {
          int64_t pc = l / p->kc * p->kc, kcb = p->k - pc < p->kc ? p->k - pc : p->kc;
          o = d + (q * np * p->k + pc * np + t * kcb + (l - pc)) * pw;
        }
        for (int64_t x = 0; x < pw; x++, o++) {
          int64_t j = t * pw + x;
          if (j < p->n) memcpy(o, s + q * p->b_sq + l * p->b_sk + j * p->b_sj, sizeof *o);
          else *o = 0;
        }
      }
  free(u);
  *nbytes = n * sizeof *d;
  return d;
}
