#!/usr/bin/python3
"""Writes the models of the model benchmark (bench/run_models.sh) as Relay
text with fixed-seed weights, and the same weights and inputs for the peers
(PyTorch, ONNX Runtime, OpenBLAS).

Models (float32, batch 1):
    mlp       784-512-512-10: nn.dense, nn.bias_add, nn.relu, nn.softmax
    lstm      an LSTM cell stepped T = 100 times by a self-recursive global
              @step(t, ...) (a tail call); input 64, hidden 128; the gates are
              one nn.dense of x_t and one of h, a bias, split into 4 (PyTorch's
              order i, f, g, o); x_t = take(xs, t, axis=0) of a (100, 1, 64) input
    treelstm  a binary Tree-LSTM over an ADT `Tree { Leaf(x), Node(Tree, Tree) }`
              of 64 leaves (a complete tree of depth 6, built in Relay by
              @build(depth, index, xs) from a (64, 1, 128) input); hidden 128
    dense     nn.dense of two (1024, 1024) inputs: a * b^T, 2 * 1024^3 FLOPs

For each model OUTDIR/NAME/ gets:
    model.relay    the module; weights are parameters of @main
    model.params   the weights in TVM's .params layout (spec 6.5), bound with
                   `relayc build --params` (no file for dense: both are inputs)
    weights.npz    the same weights for the peers (same names)
    INPUT.npy      the inputs (x, xs, or a and b)
    inputs.txt     `NAME=FILE` arguments for `relayc run --input`, one a line

Needs NumPy (Debian's python3-numpy).

    /usr/bin/python3 bench/models/gen.py OUTDIR [--seed S] [--steps T] [--depth D]
"""

import argparse
import os
import struct
import sys

import numpy as np

PARAMS_MAGIC = 0xF7E58D4F05049CB7
NDARRAY_MAGIC = 0xDD5E40F096B4A13F


def ndarray_blob(a):
    """The NDArray blob (spec 6.3) of a float32 CPU array."""
    a = np.ascontiguousarray(a, dtype="<f4")
    head = struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, a.ndim, 2, 32, 1)
    head += struct.pack("<%dq" % a.ndim, *a.shape)
    head += struct.pack("<q", a.nbytes)
    return head + a.tobytes()


def write_params(path, named):
    """named: list of (name, float32 array), written in order (spec 6.5)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<QQQ", PARAMS_MAGIC, 0, len(named)))
        for name, _ in named:
            raw = name.encode()
            f.write(struct.pack("<Q", len(raw)) + raw)
        f.write(struct.pack("<Q", len(named)))
        for _, a in named:
            f.write(ndarray_blob(a))


def ty(shape):
    return "Tensor[(%s), float32]" % ", ".join(str(d) for d in shape)


def uniform(rng, shape, bound):
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def param_list(named):
    return ",\n          ".join("%%%s: %s" % (n, ty(a.shape)) for n, a in named)


def write_model(outdir, name, text, weights, inputs):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.relay"), "w") as f:
        f.write(text)
    if weights:
        write_params(os.path.join(d, "model.params"), weights)
    np.savez(os.path.join(d, "weights.npz"), **dict(weights))
    with open(os.path.join(d, "inputs.txt"), "w") as f:
        for n, a in inputs:
            np.save(os.path.join(d, n + ".npy"), a)
            f.write("%s=%s.npy\n" % (n, n))
    nbytes = sum(a.nbytes for _, a in weights)
    print("gen: %s: %d weights (%.2f MB), inputs %s"
          % (name, len(weights), nbytes / 1e6, ", ".join("%s%s" % (n, a.shape) for n, a in inputs)))


# {==== MLP ====}

def mlp(rng):
    sizes = [784, 512, 512, 10]
    weights = []
    for i in range(3):
        k = 1.0 / np.sqrt(sizes[i])  # PyTorch's nn.Linear initialization bounds
        weights.append(("fc%d.weight" % (i + 1), uniform(rng, (sizes[i + 1], sizes[i]), k)))
        weights.append(("fc%d.bias" % (i + 1), uniform(rng, (sizes[i + 1],), k)))
    x = rng.uniform(0.0, 1.0, size=(1, 784)).astype(np.float32)
    inputs = [("x", x)]
    lines = ['#[version = "0.0.5"]',
             "// MLP 784-512-512-10, batch 1 (bench/models/gen.py).",
             "def @main(%%x: %s,\n          %s) -> %s {" % (ty(x.shape), param_list(weights), ty((1, 10)))]
    cur, k = "%x", 0
    for i in range(3):
        n = sizes[i + 1]
        lines.append("  %%%d = nn.dense(%s, %%fc%d.weight, units=%d);" % (k, cur, i + 1, n))
        lines.append("  %%%d = nn.bias_add(%%%d, %%fc%d.bias);" % (k + 1, k, i + 1))
        cur, k = "%%%d" % (k + 1), k + 2
        if i < 2:
            lines.append("  %%%d = nn.relu(%s);" % (k, cur))
            cur, k = "%%%d" % k, k + 1
    lines.append("  nn.softmax(%s, axis=-1)" % cur)
    lines.append("}")
    return "\n".join(lines) + "\n", weights, inputs


# {==== LSTM ====}

LSTM_TEXT = """#[version = "0.0.5"]
// LSTM cell, input {I}, hidden {H}, batch 1, stepped T = {T} times by the
// self-recursive @step (bench/models/gen.py). Gates in PyTorch's order i, f, g, o.
def @step(%t: int32, %xs: {XS}, %h: {HT}, %c: {HT},
          %w_ih: {WIH}, %w_hh: {WHH}, %b: {B}) -> ({HT}, {HT}) {
  if (%t == {T}) {
    (%h, %c)
  } else {
    let %x = take(%xs, %t, axis=0);
    let %gates = nn.bias_add(add(nn.dense(%x, %w_ih, units={G}), nn.dense(%h, %w_hh, units={G})), %b);
    let %s = split(%gates, indices_or_sections=4, axis=1);
    let %i = sigmoid(%s.0);
    let %f = sigmoid(%s.1);
    let %g = tanh(%s.2);
    let %o = sigmoid(%s.3);
    let %c2 = add(multiply(%f, %c), multiply(%i, %g));
    let %h2 = multiply(%o, tanh(%c2));
    @step(%t + 1, %xs, %h2, %c2, %w_ih, %w_hh, %b)
  }
}

