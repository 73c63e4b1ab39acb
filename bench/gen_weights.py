#!/usr/bin/env python3
"""Writes a model with large constant weights, for timing how relayc embeds
constants (one aligned binary blob written as a C string literal).

The model is an MLP on a (1, UNITS) float32 input with LAYERS dense layers of
UNITS x UNITS weights and a bias each, ReLU between them:

    y = dense(relu(... relu(dense(x, W1) + b1) ...), WL) + bL

Every weight and bias is a `meta[relay.Constant][i]` of a `#[metadata]`
section (TVM's JSON object graph with base64 NDArray blobs, as
`mod.astext(show_meta_data=True)` prints it, like bench/gen_resnet50.py).
With the defaults (3 layers, 2048 units) that is 3 x (2048 x 2048 + 2048)
float32 = 50.4 MB of weights, a .relay file of about 67 MB.

Also written into OUTDIR:
    x.npy        an input (1, UNITS)
    y_ref.npy    the output computed by NumPy in float32, for checking a run
    check.py     compares an output .npy with y_ref.npy (relative tolerance)
and with --c-array, weights_array.c: the same weight values as one plain
`const float w[] = {...};` initializer (decimal literals, 9 significant
digits), the layout a naive code generator would emit; it shows how long the
C compiler takes on an initializer of that size.

Needs NumPy.

    python3 bench/gen_weights.py OUTDIR [--layers L] [--units U] [--seed S] [--c-array]
"""

import argparse
import base64
import os
import struct
import sys
import time

import numpy as np

NDARRAY_MAGIC = 0xDD5E40F096B4A13F
TVM_VERSION = "0.16.0"


def ndarray_blob(a):
    """NDArray blob (spec 6.3) of a float32 CPU array."""
    a = np.ascontiguousarray(a, dtype="<f4")
    head = struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, a.ndim, 2, 32, 1)
    head += struct.pack("<%dq" % a.ndim, *a.shape)
    head += struct.pack("<q", a.nbytes)
    return head + a.tobytes()


def shape_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def tensor_ty(shape):
    return "Tensor[%s, float32]" % shape_text(shape)


def make_weights(layers, units, seed):
    rng = np.random.default_rng(seed)
    scale = np.float32(np.sqrt(3.0 / units))  # unit variance through each layer
    consts = []
    for _ in range(layers):
        w = (rng.uniform(-1.0, 1.0, size=(units, units)) * scale).astype(np.float32)
        b = (rng.uniform(-0.1, 0.1, size=(units,))).astype(np.float32)
        consts += [w, b]
    x = rng.uniform(-1.0, 1.0, size=(1, units)).astype(np.float32)
    return consts, x


def reference(consts, x):
    y = x
    n = len(consts) // 2
    for i in range(n):
        w, b = consts[2 * i], consts[2 * i + 1]
        y = (y @ w.T + b).astype(np.float32)
        if i < n - 1:
            y = np.maximum(y, np.float32(0))
    return y


def relay_text(layers, units):
    t = tensor_ty((1, units))
    lines = ['#[version = "0.0.5"]',
             "def @main(%%x: %s) -> %s {" % (t, t)]
    cur, k = "%x", 0
    for i in range(layers):
        lines.append("  %%%d = nn.dense(%s, meta[relay.Constant][%d] /* ty=%s */, units=%d) /* ty=%s */;"
                     % (k, cur, 2 * i, tensor_ty((units, units)), units, t))
        lines.append("  %%%d = nn.bias_add(%%%d, meta[relay.Constant][%d] /* ty=%s */) /* ty=%s */;"
                     % (k + 1, k, 2 * i + 1, tensor_ty((units,)), t))
        cur, k = "%%%d" % (k + 1), k + 2
        if i < layers - 1:
            lines.append("  %%%d = nn.relu(%s) /* ty=%s */;" % (k, cur, t))
            cur, k = "%%%d" % k, k + 1
    lines.append("  " + cur)
    lines.append("}")
    return "\n".join(lines) + "\n\n"


