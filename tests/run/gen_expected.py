#!/usr/bin/python3
"""gen_expected.py: writes the inputs (tests/run/data/*.npy), the float
expectations (NAME.expected.npy / NAME.expected.d/) and the .args/.tol
files of the tensor programs of tests/run/.

Each expectation is computed here in NumPy (float64, from the float32
inputs) straight from the operator definitions (spec sections 9 and 11):
convolution and pooling with explicit loops, never by running relayc.
Deterministic: every program has its own seeded generator.

Run with a Python that has NumPy (/usr/bin/python3):
    /usr/bin/python3 tests/run/gen_expected.py
"""
import math
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
REL_DATA = "tests/run/data"  # as seen from the repository root
TOL = "--rtol 1e-4 --atol 1e-5\n"


def f32(a):
    return np.asarray(a, dtype=np.float32)


def rng_for(name):
    # A stable seed per program (independent of Python's hash randomisation).
    return np.random.default_rng(sum((i + 1) * ord(c) for i, c in enumerate(name)))


def write_inputs(name, inputs):
    """inputs: list of (param name, array). Writes the .npy files and NAME.args."""
    args = []
    for pname, arr in inputs:
        fname = "%s_%s.npy" % (name, pname)
        np.save(os.path.join(DATA, fname), arr)
        args.append("--input %s=%s/%s" % (pname, REL_DATA, fname))
    with open(os.path.join(HERE, name + ".args"), "w") as f:
        f.write(" ".join(args) + "\n")


def write_expected(name, result, tol=TOL):
    """result: one array (NAME.expected.npy) or a list (NAME.expected.d/i.npy; nested lists: i_j.npy)."""
    npy = os.path.join(HERE, name + ".expected.npy")
    d = os.path.join(HERE, name + ".expected.d")
    if os.path.exists(npy):
        os.remove(npy)
    if os.path.isdir(d):
        shutil.rmtree(d)
    if isinstance(result, (list, tuple)):
        os.makedirs(d)

        def save_fields(prefix, fields):
            # a nested tuple field i of field k is written as k_i.npy, as relayc run --output does
            for i, r in enumerate(fields):
                key = "%s_%d" % (prefix, i) if prefix else "%d" % i
                if isinstance(r, (list, tuple)):
                    save_fields(key, r)
                else:
                    np.save(os.path.join(d, key + ".npy"), r)

        save_fields("", result)
    else:
        np.save(npy, result)
    tpath = os.path.join(HERE, name + ".tol")
    if tol:
        with open(tpath, "w") as f:
            f.write(tol)
    elif os.path.exists(tpath):
        os.remove(tpath)


# ---------------------------------------------------------------- reference math

