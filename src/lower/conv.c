/* lower/conv.c: nn.conv2d on float32 (NCHW data, OIHW weight, static
** shapes), with the group's elementwise tail (bias, a folded batch norm's
** scale and shift, relu or clip, a residual add) as an epilogue.
**
** Five schedules (schedules.def), chosen by shape:
** - CONV_DW, depthwise (one input channel per group, any multiplier): per
**   input channel, its plane is copied once into a buffer with zero
**   borders, the columns of each row split by phase (column mod stride),
**   so that the input under W consecutive outputs of one filter tap is W
**   consecutive floats at any stride. Four output rows at a time (four
**   independent accumulators), W outputs of each per vector, every tap
**   unrolled (one broadcast of its weight, a load and an FMA per row); the
**   end of a row as one more vector ending at the row's end (rows longer
**   than a vector), a masked store (shorter ones: AVX-512, AVX2) or a
**   buffer (the portable version's rows under 4); the epilogue runs over
**   the channel's plane while it is in cache. Large planes (112x112) are
**   copied a few rows at a time into a window of rows that stays in L1,
**   as the rows need them, go through the epilogue by rows, and prefetch
**   the next plane into L2; AVX-512's small
**   stride-1 planes whose rows are not a multiple of 16 (7x7 to 28x28) are
**   computed flat, 16 pixels per vector across rows, each tap a masked load
**   of the input in place (no copy). DW_* (put_dw) says where, and what
**   each measured.
** - CONV_1X1, 1x1 without padding: per batch and group, the GEMM
**   C[oc, pixel] = W[oc, ci] X[ci, pixel], whose B operand is the input
**   itself (rows of H*W pixels); at a stride, a compact copy of the pixels
**   under the outputs (OH x OW planes, made first, split by rows over the
**   threads), which the GEMM then reads as a 1x1 at stride 1 (ResNet's
**   downsamples: no packing of B, 3% to 7% faster alone).
** - CONV_WINO, 3x3 at stride and dilation 1, one group, a constant filter,
**   images with enough tiles: Winograd F(4x4, 3x3) (or F(2x2, 3x3))
**   (lower/winograd.c, on the problem analyse fills: lower/conv.h; the
**   filter is transformed and packed at build time).
** - CONV_DIRECT, one group of at most 4 input channels whose output rows
**   are a multiple of 16 (a network's stem): per block of output rows, the
**   input rows they read copied by column phase (the depthwise kernel's
**   layout), then tiles of a whole row's vectors by a few filters, each
**   tap's input vectors loaded once for the tile's filters, the filter
**   read as it is (put_direct).
** - CONV_IM2COL, the rest: the same GEMM over the reduction (ci, kh, kw),
**   B being the im2col matrix, never materialized: with padding or a
**   stride, the input is first copied into the depthwise kernel's layout
**   (zero borders, rows split by phase; only the rows and column phases
**   that some tap reads: a padded 1x1 at stride 2 copies a quarter); the
**   packing of B's KC x NC block (the GEMM's, lower/gemm.c) then copies,
**   for each reduction row, runs of consecutive pixels of one output row
**   (consecutive floats there at any stride) from offsets computed once
**   per NC block.
** Both GEMMs are gemm.c's: the same cache blocks and MR x NR micro-kernel
** (gemm_put_tile, one version per vector ISA), the filter as A (broadcast)
** and the pixels as B (vectors), so that C is the NCHW result in place and
** a tile's rows are output channels; the epilogue (gemm_put_epilogue_fn)
** runs on each tile after the last KC block. A constant filter is packed
** at build time (lower_loops_prepacked, conv_lower_prepacked): PA = 12
** rows (a multiple of every MR) per panel over the whole reduction,
** zero-padded, float[groups][ceil(M / 12)][K][12]; the micro-kernel reads
** its MR rows at their offset in the panel. Where 12 rows would pad the
** filters by a third (16 filters), panels of PA = 8 and tiles of 8
** filters (AVX-512) or 4 (AVX2, portable) instead (Conv.pa).
**
** Tiles of pixel rows (Conv.rows, put_gemm_rows). NR pixels by MR filters
** (AVX-512: 32 by 12) pad small images badly: 49 pixels (7x7) compute 64,
** 196 compute 224. Those GEMMs instead swap the roles: tiles of MRP = 7
** pixels (A, broadcast; ResNet's and MobileNetV2's rows are 7 times a
** power of 2) by NR filters (B, vectors), the filter packed in PB = 16
** wide panels, each KC block's panels together (one run of memory per
** block: the filter streams from memory), float[groups][ceil(K /
** KC)][ceil(M / 32) * 2][kcb][16] (kcb = KC but in a shorter last block;
** a tile reads its NR columns at their offset in a panel, AVX-512's 32
** from two panels), A's panels packed per KC block from the input
** (a run of 7 pixels of one output row: one copy of 7 floats). The tiles
** accumulate C transposed ([pixel][filter]) in per-thread scratch; after
** the last KC block each panel of filters is copied into C and through
** the epilogue. That copy and the packing cost about 100 steps of the
** reduction per output, so analyse takes these tiles where they pad less
** by more than that (ResNet's and MobileNetV2's 7x7 and 14x14 layers
** with K of several hundred or more; the large images pad little either
** way); RLY_CONV_ROWS=1 forces them (tests).
**
** The outer loops (batches, groups, NC blocks of pixels) go over
** independent blocks of the result; with threads, blocks of pixels (of
** 256 or more, up to 4 per thread) and then of filters (to make about 4
** parts per thread; multiples of the tiles' sides) are the parts of
** rlyrt_parallel_for (NAME_task); where their count is not a multiple of
** the threads, put_balance looks for a split that loads the slowest
** thread less. Without more, every block of filters
** would pack the pixels of its block of pixels itself, and small images
** (one block of pixels, 8 of filters) pack them 8 times: where 3 or more
** (SP_MIN_SHARERS) blocks of filters split a block of pixels, a first
** rlyrt_parallel_for
** (NAME_pack_item: parts of the input channels of each batch and group)
** packs every pixel once over the whole reduction into shared scratch,
** sp[panel][K][width] (width NR_MAX pixels, or 7 for tiles of pixel rows:
** the layout of a filter packed at build time, each ISA reading its
** columns at their offset; the per-thread packing of B uses the same
** NR_MAX-wide panels), copying the zero-bordered planes of its channels
** first (only its own reduction rows read them); the GEMM parts then read
** panel + pc * width there and pack nothing (SP_MAX_BYTES bounds that
** scratch; large images split by pixels only, which packs nothing twice).
** Otherwise the zero-bordered copy (Conv.copied) is split by rows over the
** threads (NAME_copy_item) before the GEMM parts. One thread runs the
** loops as they are (the copy, then each block packing its own pixels).
** Each output's sum runs over the reduction in the same order whatever
** the blocks, and packing moves floats only, so the bits do not depend on
** the thread count or the tile shape's edges. Accumulation is in float32 (the
** reference kernel accumulates in double): results differ by rounding
** only, and are the same on every run. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lower/conv.h"

enum { KC = 256, MC = 120, NC = 1024, NR_MAX = 32 }; /* gemm.c's blocks (MC: a multiple of 8 and 12) */
/* Tiles of pixel rows (Conv.rows): MRP pixels by NR filters, in blocks of
** NCP pixels and MCP filters; the filter packed in PB-wide panels, its
** filters padded to (and split between threads at) multiples of PG, the
** widest tile's NR (AVX-512's 32: two panels). Panels of 32 made AVX2's
** tiles of 16 read half of each 128-byte row: the filter block in use
** (16 KB) in half of L1's sets, evicted by the pixels at each tile. By 16,
** ResNet-50's GEMMs of these tiles on a Zen 3 ran 3-10% faster (1 thread,
** fastest calls; its 7x7 3x3s 3150 -> 2830 us). */
enum { MRP = 7, NCP = 7 * 64, MCP = 128, PB = 16, PG = 32 };

/* The direct schedule (put_direct) takes convolutions of one group with
** at most DIRECT_CIN_MAX input channels, DIRECT_PARTS blocks of output
** rows per image. */
enum { DIRECT_CIN_MAX = 4, DIRECT_PARTS = 8 };

/* The index of the ISA version of that name suffix (gemm.c's table). */
static int isa_named(const char *suffix) {
  for (int i = 0; i < lower_isa_count(); i++)
    if (strcmp(lower_isa_suffix(i), suffix) == 0) return i;
  return -1;
}

/* by ConvKind (CK_WINO names itself: winograd.c) */
static const char *const kind_names[] = {"depthwise conv2d", "conv2d 1x1 GEMM", "conv2d im2col GEMM", "conv2d Winograd",
                                          "conv2d direct"};

/* {==== The problem ====} */

static bool is_f32(const Type *t) {
  DType d = t->u.tensor.dtype;
  return d.code == DT_FLOAT && d.bits == 32 && d.lanes == 1;
}

static const AttrValue *attr(const Attrs *a, const char *field) {
  if (!a || !a->cls) return NULL;
  int i = attrs_class_field(a->cls, field, strlen(field));
  return i < 0 ? NULL : a->values[i];
}

/* An integer array attribute (a single integer: one item): its count, up
** to max items stored; -1 when absent, None or not integers. */
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

/* Whether a string attribute is one of s1, s2 (absent: counts as ""). */
static bool attr_is(const Attrs *a, const char *field, const char *s1, const char *s2) {
  const AttrValue *v = attr(a, field);
  if (!v) return strcmp(s1, "") == 0 || strcmp(s2, "") == 0;
  if (v->kind != AV_STR) return false;
  size_t n = v->u.str.len;
  return (strlen(s1) == n && memcmp(v->u.str.s, s1, n) == 0) || (strlen(s2) == n && memcmp(v->u.str.s, s2, n) == 0);
}

/* Two values (height, width) of an attribute given as 1 or 2. */
static bool attr_pair(const Attrs *a, const char *field, int64_t *h, int64_t *w) {
  int64_t v[2];
  int n = attr_ints(a, field, v, 2);
  if (n == 1) *h = *w = v[0];
  else if (n == 2) *h = v[0], *w = v[1];
  else return false;
  return true;
}

/* The strides of leaf k on the view [n, oc, pixel] of the result; false
** when it does not fit it (a broadcast along one spatial axis only). */
static bool leaf_strides(Conv *C, int k, const Type *res) {
  const EwLeaf *f = &C->ew.leaves[k];
  const int64_t *shape = res->u.tensor.shape;
  int64_t stride[4];
  for (int d = 0; d < 4; d++) {
    int j = d - (4 - f->ndim);
    stride[d] = 0;
    if (j < 0) continue;
    if (f->shape[j] != shape[d]) {
      if (f->shape[j] != 1) return false;
      continue;
    }
    stride[d] = 1;
    for (int t = j + 1; t < f->ndim; t++) stride[d] *= f->shape[t];
  }
  C->l_sq[k] = stride[0];
  C->l_si[k] = stride[1];
  C->l_sj[k] = C->ow > 1 ? stride[3] : C->oh > 1 ? stride[2] : 0;
  return C->oh == 1 || stride[2] == C->l_sj[k] * C->ow;
}

/* Whether schedule kind takes the problem. */
static bool applies(Conv *C, int kind) {
  switch (kind) {
  case CK_DW: return C->groups > 1 && C->cg == 1;
  case CK_1X1: return C->kh == 1 && C->kw == 1 && !C->pt && !C->pl && !C->pb && !C->pr;
  case CK_IM2COL: return true;
  case CK_WINO: return wino_applies(C);
  case CK_DIRECT: return C->groups == 1 && C->cg <= DIRECT_CIN_MAX && C->ow % 16 == 0 && C->kh * C->kw > 1;
  default: return false;
  }
}

static int kind_of(const char *id) {
  if (strcmp(id, "CONV_DW") == 0) return CK_DW;
  if (strcmp(id, "CONV_1X1") == 0) return CK_1X1;
  if (strcmp(id, "CONV_IM2COL") == 0) return CK_IM2COL;
  if (strcmp(id, "CONV_WINO") == 0) return CK_WINO;
  if (strcmp(id, "CONV_DIRECT") == 0) return CK_DIRECT;
  return -1;
}

/* Whether tiles of 7 pixels cost less than tiles of nr pixels (analyse
** below says how they are counted); direct: they would read the pixels in
** place, lpack: yet pack them after all (rows_lpack: AVX2), costed like
** the other packs. */
static bool rows_win(const Conv *C, bool direct, int nr, bool lpack) {
  double cols = (double)((C->np + nr - 1) / nr * nr) * (double)((C->m + 11) / 12 * 12);
  double rows = (double)((C->np + MRP - 1) / MRP * MRP) * (double)((C->m + PG - 1) / PG * PG);
  double k = (double)C->k, outs = (double)C->m * (double)C->np;
  if (direct)
    return rows * k + (lpack ? 100 : C->kind == CK_1X1 ? 40 : 50) * outs < cols * k + (C->ow < nr ? 22 : 5) * k * (double)C->np;
  return rows * (k + 100) < 0.95 * cols * k;
}