def write_metadata(f, consts):
    n = len(consts)
    f.write(b"#[metadata]\n{\n")
    f.write(b'  "root": 1, \n  "nodes": [\n')
    f.write(b'    {\n      "type_key": ""\n    }, \n')
    f.write(b'    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n'
            b'      ], \n      "data": [2]\n    }, \n')
    items = ", \n".join("        %d" % (3 + i) for i in range(n))
    f.write(('    {\n      "type_key": "Array", \n      "data": [\n%s\n      ]\n    }' % items).encode())
    for i in range(n):
        f.write(('%s\n    {\n      "type_key": "relay.Constant", \n      "attrs": {\n'
                 '        "_checked_type_": "0", \n        "data": "%d", \n'
                 '        "span": "0", \n        "virtual_device_": "0"\n      }\n    }'
                 % (", ", i)).encode())
    f.write(b'\n  ], \n  "b64ndarrays": [\n')
    for i, a in enumerate(consts):
        f.write(b'    "')
        f.write(base64.b64encode(ndarray_blob(a)))
        f.write(b'"' if i == n - 1 else b'", \n')
    f.write(('\n  ], \n  "attrs": {"tvm_version": "%s"}\n}\n' % TVM_VERSION).encode())


def write_c_array(path, consts):
    """All the weights, in order, as one `const float w[]` initializer."""
    flat = np.concatenate([a.ravel() for a in consts])
    n = flat.size
    with open(path, "w") as f:
        f.write("/* %d float32 weights (%d bytes) as a plain array initializer. */\n" % (n, 4 * n))
        f.write("const float w[%d] = {\n" % n)
        per = 8
        full = n - n % per
        np.savetxt(f, flat[:full].reshape(-1, per), fmt="%.9gf", delimiter=", ", newline=",\n")
        if full < n:
            f.write(", ".join("%.9gf" % v for v in flat[full:]) + ",\n")
        f.write("};\n")
        f.write("const float *weights(void) { return w; }\n")
    return n


CHECK_PY = r'''"""Compares an output .npy with y_ref.npy next to this file."""
import os, sys
import numpy as np
ref = np.load(os.path.join(os.path.dirname(os.path.abspath(__file__)), "y_ref.npy"))
got = np.load(sys.argv[1])
if got.shape != ref.shape or got.dtype != ref.dtype:
    print("check: shape/dtype %s %s, expected %s %s" % (got.shape, got.dtype, ref.shape, ref.dtype))
    sys.exit(1)
err = float(np.max(np.abs(got - ref)) / max(1e-30, float(np.max(np.abs(ref)))))
ok = np.isfinite(got).all() and err <= 1e-4
print("check: %s (max |out - numpy| / max |numpy| = %.2e, sum %.6g vs %.6g)"
      % ("ok" if ok else "WRONG", err, float(got.sum()), float(ref.sum())))
sys.exit(0 if ok else 1)
'''


def main(argv):
    ap = argparse.ArgumentParser(description="Write an MLP with large constant weights as Relay text.")
    ap.add_argument("outdir", help="directory for model.relay, x.npy, y_ref.npy, check.py")
    ap.add_argument("--layers", type=int, default=3, help="dense layers (default 3)")
    ap.add_argument("--units", type=int, default=2048, help="units per layer (default 2048)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the values (default 0)")
    ap.add_argument("--c-array", action="store_true", help="also write weights_array.c")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    os.makedirs(args.outdir, exist_ok=True)
    consts, x = make_weights(args.layers, args.units, args.seed)
    model = os.path.join(args.outdir, "model.relay")
    with open(model, "wb") as f:
        f.write(relay_text(args.layers, args.units).encode())
        write_metadata(f, consts)
        size = f.tell()
    np.save(os.path.join(args.outdir, "x.npy"), x)
    np.save(os.path.join(args.outdir, "y_ref.npy"), reference(consts, x))
    with open(os.path.join(args.outdir, "check.py"), "w") as f:
        f.write(CHECK_PY)
    nbytes = sum(a.nbytes for a in consts)
    print("%s: %.1f MB, %d constants, %.1f MB of float32 weights, %.1f s"
          % (model, size / 1e6, len(consts), nbytes / 1e6, time.perf_counter() - t0))
    if args.c_array:
        t1 = time.perf_counter()
        path = os.path.join(args.outdir, "weights_array.c")
        n = write_c_array(path, consts)
        print("%s: %.1f MB, %d floats, %.1f s" % (path, os.path.getsize(path) / 1e6, n, time.perf_counter() - t1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
