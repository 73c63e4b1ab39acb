/* lower/winograd.c: nn.conv2d 3x3, stride and dilation 1, one group, on
** float32 with a constant filter, as Winograd's minimal filtering
** F(m x m, 3 x 3) (schedules.def's CONV_WINO; the problem is conv.c's).
**
** The output is cut into m x m tiles (the last row and column of tiles
** ragged: computed in full on zeros, stored in part); tile (th, tw) reads
** the alpha x alpha input window (alpha = m + 2) at (th * m, tw * m) of
** the zero-padded input. With the transforms B^T, G, A^T of F(m, 3):
**   U = G g G^T        per filter and input channel, at build time:
**                      lower_prepack transforms the constant (in double,
**                      rounded once) and packs U[a] (a = one of the alpha^2
**                      points) as the B operand of gemm.c's prepacked GEMM,
**                      float[ceil(K / 32)][a][C][32] (a panel's points
**                      together: a phase-2 item streams one run of it);
**   V = B^T d B        per tile and input channel, at run time;
**   M[a] = V[a]^T U[a] alpha^2 independent GEMMs [tiles x C] x [C x K] on
**                      gemm.c's MR x NR micro-kernel: the tiles are A's
**                      rows (broadcast, read straight from V[a][c][tile]),
**                      the filters B's vector lanes;
**   Y = A^T M A        per tile and filter, then the group's elementwise
**                      tail (bias, batch norm, relu, clip, residual add) as
**                      gemm.c's epilogue on the final values.
** F(4x4, 3x3) (alpha 6) does 36 products per 16 outputs and channel where
** the direct convolution does 144 (4x fewer); F(2x2, 3x3) (alpha 4) 16
** per 4 (2.25x fewer). F(4x4)'s transforms have larger coefficients (B^T
** up to 5, A^T up to 8, G down to 1/24), so its float32 rounding is
** larger: on ResNet's layers (random data), max |out - direct| / max
** |direct| is 6e-6 to 1.1e-5 for F(4x4), 4e-7 to 7e-7 for F(2x2) as for
** the im2col GEMM. U is alpha^2 / 9 times the filter's size and a block
** reuses it for its tiles only, so the shape rule (wino_applies) wants
** more tiles for bigger filters; it picks F(4x4), or F(2x2) where a U(4x4)
** of several MB would be read from memory at each call for few tiles
** (ResNet's 14x14 layers of 256 channels); RLY_WINOGRAD forces either
** (docs/design.md has the measurements).
**
** The tiles are cut into blocks of whole tile rows of one image (about
** TILES tiles of F(4x4), as many points of V for F(2x2): plan_of; whole
** tile rows so that a block's outputs are a contiguous range of each
** output plane, which the epilogue takes at once). Per block, two phases:
**   1. each input plane copied into the thread's scratch with zero
**      borders that cover every tile's window, its columns split by phase
**      (column mod m: on AVX-512 m vectors of a row split by permutes),
**      then the block's windows gathered into D[alpha^2][tiles] (each
**      window element of a tile row is consecutive floats of a phase), and
**      B^T d B on W tiles per vector (the coefficients are small
**      integers: adds and products by constants) into the block's
**      V[alpha^2][C][TBP] (TBP: the rows the micro-kernels read, the
**      tiles up to a multiple of mr, up to a multiple of 16; those past
**      the tiles are dropped);
**   2. per 32-filter panel of U: the alpha^2 GEMMs from the block's V into
**      M[alpha^2][TBP][32] (the thread's scratch), with a micro-kernel of
**      mr rows (tiles) chosen per ISA to pad the block least (a block of
**      16 tiles takes 8, of 28 takes 7, where MR = 12 would pad to 24 and
**      36); A^T m A on W filters per vector (M's rows), scattered into the
**      output planes (F(4x4) on AVX-512: a whole tile's 16 filters by 4 x 4
**      transposes in each 128-bit lane, a row of 4 outputs per store); the
**      epilogue on the block's pixels and the panel's filters.
** Each thread keeps one block's V in its scratch, headed by the block's
** index. The rlyrt_parallel_for items are whole blocks (both phases, every
** panel) when the blocks divide evenly among the threads, else (image,
** block, panel) in block order: a thread transforms a block when its first
** item of the block comes, so V is read by the core that wrote it (V
** shared across cores made ResNet's 56x56 and 28x28 layers no faster on 2
** threads than on 1, and phase 1 at 14x14 4x slower than on 1 thread, on
** AMD's Zen 5). A thread whose items start or end inside a block, or that
** takes another's item, repeats that block's phase 1: where the threads
** outnumber the blocks 4 to 1 (or with RLY_WINO_SHARED=1 at build time, a
** test hook) the phases are split apart instead, V shared (every block of
** a group of images: at most VCAP floats unless one image needs more;
** larger batches run group by group): phase 1 by (image, range of input
** channels), about 4 per thread, phase 2 by (image, block, panel).
** Every output value is
** computed by the same operations in the same order whatever the split
** (V per channel and tile, a GEMM row of M per tile and KC block, the
** output transform per tile and filter; mr and the blocks depend on the
** shape and ISA only), so the bits do not depend on the thread count.
** One version per vector ISA, as the other schedules. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lower/conv.h"

/* gemm.c's KC; U's panels; tiles per block (about); the most floats of V
** (8 MiB) a call holds when an image needs less */
enum { KC = 256, PW = LOWER_PACK_NR, TILES = 32, VCAP = 1 << 21 };

/* {==== The transforms ====} */

typedef struct Wino {
  int m, a;          /* output tile side, input tile side alpha = m + 2 */
  const double *bt;  /* B^T: a x a */
  const double *g;   /* G: a x 3 */
  const double *at;  /* A^T: m x a */
} Wino;

/* F(2x2, 3x3) on the points 0, 1, -1 (and infinity). */
static const double bt2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const double g2[] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
static const double at2[] = {1, 1, 1, 0, 0, 1, -1, -1};
/* F(4x4, 3x3) on the points 0, 1, -1, 2, -2 (and infinity). */
static const double bt4[] = {4, 0, -5, 0, 1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0,
                             0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0, -5, 0, 1};
