#!/usr/bin/python3
"""Fixtures for the elemwise family's reference kernels (runtime/kernels/k_elemwise.c).

Writes the inputs and expected outputs as .npy files into tests/kernels/data/elemwise/
and the cases into tests/kernels/elemwise.txt (format: tests/unit/test_kernels.c).
The expected values are computed here with NumPy and plain Python, independently
of the C code, following TVM v0.16's semantics (spec sections 9 and 11):

  - integer divide/mod truncate toward zero, floor_divide/floor_mod round toward
    -inf, integer division by zero is a run-time error; float mod is fmod, float
    floor_mod is x - floor(x / y) * y computed in the dtype;
  - maximum(a, b) = a > b ? a : b and minimum(a, b) = a < b ? a : b (TVM's
    selects), so relu(NaN) = 0 and clip = max(min(x, a_max), a_min);
  - round rounds half away from zero; sign(NaN) = 0;
  - mean of integers = the wrapped sum divided (truncating) by the count;
  - argmax/argmin take the first index (the last with select_last_index);
    argsort/sort/topk are stable;
  - float to int casts truncate, anything to bool is x != 0.

Run with /usr/bin/python3 (NumPy 1.24) from anywhere; the output is deterministic.
"""
import math
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY = "elemwise"
DATA = os.path.join(HERE, "data", FAMILY)

rng = np.random.default_rng(20240611)
lines = []
counts = {}

F16 = "rtol=1e-3, atol=1e-3"


def fname(op):
    return op.replace(".", "_")


def save(stem, arr):
    arr = np.asarray(arr)
    path = os.path.join(DATA, stem + ".npy")
    np.save(path, np.array(arr, order="C"), allow_pickle=False)
    return FAMILY + "/" + stem + ".npy"


def case(op, ins, outs, attrs=None, tol=None, comment=None):
    """One line: ins are arrays (or tuples of arrays for a tuple argument), outs
    arrays or an 'error: ...' string."""
    n = counts.get(op, 0)
    counts[op] = n + 1
    stem = "%s_%d" % (fname(op), n)
    parts = [op]
    for i, a in enumerate(ins):
        if isinstance(a, tuple):
            names = [save("%s_a%d_%d" % (stem, i, k), f) for k, f in enumerate(a)]
            parts.append("(" + ", ".join(names) + ")")
        else:
            parts.append(save("%s_a%d" % (stem, i), a))
    if attrs:
        parts.append("attrs: " + attrs)
    if isinstance(outs, str):
        rhs = outs
    else:
        rhs = " ".join(save("%s_out%d" % (stem, k), o) for k, o in enumerate(outs))
    line = " | ".join(parts) + " => " + rhs
    if tol:
        line += " | " + tol
    if comment:
        lines.append("# " + comment)
    lines.append(line)


def section(title):
    lines.append("")
    lines.append("# {==== %s ====}" % title)


def unif(lo, hi, shape, dtype=np.float32):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def ints(lo, hi, shape, dtype=np.int32):
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def bools(shape):
    return rng.integers(0, 1, size=shape, endpoint=True).astype(np.bool_)


def in_f64(fn, x):
    """fn computed in float64, rounded to x's dtype."""
    with np.errstate(all="ignore"):
        return fn(x.astype(np.float64)).astype(x.dtype)


# {==== Integer helpers (Python ints, wrapped to the dtype) ====}


def wrap(v, dtype):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return v != 0
    bits = dt.itemsize * 8
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_map(fn, dtype, *arrays):
    """fn on Python ints elementwise over the broadcast arrays; the result wrapped
    to dtype. fn returns an int, or None for a division by zero."""
    bs = np.broadcast_arrays(*arrays)
    out = np.zeros(bs[0].shape, dtype=dtype)
    for idx in np.ndindex(bs[0].shape):
        r = fn(*[int(b[idx]) for b in bs])
        out[idx] = wrap(int(r), dtype)
    return out


def tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def tmod(x, y):
    return x - tdiv(x, y) * y


def round_half_away(x):
    t = np.trunc(x)
    frac = x - t
    return (t + np.where(np.abs(frac) >= 0.5, np.sign(x), 0)).astype(x.dtype)


def tvm_max(a, b):
    return np.where(a > b, a, b).astype(a.dtype)


def tvm_min(a, b):
    return np.where(a < b, a, b).astype(a.dtype)


# {==== Unary ====}


