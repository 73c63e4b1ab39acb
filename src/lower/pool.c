/* lower/pool.c: nn.max_pool2d, nn.avg_pool2d, nn.global_{avg,max}_pool2d
** and nn.adaptive_{avg,max}_pool2d to 1x1 on float32 NCHW with static
** shapes, alone in their group (schedules.def's POOL rows).
**
** The reference kernel's arithmetic (runtime/kernels/k_nn.c, rk_nn_pool
** and rk_nn_adaptive_pool) with everything known at build time. A max
** pool whose window is at most 16 by 16 is separable (put_max_sep): each
** input row's column maxima once, then each output row the maximum of its
** rows' (ResNet's 3x3 stride-2 pool at 112x112: 299 -> 97 us on Zen 3).
** Otherwise, per plane and output row, each window tap in turn over the
** row's outputs whose tap is inside the input (bounds computed at build
** time; independent outputs, no dependency chain). Either way the results
** are the reference's bits (put_max_sep says why for the separable one):
** a max starts at float's lowest value (the reference's padding), an
** average sums in double and divides by the reference's count
** (count_include_pad, or the taps inside). The outer loop goes over independent
** planes; with enough to read (LOWER_PAR_MIN_POOL), blocks of planes are
** the parts of rlyrt_parallel_for (the same bits at any thread count).
** That threshold is 8 times below the reductions': MobileNetV2's global
** average pool (1280 planes of 7x7, 63K floats) took 39 us at 2 threads
** alone on one and 18 split (min of the profile's means, Zen 4). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lower/kernel.h"
#include "lower/lower.h"

typedef struct Pool {
  bool is_max, global;
  int64_t nc, h, w, oh, ow;             /* planes (N * C), input and output sizes */
  int64_t kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  bool include_pad;
} Pool;

static const AttrValue *attr(const Attrs *a, const char *field) {
  if (!a || !a->cls) return NULL;
  int i = attrs_class_field(a->cls, field, strlen(field));
  return i < 0 ? NULL : a->values[i];
}

/* An integer array attribute (a single integer: one item): its count; -1
** when absent, None or not integers. */
static int attr_ints(const Attrs *a, const char *field, int64_t *out, int max) {
  const AttrValue *v = attr(a, field);
  if (!v) return -1;
  if (v->kind == AV_INT) {
    out[0] = v->u.i.v;
    return 1;
  }
  if (v->kind != AV_ARRAY || v->u.arr.n > max) return -1;
  for (int i = 0; i < v->u.arr.n; i++) {
    if (v->u.arr.items[i]->kind != AV_INT) return -1;
    out[i] = v->u.arr.items[i]->u.i.v;
  }
  return v->u.arr.n;
}

static bool attr_pair(const Attrs *a, const char *field, int64_t *h, int64_t *w) {
  int64_t v[2];
  int n = attr_ints(a, field, v, 2);
  if (n == 1) *h = *w = v[0];
  else if (n == 2) *h = v[0], *w = v[1];
  else return false;
  return true;
}

/* Whether a layout attribute is absent, "" or "NCHW". */
static bool nchw(const Attrs *a, const char *field) {
  const AttrValue *v = attr(a, field);
  if (!v) return true;
  if (v->kind != AV_STR) return false;
  return v->u.str.len == 0 || (v->u.str.len == 4 && memcmp(v->u.str.s, "NCHW", 4) == 0);
}

/* A max pool whose window is at most MAX_UNROLLED wide and high, and whose
** window's rows hold at most MAX_RING outputs (32 KB on the stack), is
** separable (put_max_sep); a global pool takes GLOBAL_GROUP planes at a
** time (put_planes). */
enum { MAX_UNROLLED = 16, MAX_RING = 8192, GLOBAL_GROUP = 8 };

static bool is_f32(const Type *t) {
  DType d = t->u.tensor.dtype;
  return d.code == DT_FLOAT && d.bits == 32 && d.lanes == 1;
}