static const double g4[] = {1.0 / 4,  0,         0,        -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6,
                            1.0 / 24, 1.0 / 12,  1.0 / 6,  1.0 / 24, -1.0 / 12, 1.0 / 6, 0,        0,       1};
static const double at4[] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};

static Wino wino_of(int m) {
  if (m == 2) return (Wino){2, 4, bt2, g2, at2};
  return (Wino){4, 6, bt4, g4, at4};
}

/* The filter [n][k][3][3] (a constant's bytes, maybe unaligned) as
** U[alpha^2][n][k], U = G g G^T in double. */
static float *transform_filter(int m, int64_t n, int64_t k, const unsigned char *w) {
  Wino T = wino_of(m);
  int a = T.a;
  float *u = rly_xmalloc((size_t)(a * a * n * k) * sizeof *u);
  for (int64_t o = 0; o < n; o++)
    for (int64_t c = 0; c < k; c++) {
      float g[9];
      memcpy(g, w + (o * k + c) * 9 * sizeof g[0], sizeof g);
      double t[6][3]; /* G g */
      for (int i = 0; i < a; i++)
        for (int s = 0; s < 3; s++) {
          double v = 0;
          for (int r = 0; r < 3; r++) v += T.g[i * 3 + r] * g[r * 3 + s];
          t[i][s] = v;
        }
      for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
          double v = 0;
          for (int s = 0; s < 3; s++) v += t[i][s] * T.g[j * 3 + s];
          u[((int64_t)(i * a + j) * n + o) * k + c] = (float)v;
        }
    }
  return u;
}

float *wino_transform_filter(const LowerPrepack *p, const void *b) {
  return transform_filter(p->wino, p->n, p->k, b);
}

/* {==== The problem ====} */

/* The layout of the work for a problem. */
typedef struct Plan {
  Wino T;
  int64_t th, tw;   /* tile rows, tiles per row */
  int64_t hq, rl;   /* the zero-bordered input plane: hq rows of rl = m * pwd floats, */
  int64_t pwd;      /* its columns split by phase (column mod m), pwd = tw + 1 of each */
  int64_t plane;    /* its floats, up to a multiple of 16 */
  int64_t rb, nrb;  /* tile rows per block, blocks per image */
  int64_t tb, tbp;  /* tiles per block (at most), rows of V and M per point */
  int64_t kp;       /* U's 32-wide panels */
  int64_t vblk;     /* floats of a block's V: alpha^2 x C x tbp */
  int64_t slot;     /* floats of one thread's scratch: the plane and D, or M */
} Plan;

/* The rows of A (tiles) of ISA i's micro-kernel for blocks of tb tiles:
** of MR down to MR / 2, the one that pads tb the least (the largest of
** those), or tb itself when smaller. */
static int pick_mr(int i, int64_t tb) {
  int w, mr, nr;
  gemm_isa_tile(i, &w, &mr, &nr);
  int lo = (mr + 1) / 2;
  if (tb < lo) return (int)tb;
  int best = mr;
  int64_t rows = (tb + mr - 1) / mr * mr;
  for (int r = mr - 1; r >= lo; r--) {
    int64_t n = (tb + r - 1) / r * r;
    if (n < rows) best = r, rows = n;
  }
  return best;
}

static Plan plan_of(const Conv *C) {
  Plan P;
  P.T = wino_of(C->wm);
  int64_t m = P.T.m, a2 = P.T.a * P.T.a;
  P.th = (C->oh + m - 1) / m;
  P.tw = (C->ow + m - 1) / m;
  P.hq = P.th * m + 2;
  P.pwd = P.tw + 1;
  P.rl = m * P.pwd;
  P.plane = (P.hq * P.rl + 15) / 16 * 16;
  /* about TILES tiles of F(4x4) per block, as many points of V (36 per
  ** tile and channel; F(2x2): 72 tiles of 16), in whole tile rows,
  ** rounded, the blocks of one image even. ResNet's 14x14 layers by
  ** F(2x2) (a grid of 7 x 7 tiles) are then one block, not blocks of 28
  ** and 21 tiles: U (4 MB at 256 channels, from memory in a model) is
  ** read once per call, not once per block; at 2 threads each thread
  ** takes half of the panels (reading half of U) and transforms the block
  ** itself, where each took a block and read all of U. ResNet-50 on a Zen
  ** 5, the five such layers' fastest calls summed, in the model: 2
  ** threads 2,557 and 2,305 -> 2,056 and 1,999 us, 1 thread 3,510 and
  ** 3,539 -> 3,100 and 3,402. The same for the 28x28 layers by F(4x4)
  ** (one block of 49 tiles, 36 points) was slower at 2 threads: 295-335
  ** -> 329-388 us each. */
  int64_t rb = (TILES * 36 / a2 + P.tw / 2) / P.tw;
  if (rb < 1) rb = 1;
  if (rb > P.th) rb = P.th;
  P.nrb = (P.th + rb - 1) / rb;
  P.rb = (P.th + P.nrb - 1) / P.nrb;
  P.tb = P.rb * P.tw;
  /* V's and M's rows: those the micro-kernels read (the block's tiles up
  ** to a multiple of mr, on every ISA), up to a multiple of 16 (the
  ** transform's vectors) */
  int64_t rows = P.tb;
  for (int i = 0; i < lower_isa_count(); i++) {
    int64_t mr = pick_mr(i, P.tb), r = (P.tb + mr - 1) / mr * mr;
    if (r > rows) rows = r;
  }
  P.tbp = (rows + 15) / 16 * 16;
  P.kp = (C->oc + PW - 1) / PW;
  P.vblk = a2 * C->c * P.tbp;
  int64_t in = P.plane + a2 * P.tbp, out = a2 * P.tbp * PW;
  P.slot = ((in > out ? in : out) + 15) / 16 * 16;
  return P;
}


