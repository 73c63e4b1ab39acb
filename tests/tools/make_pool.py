#!/usr/bin/env python3
"""Writes tests/run/pool_max.*: float32 nn.max_pool2d calls through every
path of lower/pool.c's max pool, with the expected results computed here
by the reference's rule (each output `v > m ? v : m` over its taps inside
the input in row-major order, from float's lowest value), compared bit for
bit (npycmp --bits). The separable pool (put_max_sep: a ring of rows of
column maxima; the outputs whose column taps are all inside in whole
vectors, the last one overlapping; at stride 2 with AVX2 or AVX-512
explicit even/odd shuffles, put_max_vec2, where its loads stay inside the
row), and the tap-by-tap loop past its limits:

- 3x3 stride 2 padding 1 on 15x17 (odd sizes: an edge at both ends);
- 2x3, dilation (2, 1), strides (1, 2), asymmetric padding (2, 1, 0, 3)
  on 9x10 (rows in the padding at the top, columns at the right);
- 5x5 stride 1 padding 2 on 6x6;
- 7x7 stride 3 padding 3 on 12x12;
- 3x3 padding 1 on 2x2 (every output has a tap outside);
- 3x3 stride 2 with ceil_mode on 8x8 (the last windows past the input);
- 3x3 stride 2 padding 1 on 56x56, 4 channels (ResNet's shape: shuffles,
  the last vector overlapping);
- 2x2 stride 2 on 20x40 (VGG's: shuffles, no padding);
- 3x3 stride 2 with ceil_mode on 9x37 (the shuffles' last loads would
  pass the row: gcc's loops);
- 3x3 stride 2 padding 1 on 7x40 (19 outputs inside: one whole AVX-512
  vector and an overlapping one);
- 1x1 stride 2 on 10x40 (rows skipped between windows);
- 4x4 stride 2 padding 1 on 6x50 (taps over three pairs of loads);
- 3x3 stride 1 padding 1 on 4x3000 (a ring past 8192 floats: the
  tap-by-tap loop) and 17x1 on 20x3 (a window past 16 rows: the same);
- 3x3 stride 2 padding 1 on 9x40 of -1, -0, +0 and NaN (the first of
  equal maxima kept, a NaN never: the reference's bits);
- nn.global_max_pool2d and nn.global_avg_pool2d on 2x11 planes of 7x7 and
  9 planes of 5x3 (put_planes: 8 planes at a time, then one at a time).

    /usr/bin/python3 tests/tools/make_pool.py [RUN_DIR]   (default: tests/run)

Values are distinct multiples of 1/64 (but in the case of signed zeros),
so every engine's maximum is one exact value.
"""

import math
import os
import sys

import numpy as np

RNG = np.random.RandomState(5)


def vals(shape):
    n = int(np.prod(shape))
    return (RNG.permutation(n).reshape(shape) / 64.0 - n / 128.0).astype(np.float32)


def signed(shape):
    """-1, -0, +0 and NaN (a maximum of 0 whose first tap is -0 or +0)."""
    pick = np.array([-1.0, -0.0, 0.0, np.nan], dtype=np.float32)
    return pick[RNG.randint(0, 4, size=shape)]