def @main(%xs: {XS},
          %lstm.w_ih: {WIH},
          %lstm.w_hh: {WHH},
          %lstm.b: {B}) -> {HT} {
  let %zero = zeros(shape=[1, {H}], dtype="float32");
  let %r = @step(0, %xs, %zero, %zero, %lstm.w_ih, %lstm.w_hh, %lstm.b);
  %r.0
}
"""


def lstm(rng, steps, nin=64, hidden=128):
    k = 1.0 / np.sqrt(hidden)  # PyTorch's nn.LSTM initialization bounds
    # One bias: PyTorch's b_ih + b_hh, with b_hh = 0 on the PyTorch side.
    weights = [("lstm.w_ih", uniform(rng, (4 * hidden, nin), k)),
               ("lstm.w_hh", uniform(rng, (4 * hidden, hidden), k)),
               ("lstm.b", uniform(rng, (4 * hidden,), k))]
    xs = rng.uniform(-1.0, 1.0, size=(steps, 1, nin)).astype(np.float32)
    subst = {"{I}": nin, "{H}": hidden, "{T}": steps, "{G}": 4 * hidden,
             "{XS}": ty(xs.shape), "{HT}": ty((1, hidden)), "{WIH}": ty((4 * hidden, nin)),
             "{WHH}": ty((4 * hidden, hidden)), "{B}": ty((4 * hidden,))}
    text = LSTM_TEXT
    for key, v in subst.items():
        text = text.replace(key, str(v))
    return text, weights, [("xs", xs)]


# {==== TreeLSTM ====}

TREE_TEXT = """#[version = "0.0.5"]
// Binary Tree-LSTM, hidden {H}, over a complete tree of {N} leaves (depth {D})
// built by @build from the rows of %xs (bench/models/gen.py).
//   leaf x:      i, o, u = split(dense(x, W) + b); c = i * u; h = o * tanh(c)
//   node (l, r): i, fl, fr, o, u = split(dense(h_l, U_l) + dense(h_r, U_r) + b')
//                c = i * u + fl * c_l + fr * c_r; h = o * tanh(c)
// (i, o, f sigmoids, u tanh).
type Tree {
  Leaf({HT}),
  Node(Tree, Tree),
}

def @build(%d: int32, %k: int32, %xs: {XS}) -> Tree {
  if (%d == 0) {
    Leaf(take(%xs, %k, axis=0))
  } else {
    Node(@build(%d - 1, %k * 2, %xs), @build(%d - 1, %k * 2 + 1, %xs))
  }
}

