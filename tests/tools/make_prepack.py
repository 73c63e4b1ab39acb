#!/usr/bin/env python3
"""Writes the inputs of tests/run/dense_prepacked.relay: the weights as a
.params file (bound to @main's parameters, so they are constants of the
module and the GEMM kernels read them packed at build time) and the
activations as .npy files. Values: a fixed linear congruential sequence,
rounded to float32. Standard library only.

    python3 tests/tools/make_prepack.py [DIR]   (default: tests/run/data)

Then tests/run/dense_prepacked.expected.d comes from the interpreter:
    relayc run tests/run/dense_prepacked.relay --interp $(cat tests/run/dense_prepacked.args) \
        --output tests/run/dense_prepacked.expected.d
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_params import params_file  # noqa: E402


def values(n, seed):
    """n multiples of 1/16 in [-1, 1]: every product and partial sum of the
    tests' GEMMs (K <= 300) is exact in float32, so compiled and
    interpreted results agree exactly."""
    out, s = [], seed
    for _ in range(n):
        s = (s * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(((s >> 8) % 33 - 16) / 16.0)
    return out


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def npy(path, shape, vals):
    head = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    pad = 64 - (10 + len(head) + 1) % 64
    head = head + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode("latin1"))
        f.write(struct.pack("<%df" % len(vals), *vals))


WEIGHTS = [
    ("w1", (70, 300)),      # two KC blocks (K = 300), an edge panel (N = 70)
    ("w2", (1040, 40)),     # two NC blocks (N > 1024), one short KC block
    ("b2", (1040,)),
    ("w3", (1, 20, 37)),    # batch_matmul, B not transposed, broadcast over batches
    ("w4", (2, 37, 20)),    # batch_matmul, transpose_b
]
INPUTS = [
    ("x1", (33, 300)),
    ("x2", (8, 40)),
    ("x3", (2, 9, 20)),
    ("x4", (3, 300)),       # a GEMV on w1: w1 also stays unpacked
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "run", "data")
    entries = [(name, "float32", shape, values(numel(shape), 7 + i)) for i, (name, shape) in enumerate(WEIGHTS)]
    with open(os.path.join(d, "dense_prepacked.params"), "wb") as f:
        f.write(params_file(entries))
    for i, (name, shape) in enumerate(INPUTS):
        npy(os.path.join(d, "dense_prepacked_%s.npy" % name), shape, values(numel(shape), 101 + i))


if __name__ == "__main__":
    main()