def gen_unary():
    section("Unary float math (computed in float64, rounded to the dtype)")
    math_ops = [
        ("acos", np.arccos, (-0.95, 0.95)),
        ("acosh", np.arccosh, (1.0, 5.0)),
        ("asin", np.arcsin, (-0.95, 0.95)),
        ("asinh", np.arcsinh, (-4.0, 4.0)),
        ("atan", np.arctan, (-4.0, 4.0)),
        ("atanh", np.arctanh, (-0.95, 0.95)),
        ("cos", np.cos, (-4.0, 4.0)),
        ("cosh", np.cosh, (-3.0, 3.0)),
        ("erf", np.vectorize(math.erf, otypes=[np.float64]), (-2.5, 2.5)),
        ("exp", np.exp, (-5.0, 5.0)),
        ("fast_erf", np.vectorize(math.erf, otypes=[np.float64]), (-2.5, 2.5)),
        ("fast_exp", np.exp, (-5.0, 5.0)),
        ("fast_tanh", np.tanh, (-4.0, 4.0)),
        ("log", np.log, (0.05, 10.0)),
        ("log10", np.log10, (0.05, 10.0)),
        ("log2", np.log2, (0.05, 10.0)),
        ("rsqrt", lambda v: 1.0 / np.sqrt(v), (0.05, 10.0)),
        ("sigmoid", lambda v: 1.0 / (1.0 + np.exp(-v)), (-6.0, 6.0)),
        ("sin", np.sin, (-4.0, 4.0)),
        ("sinh", np.sinh, (-3.0, 3.0)),
        ("sqrt", np.sqrt, (0.0, 10.0)),
        ("tan", np.tan, (-1.2, 1.2)),
        ("tanh", np.tanh, (-4.0, 4.0)),
    ]
    for op, fn, (lo, hi) in math_ops:
        x = unif(lo, hi, (3, 4))
        case(op, [x], [in_f64(fn, x)])
        x = unif(lo, hi, (5,), np.float64)
        case(op, [x], [in_f64(fn, x)])
    for op, fn, (lo, hi) in math_ops:
        if op in ("exp", "sqrt", "tanh", "sigmoid", "log", "erf", "cos"):
            x = unif(lo, hi, (2, 3), np.float16)
            case(op, [x], [in_f64(fn, x)], tol=F16)
    inf, nan = np.inf, np.nan
    sp = np.array([0.0, -1.0, inf, -inf, nan], np.float32)
    case("log", [sp], [in_f64(np.log, sp)], comment="special values: log(0) = -inf, log(-1) = NaN")
    case("sqrt", [sp], [in_f64(np.sqrt, sp)])
    sp2 = np.array([-1000.0, 1000.0, 0.0, inf, -inf], np.float32)
    case("sigmoid", [sp2], [in_f64(lambda v: 1.0 / (1.0 + np.exp(-v)), sp2)])
    case("tanh", [sp2], [in_f64(np.tanh, sp2)])
    case("exp", [sp2], [in_f64(np.exp, sp2)])
    xi = np.array([0, 1, 4, 10, 99, 2], np.int32)
    case("sqrt", [xi], [np.trunc(np.sqrt(xi.astype(np.float64))).astype(np.int32)],
         comment="float math on integers: computed in double, cast back (truncating)")

    section("Rounding and sign")
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999997, -0.49999997, 2.7, -2.7, 0.0, -0.0],
                      np.float32)
    case("round", [halves], [round_half_away(halves)], comment="round: half away from zero (llvm.round)")
    h64 = np.array([0.49999999999999994, -3.5, 4.5, 1e15 + 0.5, -7.25], np.float64)
    case("round", [h64], [round_half_away(h64)])
    h16 = np.array([[-2.5, 0.5, 3.5], [1.25, -1.75, 6.5]], np.float16)
    case("round", [h16], [round_half_away(h16)])
    case("round", [np.array([3, -4, 0], np.int32)], [np.array([3, -4, 0], np.int32)])
    for op, fn in (("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc)):
        x = np.concatenate([halves, unif(-10, 10, (6,))])
        case(op, [x], [fn(x)])
        x = unif(-10, 10, (2, 3), np.float64)
        case(op, [x], [fn(x)])
        x = unif(-10, 10, (4,), np.float16)
        case(op, [x], [fn(x)], tol=F16)
        xi = np.array([-3, 0, 5], np.int64)
        case(op, [xi], [xi])
    s = np.array([-2.5, 0.0, -0.0, 3.0, np.inf, -np.inf, np.nan], np.float32)
    case("sign", [s], [np.array([-1, 0, 0, 1, 1, -1, 0], np.float32)], comment="sign(NaN) = 0 (TVM's selects)")
    case("sign", [np.array([-7, 0, 9, -128, 127], np.int8)], [np.array([-1, 0, 1, -1, 1], np.int8)])
    case("sign", [np.array([0, 3, 255], np.uint8)], [np.array([0, 1, 1], np.uint8)])
    case("sign", [np.array([-1.5, 2.0], np.float64)], [np.array([-1.0, 1.0], np.float64)])

    section("abs, negative, copy")
    x = np.array([-1.5, 0.0, -0.0, 2.0, -np.inf, np.nan], np.float32)
    case("abs", [x], [np.abs(x)])
    case("abs", [np.array([-128, -5, 0, 7, 127], np.int8)], [np.array([-128, 5, 0, 7, 127], np.int8)],
         comment="abs of the most negative integer wraps")
    case("abs", [np.array([0, 200, 255], np.uint8)], [np.array([0, 200, 255], np.uint8)])
    xi = ints(-1000, 1000, (2, 3), np.int64)
    case("abs", [xi], [np.abs(xi)])
    x = unif(-5, 5, (3, 2), np.float16)
    case("abs", [x], [np.abs(x)])
    x = unif(-5, 5, (2, 3))
    case("negative", [x], [-x])
    case("negative", [np.array([-128, -1, 0, 5], np.int8)], [np.array([-128, 1, 0, -5], np.int8)])
    case("negative", [np.array([0, 1, 200], np.uint8)], [np.array([0, 255, 56], np.uint8)])
    x = unif(-5, 5, (3,), np.float64)
    case("negative", [x], [-x])
    for x in (unif(-5, 5, (2, 2)), ints(-100, 100, (3,), np.int16), bools((2, 3)), unif(-1, 1, (2,), np.float16)):
        case("copy", [x], [x.copy()])

    section("relu, leaky_relu, clip")
    x = np.array([-2.0, -0.0, 0.0, 0.5, 3.0, np.nan, -np.inf, np.inf], np.float32)
    case("nn.relu", [x], [tvm_max(x, np.zeros_like(x))], comment="relu = max(x, 0): relu(NaN) = 0")
    x = ints(-50, 50, (3, 4))
    case("nn.relu", [x], [np.maximum(x, 0)])
    x = unif(-3, 3, (2, 3), np.float64)
    case("nn.relu", [x], [np.maximum(x, 0)])
    x = unif(-3, 3, (2, 5))
    a = np.float32(0.1)
    case("nn.leaky_relu", [x], [np.where(x > 0, x, x * a).astype(np.float32)], attrs="alpha=0.1f")
    case("nn.leaky_relu", [x], [np.where(x > 0, x, x * np.float32(0.25)).astype(np.float32)],
         comment="the attribute default is alpha=0.25")
    x = np.array([-7, -1, 0, 3, 8], np.int32)
    case("nn.leaky_relu", [x], [np.array([-14, -2, 0, 3, 8], np.int32)], attrs="alpha=2.5f",
         comment="integers multiply by alpha cast to the dtype (truncated)")
    case("nn.leaky_relu", [x], [np.array([0, 0, 0, 3, 8], np.int32)], attrs="alpha=0.1f")
    x = unif(-3, 3, (4,), np.float16)
    case("nn.leaky_relu", [x], [np.where(x > 0, x, x.astype(np.float64) * 0.2).astype(np.float16)],
         attrs="alpha=0.2f", tol=F16)
    x = np.concatenate([unif(-3, 3, (6,)), np.array([np.nan, np.inf, -np.inf], np.float32)])
    lo, hi = np.float32(-1.0), np.float32(1.5)
    case("clip", [x], [tvm_max(tvm_min(x, np.full_like(x, hi)), np.full_like(x, lo))], attrs="a_min=-1f, a_max=1.5f",
         comment="clip = max(min(x, a_max), a_min): clip(NaN) = a_max")
    x = ints(-10, 10, (3, 3))
    case("clip", [x], [np.clip(x, -3, 5)], attrs="a_min=-3, a_max=5")
    x = np.array([0, 1, 50, 100, 101, 255], np.uint8)
    case("clip", [x], [np.clip(x, 0, 100).astype(np.uint8)], attrs="a_min=-1.5f, a_max=100.7f",
         comment="integer bounds are truncated and saturated to the dtype")
    x = unif(-8, 8, (2, 4), np.float16)
    case("clip", [x], [np.clip(x, np.float16(0), np.float16(6))], attrs="a_min=0f, a_max=6f")
    x = unif(-8, 8, (5,), np.float64)
    case("clip", [x], [np.clip(x, -2.25, 2.25)], attrs="a_min=-2.25f, a_max=2.25f")

    section("zeros_like, ones_like, bitwise_not, logical_not")
    for x in (unif(-1, 1, (2, 3)), ints(-5, 5, (4,), np.int8), bools((3,)), unif(-1, 1, (2,), np.float16)):
        case("zeros_like", [x], [np.zeros_like(x)])
        case("ones_like", [x], [np.ones_like(x)])
    x = ints(-1000, 1000, (2, 3))
    case("bitwise_not", [x], [~x])
    x = np.array([0, 1, 254, 255], np.uint8)
    case("bitwise_not", [x], [~x])
    x = np.array([True, False, True])
    case("bitwise_not", [x], [~x], comment="bitwise_not of bool is logical not")
    x = ints(-2**40, 2**40, (3,), np.int64)
    case("bitwise_not", [x], [~x])
    x = bools((2, 4))
    case("logical_not", [x], [~x])

    section("fixed_point_multiply (int32, round half up)")

    def fpm(x, m, s):
        left, right = max(s, 0), max(-s, 0)
        v = wrap(x << left, np.int64)
        v = wrap(v * m, np.int64)
        total = right + 31
        v = wrap(v + (1 << (total - 1)), np.int64)
        return v >> total

    for m, s in ((1073741824, 1), (1073741824, 0), (1395864371, -3), (1518500250, 2), (2147483647, -1)):
        x = np.concatenate([np.array([3, -3, 1, -1, 5, -5, 0], np.int32), ints(-100000, 100000, (5,))])
        case("fixed_point_multiply", [x], [int_map(lambda v: fpm(v, m, s), np.int32, x)],
             attrs="multiplier=%d, shift=%d" % (m, s))

    section("isnan, isinf, isfinite")
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3e38], np.float32)
    for op, fn in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        case(op, [x], [fn(x)])
        xh = np.array([[np.nan, 1.0], [np.inf, -2.0]], np.float16)
        case(op, [xh], [fn(xh)])
        xi = np.array([0, 5, -3], np.int32)
        case(op, [xi], [fn(xi)])
        xd = np.array([np.nan, 1e300, -np.inf], np.float64)
        case(op, [xd], [fn(xd)])


