/* lower/conv.h: what conv.c and winograd.c share (private to the folder):
** the analysed nn.conv2d problem (conv.c's analyse fills it) and the
** Winograd schedule's entry points. */
#ifndef RLY_LOWER_CONV_H
#define RLY_LOWER_CONV_H

#include "lower/kernel.h"
#include "lower/lower.h"

typedef enum ConvKind { CK_DW, CK_1X1, CK_IM2COL, CK_WINO, CK_DIRECT } ConvKind;

typedef struct Conv {
  const Group *g;
  int anchor;
  ConvKind kind;
  int px, pw;                           /* the parameters of data and weight */
  int64_t n, c, h, w;                   /* data */
  int64_t oc, kh, kw, oh, ow;           /* weight, result */
  int64_t sh, sw, dh, dw, pt, pl, pb, pr; /* strides, dilation, padding */
  int64_t groups, cg, m, k, np;         /* per group: input channels, output channels (M), reduction (K); pixels */
  int64_t hp, wp;                       /* the input plane as read (padded) */
  int64_t ph, rl;                       /* a copied plane's phase width ceil(wp / sw) and row length sw * ph */
  bool copied;                          /* im2col reads a copy (zero borders, columns split by phase) */
  bool epilogue, prepacked;
  bool const_filter;                    /* the filter is a constant that may be read packed (Winograd needs it) */
  bool rows;                            /* GEMMs: tiles of pixels (broadcast) by filters (vectors), conv.c */
  bool direct;                          /* GEMMs: the tiles read the pixels in place (no packing), conv.c */
  int pa;                               /* GEMMs (not rows): the filter's panel height, 12 or 8 (conv.c) */
  int wa;                               /* the argument the filter is read from (pw, or the AVX2 copy's) */
  bool alt;                             /* GEMMs: AVX2 takes the other tiles, on a copy of the filter (conv.c) */
  unsigned isas;                        /* the ISA versions emitted (bit i: version i) */
  int wm;                               /* CK_WINO: the output tile's side m of F(m x m, 3 x 3) */
  Ewise ew;
  int64_t l_sq[EW_MAX_LEAVES], l_si[EW_MAX_LEAVES], l_sj[EW_MAX_LEAVES]; /* leaves on the view [n, oc, pixel] */
} Conv;

/* Whether the Winograd schedule takes the analysed problem (3x3, stride
** and dilation 1, one group, a constant filter, a shape where it is
** faster than the im2col GEMM); sets C->wm when it does. */
bool wino_applies(Conv *C);
/* The kernel NAME of a problem wino_applies took (filter prepacked). */
void wino_put_kernel(StrBuf *sb, const char *name, const Conv *C, const char *where);
/* The packing of its filter at build time (p->wino: lower_prepack packs
** the transformed filter, wino_transform_filter's, malloc'ed). */
void wino_prepack(const Conv *C, LowerPrepack *p);
float *wino_transform_filter(const LowerPrepack *p, const void *b);

#endif
