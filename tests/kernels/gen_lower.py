#!/usr/bin/python3
"""Cases for the loop kernels of lower/loops.c (and the reference kernels).

Writes the inputs and expected outputs as .npy files into tests/kernels/data/lower/
and the cases into tests/kernels/lower.txt (format: tests/unit/test_kernels.c).
test_kernels runs them on the reference kernels; test_lower lowers every one of
them with lower_loops (each must be accepted) and checks the loop kernel against
the expected values and, to the bit, against the reference kernel.

What the other case files cover little: 0-d tensors (scalar programs), broadcasting
of several static dims (loops merged or not), loop-invariant operands, empty
tensors, integer wrap-around in every width, the sign of zero and NaN in
maximum/minimum/clip, clip bounds saturated to integer dtypes, and the cast rules
(integers to float through float64, floats to integers truncated with NaN giving 0
and the 64-bit range saturated before the wrap).

The expected values are computed here with NumPy and Python ints, following the
semantics stated in runtime/kernels/k_elemwise.c. Run with /usr/bin/python3
(NumPy) from anywhere; the output is deterministic.
"""
import math
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FAMILY = "lower"
DATA = os.path.join(HERE, "data", FAMILY)

rng = np.random.default_rng(20240701)
lines = []
counts = {}

EXACT = "rtol=0, atol=0"


def save(stem, arr):
    path = os.path.join(DATA, stem + ".npy")
    np.save(path, np.array(arr, order="C"), allow_pickle=False)
    return FAMILY + "/" + stem + ".npy"


def case(op, ins, out, attrs=None, tol=None, comment=None):
    n = counts.get(op, 0)
    counts[op] = n + 1
    stem = "%s_%d" % (op.replace(".", "_"), n)
    parts = [op] + [save("%s_a%d" % (stem, i), a) for i, a in enumerate(ins)]
    if attrs:
        parts.append("attrs: " + attrs)
    line = " | ".join(parts) + " => " + save(stem + "_out0", out)
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


def ints(lo, hi, shape, dtype):
    return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def bools(shape):
    return rng.integers(0, 1, size=shape, endpoint=True).astype(np.bool_)


def in_f64(fn, *xs):
    """fn computed in float64 on the (broadcast) operands, rounded to the first's dtype."""
    with np.errstate(all="ignore"):
        return np.asarray(fn(*[x.astype(np.float64) for x in xs])).astype(xs[0].dtype)


def wrap(v, dtype):
    """A Python int wrapped to an integer dtype (bool: v != 0)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return v != 0
    bits = dt.itemsize * 8
    v &= (1 << bits) - 1
    if dt.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_map(fn, dtype, *arrays):
    """fn on Python ints over the broadcast arrays, wrapped to dtype."""
    bs = np.broadcast_arrays(*arrays)
    out = np.zeros(bs[0].shape, dtype=dtype)
    for idx in np.ndindex(bs[0].shape):
        out[idx] = wrap(int(fn(*[int(b[idx]) for b in bs])), dtype)
    return out


def tvm_max(a, b):
    return np.where(a > b, a, b).astype(a.dtype)


def tvm_min(a, b):
    return np.where(a < b, a, b).astype(a.dtype)


def float_to_int(x, dtype):
    """A float cast to an integer dtype: truncated, NaN 0, saturated to the 64-bit
    range (uint64's for unsigned dtypes), then wrapped to the width."""
    dt = np.dtype(dtype)
    out = np.zeros(np.shape(x), dtype=dt)
    for idx in np.ndindex(np.shape(x)):
        v = float(np.asarray(x)[idx])
        if math.isnan(v):
            t = 0
        elif dt.kind == "u" and v >= 2.0**64:
            t = 2**64 - 1
        elif dt.kind == "u" and v >= 2.0**63:
            t = int(v)
        elif v >= 2.0**63:
            t = 2**63 - 1
        elif v < -(2.0**63):
            t = -(2**63)
        else:
            t = int(v)  # truncates toward zero
        out[idx] = wrap(t, dt)
    return out


def clip_bound(v, dtype):
    """a_min/a_max in the dtype: rounded to a float dtype; for integers truncated
    (NaN 0) and saturated to the dtype's range."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        with np.errstate(over="ignore"):
            return dt.type(v)
    info = np.iinfo(dt)
    t = 0 if math.isnan(v) else math.trunc(v)
    return dt.type(min(max(t, info.min), info.max))


def clip(x, lo, hi):
    """max(min(x, hi), lo) with TVM's selects: NaN gives hi."""
    lo, hi = clip_bound(lo, x.dtype), clip_bound(hi, x.dtype)
    r = np.where(x < hi, x, hi).astype(x.dtype)
    return np.where(r > lo, r, lo).astype(x.dtype)


SIGNED = [np.int8, np.int16, np.int32, np.int64]
UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]