/* The shape rule, measured on ResNet's and other 3x3 layers
** (docs/design.md). On its own (U hot in the caches) F(4x4) is the faster
** of the two wherever Winograd beats the im2col GEMM, and its larger
** rounding (about 1e-5 of the largest output per layer) leaves whole
** networks within 1e-6 of PyTorch; where its U streams from memory, F(2x2)
** may read enough less to win (below). A block reuses each element of U
** (36 x C x K floats, 4x the filter) for its own tiles only, so the image
** needs more tiles as U grows: at least 9 4x4 tiles per 256 x 256 filter
** elements (14x14 at 256 channels, 28x28 at 512; a 7x7 image of 512
** channels keeps the im2col GEMM, one of 64 channels takes Winograd). Fewer
** than 16 input or output channels keep the im2col GEMM (the transforms
** cost more than the products they save). RLY_WINOGRAD in the environment
** (a test and measurement hook) overrides the rule: 2 or 4 gives every
** problem the schedule may take F(2x2) or F(4x4), whatever its shape; 0
** none. */
bool wino_applies(Conv *C) {
  if (C->kh != 3 || C->kw != 3 || C->sh != 1 || C->sw != 1 || C->dh != 1 || C->dw != 1 || C->groups != 1 ||
      !C->const_filter)
    return false;
  const char *force = getenv("RLY_WINOGRAD");
  if (force && (strcmp(force, "0") == 0 || strcmp(force, "2") == 0 || strcmp(force, "4") == 0)) {
    C->wm = force[0] - '0';
    return C->wm > 0;
  }
  int64_t t4 = (C->oh + 3) / 4 * ((C->ow + 3) / 4), t2 = (C->oh + 1) / 2 * ((C->ow + 1) / 2);
  double ck = (double)C->c * (double)C->oc;
  if (C->c < 16 || C->oc < 16 || (double)t4 * 65536 < 9.0 * ck) return false;
  /* F(4x4) or F(2x2): a U of more than U_STREAM bytes is read from memory
  ** at each call in a model of many such layers (ResNet-50's weights are
  ** 144 MB with U(4x4)), so it costs its products, 2 alpha^2 flops per
  ** tile and element of C x K, plus its bytes, 4 alpha^2, at R flops a
  ** byte (a core's FMA peak over what it reads from memory: about 7 on
  ** Zen 5). ResNet-50's 14x14 layers (256 channels: 16 4x4 tiles, U 9.4
  ** MB) take F(2x2) that way, its 28x28 and 56x56 ones F(4x4); in the
  ** model at 1 thread F(2x2) ran the five 14x14 layers in 4.5 ms where
  ** F(4x4) took 5.0 to 5.6 (their filters hot in L3, on their own,
  ** F(4x4) was the faster: docs/design.md). */
  enum { U_STREAM = 4 << 20, R = 7 };
  if (36.0 * 4 * ck > U_STREAM && 2.0 * 16 * (double)t2 + 4.0 * 16 * R < 2.0 * 36 * (double)t4 + 4.0 * 36 * R)
    C->wm = 2;
  else C->wm = 4;
  return true;
}

void wino_prepack(const Conv *C, LowerPrepack *p) {
  Wino T = wino_of(C->wm);
  /* B(q = point, l = input channel, j = filter) = U[q][j][l] */
  p->q = T.a * T.a;
  p->k = C->c;
  p->n = C->oc;
  p->b_sq = C->oc * C->c;
  p->b_sk = 1;
  p->b_sj = C->c;
  p->pw = 0;
  p->kc = 0;
  p->wino = C->wm;
}

/* {==== Text ====} */

static void vop(StrBuf *sb, int i, const char *name, GemmVop op, const char *a, const char *b) {
  gemm_put_vop(sb, i, name, op, a, b, NULL);
}

/* `const VT dst = sum_r c[r] * src_r;` over n terms, src_r printed by
** fmt with r (zero coefficients skipped, unit ones without a product, the
** positive terms first). */
static void put_comb(StrBuf *sb, int i, const char *name, int ind, const char *dst, const double *c, int n,
                     const char *fmt) {
  sb_printf(sb, "%*sconst ", ind, "");
  vop(sb, i, name, GV_TYPE, NULL, NULL);
  sb_printf(sb, " %s =", dst);
  bool first = true;
  for (int pass = 0; pass < 2; pass++)
    for (int r = 0; r < n; r++) {
      double v = c[r];
      if (v == 0 || (pass == 0) != (v > 0)) continue;
      double mag = v < 0 ? -v : v;
      if (first) sb_puts(sb, v < 0 ? " -" : " ");
      else sb_puts(sb, v < 0 ? " - " : " + ");
      first = false;
      sb_printf(sb, fmt, r);
      if (mag != 1) sb_printf(sb, " * %.1ff", mag);
    }
  sb_puts(sb, ";\n");
}


/* The vector `const VT dst = LOAD(p);`. */
static void put_load(StrBuf *sb, int i, const char *name, int ind, const char *dst, const char *p) {
  sb_printf(sb, "%*sconst ", ind, "");
  vop(sb, i, name, GV_TYPE, NULL, NULL);
  sb_printf(sb, " %s = ", dst);
  vop(sb, i, name, GV_LOAD, p, NULL);
  sb_puts(sb, ";\n");
}

/* `const int64_t r0, r1, tb` of block bk (tile rows [r0, r1), tb tiles). */
static void put_rows(StrBuf *sb, int ind, const Plan *P) {
  long long rb = P->rb, th = P->th;
  sb_printf(sb, "%*sconst int64_t r0 = bk * %lld, r1 = r0 + %lld < %lld ? r0 + %lld : %lld, tb = (r1 - r0) * %lld;\n",
            ind, "", rb, rb, th, rb, th, (long long)P->tw);
}