static bool analyse(const Group *g, Pool *P) {
  memset(P, 0, sizeof *P);
  const GNode *a = &g->nodes[g->nnodes - 1];
  if (a->kind != GN_CALL || a->nargs != 1 || a->args[0] >= 0) return false;
  for (int i = 0; i < g->nnodes - 1; i++)
    if (g->nodes[i].live && g->nodes[i].kind != GN_CONST) return false;
  OpId id = a->op->id;
  const Type *tx = g->fn->u.func.params[-1 - a->args[0]]->type, *res = a->call->type;
  if (!lower_static_tensor(tx) || !lower_static_tensor(res) || !is_f32(tx) || !is_f32(res)) return false;
  if (tx->u.tensor.ndim != 4 || res->u.tensor.ndim != 4) return false;
  const int64_t *xs = tx->u.tensor.shape, *os = res->u.tensor.shape;
  if (os[0] != xs[0] || os[1] != xs[1]) return false;
  const Attrs *at = a->call->u.call.attrs;
  if (!nchw(at, "layout") || !nchw(at, "out_layout")) return false;
  P->nc = xs[0] * xs[1], P->h = xs[2], P->w = xs[3], P->oh = os[2], P->ow = os[3];
  P->is_max = id == OP_MAX_POOL2D || id == OP_GLOBAL_MAX_POOL2D || id == OP_ADAPTIVE_MAX_POOL2D;
  bool found = false;
#define SCHEDULE(ID, ANCHOR, MIN_ROWS, MAX_ROWS, what)                                                             \
  if (!found && (int)OP_##ANCHOR == (int)id && strcmp(#ID, "POOL") == 0) found = true;
  enum { OP_NONE = -1 };
#include "lower/schedules.def"
#undef SCHEDULE
  if (!found) return false;
  if (id == OP_GLOBAL_AVG_POOL2D || id == OP_GLOBAL_MAX_POOL2D || id == OP_ADAPTIVE_AVG_POOL2D ||
      id == OP_ADAPTIVE_MAX_POOL2D) {
    P->global = true;
    return P->oh == 1 && P->ow == 1 && P->h * P->w > 0;
  }
  if (!attr_pair(at, "pool_size", &P->kh, &P->kw) || !attr_pair(at, "strides", &P->sh, &P->sw) ||
      !attr_pair(at, "dilation", &P->dh, &P->dw))
    return false;
  int64_t pad[4];
  int np = attr_ints(at, "padding", pad, 4);
  if (np == 1) P->pt = P->pl = P->pb = P->pr = pad[0];
  else if (np == 2) P->pt = P->pb = pad[0], P->pl = P->pr = pad[1];
  else if (np == 4) P->pt = pad[0], P->pl = pad[1], P->pb = pad[2], P->pr = pad[3];
  else return false;
  if (P->kh < 1 || P->kw < 1 || P->sh < 1 || P->sw < 1 || P->dh < 1 || P->dw < 1) return false;
  if (P->pt < 0 || P->pl < 0 || P->pb < 0 || P->pr < 0) return false;
  P->include_pad = lower_attr_int(at, "count_include_pad", 0) != 0;
  return P->is_max || P->ow <= 4096; /* an average's row of doubles on the stack */
}

/* The average's divisor along one dim (the reference's count), for the
** window starting at `start` (a C expression) of the input size in. */
static void put_count(StrBuf *sb, const char *var, const char *start, int64_t k, int64_t d, int64_t in, int64_t pa,
                      bool include_pad) {
  sb_printf(sb, "        int64_t %s;\n        {\n", var);
  sb_printf(sb, "          const int64_t st = %s;\n", start);
  sb_printf(sb, "          int64_t en = st + %lld;\n", (long long)((k - 1) * d));
  if (include_pad) {
    sb_printf(sb, "          if (en > %lld) en = %lld;\n", (long long)(in + pa - 1), (long long)(in + pa - 1));
    sb_printf(sb, "          %s = (en - st) / %lld + 1;\n", var, (long long)d);
  } else {
    sb_printf(sb, "          int64_t jn = (%lld - st) / %lld;\n", (long long)(d - 1), (long long)d);
    sb_puts(sb, "          if (jn < 0) jn = 0;\n");
    sb_printf(sb, "          if (en > %lld) en = %lld;\n", (long long)(in - 1), (long long)(in - 1));
    sb_printf(sb, "          %s = (en - (st + %lld * jn)) / %lld + 1;\n", var, (long long)d, (long long)d);
  }
  sb_puts(sb, "        }\n");
}

static void put_planes(StrBuf *sb, const Pool *P, int isa);

static void put_kernel(StrBuf *sb, const char *name, const Group *g, const Pool *P, const char *where) {
  const GNode *a = &g->nodes[g->nnodes - 1];
  const Type *res = a->call->type;
  int px = -1 - a->args[0];
  sb_printf(sb, "/* %s: %s pool float32, %lld planes of %lld x %lld */\n", a->op->name, P->is_max ? "max" : "average",
            (long long)P->nc, (long long)P->h, (long long)P->w);
  /* the planes [p0, p1): a version per vector ISA (the window's taps are
  ** strided loads, which GCC's -O2 cost model leaves scalar: those
  ** versions ask for its dynamic model), and the one that the CPU runs */
  lower_put_isa_preamble(sb);
  for (int i = 0; i < lower_isa_count(); i++) {
    lower_put_isa_if(sb, i);
    lower_put_isa_attrs(sb, i);
    sb_printf(sb, "static void %s_planes_%s(const float *restrict x, float *restrict o, int64_t p0, int64_t p1) {\n",
              name, lower_isa_suffix(i));
    put_planes(sb, P, i);
    sb_puts(sb, "}\n#endif\n");
  }
  sb_printf(sb, "static void %s_planes(const float *restrict x, float *restrict o, int64_t p0, int64_t p1) {\n", name);
  char fn[160];
  snprintf(fn, sizeof fn, "%s_planes", name);
  lower_put_isa_call(sb, fn, "x, o, p0, p1");
  sb_puts(sb, "}\n");
  bool par = P->nc > 1 && lower_par_worth((double)P->nc * (double)(P->h * P->w), LOWER_PAR_MIN_POOL);
  if (par) {
    lower_put_threads_preamble(sb);
    sb_printf(sb, "typedef struct %s_job {\n  const float *x;\n  float *o;\n  int64_t step;\n} %s_job;\n", name, name);
    sb_printf(sb, "static void %s_task(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  (void)slot;\n", name, name);
    sb_printf(sb, "  const int64_t p0 = i * J->step, p1 = p0 + J->step < %lld ? p0 + J->step : %lld;\n",
              (long long)P->nc, (long long)P->nc);
    sb_printf(sb, "  %s_planes(J->x, J->o, p0, p1);\n}\n", name);
  }
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_puts(sb, "  static const int64_t shape[4] = {");
  for (int d = 0; d < 4; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_puts(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 4, "
              "shape, false);\n");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  sb_printf(sb, "  const float *x = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", px);
  sb_puts(sb, "  float *o = (float *)t->dl.data;\n");
  if (par) { /* four parts per thread */
    sb_puts(sb, "  const int32_t nt = RLYRT_KERNEL_THREADS;\n  if (nt > 1) {\n");
    sb_printf(sb, "    %s_job J = {x, o, (%lld + 4 * nt - 1) / (4 * nt)};\n", name, (long long)P->nc);
    sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + J.step - 1) / J.step, %s_task, &J);\n", (long long)P->nc, name);
    sb_printf(sb, "  } else {\n    %s_planes(x, o, 0, %lld);\n  }\n", name, (long long)P->nc);
  } else {
    sb_printf(sb, "  %s_planes(x, o, 0, %lld);\n", name, (long long)P->nc);
  }
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
}