def extremes(dtype, n):
    """n values of an integer dtype including its min and max."""
    info = np.iinfo(dtype)
    v = [info.min, info.max, 0, 1, info.max - 1, info.min + 1 if info.min else 2]
    v += [int(x) for x in rng.integers(info.min, info.max, size=(n,), endpoint=True, dtype=dtype)]
    return np.array(v[:n], dtype)


# {==== Scalars ====}


def gen_scalars():
    section("0-d tensors (scalar programs)")
    for dt in (np.float32, np.float64):
        a, b = np.array(1.25, dt), np.array(-3.5, dt)
        case("add", [a, b], in_f64(np.add, a, b))
        case("subtract", [a, b], in_f64(np.subtract, a, b))
        case("multiply", [a, b], in_f64(np.multiply, a, b))
        case("divide", [a, b], in_f64(np.divide, a, b))
        case("less", [a, b], np.array(False))
        case("greater_equal", [a, b], np.array(True))
    x = np.array(0.1, np.float32)
    case("divide", [x, np.array(3.0, np.float32)], in_f64(np.divide, x, np.array(3.0, np.float32)), tol=EXACT,
         comment="float32 computed in double and rounded once")
    i, j = np.array(2147483647, np.int32), np.array(1, np.int32)
    case("add", [i, j], np.array(-2147483648, np.int32), comment="integers wrap")
    case("subtract", [np.array(-2**63, np.int64), np.array(1, np.int64)], np.array(2**63 - 1, np.int64))
    case("multiply", [np.array(200, np.uint8), np.array(2, np.uint8)], np.array(144, np.uint8))
    case("multiply", [np.array(65535, np.uint16), np.array(65535, np.uint16)], np.array(1, np.uint16))
    case("negative", [np.array(-128, np.int8)], np.array(-128, np.int8))
    case("abs", [np.array(-32768, np.int16)], np.array(-32768, np.int16))
    n = np.array(7, np.int32)
    case("less", [n, np.array(1, np.int32)], np.array(False))
    case("equal", [n, np.array(7, np.int32)], np.array(True))
    case("not_equal", [np.array(np.nan, np.float32), np.array(np.nan, np.float32)], np.array(True))
    case("less_equal", [np.array(np.nan, np.float64), np.array(1.0)], np.array(False))
    case("logical_and", [np.array(True), np.array(False)], np.array(False))
    case("logical_not", [np.array(False)], np.array(True))
    case("where", [np.array(False), np.array(1.5, np.float32), np.array(-2.5, np.float32)], np.array(-2.5, np.float32))
    case("cast", [n], np.array(7.0, np.float32), attrs='dtype="float32"')
    case("cast", [np.array(-2.75, np.float64)], np.array(-2, np.int64), attrs='dtype="int64"')
    s = np.array(0.75, np.float64)
    case("sigmoid", [s], in_f64(lambda v: 1.0 / (1.0 + np.exp(-v)), s))
    case("sqrt", [np.array(2.0, np.float32)], in_f64(np.sqrt, np.array(2.0, np.float32)), tol=EXACT)
    case("clip", [np.array(9.5, np.float32)], np.array(6.0, np.float32), attrs="a_min=0f, a_max=6f")
    case("maximum", [np.array(3, np.int64), np.array(-4, np.int64)], np.array(3, np.int64))
    case("nn.relu", [np.array(-3, np.int32)], np.array(0, np.int32))
    case("power", [np.array(2.0, np.float64), np.array(0.5, np.float64)], np.array(math.sqrt(2.0)))