/* Phase 1: channels [c0, c1) of image q, blocks [b0, b1): each plane
** copied with zero borders into the thread's scratch ws, then per block
** of tile rows its windows gathered into D and B^T d B into the block's V
** (vq: the V of block b0, the next blocks' after it). */
static void put_input(StrBuf *sb, int i, const char *name, const Conv *C, const Plan *P) {
  int w, mr_isa, nr;
  gemm_isa_tile(i, &w, &mr_isa, &nr);
  const Wino *T = &P->T;
  int m = T->m, a = T->a, a2 = a * a;
  long long c = C->c, tw = P->tw, rl = P->rl;
  if (w == 16 && (m == 2 || m == 4))
    sb_printf(sb,
              "/* lanes [lo, hi) of 16 */\n"
              "static inline __mmask16 %s_lanes(int64_t lo, int64_t hi) {\n"
              "  lo = lo < 0 ? 0 : lo;\n  hi = hi > 16 ? 16 : hi;\n"
              "  return hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));\n}\n",
              name);
  lower_put_isa_attrs(sb, i);
  sb_printf(sb,
            "static void %s_in_%s(const float *restrict xin, float *restrict vq, float *restrict ws, int64_t q, "
            "int64_t c0, int64_t c1, int64_t b0, int64_t b1) {\n",
            name, lower_isa_suffix(i));
  sb_printf(sb, "  enum { MR = %d, TBP = %lld };\n", pick_mr(i, P->tb), (long long)P->tbp);
  sb_printf(sb, "  float *restrict xp = ws, *restrict d = ws + %lld;\n", (long long)P->plane);
  /* The borders stay zero: every channel's copy writes the same floats.
  ** D's lanes past a block's tiles are read (V's rows past them feed the
  ** micro-kernel's dropped rows): zero, or an earlier block's. */
  sb_printf(sb, "  memset(xp, 0, %lld);\n", (long long)P->plane * 4);
  sb_printf(sb, "  memset(d, 0, %lld);\n", (long long)a2 * P->tbp * 4);
  /* AVX-512 with m = 2 or 4: m vectors of a row's 16 m padded columns
  ** (masked loads: the borders read as zeros), split by phase with
  ** permutes; other m: a masked gather of stride m per phase (gathers
  ** are slow on AMD's cores: ResNet's 56x56 layers spent 40% of their
  ** time here) */
  bool split = w == 16 && (m == 2 || m == 4);
  if (w == 16 && !split) {
    sb_puts(sb, "  const __m512i gi = _mm512_setr_epi32(");
    for (int l = 0; l < 16; l++) sb_printf(sb, "%s%d", l ? ", " : "", l * m);
    sb_puts(sb, ");\n");
  }
  if (split) {
    sb_puts(sb, "  const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);\n"
                "  const __m512i od = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);\n");
  }
  sb_puts(sb, "  for (int64_t ci = c0; ci < c1; ci++) {\n");
  sb_printf(sb, "    const float *restrict sx = xin + (q * %lld + ci) * %lld;\n", c, (long long)(C->h * C->w));
  /* padded column X = iw + PL goes to phase X mod m, column X / m */
  /* the input rows blocks [b0, b1) read: padded rows b0 rb m to
  ** (rb1 - 1) m + a - 1 */
  sb_printf(sb, "    const int64_t rb1 = b1 * %lld < %lld ? b1 * %lld : %lld;\n", (long long)P->rb, (long long)P->th,
            (long long)P->rb, (long long)P->th);
  sb_printf(sb, "    const int64_t ih0 = b0 * %lld - %lld > 0 ? b0 * %lld - %lld : 0;\n", (long long)(P->rb * m),
            (long long)C->pt, (long long)(P->rb * m), (long long)C->pt);
  sb_printf(sb, "    const int64_t ih1 = (rb1 - 1) * %d + %lld < %lld ? (rb1 - 1) * %d + %lld : %lld;\n", m,
            (long long)(a - C->pt), (long long)C->h, m, (long long)(a - C->pt), (long long)C->h);
  sb_puts(sb, "    for (int64_t ih = ih0; ih < ih1; ih++) {\n");
  sb_printf(sb, "      float *restrict dr = xp + (ih + %lld) * %lld;\n", (long long)C->pt, rl);
  sb_printf(sb, "      const float *restrict sr = sx + ih * %lld;\n", (long long)C->w);
  if (split) {
    /* columns j .. j + 15 of every phase: padded columns j m .. j m + 16 m
    ** - 1, input columns from s = j m - PL */
    long long pl = C->pl, jmax = 0;
    for (long long f = 0; f < m; f++) {
      long long j1 = (C->w - 1 + pl - f) / m;
      if (C->w - 1 + pl - f >= 0 && j1 > jmax) jmax = j1;
    }
    sb_printf(sb, "      for (int64_t j = 0; j <= %lld; j += 16) {\n", jmax);
    sb_printf(sb, "        const int64_t s = j * %d - %lld;\n", m, pl);
    for (int k = 0; k < m; k++)
      sb_printf(sb, "        const __m512 l%d = _mm512_maskz_loadu_ps(%s_lanes(-(s + %d), %lld - (s + %d)), sr + (s + %d));\n",
                k, name, 16 * k, (long long)C->w, 16 * k, 16 * k);
    if (m == 2) {
      sb_puts(sb, "        const __m512 p0 = _mm512_permutex2var_ps(l0, ev, l1), p1 = _mm512_permutex2var_ps(l0, od, l1);\n");
    } else {
      sb_puts(sb, "        const __m512 t0 = _mm512_permutex2var_ps(l0, ev, l1), t1 = _mm512_permutex2var_ps(l0, od, l1);\n"
                  "        const __m512 t2 = _mm512_permutex2var_ps(l2, ev, l3), t3 = _mm512_permutex2var_ps(l2, od, l3);\n"
                  "        const __m512 p0 = _mm512_permutex2var_ps(t0, ev, t2), p2 = _mm512_permutex2var_ps(t0, od, t2);\n"
                  "        const __m512 p1 = _mm512_permutex2var_ps(t1, ev, t3), p3 = _mm512_permutex2var_ps(t1, od, t3);\n");
    }
    /* a phase of no input column (narrow planes) is not stored */
    sb_puts(sb, m == 2 ? "        (void)p0, (void)p1;\n" : "        (void)p0, (void)p1, (void)p2, (void)p3;\n");
    for (long long f = 0; f < m; f++) {
      long long j0 = pl - f > 0 ? (pl - f + m - 1) / m : 0, j1 = (C->w - 1 + pl - f) / m;
      if (C->w - 1 + pl - f < 0 || j0 > j1) continue;
      sb_printf(sb, "        _mm512_mask_storeu_ps(dr + %lld + j, %s_lanes(%lld - j, %lld - j), p%lld);\n",
                f * (long long)P->pwd, name, j0, j1 + 1, f);
    }
    sb_puts(sb, "      }\n");
  }
  for (long long f = 0; f < m && !split; f++) {
    /* input columns iw = j * m + f - PL, j in [j0, j1] */
    long long pl = C->pl, j0 = pl - f > 0 ? (pl - f + m - 1) / m : 0, j1 = (C->w - 1 + pl - f) / m;
    if (C->w - 1 + pl - f < 0 || j0 > j1) continue;
    if (w == 16) {
      /* AVX-512: 16 columns at a time, a masked gather of stride m */
      sb_printf(sb, "      for (int64_t j = %lld; j <= %lld; j += 16) {\n", j0, j1);
      sb_printf(sb, "        const __mmask16 km = %lld - j >= 16 ? 0xffff : (__mmask16)((1u << (%lld - j)) - 1);\n",
                j1 + 1, j1 + 1);
      sb_printf(sb,
                "        _mm512_mask_storeu_ps(dr + %lld + j, km, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), km, "
                "gi, sr + j * %d - %lld, 4));\n",
                f * (long long)P->pwd, m, pl - f);
      sb_puts(sb, "      }\n");
    } else {
      sb_printf(sb, "      for (int64_t j = %lld; j <= %lld; j++) dr[%lld + j] = sr[j * %d - %lld];\n", j0, j1,
                f * (long long)P->pwd, m, pl - f);
    }
  }
  sb_puts(sb, "    }\n");
  sb_puts(sb, "    for (int64_t bk = b0; bk < b1; bk++) {\n");
  put_rows(sb, 6, P);
  sb_puts(sb, "      const int64_t tr = (tb + MR - 1) / MR * MR;\n");
  sb_printf(sb, "      float *restrict vb = vq + (bk - b0) * %lld;\n", (long long)P->vblk);
  /* window element (r, e) of the tiles of a row: consecutive floats of
  ** phase e mod m of padded row th * m + r, from column e / m on */
  sb_puts(sb, "      for (int64_t th = r0; th < r1; th++) {\n");
  sb_printf(sb, "        const float *restrict s = xp + th * %lld;\n", m * rl);
  sb_printf(sb, "        float *restrict dt = d + (th - r0) * %lld;\n", tw);
  for (int r = 0; r < a; r++)
    for (int e = 0; e < a; e++)
      sb_printf(sb, "        memcpy(dt + %d * TBP, s + %lld, %lld);\n", r * a + e,
                (long long)(r * rl + e % m * P->pwd + e / m), tw * 4);
  sb_puts(sb, "      }\n");
  /* B^T d B on W tiles at a time, up to the rows the micro-kernel reads */
  sb_printf(sb, "      for (int64_t t = 0; t < tr; t += %d) {\n", w);
  /* stage 1: e_i_u = sum_r BT[i][r] d[r][u], one column u at a time */
  for (int uu = 0; uu < a; uu++) {
    for (int r = 0; r < a; r++) {
      char p[64], dst[32];
      snprintf(p, sizeof p, "d + %d * TBP + t", r * a + uu);
      snprintf(dst, sizeof dst, "d%d_%d", r, uu);
      put_load(sb, i, name, 8, dst, p);
    }
    for (int ii = 0; ii < a; ii++) {
      char dst[32], fmt[32];
      snprintf(dst, sizeof dst, "e%d_%d", ii, uu);
      snprintf(fmt, sizeof fmt, "d%%d_%d", uu);
      put_comb(sb, i, name, 8, dst, T->bt + ii * a, a, fmt);
    }
  }
  /* stage 2: v_i_j = sum_u BT[j][u] e_i_u, stored to V[i * a + j][ci] */
  for (int ii = 0; ii < a; ii++)
    for (int jj = 0; jj < a; jj++) {
      char dst[32], fmt[32], p[80];
      snprintf(dst, sizeof dst, "v%d_%d", ii, jj);
      snprintf(fmt, sizeof fmt, "e%d_%%d", ii);
      put_comb(sb, i, name, 8, dst, T->bt + jj * a, a, fmt);
      snprintf(p, sizeof p, "vb + (%lld + ci) * TBP + t", (long long)(ii * a + jj) * c);
      sb_puts(sb, "        ");
      vop(sb, i, name, GV_STORE, p, dst);
      sb_puts(sb, ";\n");
    }
  sb_puts(sb, "      }\n    }\n  }\n}\n");
}