/* The outputs [*lo, *hi] of a row whose column tap b (ow * SW - PL + b *
** DW) is inside [0, W) (lo > hi: none). */
static void tap_outputs(const Pool *P, int64_t b, int64_t *lo, int64_t *hi) {
  int64_t c0 = P->pl - b * P->dw, top = P->w - 1 + c0;
  *lo = c0 > 0 ? (c0 + P->sw - 1) / P->sw : 0;
  *hi = top < 0 ? -1 : top / P->sw;
  if (*hi > P->ow - 1) *hi = P->ow - 1;
}

/* put_max_sep's outputs [o0, o1) of a row (sr) into its ring row (q),
** their column taps in order. in: every tap inside, unrolled; else tap by
** tap with bounds. */
static void put_max_hloop(StrBuf *sb, const Pool *P, int64_t o0, int64_t o1, bool in) {
  long long kw = P->kw, sw = P->sw, pl = P->pl, dw = P->dw;
  if (o0 >= o1) return;
  sb_printf(sb, "        for (int64_t ow = %lld; ow < %lld; ow++) {\n", (long long)o0, (long long)o1);
  sb_puts(sb, "          float m = -0x1.fffffep+127f, v;\n");
  if (in) {
    for (long long b = 0; b < kw; b++)
      sb_printf(sb, "          v = sr[ow * %lld %c %lld];\n          m = v > m ? v : m;\n", sw,
                b * dw - pl < 0 ? '-' : '+', llabs(b * dw - pl));
  } else {
    sb_printf(sb, "          for (int64_t b = 0; b < %lld; b++) {\n", kw);
    sb_printf(sb, "            const int64_t iw = ow * %lld - %lld + b * %lld;\n", sw, pl, dw);
    sb_printf(sb, "            if (iw >= 0 && iw < %lld) {\n", (long long)P->w);
    sb_puts(sb, "              v = sr[iw];\n              m = v > m ? v : m;\n            }\n          }\n");
  }
  sb_puts(sb, "          q[ow] = m;\n        }\n");
}