# {==== Broadcasting ====}


def gen_broadcast():
    section("broadcasting over static shapes")
    a, b = unif(-5, 5, (2, 1, 3, 1)), unif(-5, 5, (4, 1, 5))
    case("add", [a, b], in_f64(np.add, a, b), comment="(2, 4, 3, 5): no dims merge")
    a, b = unif(-5, 5, (2, 3, 4)), unif(-5, 5, (1, 1, 4))
    case("multiply", [a, b], in_f64(np.multiply, a, b), comment="the two leading dims merge")
    a, b = unif(-5, 5, (5, 3, 4), np.float64), unif(-5, 5, (3, 4), np.float64)
    case("subtract", [a, b], in_f64(np.subtract, a, b))
    a, b = unif(-5, 5, (5, 17)), unif(-5, 5, (17,))
    case("subtract", [a, b], in_f64(np.subtract, a, b), comment="rows longer than a vector register")
    a, b = unif(-5, 5, (2, 1, 3)), unif(-5, 5, (2, 1, 3))
    case("add", [a, b], in_f64(np.add, a, b), comment="equal shapes with a size-1 dim: one flat loop")
    a, b = unif(-5, 5, (1, 1)), unif(-5, 5, (3, 1, 1))
    case("add", [a, b], in_f64(np.add, a, b))
    a, b = unif(-5, 5, (3, 4)), np.array(0.5, np.float32)
    case("divide", [a, b], in_f64(np.divide, a, b), comment="a 0-d operand: read once, before the loop")
    a = np.zeros((0, 3), np.float32)
    case("add", [a, unif(-1, 1, (3,))], np.zeros((0, 3), np.float32), comment="an empty result")
    a, b = ints(-30000, 30000, (3, 1), np.int16), ints(-30000, 30000, (1, 4), np.int16)
    case("multiply", [a, b], int_map(lambda x, y: x * y, np.int16, a, b))
    a = ints(0, 255, (2, 3), np.uint8)
    case("subtract", [a, np.array(200, np.uint8)], int_map(lambda x, y: x - y, np.uint8, a, np.array(200)))
    a, b = extremes(np.int64, 4), np.array([[-1], [1], [2**62]], np.int64)
    case("add", [a, b], int_map(lambda x, y: x + y, np.int64, a, b))
    a, b = extremes(np.uint32, 6), np.array([3, 2**32 - 1], np.uint32).reshape(2, 1)
    case("multiply", [a, b], int_map(lambda x, y: x * y, np.uint32, a, b))
    a, b = ints(-2**40, 2**40, (2, 3, 4), np.int64), extremes(np.int64, 4)
    case("maximum", [a, b], tvm_max(a, b))
    a, b = ints(0, 9, (3, 1, 2), np.int8), ints(0, 9, (1, 4, 1), np.int8)
    case("greater", [a, b], a > b)
    a, b = unif(-2, 2, (2, 3)), unif(-2, 2, (3,))
    a[0, 1] = np.nan
    b[2] = np.nan
    b[0] = a[1, 0]
    case("equal", [a, b], a == b)
    a, b = ints(0, 3, (4, 1), np.uint32), ints(0, 3, (1, 3), np.uint32)
    case("not_equal", [a, b], a != b)
    a, b = ints(-3, 3, (2, 5), np.int16), ints(-3, 3, (5,), np.int16)
    case("less_equal", [a, b], a <= b)
    a, b = bools((2, 1, 3)), bools((4, 1))
    case("logical_or", [a, b], a | b)
    a, b = bools((3,)), bools((2, 1))
    case("logical_xor", [a, b], a ^ b)
    a, b = bools((2, 2)), bools((2, 1))
    case("add", [a, b], a | b, comment="bool arithmetic: a non-zero result is true")
    case("subtract", [a, b], a ^ b)
    a, b = unif(0.5, 3, (2, 3), np.float64), unif(-2, 2, (2, 1), np.float64)
    case("power", [a, b], in_f64(np.power, a, b))
    a, b = unif(-9, 9, (3, 4)), unif(0.5, 3, (4,))
    case("floor_divide", [a, b], in_f64(lambda x, y: np.floor((x / y).astype(np.float32)), a, b))
    case("mod", [a, b], in_f64(np.fmod, a, b))
    a, b = ints(0, 65535, (2, 3), np.uint16), ints(0, 65535, (3,), np.uint16)
    case("bitwise_xor", [a, b], a ^ b)
    a, b = ints(-99, 99, (4, 1), np.int32), ints(-99, 99, (3,), np.int32)
    case("bitwise_and", [a, b], a & b)

    section("where(condition, x, y): three operands broadcast")
    c, x, y = bools((2, 1, 4)), unif(-5, 5, (3, 1)), unif(-5, 5, (1, 4))
    case("where", [c, x, y], np.where(c, x, y).astype(np.float32))
    c, x, y = np.array(True), ints(-9, 9, (2, 3), np.int8), ints(-9, 9, (3,), np.int8)
    case("where", [c, x, y], np.broadcast_to(x, (2, 3)).copy())
    c, x, y = bools((3, 1)), bools((1, 2)), bools((3, 2))
    case("where", [c, x, y], np.where(c, x, y))
    c, x, y = bools((4,)), extremes(np.uint64, 4), np.array(7, np.uint64)
    case("where", [c, x, y], np.where(c, x, y).astype(np.uint64))