# {==== Binary ====}


def gen_binary():
    section("Binary arithmetic with broadcasting")
    a, b = unif(-5, 5, (2, 3, 4)), unif(-5, 5, (3, 1))
    case("add", [a, b], [a + b])
    a, b = unif(-5, 5, (4,)), unif(-5, 5, ())
    case("add", [a, b], [a + b])
    a, b = np.array([100, -100, 127, -128], np.int8), np.array([100, -100, 1, -1], np.int8)
    case("add", [a, b], [int_map(lambda x, y: x + y, np.int8, a, b)], comment="integers wrap around")
    a, b = np.array([200, 255, 0], np.uint8), np.array([100, 1, 0], np.uint8)
    case("add", [a, b], [int_map(lambda x, y: x + y, np.uint8, a, b)])
    a, b = unif(-5, 5, (2, 2), np.float16), unif(-5, 5, (2, 1), np.float16)
    case("add", [a, b], [(a.astype(np.float64) + b).astype(np.float16)], tol=F16)
    a, b = unif(-5, 5, (1, 3), np.float64), unif(-5, 5, (2, 1), np.float64)
    case("add", [a, b], [a + b])
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    case("add", [a, b], [np.array([True, True, True, False])], comment="bool arithmetic: a non-zero result is true")
    a, b = ints(-2**62, 2**62, (3,), np.int64), ints(-2**62, 2**62, (3,), np.int64)
    case("add", [a, b], [int_map(lambda x, y: x + y, np.int64, a, b)])

    a, b = unif(-5, 5, (2, 1)), unif(-5, 5, (1, 3))
    case("subtract", [a, b], [a - b])
    a, b = ints(-1000, 1000, (2, 3)), ints(-1000, 1000, (3,))
    case("subtract", [a, b], [a - b])
    a, b = np.array([1, 0, 200], np.uint8), np.array([2, 1, 100], np.uint8)
    case("subtract", [a, b], [int_map(lambda x, y: x - y, np.uint8, a, b)])
    a, b = unif(-5, 5, (3,), np.float64), unif(-5, 5, (3,), np.float64)
    case("subtract", [a, b], [a - b])

    a, b = unif(-3, 3, (3, 4)), unif(-3, 3, (4,))
    case("multiply", [a, b], [a * b])
    a, b = np.array([300, -300, 181, 2], np.int16), np.array([300, 300, 181, -3], np.int16)
    case("multiply", [a, b], [int_map(lambda x, y: x * y, np.int16, a, b)])
    a, b = unif(-3, 3, (2, 2), np.float64), np.array(2.5, np.float64)
    case("multiply", [a, b], [a * b])
    a, b = unif(-3, 3, (3,), np.float16), unif(-3, 3, (3,), np.float16)
    case("multiply", [a, b], [(a.astype(np.float64) * b).astype(np.float16)], tol=F16)
    a, b = bools((2, 3)), bools((3,))
    case("multiply", [a, b], [a & b])

    section("divide, mod and friends (spec 11: integer divide truncates, floor_* floor)")
    a = np.array([7, -7, 7, -7, 0, 9, -9, 1], np.int32)
    b = np.array([2, 2, -2, -2, 5, 3, 4, -3], np.int32)
    x, y = unif(-10, 10, (3, 4)), unif(0.5, 4, (4,)) * np.where(rng.random(4) < 0.5, -1, 1).astype(np.float32)
    x2, y2 = unif(-10, 10, (6,), np.float64), unif(0.5, 4, (6,), np.float64)
    with np.errstate(all="ignore"):
        fz = np.array([1.0, -1.0, 0.0, 5.0], np.float32), np.array([0.0, 0.0, 0.0, -0.0], np.float32)
        case("divide", [x, y], [x / y])
        case("divide", [x2, y2], [x2 / y2])
        case("divide", list(fz), [fz[0] / fz[1]], comment="float division by zero: inf or NaN")
    case("divide", [a, b], [int_map(tdiv, np.int32, a, b)])
    case("divide", [np.array([-128, 100], np.int8), np.array([-1, -7], np.int8)],
         [np.array([-128, -14], np.int8)], comment="the most negative value divided by -1 wraps")
    ua, ub = np.array([255, 7, 200], np.uint8), np.array([2, 7, 3], np.uint8)
    case("divide", [ua, ub], [ua // ub])
    case("divide", [np.array([1, 2, 3], np.int32), np.array([1, 0, 1], np.int32)], "error: division by zero")
    case("divide", [np.array([4], np.uint8), np.array([0], np.uint8)], "error: division by zero")
    case("divide", [np.array([True, True]), np.array([True, False])], "error: division by zero")
    h1, h2 = unif(-4, 4, (3,), np.float16), unif(0.5, 2, (3,), np.float16)
    case("divide", [h1, h2], [(h1.astype(np.float64) / h2).astype(np.float16)], tol=F16)

    case("mod", [a, b], [int_map(tmod, np.int32, a, b)])
    case("mod", [x, y], [np.fmod(x, y)], comment="float mod is fmod (sign of the dividend)")
    case("mod", [np.array([-7.5, 7.5], np.float64), np.array([2.0, -2.0], np.float64)],
         [np.array([-1.5, 1.5], np.float64)])
    case("mod", [np.array([7, 255], np.uint32), np.array([3, 16], np.uint32)], [np.array([1, 15], np.uint32)])
    case("mod", [np.array([-128], np.int8), np.array([-1], np.int8)], [np.array([0], np.int8)])
    case("mod", [a, np.zeros_like(a)], "error: division by zero")

    def fdiv(x_, y_):
        return x_ // y_

    def fmod_(x_, y_):
        return x_ - (x_ // y_) * y_

    case("floor_divide", [a, b], [int_map(fdiv, np.int32, a, b)])
    case("floor_divide", [a.astype(np.int8), b.astype(np.int8)], [int_map(fdiv, np.int8, a, b)])
    case("floor_divide", [ua, ub], [ua // ub])
    case("floor_divide", [x, y], [np.floor(x / y)], comment="floats: floor(x / y) in the dtype")
    case("floor_divide", [x2, y2], [np.floor(x2 / y2)])
    case("floor_divide", [a, b * 0], "error: division by zero")
    a64, b64 = ints(-10**12, 10**12, (4,), np.int64), ints(1, 1000, (4,), np.int64) * np.array([1, -1, 1, -1])
    case("floor_divide", [a64, b64], [int_map(fdiv, np.int64, a64, b64)])

    case("floor_mod", [a, b], [int_map(fmod_, np.int32, a, b)])
    case("floor_mod", [a64, b64], [int_map(fmod_, np.int64, a64, b64)])
    case("floor_mod", [x, y], [(x - np.floor(x / y) * y).astype(np.float32)],
         comment="floats: x - floor(x / y) * y in the dtype", tol="rtol=1e-5, atol=1e-5")
    case("floor_mod", [x2, y2], [x2 - np.floor(x2 / y2) * y2])
    case("floor_mod", [ua, ub], [ua % ub])
    case("floor_mod", [a, b * 0], "error: division by zero")

    case("trunc_divide", [a, b], [int_map(tdiv, np.int32, a, b)])
    case("trunc_divide", [x, y], [np.trunc(x / y)])
    case("trunc_divide", [a, b * 0], "error: division by zero")
    case("trunc_divide", [ua, ub], [ua // ub])
    case("trunc_mod", [a, b], [int_map(tmod, np.int32, a, b)])
    case("trunc_mod", [x, y], [(x - np.trunc(x / y) * y).astype(np.float32)], tol="rtol=1e-5, atol=1e-5")
    case("trunc_mod", [a, b * 0], "error: division by zero")
    case("trunc_mod", [ua, ub], [ua % ub])

    section("power")
    pa, pb = unif(0.1, 3, (2, 3)), unif(-2, 2, (3,))
    case("power", [pa, pb], [in_f64(lambda v: v ** pb.astype(np.float64), pa)])
    pa = np.array([-2.0, -2.0, 0.0, 4.0, -8.0], np.float64)
    pb = np.array([3.0, 2.0, 0.0, 0.5, 1.0 / 3.0], np.float64)
    with np.errstate(all="ignore"):
        case("power", [pa, pb], [np.power(pa, pb)], comment="a negative base with a non-integer exponent is NaN")
    pa = np.array([2, 3, -2, 0, 1, -1, 5, -1, 7], np.int32)
    pb = np.array([3, 2, 3, 0, -1, -3, -1, 4, 12], np.int32)

    def ipow(x_, e):
        if e < 0:
            return 1 if x_ == 1 else ((-1 if e % 2 else 1) if x_ == -1 else 0)
        return x_ ** e

    case("power", [pa, pb], [int_map(ipow, np.int32, pa, pb)],
         comment="integers (TVM rejects them): exact with wrap-around; a negative exponent truncates 1 / x**|e|")
    case("power", [np.array([0], np.int32), np.array([-1], np.int32)], "error: division by zero")
    h1, h2 = unif(0.5, 2, (3,), np.float16), unif(-2, 2, (3,), np.float16)
    case("power", [h1, h2], [np.power(h1.astype(np.float64), h2.astype(np.float64)).astype(np.float16)], tol=F16)

    section("maximum, minimum (TVM's selects: a > b ? a : b, a < b ? a : b)")
    ma, mb = unif(-5, 5, (2, 3)), unif(-5, 5, (2, 1))
    case("maximum", [ma, mb], [np.maximum(ma, mb)])
    case("minimum", [ma, mb], [np.minimum(ma, mb)])
    na, nb = np.array([np.nan, 1.0, np.nan], np.float32), np.array([1.0, np.nan, np.nan], np.float32)
    case("maximum", [na, nb], [tvm_max(na, nb)], comment="NaN: the second operand wins when the compare fails")
    case("minimum", [na, nb], [tvm_min(na, nb)])
    ia, ib = ints(-128, 127, (6,), np.int8), ints(-128, 127, (6,), np.int8)
    case("maximum", [ia, ib], [np.maximum(ia, ib)])
    case("minimum", [ia, ib], [np.minimum(ia, ib)])
    ua2 = np.array([2**63 + 5, 1, 2**64 - 1], np.uint64)
    ub2 = np.array([1, 2**63, 0], np.uint64)
    case("maximum", [ua2, ub2], [np.maximum(ua2, ub2)], comment="uint64 compares unsigned")
    case("minimum", [ua2, ub2], [np.minimum(ua2, ub2)])
    fa, fb = unif(-1, 1, (3,), np.float64), unif(-1, 1, (3,), np.float64)
    case("maximum", [fa, fb], [np.maximum(fa, fb)])
    case("minimum", [fa, fb], [np.minimum(fa, fb)])
    ba, bb = bools((4,)), bools((4,))
    case("maximum", [ba, bb], [ba | bb])
    case("minimum", [ba, bb], [ba & bb])

    section("bitwise and shifts")
    ia, ib = ints(-1000, 1000, (2, 3)), ints(-1000, 1000, (3,))
    ua3, ub3 = ints(0, 255, (4,), np.uint8), ints(0, 255, (4,), np.uint8)
    la, lb = ints(-2**62, 2**62, (3,), np.int64), ints(-2**62, 2**62, (1,), np.int64)
    ba, bb = bools((2, 2)), bools((2, 2))
    for op, fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or), ("bitwise_xor", np.bitwise_xor)):
        case(op, [ia, ib], [fn(ia, ib)])
        case(op, [ua3, ub3], [fn(ua3, ub3)])
        case(op, [la, lb], [fn(la, lb)])
        case(op, [ba, bb], [fn(ba, bb)])
    sa, sb = np.array([1, -1, 3, 5, 7], np.int32), np.array([0, 4, 31, 3, 30], np.int32)
    case("left_shift", [sa, sb], [int_map(lambda x_, s: x_ << s, np.int32, sa, sb)])
    us, ush = np.array([1, 255, 3], np.uint8), np.array([7, 1, 2], np.uint8)
    case("left_shift", [us, ush], [int_map(lambda x_, s: x_ << s, np.uint8, us, ush)])
    ls, lsh = np.array([1, -3], np.int64), np.array([62, 10], np.int64)
    case("left_shift", [ls, lsh], [int_map(lambda x_, s: x_ << s, np.int64, ls, lsh)])
    ra, rb = np.array([-16, 16, -1, 7, -2**31], np.int32), np.array([2, 2, 5, 1, 31], np.int32)
    case("right_shift", [ra, rb], [int_map(lambda x_, s: x_ >> s, np.int32, ra, rb)],
         comment="right_shift of signed integers is arithmetic")
    ur, urs = np.array([255, 128, 1], np.uint8), np.array([1, 7, 1], np.uint8)
    case("right_shift", [ur, urs], [ur >> urs])
    ul, uls = np.array([2**64 - 1], np.uint64), np.array([60], np.uint64)
    case("right_shift", [ul, uls], [ul >> uls])

    section("comparisons")
    ca = np.array([1.0, np.nan, 2.0, -0.0, np.inf, 3.0], np.float32)
    cb = np.array([1.0, np.nan, 3.0, 0.0, np.inf, 2.0], np.float32)
    ia, ib = ints(-3, 3, (2, 4)), ints(-3, 3, (4,))
    ua2 = np.array([2**63 + 1, 5, 7], np.uint64)
    ub2 = np.array([3, 2**63 + 1, 7], np.uint64)
    fa, fb = unif(-1, 1, (2, 1), np.float64), unif(-1, 1, (1, 3), np.float64)
    ba, bb = np.array([True, True, False, False]), np.array([True, False, True, False])
    ha, hb = np.array([1.0, 2.0, -1.0], np.float16), np.array([1.0, 1.5, 0.5], np.float16)
    for op, fn in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)):
        with np.errstate(all="ignore"):
            case(op, [ca, cb], [fn(ca, cb)])
        case(op, [ia, ib], [fn(ia, ib)])
        case(op, [ua2, ub2], [fn(ua2, ub2)])
        case(op, [fa, fb], [fn(fa, fb)])
        case(op, [ba, bb], [fn(ba, bb)])
        case(op, [ha, hb], [fn(ha, hb)])

    section("logical ops (bool)")
    la, lb = bools((2, 3)), bools((3,))
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or), ("logical_xor", np.logical_xor)):
        case(op, [ba, bb], [fn(ba, bb)])
        case(op, [la, lb], [fn(la, lb)])
        case(op, [la, np.array(True)], [fn(la, True)])

    section("where")
    c, x, y = bools((2, 3)), unif(-1, 1, (2, 3)), unif(-1, 1, (3,))
    case("where", [c, x, y], [np.where(c, x, y)])
    c, x, y = bools((3, 1)), ints(-9, 9, (1, 4)), ints(-9, 9, ())
    case("where", [c, x, y], [np.where(c, x, y)])
    c, x, y = np.array(True), unif(-1, 1, (2, 2), np.float64), unif(-1, 1, (2, 2), np.float64)
    case("where", [c, x, y], [np.where(c, x, y)])
    c, x, y = np.array([False, True]), bools((2, 2)), bools((2, 1))
    case("where", [c, x, y], [np.where(c, x, y)])
    c, x, y = bools((4,)), unif(-1, 1, (4,), np.float16), unif(-1, 1, (4,), np.float16)
    case("where", [c, x, y], [np.where(c, x, y)])


# {==== Casts ====}


def gen_casts():
    section("cast (float to int truncates; to bool is x != 0), reinterpret, cast_like, full_like")
    x = np.array([-1.7, 1.7, 2.5, -0.5, 1000.9, -0.0], np.float32)
    case("cast", [x], [np.trunc(x).astype(np.int32)], attrs='dtype="int32"')
    xb = np.array([0.5, 0.0, -0.0, np.nan, -2.0], np.float32)
    case("cast", [xb], [np.array([True, False, False, True, True])], attrs='dtype="bool"')
    xi = ints(-2000, 2000, (2, 3))
    case("cast", [xi], [xi.astype(np.float16)], attrs='dtype="float16"')
    xi = np.array([300, -129, 127, -128, 2**40 + 5], np.int64)
    case("cast", [xi], [int_map(lambda v: v, np.int8, xi)], attrs='dtype="int8"', comment="integers wrap")
    xu = np.array([200, 127, 128, 0], np.uint8)
    case("cast", [xu], [xu.astype(np.int8)], attrs='dtype="int8"')
    xb2 = bools((2, 3))
    case("cast", [xb2], [xb2.astype(np.float32)], attrs='dtype="float32"')
    case("cast", [xb2], [xb2.astype(np.int64)], attrs='dtype="int64"')
    xd = unif(-100, 100, (4,), np.float64)
    case("cast", [xd], [xd.astype(np.float32)], attrs='dtype="float32"')
    xf = unif(0, 250, (5,))
    case("cast", [xf], [np.trunc(xf).astype(np.uint8)], attrs='dtype="uint8"')
    xs = np.array([-1, 5], np.int32)
    case("cast", [xs], [xs.astype(np.uint64)], attrs='dtype="uint64"')
    xu64 = np.array([2**64 - 1, 2**63, 12345], np.uint64)
    case("cast", [xu64], [xu64.astype(np.float64)], attrs='dtype="float64"', comment="uint64 above 2**63 stays positive")
    xh = unif(-50, 50, (3,), np.float16)
    case("cast", [xh], [np.trunc(xh).astype(np.int16)], attrs='dtype="int16"')
    xf = unif(-5, 5, (4,))
    case("cast", [xf], [xf.astype(np.float64)], attrs='dtype="float64"')

    x = unif(-5, 5, (2, 3))
    case("reinterpret", [x], [x.view(np.int32)], attrs='dtype="int32"')
    x = ints(-30000, 30000, (4,), np.int16)
    case("reinterpret", [x], [x.view(np.uint16)], attrs='dtype="uint16"')
    x = unif(-5, 5, (3,), np.float16)
    case("reinterpret", [x], [x.view(np.int16)], attrs='dtype="int16"')
    x = np.array([0x3FF0000000000000, 0xC000000000000000], np.uint64)
    case("reinterpret", [x], [x.view(np.float64)], attrs='dtype="float64"')

    x, like = unif(-5, 5, (2, 3)), np.zeros((7,), np.int64)
    case("cast_like", [x, like], [np.trunc(x).astype(np.int64)])
    x, like = ints(-9, 9, (4,)), np.zeros((), np.float16)
    case("cast_like", [x, like], [x.astype(np.float16)])
    x, like = unif(-1, 1, (3,), np.float64), np.zeros((1,), np.bool_)
    case("cast_like", [x, like], [x != 0])

    x = unif(-1, 1, (2, 3))
    case("full_like", [x, np.array(2.5, np.float32)], [np.full_like(x, 2.5)])
    x = ints(-9, 9, (3, 2))
    case("full_like", [x, np.array(2.7, np.float32)], [np.full_like(x, 2)], comment="the fill value is cast (truncated)")
    x = bools((4,))
    case("full_like", [x, np.array(3, np.int32)], [np.ones_like(x)])
    x = unif(-1, 1, (2,), np.float16)
    case("full_like", [x, np.array(-7, np.int64)], [np.full_like(x, -7)])
    x = np.zeros((), np.int8)
    case("full_like", [x, np.array(300, np.int32)], [np.array(44, np.int8)])


# {==== Reductions ====}


def axes_attr(axis, keepdims=False, exclude=False, extra=None):
    parts = []
    if axis is not None:
        parts.append("axis=[%s]" % ", ".join(str(a) for a in axis))
    if keepdims:
        parts.append("keepdims=True")
    if exclude:
        parts.append("exclude=True")
    if extra:
        parts.append(extra)
    return ", ".join(parts) or None


def red_axes(ndim, axis, exclude):
    if axis is None or len(axis) == 0:
        return tuple(range(ndim))
    ax = tuple(sorted(a % ndim for a in axis))
    if exclude:
        ax = tuple(i for i in range(ndim) if i not in ax)
    return ax


def gen_reductions():
    section("sum, mean, max, min, prod, all, any")
    x3 = unif(-5, 5, (2, 3, 4))
    variants = [(None, False, False), ([1], False, False), ([0, 2], True, False), ([-1], False, False),
                ([1], False, True), ([], False, False), ([0, 1, 2], True, False)]
    for axis, keep, excl in variants:
        ax = red_axes(3, axis, excl)
        attrs = axes_attr(axis, keep, excl)
        case("sum", [x3], [np.sum(x3.astype(np.float64), axis=ax, keepdims=keep).astype(np.float32)], attrs=attrs)
        case("mean", [x3], [np.mean(x3.astype(np.float64), axis=ax, keepdims=keep).astype(np.float32)], attrs=attrs)
        case("max", [x3], [np.max(x3, axis=ax, keepdims=keep)], attrs=attrs)
        case("min", [x3], [np.min(x3, axis=ax, keepdims=keep)], attrs=attrs)
        case("prod", [x3], [np.prod(x3.astype(np.float64), axis=ax, keepdims=keep).astype(np.float32)], attrs=attrs)
    xi = np.array([[100, 100, 100], [-100, -100, 5]], np.int8)
    case("sum", [xi], [np.sum(xi, axis=1, dtype=np.int8)], attrs="axis=[1]", comment="integer sums wrap in the dtype")
    xi = ints(-1000, 1000, (3, 4), np.int64)
    case("sum", [xi], [np.sum(xi, axis=0)], attrs="axis=[0]")
    xu = ints(0, 255, (2, 5), np.uint8)
    case("sum", [xu], [np.sum(xu, axis=1, dtype=np.uint8)], attrs="axis=[1]")
    xh = unif(-2, 2, (3, 4), np.float16)
    case("sum", [xh], [np.sum(xh.astype(np.float64), axis=1).astype(np.float16)], attrs="axis=[1]", tol=F16)
    xd = unif(-2, 2, (2, 3), np.float64)
    case("sum", [xd], [np.sum(xd, axis=1, keepdims=True)], attrs="axis=1, keepdims=True")
    case("sum", [np.zeros((0, 3), np.float32)], [np.zeros((3,), np.float32)], attrs="axis=[0]")

    def imean(a, axis, dtype):
        s = np.sum(a, axis=axis, dtype=dtype)
        cnt = wrap(int(np.prod([a.shape[i] for i in axis])), dtype)
        return int_map(lambda v: tdiv(v, cnt), dtype, s)

    xi = np.array([[1, 2, 2], [-1, -2, -2], [7, 7, 8]], np.int32)
    case("mean", [xi], [imean(xi, (1,), np.int32)], attrs="axis=[1]",
         comment="integer mean: the wrapped sum divided by the count in the dtype, truncating")
    xi = ints(-100, 100, (4, 5), np.int64)
    case("mean", [xi], [imean(xi, (0,), np.int64)], attrs="axis=[0]")
    xu = ints(0, 255, (2, 6), np.uint8)
    case("mean", [xu], [imean(xu, (1,), np.uint8)], attrs="axis=[1]")
    xh = unif(-2, 2, (2, 8), np.float16)
    case("mean", [xh], [np.mean(xh.astype(np.float64), axis=1).astype(np.float16)], attrs="axis=[1]", tol=F16)
    xd = unif(-2, 2, (3, 3), np.float64)
    case("mean", [xd], [np.mean(xd)])
    case("mean", [np.zeros((0, 2), np.int32)], "error: division by zero", attrs="axis=[0]")

    xi = ints(-1000, 1000, (3, 4))
    case("max", [xi], [np.max(xi, axis=1)], attrs="axis=[1]")
    case("min", [xi], [np.min(xi, axis=0, keepdims=True)], attrs="axis=[0], keepdims=True")
    xu = np.array([[2**64 - 1, 5], [2**63, 2**63 + 1]], np.uint64)
    case("max", [xu], [np.max(xu, axis=1)], attrs="axis=[1]")
    case("min", [xu], [np.min(xu, axis=1)], attrs="axis=[1]")
    xh = unif(-2, 2, (2, 3), np.float16)
    case("max", [xh], [np.max(xh, axis=0)], attrs="axis=[0]")
    case("min", [xh], [np.min(xh)])
    xb = bools((3, 4))
    case("max", [xb], [np.any(xb, axis=1)], attrs="axis=[1]")
    case("max", [np.zeros((0, 3), np.float32)], [np.full((3,), -np.finfo(np.float32).max, np.float32)],
         attrs="axis=[0]", comment="an empty max is the dtype's lowest value (TVM's identity)")
    case("min", [np.zeros((2, 0), np.int8)], [np.full((2,), 127, np.int8)], attrs="axis=[1]")
    xi = np.array([[2, 3, 4], [100, 2, 2]], np.int16)
    case("prod", [xi], [int_map(lambda v: v, np.int16, np.array([24, 400]))], attrs="axis=[1]")
    xi = np.array([[70000, 70000], [3, -5]], np.int32)
    case("prod", [xi], [int_map(lambda a_, b_: a_ * b_, np.int32, xi[:, 0], xi[:, 1])], attrs="axis=[1]",
         comment="integer products wrap")
    xd = unif(0.5, 1.5, (2, 4), np.float64)
    case("prod", [xd], [np.prod(xd, axis=1)], attrs="axis=[-1]")

    xb3 = bools((2, 3, 4))
    xb3[0, 0, :] = True
    xb3[1, 2, :] = False
    for axis, keep, excl in [(None, False, False), ([2], False, False), ([0, 1], True, False), ([1], False, True)]:
        ax = red_axes(3, axis, excl)
        case("all", [xb3], [np.all(xb3, axis=ax, keepdims=keep)], attrs=axes_attr(axis, keep, excl))
        case("any", [xb3], [np.any(xb3, axis=ax, keepdims=keep)], attrs=axes_attr(axis, keep, excl))

    section("argmax, argmin (first index of ties; the last with select_last_index)")

    def argred(a, axis, exclude, keep, fn, last):
        ax = red_axes(a.ndim, axis, exclude)
        kept = [i for i in range(a.ndim) if i not in ax]
        t = np.transpose(a, kept + list(ax))
        t = t.reshape([a.shape[i] for i in kept] + [-1])
        if last:
            idx = t.shape[-1] - 1 - fn(t[..., ::-1], axis=-1)
        else:
            idx = fn(t, axis=-1)
        idx = idx.astype(np.int32)
        if keep:
            idx = idx.reshape([1 if i in ax else a.shape[i] for i in range(a.ndim)])
        return idx

    t2 = np.array([[1, 3, 3, 2], [5, 5, 1, 5], [0, -1, -1, 0]], np.float32)
    for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        case(op, [t2], [argred(t2, [1], False, False, fn, False)], attrs="axis=[1]")
        case(op, [t2], [argred(t2, [1], False, False, fn, True)], attrs="axis=[1], select_last_index=True")
        case(op, [t2], [argred(t2, [0], False, True, fn, False)], attrs="axis=[0], keepdims=True")
        case(op, [t2], [argred(t2, None, False, False, fn, False)])
        x3i = ints(-3, 3, (2, 3, 4))
        case(op, [x3i], [argred(x3i, [0, 2], False, False, fn, False)], attrs="axis=[0, 2]")
        case(op, [x3i], [argred(x3i, [1], True, False, fn, True)], attrs="axis=[1], exclude=True, select_last_index=True")
        xu = np.array([[2**63, 1, 2**64 - 1], [0, 0, 7]], np.uint64)
        case(op, [xu], [argred(xu, [1], False, False, fn, False)], attrs="axis=[-1]")
        xh = unif(-2, 2, (3, 5), np.float16)
        case(op, [xh], [argred(xh, [1], False, False, fn, False)], attrs="axis=[1]")
        xb = np.array([[False, True, True], [False, False, False]])
        case(op, [xb], [argred(xb, [1], False, False, fn, False)], attrs="axis=[1]")

    section("variance (sum((x - mean)^2) / (count - unbiased))")
    xv = unif(-3, 3, (2, 3, 4))
    for axis, keep, excl, unb in [([1], False, False, False), ([1], True, False, True), ([0, 2], False, False, False),
                                  (None, False, False, True), ([1], False, True, False)]:
        ax = red_axes(3, axis, excl)
        m = np.mean(xv, axis=ax, keepdims=True)
        d = xv.astype(np.float64) - m.astype(np.float64)
        cnt = int(np.prod([xv.shape[i] for i in ax])) - (1 if unb else 0)
        v = (np.sum(d * d, axis=ax, keepdims=keep) / cnt).astype(np.float32)
        attrs = axes_attr(axis, keep, excl, "unbiased=True" if unb else None)
        case("variance", [xv, m], [v], attrs=attrs)
    xd = unif(-3, 3, (3, 5), np.float64)
    md = np.mean(xd, axis=1, keepdims=True)
    case("variance", [xd, md], [np.var(xd, axis=1, ddof=1)], attrs="axis=[1], unbiased=True")
    xi = np.array([[1, 2, 3, 4], [10, -10, 4, 0]], np.int32)
    mi = np.array([[2], [1]], np.int32)

    def ivar(row, m_, cnt):
        s = sum((v - m_) * (v - m_) for v in row)
        return tdiv(wrap(s, np.int32), cnt)

    case("variance", [xi, mi], [np.array([ivar([1, 2, 3, 4], 2, 4), ivar([10, -10, 4, 0], 1, 4)], np.int32)],
         attrs="axis=[1]", comment="integers: in the dtype, divided by the count, truncating")
    xf1 = unif(-1, 1, (1, 3))
    case("variance", [xf1, np.mean(xf1, axis=0, keepdims=True)], [np.full((3,), np.nan, np.float32)],
         attrs="axis=[0], unbiased=True", comment="unbiased over one element: 0 / 0")
    case("variance", [xi[:1, :1], mi[:1]], "error: division by zero", attrs="axis=[0], unbiased=True")
    xh = unif(-2, 2, (2, 4), np.float16)
    mh = np.mean(xh.astype(np.float64), axis=1, keepdims=True).astype(np.float16)
    dh = xh.astype(np.float64) - mh.astype(np.float64)
    case("variance", [xh, mh], [(np.sum(dh * dh, axis=1) / 4).astype(np.float16)], attrs="axis=[1]", tol=F16)

    section("collapse_sum_like")
    xc = unif(-2, 2, (2, 3, 4))
    for like_shape, ax, keep in [((3, 4), (0,), False), ((1, 4), (0, 1), False), ((2, 1, 1), (1, 2), True),
                                 ((), (0, 1, 2), False), ((2, 3, 4), (), False), ((4,), (0, 1), False)]:
        like = np.zeros(like_shape, np.float32)
        s = np.sum(xc.astype(np.float64), axis=ax, keepdims=keep) if ax else xc.astype(np.float64)
        if like_shape == (1, 4):
            s = s.reshape(1, 4)
        case("collapse_sum_like", [xc, like], [s.astype(np.float32).reshape(like_shape)])
    xi = ints(-100, 100, (3, 2))
    case("collapse_sum_like", [xi, np.zeros((2,), np.int32)], [np.sum(xi, axis=0, dtype=np.int32)])
    xi8 = np.array([[100, 1], [100, 2]], np.int8)
    case("collapse_sum_like", [xi8, np.zeros((1, 2), np.int8)], [int_map(lambda v: v, np.int8, np.array([[200, 3]]))])
    xd = unif(-2, 2, (2, 2), np.float64)
    case("collapse_sum_like", [xd, np.zeros((2, 1), np.float64)], [np.sum(xd, axis=1, keepdims=True)])


# {==== Sorting and searching ====}


def stable_order(line, ascend):
    """Positions of line sorted stably (ties in index order), ascending or descending."""
    key = [v.item() for v in line]
    return sorted(range(len(key)), key=lambda i: key[i], reverse=not ascend)


def sort_along(a, axis, ascend):
    """(sorted values, positions) along axis."""
    moved = np.moveaxis(a, axis, -1)
    idx = np.zeros(moved.shape, np.int64)
    for pre in np.ndindex(moved.shape[:-1]):
        idx[pre] = stable_order(moved[pre], ascend)
    vals = np.take_along_axis(moved, idx, axis=-1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)


def gen_sorting():
    section("argsort, sort (stable: equal values keep index order, either direction)")
    ties = np.array([[3, 1, 2, 1, 3, 0], [5, 5, 5, 4, 4, 6]], np.float32)
    x3 = unif(-5, 5, (2, 3, 4))
    xi = ints(-3, 3, (3, 5))
    xu = np.array([2**63, 1, 2**64 - 1, 0, 1], np.uint64)
    xh = unif(-5, 5, (2, 4), np.float16)
    xd = unif(-5, 5, (6,), np.float64)
    xb = np.array([True, False, True, False])
    for data, attrs, axis, ascend in [(ties, None, -1, True), (ties, "is_ascend=False", -1, False),
                                      (x3, "axis=0", 0, True), (x3, "axis=1, is_ascend=False", 1, False),
                                      (xi, "axis=-2", 0, True), (xi, "is_ascend=False", -1, False), (xu, None, 0, True),
                                      (xh, None, -1, True), (xd, "is_ascend=False", 0, False), (xb, None, 0, True)]:
        vals, idx = sort_along(data, axis, ascend)
        case("argsort", [data], [idx.astype(np.int32)], attrs=attrs)
        case("sort", [data], [vals], attrs=attrs)
    vals, idx = sort_along(ties, 1, False)
    case("argsort", [ties], [idx.astype(np.int64)], attrs='is_ascend=False, dtype="int64"')
    case("argsort", [ties], [idx.astype(np.float32)], attrs='is_ascend=False, dtype="float32"')

    section("topk, dyn.topk (the first k of a stable sort, descending unless is_ascend)")
    tk = np.array([[3, 1, 3, 2, 3, 0], [1, 2, 3, 4, 5, 6]], np.float32)

    def topk(a, k, axis, ascend):
        vals, idx = sort_along(a, axis, ascend)
        n = a.shape[axis]
        if k is None or k < 1:
            k = n
        sl = [slice(None)] * a.ndim
        sl[axis] = slice(0, k)
        return vals[tuple(sl)], idx[tuple(sl)]

    v, i = topk(tk, 2, 1, False)
    case("topk", [tk], [v, i.astype(np.int32)], attrs="k=2")
    v, i = topk(tk, 3, 1, True)
    case("topk", [tk], [v, i.astype(np.int32)], attrs="k=3, is_ascend=True")
    v, i = topk(x3, 2, 1, False)
    case("topk", [x3], [v], attrs='k=2, axis=1, ret_type="values"')
    v, i = topk(x3, 1, 0, False)
    case("topk", [x3], [i.astype(np.int64)], attrs='k=1, axis=0, ret_type="indices", dtype="int64"')
    v, i = topk(xi, 0, -1, False)
    case("topk", [xi], [v, i.astype(np.int32)], attrs="k=0", comment="k < 1 or None: the whole axis")
    case("topk", [xi], [v, i.astype(np.int32)])
    v, i = topk(xh, 2, 1, False)
    case("topk", [xh], [v, i.astype(np.int32)], attrs="k=2")
    xu8 = np.array([200, 7, 255, 7], np.uint8)
    v, i = topk(xu8, 3, 0, False)
    case("topk", [xu8], [v, i.astype(np.int32)], attrs="k=3")
    v, i = topk(tk, 4, 1, False)
    case("dyn.topk", [tk, np.array(4, np.int32)], [v, i.astype(np.int32)])
    v, i = topk(x3, 3, 2, True)
    case("dyn.topk", [x3, np.array([3], np.int64)], [v], attrs='axis=2, is_ascend=True, ret_type="values"')
    v, i = topk(xi, -1, 1, False)
    case("dyn.topk", [xi, np.array(-1, np.int32)], [i.astype(np.int32)], attrs='ret_type="indices"')
    case("dyn.topk", [tk, np.array(7, np.int32)], "error: larger than")

    section("unique (entries past num_unique: unique/counts 0, indices len(data))")

    def unique(a, is_sorted, with_counts):
        n = len(a)
        order = stable_order(a, True)
        groups = []  # [first position, count, value]
        for r, p in enumerate(order):
            if r == 0 or a[p] != a[order[r - 1]]:
                groups.append([p, 0, a[p]])
            groups[-1][1] += 1
        if not is_sorted:
            groups.sort(key=lambda g: g[0])
        uniq = np.zeros(n, a.dtype)
        idx = np.full(n, n, np.int32)
        cnt = np.zeros(n, np.int32)
        inv = np.zeros(n, np.int32)
        for u, (first, count, value) in enumerate(groups):
            uniq[u], idx[u], cnt[u] = value, first, count
            for j in range(n):
                if a[j] == value:
                    inv[j] = u
        outs = [uniq, idx, inv, np.array([len(groups)], np.int32)]
        if with_counts:
            outs.append(cnt)
        return outs

    ua = np.array([4, 5, 1, 2, 3, 3, 4, 5], np.int32)
    case("unique", [ua], unique(ua, True, False))
    case("unique", [ua], unique(ua, False, True), attrs="sorted=False, return_counts=True")
    case("unique", [ua], unique(ua, True, True), attrs="return_counts=True")
    uf = np.array([2.5, -1.0, 2.5, 0.0, -0.0, 7.0, -1.0], np.float32)
    case("unique", [uf], unique(uf, True, True), attrs="return_counts=True")
    case("unique", [uf], unique(uf, False, False), attrs="sorted=False")
    ui = ints(-3, 3, (12,), np.int64)
    case("unique", [ui], unique(ui, False, True), attrs="sorted=False, return_counts=True")
    uu = np.array([9, 9, 9], np.uint8)
    case("unique", [uu], unique(uu, True, True), attrs="return_counts=True")

    section("argwhere ((count, ndim) int32, row-major)")
    for a in (bools((2, 3)), np.array([0, 3, 0, -1, 2], np.int32), np.where(rng.random((2, 2, 3)) < 0.4, 1.5, 0.0),
              np.array([0.0, np.nan, -0.0], np.float32), np.zeros((2, 2), np.bool_), np.array(True), np.array(0, np.int8),
              np.array([[0, 7]], np.uint64)):
        case("argwhere", [a], [np.argwhere(a).astype(np.int32)])


# {==== Annotations ====}


def gen_annotations():
    section("annotation and placement ops: a copy of the argument")
    x = unif(-1, 1, (2, 3))
    xi = ints(-5, 5, (4,))
    case("annotation.stop_fusion", [x], [x])
    case("annotation.compiler_begin", [x], [x], attrs='compiler="ccompiler"')
    case("annotation.compiler_begin", [(x, xi)], [x, xi], attrs='compiler="ccompiler"')
    case("annotation.compiler_end", [xi], [xi], attrs='compiler="dnnl"')
    case("on_device", [x], [x])
    case("on_device", [(xi, x)], [xi, x], attrs="constrain_result=True")
    case("device_copy", [xi], [xi])
    xb = bools((3,))
    case("device_copy", [xb], [xb])


def main():
    if os.path.isdir(DATA):
        shutil.rmtree(DATA)
    os.makedirs(DATA)
    lines.append("# Reference kernel cases of the elemwise family (runtime/kernels/k_elemwise.c).")
    lines.append("# Generated by tests/kernels/gen_elemwise.py: edit that and rerun it, not this file.")
    lines.append("# Format: see tests/unit/test_kernels.c.")
    gen_unary()
    gen_binary()
    gen_casts()
    gen_reductions()
    gen_sorting()
    gen_annotations()
    with open(os.path.join(HERE, FAMILY + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(counts.values())
    size = sum(os.path.getsize(os.path.join(DATA, n)) for n in os.listdir(DATA))
    print("%d cases, %d files, %d bytes" % (total, len(os.listdir(DATA)), size))


if __name__ == "__main__":
    main()