/* is_const: which parameters are constants of the module (NULL: none is
** known to be), for the schedules that read the filter packed only. */
static bool analyse(const Group *g, int anchor, Conv *C, const bool *is_const) {
  memset(C, 0, sizeof *C);
  C->g = g;
  C->anchor = anchor;
  const GNode *a = &g->nodes[anchor];
  if (a->op->id != OP_CONV2D || a->nargs != 2 || a->args[0] >= 0 || a->args[1] >= 0) return false;
  C->px = -1 - a->args[0];
  C->pw = -1 - a->args[1];
  C->wa = C->pw;
  C->isas = ~0u;
  C->const_filter = is_const && C->pw < g->nparams && is_const[C->pw] && C->px != C->pw;
  const Type *tx = g->fn->u.func.params[C->px]->type, *tw = g->fn->u.func.params[C->pw]->type, *tc = a->call->type;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  if (!lower_static_tensor(tx) || !lower_static_tensor(tw) || !lower_static_tensor(tc) || !lower_static_tensor(res))
    return false;
  if (!is_f32(tx) || !is_f32(tw) || !is_f32(tc) || !is_f32(res)) return false;
  if (tx->u.tensor.ndim != 4 || tw->u.tensor.ndim != 4 || tc->u.tensor.ndim != 4) return false;
  const Attrs *at = a->call->u.call.attrs;
  if (!attr_is(at, "data_layout", "NCHW", "NCHW") || !attr_is(at, "kernel_layout", "OIHW", "OIHW") ||
      !attr_is(at, "out_layout", "", "NCHW"))
    return false;
  int64_t pad[4];
  int np = attr_ints(at, "padding", pad, 4);
  if (np == 1) C->pt = C->pl = C->pb = C->pr = pad[0];
  else if (np == 2) C->pt = C->pb = pad[0], C->pl = C->pr = pad[1];
  else if (np == 4) C->pt = pad[0], C->pl = pad[1], C->pb = pad[2], C->pr = pad[3];
  else return false;
  if (!attr_pair(at, "strides", &C->sh, &C->sw) || !attr_pair(at, "dilation", &C->dh, &C->dw)) return false;
  C->groups = lower_attr_int(at, "groups", 1);
  const int64_t *xs = tx->u.tensor.shape, *ws = tw->u.tensor.shape, *cs = tc->u.tensor.shape;
  C->n = xs[0], C->c = xs[1], C->h = xs[2], C->w = xs[3];
  C->oc = ws[0], C->kh = ws[2], C->kw = ws[3];
  C->oh = cs[2], C->ow = cs[3];
  if (C->sh < 1 || C->sw < 1 || C->dh < 1 || C->dw < 1 || C->pt < 0 || C->pl < 0 || C->pb < 0 || C->pr < 0) return false;
  if (C->groups < 1 || C->c % C->groups || C->oc % C->groups || ws[1] != C->c / C->groups) return false;
  if (cs[0] != C->n || cs[1] != C->oc || C->n < 1 || C->oc < 1 || C->c < 1 || C->oh < 1 || C->ow < 1) return false;
  if (C->oh != (C->h + C->pt + C->pb - C->dh * (C->kh - 1) - 1) / C->sh + 1 ||
      C->ow != (C->w + C->pl + C->pr - C->dw * (C->kw - 1) - 1) / C->sw + 1)
    return false;
  C->cg = C->c / C->groups;
  C->m = C->oc / C->groups;
  C->k = C->cg * C->kh * C->kw;
  C->np = C->oh * C->ow;
  C->hp = C->h + C->pt + C->pb;
  C->wp = C->w + C->pl + C->pr;
  /* int32 offsets into a plane, int64 everywhere else */
  if (C->hp * (C->wp + C->sw) >= INT32_MAX) return false;
  /* The schedule: the first row of the table that takes this anchor. */
  bool found = false;
#define SCHEDULE(ID, ANCHOR, MIN_ROWS, MAX_ROWS, what)                                                             \
  if (!found && (int)OP_##ANCHOR == (int)OP_CONV2D && C->m >= MIN_ROWS && C->m <= MAX_ROWS &&                      \
      applies(C, kind_of(#ID))) {                                                                                  \
    found = true;                                                                                                  \
    C->kind = (ConvKind)kind_of(#ID);                                                                              \
  }
  enum { OP_NONE = -1 };
#include "lower/schedules.def"
#undef SCHEDULE
  if (!found) return false;
  C->copied = C->kind == CK_IM2COL && (C->pt || C->pl || C->pb || C->pr || C->sw > 1);
  if (!C->copied && C->kind != CK_DW && C->kind != CK_DIRECT) C->hp = C->h, C->wp = C->w;
  C->ph = (C->wp + C->sw - 1) / C->sw;
  C->rl = C->sw * C->ph;
  /* Depthwise: each phase of a row a whole number of vectors (16 floats),
  ** so that the taps at the start of a phase load aligned vectors (at
  ** stride 2 two taps in three, at stride 1 one; each load otherwise
  ** crosses a cache line): MobileNetV2's 112x112 stride-2 layer alone
  ** 190 -> 168 us, its stride-1 ones 3% to 7%. */
  if (C->kind == CK_DW) C->ph = (C->ph + 15) / 16 * 16, C->rl = C->sw * C->ph;
  /* A 1x1 at a stride reads a compact copy of the pixels under its
  ** outputs (OH x OW planes: conv_sub), and is then a 1x1 at stride 1. */
  if (C->kind == CK_1X1 && (C->sh > 1 || C->sw > 1)) {
    C->copied = true;
    C->hp = C->oh, C->wp = C->ph = C->rl = C->ow;
  }
  /* The GEMM's tiles: 7 pixels by NR filters, or NR pixels by MR filters
  ** (AVX-512: 32 and 12), by their cost in steps of the reduction (slots
  ** of the tiles, padding included, times K) plus their overheads:
  ** - tiles of 7 pixels that read the input in place (direct: a 1x1 whose
  **   pixels are a multiple of 7, an im2col whose output rows are: no tile
  **   across two rows) pay the transposed copy, about 50 steps per output
  **   (40 for a 1x1, measured: ResNet-50's six 256 -> 1024 1x1s at 14x14,
  **   K = 256, in the model at one thread 3.75 -> 3.49 ms in all by tiles
  **   of 7 pixels, level at two; 50 took the NR x MR tiles by 2%);
  ** - other tiles of 7 pixels pay that and the packing: about 100;
  ** - NR pixels by MR filters pack the pixels, about 22 steps per element
  **   of the im2col matrix (K x pixels) where tiles of 7 pixels could read
  **   in place and output rows are shorter than NR (a panel's pixels in
  **   pieces), 5 where they are longer (whole runs), and count their slots
  **   at 0.95 against the other tiles.
  ** (Measured on ResNet's and MobileNetV2's layers: the 3x3 stride-2
  ** layers at 28x28 read in place, ResNet's stem does not.) The
  ** environment's RLY_CONV_ROWS=1 takes tiles of 7 pixels always, and so
  ** does RLY_CONV_ALT=1 with AVX2's on tiles of NR pixels (avx2_alt; test
  ** hooks). */
  C->pa = 12;
  if (C->kind == CK_1X1 || C->kind == CK_IM2COL) {
    const char *all = getenv("RLY_CONV_ROWS");
    bool direct = (C->kind == CK_1X1 ? C->np % MRP == 0 : C->ow % MRP == 0) &&
                  C->cg * C->hp * C->rl < INT32_MAX; /* int32 offsets of im2col rows */
    C->rows = rows_win(C, direct, NR_MAX, false);
    const char *alt = getenv("RLY_CONV_ALT");
    if ((all && strcmp(all, "1") == 0) || (alt && strcmp(alt, "1") == 0)) C->rows = true;
    /* Direct tiles read 7 consecutive floats of a plane (a 1x1) or of the
    ** zero-bordered copy (an im2col: at offsets offl[l] per reduction row)
    ** per step of the reduction: nothing to pack, and at 2 threads no
    ** packed copy written on one core and read on the other (that pack
    ** cost ResNet-50's 14x14 1x1 convolutions a third of their time). */
    C->direct = C->rows && direct;
    /* A 1x1's tiles of NR pixels read the input's rows in place (but for
    ** a last tile past the end, copied): MobileNetV2's 112x112 and 56x56
    ** layers pack nothing. */
    if (!C->rows && C->kind == CK_1X1) C->direct = true;
    /* Filters in panels of 8 rows (tiles of 8 filters on AVX-512, 4 on
    ** AVX2 and the portable ISA) where 12 would compute a third more rows
    ** (16 filters: 24 rows by 12). Fewer rows per tile load the pixels
    ** more often: 64 filters (72 rows by 12) ran 15% to 50% slower by 8
    ** (ResNet-50 at 56x56). */
    C->pa = (C->m + 7) / 8 * 8 * 4 < (C->m + 11) / 12 * 12 * 3 ? 8 : 12;
  }
  /* The epilogue: every other live node, on the anchor's shape. */
  for (int i = 0; i < g->nnodes; i++)
    if (g->nodes[i].live && i != anchor) C->epilogue = true;
  if (!C->epilogue) return anchor == g->nnodes - 1;
  if (res->u.tensor.ndim != 4) return false;
  for (int d = 0; d < 4; d++)
    if (res->u.tensor.shape[d] != cs[d]) return false;
  if (!ew_analyse(g, anchor, &C->ew)) return false;
  for (int k = 0; k < C->ew.nleaves; k++)
    if (C->ew.leaves[k].param >= 0 && !leaf_strides(C, k, res)) return false;
  return true;
}

/* {==== Text ====} */

static void put_pointers(StrBuf *sb, const Conv *C) {
  /* xin: x is the micro-kernel's broadcast */
  sb_printf(sb, "  const float *restrict xin = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", C->px);
  sb_printf(sb, "  const float *restrict w = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", C->wa);
  if (C->epilogue) ew_put_pointers(sb, &C->ew, 2);
}

/* The vector operations of ISA version i, as text into a buffer. */
typedef struct Vops {
  int i;
  const char *name;
} Vops;

static void vop(StrBuf *sb, const Vops *v, GemmVop op, const char *a, const char *b, const char *c) {
  gemm_put_vop(sb, v->i, v->name, op, a, b, c);
}

/* The copy of input rows [ih0, ih1) of the plane at `src` (h x w) into the
** zero-padded buffer at `dst` (hp rows of rl floats, columns split by
** phase), at indentation ind, in ISA version of W lanes. AVX-512 at
** stride 2: 32 input floats at a time into 16 of one phase (a permute),
** the row's end masked (GCC vectorizes the loops below 16 outputs at a
** time and leaves the rest of each phase scalar: MobileNetV2's stride-2
** layers took 5 to 20% longer; its 112x112 one was faster on them while
** its planes were copied whole, not by rows). Input row ih lands in dst's
** row ih + PT, less base where one is given (a window of rows from padded
** row base: put_dw_copy_rows). */
static void put_plane_copy(StrBuf *sb, const Conv *C, int ind, const char *dst, const char *src, int w, const char *ih0,
                           const char *ih1, const char *base) {
  char row[64]; /* the padded row of input row ih in dst */
  if (base) snprintf(row, sizeof row, "(ih + %lld - %s)", (long long)C->pt, base);
  else snprintf(row, sizeof row, "(ih + %lld)", (long long)C->pt);
  /* at stride 2, input column x + 2i: padded column x + 2i + PL, phase PL %
  ** 2, index x / 2 + i + PL / 2 (de, from the row's start); x + 2i + 1
  ** likewise (dd) */
  long long pl = C->pl, ph = C->ph, de = (pl % 2) * ph + pl / 2, dd = ((pl + 1) % 2) * ph + (pl + 1) / 2;
  if (w == 16 && C->sw == 2) {
    long long W = C->w;
    sb_printf(sb, "%*sconst __m512i ie = _mm512_setr_epi32(", ind, "");
    for (int l = 0; l < 16; l++) sb_printf(sb, "%s%d", l ? ", " : "", 2 * l);
    sb_printf(sb, ");\n%*sconst __m512i io = _mm512_setr_epi32(", ind, "");
    for (int l = 0; l < 16; l++) sb_printf(sb, "%s%d", l ? ", " : "", 2 * l + 1);
    sb_puts(sb, ");\n");
    sb_printf(sb, "%*sfor (int64_t ih = %s; ih < %s; ih++) {\n", ind, "", ih0, ih1);
    sb_printf(sb, "%*s  const float *restrict r = %s + ih * %lld;\n", ind, "", src, W);
    sb_printf(sb, "%*s  float *restrict d = %s + %s * %lld;\n", ind, "", dst, row, (long long)C->rl);
    /* one pass over the row per phase (one pass for both, each load
    ** feeding two permutes, measured slower on 112x112 planes) */
    for (int odd = 0; odd < 2; odd++) {
      const char *ix = odd ? "io" : "ie";
      long long at = odd ? dd : de, x = W / 32 * 32, n = W - x, nw = odd ? n / 2 : (n + 1) / 2;
      if (W >= 32) {
        sb_printf(sb, "%*s  for (int64_t x = 0; x + 32 <= %lld; x += 32)\n", ind, "", W);
        sb_printf(sb, "%*s    _mm512_storeu_ps(d + %lld + x / 2, _mm512_permutex2var_ps(_mm512_loadu_ps(r + x), %s, "
                      "_mm512_loadu_ps(r + x + 16)));\n", ind, "", at, ix);
      }
      if (!nw) continue;
      long long na = n < 16 ? n : 16, nb = n - na;
      sb_printf(sb, "%*s  _mm512_mask_storeu_ps(d + %lld, (__mmask16)0x%llx, _mm512_permutex2var_ps(", ind, "", at + x / 2,
                (1ull << nw) - 1);
      if (na == 16) sb_printf(sb, "_mm512_loadu_ps(r + %lld), %s, ", x, ix);
      else sb_printf(sb, "_mm512_maskz_loadu_ps((__mmask16)0x%llx, r + %lld), %s, ", (1ull << na) - 1, x, ix);
      if (nb) sb_printf(sb, "_mm512_maskz_loadu_ps((__mmask16)0x%llx, r + %lld)));\n", (1ull << nb) - 1, x + 16);
      else sb_puts(sb, "_mm512_setzero_ps()));\n");
    }
    sb_printf(sb, "%*s}\n", ind, "");
    return;
  }
  if (w == 8 && C->sw == 2 && C->w >= 48) {
    /* AVX2 at stride 2, rows of 48 floats or more: 16 input floats at a
    ** time into 8 of each phase (a shuffle and a lane permute each), the
    ** row's end one at a time. MobileNetV2 on a Zen 3, one thread: its
    ** 112x112 layer 320 -> 200 us, its 56x56 one 124 -> 114. Shorter rows
    ** (28, 14) ran twice as long so, with the end masked too
    ** (vmaskmovps), or one at a time: the loops below, which gcc
    ** vectorizes, do better there. */
    long long W = C->w, x1 = W / 16 * 16;
    sb_printf(sb, "%*sfor (int64_t ih = %s; ih < %s; ih++) {\n", ind, "", ih0, ih1);
    sb_printf(sb, "%*s  const float *restrict r = %s + ih * %lld;\n", ind, "", src, W);
    sb_printf(sb, "%*s  float *restrict d = %s + %s * %lld;\n", ind, "", dst, row, (long long)C->rl);
    sb_printf(sb, "%*s  for (int64_t x = 0; x < %lld; x += 16) {\n", ind, "", x1);
    sb_printf(sb, "%*s    const __m256 a = _mm256_loadu_ps(r + x), b = _mm256_loadu_ps(r + x + 8);\n", ind, "");
    for (int odd = 0; odd < 2; odd++)
      sb_printf(sb,
                "%*s    _mm256_storeu_ps(d + %lld + x / 2, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd("
                "_mm256_shuffle_ps(a, b, 0x%s)), 0xD8)));\n",
                ind, "", odd ? dd : de, odd ? "DD" : "88");
    sb_printf(sb, "%*s  }\n", ind, "");
    if (x1 < W)
      sb_printf(sb, "%*s  for (int64_t x = %lld; x < %lld; x++) d[(x + %lld) %% 2 * %lld + (x + %lld) / 2] = r[x];\n", ind,
                "", x1, W, pl, ph, pl);
    sb_printf(sb, "%*s}\n", ind, "");
    return;
  }
  sb_printf(sb, "%*sfor (int64_t ih = %s; ih < %s; ih++) {\n", ind, "", ih0, ih1);
  if (C->sw == 1) {
    sb_printf(sb, "%*s  memcpy(%s + %s * %lld + %lld, %s + ih * %lld, %lld);\n", ind, "", dst, row, (long long)C->rl,
              (long long)C->pl, src, (long long)C->w, (long long)(C->w * 4));
  } else {
    /* phase f holds the padded columns t * SW + f: input columns t * SW + f - PL */
    for (int64_t f = 0; f < C->sw; f++) {
      int64_t t0 = C->pl - f > 0 ? (C->pl - f + C->sw - 1) / C->sw : 0, t1 = (C->w - 1 + C->pl - f) / C->sw;
      if (C->w - 1 + C->pl - f < 0 || t0 > t1) continue;
      sb_printf(sb, "%*s  for (int64_t cx = %lld; cx <= %lld; cx++)\n", ind, "", (long long)t0, (long long)t1);
      sb_printf(sb, "%*s    %s[%s * %lld + %lld + cx] = %s[ih * %lld + cx * %lld - %lld];\n", ind, "", dst, row,
                (long long)C->rl, (long long)(f * C->ph), src, (long long)C->w, (long long)C->sw,
                (long long)(C->pl - f));
    }
  }
  sb_printf(sb, "%*s}\n", ind, "");
}

enum { DW_ROWS = 4 }; /* the depthwise kernel's output rows per step */

/* How the depthwise kernel stores the end of a row (OW mod W outputs):
** none; one more vector ending at the row's end, over outputs the last
** one stored already (the same values: each output's sum is the same
** operations in the same order); a masked store, where a row is shorter
** than a vector (AVX-512, AVX2); through a buffer (the portable version's
** rows shorter than its 4 lanes). */
typedef enum DwTail { DW_TAIL_NONE, DW_TAIL_OVERLAP, DW_TAIL_MASK, DW_TAIL_BUF } DwTail;

static DwTail dw_tail(const Conv *C, int w) {
  if (C->ow % w == 0) return DW_TAIL_NONE;
  if (C->ow > w) return DW_TAIL_OVERLAP;
  return w == 4 ? DW_TAIL_BUF : DW_TAIL_MASK;
}

/* The store of vector `acc` to the first n lanes at p (n < W: a masked
** store, AVX-512 or AVX2). */
static void put_dw_store(StrBuf *sb, const Vops *V, int w, const char *p, const char *acc, int64_t n) {
  if (n >= w) vop(sb, V, GV_STORE, p, acc, NULL);
  else if (w == 16) sb_printf(sb, "_mm512_mask_storeu_ps(%s, (__mmask16)0x%llx, %s)", p, (1ull << n) - 1, acc);
  else {
    sb_printf(sb, "_mm256_maskstore_ps(%s, _mm256_setr_epi32(", p);
    for (int l = 0; l < 8; l++) sb_printf(sb, "%s%d", l ? ", " : "", l < n ? -1 : 0);
    sb_printf(sb, "), %s)", acc);
  }
}

/* The output row (of rows from the step's first) that reads row u of the
** buffer (from the step's first) at tap row a, or -1. */
static int dw_row_at(const Conv *C, int64_t u, int64_t a, int rows) {
  int64_t d = u - a * C->dh;
  return d >= 0 && d % C->sh == 0 && d / C->sh < rows ? (int)(d / C->sh) : -1;
}

/* The taps of put_dw_rows by input row (in scope: acc0.., k0.. the
** filter's taps broadcast, j, xp, oh, pn): row u of the buffer from the
** step's first feeds output row r at tap row a where u = r * SH + a * DH;
** each vector loaded once for every row that reads it (stride 1, 4 rows:
** 18 loads, not 36; stride 2: 27), into a register (an empty asm: GCC
** would fold the load into each FMA again), each accumulator still
** taking its taps in the order (a, b), so the same bits; pf prefetches
** spread over the loads. Alone, min us: 144 channels at 56x56 152 ->
** 112, 32 at 112x112 126 -> 99, 96 at stride 2 162 -> 146. */
static void put_dw_taps_shared(StrBuf *sb, const Conv *C, const Vops *V, int rows, int64_t pf, bool win) {
  long long rl = C->rl, ph = C->ph;
  int64_t nu = (rows - 1) * C->sh + (C->kh - 1) * C->dh + 1, nl = 0, li = 0;
  for (int pass = 0; pass < 2; pass++)
    for (int64_t u = 0; u < nu; u++) {
      bool used = false;
      for (int64_t a = 0; a < C->kh; a++) used |= dw_row_at(C, u, a, rows) >= 0;
      if (!used) continue;
      if (!pass) {
        nl += C->kw;
        continue;
      }
      for (int64_t b = 0; b < C->kw; b++, li++) {
        long long off = (b * C->dw) % C->sw * ph + (b * C->dw) / C->sw;
        char p[96];
        if (win) snprintf(p, sizeof p, "xp + j + %lld", (long long)u * rl + off);
        else snprintf(p, sizeof p, "xp + oh * %lld + j + %lld", (long long)(C->sh * rl), (long long)u * rl + off);
        sb_puts(sb, "            {\n              ");
        vop(sb, V, GV_TYPE, NULL, NULL, NULL);
        sb_puts(sb, " x = ");
        vop(sb, V, GV_LOAD, p, NULL, NULL);
        sb_puts(sb, ";\n              RLYRT_IN_REG(x);\n");
        for (int64_t a = 0; a < C->kh; a++) {
          int r = dw_row_at(C, u, a, rows);
          if (r < 0) continue;
          char acc[24], kv[24];
          snprintf(acc, sizeof acc, "acc%d", r);
          snprintf(kv, sizeof kv, "k%lld", (long long)(a * C->kw + b));
          sb_printf(sb, "              %s = ", acc);
          vop(sb, V, GV_FMA, kv, "x", acc);
          sb_puts(sb, ";\n");
        }
        for (int64_t e = (li + 1) * pf / nl - li * pf / nl; e > 0; e--)
          sb_puts(sb, "              __builtin_prefetch(pn, 0, 2);\n              pn += 64;\n");
        sb_puts(sb, "            }\n");
      }
    }
}

/* `rows` output rows of the depthwise kernel from row oh (in scope, with
** oc, wk, c, xp): W outputs of each row per vector, every tap unrolled (one
** broadcast of its weight for all rows; several rows with the AVX-512 and
** AVX2 versions, where the taps' weights fit in registers beside the rows:
** each input vector loaded once, put_dw_taps_shared), the end of the rows as dw_tail
** says (a buffer: one vector; xp has W floats of slack); each vector of
** the main loop prefetches pf lines at pn (pn += 64), spread over its taps. */
static void put_dw_rows(StrBuf *sb, const Conv *C, const Vops *V, int w, int rows, int64_t pf, const TileEpi *te, bool win) {
  long long rl = C->rl, ph = C->ph, ow = C->ow;
  DwTail tk = dw_tail(C, w);
  int64_t nk = C->kh * C->kw;
  bool share = rows > 1 && w >= 8 && nk + rows + 2 <= (w == 16 ? 32 : 16);
  sb_puts(sb, "          int64_t j = 0;\n");
  for (int64_t t = 0; share && t < nk; t++) {
    char wv[48];
    snprintf(wv, sizeof wv, "wk[%lld]", (long long)t);
    sb_puts(sb, "          const ");
    vop(sb, V, GV_TYPE, NULL, NULL, NULL);
    sb_printf(sb, " k%lld = ", (long long)t);
    vop(sb, V, GV_BCAST, wv, NULL, NULL);
    sb_puts(sb, ";\n");
  }
  for (int tail = 0; tail < 2; tail++) {
    if (!tail && ow < w) continue;
    if (tail && tk == DW_TAIL_NONE) break;
    if (!tail) sb_printf(sb, "          for (; j + %d <= %lld; j += %d) {\n", w, ow, w);
    else if (tk == DW_TAIL_OVERLAP) sb_printf(sb, "          if (j < %lld) {\n            j = %lld;\n", ow, ow - w);
    else if (tk == DW_TAIL_MASK) sb_puts(sb, "          {\n");
    else sb_printf(sb, "          if (j < %lld) {\n            float tail[%d][%d];\n", ow, rows, w);
    for (int r = 0; r < rows; r++) {
      sb_puts(sb, "            ");
      vop(sb, V, GV_TYPE, NULL, NULL, NULL);
      sb_printf(sb, " acc%d = ", r);
      vop(sb, V, GV_ZERO, NULL, NULL, NULL);
      sb_puts(sb, ";\n");
    }
    if (share) put_dw_taps_shared(sb, C, V, rows, !tail ? pf : 0, win);
    for (int64_t a = 0; !share && a < C->kh; a++)
      for (int64_t b = 0; b < C->kw; b++) {
        long long off = a * C->dh * rl + (b * C->dw) % C->sw * ph + (b * C->dw) / C->sw;
        char wv[48];
        snprintf(wv, sizeof wv, "wk[%lld]", (long long)(a * C->kw + b));
        sb_puts(sb, "            {\n              const ");
        vop(sb, V, GV_TYPE, NULL, NULL, NULL);
        sb_puts(sb, " k = ");
        vop(sb, V, GV_BCAST, wv, NULL, NULL);
        sb_puts(sb, ";\n");
        for (int r = 0; r < rows; r++) {
          char p[96], acc[16];
          if (win) snprintf(p, sizeof p, "xp + j + %lld", r * (long long)(C->sh * rl) + off);
          else snprintf(p, sizeof p, "xp + (oh + %d) * %lld + j + %lld", r, (long long)(C->sh * rl), off);
          StrBuf l = {0};
          vop(&l, V, GV_LOAD, p, NULL, NULL);
          snprintf(acc, sizeof acc, "acc%d", r);
          sb_printf(sb, "              %s = ", acc);
          vop(sb, V, GV_FMA, "k", sb_str(&l), acc);
          sb_puts(sb, ";\n");
          sb_free(&l);
        }
        for (int64_t t = a * C->kw + b, e = !tail ? (t + 1) * pf / (C->kh * C->kw) - t * pf / (C->kh * C->kw) : 0; e > 0; e--)
          sb_puts(sb, "              __builtin_prefetch(pn, 0, 2);\n              pn += 64;\n");
        sb_puts(sb, "            }\n");
      }
    for (int r = 0; r < rows; r++) {
      char p[96], acc[16];
      if (tail && tk == DW_TAIL_BUF) snprintf(p, sizeof p, "tail[%d]", r);
      else snprintf(p, sizeof p, "c + oc * %lld + (oh + %d) * %lld + j", (long long)C->np, r, ow);
      snprintf(acc, sizeof acc, "acc%d", r);
      if (te) {
        char col[64], mask[32];
        snprintf(col, sizeof col, "(oh + %d) * %lld + j", r, ow);
        snprintf(mask, sizeof mask, "(__mmask16)0x%llx", (1ull << (ow < 16 ? ow : 16)) - 1);
        gemm_put_epi_vec(sb, V->i, te, 12, acc, "oc", col, tail && tk == DW_TAIL_MASK ? mask : NULL);
      }
      sb_puts(sb, "            ");
      put_dw_store(sb, V, w, p, acc, tail && tk == DW_TAIL_MASK ? ow : w);
      sb_puts(sb, ";\n");
    }
    if (tail && tk == DW_TAIL_BUF) {
      sb_printf(sb, "            for (int64_t r = 0; r < %d; r++)\n", rows);
      sb_printf(sb, "              for (int64_t e = 0; j + e < %lld; e++) c[oc * %lld + (oh + r) * %lld + j + e] = tail[r][e];\n",
                ow, (long long)C->np, ow);
    }
    sb_puts(sb, "          }\n");
  }
}

/* The input planes of at least DW_PF_MIN floats are prefetched (into L2)
** a plane ahead; planes whose buffer (hp x rl) has DW_ROWCOPY_MIN floats or
** more are copied a few rows at a time into a window (put_dw_copy_rows:
** a multiplier of 1; with more, each plane feeds several filters and is
** copied whole), the others whole first; planes of rows that are not a multiple of 16 outputs take
** the flat kernel (dw_flat) up to DW_FLAT_MAX vectors, in groups of up to
** DW_FLAT_GROUP accumulators. Measured on MobileNetV2 at one thread
** (minimum us per call, each against the state before it): prefetching,
** its 112x112 layers 300 -> 280 and 470 -> 450 (stride 2), 56x56 290 ->
** 250; the copy by rows, its 112x112 layers 300 -> 280 and 550 -> 490
** (and the epilogue by rows after it, 297 -> 286 at stride 1), but 20 to
** 80% slower on 28x28 and 14x14 planes (in L1 anyway); flat, 7x7 80 ->
** 21, 14x14 42 -> 27, 28x28 70 -> 65. Later, on a Zen 4 alone: the window
** of rows in place of the whole plane's buffer, 112x112 at stride 2 168
** -> 161 us (after the aligned phases: 190 -> 168), at stride 1 136 -> 126;
** both, in MobileNetV2 at one thread, its stride-2 layer 388 -> 353. */
enum { DW_PF_MIN = 2048, DW_FLAT_MAX = 64, DW_FLAT_GROUP = 8, DW_ROWCOPY_MIN = 8192 };

/* Whether ISA version of W lanes computes the planes flat (put_dw_flat):
** AVX-512 (masked loads that do not fault), stride 1, rows as wide as the
** input's (so that a tap's input is at one offset from its output at any
** pixel), not a multiple of a vector (where the rows of put_dw_rows leave
** lanes empty or compute some twice), and few vectors per plane (every one
** unrolled). */
static bool dw_flat(const Conv *C, int w) {
  return w == 16 && C->sh == 1 && C->sw == 1 && C->ow == C->w && C->ow % 16 && (C->np + 15) / 16 <= DW_FLAT_MAX;
}

/* Plane oc of the depthwise kernel flat (dw_flat; in scope: s, sa = its
** address, oc, wk, c): the plane's outputs 16 pixels per vector whatever
** the rows, each tap a load at the output's pixel plus a constant offset,
** masked to the pixels whose tap reads inside the plane (the rest read
** zero, as from the zero borders; masked-off lanes do not fault, even
** before or past the tensor); the last vector stored masked. The same FMAs
** in the same order per output as put_dw_rows, so the same bits. Reads
** the input in place: no copy. */
static void put_dw_flat(StrBuf *sb, const Conv *C, const Vops *V, const TileEpi *te) {
  int64_t nv = (C->np + 15) / 16, ng = (nv + DW_FLAT_GROUP - 1) / DW_FLAT_GROUP, gs = (nv + ng - 1) / ng;
  int64_t nk = C->kh * C->kw;
  for (int64_t t = 0; t < nk; t++) sb_printf(sb, "        const __m512 k%lld = _mm512_set1_ps(wk[%lld]);\n", (long long)t, (long long)t);
  for (int64_t v0 = 0; v0 < nv; v0 += gs) {
    int64_t v1 = v0 + gs < nv ? v0 + gs : nv;
    sb_puts(sb, "        {\n");
    for (int64_t v = v0; v < v1; v++) sb_printf(sb, "          __m512 acc%lld = _mm512_setzero_ps();\n", (long long)(v - v0));
    for (int64_t a = 0; a < C->kh; a++)
      for (int64_t b = 0; b < C->kw; b++) {
        int64_t dy = a * C->dh - C->pt, dx = b * C->dw - C->pl, off = dy * C->w + dx;
        for (int64_t v = v0; v < v1; v++) {
          unsigned mask = 0;
          for (int l = 0; l < 16; l++) {
            int64_t px = v * 16 + l;
            if (px >= C->np) break;
            int64_t iy = px / C->ow + dy, ix = px % C->ow + dx;
            if (iy >= 0 && iy < C->h && ix >= 0 && ix < C->w) mask |= 1u << l;
          }
          long long ob = (long long)((v * 16 + off) * 4);
          char addr[64];
          snprintf(addr, sizeof addr, "(const void *)(sa %c %lldu)", ob < 0 ? '-' : '+', ob < 0 ? -ob : ob);
          sb_printf(sb, "          acc%lld = _mm512_fmadd_ps(k%lld, ", (long long)(v - v0), (long long)(a * C->kw + b));
          if (!mask) sb_puts(sb, "_mm512_setzero_ps()");
          else if (mask == 0xffff) sb_printf(sb, "_mm512_loadu_ps(%s)", addr);
          else sb_printf(sb, "_mm512_maskz_loadu_ps((__mmask16)0x%x, %s)", mask, addr);
          sb_printf(sb, ", acc%lld);\n", (long long)(v - v0));
        }
      }
    for (int64_t v = v0; v < v1; v++) {
      char p[96], acc[24];
      snprintf(p, sizeof p, "c + oc * %lld + %lld", (long long)C->np, (long long)(v * 16));
      snprintf(acc, sizeof acc, "acc%lld", (long long)(v - v0));
      int64_t n = C->np - v * 16 < 16 ? C->np - v * 16 : 16;
      if (te) {
        char col[32], mask[32];
        snprintf(col, sizeof col, "%lld", (long long)(v * 16));
        snprintf(mask, sizeof mask, "(__mmask16)0x%llx", (1ull << n) - 1);
        gemm_put_epi_vec(sb, V->i, te, 10, acc, "oc", col, n < 16 ? mask : NULL);
      }
      sb_puts(sb, "          ");
      put_dw_store(sb, V, 16, p, acc, n);
      sb_puts(sb, ";\n");
    }
    sb_puts(sb, "        }\n");
  }
}

/* The rows that output rows [oh, oh + rows) read, into xp just before
** they are computed: a window of the padded plane from its row oh * SH
** (wb, we: the padded rows it holds), the rows it holds already moved
** to its front, the others copied from the input (or zeroed: the borders;
** the window's memory served the rows and planes before). The copy's
** reads from memory overlap the FMAs of the rows before, and its writes
** and the FMAs' reads stay in L1 (a whole plane's buffer would not: 58 KB
** at 112x112, each row written a cache miss to L2; the window: 9 rows,
** 4.5 KB). */
static void put_dw_copy_rows(StrBuf *sb, const Conv *C, int w, int rows) {
  long long nu = (rows - 1) * C->sh + (C->kh - 1) * C->dh + 1, rl = C->rl, pt = C->pt, h = C->h;
  sb_printf(sb, "          {\n            const int64_t r0 = oh * %lld, r1 = r0 + %lld;\n", (long long)C->sh, nu);
  sb_puts(sb, "            if (r0 > wb) {\n");
  sb_printf(sb, "              if (we > r0) memmove(xp, xp + (r0 - wb) * %lld, (size_t)(we - r0) * %lld);\n", rl, rl * 4);
  sb_puts(sb, "              else we = r0;\n              wb = r0;\n            }\n");
  sb_printf(sb, "            for (int64_t r = we; r < r1 && r < %lld; r++) memset(xp + (r - r0) * %lld, 0, %lld);\n", pt, rl,
            rl * 4);
  sb_printf(sb, "            {\n              const int64_t ia = we > %lld ? we - %lld : 0, ib = r1 - %lld < %lld ? r1 - %lld : %lld;\n",
            pt, pt, pt, h, pt, h);
  sb_puts(sb, "              if (ia < ib) {\n");
  put_plane_copy(sb, C, 16, "xp", "s", w, "ia", "ib", "r0");
  sb_puts(sb, "              }\n            }\n");
  sb_printf(sb, "            for (int64_t r = we > %lld ? we : %lld; r < r1; r++) memset(xp + (r - r0) * %lld, 0, %lld);\n",
            pt + h, pt + h, rl, rl * 4);
  sb_puts(sb, "            we = r1;\n          }\n");
}

/* The epilogue on output rows [oh, oh + rows) of plane oc, just stored
** (large planes, copied by rows: the plane's result may not stay in L1
** until its end: 50 KB at 112x112). */
static void put_dw_epilogue_rows(StrBuf *sb, const char *name, const Conv *C, int rows) {
  char j0[48], j1[48];
  snprintf(j0, sizeof j0, "oh * %lld", (long long)C->ow);
  snprintf(j1, sizeof j1, "(oh + %d) * %lld", rows, (long long)C->ow);
  gemm_put_epilogue_call(sb, name, &C->ew, 10, "oc", "oc + 1", j0, j1);
}

/* Depthwise: per input channel, its plane into xp (rows of RL = SW * PH
** floats: phase f of a padded row holds its columns f, f + SW, ...), then
** each output row from it (large planes: the copy and the epilogue by
** rows, as the rows need them); or (dw_flat) the plane flat from the
** input, without a copy. */
static void put_dw(StrBuf *sb, int i, const char *name, const Conv *C) {
  int w, mr, nr;
  gemm_isa_tile(i, &w, &mr, &nr);
  Vops V = {i, name};
  long long np = C->np;
  lower_put_isa_attrs(sb, i);
  sb_printf(sb, "static void %s_%s(rlyrt_object *const *args, float *restrict o, float *restrict xp, int64_t part0, "
                "int64_t part1) {\n", name, lower_isa_suffix(i));
  put_pointers(sb, C);
  /* The epilogue in registers before each store where it can (not on
  ** AVX2's masked row ends: its leaves would need masked loads). */
  bool in_regs = C->epilogue && gemm_epi_vec_ok(i, &C->ew, C->l_sj) && (w == 16 || dw_tail(C, w) != DW_TAIL_MASK);
  TileEpi te = {&C->ew, C->l_sq, C->l_si, C->l_sj, "oc", "0", 0};
  if (in_regs) gemm_put_epi_bounds(sb, &C->ew, 2);
  /* the planes p = q * C + ci in [p0, p1) */
  sb_puts(sb, "  for (int64_t p = part0; p < part1; p++) {\n");
  sb_printf(sb, "    const int64_t q = p / %lld, ci = p %% %lld;\n", (long long)C->c, (long long)C->c);
  sb_printf(sb, "    float *restrict c = o + q * %lld;\n", (long long)(C->oc * np));
  sb_puts(sb, "    {\n");
  sb_printf(sb, "      const float *restrict s = xin + p * %lld;\n", (long long)(C->h * C->w));
  bool flat = dw_flat(C, w), by_rows = C->hp * C->rl >= DW_ROWCOPY_MIN && C->m == 1;
  if (flat) sb_puts(sb, "      const uintptr_t sa = (uintptr_t)s;\n      (void)xp;\n");
  else if (!by_rows) {
    char hs[32];
    snprintf(hs, sizeof hs, "%lld", (long long)C->h);
    put_plane_copy(sb, C, 6, "xp", "s", w, "0", hs, NULL);
  }
  else sb_puts(sb, "      int64_t wb = 0, we = 0; /* the padded rows in the window */\n");
  sb_printf(sb, "      for (int64_t mu = 0; mu < %lld; mu++) {\n", (long long)C->m);
  sb_printf(sb, "        const int64_t oc = ci * %lld + mu;\n", (long long)C->m);
  sb_printf(sb, "        const float *restrict wk = w + oc * %lld;\n", (long long)(C->kh * C->kw));
  if (flat) put_dw_flat(sb, C, &V, in_regs ? &te : NULL);
  else {
    /* DW_ROWS output rows at a time (independent accumulators), then
    ** one; large planes prefetch the next one meanwhile (its copy then
    ** reads L2, not memory, and the loads overlap the FMAs) */
    int64_t lines = (C->h * C->w + 15) / 16, steps = C->oh / DW_ROWS * (C->ow / w);
    int64_t per = C->h * C->w >= DW_PF_MIN && steps ? (lines + steps - 1) / steps : 0;
    sb_printf(sb, "        int64_t oh = 0;\n");
    if (per) sb_printf(sb, "        const char *pn = (const char *)(s + %lld);\n", (long long)(C->h * C->w));
    sb_printf(sb, "        for (; oh + %d <= %lld; oh += %d) {\n", DW_ROWS, (long long)C->oh, DW_ROWS);
    if (by_rows) put_dw_copy_rows(sb, C, w, DW_ROWS);
    put_dw_rows(sb, C, &V, w, DW_ROWS, per, in_regs ? &te : NULL, by_rows);
    if (by_rows && C->epilogue && !in_regs) put_dw_epilogue_rows(sb, name, C, DW_ROWS);
    sb_puts(sb, "        }\n");
    sb_printf(sb, "        for (; oh < %lld; oh++) {\n", (long long)C->oh);
    if (by_rows) put_dw_copy_rows(sb, C, w, 1);
    put_dw_rows(sb, C, &V, w, 1, 0, in_regs ? &te : NULL, by_rows);
    if (by_rows && C->epilogue && !in_regs) put_dw_epilogue_rows(sb, name, C, 1);
    sb_puts(sb, "        }\n");
  }
  if (C->epilogue && !in_regs && (flat || !by_rows)) {
    char j1[32];
    snprintf(j1, sizeof j1, "%lld", np);
    gemm_put_epilogue_call(sb, name, &C->ew, 8, "oc", "oc + 1", "0", j1);
  }
  sb_puts(sb, "      }\n    }\n  }\n}\n");
}

/* {==== Direct: few input channels ====}
** A network's stem (ResNet's 3 -> 64 by 7x7 at stride 2, MobileNetV2's 3
** -> 32 by 3x3) has a reduction of 27 to 147 over 3 channels: as an im2col
** GEMM, packing its pixels costs as much as a sixth of the FMAs, and the
** panel of MR filters pads 64 to 72. Direct instead: each part (a block
** of output rows of one image) copies the padded input rows its outputs
** read, of every channel, into its slot, columns split by phase as the
** depthwise kernel's (put_plane_copy: the W outputs of a row under one tap
** are then W consecutive floats at any stride); then for each output row,
** tiles of FB filters by NV vectors of the row: per tap, NV input vectors
** loaded once for the FB filters, each filter's weight broadcast from the
** filter as it is (OIHW, no packing), FB * NV FMAs. AVX-512: 3 filters by
** 7 vectors (112 outputs: ResNet's and MobileNetV2's rows), 21
** accumulators and 7 inputs of 32 registers; AVX2 and the portable
** version: 4 filters by 3 vectors (16 registers). The epilogue runs on
** the accumulators before their stores. bench/models/stem_direct.c
** measured the AVX-512 tile at 98% of a Zen 5 core's FMA peak. */

static int64_t direct_rb(const Conv *C) { return (C->oh + DIRECT_PARTS - 1) / DIRECT_PARTS; }
/* the padded rows a block of output rows reads */
static int64_t direct_rows(const Conv *C) { return (direct_rb(C) - 1) * C->sh + (C->kh - 1) * C->dh + 1; }
/* a thread's slot: every channel's rows, a vector of slack */
static int64_t direct_slot(const Conv *C) { return (C->c * direct_rows(C) * C->rl + 16 + 15) / 16 * 16; }

static void direct_tile(int w, int *fb, int *nv) {
  if (w == 16) *fb = 3, *nv = 7;
  else *fb = 4, *nv = 3;
}

/* A tile of fb filters from f0 by nv vectors of output row oh from column
** j (in scope: xp, oh, oh0, f0, j, c, w and the epilogue's pointers). */
static void put_direct_tile(StrBuf *sb, const Conv *C, const Vops *V, int w, int fb, int nv, const TileEpi *te) {
  long long rl = C->rl, ph = C->ph, k = C->k, kk = C->kh * C->kw;
  sb_puts(sb, "          {\n");
  for (int f = 0; f < fb; f++)
    for (int v = 0; v < nv; v++) {
      sb_puts(sb, "            ");
      vop(sb, V, GV_TYPE, NULL, NULL, NULL);
      sb_printf(sb, " a%d_%d = ", f, v);
      vop(sb, V, GV_ZERO, NULL, NULL, NULL);
      sb_puts(sb, ";\n");
    }
  sb_printf(sb, "            for (int64_t ci = 0; ci < %lld; ci++)\n", (long long)C->cg);
  sb_printf(sb, "              for (int64_t a = 0; a < %lld; a++) {\n", (long long)C->kh);
  sb_printf(sb, "                const float *restrict xr = xp + (ci * %lld + (oh - oh0) * %lld + a * %lld) * %lld + j;\n",
            (long long)direct_rows(C), (long long)C->sh, (long long)C->dh, rl);
  sb_printf(sb, "                const float *restrict wr = w + f0 * %lld + ci * %lld + a * %lld;\n", k, kk,
            (long long)C->kw);
  for (int64_t b = 0; b < C->kw; b++) {
    long long off = (b * C->dw) % C->sw * ph + (b * C->dw) / C->sw;
    sb_puts(sb, "                {\n");
    for (int v = 0; v < nv; v++) {
      char p[64];
      snprintf(p, sizeof p, "xr + %lld", off + (long long)v * w);
      sb_puts(sb, w >= 8 ? "                  " : "                  const ");
      vop(sb, V, GV_TYPE, NULL, NULL, NULL);
      sb_printf(sb, " in%d = ", v);
      vop(sb, V, GV_LOAD, p, NULL, NULL);
      sb_puts(sb, ";\n");
      /* in a register: GCC would fold the load into each filter's FMA,
      ** loading it FB times (the tile ran at half speed) */
      if (w >= 8) sb_printf(sb, "                  RLYRT_IN_REG(in%d);\n", v);
    }
    for (int f = 0; f < fb; f++) {
      char wv[48];
      snprintf(wv, sizeof wv, "wr[%lld]", (long long)f * k + b);
      sb_puts(sb, "                  {\n                    const ");
      vop(sb, V, GV_TYPE, NULL, NULL, NULL);
      sb_puts(sb, " kw = ");
      vop(sb, V, GV_BCAST, wv, NULL, NULL);
      sb_puts(sb, ";\n");
      for (int v = 0; v < nv; v++) {
        char acc[32], xv[16];
        snprintf(acc, sizeof acc, "a%d_%d", f, v);
        snprintf(xv, sizeof xv, "in%d", v);
        sb_printf(sb, "                    %s = ", acc);
        vop(sb, V, GV_FMA, "kw", xv, acc);
        sb_puts(sb, ";\n");
      }
      sb_puts(sb, "                  }\n");
    }
    sb_puts(sb, "                }\n");
  }
  sb_puts(sb, "              }\n");
  for (int f = 0; f < fb; f++)
    for (int v = 0; v < nv; v++) {
      char acc[32], p[160], row[32], col[64];
      snprintf(acc, sizeof acc, "a%d_%d", f, v);
      snprintf(row, sizeof row, "(f0 + %d)", f);
      snprintf(col, sizeof col, "oh * %lld + j + %d", (long long)C->ow, v * w);
      if (te) gemm_put_epi_vec(sb, V->i, te, 12, acc, row, col, NULL);
      snprintf(p, sizeof p, "c + (f0 + %d) * %lld + %s", f, (long long)C->np, col);
      sb_puts(sb, "            ");
      vop(sb, V, GV_STORE, p, acc, NULL);
      sb_puts(sb, ";\n");
    }
  sb_puts(sb, "          }\n");
}

/* The filters [f0, f0 + fb) of output row oh, in tiles along the row. */
static void put_direct_filters(StrBuf *sb, const Conv *C, const Vops *V, int w, int fb, int nv, const TileEpi *te) {
  long long nvr = C->ow / w, full = nvr / nv * nv * w, rest = nvr % nv;
  sb_puts(sb, "        {\n          int64_t j = 0;\n");
  if (full) {
    sb_printf(sb, "          for (; j < %lld; j += %lld)\n", full, (long long)nv * w);
    put_direct_tile(sb, C, V, w, fb, nv, te);
  }
  if (rest) put_direct_tile(sb, C, V, w, fb, (int)rest, te);
  sb_puts(sb, "        }\n");
}

/* The direct kernel's ISA version i: parts [p0, p1) (p = q * NRB + block
** of output rows), in the slot xp. */
static void put_direct(StrBuf *sb, int i, const char *name, const Conv *C) {
  int w, mr, nr, fb, nv;
  gemm_isa_tile(i, &w, &mr, &nr);
  direct_tile(w, &fb, &nv);
  Vops V = {i, name};
  long long rb = direct_rb(C), nrb = (C->oh + rb - 1) / rb, nrows = direct_rows(C), rl = C->rl, pt = C->pt;
  lower_put_isa_attrs(sb, i);
  sb_printf(sb, "static void %s_%s(rlyrt_object *const *args, float *restrict o, float *restrict xp, int64_t part0, "
                "int64_t part1) {\n", name, lower_isa_suffix(i));
  put_pointers(sb, C);
  bool in_regs = C->epilogue && gemm_epi_vec_ok(i, &C->ew, C->l_sj);
  TileEpi te = {&C->ew, C->l_sq, C->l_si, C->l_sj, "0", "0", 0};
  if (in_regs) gemm_put_epi_bounds(sb, &C->ew, 2);
  sb_puts(sb, "  for (int64_t p = part0; p < part1; p++) {\n");
  sb_printf(sb, "    const int64_t q = p / %lld, oh0 = p %% %lld * %lld, oh1 = oh0 + %lld < %lld ? oh0 + %lld : %lld;\n", nrb,
            nrb, rb, rb, (long long)C->oh, rb, (long long)C->oh);
  sb_printf(sb, "    float *restrict c = o + q * %lld;\n", (long long)(C->oc * C->np));
  sb_printf(sb, "    const int64_t r0 = oh0 * %lld, r1 = (oh1 - 1) * %lld + %lld;\n", (long long)C->sh, (long long)C->sh,
            (long long)((C->kh - 1) * C->dh + 1));
  /* the padded rows [r0, r1) of every channel: zero above and below the
  ** input, its rows split by phase (the border columns stay zero: nothing
  ** writes them) */
  sb_printf(sb, "    for (int64_t ci = 0; ci < %lld; ci++) {\n", (long long)C->cg);
  sb_printf(sb, "      float *restrict xc = xp + ci * %lld;\n", nrows * rl);
  sb_printf(sb, "      const float *restrict s = xin + (q * %lld + ci) * %lld;\n", (long long)C->c, (long long)(C->h * C->w));
  sb_printf(sb, "      for (int64_t r = r0; r < r1 && r < %lld; r++) memset(xc + (r - r0) * %lld, 0, %lld);\n", pt, rl, rl * 4);
  sb_printf(sb, "      const int64_t ia = r0 > %lld ? r0 - %lld : 0, ib = r1 - %lld < %lld ? r1 - %lld : %lld;\n", pt, pt, pt,
            (long long)C->h, pt, (long long)C->h);
  sb_puts(sb, "      if (ia < ib) {\n");
  put_plane_copy(sb, C, 8, "xc", "s", w, "ia", "ib", "r0");
  sb_puts(sb, "      }\n");
  sb_printf(sb, "      for (int64_t r = r0 > %lld ? r0 : %lld; r < r1; r++) memset(xc + (r - r0) * %lld, 0, %lld);\n",
            pt + C->h, pt + C->h, rl, rl * 4);
  sb_puts(sb, "    }\n");
  sb_puts(sb, "    for (int64_t oh = oh0; oh < oh1; oh++) {\n");
  long long full = C->m / fb * fb;
  sb_puts(sb, "      int64_t f0 = 0;\n");
  if (full) {
    sb_printf(sb, "      for (; f0 < %lld; f0 += %d)\n", full, fb);
    put_direct_filters(sb, C, &V, w, fb, nv, in_regs ? &te : NULL);
  }
  if (C->m % fb) put_direct_filters(sb, C, &V, w, (int)(C->m % fb), nv, in_regs ? &te : NULL);
  sb_puts(sb, "    }\n");
  if (C->epilogue && !in_regs) {
    char j0[48], j1[48], i1[24];
    snprintf(j0, sizeof j0, "oh0 * %lld", (long long)C->ow);
    snprintf(j1, sizeof j1, "oh1 * %lld", (long long)C->ow);
    snprintf(i1, sizeof i1, "%lld", (long long)C->m);
    gemm_put_epilogue_call(sb, name, &C->ew, 4, "0", i1, j0, j1);
  }
  sb_puts(sb, "  }\n}\n\n");
}

/* The packing of the pixel operand, shared by the GEMMs' per-thread
** packing (a KC block of reduction rows into bp or ap) and the shared one
** (every reduction row into sp: NAME_pack). Names: the panel's first pixel
** ix (from jc), the block's pixels lim, the panel's width wd. */

/* The im2col tables of the pixels [jc, jc + lim) (lim <= tabn): off[col],
** the pixel's window's offset in a plane; run[col], the pixels from col on
** whose windows follow each other. */
static void put_tables(StrBuf *sb, const Conv *C, int ind, const char *lim, const char *tabn, bool unless_sp) {
  sb_printf(sb, "%*sint32_t *restrict off = tab, *restrict run = tab + %s;\n", ind, "", tabn);
  if (unless_sp) {
    sb_printf(sb, "%*sif (!sp) {\n", ind, "");
    ind += 2;
  }
  sb_printf(sb, "%*sfor (int64_t col = 0; col < %s; col++) {\n", ind, "", lim);
  sb_printf(sb, "%*s  const int64_t oh = (jc + col) / %lld, ow = (jc + col) %% %lld;\n", ind, "", (long long)C->ow,
            (long long)C->ow);
  sb_printf(sb, "%*s  off[col] = (int32_t)(oh * %lld + ow);\n", ind, "", (long long)(C->sh * C->rl));
  sb_printf(sb, "%*s}\n", ind, "");
  sb_printf(sb, "%*sfor (int64_t col = %s - 1; col >= 0; col--)\n", ind, "", lim);
  sb_printf(sb, "%*s  run[col] = col + 1 < %s && (jc + col + 1) %% %lld ? run[col + 1] + 1 : 1;\n", ind, "", lim,
            (long long)C->ow);
  if (unless_sp) sb_printf(sb, "%*s}\n", ind - 2, "");
}

/* s: the input under reduction row `row` (a C expression) and pixel jc
** (1x1: the row itself; im2col: the plane's tap, off[] from there). */
static void put_pack_src(StrBuf *sb, const Conv *C, int ind, const char *row) {
  long long hw = C->hp * C->rl;
  if (C->kind == CK_1X1) {
    sb_printf(sb, "%*sconst float *restrict s = xg + (%s) * %lld + jc;\n", ind, "", row, (long long)C->np);
    return;
  }
  long long kk = C->kh * C->kw;
  sb_printf(sb, "%*sconst int64_t t = (%s) %% %lld;\n", ind, "", row, kk);
  /* tap (kh, kw) = (t / KW, t % KW): column phase (kw * DW) % SW, offset (kw * DW) / SW */
  sb_printf(sb, "%*sconst int64_t kw = t %% %lld * %lld;\n", ind, "", (long long)C->kw, (long long)C->dw);
  sb_printf(sb, "%*sconst float *restrict s = xg + (%s) / %lld * %lld + t / %lld * %lld + kw %% %lld * %lld + kw / %lld;\n",
            ind, "", row, kk, hw, (long long)C->kw, (long long)(C->dh * C->rl), (long long)C->sw, (long long)C->ph,
            (long long)C->sw);
}

/* d[0 .. wd): the pixels ix, ix + 1, ... of row s, zero from lim on. Tiles
** of NR pixels: runs of consecutive floats copied in pieces; tiles of 7
** pixels: one copy when the 7 follow each other, else one at a time. */
static void put_pack_copy(StrBuf *sb, const Conv *C, int ind, const char *ix, const char *lim, const char *wd) {
  const char *n = ix, *l = lim, *W = wd;
  if (C->kind == CK_1X1) {
    sb_printf(sb, "%*sif (%s + %s <= %s) {\n", ind, "", n, W, l);
    sb_printf(sb, "%*s  memcpy(d, s + %s, %s * sizeof *d);\n", ind, "", n, W);
    sb_printf(sb, "%*s} else {\n", ind, "");
    sb_printf(sb, "%*s  for (int64_t e = 0; e < %s; e++) d[e] = %s + e < %s ? s[%s + e] : 0;\n", ind, "", W, n, l, n);
    sb_printf(sb, "%*s}\n", ind, "");
  } else if (C->rows) {
    sb_printf(sb, "%*sif (%s + %s <= %s && run[%s] >= %s) {\n", ind, "", n, W, l, n, W);
    sb_printf(sb, "%*s  memcpy(d, s + off[%s], %s * sizeof *d);\n", ind, "", n, W);
    sb_printf(sb, "%*s} else {\n", ind, "");
    sb_printf(sb, "%*s  for (int64_t e = 0; e < %s; e++) d[e] = %s + e < %s ? s[off[%s + e]] : 0;\n", ind, "", W, n, l,
              n);
    sb_printf(sb, "%*s}\n", ind, "");
  } else {
    sb_printf(sb, "%*sint64_t e = 0;\n", ind, "");
    sb_printf(sb, "%*sif (run[%s] >= %s) {\n", ind, "", n, W);
    sb_printf(sb, "%*s  memcpy(d, s + off[%s], %s * sizeof *d);\n", ind, "", n, W);
    sb_printf(sb, "%*s  e = %s;\n", ind, "", W);
    sb_printf(sb, "%*s}\n", ind, "");
    sb_printf(sb, "%*swhile (e < %s && %s + e < %s) {\n", ind, "", W, n, l);
    sb_printf(sb, "%*s  const float *restrict src = s + off[%s + e];\n", ind, "", n);
    sb_printf(sb, "%*s  int64_t len = run[%s + e] < %s - e ? run[%s + e] : %s - e;\n", ind, "", n, W, n, W);
    sb_printf(sb, "%*s  int64_t u = 0;\n", ind, "");
    sb_printf(sb, "%*s  for (; u + 8 <= len; u += 8) memcpy(d + e + u, src + u, 8 * sizeof *d);\n", ind, "");
    sb_printf(sb, "%*s  for (; u < len; u++) d[e + u] = src[u];\n", ind, "");
    sb_printf(sb, "%*s  e += len;\n", ind, "");
    sb_printf(sb, "%*s}\n", ind, "");
    sb_printf(sb, "%*sfor (; e < %s; e++) d[e] = 0;\n", ind, "", W);
  }
}

/* A KC block of the pixels (pc, kc, jc in scope) into the wd-wide panels
** of buf, buf[panel][l][e], the panel of pixel ix at ix * kc (unless sp:
** then they were packed before). */
static void put_pack_block(StrBuf *sb, const Conv *C, const char *buf, const char *ix, const char *lim,
                           const char *wd) {
  sb_puts(sb, "          if (!sp) {\n");
  sb_puts(sb, "            for (int64_t l = 0; l < kc; l++) {\n");
  put_pack_src(sb, C, 14, "pc + l");
  sb_printf(sb, "              for (int64_t %s = 0; %s < %s; %s += %s) {\n", ix, ix, lim, ix, wd);
  sb_printf(sb, "                float *restrict d = %s + %s * kc + l * %s;\n", buf, ix, wd);
  put_pack_copy(sb, C, 16, ix, lim, wd);
  sb_puts(sb, "              }\n            }\n          }\n");
}

/* The GEMM per batch and group: C[oc, pixel] += W[oc, l] B[l, pixel] over
** the reduction l = (ci, kh, kw). B: per KC block, the block of pixels
** packed here into PW-wide panels, bp[panel][l][col] (PW = NR_MAX: every
** ISA reads its NR columns at their offset), or, given sp, the pixels
** packed before over the whole reduction, sp[panel][K][PW] (NAME_pack). */
static void put_gemm(StrBuf *sb, int i, const char *name, const Conv *C) {
  int w, mr, nr;
  gemm_isa_tile(i, &w, &mr, &nr);
  const int PA = C->pa;
  if (PA == 8) mr = mr >= 8 ? 8 : 4; /* tiles that divide the panel */
  long long m = C->m, k = C->k, np = C->np, hw = C->hp * C->rl, panels = (C->m + PA - 1) / PA;
  /* A 1x1 read in place over one KC block sweeps the pixels of the block
  ** inside each tile of filters (by_filters), not the filters inside each
  ** tile of pixels: C's rows are then written MR at a time along the row,
  ** not all M rows a tile apart (96 rows 50 KB apart at 112x112; the B
  ** block, K x NC, stays in L2). MobileNetV2's 16 -> 96 expansion at
  ** 112x112, in the model at one thread: 810 -> 640 us. */
  int by_filters = C->kind == CK_1X1 && C->direct && k <= KC;
  lower_put_isa_attrs(sb, i);
  sb_printf(sb,
            "static void %s_%s(rlyrt_object *const *args, float *restrict o, float *restrict ap, float *restrict bp, "
            "const float *restrict xp, int32_t *restrict tab, const float *restrict sp, int64_t q, int64_t g, "
            "int64_t j0, int64_t j1, int64_t i0, int64_t i1) {\n",
            name, lower_isa_suffix(i));
  sb_puts(sb, "  (void)ap, (void)bp, (void)xp, (void)tab, (void)sp;\n");
  sb_printf(sb, "  enum { MR = %d, NR = %d, KC = %d, MC = %d, NC = %d, PA = %d, PW = %d };\n", mr, nr, KC, MC, NC, PA,
            NR_MAX);
  put_pointers(sb, C);
  sb_puts(sb, "  (void)xin;\n");
  sb_printf(sb, "  {\n    float *restrict c = o + q * %lld;\n", (long long)(C->oc * np));
  /* the input, or its copy with zero borders (every batch, made before) */
  if (C->copied) sb_printf(sb, "    const float *restrict xb = xp + q * %lld;\n", (long long)C->c * hw);
  else sb_printf(sb, "    const float *restrict xb = xin + q * %lld;\n", (long long)(C->c * C->h * C->w));
  sb_puts(sb, "    {\n");
  sb_printf(sb, "      const float *restrict xg = xb + g * %lld;\n", (long long)(C->cg * hw));
  sb_puts(sb, "      (void)xg;\n");
  sb_printf(sb, "      const float *restrict wg = w + g * %lld;\n", C->prepacked ? panels * k * PA : m * k);
  sb_puts(sb, "      for (int64_t jc = j0; jc < j1; jc += NC) {\n");
  sb_puts(sb, "        const int64_t nc = j1 - jc < NC ? j1 - jc : NC;\n");
  if (C->kind == CK_IM2COL) {
    put_tables(sb, C, 8, "nc", "NC", true);
  }
  sb_printf(sb, "        for (int64_t pc = 0; pc < %lld; pc += KC) {\n", k);
  sb_printf(sb, "          const int64_t kc = %lld - pc < KC ? %lld - pc : KC;\n", k, k);
  /* B's block into PW-wide panels: bp[panel][l][col]; direct, read in
  ** place but for a last tile past the block's end, whose columns go into
  ** bp (NR-wide rows, zero past the end) */
  if (!C->direct) put_pack_block(sb, C, "bp", "jr", "nc", "PW");
  else {
    sb_puts(sb, "          const int64_t je = nc / NR * NR;\n");
    sb_puts(sb, "          if (je < nc)\n");
    sb_puts(sb, "            for (int64_t l = 0; l < kc; l++)\n");
    sb_puts(sb, "              for (int64_t e = 0; e < NR; e++)\n");
    sb_printf(sb, "                bp[l * NR + e] = je + e < nc ? xg[(pc + l) * %lld + jc + je + e] : 0.0f;\n", np);
  }
  sb_puts(sb, "          for (int64_t ic = i0; ic < i1; ic += MC) {\n");
  sb_puts(sb, "            const int64_t mc = i1 - ic < MC ? i1 - ic : MC;\n");
  if (!C->prepacked) { /* A's block into MR-high panels: ap[panel][l][row] */
    sb_puts(sb, "            for (int64_t ir = 0; ir < mc; ir += MR) {\n");
    sb_puts(sb, "              float *restrict dst = ap + ir * kc;\n");
    sb_puts(sb, "              for (int64_t r = 0; r < MR; r++) {\n");
    sb_puts(sb, "                if (ir + r < mc) {\n");
    sb_printf(sb, "                  const float *restrict src = wg + (ic + ir + r) * %lld + pc;\n", k);
    sb_puts(sb, "                  for (int64_t l = 0; l < kc; l++) dst[l * MR + r] = src[l];\n");
    sb_puts(sb, "                } else {\n");
    sb_puts(sb, "                  for (int64_t l = 0; l < kc; l++) dst[l * MR + r] = 0;\n");
    sb_puts(sb, "                }\n              }\n            }\n");
  }
  for (int loop = 0; loop < 2; loop++) {
    if (loop == by_filters) { /* the pixels' loop */
      sb_printf(sb, "%*sfor (int64_t jr = 0; jr < nc; jr += NR) {\n", 12 + 2 * loop, "");
      if (C->direct) {
        sb_printf(sb, "%*sconst int64_t bs = jr < je ? %lld : NR;\n", 14 + 2 * loop, "", np);
        sb_printf(sb, "%*sconst float *restrict pb = jr < je ? xg + pc * %lld + jc + jr : bp;\n", 14 + 2 * loop, "", np);
      } else
        sb_printf(sb,
                  "%*sconst float *restrict pb = sp ? sp + (jc + jr) / PW * %lld + pc * PW + (jc + jr) %% PW\n"
                  "%*s                          : bp + (jr - jr %% PW) * kc + jr %% PW;\n",
                  14 + 2 * loop, "", k * NR_MAX, 14 + 2 * loop, "");
    } else {
      sb_printf(sb, "%*sfor (int64_t ir = 0; ir < mc; ir += MR) {\n", 12 + 2 * loop, "");
      if (C->prepacked)
        sb_printf(sb, "%*sconst float *restrict pa = wg + (ic + ir) / PA * %lld + pc * PA + (ic + ir) %% PA;\n",
                  14 + 2 * loop, "", k * PA);
      else sb_printf(sb, "%*sconst float *restrict pa = ap + ir * kc;\n", 14 + 2 * loop, "");
    }
  }
  sb_printf(sb, "                float *restrict ct = c + (g * %lld + ic + ir) * %lld + jc + jr;\n", m, np);
  if (C->prepacked && C->m > MC) {
    /* A block of filters comes from memory in the first tiles of pixels
    ** and from L2 in the others: while they run, the next block's rows go
    ** into L2, a share of each panel before each tile of pixels. */
    sb_puts(sb, "                if (ic + MC + ir < i1 && ir % PA == 0) {\n");
    sb_printf(sb, "                  const char *pn = (const char *)(wg + (ic + MC + ir) / PA * %lld + pc * PA);\n", k * PA);
    sb_puts(sb, "                  const int64_t l1 = (jr + NR) * kc / nc < kc ? (jr + NR) * kc / nc : kc;\n");
    sb_puts(sb, "                  for (int64_t b = jr * kc / nc * PA * 4; b < l1 * PA * 4; b += 64) __builtin_prefetch(pn + b, 0, 2);\n");
    sb_puts(sb, "                }\n");
  }
  char b_step[24];
  snprintf(b_step, sizeof b_step, C->direct ? "bs" : "%d", NR_MAX);
  /* The last tile of filters, where M is not a multiple of MR, computes
  ** its M mod MR rows only (the blocks of filters start at multiples of
  ** MR and end at M or a multiple of MR: only that tile is short): a
  ** third of the full tile for 64 filters in tiles of 12. */
  int er = (int)(m % mr);
  /* The epilogue: on a full tile in registers before its store where it
  ** can (gemm_epi_vec_ok), else (and on edge tiles) on C after it. */
  char i0[48];
  snprintf(i0, sizeof i0, "g * %lld + ic + ir", m);
  bool in_regs = C->epilogue && gemm_epi_vec_ok(i, &C->ew, C->l_sj);
  TileEpi te = {&C->ew, C->l_sq, C->l_si, C->l_sj, i0, "jc + jr", C->k};
  if (er) sb_puts(sb, "                if (ir + MR <= mc) {\n");
  for (int v = 0; v < (er ? 2 : 1); v++) {
    if (v) sb_puts(sb, "                } else {\n");
    gemm_put_tile_rows(sb, i, name, er ? 18 : 16, v ? er : mr, C->prepacked ? "PA" : "MR", b_step, 0, C->np,
                       in_regs ? &te : NULL, np % nr && np % nr <= nr / 2, NULL);
    if (C->epilogue) {
      char i1[64], i1e[64];
      snprintf(i1, sizeof i1, "g * %lld + ic + ir + MR", m);
      snprintf(i1e, sizeof i1e, "g * %lld + ic + ir + mr", m);
      sb_printf(sb, "                if (pc + KC >= %lld) {\n", k);
      if (in_regs) {
        sb_printf(sb, "                  if (!(mr == %d && nr == NR))\n", v ? er : mr);
        gemm_put_epilogue_call(sb, name, &C->ew, 20, i0, i1e, "jc + jr", "jc + jr + nr");
        sb_puts(sb, "                }\n");
        continue;
      }
      sb_puts(sb, "                  if (mr == MR && nr == NR) {\n");
      gemm_put_epilogue_call(sb, name, &C->ew, 20, i0, i1, "jc + jr", "jc + jr + NR");
      sb_puts(sb, "                  } else {\n");
      gemm_put_epilogue_call(sb, name, &C->ew, 20, i0, i1e, "jc + jr", "jc + jr + nr");
      sb_puts(sb, "                  }\n                }\n");
    }
  }
  if (er) sb_puts(sb, "                }\n");
  sb_puts(sb, "              }\n            }\n          }\n        }\n      }\n    }\n  }\n}\n");
}

/* The same GEMM with the roles swapped (Conv.rows): tiles of MRP pixels
** (A: broadcast) by NR filters (B: vectors) accumulate into the scratch
** ct0, C transposed by panels of NR filters ([panel][pixel][NR]: a
** tile's rows NR floats apart, a panel's block CTN pixels), which after the
** last KC block goes into C and through the epilogue, a panel of filters
** at a time. A's panels: the pixels' KC x MRP blocks, a run of MRP pixels
** of one output row a copy of consecutive floats (or, given sp, the
** pixels packed before over the whole reduction, sp[panel][K][MRP]); B:
** the filter, packed at build time in PB-wide panels or here per block of
** MCP filters. In the micro-kernel's names, rows (mc, ir, MR) are pixels
** and columns (nc, jr, NR) filters. */
/* The transpose's statements at indentation ind: tr_s, tr_d and tr_ds in scope.
** With te, each vector of W pixels of filter j goes through the epilogue
** in registers before its store (row: the C row of filter 0 of the block,
** col: the block's first pixel). */
static void put_transpose_body(StrBuf *sb, int i, int ind, int w, int nr, const TileEpi *te, const char *row,
                               const char *col) {
  const char *v = w == 16 ? "__m512" : "__m256", *pre = w == 16 ? "_mm512" : "_mm256";
  for (int r = 0; r < w; r++) sb_printf(sb, "%*sconst %s tr_r%d = %s_loadu_ps(tr_s + %d);\n", ind, "", v, r, pre, r * nr);
  /* t: pairs of rows interleaved; u[4g + j]: rows 4g..4g+3 of column 4k + j in lane k */
  for (int r = 0; r < w; r += 2) {
    sb_printf(sb, "%*sconst %s tr_t%d = %s_unpacklo_ps(tr_r%d, tr_r%d);\n", ind, "", v, r, pre, r, r + 1);
    sb_printf(sb, "%*sconst %s tr_t%d = %s_unpackhi_ps(tr_r%d, tr_r%d);\n", ind, "", v, r + 1, pre, r, r + 1);
  }
  for (int g = 0; g < w; g += 4) {
    sb_printf(sb, "%*sconst %s tr_u%d = %s_shuffle_ps(tr_t%d, tr_t%d, 0x44);\n", ind, "", v, g, pre, g, g + 2);
    sb_printf(sb, "%*sconst %s tr_u%d = %s_shuffle_ps(tr_t%d, tr_t%d, 0xEE);\n", ind, "", v, g + 1, pre, g, g + 2);
    sb_printf(sb, "%*sconst %s tr_u%d = %s_shuffle_ps(tr_t%d, tr_t%d, 0x44);\n", ind, "", v, g + 2, pre, g + 1, g + 3);
    sb_printf(sb, "%*sconst %s tr_u%d = %s_shuffle_ps(tr_t%d, tr_t%d, 0xEE);\n", ind, "", v, g + 3, pre, g + 1, g + 3);
  }
  if (te) gemm_put_epi_bounds(sb, te->ew, ind);
  /* filter f's vector (the printf arguments after f give it), through
  ** the epilogue with te, stored at tr_d + f * tr_ds */
#define PUT_ROW(f, ...)                                                                               \
  do {                                                                                                \
    sb_printf(sb, "%*s{\n%*s  %s tr_o = ", ind, "", ind, "", v);                                      \
    sb_printf(sb, __VA_ARGS__);                                                                       \
    sb_puts(sb, ";\n");                                                                               \
    if (te) {                                                                                         \
      char rw[96];                                                                                    \
      snprintf(rw, sizeof rw, "%s + %d", row, (f));                                                   \
      gemm_put_epi_vec(sb, i, te, ind + 2, "tr_o", rw, col, NULL);                                    \
    }                                                                                                 \
    sb_printf(sb, "%*s  %s_storeu_ps(tr_d + %d * tr_ds, tr_o);\n%*s}\n", ind, "", pre, (f), ind, ""); \
  } while (0)
  if (w == 8) { /* column j from u[j] (rows 0-3) and u[4 + j] (rows 4-7): lane 0, then lane 1 */
    for (int j = 0; j < 4; j++) {
      PUT_ROW(j, "_mm256_permute2f128_ps(tr_u%d, tr_u%d, 0x20)", j, 4 + j);
      PUT_ROW(4 + j, "_mm256_permute2f128_ps(tr_u%d, tr_u%d, 0x31)", j, 4 + j);
    }
  } else { /* a, b: lanes (0, 2) and (1, 3) of u[j], u[4 + j]; c, e: of u[8 + j], u[12 + j] */
    for (int j = 0; j < 4; j++) {
      sb_printf(sb, "%*s{\n%*s  const __m512 tr_a = _mm512_shuffle_f32x4(tr_u%d, tr_u%d, 0x88), tr_b = _mm512_shuffle_f32x4(tr_u%d, tr_u%d, 0xDD);\n",
                ind, "", ind, "", j, 4 + j, j, 4 + j);
      sb_printf(sb, "%*s  const __m512 tr_c = _mm512_shuffle_f32x4(tr_u%d, tr_u%d, 0x88), tr_e = _mm512_shuffle_f32x4(tr_u%d, tr_u%d, 0xDD);\n",
                ind, "", 8 + j, 12 + j, 8 + j, 12 + j);
      ind += 2;
      PUT_ROW(j, "_mm512_shuffle_f32x4(tr_a, tr_c, 0x88)");
      PUT_ROW(4 + j, "_mm512_shuffle_f32x4(tr_b, tr_e, 0x88)");
      PUT_ROW(8 + j, "_mm512_shuffle_f32x4(tr_a, tr_c, 0xDD)");
      PUT_ROW(12 + j, "_mm512_shuffle_f32x4(tr_b, tr_e, 0xDD)");
      ind -= 2;
      sb_printf(sb, "%*s}\n", ind, "");
    }
  }
#undef PUT_ROW
}

/* NAME_tr_SUF(s, d, ds): a W x W block of the scratch ct0 (W pixels, rows
** NR floats apart, by W filters) into C transposed, d[f * ds + p] =
** s[p * NR + f], in registers (AVX-512 and AVX2; the portable version
** copies floats one at a time): two rounds of unpacks and shuffles
** transpose each 128-bit lane's 4 x 4 blocks, then lane permutes (on
** AVX-512 two rounds of shuffle_f32x4) gather each filter's pixels. The
** scalar copy it replaces took a tenth of MobileNetV2's 160 -> 960 1x1s at
** 7x7 (K = 160: a copy per 10 FMAs of 16 lanes). */
static void put_transpose_fn(StrBuf *sb, int i, const char *name, int w, int nr) {
  lower_put_isa_attrs(sb, i);
  sb_printf(sb, "static inline void %s_tr_%s(const float *restrict tr_s, float *restrict tr_d, int64_t tr_ds) {\n", name,
            lower_isa_suffix(i));
  put_transpose_body(sb, i, 2, w, nr, NULL, NULL, NULL);
  sb_puts(sb, "}\n");
}

/* Whether tiles of 7 pixels that read the input in place (Conv.direct)
** pack it here after all on AVX2 (lpack): a KC block of the pixels at a
** time into ap, shared by every block of filters of the part. The 32 KB
** L1 of AVX2's cores does not hold a block read in place (7 floats a
** line, K lines per tile; at 56x56 a stride that maps to a quarter of
** the sets), and the tiles waited on L2. ResNet-50 on a Zen 3, fastest
** calls at one thread: the 512 -> 2048 1x1s at 7x7 1670 -> 1390 us, the
** 256 -> 1024 at 14x14 1540 -> 1410; at two 810 -> 650 and 720 -> 670.
** AVX-512's wider tiles and larger L1 (48 KB on Zen 5) did best in
** place. The pack's cost per FMA goes as 1 / M: 64 filters (ResNet-50's
** 256 -> 64 at 56x56) lost 7% by it and stay in place. */
static bool rows_lpack(const Conv *C) {
  return C->rows && C->direct && (C->kind == CK_1X1 || C->kind == CK_IM2COL) && C->m >= 128;
}

static void put_gemm_rows(StrBuf *sb, int i, const char *name, const Conv *C) {
  int w, mr, nr;
  gemm_isa_tile(i, &w, &mr, &nr);
  long long m = C->m, k = C->k, np = C->np, hw = C->hp * C->rl;
  bool vec_tr = lower_isa_target(i) != NULL && (w == 8 || w == 16) && nr % w == 0;
  /* The epilogue in registers on the whole blocks where it can be
  ** (gemm_epi_vec_ok), before their stores: not a pass over C after them
  ** (ResNet-50's 256 -> 1024 1x1s with the residual add at 14x14 read and
  ** wrote their 800 KB once more that way: 1-4% of those kernels) */
  bool epi_tr = vec_tr && C->epilogue && gemm_epi_vec_ok(i, &C->ew, C->l_sj);
  if (vec_tr && !epi_tr) put_transpose_fn(sb, i, name, w, nr);
  bool lpack = w == 8 && rows_lpack(C);
  long long ctn = C->np < NCP ? (C->np + MRP - 1) / MRP * MRP : NCP; /* gemm_slot's */
  lower_put_isa_attrs(sb, i);
  sb_printf(sb,
            "static void %s_%s(rlyrt_object *const *args, float *restrict o, float *restrict ap, float *restrict bp, "
            "const float *restrict xp, int32_t *restrict tab, float *restrict ct0, const float *restrict sp, "
            "int64_t q, int64_t g, int64_t j0, int64_t j1, int64_t i0, int64_t i1) {\n",
            name, lower_isa_suffix(i));
  sb_puts(sb, "  (void)ap, (void)bp, (void)xp, (void)tab, (void)sp;\n");
  sb_printf(sb, "  enum { MR = %d, NR = %d, KC = %d, MC = %d, NC = %d, PB = %d };\n", MRP, nr, KC, NCP, MCP, PB);
  put_pointers(sb, C);
  sb_puts(sb, "  (void)xin;\n");
  sb_printf(sb, "  {\n    float *restrict c = o + q * %lld;\n", (long long)(C->oc * np));
  if (C->copied) sb_printf(sb, "    const float *restrict xb = xp + q * %lld;\n", (long long)C->c * hw);
  else sb_printf(sb, "    const float *restrict xb = xin + q * %lld;\n", (long long)(C->c * C->h * C->w));
  sb_puts(sb, "    {\n");
  sb_printf(sb, "      const float *restrict xg = xb + g * %lld;\n", (long long)(C->cg * hw));
  sb_puts(sb, "      (void)xg;\n");
  sb_printf(sb, "      const float *restrict wg = w + g * %lld;\n",
            C->prepacked ? (m + PG - 1) / PG * PG * k : m * k);
  /* blocks of MC pixels (the tiles' rows) */
  sb_puts(sb, "      for (int64_t jc = j0; jc < j1; jc += MC) {\n");
  sb_puts(sb, "        const int64_t mc = j1 - jc < MC ? j1 - jc : MC;\n");
  if (C->kind == CK_IM2COL && (!C->direct || lpack)) {
    put_tables(sb, C, 8, "mc", "MC", true);
  }
  sb_printf(sb, "        for (int64_t pc = 0; pc < %lld; pc += KC) {\n", k);
  sb_printf(sb, "          const int64_t kc = %lld - pc < KC ? %lld - pc : KC;\n", k, k);
  /* the pixels' block into MR-wide panels: ap[panel][l][r]; direct, read
  ** in place: an im2col's reduction rows at offsets offl[l] from the
  ** tile's first pixel */
  if (!C->direct || lpack) put_pack_block(sb, C, "ap", "ir", "mc", "MR");
  else if (C->kind == CK_IM2COL) {
    long long kk = C->kh * C->kw;
    sb_puts(sb, "          int32_t *restrict offl = tab;\n");
    sb_puts(sb, "          for (int64_t l = 0; l < kc; l++) {\n");
    sb_printf(sb, "            const int64_t t = (pc + l) %% %lld, kw = t %% %lld * %lld;\n", kk, (long long)C->kw,
              (long long)C->dw);
    sb_printf(sb, "            offl[l] = (int32_t)((pc + l) / %lld * %lld + t / %lld * %lld + kw %% %lld * %lld + kw / %lld);\n",
              kk, hw, (long long)C->kw, (long long)(C->dh * C->rl), (long long)C->sw, (long long)C->ph,
              (long long)C->sw);
    sb_puts(sb, "          }\n");
  }
  /* blocks of NC filters (the tiles' columns) */
  sb_puts(sb, "          for (int64_t ic = i0; ic < i1; ic += NC) {\n");
  sb_puts(sb, "            const int64_t nc = i1 - ic < NC ? i1 - ic : NC;\n");
  if (!C->prepacked) { /* the filters' block into NR-wide panels: bp[panel][l][x] */
    sb_puts(sb, "            for (int64_t jr = 0; jr < nc; jr += NR) {\n");
    sb_puts(sb, "              float *restrict dst = bp + jr * kc;\n");
    sb_puts(sb, "              for (int64_t x = 0; x < NR; x++) {\n");
    sb_puts(sb, "                if (jr + x < nc) {\n");
    sb_printf(sb, "                  const float *restrict src = wg + (ic + jr + x) * %lld + pc;\n", k);
    sb_puts(sb, "                  for (int64_t l = 0; l < kc; l++) dst[l * NR + x] = src[l];\n");
    sb_puts(sb, "                } else {\n");
    sb_puts(sb, "                  for (int64_t l = 0; l < kc; l++) dst[l * NR + x] = 0;\n");
    sb_puts(sb, "                }\n              }\n            }\n");
  }
  sb_puts(sb, "            for (int64_t jr = 0; jr < nc; jr += NR) {\n");
  if (C->prepacked)
    sb_printf(sb, "              const float *restrict pb = wg + pc * %lld + (ic + jr) / PB * kc * PB + (ic + jr) %% PB;\n",
              (m + PG - 1) / PG * PG);
  else sb_puts(sb, "              const float *restrict pb = bp + jr * kc;\n");
  sb_puts(sb, "              for (int64_t ir = 0; ir < mc; ir += MR) {\n");
  if (lpack) sb_puts(sb, "                const float *restrict pa = ap + ir * kc;\n");
  else if (C->direct && C->kind == CK_IM2COL)
    sb_printf(sb, "                const float *restrict pa = xg + (jc + ir) / %lld * %lld + (jc + ir) %% %lld;\n",
              (long long)C->ow, (long long)(C->sh * C->rl), (long long)C->ow);
  else if (C->direct) sb_printf(sb, "                const float *restrict pa = xg + pc * %lld + jc + ir;\n", np);
  else sb_printf(sb, "                const float *restrict pa = sp ? sp + (jc + ir) * %lld + pc * MR : ap + ir * kc;\n", k);
  sb_printf(sb, "                float *restrict ct = ct0 + (ic - i0 + jr) * %lld + ir * NR;\n", ctn);
  const char *kpre = NULL;
  /* the run of panels a tile reads (AVX-512's two of 16 filters) or
  ** shares (portable tiles of 8 filters) */
  int run = nr > PB ? nr : PB;
  if (C->prepacked && run % PB == 0 && run % nr == 0) {
    /* The filter streams from memory, each panel's KC rows read by few
    ** tiles (7 at 7x7): while its tiles run, the next panel's lines go
    ** into L2, a share per tile (the whole panel would not fit in L1
    ** beside the one in use), spread over the tile's k steps: one line
    ** every ps steps. A burst of them before the tile (73 lines at 7x7)
    ** filled the core's miss buffers and stalled it: ResNet-50's 7x7
    ** layers ran 30% slower. Lines beyond one a step go before the tile.
    ** A tile of two panels (AVX-512's 32 filters) prefetches the next two;
    ** tiles narrower than the panel (portable: 8 filters of 16) each take
    ** their share of the next panel's lines (AVX2's 16 filters of 32,
    ** when the panels were 32 wide: a Zen 3's 7x7 1x1s ran 20% slower with
    ** no prefetch). */
    sb_puts(sb, "                const float *pf = NULL;\n");
    sb_puts(sb, "                int64_t pfl = 0, pfi = 0, pfk = 0, ps = 1;\n");
    sb_printf(sb, "                if ((ic + jr) / %d * %d + %d < i1) {\n", run, run, run);
    sb_puts(sb, "                  const int64_t nl = kc * NR / 16, nt = (mc + MR - 1) / MR, ti = ir / MR;\n");
    sb_printf(sb, "                  pf = pb - (ic + jr) %% %d + kc * %d + (ic + jr) %% %d / NR * nl * 16 + ti * nl / nt * 16;\n",
              run, run, run);
    sb_puts(sb, "                  pfl = (ti + 1) * nl / nt - ti * nl / nt;\n");
    sb_puts(sb, "                  for (; pfl - pfi > kc; pfi++) __builtin_prefetch(pf + pfi * 16, 0, 2);\n");
    sb_puts(sb, "                  if (pfl > pfi) ps = kc / (pfl - pfi);\n");
    sb_puts(sb, "                }\n");
    kpre = "if (l == pfk && pfi < pfl) { __builtin_prefetch(pf + pfi * 16, 0, 2); pfi++; pfk += ps; }";
  }
  /* A 1x1 read in place: the first panel of a block of the reduction (of
  ** this part's filters) is the first to read the input, whose lines the
  ** tiles reach a few at a time, each row of the reduction in a line of
  ** its own; where another core wrote them (at 2 threads, half of the
  ** input), each was a transfer between the cores that the core waited
  ** for. So that panel's tiles prefetch the next tile's lines (its last
  ** pixel in each row: a line the tile does not read already is the one
  ** with that pixel), one a step; the other panels prefetch the line they
  ** read (no cost to measure). A chain of 4 1x1s at 14x14 (1024 -> 256
  ** and back, bench/models/chain1x1.py), per kernel at 2 threads: the
  ** 1024 -> 256 reading what both threads wrote 340-360 -> 280-315 us. */
  char kpre_in[512];
  if (C->direct && C->kind == CK_1X1 && !lpack) {
    sb_puts(sb, "                const int64_t pfo = jr == 0 && ic == i0 && ir + MR < mc ? 2 * MR - 1 : 0;\n");
    snprintf(kpre_in, sizeof kpre_in, "%s%s__builtin_prefetch(pa + l * %lld + pfo, 0, 3);", kpre ? kpre : "",
             kpre ? " " : "", np);
    kpre = kpre_in;
  }
  char a_step[24];
  if (C->direct && C->kind == CK_IM2COL && !lpack) snprintf(a_step, sizeof a_step, "offl[l]");
  else snprintf(a_step, sizeof a_step, "%lld", C->direct && !lpack ? np : (long long)MRP);
  gemm_put_tile_rows(sb, i, name, 16, MRP, a_step, C->prepacked ? "PB" : "NR", C->prepacked ? PB : 0, nr, NULL,
                     false, kpre);
  sb_puts(sb, "              }\n");
  /* the panel's filters are final: into C, then the epilogue */
  sb_printf(sb, "              if (pc + KC >= %lld) {\n", k);
  sb_puts(sb, "                const int64_t nf = nc - jr < NR ? nc - jr : NR;\n");
  if (vec_tr) { /* whole W x W blocks in registers, the rest one at a time */
    sb_printf(sb, "                const int64_t pv = mc / %d * %d, fv = nf / %d * %d;\n", w, w, w, w);
    sb_printf(sb, "                for (int64_t tp0 = 0; tp0 < pv; tp0 += %d)\n", w);
    sb_printf(sb, "                  for (int64_t tf0 = 0; tf0 < fv; tf0 += %d)%s\n", w, epi_tr ? " {" : "");
    if (epi_tr) {
      sb_printf(sb, "                    const float *restrict tr_s = ct0 + (ic - i0 + jr) * %lld + tp0 * NR + tf0;\n", ctn);
      sb_printf(sb, "                    float *restrict tr_d = c + (g * %lld + ic + jr + tf0) * %lld + jc + tp0;\n", m, np);
      sb_printf(sb, "                    const int64_t tr_ds = %lld;\n", np);
      char row[64];
      snprintf(row, sizeof row, "g * %lld + ic + jr + tf0", m);
      TileEpi te = {&C->ew, C->l_sq, C->l_si, C->l_sj, row, "jc + tp0", C->k};
      put_transpose_body(sb, i, 20, w, nr, &te, row, "jc + tp0");
      sb_puts(sb, "                  }\n");
    } else
      sb_printf(sb, "                    %s_tr_%s(ct0 + (ic - i0 + jr) * %lld + tp0 * NR + tf0, c + (g * %lld + ic + jr + tf0) * %lld + jc + tp0, %lld);\n",
                name, lower_isa_suffix(i), ctn, m, np, np);
  } else sb_puts(sb, "                const int64_t pv = 0, fv = 0;\n");
  sb_puts(sb, "                for (int64_t f = 0; f < nf; f++) {\n");
  sb_printf(sb, "                  float *restrict cr = c + (g * %lld + ic + jr + f) * %lld + jc;\n", m, np);
  sb_printf(sb, "                  const float *restrict tr = ct0 + (ic - i0 + jr) * %lld + f;\n", ctn);
  sb_puts(sb, "                  for (int64_t px = f < fv ? pv : 0; px < mc; px++) cr[px] = tr[px * NR];\n");
  sb_puts(sb, "                }\n");
  if (epi_tr) { /* the rest: filters [0, fv) past pixel pv, filters [fv, nf) */
    char i0[48], i1[64], i2[64];
    snprintf(i0, sizeof i0, "g * %lld + ic + jr", m);
    snprintf(i1, sizeof i1, "g * %lld + ic + jr + fv", m);
    snprintf(i2, sizeof i2, "g * %lld + ic + jr + nf", m);
    sb_puts(sb, "                if (pv < mc && fv > 0)\n");
    gemm_put_epilogue_call(sb, name, &C->ew, 18, i0, i1, "jc + pv", "jc + mc");
    sb_puts(sb, "                if (fv < nf)\n");
    gemm_put_epilogue_call(sb, name, &C->ew, 18, i1, i2, "jc", "jc + mc");
  } else if (C->epilogue) {
    char i0[48], i1[64];
    snprintf(i0, sizeof i0, "g * %lld + ic + jr", m);
    snprintf(i1, sizeof i1, "g * %lld + ic + jr + nf", m);
    gemm_put_epilogue_call(sb, name, &C->ew, 16, i0, i1, "jc", "jc + mc");
  }
  sb_puts(sb, "              }\n");
  sb_puts(sb, "            }\n          }\n        }\n      }\n    }\n  }\n}\n");
}

/* Whether the problem is a 1x1 at a stride, read from a compact copy. */
static bool conv_sub(const Conv *C) {
  return C->kind == CK_1X1 && C->copied;
}

/* Whether a tap reads column phase f of the zero-bordered copy. */
static bool phase_read(const Conv *C, int64_t f) {
  for (int64_t b = 0; b < C->kw; b++)
    if (b * C->dw % C->sw == f) return true;
  return false;
}

/* The zero-bordered copy of the input (Conv.copied) for the GEMMs:
** NAME_copy(args, xp, r0, r1) writes the padded rows [r0, r1) of every
** batch's planes, counted as one array of N * C * HP rows of RL floats,
** so that parts of rows write disjoint floats (a 1x1 at a stride,
** conv_sub: HP = OH rows of RL = OW floats, the pixels under the outputs,
** nothing else). Only what the packing
** reads: a row under no tap (1x1 at a stride: rows oh * SH) is left as it
** is, and in the others the column phases no tap reads; of the rest, the
** input's floats are copied and the borders (a row out of the input: all
** of it) are zeroed. The packing reads a window's taps only, all inside
** the padded rows, so it never reads what is left. */
static void put_copy_fn(StrBuf *sb, const char *name, const Conv *C) {
  long long hp = C->hp, rl = C->rl, ph = C->ph, pt = C->pt, h = C->h, w = C->w, pl = C->pl, sw = C->sw;
  /* at a stride, the copy into phases reads every SW-th float */
  sb_printf(sb, "RLYRT_VEC_STRIDED static void %s_copy(rlyrt_object *const *args, float *restrict xp, int64_t r0, "
                "int64_t r1) {\n", name);
  sb_printf(sb, "  const float *restrict xin = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", C->px);
  sb_puts(sb, "  for (int64_t r = r0; r < r1; r++) {\n");
  sb_printf(sb, "    const int64_t p = r / %lld, a = r %% %lld;\n", hp, hp);
  if (conv_sub(C)) { /* output row a: input row a * SH, every SW-th float */
    sb_printf(sb, "    const float *restrict s = xin + p * %lld + a * %lld;\n", h * w, (long long)C->sh * w);
    sb_printf(sb, "    float *restrict dp = xp + r * %lld;\n", rl);
    if (sw == 1) sb_printf(sb, "    memcpy(dp, s, %lld);\n", rl * 4);
    else sb_printf(sb, "    for (int64_t cx = 0; cx < %lld; cx++) dp[cx] = s[cx * %lld];\n", rl, sw);
    sb_puts(sb, "  }\n}\n");
    return;
  }
  if (C->kh == 1 && C->sh > 1)
    sb_printf(sb, "    if (a %% %lld || a / %lld >= %lld) continue;\n", (long long)C->sh, (long long)C->sh,
              (long long)C->oh);
  sb_printf(sb, "    float *restrict dp = xp + p * %lld + a * %lld;\n", hp * rl, rl);
  sb_printf(sb, "    const int64_t ih = a - %lld;\n", pt);
  sb_printf(sb, "    if (ih < 0 || ih >= %lld) {\n", h);
  sb_printf(sb, "      memset(dp, 0, %lld);\n", rl * 4);
  sb_puts(sb, "      continue;\n    }\n");
  sb_printf(sb, "    const float *restrict s = xin + p * %lld + ih * %lld;\n", h * w, w);
  /* phase f holds the padded columns t * SW + f: input columns t * SW + f - PL, t in [t0, t1] */
  for (long long f = 0; f < sw; f++) {
    if (!phase_read(C, f)) continue;
    long long t0 = pl - f > 0 ? (pl - f + sw - 1) / sw : 0, t1 = (w - 1 + pl - f) / sw;
    if (w - 1 + pl - f < 0 || t0 > t1) {
      sb_printf(sb, "    memset(dp + %lld, 0, %lld);\n", f * ph, ph * 4);
      continue;
    }
    if (t0 > 0) sb_printf(sb, "    memset(dp + %lld, 0, %lld);\n", f * ph, t0 * 4);
    if (t1 + 1 < ph) sb_printf(sb, "    memset(dp + %lld, 0, %lld);\n", f * ph + t1 + 1, (ph - t1 - 1) * 4);
    if (sw == 1) {
      sb_printf(sb, "    memcpy(dp + %lld, s + %lld, %lld);\n", t0, t0 - pl, (t1 - t0 + 1) * 4);
    } else {
      sb_printf(sb, "    for (int64_t cx = %lld; cx <= %lld; cx++) dp[%lld + cx] = s[cx * %lld - %lld];\n", t0, t1,
                f * ph, sw, pl - f);
    }
  }
  sb_puts(sb, "  }\n}\n");
}

/* The pixel operand packed once for all the blocks of filters (threads:
** put_kernel): NAME_pack(args, xp, sp, tab, q, g, c0, c1) copies the
** input channels [c0, c1) of batch q, group g (Conv.copied: their planes
** with zero borders, which only these reduction rows read) and packs the
** reduction rows [c0 * KH * KW, c1 * KH * KW) of every pixel into sp (the
** group's), sp[panel][K][wd], wd = PW (NR_MAX) pixels or MRP (Conv.rows),
** zero past the last pixel: the layout of a filter packed at build time,
** which the micro-kernels read at pc * wd. */
static void put_pack_fn(StrBuf *sb, const char *name, const Conv *C) {
  long long np = C->np, k = C->k, hw = C->hp * C->rl, kk = C->kh * C->kw;
  const char *ix = C->rows ? "ir" : "jr", *lim = C->rows ? "mc" : "nc", *wd = C->rows ? "MR" : "PW";
  int width = C->rows ? MRP : NR_MAX;
  sb_printf(sb,
            "static void %s_pack(rlyrt_object *const *args, float *restrict xp, float *restrict sp, int32_t *restrict "
            "tab, int64_t q, int64_t g, int64_t c0, int64_t c1) {\n",
            name);
  sb_printf(sb, "  enum { %s = %d, NB = %d };\n", wd, width, NC / width * width);
  sb_puts(sb, "  (void)xp, (void)tab;\n");
  sb_printf(sb, "  const float *restrict xin = (const float *)RLYRT_AS_TENSOR(args[%d])->dl.data;\n", C->px);
  sb_puts(sb, "  (void)xin;\n");
  if (C->copied) {
    long long p0 = C->c, hp = C->hp;
    sb_printf(sb, "  %s_copy(args, xp, (q * %lld + g * %lld + c0) * %lld, (q * %lld + g * %lld + c1) * %lld);\n", name,
              p0, (long long)C->cg, hp, p0, (long long)C->cg, hp);
    sb_printf(sb, "  const float *restrict xg = xp + q * %lld + g * %lld;\n", (long long)C->c * hw,
              (long long)C->cg * hw);
  } else {
    sb_printf(sb, "  const float *restrict xg = xin + q * %lld + g * %lld;\n", (long long)(C->c * C->h * C->w),
              (long long)(C->cg * C->h * C->w));
  }
  sb_printf(sb, "  for (int64_t jc = 0; jc < %lld; jc += NB) {\n", np);
  sb_printf(sb, "    const int64_t %s = %lld - jc < NB ? %lld - jc : NB;\n", lim, np, np);
  if (C->kind == CK_IM2COL) put_tables(sb, C, 4, lim, "NB", false);
  sb_printf(sb, "    for (int64_t l = c0 * %lld; l < c1 * %lld; l++) {\n", kk, kk);
  put_pack_src(sb, C, 6, "l");
  sb_printf(sb, "      for (int64_t %s = 0; %s < %s; %s += %s) {\n", ix, ix, lim, ix, wd);
  sb_printf(sb, "        float *restrict d = sp + (jc + %s) * %lld + l * %s;\n", ix, k, wd);
  put_pack_copy(sb, C, 8, ix, lim, wd);
  sb_puts(sb, "      }\n    }\n  }\n}\n");
}

static void put_ops(StrBuf *sb, const Group *g) {
  bool first = true;
  for (int i = 0; i < g->nnodes; i++) {
    if (!g->nodes[i].live || g->nodes[i].kind != GN_CALL) continue;
    sb_printf(sb, "%s%s", first ? "" : ", ", g->nodes[i].op->name);
    first = false;
  }
}

/* A GEMM's scratch per thread, in floats: A's panels, B's, the im2col
** tables and (Conv.rows) the block of C transposed. */
static void gemm_slot(const Conv *C, int64_t *ap, int64_t *bp, int64_t *tab, int64_t *ct) {
  int64_t kc = C->k < KC ? C->k : KC;
  *tab = C->kind == CK_IM2COL ? 2 * NC : 0;
  if (C->rows) {
    int64_t nc = C->np < NCP ? (C->np + MRP - 1) / MRP * MRP : NCP;
    int64_t mc = C->m < MCP ? (C->m + PG - 1) / PG * PG : MCP;
    *ap = C->direct && !rows_lpack(C) ? 0 : nc * kc;
    *bp = C->prepacked ? 0 : mc * kc;
    *ct = nc * ((C->m + PG - 1) / PG * PG); /* the filters as padded */
  } else {
    int64_t mc = C->m < MC ? (C->m + C->pa - 1) / C->pa * C->pa : MC;
    int64_t nc = C->np < NC ? (C->np + NR_MAX - 1) / NR_MAX * NR_MAX : NC;
    *ap = C->prepacked ? 0 : mc * kc;
    *bp = nc * kc;
    *ct = 0;
  }
}

/* The GEMM function's arguments. */
static const char *gemm_args(const Conv *C) {
  return C->rows ? "args, o, ap, bp, xp, tab, ct, sp, q, g, j0, j1, i0, i1"
                 : "args, o, ap, bp, xp, tab, sp, q, g, j0, j1, i0, i1";
}

/* The shared packing of the pixels (NAME_pack): the most scratch it takes,
** and the fewest blocks of filters sharing a block of pixels for which it
** is done (with 2, ResNet-18's 28x28 stride-2 layer measured no faster:
** the GEMMs then read half the pixels from the other core's cache). */
enum { SP_MAX_BYTES = 16 << 20, SP_MIN_SHARERS = 3 };

/* The pixel operand packed over the whole reduction (NAME_pack), in floats:
** per batch and group (a multiple of 16), and in all; 0 when over
** SP_MAX_BYTES (the blocks of filters then pack their own). */
static int64_t sp_group(const Conv *C) {
  int64_t wd = C->rows ? MRP : NR_MAX;
  return ((C->np + wd - 1) / wd * wd * C->k + 15) / 16 * 16;
}

/* Whether the zero-bordered copy of the input splits over threads (by
** rows: NAME_copy_item) when the GEMM does. */
static bool copy_par(const Conv *C) {
  return C->kind != CK_DW && C->copied &&
         lower_par_worth((double)C->n * (double)C->c * (double)C->hp * (double)C->rl, LOWER_PAR_MIN_ELEMS);
}

static int64_t sp_total(const Conv *C) {
  if (C->kind == CK_DW || C->kind == CK_DIRECT || C->direct) return 0;
  double all = (double)C->n * (double)C->groups * (double)sp_group(C);
  return all * 4 > SP_MAX_BYTES ? 0 : (int64_t)all;
}

/* A part of the work as an item of rlyrt_parallel_for: NAME_job says how
** the result is split, NAME_task(J, i, slot) computes part i with the
** scratch of its slot. Depthwise: planes [i * step, ...); GEMMs: part i of
** (batch, group, block of pixels, block of filters). */
/* The parts of a GEMM convolution balanced among the threads (the code
** inside `if (nt > 1)`, after cstep, cp, rstep and rp are set): a part is
** a block of pixel tiles (pe pixels each) by a block of filter tiles (fe
** filters each), and the threads take parts in ranges, so the slowest
** thread does about ceil(parts / nt) of the largest part. Every split into
** at most max(parts, 4 * nt) parts is weighed by that measure in tiles,
** and one that measures less (or, where the parts do not divide evenly
** among the threads, as much in fewer parts) replaces it; where they do,
** only splits into as many parts are weighed. MobileNetV2's 14x14
** projections (96 filters: 3 blocks of 32 on 2 threads, one thread doing
** two) split their 28 tiles of pixels in two instead (125 -> 95 us at 2
** threads); 320 filters at 7x7 in blocks of 64 (5 parts) go by 32 (10
** parts: 134 -> 117 us). ResNet-50's 28x28 layers of 512 filters made 4
** blocks of 7, 7, 7 and 4 tiles of 32 pixels by 2 of filters, 14 tiles
** on one thread and 11 on the other; now 2 blocks of 13 and 12 by 4 of
** filters (on a Zen 5 at 2 threads, 7-10% faster each: 641 -> 592 us, 329
** -> 291; splits into fewer parts had made the 56x56 layers 10% slower).
** The blocks stay multiples of the tiles and each output's sum runs over
** the same reduction in the same order, so the bits do not change. */
static void put_balance(StrBuf *sb, const Conv *C, long long nqg, long long frows, int pe, int fe) {
  long long pu = (C->np + pe - 1) / pe;
  sb_puts(sb, "    {\n");
  sb_printf(sb, "      const int64_t n0 = %lld * cp * rp, lim = n0 > 4 * nt ? n0 : 4 * nt, uneven = n0 %% nt != 0;\n", nqg);
  sb_printf(sb, "      int64_t best = (n0 + nt - 1) / nt * (cstep / %d) * (rstep / %d), bn = n0;\n", pe, fe);
  if (C->m > C->np) {
    /* more filters than pixels: the filters are most of what a part reads
    ** (MobileNetV2's 960 -> 160 at 7x7 took 69 -> 84 us split by pixels, each
    ** thread reading the whole filter): the blocks of pixels stay */
    sb_printf(sb, "      for (int64_t a = 0; a < 1; a++) {\n");
    sb_printf(sb, "        const int64_t cs = cstep / %d, ca = cp;\n", pe);
  } else {
    sb_printf(sb, "      for (int64_t a = 1; a <= %lld && a <= lim; a++) {\n", pu);
    sb_printf(sb, "        const int64_t cs = (%lld + a - 1) / a, ca = (%lld + cs - 1) / cs;\n", pu, pu);
  }
  sb_printf(sb, "        for (int64_t b = 1; b <= %lld; b++) {\n", frows);
  sb_printf(sb, "          const int64_t rs = (%lld + b - 1) / b, n = %lld * ca * ((%lld + rs - 1) / rs);\n", frows,
            nqg, frows);
  sb_puts(sb, "          if (n > lim) break;\n");
  sb_puts(sb, "          if (!uneven && n != n0) continue;\n");
  sb_puts(sb, "          const int64_t e = (n + nt - 1) / nt * cs * rs;\n");
  sb_puts(sb, "          if (e < best || (e == best && n < bn && uneven)) {\n");
  sb_printf(sb, "            best = e, bn = n, cstep = cs * %d, rstep = rs * %d;\n", pe, fe);
  sb_printf(sb, "            cp = (%lld + cstep - 1) / cstep, rp = (%lld + rstep - 1) / rstep;\n", (long long)C->np,
            (long long)C->m);
  sb_puts(sb, "          }\n        }\n      }\n    }\n");
}

/* The parts of the depthwise and direct kernels: planes; blocks of output
** rows of each image. */
static int64_t plane_parts(const Conv *C) {
  return C->kind == CK_DW ? C->n * C->c : C->n * ((C->oh + direct_rb(C) - 1) / direct_rb(C));
}

static void put_task(StrBuf *sb, const char *name, const Conv *C) {
  if (C->kind == CK_DW || C->kind == CK_DIRECT) {
    int64_t slot = C->kind == CK_DW ? (C->hp * C->rl + 16 + 15) / 16 * 16 : direct_slot(C);
    sb_printf(sb, "typedef struct %s_job {\n  rlyrt_object *const *args;\n  float *o, *xp;\n  int64_t step;\n} %s_job;\n",
              name, name);
    sb_printf(sb, "static void %s_task(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
    sb_printf(sb, "  rlyrt_object *const *args = J->args;\n  float *o = J->o, *xp = J->xp + slot * %lld;\n",
              (long long)slot);
    sb_printf(sb, "  const int64_t p0 = i * J->step, p1 = p0 + J->step < %lld ? p0 + J->step : %lld;\n",
              (long long)plane_parts(C), (long long)plane_parts(C));
    lower_put_isa_call_in(sb, name, "args, o, xp, p0, p1", C->isas);
    sb_puts(sb, "}\n");
    return;
  }
  int64_t ap, bp, tab, ct;
  gemm_slot(C, &ap, &bp, &tab, &ct);
  int64_t slot = ap + bp + tab + ct;
  long long spg = sp_group(C), qgs = C->groups;
  sb_printf(sb,
            "typedef struct %s_job {\n  rlyrt_object *const *args;\n  float *o, *ap, *bp, *xp%s, *sp;\n  int32_t *tab;\n"
            "  int64_t cstep, cp, rstep, rp, step, cc;\n} %s_job;\n",
            name, C->rows ? ", *ct" : "", name);
  sb_printf(sb, "static void %s_task(void *ctx, int64_t i, int32_t slot) {\n", name);
  sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
  sb_printf(sb, "  rlyrt_object *const *args = J->args;\n  float *o = J->o, *xp = J->xp;\n");
  sb_printf(sb, "  float *ap = J->ap ? J->ap + slot * %lld : NULL, *bp = J->bp + slot * %lld;\n", (long long)slot,
            (long long)slot);
  sb_printf(sb, "  int32_t *tab = J->tab ? (int32_t *)(J->tab + slot * %lld) : NULL;\n", (long long)slot);
  if (C->rows) sb_printf(sb, "  float *ct = J->ct + slot * %lld;\n", (long long)slot);
  sb_puts(sb, "  const int64_t r = i % J->rp, cb = i / J->rp % J->cp, qg = i / J->rp / J->cp;\n");
  sb_printf(sb, "  const int64_t q = qg / %lld, g = qg %% %lld;\n", qgs, qgs);
  sb_printf(sb, "  const float *sp = J->sp ? J->sp + qg * %lld : NULL;\n", spg);
  sb_printf(sb, "  const int64_t j0 = cb * J->cstep, j1 = j0 + J->cstep < %lld ? j0 + J->cstep : %lld;\n",
            (long long)C->np, (long long)C->np);
  sb_printf(sb, "  const int64_t i0 = r * J->rstep, i1 = i0 + J->rstep < %lld ? i0 + J->rstep : %lld;\n",
            (long long)C->m, (long long)C->m);
  lower_put_isa_call_in(sb, name, gemm_args(C), C->isas);
  sb_puts(sb, "}\n");
  /* the zero-bordered copy by rows (NAME_copy), [i * step, ...) */
  if (copy_par(C)) {
    long long rows = C->n * C->c * C->hp;
    sb_printf(sb, "static void %s_copy_item(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n  (void)slot;\n", name, name);
    sb_printf(sb, "  const int64_t r0 = i * J->step, r1 = r0 + J->step < %lld ? r0 + J->step : %lld;\n", rows, rows);
    sb_printf(sb, "  %s_copy(J->args, J->xp, r0, r1);\n}\n", name);
  }
  /* the shared packing (NAME_pack): item i, channels [cb * step, ...) of
  ** batch and group qg */
  if (sp_total(C)) {
    long long cg = C->cg;
    sb_printf(sb, "static void %s_pack_item(void *ctx, int64_t i, int32_t slot) {\n", name);
    sb_printf(sb, "  const %s_job *J = (const %s_job *)ctx;\n", name, name);
    sb_printf(sb, "  int32_t *tab = J->tab ? (int32_t *)(J->tab + slot * %lld) : NULL;\n", (long long)slot);
    sb_puts(sb, "  const int64_t qg = i / J->cc, c0 = i % J->cc * J->step;\n");
    sb_printf(sb, "  const int64_t c1 = c0 + J->step < %lld ? c0 + J->step : %lld;\n", cg, cg);
    sb_printf(sb, "  %s_pack(J->args, J->xp, J->sp + qg * %lld, tab, qg / %lld, qg %% %lld, c0, c1);\n}\n", name, spg,
              qgs, qgs);
  }
}

/* The source position of the kernel's errors: the string where, or (sub:
** a part of put_kernel_alt's kernel) the parameter rly_w. */
static void put_where(StrBuf *sb, const char *where, bool sub) {
  if (sub) sb_puts(sb, "rly_w");
  else lower_put_cstring(sb, where ? where : "");
}

static void put_kernel(StrBuf *sb, const char *name, const Conv *C, const char *where, bool sub) {
  const Group *g = C->g;
  const Type *res = g->nodes[g->nnodes - 1].call->type;
  sb_puts(sb, "/* ");
  put_ops(sb, g);
  sb_printf(sb, ": %s float32%s, %lld x %lld x [%lld x %lld] x %lld, %lldx%lld stride %lldx%lld pad %lld %lld %lld %lld%s */\n",
            kind_names[C->kind],
            C->prepacked ? (C->rows ? (C->alt ? " (tiles of 7 pixels; on AVX2 of 16 pixels; filter packed at build time twice)"
                                              : " (tiles of 7 pixels; filter packed at build time)")
                                    : " (filter packed at build time)")
                         : (C->rows ? " (tiles of 7 pixels)" : ""),
            (long long)C->n,
            (long long)C->groups, (long long)C->m, (long long)C->np, (long long)C->k, (long long)C->kh,
            (long long)C->kw, (long long)C->sh, (long long)C->sw, (long long)C->pt, (long long)C->pl, (long long)C->pb,
            (long long)C->pr, C->epilogue ? ", elementwise epilogue" : "");
  lower_put_isa_preamble(sb);
  lower_put_threads_preamble(sb);
  if (C->isas >> isa_named("base") & 1) gemm_put_v4(sb, name, true);
  if (C->epilogue) gemm_put_epilogue_fn(sb, name, &C->ew, C->l_sq, C->l_si, C->l_sj, C->np);
  for (int i = 0; i < lower_isa_count(); i++) {
    if (!(C->isas >> i & 1)) continue;
    lower_put_isa_if(sb, i);
    if (C->kind == CK_DW) put_dw(sb, i, name, C);
    else if (C->kind == CK_DIRECT) put_direct(sb, i, name, C);
    else if (C->rows) put_gemm_rows(sb, i, name, C);
    else put_gemm(sb, i, name, C);
    sb_puts(sb, "#endif\n");
  }
  if (C->kind != CK_DW && C->copied) put_copy_fn(sb, name, C);
  if (sp_total(C)) put_pack_fn(sb, name, C);
  put_task(sb, name, C);
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out%s) {\n", name,
            sub ? ", const char *rly_w" : "");
  sb_puts(sb, "  static const int64_t shape[4] = {");
  for (int d = 0; d < 4; d++) sb_printf(sb, "%s%lld", d ? ", " : "", (long long)res->u.tensor.shape[d]);
  sb_puts(sb, "};\n");
  sb_puts(sb, "  rlyrt_tensor *t = *out ? RLYRT_AS_TENSOR(*out) : rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 4, "
              "shape, false);\n");
  sb_puts(sb, "  if (!t) return rlyrt_error_at(RLYRT_E_NOMEM, ");
  put_where(sb, where, sub);
  sb_puts(sb, ");\n");
  /* Threads: parts of the result (planes; blocks of pixels and filters)
  ** on rlyrt_parallel_for, each computed as without threads (the same
  ** bits), each thread with its own scratch (slot). Depthwise does few
  ** FLOPs per element it touches (each plane copied, then its outputs),
  ** so it counts those, as an elementwise kernel would: MobileNetV2's
  ** 14x14 and 7x7 ones (under 2M FLOPs, each longer than a thread's
  ** wake-up) split too. */
  bool par = C->kind == CK_DW ? lower_par_worth((double)C->n * (double)C->c * (double)(C->hp * C->rl + C->m * C->np),
                                                LOWER_PAR_MIN_ELEMS)
                              : lower_par_worth(2.0 * (double)C->n * (double)C->oc * (double)C->np * (double)C->k,
                                                LOWER_PAR_MIN_FLOPS);
  if (par) sb_puts(sb, "  const int32_t nt = RLYRT_KERNEL_THREADS;\n");
  else sb_puts(sb, "  const int32_t nt = 1;\n");
  /* the scratch: one allocation, the shared part, nt slots, then (threads,
  ** GEMMs) the pixels packed once for all blocks of filters */
  int64_t shared = 0, slot = 0, spn = 0;
  StrBuf parts = {0};
  /* the tiles' edges: pixels, filters */
  int pe = C->rows ? MRP : NR_MAX, fe = C->rows ? PG : C->pa;
  long long m = C->m, np = C->np, frows = (C->m + fe - 1) / fe, nqg = C->n * C->groups;
  if (C->kind == CK_DW || C->kind == CK_DIRECT) {
    /* 16 floats of slack: a vector past the last row */
    slot = C->kind == CK_DW ? (C->hp * C->rl + 16 + 15) / 16 * 16 : direct_slot(C);
    sb_puts(&parts, "  float *xp = (float *)ws;\n");
  } else {
    int64_t ap, bp, tab, ct;
    gemm_slot(C, &ap, &bp, &tab, &ct);
    shared = C->copied ? (C->n * C->c * C->hp * C->rl + 15) / 16 * 16 : 0;
    slot = ap + bp + tab + ct;
    spn = sp_total(C);
    sb_printf(&parts, "  float *xp = %s;\n", shared ? "(float *)ws" : "NULL");
    /* slot 0 (slot s: s * SLOT floats further): A's panels, B's, the
    ** tables, C's block transposed */
    if (!ap) sb_printf(&parts, "  float *ap = NULL, *bp = (float *)ws + %lld;\n", (long long)shared);
    else sb_printf(&parts, "  float *ap = (float *)ws + %lld, *bp = ap + %lld;\n", (long long)shared, (long long)ap);
    if (tab) sb_printf(&parts, "  int32_t *tab = (int32_t *)(bp + %lld);\n", (long long)bp);
    else sb_puts(&parts, "  int32_t *tab = NULL;\n");
    if (C->rows) sb_printf(&parts, "  float *ct = bp + %lld;\n", (long long)(bp + tab));
    if (spn) sb_puts(&parts, "  float *sp = spn ? (float *)ws + spo : NULL;\n");
    else sb_puts(&parts, "  float *sp = NULL;\n");
    /* Threads: blocks of pixels of at least 256 (at least one per thread
    ** where there are fewer filters than pixels), then blocks of filters
    ** (multiples of the tiles), to make about 4 parts per thread. Where
    ** that splits the filters (small images), the blocks of one block of
    ** pixels would each pack the same pixels: from SP_MIN_SHARERS blocks
    ** on, they are packed once instead, over the whole reduction (NAME_pack, in parts of input
    ** channels), before the GEMMs (NAME_task) read them. */
    sb_printf(sb, "  int64_t cstep = %lld, cp = 1, rstep = %lld, rp = 1;\n", np, m);
    sb_puts(sb, "  if (nt > 1) {\n");
    sb_printf(sb, "    cp = (%lld + 255) / 256;\n", np);
    /* A filter smaller than the input (fewer filters than pixels): each
    ** thread its own pixels first, so that it reads half the input rather
    ** than all of it (MobileNetV2's 384 -> 64 at 14x14, 2 blocks of 32
    ** filters: 78 -> 58 us at 2 threads) */
    if (C->m < C->np) sb_puts(sb, "    if (cp < nt) cp = nt;\n");
    sb_puts(sb, "    if (cp > 4 * nt) cp = 4 * nt;\n");
    sb_printf(sb, "    cstep = ((%lld + cp - 1) / cp + %d) / %d * %d;\n", np, pe - 1, pe, pe);
    sb_printf(sb, "    cp = (%lld + cstep - 1) / cstep;\n", np);
    /* Tiles of 7 pixels with at least as many filters as pixels (the 7x7
    ** and 14x14 layers, whose filters stream from memory): one part per
    ** thread, so that a thread streams one run of panels, each announced
    ** by the one before it (put_gemm_rows), where 4 parts each started
    ** cold; ResNet-18's and ResNet-50's 7x7 layers 10-15% faster at 2
    ** threads. (The GEMMs of 12 x 32 tiles lost as much that way:
    ** ResNet-50's 256 -> 1024 at 14x14.) Otherwise about 4 per thread. */
    sb_printf(sb, "    rp = (%d * nt + %lld * cp - 1) / (%lld * cp);\n", C->rows && C->m >= C->np ? 1 : 4, nqg, nqg);
    sb_printf(sb, "    if (rp > %lld) rp = %lld;\n", frows, frows);
    sb_printf(sb, "    rstep = (%lld + rp - 1) / rp * %d;\n", frows, fe);
    sb_printf(sb, "    rp = (%lld + rstep - 1) / rstep;\n", m);
    put_balance(sb, C, nqg, frows, pe, fe);
    sb_puts(sb, "  }\n");
    if (spn) {
      sb_printf(sb, "  const size_t spn = rp >= %d ? %lld : 0;\n", SP_MIN_SHARERS, (long long)spn);
      sb_printf(sb, "  const size_t spo = (%lld + (size_t)nt * %lld + 15) / 16 * 16;\n", (long long)shared,
                (long long)slot);
    }
  }
  if (spn) sb_puts(sb, "  unsigned char *ws = (unsigned char *)rlyrt_scratch_alloc((spo + spn) * 4);\n");
  else
    sb_printf(sb, "  unsigned char *ws = (unsigned char *)rlyrt_scratch_alloc(%lld + (size_t)nt * %lld);\n",
              (long long)(shared * 4), (long long)(slot * 4));
  sb_puts(sb, "  if (!ws) {\n    if (!*out) rlyrt_release(&t->obj);\n    return rlyrt_error_at(RLYRT_E_NOMEM, ");
  put_where(sb, where, sub);
  sb_puts(sb, ");\n  }\n");
  sb_puts(sb, sb_str(&parts));
  sb_free(&parts);
  sb_puts(sb, "  float *o = (float *)t->dl.data;\n");
  if (C->kind == CK_DW || C->kind == CK_DIRECT) {
    long long parts_n = plane_parts(C);
    sb_printf(sb, "  memset(xp, 0, (size_t)nt * %lld);\n", (long long)(slot * 4));
    sb_printf(sb, "  %s_job J = {args, o, xp, 0};\n", name);
    sb_puts(sb, "  if (nt > 1) {\n");
    sb_printf(sb, "    J.step = (%lld + 4 * nt - 1) / (4 * nt);\n", parts_n);
    sb_printf(sb, "    rlyrt_parallel_for(nt, (%lld + J.step - 1) / J.step, %s_task, &J);\n", parts_n, name);
    sb_puts(sb, "  } else {\n");
    sb_printf(sb, "    const int64_t p0 = 0, p1 = %lld;\n", parts_n);
    lower_put_isa_call_in(sb, name, "args, o, xp, p0, p1", C->isas);
    sb_puts(sb, "  }\n");
  } else {
    long long crows = C->n * C->c * C->hp, cg = C->cg;
    sb_printf(sb, "  %s_job J = {args, o, ap, bp, xp, %ssp, tab, cstep, cp, rstep, rp, 0, 0};\n", name,
              C->rows ? "ct, " : "");
    sb_puts(sb, "  if (nt > 1) {\n");
    if (spn) {
      /* the pixels packed once: parts of input channels (and with them
      ** their planes' zero-bordered copy), about 4 per thread */
      sb_puts(sb, "    if (sp) {\n");
      sb_printf(sb, "      int64_t cc = (4 * nt + %lld) / %lld;\n", nqg - 1, nqg);
      sb_printf(sb, "      if (cc > %lld) cc = %lld;\n", cg, cg);
      sb_printf(sb, "      J.step = (%lld + cc - 1) / cc;\n", cg);
      sb_printf(sb, "      J.cc = (%lld + J.step - 1) / J.step;\n", cg);
      sb_printf(sb, "      rlyrt_parallel_for(nt, %lld * J.cc, %s_pack_item, &J);\n", nqg, name);
      sb_puts(sb, C->copied ? "    } else " : "    }\n");
    }
    if (C->copied) {
      /* every batch's input with zero borders, split by phase: parts of
      ** rows where it is worth threads */
      sb_printf(sb, "%s{\n", spn ? "" : "    ");
      if (copy_par(C)) {
        sb_printf(sb, "      J.step = (%lld + 4 * nt - 1) / (4 * nt);\n", crows);
        sb_printf(sb, "      rlyrt_parallel_for(nt, (%lld + J.step - 1) / J.step, %s_copy_item, &J);\n", crows, name);
      } else {
        sb_printf(sb, "      %s_copy(args, xp, 0, %lld);\n", name, crows);
      }
      sb_puts(sb, "    }\n");
    }
    sb_printf(sb, "    rlyrt_parallel_for(nt, %lld * cp * rp, %s_task, &J);\n", nqg, name);
    sb_puts(sb, "  } else {\n");
    if (C->copied) sb_printf(sb, "    %s_copy(args, xp, 0, %lld);\n", name, crows);
    sb_printf(sb, "    for (int64_t q = 0; q < %lld; q++)\n", (long long)C->n);
    sb_printf(sb, "      for (int64_t g = 0; g < %lld; g++) {\n", (long long)C->groups);
    sb_printf(sb, "        const int64_t j0 = 0, j1 = %lld, i0 = 0, i1 = %lld;\n", np, m);
    StrBuf call = {0};
    lower_put_isa_call_in(&call, name, gemm_args(C), C->isas);
    sb_puts(sb, sb_str(&call));
    sb_free(&call);
    sb_puts(sb, "      }\n  }\n");
  }
  sb_puts(sb, "  rlyrt_scratch_free(ws);\n");
  sb_puts(sb, "  *out = &t->obj;\n  return RLYRT_OK;\n}\n");
}

bool conv_lower(StrBuf *sb, const char *name, const Group *g, int anchor, const char *where) {
  Conv *C = rly_xcalloc(1, sizeof *C);
  bool ok = analyse(g, anchor, C, NULL);
  if (ok) put_kernel(sb, name, C, where, false);
  free(C);
  return ok;
}

/* {==== Filters packed at build time ====} */

/* One tile shape for every ISA version: the filter is packed at build time
** in the layout of the chosen tiles (analyse's choice, made with AVX-512's
** 32-pixel tiles). AVX2's tiles weigh differently: its tiles of 7 pixels
** have 16 filters, and with 128 filters or more they pack the pixels
** after all (rows_lpack). Where that choice, made with AVX2's 16-pixel
** tiles and the pack costed like the others, is the other tiles (C->alt),
** the kernel is two: NAME_w with analyse's tiles for AVX-512 and the
** portable ISA, NAME_n with tiles of NR pixels for AVX2 on a second
** packed copy of the filter (one more argument after the call's), and
** NAME calls the one whose version the CPU runs. ResNet-50 on a Zen 5's
** AVX2 code, 1 thread: its 512 -> 128 1x1s at 28x28 10-13% faster on
** tiles of 16 pixels, 18% at 2 threads; AVX-512's own code 4-9% slower
** on tiles of 32 (bench/README.md). Only images of more than NCP pixels:
** at 14x14 a Zen 3 measured AVX2's tiles of 16 pixels up to 6% slower. The
** environment's RLY_CONV_ALT=1 makes every prepacked GEMM of tiles of 7
** pixels two (a test hook); RLY_CONV_ROWS=1 none. */
static bool avx2_alt(const Conv *C) {
  const char *all = getenv("RLY_CONV_ROWS"), *alt = getenv("RLY_CONV_ALT");
  if (!C->rows || (C->kind != CK_1X1 && C->kind != CK_IM2COL) || (all && strcmp(all, "1") == 0)) return false;
  if (alt && strcmp(alt, "1") == 0) return true;
  return C->np > NCP && !rows_win(C, C->direct, 16, rows_lpack(C));
}

/* The kernel NAME as NAME_w and NAME_n (avx2_alt); extra: the argument
** holding the filter packed for NAME_n. */
static void put_kernel_alt(StrBuf *sb, const char *name, const Conv *C, const char *where, int extra) {
  int a2 = isa_named("avx2");
  char nm[64];
  Conv *W = rly_xmalloc(sizeof *W), *N = rly_xmalloc(sizeof *N);
  *W = *C;
  W->isas = C->isas & ~(1u << a2);
  snprintf(nm, sizeof nm, "%s_w", name);
  put_kernel(sb, nm, W, where, true);
  *N = *C;
  N->isas = 1u << a2;
  N->rows = false;
  N->direct = C->kind == CK_1X1;
  N->wa = extra;
  lower_put_isa_if(sb, a2);
  snprintf(nm, sizeof nm, "%s_n", name);
  put_kernel(sb, nm, N, where, true);
  sb_puts(sb, "#endif\n");
  sb_printf(sb, "static rlyrt_status %s(rlyrt_object *const *args, rlyrt_object **out) {\n  const char *rly_w = ", name);
  lower_put_cstring(sb, where ? where : "");
  sb_puts(sb, ";\n");
  lower_put_isa_if(sb, a2);
  sb_puts(sb, "  if ");
  lower_put_isa_picked(sb, a2);
  sb_printf(sb, "\n    return %s_n(args, out, rly_w);\n#endif\n", name);
  sb_printf(sb, "  return %s_w(args, out, rly_w);\n}\n", name);
  free(W);
  free(N);
}

/* The group's conv2d when it is its only anchor (the checks of
** lower_loops' schedule_group), or -1. */
static int conv_anchor(const Group *g) {
  int anchor = -1;
  if (g->nparams > 256 || g->nodes[g->nnodes - 1].kind != GN_CALL) return -1;
  for (int i = 0; i < g->nnodes; i++) {
    const GNode *nd = &g->nodes[i];
    if (!nd->live || nd->kind == GN_CONST) continue;
    if (nd->kind == GN_PROJ && nd->args[0] < 0) continue;
    if (nd->kind != GN_CALL) return -1;
    OpId id = nd->op->id;
    if (id == OP_DENSE || id == OP_BATCH_MATMUL || id == OP_SOFTMAX || id == OP_FAST_SOFTMAX || id == OP_LOG_SOFTMAX ||
        id == OP_SUM || id == OP_MEAN || id == OP_MAX || id == OP_MIN || id == OP_CONV2D) {
      if (anchor >= 0) return -1;
      anchor = i;
    }
  }
  return anchor >= 0 && g->nodes[anchor].op->id == OP_CONV2D ? anchor : -1;
}

/* lower_loops' guard against clang's FMA contraction (see loops.c). */
static const char no_contract[] = "#if defined(__clang__)\n#pragma STDC FP_CONTRACT OFF\n#endif\n";

bool conv_lower_prepacked(StrBuf *out, const char *name, const Expr *fn, const char *where, const bool *is_const,
                          LowerPrepack *p) {
  Group *g = rly_xcalloc(1, sizeof *g);
  Conv *C = rly_xcalloc(1, sizeof *C);
  int anchor = -1;
  bool ok = group_build(fn, g) && (anchor = conv_anchor(g)) >= 0 && analyse(g, anchor, C, is_const) && C->kind != CK_DW &&
            C->kind != CK_DIRECT &&
            C->pw < g->nparams && is_const[C->pw] && C->px != C->pw;
  /* the filter's parameter is read packed: nothing else may read it */
  for (int k = 0; ok && C->epilogue && k < C->ew.nleaves; k++)
    if (C->ew.leaves[k].param == C->pw) ok = false;
  for (int i = 0; ok && i < g->nnodes; i++)
    for (int j = 0; ok && g->nodes[i].live && j < g->nodes[i].nargs; j++)
      if (g->nodes[i].args[j] == -1 - C->pw && !(i == anchor && j == 1)) ok = false;
  if (ok) {
    C->prepacked = true;
    StrBuf k = {0};
    C->alt = C->kind != CK_WINO && avx2_alt(C);
    if (C->kind == CK_WINO) wino_put_kernel(&k, name, C, where);
    else if (C->alt) put_kernel_alt(&k, name, C, where, g->nparams);
    else put_kernel(&k, name, C, where, false);
    sb_puts(out, no_contract);
    if (fm_used(sb_str(&k))) fm_put_defs(out);
    sb_puts(out, sb_str(&k));
    sb_free(&k);
    /* the filter of group q as B(l, j) = W[q][j][l], PA-wide panels (PB:
    ** tiles of pixel rows) */
    memset(p, 0, sizeof *p);
    p->param = C->pw;
    p->q = C->groups;
    p->k = C->k;
    p->n = C->m;
    p->b_sq = C->m * C->k;
    p->b_sk = 1;
    p->b_sj = C->k;
    p->pw = C->rows ? PB : C->pa;
    p->pad = C->rows ? PG : 0;
    /* tiles of pixel rows: each KC block's panels together (the filter
    ** streams from memory block by block) */
    p->kc = C->rows ? KC : 0;
    /* NAME_n's copy (put_kernel_alt): panels of the NR tiles' filters */
    if (C->alt) p->alt = true, p->alt_pw = C->pa;
    if (C->kind == CK_WINO) wino_prepack(C, p);
  }
  free(C);
  free(g);
  return ok;
}