# {==== Unary, special values ====}


def gen_unary():
    section("maximum, minimum, clip: NaN and the sign of zero (TVM's selects)")
    pz, nz, nan = 0.0, -0.0, np.nan
    for dt in (np.float32, np.float64):
        a = np.array([pz, nz, nan, 1.0, nan, -1.0], dt)
        b = np.array([nz, pz, 1.0, nan, nan, -1.0], dt)
        case("maximum", [a, b], tvm_max(a, b))
        case("minimum", [a, b], tvm_min(a, b))
    a, b = np.array([pz, nz, nan], np.float32).reshape(3, 1), np.array([nz, pz], np.float32)
    case("maximum", [a, b], tvm_max(*np.broadcast_arrays(a, b)))
    x = np.array([0.0, -0.0, 2.0, -3.0, np.nan, np.inf, -np.inf], np.float32)
    case("clip", [x], clip(x, -0.0, 0.0), attrs="a_min=-0f, a_max=0f", comment="clip(0) with a_min=-0: -0")
    case("clip", [x], clip(x, -1e39, 1e39), attrs="a_min=-1e39f64, a_max=1e39f64",
         comment="bounds beyond float32 round to infinity")
    x = extremes(np.int8, 8)
    case("clip", [x], clip(x, -1000.0, 1000.0), attrs="a_min=-1000f, a_max=1000f",
         comment="integer bounds truncated and saturated to the dtype")
    x = extremes(np.uint16, 8)
    case("clip", [x], clip(x, -5.5, 70000.0), attrs="a_min=-5.5f, a_max=70000f")
    x = extremes(np.int64, 8)
    case("clip", [x], clip(x, -1e30, 1e30), attrs="a_min=-1e30f, a_max=1e30f")
    x = extremes(np.uint64, 8)
    case("clip", [x], clip(x, 2.0**63 + 4096, 1e20), attrs="a_min=9223372036854779904f, a_max=1e20f")
    x = extremes(np.int32, 8)
    case("clip", [x], clip(x, -7.9, 7.9), attrs="a_min=-7.9f, a_max=7.9f")

    section("unary ops on integers and bool")
    x = extremes(np.int64, 6)
    case("sign", [x], np.sign(x).astype(np.int64))
    x = extremes(np.int16, 6)
    case("abs", [x], int_map(abs, np.int16, x))
    x = extremes(np.uint16, 6)
    case("negative", [x], int_map(lambda v: -v, np.uint16, x))
    case("abs", [x], x)
    x = extremes(np.int8, 6)
    case("nn.relu", [x], np.maximum(x, 0).astype(np.int8))
    case("round", [x], x)
    case("floor", [x], x)
    x = extremes(np.int16, 6)
    case("bitwise_not", [x], ~x)
    x = extremes(np.uint64, 6)
    case("copy", [x], x)
    case("trunc", [x], x)
    case("sign", [x], (x != 0).astype(np.uint64))
    x = bools((5,))
    case("negative", [x], x)
    case("sign", [x], x)

    section("float math: overflow, poles and rounding")
    x = np.array([-1000.0, -1.0, 0.0, 1.0, 88.0, 89.0, 1000.0, np.nan], np.float32)
    case("exp", [x], in_f64(np.exp, x), comment="exp overflows float32 past 88.7")
    case("sigmoid", [x], in_f64(lambda v: 1.0 / (1.0 + np.exp(-v)), x))
    case("tanh", [x], in_f64(np.tanh, x))
    x = np.array([0.0, -0.0, 1.0, 4.0, -1.0, np.inf], np.float64)
    case("rsqrt", [x], in_f64(lambda v: 1.0 / np.sqrt(v), x), comment="rsqrt(0) = inf, rsqrt(-0) = -inf")
    case("log", [x], in_f64(np.log, x))
    x = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.0, np.nan], np.float32)
    case("round", [x], np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.sign(x), np.trunc(x)).astype(np.float32),
         comment="half away from zero")
    x = np.array([-2.0, -0.0, 0.0, 3.0, np.nan, -np.inf], np.float64)
    case("sign", [x], np.array([-1.0, 0.0, 0.0, 1.0, 0.0, -1.0]))
    x = unif(-8, 8, (67,))
    case("sigmoid", [x], in_f64(lambda v: 1.0 / (1.0 + np.exp(-v)), x), comment="a loop with a vector remainder")
    x = unif(-3, 3, (33,), np.float64)
    case("tanh", [x], in_f64(np.tanh, x))
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -1.5], np.float64)
    case("isnan", [x], np.isnan(x))
    case("isinf", [x], np.isinf(x))
    case("isfinite", [x], np.isfinite(x))