def @cell(%t: Tree, %w: {W}, %b: {BL}, %ul: {U}, %ur: {U}, %bn: {BN}) -> ({HT}, {HT}) {
  match (%t) {
    Leaf(%x) => {
      let %s = split(nn.bias_add(nn.dense(%x, %w, units={G3}), %b), indices_or_sections=3, axis=1);
      let %c = multiply(sigmoid(%s.0), tanh(%s.2));
      (multiply(sigmoid(%s.1), tanh(%c)), %c)
    },
    Node(%l, %r) => {
      let %a = @cell(%l, %w, %b, %ul, %ur, %bn);
      let %z = @cell(%r, %w, %b, %ul, %ur, %bn);
      let %g = nn.bias_add(add(nn.dense(%a.0, %ul, units={G5}), nn.dense(%z.0, %ur, units={G5})), %bn);
      let %s = split(%g, indices_or_sections=5, axis=1);
      let %c = add(add(multiply(sigmoid(%s.0), tanh(%s.4)), multiply(sigmoid(%s.1), %a.1)),
                   multiply(sigmoid(%s.2), %z.1));
      (multiply(sigmoid(%s.3), tanh(%c)), %c)
    },
  }
}

def @main(%xs: {XS},
          %tree.w: {W},
          %tree.b: {BL},
          %tree.ul: {U},
          %tree.ur: {U},
          %tree.bn: {BN}) -> {HT} {
  let %tree = @build({D}, 0, %xs);
  let %r = @cell(%tree, %tree.w, %tree.b, %tree.ul, %tree.ur, %tree.bn);
  %r.0
}
"""


def treelstm(rng, depth, hidden=128):
    leaves = 1 << depth
    k = 1.0 / np.sqrt(hidden)
    weights = [("tree.w", uniform(rng, (3 * hidden, hidden), k)),
               ("tree.b", uniform(rng, (3 * hidden,), k)),
               ("tree.ul", uniform(rng, (5 * hidden, hidden), k)),
               ("tree.ur", uniform(rng, (5 * hidden, hidden), k)),
               ("tree.bn", uniform(rng, (5 * hidden,), k))]
    xs = rng.uniform(-1.0, 1.0, size=(leaves, 1, hidden)).astype(np.float32)
    subst = {"{H}": hidden, "{N}": leaves, "{D}": depth, "{G3}": 3 * hidden, "{G5}": 5 * hidden,
             "{XS}": ty(xs.shape), "{HT}": ty((1, hidden)), "{W}": ty((3 * hidden, hidden)),
             "{BL}": ty((3 * hidden,)), "{U}": ty((5 * hidden, hidden)), "{BN}": ty((5 * hidden,))}
    text = TREE_TEXT
    for key, v in subst.items():
        text = text.replace(key, str(v))
    return text, weights, [("xs", xs)]


# {==== dense ====}

def dense(rng, n=1024):
    a = rng.uniform(-1.0, 1.0, size=(n, n)).astype(np.float32)
    b = rng.uniform(-1.0, 1.0, size=(n, n)).astype(np.float32)
    text = ('#[version = "0.0.5"]\n'
            "// dense %dx%dx%d: a * b^T (bench/models/gen.py).\n"
            "def @main(%%a: %s, %%b: %s) -> %s {\n"
            "  nn.dense(%%a, %%b, units=%d)\n"
            "}\n" % (n, n, n, ty((n, n)), ty((n, n)), ty((n, n)), n))
    return text, [], [("a", a), ("b", b)]


def main(argv):
    ap = argparse.ArgumentParser(description="Write the models of bench/run_models.sh.")
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=0, help="seed of every value (default 0)")
    ap.add_argument("--steps", type=int, default=100, help="LSTM steps T (default 100)")
    ap.add_argument("--depth", type=int, default=6, help="TreeLSTM depth: 2^depth leaves (default 6)")
    ap.add_argument("--dense", type=int, default=1024, help="dense size N (default 1024)")
    args = ap.parse_args(argv)
    # One generator per model, so changing one model's size leaves the others' values alone.
    rngs = [np.random.default_rng([args.seed, i]) for i in range(4)]
    write_model(args.outdir, "mlp", *mlp(rngs[0]))
    write_model(args.outdir, "lstm", *lstm(rngs[1], args.steps))
    write_model(args.outdir, "treelstm", *treelstm(rngs[2], args.depth))
    write_model(args.outdir, "dense", *dense(rngs[3], args.dense))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