/* Whether put_max_vec2 serves version isa for the outputs [lo, hi]
** (whole vectors from lo, the last one ending at hi): stride 2, no
** dilation, AVX-512 or AVX2, every load inside the row. */
static bool max_vec2(const Pool *P, int isa, int64_t lo, int64_t hi) {
  int lanes, mr, nr;
  gemm_isa_tile(isa, &lanes, &mr, &nr);
  if (!lower_isa_target(isa) || P->sw != 2 || P->dw != 1 || hi + 1 - lo < lanes) return false;
  int64_t first = 2 * lo + 2 * (-P->pl >> 1 /* floor */), last = 2 * (hi + 1 - lanes) + 2 * ((P->kw - 1 - P->pl) >> 1);
  return first >= 0 && last + 2 * lanes - 1 < P->w;
}

/* The outputs [lo, hi] of a row by explicit vectors at stride 2 (lanes
** outputs from the 2 * lanes floats at t = sr + 2 * ow + e: tap b reads the
** even floats of its base e = b - pl rounded down to even where b - pl is
** even, the odd ones where it is odd): each pair of loads split by phase
** in one shuffle (AVX-512: vpermt2ps; AVX2: vshufps, whose pairs of outputs
** 0 1 4 5 2 3 6 7 one vpermpd puts back in order after the maxima), where
** gcc's strided loads took two permutes and a blend per tap. */
static void put_max_vec2(StrBuf *sb, const Pool *P, int isa, int64_t lo, int64_t hi) {
  int lanes, mr, nr;
  gemm_isa_tile(isa, &lanes, &mr, &nr);
  bool z = lanes == 16;
  const char *V = z ? "__m512" : "__m256", *pre = z ? "_mm512" : "_mm256";
  int64_t n = hi + 1 - lo, whole = n / lanes * lanes;
  int64_t e0 = -P->pl >> 1, e1 = (P->kw - 1 - P->pl) >> 1; /* the bases, halved */
  for (int phase = 0; z && phase < 2; phase++) { /* the index vectors of the phases that taps read */
    bool used = false;
    for (int64_t b = 0; b < P->kw; b++) used |= ((b - P->pl) & 1) == phase;
    if (!used) continue;
    sb_printf(sb, "        const __m512i %s = _mm512_setr_epi32(", phase ? "io" : "ie");
    for (int k = 0; k < 16; k++) sb_printf(sb, "%s%d", k ? ", " : "", 2 * k + phase);
    sb_puts(sb, ");\n");
  }
  for (int part = 0; part < 2; part++) {
    if (part == 0) sb_printf(sb, "        for (int64_t ow = %lld; ow < %lld; ow += %d) {\n", (long long)lo,
                             (long long)(lo + whole), lanes);
    else if (whole < n) sb_printf(sb, "        {\n          const int64_t ow = %lld;\n", (long long)(hi + 1 - lanes));
    else break;
    sb_puts(sb, "          const float *t = sr + 2 * ow;\n");
    sb_printf(sb, "          %s m = %s_set1_ps(-0x1.fffffep+127f);\n", V, pre);
    for (int64_t e = e0; e <= e1; e++)
      sb_printf(sb, "          const %s a%lld = %s_loadu_ps(t %c %lld), b%lld = %s_loadu_ps(t %c %lld);\n", V,
                (long long)(e - e0), pre, e < 0 ? '-' : '+', llabs(2 * e), (long long)(e - e0), pre,
                2 * e + lanes < 0 ? '-' : '+', llabs(2 * e + lanes));
    for (int64_t b = 0; b < P->kw; b++) {
      int64_t c = b - P->pl, e = c >> 1, k = e - e0;
      bool odd = (c & 1) != 0;
      if (z) sb_printf(sb, "          m = _mm512_max_ps(_mm512_permutex2var_ps(a%lld, %s, b%lld), m);\n", (long long)k,
                       odd ? "io" : "ie", (long long)k);
      else sb_printf(sb, "          m = _mm256_max_ps(_mm256_shuffle_ps(a%lld, b%lld, %s), m);\n", (long long)k,
                     (long long)k, odd ? "0xdd" : "0x88");
    }
    if (!z) sb_puts(sb, "          m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), 0xd8));\n");
    sb_printf(sb, "          %s_storeu_ps(q + ow, m);\n        }\n", pre);
  }
}

