#!/usr/bin/env python3
"""Writes tests/run/conv_schedules.* and tests/run/conv_prepacked.*: one
program of float32 nn.conv2d calls that takes every schedule of
lower/conv.c (1x1 GEMM, im2col GEMM, depthwise, direct) and lower/pool.c, with the
elementwise tails that fuse into them as epilogues, and the expected
results computed here with NumPy in float64 (direct loops over the filter
taps, independent of relayc).

    /usr/bin/python3 tests/tools/make_conv.py [RUN_DIR]   (default: tests/run)

conv_schedules takes every tensor as an input (.npy files: the kernels pack
the filters at run time); conv_prepacked is the same program with the
filters, biases and scales bound from a .params file (constants: the GEMM
kernels read the filters packed at build time). Values are multiples of
1/16 in [-1, 1], so float32 sums of products are exact and the compiled
results may differ from these only by the rounding of an average.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_params import params_file  # noqa: E402

RNG = np.random.RandomState(11)


def vals(shape):
    return (RNG.randint(-16, 17, size=shape) / 16.0).astype(np.float32)


def conv2d(x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """NCHW x OIHW, padding (top, left, bottom, right), in float64."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    dh, dw = dilation
    xp = np.zeros((n, c, h + pt + pb, wd + pl + pr))
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    oh = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, oc, oh, ow))
    m = oc // groups
    for g in range(groups):
        xg = xp[:, g * cg:(g + 1) * cg]
        wg = w[g * m:(g + 1) * m]
        for a in range(kh):
            for b in range(kw):
                win = xg[:, :, a * dh:a * dh + sh * (oh - 1) + 1:sh, b * dw:b * dw + sw * (ow - 1) + 1:sw]
                out[:, g * m:(g + 1) * m] += np.einsum("nchw,oc->nohw", win, wg[:, :, a, b])
    return out