/* Phase 2: block bk of tile rows of image q, filters [k0, k1) (one
** 32-wide panel of U): the alpha^2 GEMMs from the block's V (vb) into M
** (the thread's scratch mb, float[alpha^2][TBP][32]), A^T m A scattered
** into the output planes, the epilogue on the block's pixels. */
static void put_block(StrBuf *sb, int i, const char *name, const Conv *C, const Plan *P) {
  int w, mr_isa, nr;
  gemm_isa_tile(i, &w, &mr_isa, &nr);
  int mr = pick_mr(i, P->tb);
  const Wino *T = &P->T;
  int m = T->m, a = T->a, a2 = a * a;
  long long c = C->c, k = C->oc, tw = P->tw, tbp = P->tbp, np = C->np, ow = C->ow, oh = C->oh;
  lower_put_isa_attrs(sb, i);
  sb_printf(sb,
            "static void %s_%s(rlyrt_object *const *args, float *restrict o, const float *restrict vb, "
            "float *restrict mb, int64_t q, int64_t bk, int64_t k0, int64_t k1) {\n",
            name, lower_isa_suffix(i));
  sb_printf(sb, "  enum { MR = %d, NR = %d, KC = %d, PW = %d, TBP = %lld };\n", mr, nr, KC, PW, tbp);
  sb_printf(sb, "  const float *restrict u = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", C->pw);
  if (C->epilogue) ew_put_pointers(sb, &C->ew, 2);
  put_rows(sb, 2, P);
  sb_printf(sb, "  float *restrict cq = o + q * %lld;\n", k * np);
  sb_puts(sb, "  const int64_t mc = tb, nc = k1 - k0;\n");
  /* a ragged last panel: M's columns past it are read (lanes dropped) */
  if (k % PW) sb_printf(sb, "  if (nc < PW) memset(mb, 0, %lld);\n", (long long)a2 * tbp * PW * 4);
  /* 1. the GEMMs M[p] = V[p]^T U[p], tiles as A (rows TBP apart per input
  ** channel), U's panel as B */
  sb_printf(sb, "  for (int64_t pt = 0; pt < %d; pt++) {\n", a2);
  sb_printf(sb, "    const float *restrict up = u + k0 / PW * %lld + pt * %lld, *restrict vp = vb + pt * %lld;\n",
            a2 * c * PW, c * PW, c * tbp);
  sb_printf(sb, "    float *restrict mp = mb + pt * %lld;\n", tbp * PW);
  sb_printf(sb, "    for (int64_t pc = 0; pc < %lld; pc += KC) {\n", c);
  sb_printf(sb, "      const int64_t kc = %lld - pc < KC ? %lld - pc : KC;\n", c, c);
  sb_puts(sb, "      for (int64_t jr = 0; jr < nc; jr += NR)\n");
  sb_puts(sb, "        for (int64_t ir = 0; ir < mc; ir += MR) {\n");
  sb_puts(sb, "          const float *restrict pa = vp + pc * TBP + ir, *restrict pb = up + pc * PW + jr;\n");
  sb_puts(sb, "          float *restrict ct = mp + ir * PW + jr;\n");
  gemm_put_tile_rows(sb, i, name, 10, mr, "TBP", "PW", 0, PW, NULL, false, NULL);
  sb_puts(sb, "        }\n    }\n  }\n");
  /* 2. A^T m A on W filters at a time, scattered into the planes */
  sb_puts(sb, "  for (int64_t t = 0; t < tb; t++) {\n");
  sb_printf(sb, "    const int64_t y0 = (r0 + t / %lld) * %d, x0 = t %% %lld * %d;\n", tw, m, tw, m);
  sb_printf(sb, "    const int64_t hn = %lld - y0 < %d ? %lld - y0 : %d, wn = %lld - x0 < %d ? %lld - x0 : %d;\n", oh, m,
            oh, m, ow, m, ow, m);
  sb_printf(sb, "    float *restrict ot = cq + k0 * %lld + y0 * %lld + x0;\n", np, ow);
  sb_printf(sb, "    for (int64_t kk = 0; kk < nc; kk += %d) {\n", w);
  sb_printf(sb, "      float y[%d][%d];\n", m * m, w);
  for (int uu = 0; uu < a; uu++) {
    for (int r = 0; r < a; r++) {
      char p[80], dst[32];
      snprintf(p, sizeof p, "mb + (%lld + t) * PW + kk", (long long)(r * a + uu) * tbp);
      snprintf(dst, sizeof dst, "m%d_%d", r, uu);
      put_load(sb, i, name, 6, dst, p);
    }
    for (int ii = 0; ii < m; ii++) {
      char dst[32], fmt[32];
      snprintf(dst, sizeof dst, "f%d_%d", ii, uu);
      snprintf(fmt, sizeof fmt, "m%%d_%d", uu);
      put_comb(sb, i, name, 6, dst, T->at + ii * a, a, fmt);
    }
  }
  for (int ii = 0; ii < m; ii++)
    for (int jj = 0; jj < m; jj++) {
      char dst[32], fmt[32];
      snprintf(dst, sizeof dst, "y%d_%d", ii, jj);
      snprintf(fmt, sizeof fmt, "f%d_%%d", ii);
      put_comb(sb, i, name, 6, dst, T->at + jj * a, a, fmt);
    }
  sb_printf(sb, "      const int64_t kn = nc - kk < %d ? nc - kk : %d;\n", w, w);
  if (w == 16 && m == 4) {
    /* AVX-512, a whole tile and 16 filters: per row of the tile, its 4
    ** vectors transposed in each 128-bit lane (filters 4L to 4L + 3), each
    ** filter's 4 outputs stored at once */
    sb_puts(sb, "      if (hn == 4 && wn == 4 && kn == 16) {\n");
    for (int ii = 0; ii < 4; ii++) {
      sb_puts(sb, "        {\n");
      sb_printf(sb,
                "          const __m512 t0 = _mm512_unpacklo_ps(y%d_0, y%d_1), t1 = _mm512_unpackhi_ps(y%d_0, y%d_1);\n",
                ii, ii, ii, ii);
      sb_printf(sb,
                "          const __m512 t2 = _mm512_unpacklo_ps(y%d_2, y%d_3), t3 = _mm512_unpackhi_ps(y%d_2, y%d_3);\n",
                ii, ii, ii, ii);
      sb_puts(sb, "          const __m512 s0 = _mm512_shuffle_ps(t0, t2, 0x44), s1 = _mm512_shuffle_ps(t0, t2, 0xee);\n");
      sb_puts(sb, "          const __m512 s2 = _mm512_shuffle_ps(t1, t3, 0x44), s3 = _mm512_shuffle_ps(t1, t3, 0xee);\n");
      for (int l = 0; l < 4; l++)
        for (int q = 0; q < 4; q++)
          sb_printf(sb, "          _mm_storeu_ps(ot + (kk + %d) * %lld + %lld, _mm512_extractf32x4_ps(s%d, %d));\n",
                    4 * l + q, np, (long long)ii * ow, q, l);
      sb_puts(sb, "        }\n");
    }
    sb_puts(sb, "        continue;\n      }\n");
  }
  for (int ii = 0; ii < m; ii++)
    for (int jj = 0; jj < m; jj++) {
      char p[32], dst[32];
      snprintf(dst, sizeof dst, "y%d_%d", ii, jj);
      snprintf(p, sizeof p, "y[%d]", ii * m + jj);
      sb_puts(sb, "      ");
      vop(sb, i, name, GV_STORE, p, dst);
      sb_puts(sb, ";\n");
    }
  /* a whole tile: its m x m stores unrolled */
  sb_printf(sb, "      if (hn == %d && wn == %d) {\n", m, m);
  sb_puts(sb, "        for (int64_t e = 0; e < kn; e++) {\n");
  sb_printf(sb, "          float *restrict oe = ot + (kk + e) * %lld;\n", np);
  for (int r = 0; r < m; r++) {
    sb_puts(sb, "         ");
    for (int e = 0; e < m; e++) sb_printf(sb, " oe[%lld] = y[%d][e];", (long long)r * ow + e, r * m + e);
    sb_puts(sb, "\n");
  }
  sb_puts(sb, "        }\n      } else {\n");
  sb_puts(sb, "        for (int64_t e = 0; e < kn; e++)\n");
  sb_puts(sb, "          for (int64_t r = 0; r < hn; r++)\n");
  sb_printf(sb, "            for (int64_t s = 0; s < wn; s++) ot[(kk + e) * %lld + r * %lld + s] = y[r * %d + s][e];\n",
            np, ow, m);
  sb_puts(sb, "      }\n");
  sb_puts(sb, "    }\n  }\n");
  if (C->epilogue) {
    char p0[48], p1[80];
    snprintf(p0, sizeof p0, "r0 * %lld", (long long)m * ow);
    snprintf(p1, sizeof p1, "(r1 * %d < %lld ? r1 * %d : %lld) * %lld", m, oh, m, oh, ow);
    sb_puts(sb, "  {\n    float *restrict c = cq;\n");
    gemm_put_epilogue_call(sb, name, &C->ew, 4, "k0", "k1", p0, p1);
    sb_puts(sb, "  }\n");
  }
  sb_puts(sb, "}\n");
}