def max_pool(x, k, s, d, pad, ceil_mode=False):
    """NCHW; k, s, d: (h, w); pad: (top, left, bottom, right)."""
    n, c, h, w = x.shape
    outs = []
    for dim, size in ((0, h), (1, w)):
        span = (k[dim] - 1) * d[dim] + 1
        total = size + pad[dim] + pad[dim + 2] - span
        o = (math.ceil(total / s[dim]) if ceil_mode else total // s[dim]) + 1
        outs.append(o)
    out = np.full((n, c, outs[0], outs[1]), -np.finfo(np.float32).max, dtype=np.float32)
    for i in range(outs[0]):
        for j in range(outs[1]):
            for a in range(k[0]):
                ih = i * s[0] - pad[0] + a * d[0]
                if not 0 <= ih < h:
                    continue
                for b in range(k[1]):
                    iw = j * s[1] - pad[1] + b * d[1]
                    if 0 <= iw < w:
                        v, m = x[:, :, ih, iw], out[:, :, i, j]
                        with np.errstate(invalid="ignore"):
                            out[:, :, i, j] = np.where(v > m, v, m)
    return out


def main():
    run = sys.argv[1] if len(sys.argv) > 1 else "tests/run"
    cases = [
        ((1, 3, 15, 17), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
        ((2, 2, 9, 10), (2, 3), (1, 2), (2, 1), (2, 1, 0, 3), False),
        ((1, 2, 6, 6), (5, 5), (1, 1), (1, 1), (2, 2, 2, 2), False),
        ((1, 2, 12, 12), (7, 7), (3, 3), (1, 1), (3, 3, 3, 3), False),
        ((1, 3, 2, 2), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), False),
        ((1, 2, 8, 8), (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), True),
        ((1, 4, 56, 56), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
        ((1, 2, 20, 40), (2, 2), (2, 2), (1, 1), (0, 0, 0, 0), False),
        ((1, 2, 9, 37), (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), True),
        ((1, 3, 7, 40), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False),
        ((1, 2, 10, 40), (1, 1), (2, 2), (1, 1), (0, 0, 0, 0), False),
        ((1, 1, 6, 50), (4, 4), (2, 2), (1, 1), (1, 1, 1, 1), False),
        ((1, 1, 4, 3000), (3, 3), (1, 1), (1, 1), (1, 1, 1, 1), False),
        ((1, 2, 20, 3), (17, 1), (1, 1), (1, 1), (8, 0, 8, 0), False),
        ((1, 3, 9, 40), (3, 3), (2, 2), (1, 1), (1, 1, 1, 1), False, "signed"),
    ]
    params, lines, outs, names = [], [], [], []
    exp = []
    for i, (shape, k, s, d, pad, ceil_mode, *kind) in enumerate(cases):
        x = signed(shape) if kind else vals(shape)
        name = "x%d" % i
        names.append((name, x))
        params.append("%%%s: Tensor[(%s), float32]" % (name, ", ".join(str(v) for v in shape)))
        attrs = "pool_size=[%d, %d], strides=[%d, %d], dilation=[%d, %d], padding=[%d, %d, %d, %d]" % (
            k + s + d + pad)
        if ceil_mode:
            attrs += ", ceil_mode=True"
        lines.append("  %%%d = nn.max_pool2d(%%%s, %s);\n" % (i, name, attrs))
        outs.append("%%%d" % i)
        exp.append(max_pool(x, k, s, d, pad, ceil_mode))
    # global pools: 8 planes at a time, then the rest one at a time (the
    # sums of multiples of 1/64 are exact in double, so the mean is one value)
    for shape in [(2, 11, 7, 7), (1, 9, 5, 3)]:
        x = vals(shape)
        name = "g%d" % len(names)
        names.append((name, x))
        params.append("%%%s: Tensor[(%s), float32]" % (name, ", ".join(str(v) for v in shape)))
        for op in ("max", "avg"):
            i = len(outs)
            lines.append("  %%%d = nn.global_%s_pool2d(%%%s);\n" % (i, op, name))
            outs.append("%%%d" % i)
            if op == "max":
                exp.append(x.max(axis=(2, 3), keepdims=True))
            else:
                m = x.astype(np.float64).sum(axis=(2, 3), keepdims=True) / (shape[2] * shape[3])
                exp.append(m.astype(np.float32))
    with open(os.path.join(run, "pool_max.relay"), "w") as f:
        f.write("// pool_max: float32 nn.max_pool2d through every path of lower/pool.c's max pool (strides,\n"
                "// dilation, asymmetric padding, ceil_mode, windows with taps outside, signed zeros and NaN), and\n"
                "// the global max and average pools over more than 8 planes.\n"
                "// Generated by tests/tools/make_pool.py, which computes the expected results with NumPy.\n")
        f.write('#[version = "0.0.5"]\ndef @main(%s) {\n%s  (%s)\n}\n' % (", ".join(params), "".join(lines),
                                                                        ", ".join(outs)))
    d = os.path.join(run, "pool_max.expected.d")
    os.makedirs(d, exist_ok=True)
    for i, e in enumerate(exp):
        np.save(os.path.join(d, "%d.npy" % i), e)
    with open(os.path.join(run, "pool_max.tol"), "w") as f:
        f.write("--bits\n")
    with open(os.path.join(run, "pool_max.args"), "w") as f:
        f.write(" ".join("--input %s=tests/run/data/pool_%s.npy" % (n, n) for n, _ in names) + "\n")
    for n, x in names:
        np.save(os.path.join(run, "data", "pool_%s.npy" % n), x)


if __name__ == "__main__":
    main()