def pool2d(x, k, s, p, is_max, include_pad=False):
    x = x.astype(np.float64)
    n, c, h, w = x.shape
    oh = (h + 2 * p - k) // s + 1
    ow = (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s - p, j * s - p
            h1, w1 = max(h0, 0), max(w0, 0)
            h2, w2 = min(h0 + k, h), min(w0 + k, w)
            win = x[:, :, h1:h2, w1:w2]
            if is_max:
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k * k if include_pad else (h2 - h1) * (w2 - w1)
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


def relu(v):
    return np.maximum(v, 0)


def clip(v, lo, hi):
    return np.minimum(np.maximum(v, lo), hi)


def chan(v):
    return v.reshape(-1, 1, 1)


# name -> shape; "w"/"b"/"s" names are the constants of conv_prepacked
T = {}


def t(name, shape):
    T[name] = vals(shape)
    return name


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    run = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "run")
    lines, outs, exp = [], [], []

    def emit(text, value):
        k = len(outs)
        lines.append("  %%%d = %s;" % (k, text))
        outs.append("%%%d" % k)
        exp.append(value.astype(np.float32))

    # 1x1 stride 1 (GEMM on the input's rows): 30 filters, 143 pixels (edge
    # tiles), batch 2, bias and relu.
    x1, w1, b1 = t("x1", (2, 20, 13, 11)), t("w1", (30, 20, 1, 1)), t("b1", (30,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x1, %w1, padding=[0, 0], channels=30, kernel_size=[1, 1]), %b1))",
         relu(conv2d(T[x1], T[w1]) + chan(T[b1])))
    # 3x3 pad 1: two KC blocks (K = 288), two NC blocks (1089 pixels), two
    # MC blocks (130 filters); folded batch norm, residual add, relu.
    x2, w2, s2, h2, r2 = t("x2", (1, 32, 33, 33)), t("w2", (130, 32, 3, 3)), t("s2", (130, 1, 1)), \
        t("h2", (130, 1, 1)), t("r2", (1, 130, 33, 33))
    emit("nn.relu(add(add(multiply(nn.conv2d(%x2, %w2, padding=[1, 1], channels=130, kernel_size=[3, 3]), %s2), %h2), "
         "%r2))", relu(conv2d(T[x2], T[w2], padding=(1, 1, 1, 1)) * T[s2] + T[h2] + T[r2]))
    # 3x3 stride 2, asymmetric padding, no tail.
    x3, w3 = t("x3", (1, 8, 15, 16)), t("w3", (12, 8, 3, 3))
    emit("nn.conv2d(%x3, %w3, strides=[2, 2], padding=[1, 0, 0, 1], channels=12, kernel_size=[3, 3])",
         conv2d(T[x3], T[w3], strides=(2, 2), padding=(1, 0, 0, 1)))
    # 7x7 stride 2 pad 3, bias, clip (relu6).
    x4, w4, b4 = t("x4", (1, 3, 37, 41)), t("w4", (16, 3, 7, 7)), t("b4", (16,))
    emit("clip(nn.bias_add(nn.conv2d(%x4, %w4, strides=[2, 2], padding=[3, 3, 3, 3], channels=16, kernel_size=[7, 7]), "
         "%b4), a_min=0f, a_max=6f)", clip(conv2d(T[x4], T[w4], strides=(2, 2), padding=(3, 3, 3, 3)) + chan(T[b4]), 0, 6))
    # depthwise 3x3 pad 1 (23 columns: vectors and scalars), scale, shift, clip
    x5, w5, s5, h5 = t("x5", (1, 24, 19, 23)), t("w5", (24, 1, 3, 3)), t("s5", (24, 1, 1)), t("h5", (24, 1, 1))
    emit("clip(add(multiply(nn.conv2d(%x5, %w5, padding=[1, 1], groups=24, channels=24, kernel_size=[3, 3]), %s5), %h5), "
         "a_min=-1f, a_max=2f)", clip(conv2d(T[x5], T[w5], padding=(1, 1, 1, 1), groups=24) * T[s5] + T[h5], -1, 2))
    # depthwise stride 2, channel multiplier 2, batch 2, bias
    x6, w6, b6 = t("x6", (2, 6, 17, 40)), t("w6", (12, 1, 3, 3)), t("b6", (12,))
    emit("nn.bias_add(nn.conv2d(%x6, %w6, strides=[2, 2], padding=[1, 1], groups=6, channels=12, kernel_size=[3, 3]), "
         "%b6)", conv2d(T[x6], T[w6], strides=(2, 2), padding=(1, 1, 1, 1), groups=6) + chan(T[b6]))
    # depthwise 5x5 stride 2 pad 2 (taps in both column phases)
    x9, w9 = t("x9", (1, 4, 16, 45)), t("w9", (4, 1, 5, 5))
    emit("nn.conv2d(%x9, %w9, strides=[2, 2], padding=[2, 2], groups=4, channels=4, kernel_size=[5, 5])",
         conv2d(T[x9], T[w9], strides=(2, 2), padding=(2, 2, 2, 2), groups=4))
    # grouped: 2 groups of 3 input and 5 output channels, bias, relu
    x7, w7, b7 = t("x7", (1, 6, 9, 10)), t("w7", (10, 3, 3, 3)), t("b7", (10,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x7, %w7, padding=[1, 1], groups=2, channels=10, kernel_size=[3, 3]), %b7))",
         relu(conv2d(T[x7], T[w7], padding=(1, 1, 1, 1), groups=2) + chan(T[b7])))
    # dilation 2
    x8, w8 = t("x8", (1, 5, 12, 12)), t("w8", (7, 5, 3, 3))
    emit("nn.conv2d(%x8, %w8, padding=[2, 2], dilation=[2, 2], channels=7, kernel_size=[3, 3])",
         conv2d(T[x8], T[w8], padding=(2, 2, 2, 2), dilation=(2, 2)))
    # 1x1 stride 2 (a downsample: im2col)
    w10 = t("w10", (8, 20, 1, 1))
    emit("nn.conv2d(%x1, %w10, strides=[2, 2], padding=[0, 0], channels=8, kernel_size=[1, 1])",
         conv2d(T[x1], T[w10], strides=(2, 2)))
    # pools
    emit("nn.max_pool2d(%x5, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", pool2d(T[x5], 3, 2, 1, True))
    emit("nn.avg_pool2d(%x5, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True)",
         pool2d(T[x5], 3, 2, 1, False, True))
    emit("nn.avg_pool2d(%x3, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])", pool2d(T[x3], 3, 2, 1, False))
    emit("nn.global_avg_pool2d(%x2)", T[x2].astype(np.float64).mean(axis=(2, 3), keepdims=True))
    emit("nn.adaptive_avg_pool2d(%x6, output_size=[1, 1])", T[x6].astype(np.float64).mean(axis=(2, 3), keepdims=True))
    # Shapes of ResNet's and MobileNetV2's small-image layers scaled down,
    # for the GEMMs in tiles of 7 pixels by NR filters (conv_test.sh and
    # the RLY_CONV_ROWS=1 tests run every GEMM so).
    # 3x3 stride 2 pad 1 to 7x7 (a stride-2 layer), 64 filters, two KC
    # blocks (K = 288; the schedule takes tiles of 7 pixels), bias, relu.
    x11, w11, b11 = t("x11", (1, 32, 14, 14)), t("w11", (64, 32, 3, 3)), t("b11", (64,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x11, %w11, strides=[2, 2], padding=[1, 1], channels=64, kernel_size=[3, 3]), "
         "%b11))", relu(conv2d(T[x11], T[w11], strides=(2, 2), padding=(1, 1, 1, 1)) + chan(T[b11])))
    # 1x1 stride 1, 10x10 (100 pixels: an edge tile of 2, runs across
    # rows), batch 2, bias, residual add.
    x12, w12, b12, r12 = t("x12", (2, 20, 10, 10)), t("w12", (64, 20, 1, 1)), t("b12", (64,)), t("r12", (2, 64, 10, 10))
    emit("add(nn.bias_add(nn.conv2d(%x12, %w12, padding=[0, 0], channels=64, kernel_size=[1, 1]), %b12), %r12)",
         conv2d(T[x12], T[w12]) + chan(T[b12]) + T[r12])
    # 1x1 stride 2 to 14x14 (a downsample), 160 filters (two blocks of
    # filters), scale and shift.
    x13, w13, s13, h13 = t("x13", (1, 16, 27, 27)), t("w13", (160, 16, 1, 1)), t("s13", (160, 1, 1)), t("h13", (160, 1, 1))
    emit("add(multiply(nn.conv2d(%x13, %w13, strides=[2, 2], padding=[0, 0], channels=160, kernel_size=[1, 1]), %s13), "
         "%h13)", conv2d(T[x13], T[w13], strides=(2, 2)) * T[s13] + T[h13])
    # 1x1 at 7x7, 112 filters (an edge panel of 16 at 32 wide), bias, clip.
    x14, w14, b14 = t("x14", (1, 16, 7, 7)), t("w14", (112, 16, 1, 1)), t("b14", (112,))
    emit("clip(nn.bias_add(nn.conv2d(%x14, %w14, padding=[0, 0], channels=112, kernel_size=[1, 1]), %b14), a_min=0f, "
         "a_max=6f)", clip(conv2d(T[x14], T[w14]) + chan(T[b14]), 0, 6))
    # 5x5 pad 2 at 23x23 (529 pixels: two blocks of pixels, rows of 23
    # split between tiles), 64 filters.
    x15, w15 = t("x15", (1, 8, 23, 23)), t("w15", (64, 8, 5, 5))
    emit("nn.conv2d(%x15, %w15, padding=[2, 2], channels=64, kernel_size=[5, 5])",
         conv2d(T[x15], T[w15], padding=(2, 2, 2, 2)))
    # 3x3 pad 1 at 14x14, 160 filters (the Winograd schedule may take it
    # when the filter is a constant).
    x16, w16 = t("x16", (1, 24, 14, 14)), t("w16", (160, 24, 3, 3))
    emit("nn.conv2d(%x16, %w16, padding=[1, 1], channels=160, kernel_size=[3, 3])",
         conv2d(T[x16], T[w16], padding=(1, 1, 1, 1)))
    # 1x1 stride 1 with 20 filters (143 pixels), relu.
    w17 = t("w17", (20, 20, 1, 1))
    emit("nn.relu(nn.conv2d(%x1, %w17, padding=[0, 0], channels=20, kernel_size=[1, 1]))", relu(conv2d(T[x1], T[w17])))
    # 1x1 at 7x7, K = 272 (two KC blocks), 64 filters, batch 2: tiles of
    # 7 pixels that read the input in place (no packing), relu.
    x18, w18 = t("x18", (2, 272, 7, 7)), t("w18", (64, 272, 1, 1))
    emit("nn.relu(nn.conv2d(%x18, %w18, padding=[0, 0], channels=64, kernel_size=[1, 1]))",
         relu(conv2d(T[x18], T[w18])))
    # 1x1 whose pixels are a multiple of 32 (tiles of NR pixels that read
    # the input's rows in place): 8x8, K = 260 (two KC blocks), 40 filters
    # (an edge tile), batch 2, bias, relu; and 40x32 (two NC blocks of
    # pixels), K = 8, scale and shift.
    x19, w19, b19 = t("x19", (2, 260, 8, 8)), t("w19", (40, 260, 1, 1)), t("b19", (40,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x19, %w19, padding=[0, 0], channels=40, kernel_size=[1, 1]), %b19))",
         relu(conv2d(T[x19], T[w19]) + chan(T[b19])))
    x20, w20, s20, h20 = t("x20", (1, 8, 40, 32)), t("w20", (40, 8, 1, 1)), t("s20", (40, 1, 1)), t("h20", (40, 1, 1))
    emit("add(multiply(nn.conv2d(%x20, %w20, padding=[0, 0], channels=40, kernel_size=[1, 1]), %s20), %h20)",
         conv2d(T[x20], T[w20]) * T[s20] + T[h20])
    # 1x1 at a stride (a compact copy of the pixels it reads, then a 1x1
    # at stride 1): 14x14 to 7x7, K = 264 (two KC blocks), 64 filters,
    # batch 2, bias and a residual add (tiles of 7 pixels read the copy in
    # place); strides 2 and 3 on an odd plane; two groups at stride 2.
    x21, w21, b21, r21 = t("x21", (2, 264, 14, 14)), t("w21", (64, 264, 1, 1)), t("b21", (64,)), \
        t("r21", (2, 64, 7, 7))
    emit("add(nn.bias_add(nn.conv2d(%x21, %w21, strides=[2, 2], padding=[0, 0], channels=64, kernel_size=[1, 1]), "
         "%b21), %r21)", conv2d(T[x21], T[w21], strides=(2, 2)) + chan(T[b21]) + T[r21])
    x22, w22 = t("x22", (1, 12, 9, 17)), t("w22", (24, 12, 1, 1))
    emit("nn.relu(nn.conv2d(%x22, %w22, strides=[2, 3], padding=[0, 0], channels=24, kernel_size=[1, 1]))",
         relu(conv2d(T[x22], T[w22], strides=(2, 3))))
    x23, w23 = t("x23", (1, 16, 10, 10)), t("w23", (32, 8, 1, 1))
    emit("nn.conv2d(%x23, %w23, strides=[2, 2], padding=[0, 0], groups=2, channels=32, kernel_size=[1, 1])",
         conv2d(T[x23], T[w23], strides=(2, 2), groups=2))
    # GEMMs of 128 filters and more in tiles of 7 pixels: on AVX2 they pack
    # their pixels a KC block at a time (lower/conv.c, rows_lpack). A 1x1
    # of 136 filters (a short last panel), K = 264 (two KC blocks), 14x14;
    # 128 at stride 2, 14x14 to 7x7, with a residual add; a 3x3 at stride
    # 2 (im2col, K = 288: two KC blocks), 14x14 to 7x7.
    x24, w24, b24 = t("x24", (1, 264, 14, 14)), t("w24", (136, 264, 1, 1)), t("b24", (136,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x24, %w24, padding=[0, 0], channels=136, kernel_size=[1, 1]), %b24))",
         relu(conv2d(T[x24], T[w24]) + chan(T[b24])))
    x25, w25, r25 = t("x25", (1, 40, 14, 14)), t("w25", (128, 40, 1, 1)), t("r25", (1, 128, 7, 7))
    emit("add(nn.conv2d(%x25, %w25, strides=[2, 2], padding=[0, 0], channels=128, kernel_size=[1, 1]), %r25)",
         conv2d(T[x25], T[w25], strides=(2, 2)) + T[r25])
    x26, w26 = t("x26", (1, 32, 14, 14)), t("w26", (128, 32, 3, 3))
    emit("nn.relu(nn.conv2d(%x26, %w26, strides=[2, 2], padding=[1, 1, 1, 1], channels=128, kernel_size=[3, 3]))",
         relu(conv2d(T[x26], T[w26], strides=(2, 2), padding=(1, 1, 1, 1))))
    # A residual add whose residual comes first: the kernel's argument 0,
    # p0 in its epilogue (a name the tiles of 7 pixels' transposes once
    # took for a loop index); 48 filters at 14x14, whole 16 x 16 blocks and
    # the rest.
    r27, x27, w27, b27 = t("r27", (1, 48, 14, 14)), t("x27", (1, 24, 14, 14)), t("w27", (48, 24, 1, 1)), t("b27", (48,))
    emit("add(%r27, nn.bias_add(nn.conv2d(%x27, %w27, padding=[0, 0], channels=48, kernel_size=[1, 1]), %b27))",
         T[r27] + conv2d(T[x27], T[w27]) + chan(T[b27]))

    # Few input channels, output rows a multiple of 16: the direct
    # schedule (a network's stem). 3 -> 10 by 7x7 at stride 2 (ResNet's
    # stem), batch 2, bias, relu: filters in tiles of 3 (AVX-512) or 4 and
    # the rest, a row of 2 (AVX-512) or 4 vectors (AVX2: a tile of 3 and
    # the rest).
    x28, w28, b28 = t("x28", (2, 3, 32, 64)), t("w28", (10, 3, 7, 7)), t("b28", (10,))
    emit("nn.relu(nn.bias_add(nn.conv2d(%x28, %w28, strides=[2, 2], padding=[3, 3], channels=10, kernel_size=[7, 7]), "
         "%b28))", relu(conv2d(T[x28], T[w28], strides=(2, 2), padding=(3, 3, 3, 3)) + chan(T[b28])))
    # One channel, 3x3 stride 2 (MobileNetV2's stem), 15 output rows (a
    # short last block of rows), scale, shift and clip.
    x29, w29, s29, h29 = t("x29", (1, 1, 30, 32)), t("w29", (5, 1, 3, 3)), t("s29", (5, 1, 1)), t("h29", (5, 1, 1))
    emit("clip(add(multiply(nn.conv2d(%x29, %w29, strides=[2, 2], padding=[1, 1], channels=5, kernel_size=[3, 3]), "
         "%s29), %h29), a_min=-1f, a_max=1f)",
         clip(conv2d(T[x29], T[w29], strides=(2, 2), padding=(1, 1, 1, 1)) * T[s29] + T[h29], -1, 1))
    # Four channels, stride 1, dilation 2, the residual first.
    r30, x30, w30 = t("r30", (1, 7, 9, 16)), t("x30", (1, 4, 9, 16)), t("w30", (7, 4, 3, 3))
    emit("add(%r30, nn.conv2d(%x30, %w30, padding=[2, 2], dilation=[2, 2], channels=7, kernel_size=[3, 3]))",
         T[r30] + conv2d(T[x30], T[w30], padding=(2, 2, 2, 2), dilation=(2, 2)))
    # Two channels, 5x5 stride 3, asymmetric padding, no epilogue; and
    # rows of 128 (AVX-512: a tile of 7 vectors and one of 1), bias.
    x31, w31 = t("x31", (1, 2, 20, 46)), t("w31", (6, 2, 5, 5))
    emit("nn.conv2d(%x31, %w31, strides=[3, 3], padding=[2, 1, 1, 3], channels=6, kernel_size=[5, 5])",
         conv2d(T[x31], T[w31], strides=(3, 3), padding=(2, 1, 1, 3)))
    x32, w32, b32 = t("x32", (1, 3, 5, 128)), t("w32", (4, 3, 3, 3)), t("b32", (4,))
    emit("nn.bias_add(nn.conv2d(%x32, %w32, padding=[1, 1], channels=4, kernel_size=[3, 3]), %b32)",
         conv2d(T[x32], T[w32], padding=(1, 1, 1, 1)) + chan(T[b32]))
    # A depthwise convolution after its residual (the kernel's argument 0,
    # p0 in its epilogue, a name its planes' range once took).
    r33, x33, w33 = t("r33", (1, 8, 10, 10)), t("x33", (1, 8, 10, 10)), t("w33", (8, 1, 3, 3))
    emit("add(%r33, nn.conv2d(%x33, %w33, padding=[1, 1], groups=8, channels=8, kernel_size=[3, 3]))",
         T[r33] + conv2d(T[x33], T[w33], padding=(1, 1, 1, 1), groups=8))

    names = list(T)
    consts = [n for n in names if not n.startswith("x") and not n.startswith("r")]
    sig = ", ".join("%%%s: Tensor[(%s), float32]" % (n, ", ".join(str(d) for d in T[n].shape)) for n in names)
    body = "\n".join(lines) + "\n  (%s)\n" % ", ".join(outs)
    for prog, what in (("conv_schedules", "every tensor an input: the filters are packed at run time"),
                       ("conv_prepacked", "the filters, biases and scales bound from a .params file: the GEMMs read "
                        "the filters packed at build time")):
        with open(os.path.join(run, prog + ".relay"), "w") as f:
            f.write("// %s: float32 nn.conv2d through every schedule of lower/conv.c (1x1 GEMM, im2col GEMM with\n"
                    "// stride, asymmetric padding, dilation, 7x7; depthwise with multiplier and stride; grouped;\n"
                    "// edge tiles, two KC/MC/NC blocks) with fused epilogues (bias, scale and shift, relu, clip,\n"
                    "// a residual add), and the pools of lower/pool.c; %s.\n"
                    "// Generated by tests/tools/make_conv.py, which computes the expected results with NumPy.\n"
                    % (prog, what))
            f.write('#[version = "0.0.5"]\ndef @main(%s) {\n%s}\n' % (sig, body))
        d = os.path.join(run, prog + ".expected.d")
        os.makedirs(d, exist_ok=True)
        for i, e in enumerate(exp):
            np.save(os.path.join(d, "%d.npy" % i), e)
        # conv_prepacked's 3x3 stride-1 convolutions of 16 channels and more
        # take Winograd F(4x4, 3x3) (lower/winograd.c), whose rounding
        # reaches 2e-5 here, against the expectations and the interpreter
        with open(os.path.join(run, prog + ".tol"), "w") as f:
            f.write("--rtol 1e-5 --atol %s\n" % ("1e-4" if prog == "conv_prepacked" else "1e-5"))
        if prog == "conv_prepacked":
            with open(os.path.join(run, prog + ".difftol"), "w") as f:
                f.write("--rtol 1e-5 --atol 1e-4\n")
        bound = consts if prog == "conv_prepacked" else []
        args = ["--input %s=tests/run/data/conv_%s.npy" % (n, n) for n in names if n not in bound]
        if bound:
            args.append("--params tests/run/data/conv_prepacked.params")
        with open(os.path.join(run, prog + ".args"), "w") as f:
            f.write(" ".join(args) + "\n")
    data = os.path.join(run, "data")
    for n in names:
        np.save(os.path.join(data, "conv_%s.npy" % n), T[n])
    with open(os.path.join(data, "conv_prepacked.params"), "wb") as f:
        f.write(params_file([(n, "float32", T[n].shape, [float(v) for v in T[n].ravel()]) for n in consts]))


if __name__ == "__main__":
    main()