/* A separable max pool: per plane, each input row under a window once
** into a ring of SPAN rows of its column taps' maxima, then each output
** row the maximum of its rows in the ring (contiguous loads). The outputs
** whose column taps are all inside take them unrolled, in loops of a whole
** number of vectors of version isa (the last vector's outputs computed
** again rather than a scalar remainder); at stride 2 the shuffles of
** put_max_vec2. ResNet's 3x3 stride-2 pool at 112x112 (64 planes), alone
** on one core of Zen 3: 299 -> 97 us; with gcc's strided loads in place of
** the shuffles the separable form gained nothing (8 planes in L2: 33 us
** either way, 12 with the shuffles).
**
** The bits are the reference's: its `v > m ? v : m` over the taps in
** row-major order from float's lowest value keeps the first tap equal to
** the maximum (of +0 and -0, the first; a NaN never). A row's maximum is
** its first such tap, and the rows' maximum the first row's whose maximum
** is the window's, so the window's first in row-major order too (columns
** first would keep the first in column-major order). A row's
** maximum is never a NaN nor below the lowest float, so the rows' maximum
** starts from the first row. Rows in the padding are no taps; an output
** row with none is the lowest float. */
static void put_max_sep(StrBuf *sb, const Pool *P, int isa) {
  long long kh = P->kh, ow = P->ow, span = (kh - 1) * P->dh + 1;
  int64_t lo = 0, hi = P->ow - 1; /* the outputs whose every column tap is inside */
  for (int64_t b = 0; b < P->kw; b++) {
    int64_t l, h;
    tap_outputs(P, b, &l, &h);
    if (l > lo) lo = l;
    if (h < hi) hi = h;
  }
  int lanes, mr, nr;
  gemm_isa_tile(isa, &lanes, &mr, &nr);
  sb_puts(sb, "  for (int64_t p = p0; p < p1; p++) {\n");
  sb_printf(sb, "    const float *restrict s = x + p * %lld;\n", (long long)(P->h * P->w));
  sb_printf(sb, "    float *restrict d = o + p * %lld;\n", (long long)(P->oh * P->ow));
  sb_printf(sb, "    float ring[%lld][%lld];\n    int64_t next = 0;\n", span, ow);
  sb_printf(sb, "    for (int64_t oh = 0; oh < %lld; oh++) {\n", (long long)P->oh);
  sb_printf(sb, "      float *restrict dr = d + oh * %lld;\n", ow);
  sb_printf(sb, "      const int64_t h0 = oh * %lld - %lld;\n", (long long)P->sh, (long long)P->pt);
  sb_printf(sb, "      int64_t ih = h0 > next ? h0 : next, end = h0 + %lld;\n", span - 1);
  sb_printf(sb, "      if (ih < 0) ih = 0;\n      if (end > %lld) end = %lld;\n", (long long)P->h - 1,
            (long long)P->h - 1);
  sb_puts(sb, "      for (; ih <= end; ih++) {\n");
  sb_printf(sb, "        const float *restrict sr = s + ih * %lld;\n", (long long)P->w);
  sb_printf(sb, "        float *restrict q = ring[ih %% %lld];\n", span);
  if (lo > hi) {
    put_max_hloop(sb, P, 0, P->ow, false);
  } else {
    put_max_hloop(sb, P, 0, lo, false);
    int64_t n = hi + 1 - lo, whole = n / lanes * lanes;
    if (max_vec2(P, isa, lo, hi)) {
      put_max_vec2(sb, P, isa, lo, hi);
    } else if (whole == 0 || whole == n) {
      put_max_hloop(sb, P, lo, hi + 1, true);
    } else {
      put_max_hloop(sb, P, lo, lo + whole, true);
      put_max_hloop(sb, P, hi + 1 - lanes, hi + 1, true);
    }
    put_max_hloop(sb, P, hi + 1, P->ow, false);
  }
  sb_puts(sb, "      }\n      if (end + 1 > next) next = end + 1;\n");
  /* the output row: every row inside, unrolled; else the rows inside */
  sb_printf(sb, "      if (h0 >= 0 && h0 + %lld < %lld) {\n", span - 1, (long long)P->h);
  for (long long a = 0; a < kh; a++)
    sb_printf(sb, "        const float *restrict q%lld = ring[(h0 + %lld) %% %lld];\n", a, a * P->dh, span);
  sb_printf(sb, "        for (int64_t ow = 0; ow < %lld; ow++) {\n          float m = q0[ow];\n", ow);
  for (long long a = 1; a < kh; a++) sb_printf(sb, "          m = q%lld[ow] > m ? q%lld[ow] : m;\n", a, a);
  sb_puts(sb, "          dr[ow] = m;\n        }\n      } else {\n");
  sb_printf(sb, "        const float *q[%lld];\n        int na = 0;\n", kh);
  sb_printf(sb, "        for (int64_t a = 0; a < %lld; a++) {\n", kh);
  sb_printf(sb, "          const int64_t r = h0 + a * %lld;\n", (long long)P->dh);
  sb_printf(sb, "          if (r >= 0 && r < %lld) q[na++] = ring[r %% %lld];\n        }\n", (long long)P->h, span);
  sb_printf(sb, "        for (int64_t ow = 0; ow < %lld; ow++) {\n", ow);
  sb_puts(sb, "          float m = na ? q[0][ow] : -0x1.fffffep+127f;\n");
  sb_puts(sb, "          for (int i = 1; i < na; i++) m = q[i][ow] > m ? q[i][ow] : m;\n");
  sb_puts(sb, "          dr[ow] = m;\n        }\n      }\n    }\n  }\n");
}