# {==== Shifts ====}


def gen_shifts():
    section("shifts: counts out of range give 0 (-1 for a negative value shifted right)")

    def shl(x, y, signed):
        return 0 if (signed and y < 0) or y >= 64 else x << y

    def shr(x, y, signed):
        if signed:
            return (-1 if x < 0 else 0) if y < 0 or y >= 64 else x >> y
        return 0 if y >= 64 else x >> y

    x = np.array([1, -1, 5, -128, 127, 3], np.int8)
    y = np.array([1, 3, 7, 1, 70, -1], np.int8)
    case("left_shift", [x, y], int_map(lambda a, b: shl(a, b, True), np.int8, x, y))
    case("right_shift", [x, y], int_map(lambda a, b: shr(a, b, True), np.int8, x, y))
    x = extremes(np.int64, 4).reshape(4, 1)
    y = np.array([0, 1, 63, 64, -3], np.int64)
    case("right_shift", [x, y], int_map(lambda a, b: shr(a, b, True), np.int64, x, y))
    case("left_shift", [x, y], int_map(lambda a, b: shl(a, b, True), np.int64, x, y))
    x = extremes(np.uint64, 3).reshape(3, 1)
    y = np.array([0, 1, 63, 64, 200], np.uint64)
    case("right_shift", [x, y], int_map(lambda a, b: shr(a, b, False), np.uint64, x, y))
    case("left_shift", [x, y], int_map(lambda a, b: shl(a, b, False), np.uint64, x, y))
    x, y = extremes(np.uint8, 4), np.array([1, 4, 9, 255], np.uint8)
    case("left_shift", [x, y], int_map(lambda a, b: shl(a, b, False), np.uint8, x, y))


# {==== Casts ====}