def dense(x, w):
    # nn.dense: x . w^T, w is [units, in]
    return x.astype(np.float64) @ w.astype(np.float64).T


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def conv2d(x, w, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """NCHW / OIHW cross-correlation by explicit loops; padding = (top, left, bottom, right)."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    pt, pl, pb, pr = padding
    sh, sw = strides
    dh, dw = dilation
    oh = (h + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
    out_per_group = o // groups
    y = np.zeros((n, o, oh, ow))
    for b in range(n):
        for oc in range(o):
            g = oc // out_per_group
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ic in range(cg):
                        ci = g * cg + ic
                        for p in range(kh):
                            for q in range(kw):
                                yy = i * sh + p * dh - pt
                                xx = j * sw + q * dw - pl
                                if 0 <= yy < h and 0 <= xx < wd:
                                    acc += x[b, ci, yy, xx] * w[oc, ic, p, q]
                    y[b, oc, i, j] = acc
    return y


def pool2d(x, kind, pool, strides, padding, count_include_pad=False):
    """max / avg pooling, NCHW, padding = (top, left, bottom, right), by explicit loops."""
    x = x.astype(np.float64)
    n, c, h, wd = x.shape
    kh, kw = pool
    sh, sw = strides
    pt, pl, pb, pr = padding
    oh = (h + pt + pb - kh) // sh + 1
    ow = (wd + pl + pr - kw) // sw + 1
    y = np.zeros((n, c, oh, ow))
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    vals = []
                    padded_count = 0
                    for p in range(kh):
                        for q in range(kw):
                            yy = i * sh + p - pt
                            xx = j * sw + q - pl
                            # inside the padded input?
                            if -pt <= yy < h + pb and -pl <= xx < wd + pr:
                                padded_count += 1
                            if 0 <= yy < h and 0 <= xx < wd:
                                vals.append(x[b, ch, yy, xx])
                    if kind == "max":
                        y[b, ch, i, j] = max(vals)  # padding never wins
                    else:
                        div = padded_count if count_include_pad else len(vals)
                        y[b, ch, i, j] = sum(vals) / div
    return y


def batch_norm(x, gamma, beta, mean, var, axis, eps, center=True, scale=True):
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    r = lambda v: v.astype(np.float64).reshape(shape)
    y = (x.astype(np.float64) - r(mean)) / np.sqrt(r(var) + eps)
    if scale:
        y = y * r(gamma)
    if center:
        y = y + r(beta)
    return y


# ---------------------------------------------------------------- programs

def mlp_softmax():
    g = rng_for("mlp_softmax")
    x = f32(g.uniform(-1, 1, (2, 8)))
    w1 = f32(g.uniform(-0.5, 0.5, (16, 8)))
    b1 = f32(g.uniform(-0.2, 0.2, (16,)))
    w2 = f32(g.uniform(-0.5, 0.5, (4, 16)))
    b2 = f32(g.uniform(-0.2, 0.2, (4,)))
    write_inputs("mlp_softmax", [("x", x), ("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)])
    h = np.maximum(dense(x, w1) + b1, 0.0)
    y = softmax(dense(h, w2) + b2, axis=-1)
    write_expected("mlp_softmax", f32(y))


def conv_bn_relu_pool():
    g = rng_for("conv_bn_relu_pool")
    data = f32(g.uniform(-1, 1, (1, 3, 8, 8)))
    weight = f32(g.uniform(-0.5, 0.5, (4, 3, 3, 3)))
    gamma = f32(g.uniform(0.5, 1.5, (4,)))
    beta = f32(g.uniform(-0.3, 0.3, (4,)))
    mean = f32(g.uniform(-0.2, 0.2, (4,)))
    var = f32(g.uniform(0.5, 2.0, (4,)))
    write_inputs("conv_bn_relu_pool", [("data", data), ("weight", weight), ("gamma", gamma), ("beta", beta),
                                       ("mean", mean), ("var", var)])
    y = conv2d(data, weight, padding=(1, 1, 1, 1))
    y = batch_norm(y, gamma, beta, mean, var, axis=1, eps=1e-3)
    y = np.maximum(y, 0.0)
    y = pool2d(y, "max", (2, 2), (2, 2), (0, 0, 0, 0))
    write_expected("conv_bn_relu_pool", f32(y))


def lstm_cell():
    g = rng_for("lstm_cell")
    x = f32(g.uniform(-1, 1, (1, 4)))
    h = f32(g.uniform(-1, 1, (1, 8)))
    c = f32(g.uniform(-1, 1, (1, 8)))
    w_ih = f32(g.uniform(-0.5, 0.5, (32, 4)))
    w_hh = f32(g.uniform(-0.5, 0.5, (32, 8)))
    b = f32(g.uniform(-0.2, 0.2, (32,)))
    write_inputs("lstm_cell", [("x", x), ("h", h), ("c", c), ("w_ih", w_ih), ("w_hh", w_hh), ("b", b)])
    gates = dense(x, w_ih) + dense(h, w_hh) + b
    i, f, gg, o = (gates[:, 8 * k:8 * (k + 1)] for k in range(4))
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(gg)
    h2 = sigmoid(o) * np.tanh(c2)
    write_expected("lstm_cell", [f32(h2), f32(c2)])


def shape_chain():
    g = rng_for("shape_chain")
    x = f32(g.uniform(-1, 1, (2, 3, 4)))
    idx = np.array([2, 0, 5], dtype=np.int32)
    write_inputs("shape_chain", [("x", x), ("idx", idx)])
    t = x.astype(np.float64).reshape(6, 4).T
    t = np.concatenate([t, t], axis=0)
    t = t[1:8:2, 0:6:2]
    t = t[:, np.clip(idx, 0, t.shape[1] - 1)]  # take, mode="clip"
    m = t.mean(axis=1)
    am = np.int32(np.argmax(m))
    am0 = np.argmax(t, axis=0).astype(np.int32)
    rev = m[3:0:-1]
    write_expected("shape_chain", [f32(m), np.array(am, dtype=np.int32), am0, f32(rev)])


def reshape_codes():
    g = rng_for("reshape_codes")
    x = f32(g.uniform(-1, 1, (2, 3, 4)))
    write_inputs("reshape_codes", [("x", x)])
    res = [x.reshape(2, 12), x.reshape(6, 4), x.reshape(1, 2, 3, 4), x.reshape(2, 1, 3, 4), x.reshape(12, 2),
           x.reshape(2, 3, 4), np.transpose(x, (2, 0, 1)), np.flip(x, axis=1), x]
    write_expected("reshape_codes", [np.ascontiguousarray(f32(r)) for r in res], tol=None)


def conv_variants():
    g = rng_for("conv_variants")
    x = f32(g.uniform(-1, 1, (1, 2, 7, 7)))
    w1 = f32(g.uniform(-0.5, 0.5, (3, 2, 3, 3)))
    w2 = f32(g.uniform(-0.5, 0.5, (2, 2, 3, 3)))
    w3 = f32(g.uniform(-0.5, 0.5, (4, 1, 3, 3)))
    write_inputs("conv_variants", [("x", x), ("w1", w1), ("w2", w2), ("w3", w3)])
    r0 = conv2d(x, w1, strides=(2, 2), padding=(1, 0, 0, 1))
    r1 = conv2d(x, w2, padding=(2, 2, 2, 2), dilation=(2, 2))
    r2 = conv2d(x, w3, padding=(1, 1, 1, 1), groups=2)
    r3 = pool2d(x, "avg", (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=False)
    r4 = pool2d(x, "avg", (3, 3), (2, 2), (1, 1, 1, 1), count_include_pad=True)
    r5 = pool2d(-np.abs(x), "max", (3, 3), (2, 2), (1, 1, 1, 1))
    r6 = x.astype(np.float64).mean(axis=(2, 3), keepdims=True)
    write_expected("conv_variants", [f32(r) for r in (r0, r1, r2, r3, r4, r5, r6)])


def op_defaults():
    g = rng_for("op_defaults")
    x = f32(g.uniform(-1, 1, (2, 5)))
    w = f32(g.uniform(-0.5, 0.5, (3, 5)))
    a = f32(g.uniform(-1, 1, (2, 3, 4)))
    b = f32(g.uniform(-1, 1, (2, 4, 5)))
    bt = f32(g.uniform(-1, 1, (2, 5, 4)))
    b1 = f32(g.uniform(-1, 1, (1, 4, 5)))
    y = f32(g.uniform(-1, 1, (1, 2, 2, 3)))
    gamma = f32(g.uniform(0.5, 1.5, (3,)))
    beta = f32(g.uniform(-0.3, 0.3, (3,)))
    mean = f32(g.uniform(-0.2, 0.2, (3,)))
    var = f32(g.uniform(0.5, 2.0, (3,)))
    z = f32(g.uniform(-1, 1, (1, 3, 2, 2)))
    alpha = f32([0.1, 0.2, 0.3])
    write_inputs("op_defaults", [("x", x), ("w", w), ("a", a), ("b", b), ("bt", bt), ("b1", b1), ("y", y),
                                 ("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var), ("z", z),
                                 ("alpha", alpha)])
    X = x.astype(np.float64)
    A = a.astype(np.float64)
    r0 = np.where(X > 0, X, 0.25 * X)
    r1 = np.where(X > 0, X, 0.1 * X)
    r2 = A @ b.astype(np.float64)
    r3 = A @ np.transpose(bt.astype(np.float64), (0, 2, 1))
    r4 = A @ b1.astype(np.float64)  # batch 1 broadcasts
    r5 = dense(x, w)
    r6 = batch_norm(y, gamma, beta, mean, var, axis=3, eps=1e-5, scale=False)
    r7 = log_softmax(X, axis=-1)
    Z = z.astype(np.float64)
    al = alpha.astype(np.float64).reshape(1, 3, 1, 1)
    r8 = np.where(Z > 0, Z, al * Z)
    write_expected("op_defaults", [f32(r) for r in (r0, r1, r2, r3, r4, r5, r6, r7, r8)])


def elementwise_math():
    g = rng_for("elementwise_math")
    x = f32(g.uniform(0.5, 2.0, (2, 5)))
    # y in [-1, 1), away from the integer steps of floor/ceil(3y)
    y = f32(g.uniform(-1, 1, (2, 5)))
    y3 = 3.0 * y.astype(np.float64)
    y = np.where(np.abs(y3 - np.round(y3)) < 0.05, y + f32(0.04), y).astype(np.float32)
    write_inputs("elementwise_math", [("x", x), ("y", y)])
    X = x.astype(np.float64)
    Y = y.astype(np.float64)
    erf = np.vectorize(math.erf)
    res = [np.exp(Y), np.log(X), np.sqrt(X), 1.0 / np.sqrt(X), np.tanh(Y), sigmoid(Y), np.clip(Y, -0.5, 0.5),
           np.where(Y > 0, X, Y), np.maximum(X, Y), X ** 2.5, erf(Y), np.abs(Y),
           np.floor(np.float32(3.0) * y), np.ceil(np.float32(3.0) * y), (Y - 1.0) / X]
    write_expected("elementwise_math", [f32(r) for r in res])


def reductions():
    g = rng_for("reductions")
    x = f32(g.uniform(-1, 1, (2, 3, 4)))
    write_inputs("reductions", [("x", x)])
    X = x.astype(np.float64)
    res = [f32(X.sum(axis=1)), f32(X.mean(axis=(0, 2), keepdims=True)), f32(X.max()), f32(X.min(axis=-1)),
           f32(X.prod(axis=2)), f32(X.mean(axis=(0, 2))), np.argmax(X, axis=2).astype(np.int32),
           np.argmin(X, axis=0).astype(np.int32), f32(X.max(axis=2))]
    write_expected("reductions", res)


def tensor_while_loop():
    g = rng_for("tensor_while_loop")
    x = f32(g.uniform(-1, 1, (3,)))
    write_inputs("tensor_while_loop", [("x", x)])
    s = x.astype(np.float64)
    i = 0
    while not i >= 10:
        s = s * 0.5 + 1.0
        i += 1
    out = s * 2.0 if s.sum() > 5.0 else -s
    write_expected("tensor_while_loop", [f32(out), np.array(i, dtype=np.int32)])


def expr_inputs():
    g = rng_for("expr_inputs")
    x = f32(g.uniform(-1, 1, (2, 3)))
    b = f32(g.uniform(-0.5, 0.5, (3,)))
    write_inputs("expr_inputs", [("x", x), ("b", b)])
    r = np.maximum(x.astype(np.float64) + b, 0.0)
    write_expected("expr_inputs", f32(r * r))


def pad_tile_ops():
    g = rng_for("pad_tile_ops")
    x = f32(g.uniform(-1, 1, (2, 3)))
    v = f32(g.uniform(-1, 1, (3,)))
    write_inputs("pad_tile_ops", [("x", x), ("v", v)])
    X = x.astype(np.float64)
    res = [np.pad(X, ((1, 0), (2, 1)), mode="constant", constant_values=0.5),
           np.pad(X, ((1, 1), (1, 2)), mode="edge"),
           np.pad(X, ((1, 1), (2, 2)), mode="reflect"),
           np.tile(X, (2, 2)),
           np.repeat(X, 2, axis=1),
           np.broadcast_to(v, (4, 3)),
           np.stack([X, X * 2.0], axis=1),
           X.reshape(1, 1, 2, 3),
           np.full((2, 2), 3.5),
           np.where(X > 0, X, 0.0)]
    res = [f32(r) for r in res]
    write_expected("pad_tile_ops", res + [[f32(np.ones(3)), f32(X + v)]])


def gather_scan_ops():
    g = rng_for("gather_scan_ops")
    x = f32(g.uniform(0.5, 1.5, (2, 3)))
    y = f32(g.uniform(-1, 1, (2, 3, 4)))
    ind = np.array([0, 3, 5, 1], dtype=np.int32)
    gi = g.integers(0, 4, (2, 3, 2)).astype(np.int32)
    gnd = np.array([[1, 0, 1], [2, 0, 1]], dtype=np.int32)  # picks y[1, 2], y[0, 0], y[1, 1]
    write_inputs("gather_scan_ops", [("x", x), ("y", y), ("ind", ind), ("gi", gi), ("gnd", gnd)])
    X = x.astype(np.float64)
    Y = y.astype(np.float64)
    one_hot = np.zeros((4, 4))
    for i, k in enumerate(ind):
        for d in range(4):
            one_hot[i, d] = 1.0 if k == d else 0.0
    excl = np.concatenate([np.zeros((2, 3, 1)), np.cumsum(Y, axis=2)[:, :, :-1]], axis=2)
    gnd_res = np.stack([Y[gnd[0, j], gnd[1, j]] for j in range(3)])
    res = [Y[:, :, 1:3], Y[:, :, 3:4], one_hot, np.cumsum(Y, axis=1), excl, np.cumprod(X, axis=1),
           np.take_along_axis(Y, gi, axis=2), gnd_res, Y.reshape(2, 12), Y[:, 0:2, 1:3], Y[1:2, 0:3, 1:3],
           np.concatenate([Y, Y[:, :, 1:3], Y[:, :, 0:1]], axis=-1)]
    write_expected("gather_scan_ops", [f32(r) for r in res])


def norm_ops():
    g = rng_for("norm_ops")
    t = f32(g.uniform(-1, 1, (3, 5)))
    g5 = f32(g.uniform(0.5, 1.5, (5,)))
    b5 = f32(g.uniform(-0.3, 0.3, (5,)))
    x = f32(g.uniform(-1, 1, (2, 4, 3, 3)))
    g4 = f32(g.uniform(0.5, 1.5, (4,)))
    b4 = f32(g.uniform(-0.3, 0.3, (4,)))
    mean = f32(g.uniform(-0.2, 0.2, (4,)))
    var = f32(g.uniform(0.5, 2.0, (4,)))
    write_inputs("norm_ops", [("t", t), ("g5", g5), ("b5", b5), ("x", x), ("g4", g4), ("b4", b4), ("mean", mean),
                              ("var", var)])
    eps = 1e-5
    T = t.astype(np.float64)
    X = x.astype(np.float64)
    ch = lambda v: v.astype(np.float64).reshape(1, 4, 1, 1)
    r0 = (T - T.mean(axis=-1, keepdims=True)) / np.sqrt(T.var(axis=-1, keepdims=True) + eps) * g5 + b5
    m = X.mean(axis=(2, 3), keepdims=True)
    r1 = (X - m) / np.sqrt(X.var(axis=(2, 3), keepdims=True) + eps) * ch(g4) + ch(b4)
    G = X.reshape(2, 2, 2, 3, 3)
    gn = (G - G.mean(axis=(2, 3, 4), keepdims=True)) / np.sqrt(G.var(axis=(2, 3, 4), keepdims=True) + eps)
    r2 = gn.reshape(2, 4, 3, 3) * ch(g4) + ch(b4)
    r3 = X / np.sqrt(np.maximum((X * X).sum(axis=1, keepdims=True), 1e-10))
    size, alpha, beta, bias = 3, 0.5, 0.75, 2.0
    sq = np.zeros_like(X)
    for c in range(4):
        for c2 in range(c - size // 2, c + size // 2 + 1):
            if 0 <= c2 < 4:
                sq[:, c] += X[:, c2] ** 2
    r4 = X / (bias + alpha * sq / size) ** beta
    r5 = batch_norm(x, g4, b4, mean, var, axis=1, eps=eps, center=False)
    r6 = softmax(X, axis=1)
    write_expected("norm_ops", [f32(r) for r in (r0, r1, r2, r3, r4, r5, r6)])


def adaptive_pool(x, oh, ow, kind):
    n, c, h, w = x.shape
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        for j in range(ow):
            w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
            win = x[:, :, h0:h1, w0:w1]
            y[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


def resize_linear_half_pixel(x, oh, ow):
    n, c, h, w = x.shape
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        fy = (i + 0.5) * h / oh - 0.5
        y0 = math.floor(fy)
        ty = fy - y0
        ya, yb = min(max(y0, 0), h - 1), min(max(y0 + 1, 0), h - 1)
        for j in range(ow):
            fx = (j + 0.5) * w / ow - 0.5
            x0 = math.floor(fx)
            tx = fx - x0
            xa, xb = min(max(x0, 0), w - 1), min(max(x0 + 1, 0), w - 1)
            top = x[:, :, ya, xa] * (1 - tx) + x[:, :, ya, xb] * tx
            bot = x[:, :, yb, xa] * (1 - tx) + x[:, :, yb, xb] * tx
            y[:, :, i, j] = top * (1 - ty) + bot * ty
    return y


def pool_resize():
    g = rng_for("pool_resize")
    x = f32(g.uniform(-1, 1, (1, 2, 5, 5)))
    z = f32(g.uniform(-1, 1, (1, 8, 2, 2)))
    s = f32(g.uniform(-1, 1, (1, 2, 4, 4)))
    write_inputs("pool_resize", [("x", x), ("z", z), ("s", s)])
    X = x.astype(np.float64)
    Z = z.astype(np.float64)
    S = s.astype(np.float64)
    r0 = adaptive_pool(X, 3, 3, "avg")
    r1 = adaptive_pool(X, 2, 1, "max")
    r2 = X.max(axis=(2, 3), keepdims=True)
    # ceil_mode: out = ceil((5 - 2) / 2) + 1 = 3; the last window holds only row/column 4
    r3 = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            r3[:, :, i, j] = X[:, :, 2 * i:min(2 * i + 2, 5), 2 * j:min(2 * j + 2, 5)].max(axis=(2, 3))
    r4 = np.repeat(np.repeat(X, 2, axis=2), 2, axis=3)
    b = 2
    r5 = Z.reshape(1, b, b, 2, 2, 2).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 4)  # DCR
    r6 = Z.reshape(1, 2, b, b, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 4)  # CRD
    r7 = S.reshape(1, 2, 2, b, 2, b).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 2)
    r8 = resize_linear_half_pixel(S, 8, 8)
    r9 = np.zeros((1, 2, 8, 8))
    for i in range(8):
        for j in range(8):
            r9[:, :, i, j] = S[:, :, math.floor(i * 4 / 8), math.floor(j * 4 / 8)]
    write_expected("pool_resize", [f32(r) for r in (r0, r1, r2, r3, r4, r5, r6, r7, r8, r9)])


def conv_transpose():
    g = rng_for("conv_transpose")
    x = f32(g.uniform(-1, 1, (1, 2, 3, 3)))
    w = f32(g.uniform(-0.5, 0.5, (2, 3, 3, 3)))
    x1 = f32(g.uniform(-1, 1, (1, 2, 8)))
    w1 = f32(g.uniform(-0.5, 0.5, (3, 2, 3)))
    xh = f32(g.uniform(-1, 1, (1, 5, 5, 2)))
    wh = f32(g.uniform(-0.5, 0.5, (3, 3, 2, 4)))
    d = f32(g.uniform(-1, 1, (2, 3, 5)))
    wd = f32(g.uniform(-0.5, 0.5, (4, 5)))
    write_inputs("conv_transpose", [("x", x), ("w", w), ("x1", x1), ("w1", w1), ("xh", xh), ("wh", wh), ("d", d),
                                    ("wd", wd)])
    # transpose conv as a scatter: input (i, j) adds x * w[c, o, p, q] at output (i*s + p - pad, j*s + q - pad)
    X = x.astype(np.float64)
    W = w.astype(np.float64)
    out = 2 * (3 - 1) + 3 - 2 + 1
    r0 = np.zeros((1, 3, out, out))
    for c in range(2):
        for o in range(3):
            for i in range(3):
                for j in range(3):
                    for p in range(3):
                        for q in range(3):
                            yy, xx = i * 2 + p - 1, j * 2 + q - 1
                            if 0 <= yy < out and 0 <= xx < out:
                                r0[0, o, yy, xx] += X[0, c, i, j] * W[c, o, p, q]
    # conv1d as a conv2d over a height-1 image
    r1 = conv2d(x1.reshape(1, 2, 1, 8), w1.reshape(3, 2, 1, 3), strides=(1, 2), padding=(0, 1, 0, 1)).reshape(1, 3, 4)
    # NHWC / HWIO -> NCHW / OIHW and back
    r2 = conv2d(np.transpose(xh, (0, 3, 1, 2)), np.transpose(wh, (3, 2, 0, 1)), padding=(1, 1, 1, 1))
    r2 = np.transpose(r2, (0, 2, 3, 1))
    r3 = d.astype(np.float64) @ wd.astype(np.float64).T
    write_expected("conv_transpose", [f32(r) for r in (r0, r1, r2, r3)])


def sort_ops():
    g = rng_for("sort_ops")
    x = f32(g.permutation(10).reshape(2, 5) * 0.25 - 1.0 + g.uniform(0, 0.1, (2, 5)))
    write_inputs("sort_ops", [("x", x)])
    X = x.astype(np.float64)
    desc0 = np.argsort(-X, axis=0, kind="stable")
    top_idx = np.argsort(-X, axis=1, kind="stable")[:, :2]
    m = X.mean(axis=1, keepdims=True)
    res = [f32(np.sort(X, axis=-1)), np.argsort(X, axis=-1).astype(np.int32), desc0.astype(np.int32),
           f32(np.take_along_axis(X, top_idx, axis=1)), top_idx.astype(np.int32),
           f32(((X - m) ** 2).mean(axis=1)),
           np.array(1, dtype=np.int32),  # argmax([1, 3, 3, 2]): first of the tied maxima
           np.array(2, dtype=np.int32),  # with select_last_index=True: the last one
           np.argmin(X, axis=1).reshape(2, 1).astype(np.int32)]
    write_expected("sort_ops", res)


def tensor_list():
    g = rng_for("tensor_list")
    a, b, c, w = (f32(g.uniform(-1, 1, (4,))) for _ in range(4))
    write_inputs("tensor_list", [("a", a), ("b", b), ("c", c), ("w", w)])
    W = w.astype(np.float64)
    total = sum(np.maximum(t.astype(np.float64) * W, 0.0) for t in (a, b, c))
    write_expected("tensor_list", [f32(total), f32(a.astype(np.float64) - b)])


def dynamic_concat():
    g = rng_for("dynamic_concat")
    x = f32(g.uniform(-1, 1, (2,)))
    write_inputs("dynamic_concat", [("x", x)])
    X = x.astype(np.float64)
    r = np.concatenate([X, X, 2 * X, 3 * X])
    write_expected("dynamic_concat", [f32(r), f32(r.sum()), np.array([8], dtype=np.int32)])


def int_divide_vector():
    # Hand-derived (see the comment in int_divide_vector.relay), not computed.
    res = [[-3, 3, -4, 4, 0], [-4, 3, -4, 4, -1], [-1, 1, 0, 1, -1], [1, 1, 0, 1, 1]]
    write_expected("int_divide_vector", [np.array(r, dtype=np.int32) for r in res], tol=None)


def function_select_input():
    # n = 7, v = [1, 2, 3]: @scale(n, v) = 7 * 6 = 42 (function_select_input.expected).
    np.save(os.path.join(DATA, "function_select_input_n.npy"), np.array(7, dtype=np.int32))
    np.save(os.path.join(DATA, "function_select_input_v.npy"), np.array([1, 2, 3], dtype=np.int32))


def bad_inputs():
    good = f32(np.arange(6).reshape(2, 3))
    np.save(os.path.join(DATA, "input_unknown_x.npy"), good)
    np.save(os.path.join(DATA, "input_unknown_y.npy"), good)
    with open(os.path.join(HERE, "input_unknown.args"), "w") as f:
        f.write("--input x=%s/input_unknown_x.npy --input y=%s/input_unknown_y.npy\n" % (REL_DATA, REL_DATA))
    np.save(os.path.join(DATA, "input_wrong_shape_x.npy"), f32([1, 2, 3]))
    with open(os.path.join(HERE, "input_wrong_shape.args"), "w") as f:
        f.write("--input x=%s/input_wrong_shape_x.npy\n" % REL_DATA)
    np.save(os.path.join(DATA, "input_wrong_dtype_x.npy"), np.arange(6, dtype=np.int32).reshape(2, 3))
    with open(os.path.join(HERE, "input_wrong_dtype.args"), "w") as f:
        f.write("--input x=%s/input_wrong_dtype_x.npy\n" % REL_DATA)
    # A valid (2, 3) float32 file with the last 10 of its 24 data bytes cut off.
    path = os.path.join(DATA, "input_truncated_x.npy")
    np.save(path, good)
    with open(path, "rb") as f:
        blob = f.read()
    with open(path, "wb") as f:
        f.write(blob[:-10])
    with open(os.path.join(HERE, "input_truncated.args"), "w") as f:
        f.write("--input x=%s/input_truncated_x.npy\n" % REL_DATA)


def main():
    os.makedirs(DATA, exist_ok=True)
    for fn in (mlp_softmax, conv_bn_relu_pool, lstm_cell, shape_chain, reshape_codes, conv_variants, op_defaults,
               elementwise_math, reductions, tensor_while_loop, expr_inputs, pad_tile_ops, gather_scan_ops, norm_ops,
               pool_resize, conv_transpose, sort_ops, tensor_list, dynamic_concat, int_divide_vector,
               function_select_input, bad_inputs):
        fn()


if __name__ == "__main__":
    main()