/* The loop over the planes p0 <= p < p1 (x, o in scope). */
static void put_planes(StrBuf *sb, const Pool *P, int isa) {
  long long hw = P->h * P->w;
  if (P->global) {
    /* GLOBAL_GROUP planes at a time, each plane's sum (or maximum) in its
    ** own chain in the same order as one at a time (the same bits): one
    ** chain waited on each add's latency (MobileNetV2's 1280 planes of 49
    ** in the model at one thread, 37 -> 14 us). The groups counted, not
    ** `for (; p + 8 <= p1; p += 8)`: GCC -O3 took the loop after that one
    ** for one that may overflow, and warned. */
    sb_printf(sb, "  const int64_t ng = (p1 - p0) / %d;\n", GLOBAL_GROUP);
    static const int group[2] = {GLOBAL_GROUP, 1};
    for (int gi = 0; gi < 2; gi++) {
      int g = group[gi];
      if (g > 1) sb_printf(sb, "  for (int64_t b = 0; b < ng; b++) {\n    const int64_t p = p0 + b * %d;\n", g);
      else sb_printf(sb, "  for (int64_t p = p0 + ng * %d; p < p1; p++) {\n", GLOBAL_GROUP);
      sb_printf(sb, "    const float *restrict s = x + p * %lld;\n", hw);
      for (int k = 0; k < g; k++) {
        if (P->is_max) sb_printf(sb, "    float a%d = -0x1.fffffep+127f;\n", k);
        else sb_printf(sb, "    double a%d = 0;\n", k);
      }
      sb_printf(sb, "    for (int64_t i = 0; i < %lld; i++) {\n", hw);
      for (int k = 0; k < g; k++) {
        if (P->is_max) sb_printf(sb, "      a%d = s[%lld + i] > a%d ? s[%lld + i] : a%d;\n", k, k * hw, k, k * hw, k);
        else sb_printf(sb, "      a%d += (double)s[%lld + i];\n", k, k * hw);
      }
      sb_puts(sb, "    }\n");
      for (int k = 0; k < g; k++) {
        if (P->is_max) sb_printf(sb, "    o[p + %d] = a%d;\n", k, k);
        else sb_printf(sb, "    o[p + %d] = (float)(a%d / %lld);\n", k, k, hw);
      }
      sb_puts(sb, "  }\n");
    }
    return;
  }
  if (P->is_max && P->kh <= MAX_UNROLLED && P->kw <= MAX_UNROLLED &&
      ((P->kh - 1) * P->dh + 1) * P->ow <= MAX_RING) {
    put_max_sep(sb, P, isa);
    return;
  }
  sb_puts(sb, "  for (int64_t p = p0; p < p1; p++) {\n");
  sb_printf(sb, "    const float *restrict s = x + p * %lld;\n", hw);
  /* Per output row: the row (a max: d itself; an average: acc in double)
  ** gathers each tap in turn over the outputs whose tap is inside the
  ** input, so each output sees its taps in the reference's order. */
  sb_printf(sb, "    float *restrict d = o + p * %lld;\n", (long long)(P->oh * P->ow));
  sb_printf(sb, "    for (int64_t oh = 0; oh < %lld; oh++) {\n", (long long)P->oh);
  sb_printf(sb, "      float *restrict dr = d + oh * %lld;\n", (long long)P->ow);
  if (P->is_max) sb_printf(sb, "      for (int64_t ow = 0; ow < %lld; ow++) dr[ow] = -0x1.fffffep+127f;\n", (long long)P->ow);
  else sb_printf(sb, "      double acc[%lld] = {0};\n", (long long)P->ow);
  sb_printf(sb, "      const int64_t h0 = oh * %lld - %lld;\n", (long long)P->sh, (long long)P->pt);
  sb_printf(sb, "      for (int64_t a = 0; a < %lld; a++) {\n", (long long)P->kh);
  sb_printf(sb, "        const int64_t ih = h0 + a * %lld;\n", (long long)P->dh);
  sb_printf(sb, "        if (ih < 0 || ih >= %lld) continue;\n", (long long)P->h);
  sb_printf(sb, "        const float *restrict sr = s + ih * %lld;\n", (long long)P->w);
  for (int64_t b = 0; b < P->kw; b++) {
    int64_t lo, hi;
    tap_outputs(P, b, &lo, &hi);
    if (lo > hi) continue;
    sb_printf(sb, "        for (int64_t ow = %lld; ow <= %lld; ow++) {\n", (long long)lo, (long long)hi);
    sb_printf(sb, "          const float v = sr[ow * %lld - %lld];\n", (long long)P->sw, (long long)(P->pl - b * P->dw));
    if (P->is_max) sb_puts(sb, "          dr[ow] = v > dr[ow] ? v : dr[ow];\n");
    else sb_puts(sb, "          acc[ow] += (double)v;\n");
    sb_puts(sb, "        }\n");
  }
  sb_puts(sb, "      }\n");
  if (!P->is_max) {
    sb_printf(sb, "      for (int64_t ow = 0; ow < %lld; ow++) {\n", (long long)P->ow);
    sb_printf(sb, "        const int64_t w0 = ow * %lld - %lld;\n", (long long)P->sw, (long long)P->pl);
    put_count(sb, "ch", "h0", P->kh, P->dh, P->h, P->pb, P->include_pad);
    put_count(sb, "cw", "w0", P->kw, P->dw, P->w, P->pr, P->include_pad);
    sb_puts(sb, "        int64_t count = ch * cw;\n");
    if (!P->include_pad) sb_puts(sb, "        if (count < 1) count = 1;\n");
    sb_puts(sb, "        dr[ow] = (float)(acc[ow] / (double)count);\n      }\n");
  }
  sb_puts(sb, "    }\n  }\n");
}

bool pool_lower(StrBuf *sb, const char *name, const Group *g, const char *where) {
  Pool P;
  if (!analyse(g, &P)) return false;
  put_kernel(sb, name, g, &P, where);
  return true;
}