static void put_ops(StrBuf *sb, const Group *g) {
  bool first = true;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind != GN_CALL) continue;
    sb_printf(sb, "%s%s", first ? "" : ", ", g->nodes[i].op->name);
    first = false;
  }
}

/* The items: with a V per thread, (image, block of tile rows, panel of
** 32 filters), block by block (the slot's V kept for the block it last
** transformed, whose index heads the slot); with V shared, phase 1's
** (image, range of cs input channels) and phase 2's (image, block, panel).
** Each on its slot's scratch. */
static void put_tasks(StrBuf *sb, const char *name, const Conv *C, const Plan *P) {
  long long kp = P->kp, nrb = P->nrb, oc = C->oc;
  sb_printf(sb,
            "typedef struct %s_job {\n  rlyrt_object *const *args;\n  const float *xin;\n  float *o, *v, *ws;\n"
            "  int64_t cs, ncr, q0;\n} %s_job;\n",
            name, name);
  StrBuf fn = {0};
  sb_printf(&fn, "%s_in", name);
  /* V per thread: the slot is [the block's index (16 floats)][V][the plane and D, or M] */
  sb_printf(sb, "static void %s_own_task(void *ctx, int64_t i, int32_t slot) {\n", name);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
  sb_printf(sb, "  rlyrt_object *const *args = J->args;\n  const float *xin = J->xin;\n");
  sb_printf(sb, "  float *o = J->o, *sw = J->ws + slot * %lld, *vb = sw + 16, *ws = vb + %lld, *mb = ws;\n",
            (long long)(16 + P->vblk + P->slot), (long long)P->vblk);
  sb_puts(sb, "  int64_t *have = (int64_t *)sw;\n");
  sb_puts(sb, "  for (int64_t e = i * J->cs; e < (i + 1) * J->cs; e++) {\n");
  sb_printf(sb, "    const int64_t blk = e / %lld, kb = e %% %lld, q = blk / %lld, bk = blk %% %lld;\n", kp, kp, nrb, nrb);
  sb_puts(sb, "    if (*have != blk) {\n");
  sb_printf(sb, "      const int64_t c0 = 0, c1 = %lld, b0 = bk, b1 = bk + 1;\n", (long long)C->c);
  lower_put_isa_call(sb, sb_str(&fn), "xin, vb, ws, q, c0, c1, b0, b1");
  sb_puts(sb, "      *have = blk;\n    }\n");
  sb_printf(sb, "    const int64_t k0 = kb * %d, k1 = k0 + %d < %lld ? k0 + %d : %lld;\n", PW, PW, oc, PW, oc);
  lower_put_isa_call(sb, name, "args, o, vb, mb, q, bk, k0, k1");
  sb_puts(sb, "  }\n}\n");
  /* V shared */
  sb_printf(sb, "static void %s_in_task(void *ctx, int64_t i, int32_t slot) {\n", name);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
  sb_printf(sb, "  const float *xin = J->xin;\n  float *ws = J->ws + slot * %lld;\n", (long long)P->slot);
  sb_printf(sb, "  const int64_t q = J->q0 + i / J->ncr, c0 = i %% J->ncr * J->cs, c1 = c0 + J->cs < %lld ? c0 + J->cs : %lld;\n",
            (long long)C->c, (long long)C->c);
  sb_printf(sb, "  float *vq = J->v + i / J->ncr * %lld;\n", (long long)(P->nrb * P->vblk));
  char in_args[64];
  snprintf(in_args, sizeof in_args, "xin, vq, ws, q, c0, c1, 0, %lld", nrb);
  lower_put_isa_call(sb, sb_str(&fn), in_args);
  sb_puts(sb, "}\n");
  sb_free(&fn);
  sb_printf(sb, "static void %s_task(void *ctx, int64_t i, int32_t slot) {\n", name);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
  sb_printf(sb, "  rlyrt_object *const *args = J->args;\n  float *o = J->o, *mb = J->ws + slot * %lld;\n",
            (long long)P->slot);
  sb_printf(sb, "  const int64_t kb = i %% %lld, bk = i / %lld %% %lld, q = J->q0 + i / %lld;\n", kp, kp, nrb, kp * nrb);
  sb_printf(sb, "  const float *vb = J->v + i / %lld * %lld + bk * %lld;\n", kp * nrb, (long long)(P->nrb * P->vblk),
            (long long)P->vblk);
  sb_printf(sb, "  const int64_t k0 = kb * %d, k1 = k0 + %d < %lld ? k0 + %d : %lld;\n", PW, PW, oc, PW, oc);
  lower_put_isa_call(sb, name, "args, o, vb, mb, q, bk, k0, k1");
  sb_puts(sb, "}\n");
}

