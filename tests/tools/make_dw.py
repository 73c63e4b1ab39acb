#!/usr/bin/env python3
"""Writes tests/run/conv_depthwise.*: float32 depthwise nn.conv2d calls
through every path of lower/conv.c's depthwise kernel (CONV_DW), with the
expected results computed here with NumPy in float64 (make_conv.py's
conv2d: direct loops over the filter taps, independent of relayc):

- planes computed flat (stride 1, rows as wide as the input's and shorter
  than 16: AVX-512 masked loads straight from the input, the last vector
  stored masked): 7x7 (4 vectors), 13x13 (11 vectors in two groups), a
  multiplier of 2, dilation 2, a 5x5 filter, batch 2;
- rows shorter than a vector that are not flat (stride 2, or no padding):
  masked stores (AVX-512, AVX2), the portable version's buffer (rows of 1
  to 3 outputs);
- rows longer than a vector but not a multiple of it (20, 23 and 35
  outputs): the last vector overlapping the one before;
- at stride 2, the copy of the plane split by column phase, 32 input
  floats at a time and the row's end masked (AVX-512): input widths 14,
  37, 45 and 70 with left padding 0, 1 and 2;
- planes of 2048 floats and more (the next plane prefetched): 48x48 at
  stride 1 and 2;
- planes whose buffer has 8192 floats or more: with a multiplier of 1,
  copied a few rows at a time into a window of rows before the rows that
  read them (100x90 at stride 2; 91x90 at stride 1 with 2 rows of padding
  at the top and none at the bottom; 97x95 at stride 2, dilation 2, no
  padding at the top; 93x93 with a 5x5 filter); with a multiplier of 2,
  copied whole first (90x90).

    /usr/bin/python3 tests/tools/make_dw.py [RUN_DIR]   (default: tests/run)

Values are multiples of 1/16 in [-1, 1], so float32 sums of products are
exact: every ISA version and thread count gives these results exactly
(tests/tools/dw_test.sh checks that the bits do not depend on the threads).
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_conv import conv2d  # noqa: E402

RNG = np.random.RandomState(23)


def vals(shape):
    return (RNG.randint(-16, 17, size=shape) / 16.0).astype(np.float32)


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "run")
    T = {}
    lines, outs, exp = [], [], []

    # (x shape, multiplier, kernel, strides, padding (t, l, b, r), dilation, epilogue)
    cases = [
        ((1, 8, 7, 7), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "clip"),    # flat, 4 vectors
        ((1, 6, 13, 13), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "bias"),  # flat, 11 vectors, two groups
        ((2, 4, 10, 10), 2, 3, (1, 1), (1, 1, 1, 1), (1, 1), "relu"),  # flat, multiplier 2, batch 2
        ((1, 4, 9, 9), 1, 3, (1, 1), (2, 2, 2, 2), (2, 2), None),      # flat, dilation 2
        ((1, 3, 12, 12), 1, 5, (1, 1), (2, 2, 2, 2), (1, 1), "bias"),  # flat, 5x5
        ((1, 5, 9, 12), 1, 3, (1, 1), (0, 0, 0, 0), (1, 1), "relu"),   # rows of 10: masked stores
        ((1, 6, 14, 14), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), "clip"),  # stride 2, rows of 7, width 14
        ((1, 3, 5, 5), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), None),      # rows of 3: the portable buffer
        ((1, 4, 11, 37), 1, 3, (2, 2), (0, 0, 0, 0), (1, 1), "bias"),  # stride 2, width 37, no padding
        ((2, 3, 9, 45), 1, 3, (2, 2), (1, 2, 1, 2), (1, 1), "relu"),   # width 45, left padding 2 (23 outputs)
        ((1, 2, 8, 70), 1, 3, (2, 2), (1, 1, 0, 0), (1, 1), "clip"),   # width 70 (35 outputs), asymmetric
        ((1, 3, 6, 20), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "bias"),   # rows of 20: overlap
        ((1, 2, 48, 48), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "clip"),  # prefetched planes, stride 1
        ((1, 2, 48, 48), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), "clip"),  # prefetched planes, stride 2
        ((1, 2, 90, 90), 2, 3, (1, 1), (1, 1, 1, 1), (1, 1), "bias"),  # copied by rows, multiplier 2
        ((1, 2, 100, 90), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), "relu"), # copied by rows, stride 2
        # epilogues with a residual (read at each output) or a per-channel scale, applied in
        # registers before the stores: on full, masked and overlapping vectors
        ((1, 8, 7, 7), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "res"),     # flat, the last vector masked
        ((1, 6, 13, 13), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "scale"), # flat, two groups
        ((1, 6, 14, 14), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), "res"),   # rows of 7: masked stores
        ((1, 3, 6, 20), 1, 3, (1, 1), (1, 1, 1, 1), (1, 1), "res"),    # rows of 20: overlap
        ((2, 3, 9, 45), 1, 3, (2, 2), (1, 2, 1, 2), (1, 1), "scale"),  # rows of 23, batch 2
        ((1, 2, 100, 90), 1, 3, (2, 2), (1, 1, 1, 1), (1, 1), "res"),  # copied by rows, stride 2
        # copied by rows into a window of rows (its rows moved to its front, the borders zeroed):
        # padding of 2 rows at the top and none at the bottom, the last 3 output rows one at a time;
        # no top padding, 2 at the bottom, dilation 2; a 5x5 filter at stride 2
        ((1, 2, 91, 90), 1, 3, (1, 1), (2, 1, 0, 1), (1, 1), "clip"),  # stride 1, 91 output rows
        ((1, 2, 97, 95), 1, 3, (2, 2), (0, 0, 2, 1), (2, 2), "bias"),  # stride 2, dilation 2
        ((1, 2, 93, 93), 1, 5, (2, 2), (2, 2, 2, 2), (1, 1), "res"),   # stride 2, 5x5, 47 output rows
    ]
    for i, (xs, mult, k, st, pad, dil, epi) in enumerate(cases):
        c = xs[1]
        xn, wn, bn = "x%d" % i, "w%d" % i, "b%d" % i
        T[xn] = vals(xs)
        T[wn] = vals((c * mult, 1, k, k))
        call = ("nn.conv2d(%%%s, %%%s, strides=[%d, %d], padding=[%d, %d, %d, %d], dilation=[%d, %d], groups=%d, "
                "channels=%d, kernel_size=[%d, %d])" % ((xn, wn) + st + pad + dil + (c, c * mult, k, k)))
        e = conv2d(T[xn], T[wn], strides=st, padding=pad, dilation=dil, groups=c)
        if epi == "res":  # bias, the residual, relu
            rn = "r%d" % i
            T[bn] = vals((c * mult,))
            T[rn] = vals(e.shape)
            call = "nn.relu(add(nn.bias_add(%s, %%%s), %%%s))" % (call, bn, rn)
            e = np.maximum(e + T[bn].astype(np.float64).reshape(1, -1, 1, 1) + T[rn], 0)
        elif epi == "scale":  # scale and shift per channel (batch norm), clip
            sn, hn = "s%d" % i, "h%d" % i
            T[sn] = vals((c * mult, 1, 1))
            T[hn] = vals((c * mult, 1, 1))
            call = "clip(add(multiply(%s, %%%s), %%%s), a_min=-0.5f, a_max=0.5f)" % (call, sn, hn)
            e = np.clip(e * T[sn].astype(np.float64) + T[hn], -0.5, 0.5)
        elif epi:
            T[bn] = vals((c * mult,))
            call = "nn.bias_add(%s, %%%s)" % (call, bn)
            e = e + T[bn].astype(np.float64).reshape(1, -1, 1, 1)
            if epi == "relu":
                call = "nn.relu(%s)" % call
                e = np.maximum(e, 0)
            elif epi == "clip":
                call = "clip(%s, a_min=0f, a_max=0.75f)" % call
                e = np.clip(e, 0, 0.75)
        lines.append("  %%%d = %s;" % (i, call))
        outs.append("%%%d" % i)
        exp.append(e.astype(np.float32))

    names = list(T)
    sig = ", ".join("%%%s: Tensor[(%s), float32]" % (n, ", ".join(str(d) for d in T[n].shape)) for n in names)
    body = "\n".join(lines) + "\n  (%s)\n" % ", ".join(outs)
    prog = "conv_depthwise"
    with open(os.path.join(run, prog + ".relay"), "w") as f:
        f.write("// conv_depthwise: float32 depthwise nn.conv2d through every path of lower/conv.c's depthwise kernel\n"
                "// (planes flat, masked stores, overlapping last vectors, the portable buffer, the copy at stride 2,\n"
                "// prefetched planes) with fused epilogues (bias, relu, clip, a residual, a per-channel scale);\n"
                "// every tensor an input.\n"
                "// Generated by tests/tools/make_dw.py, which computes the expected results with NumPy.\n")
        f.write('#[version = "0.0.5"]\ndef @main(%s) {\n%s}\n' % (sig, body))
    d = os.path.join(run, prog + ".expected.d")
    os.makedirs(d, exist_ok=True)
    for i, e in enumerate(exp):
        np.save(os.path.join(d, "%d.npy" % i), e)
    with open(os.path.join(run, prog + ".tol"), "w") as f:
        f.write("--rtol 1e-5 --atol 1e-5\n")
    with open(os.path.join(run, prog + ".args"), "w") as f:
        f.write(" ".join("--input %s=tests/run/data/dw_%s.npy" % (n, n) for n in names) + "\n")
    data = os.path.join(run, "data")
    for n in names:
        np.save(os.path.join(data, "dw_%s.npy" % n), T[n])


if __name__ == "__main__":
    main()