def gen_casts():
    section("cast: integers to floats through float64")
    x = np.array([2**53 + 2**29 + 1, 2**62 + 2**38 + 1, -(2**53 + 2**29 + 1), 16777217, 3], np.int64)
    case("cast", [x], x.astype(np.float64).astype(np.float32), attrs='dtype="float32"', tol=EXACT,
         comment="rounded twice: 2**53 + 2**29 + 1 becomes 2**53, not 2**53 + 2**30")
    x = np.array([2**64 - 1, 2**63 + 2**39 + 1, 12345], np.uint64)
    case("cast", [x], x.astype(np.float64).astype(np.float32), attrs='dtype="float32"', tol=EXACT)
    x = np.array([16777217, -16777219, 2147483647], np.int32)
    case("cast", [x], x.astype(np.float64).astype(np.float32), attrs='dtype="float32"', tol=EXACT)
    x = extremes(np.uint32, 4)
    case("cast", [x], x.astype(np.float64), attrs='dtype="float64"', tol=EXACT)
    x = bools((2, 3))
    case("cast", [x], x.astype(np.float64), attrs='dtype="float64"')

    section("cast: floats to integers (truncated; NaN 0; the 64-bit range saturates, then wraps)")
    specials = [np.nan, np.inf, -np.inf, 3e9, -3e9, -1.7, 2.5, 1e19, -1e19, 2.0**63, -(2.0**63), 300.9, -0.0]
    x = np.array(specials, np.float64)
    for dt, name in ((np.int32, "int32"), (np.int64, "int64"), (np.int8, "int8"), (np.uint8, "uint8"),
                     (np.uint16, "uint16"), (np.uint32, "uint32"), (np.uint64, "uint64")):
        case("cast", [x], float_to_int(x, dt), attrs='dtype="%s"' % name)
    x = np.array([2.0**64, 1e19, 2.0**63, -1.0, -1e19, 1.5, 1.8e19], np.float64)
    case("cast", [x], float_to_int(x, np.uint64), attrs='dtype="uint64"')
    x = np.array([np.nan, -1.5, 255.9, 256.0, -129.0, 1e10, -1e10], np.float32)
    case("cast", [x], float_to_int(x, np.uint8), attrs='dtype="uint8"')
    case("cast", [x], float_to_int(x, np.int16), attrs='dtype="int16"')
    x = np.array([np.nan, 0.0, -0.0, 1e-300, -2.0], np.float64)
    case("cast", [x], x != 0, attrs='dtype="bool"', comment="to bool: x != 0, NaN is true")

    section("cast: between integers (wrap) and between floats (round once)")
    x = extremes(np.int8, 5)
    case("cast", [x], int_map(lambda v: v, np.uint16, x), attrs='dtype="uint16"')
    x = extremes(np.uint32, 5)
    case("cast", [x], int_map(lambda v: v, np.int8, x), attrs='dtype="int8"')
    x = extremes(np.uint64, 5)
    case("cast", [x], int_map(lambda v: v, np.int64, x), attrs='dtype="int64"')
    x = extremes(np.int16, 5)
    case("cast", [x], x.astype(np.int64), attrs='dtype="int64"')
    case("cast", [x], x != 0, attrs='dtype="bool"')
    x = bools((4,))
    case("cast", [x], x.astype(np.int32), attrs='dtype="int32"')
    x = np.array([1e39, -1e39, 1e-46, 1.0000000596046448, 0.1, np.nan], np.float64)
    with np.errstate(over="ignore"):
        case("cast", [x], x.astype(np.float32), attrs='dtype="float32"', tol=EXACT)
    x = unif(-5, 5, (2, 2))
    case("cast", [x], x.astype(np.float64), attrs='dtype="float64"', tol=EXACT)


def main():
    if os.path.isdir(DATA):
        shutil.rmtree(DATA)
    os.makedirs(DATA)
    lines.append("# Cases for the loop kernels of lower/loops.c (and the reference kernels).")
    lines.append("# Generated by tests/kernels/gen_lower.py: edit that and rerun it, not this file.")
    lines.append("# Format: see tests/unit/test_kernels.c. test_lower must lower every case.")
    gen_scalars()
    gen_broadcast()
    gen_unary()
    gen_shifts()
    gen_casts()
    with open(os.path.join(HERE, FAMILY + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    total = sum(counts.values())
    size = sum(os.path.getsize(os.path.join(DATA, n)) for n in os.listdir(DATA))
    print("%d cases, %d files, %d bytes" % (total, len(os.listdir(DATA)), size))


if __name__ == "__main__":
    main()
