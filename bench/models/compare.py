#!/usr/bin/python3
"""Compares the outputs of the model benchmark's engines with a reference
output (PyTorch eager's).

    /usr/bin/python3 bench/models/compare.py TOL REF.npy NAME=OUT.npy ...

Prints one line per output: its error, max |out - ref| / max |ref|, and ok or
WRONG. An output is WRONG when that error exceeds TOL, when it has a value
that is not finite, or when its element count differs from the reference's
(shapes may differ otherwise: ONNX's LSTM returns (1, 1, H) for (1, H)).
Exit status 1 when any output is WRONG. Needs NumPy.
"""

import sys

import numpy as np


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    tol = float(argv[0])
    ref = np.load(argv[1]).astype(np.float64)
    scale = max(float(np.max(np.abs(ref))), 1e-30)
    bad = 0
    for arg in argv[2:]:
        name, _, path = arg.partition("=")
        try:
            out = np.load(path).astype(np.float64)
        except (OSError, ValueError) as e:
            print("  %-22s WRONG (cannot read %s: %s)" % (name, path, e))
            bad += 1
            continue
        if out.size != ref.size:
            print("  %-22s WRONG (shape %s, expected %s)" % (name, out.shape, ref.shape))
            bad += 1
            continue
        err = float(np.max(np.abs(out.reshape(ref.shape) - ref))) / scale
        ok = bool(np.isfinite(out).all()) and err <= tol
        bad += not ok
        print("  %-22s %s (max |out - ref| / max |ref| = %.1e)" % (name, "ok" if ok else "WRONG", err))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