void wino_put_kernel(StrBuf *sb, const char *name, const Conv *C, const char *where) {
  Plan P = plan_of(C);
  const Group *g = C->g;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  long long m = P.T.m, nimg = C->n, c = C->c, k = C->oc;
  sb_puts(sb, "/* ");
  put_ops(sb, g);
  sb_printf(sb, ": conv2d Winograd F(%lldx%lld 3x3) float32 (filter transformed at build time), %lld x [%lld x %lld] x "
                "%lld, %lld x %lld tiles in blocks of %lld rows, pad %lld %lld %lld %lld%s */\n",
            m, m, nimg, k, (long long)C->np, c, (long long)P.th, (long long)P.tw, (long long)P.rb, (long long)C->pt,
            (long long)C->pl, (long long)C->pb, (long long)C->pr, C->epilogue ? ", elementwise epilogue" : "");
  lower_put_isa_preamble(sb);
  lower_put_threads_preamble(sb);
  gemm_put_v4(sb, name, true);
  if (C->epilogue) gemm_put_epilogue_fn(sb, name, &C->ew, C->l_sq, C->l_si, C->l_sj, C->np);
  for (int i = 0; i < lower_isa_count(); i++) {
    lower_put_isa_if(sb, i);
    put_input(sb, i, name, C, &P);
    put_block(sb, i, name, C, &P);
    sb_puts(sb, "#endif\n");
  }
  put_tasks(sb, name, C, &P);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n", name);
  sb_puts(sb, "  static const int64_t shape[4] = {");
  for (int d = 0; d < 4; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_puts(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 4, "
              "shape, false);\n");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n");
  /* the work counted as the direct convolution's */
  bool par = lower_par_worth(2.0 * (double)C->n * (double)k * (double)C->np * (double)c * 9, LOWER_PAR_MIN_FLOPS);
  sb_puts(sb, par ? "  const int32_t nt = RLYRT_KERNEL_THREADS;\n" : "  const int32_t nt = 1;\n");
  /* V per thread (the items block by block) unless the threads outnumber
  ** the blocks 4 to 1 (RLY_WINO_SHARED=1 at build time, a test hook: when
  ** there are threads): then V shared, of a group of gi images (at most
  ** VCAP floats unless one image needs more), the phases split apart. */
  long long per = P.nrb * P.vblk, gi = VCAP / per, own = 16 + P.vblk + P.slot;
  if (gi < 1) gi = 1;
  if (gi > nimg) gi = nimg;
  long long vall = gi * per;
  const char *hook = getenv("RLY_WINO_SHARED");
  if (hook && strcmp(hook, "1") == 0) sb_puts(sb, "  const int shared = nt > 1;\n");
  else sb_printf(sb, "  const int shared = nt > %lld;\n", 4 * nimg * P.nrb);
  sb_printf(sb, "  const size_t bytes = shared ? %lld + (size_t)nt * %lld : (size_t)nt * %lld;\n", vall * 4,
            (long long)P.slot * 4, own * 4);
  sb_puts(sb, "  float *v = (float *)rlyrt_scratch_alloc(bytes);\n");
  sb_puts(sb, "  if (!v) {\n    if (!*out) rlyrt_release(&t->obj);\n    return rlyrt_error_at(RLYRT_E_NOMEM, ");
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ");\n  }\n");
  sb_printf(sb, "  %s_job J = {args, (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data, (float *)t->dl.data, v, v, "
                "0, 0, 0};\n",
            name, C->px);
  /* V per thread: a block's V is read by the core that wrote it (V
  ** crossing cores made ResNet's 56x56 and 28x28 layers no faster on 2
  ** threads than on 1, and at 14x14 the transform took 4x its 1-thread
  ** time); a thread whose items start or end inside a block repeats its
  ** transform */
  sb_puts(sb, "  if (!shared) {\n");
  sb_printf(sb, "    for (int32_t s = 0; s < nt; s++) *(int64_t *)(v + s * %lld) = -1;\n", own);
  sb_printf(sb, "    J.cs = %lld %% nt == 0 ? %lld : 1;\n", nimg * P.nrb, (long long)P.kp);
  sb_printf(sb, "    rlyrt_parallel_for(nt, %lld / J.cs, %s_own_task, &J);\n", nimg * P.nrb * P.kp, name);
  sb_puts(sb, "  } else {\n");
  sb_printf(sb, "    J.ws = v + %lld;\n", vall);
  /* phase 1: about 4 items per thread, ranges of input channels */
  sb_printf(sb, "    J.ncr = (4 * (int64_t)nt + %lld - 1) / %lld;\n", gi, gi);
  sb_printf(sb, "    if (J.ncr > %lld) J.ncr = %lld;\n", c, c);
  sb_printf(sb, "    J.cs = (%lld + J.ncr - 1) / J.ncr;\n", c);
  sb_printf(sb, "    J.ncr = (%lld + J.cs - 1) / J.cs;\n", c);
  sb_printf(sb, "    for (; J.q0 < %lld; J.q0 += %lld) {\n", nimg, gi);
  sb_printf(sb, "      const int64_t gn = %lld - J.q0 < %lld ? %lld - J.q0 : %lld;\n", nimg, gi, nimg, gi);
  sb_printf(sb, "      rlyrt_parallel_for(nt, gn * J.ncr, %s_in_task, &J);\n", name);
  sb_printf(sb, "      rlyrt_parallel_for(nt, gn * %lld, %s_task, &J);\n", (long long)(P.nrb * P.kp), name);
  sb_puts(sb, "    }\n  }\n");
  sb_puts(sb, "  rlyrt_scratch_free(v);\n");
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
}
