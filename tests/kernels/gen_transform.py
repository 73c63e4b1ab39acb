#!/usr/bin/env python3
"""gen_transform.py: the fixtures of the transform family's reference kernels.

Computes every expected result with NumPy (or, where NumPy has no such op,
with plain loops written here from the op's definition in TVM v0.16 and spec
sections 9.3 and 11), independently of runtime/kernels/k_transform.c, and
writes:
  tests/kernels/data/transform/*.npy   inputs and expected outputs
  tests/kernels/transform.txt          the cases (format: tests/unit/test_kernels.c)

Inputs are small and come from one seeded generator, so running this again
reproduces the files exactly. Run from anywhere with the system Python
(numpy 1.24):  /usr/bin/python3 tests/kernels/gen_transform.py
"""
import itertools
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "transform")
rng = np.random.default_rng(20240611)

lines = []
counter = {}


# {==== Case writing ====}

def rand(shape, dtype="float32", lo=-9, hi=10):
    """Deterministic small random data of a dtype."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 3).astype(dt)
    if dt.kind == "u":
        return rng.integers(0, hi + 20, size=shape).astype(dt)
    return rng.integers(lo, hi, size=shape).astype(dt)


def arr(values, dtype):
    return np.array(values, dtype=dtype)


def fmt(v):
    """An attribute value in Relay text."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(int(v))


def save(name, a):
    a = np.asarray(a)
    np.save(os.path.join(DATA, name + ".npy"), a, allow_pickle=False)
    return "transform/%s.npy" % name


def case(op, inputs, out, attrs=None, tol=None, note=None):
    """One line: inputs are arrays or lists of arrays (a tuple argument);
    out is an array, a list of arrays (a tuple result) or 'error: TEXT'."""
    base = op.replace("dyn.", "dyn_").replace(".", "_")
    counter[base] = counter.get(base, 0) + 1
    tag = "%s_%d" % (base, counter[base])
    parts = [op]
    for i, x in enumerate(inputs):
        if isinstance(x, list):
            parts.append("(" + ", ".join(save("%s_in%d_%d" % (tag, i, k), f) for k, f in enumerate(x)) + ")")
        else:
            parts.append(save("%s_in%d" % (tag, i), x))
    if attrs:
        parts.append("attrs: " + ", ".join("%s=%s" % (k, fmt(v)) for k, v in attrs.items()))
    if isinstance(out, str):
        rhs = out
    elif isinstance(out, list):
        rhs = " ".join(save("%s_out%d" % (tag, k), o) for k, o in enumerate(out))
    else:
        rhs = save(tag + "_out", out)
    line = " | ".join(parts) + " => " + rhs
    if tol:
        line += " | " + tol
    if note:
        lines.append("# " + note)
    lines.append(line)


def section(title):
    lines.append("")
    lines.append("# " + title)


# {==== reshape family ====}

def reshape_shape(ish, newshape, allowzero=False):
    """TVM's newshape codes, applied left to right."""
    out, src, infer, copied = [], 0, None, []
    used = [False] * len(ish)
    i = 0
    while i < len(newshape):
        v = newshape[i]
        if v > 0 or (v == 0 and allowzero):
            out.append(v)
            src += 1
        elif v == 0:
            used[src] = True
            copied.append(len(out))
            out.append(ish[src])
            src += 1
        elif v == -1:
            infer = len(out)
            out.append(1)
            src += 1
        elif v == -2:
            while src < len(ish):
                used[src] = True
                copied.append(len(out))
                out.append(ish[src])
                src += 1
        elif v == -3:
            used[src] = used[src + 1] = True
            copied.append(len(out))
            out.append(ish[src] * ish[src + 1])
            src += 2
        elif v == -4:
            d0, d1, d2 = ish[src], newshape[i + 1], newshape[i + 2]
            used[src] = True
            src += 1
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            copied += [len(out), len(out) + 1]
            out += [d1, d2]
            i += 2
        i += 1
    if infer is not None:
        num = math.prod(d for d, u in zip(ish, used) if not u)
        den = math.prod(d for j, d in enumerate(out) if j not in copied and j != infer)
        out[infer] = num // den
    return out


def reverse_reshape_shape(ish, newshape):
    return list(reversed(reshape_shape(list(reversed(ish)), list(reversed(newshape)))))


def gen_reshape():
    section("reshape: newshape codes 0, -1, -2, -3, -4, allowzero")
    for shape, ns, dt in [
        ((2, 3, 4), [6, -1], "float32"),
        ((2, 3, 4), [0, -1], "int32"),
        ((2, 3, 4), [-2], "float16"),
        ((2, 3, 4), [-3, 4], "uint8"),
        ((2, 3, 4), [0, -3], "bool"),
        ((4, 3), [-4, 2, -1, 3], "float64"),
        ((4, 3), [-4, -1, 2, 0], "int8"),
        ((2, 3, 4), [-1, -2], "float32"),
        ((2, 3, 4), [24], "int64"),
        ((6,), [1, 2, 1, 3], "float32"),
        ((2, 1, 3), [0, 0, -1], "int16"),
    ]:
        x = rand(shape, dt)
        case("reshape", [x], x.reshape(reshape_shape(list(shape), ns)), {"newshape": ns})
    x = rand((0, 3))
    case("reshape", [x], x.reshape(0, 3), {"newshape": [0, 3], "allowzero": True}, note="allowzero: 0 is a size")
    x = rand(())
    case("reshape", [x], x.reshape(1, 1), {"newshape": [1, -1]}, note="a scalar")

    section("contrib_reverse_reshape: the codes read from the right")
    for shape, ns in [((10, 5, 4), [-1, 0]), ((2, 3, 4), [0, -1]), ((2, 3, 4), [-3, 0])]:
        x = rand(shape)
        case("contrib_reverse_reshape", [x], x.reshape(reverse_reshape_shape(list(shape), ns)), {"newshape": ns})

    section("dyn.reshape: the newshape operand's values")
    for shape, ns, dt in [((2, 3, 4), [4, -1], "float32"), ((2, 3, 4), [0, -1], "int32"), ((6,), [3, 2], "bool")]:
        x = rand(shape, dt)
        case("dyn.reshape", [x, arr(ns, "int64")], x.reshape(reshape_shape(list(shape), ns)))
    x = rand((2, 3))
    case("dyn.reshape", [x, arr([3, 2], "int32")], x.reshape(3, 2))
    case("dyn.reshape", [rand((2, 3)), arr([4, -1], "int64")], "error: cannot infer")
    case("dyn.reshape", [rand((2, 3)), arr([4, 2], "int64")], "error: cannot reshape")
    case("dyn.reshape", [rand((2, 3)), arr([-7, 6], "int64")], "error: invalid code")

    section("reshape_like")
    x = rand((2, 3, 4))
    case("reshape_like", [x, rand((6, 4))], x.reshape(6, 4))
    x = rand((2, 3, 4), "int32")
    case("reshape_like", [x, rand((5, 12), "int32")], x.reshape(2, 12), {"lhs_begin": 1, "rhs_begin": 1})
    x = rand((2, 3, 4), "bool")
    case("reshape_like", [x, rand((3, 2, 7), "bool")], x.reshape(3, 2, 4),
         {"lhs_begin": 0, "lhs_end": -1, "rhs_end": 2})


def gen_transpose_squeeze_expand():
    section("transpose")
    x = rand((2, 3, 4))
    case("transpose", [x], x.transpose(), {"axes": None})
    case("transpose", [x], x.transpose(1, 0, 2), {"axes": [1, 0, 2]})
    x = rand((2, 3, 4), "uint8")
    case("transpose", [x], x.transpose(2, 0, 1), {"axes": [-1, 0, 1]})
    x = rand((3, 5), "float64")
    case("transpose", [x], x.T, {"axes": [1, 0]})
    x = rand((2, 1, 3, 2), "bool")
    case("transpose", [x], x.transpose(3, 1, 0, 2), {"axes": [3, 1, 0, 2]})

    section("squeeze (axis None drops every size-1 dim), dyn.squeeze")
    x = rand((1, 3, 1, 2))
    case("squeeze", [x], x.reshape(3, 2), {"axis": None})
    case("squeeze", [x], x.reshape(3, 1, 2), {"axis": [0]})
    x = rand((1, 3, 1, 2), "int32")
    case("squeeze", [x], x.reshape(1, 3, 2), {"axis": [-2]})
    x = rand((1, 1), "bool")
    case("squeeze", [x], x.reshape(()), {"axis": [0, 1]})
    x = rand((1, 3, 1, 2), "float16")
    case("dyn.squeeze", [x, arr([0, 2], "int64")], x.reshape(3, 2))
    case("dyn.squeeze", [rand((1, 3)), arr([1], "int64")], "error: cannot squeeze")
    case("dyn.squeeze", [rand((1, 3)), arr([2], "int64")], "error: out of range")

    section("expand_dims, dyn.expand_dims")
    x = rand((2, 3))
    case("expand_dims", [x], x.reshape(2, 1, 1, 3), {"axis": 1, "num_newaxis": 2})
    case("expand_dims", [x], x.reshape(2, 3, 1), {"axis": -1})
    x = rand((2, 3), "int8")
    case("expand_dims", [x], x.reshape(1, 2, 3), {"axis": -3})
    x = rand((), "float64")
    case("expand_dims", [x], x.reshape(1), {"axis": 0})
    x = rand((2, 3), "bool")
    case("expand_dims", [x], x.reshape(2, 3), {"axis": 1, "num_newaxis": 0})
    x = rand((2, 3))
    case("dyn.expand_dims", [x, arr(-1, "int64")], x.reshape(2, 3, 1))
    case("dyn.expand_dims", [x, arr(0, "int32")], x.reshape(1, 1, 2, 3), {"num_newaxis": 2})
    case("dyn.expand_dims", [x, arr(5, "int64")], "error: out of range")


def gen_join_split():
    section("concatenate, stack (one tuple argument)")
    a, b, c = rand((2, 3)), rand((2, 1)), rand((2, 2))
    case("concatenate", [[a, b, c]], np.concatenate([a, b, c], axis=1), {"axis": 1})
    case("concatenate", [[a, c]], np.concatenate([a, c], axis=-1), {"axis": -1})
    a, b = rand((1, 2, 2), "int8"), rand((3, 2, 2), "int8")
    case("concatenate", [[a, b]], np.concatenate([a, b]))
    a, b = rand((2, 2), "bool"), rand((2, 3), "bool")
    case("concatenate", [[a, b]], np.concatenate([a, b], axis=1), {"axis": 1})
    a = rand((2, 3), "float16")
    case("concatenate", [[a]], a, {"axis": 0})
    a, b = rand((0, 3)), rand((2, 3))
    case("concatenate", [[a, b]], np.concatenate([a, b]), note="an empty field")
    xs = [rand((2, 3)) for _ in range(3)]
    case("stack", [xs], np.stack(xs, axis=0))
    case("stack", [xs], np.stack(xs, axis=-1), {"axis": -1})
    xs = [rand((2, 3), "int64") for _ in range(2)]
    case("stack", [xs], np.stack(xs, axis=1), {"axis": 1})
    xs = [rand((), "uint8") for _ in range(4)]
    case("stack", [xs], np.stack(xs), note="scalars")

    section("split: sections or split points; a tuple result")
    x = rand((6, 4))
    case("split", [x], np.split(x, 3, axis=0), {"indices_or_sections": 3})
    case("split", [x], np.split(x, [1, 3], axis=1), {"indices_or_sections": [1, 3], "axis": 1})
    x = rand((2, 6), "float16")
    case("split", [x], np.split(x, [4], axis=-1), {"indices_or_sections": [4], "axis": -1})
    x = rand((4, 2, 3), "int32")
    case("split", [x], np.split(x, 2, axis=0), {"indices_or_sections": 2})
    x = rand((3,), "bool")
    case("split", [x], [x], {"indices_or_sections": 1})


# {==== slicing ====}

def strided_slice_ref(x, begin, end, strides, axes=None, mode="end"):
    """TVM v0.16's strided_slice (spec 9.3): negative indices wrap once, then
    clamp; a missing begin/end defaults by the stride's sign (a missing end
    with a negative stride is 0, as TVM pads it); "size" mode reads end as a
    length (negative: to the end) with step 1."""
    nd = x.ndim
    axes = list(range(nd)) if axes is None else [a % nd for a in axes]
    index = [slice(None)] * nd
    for k, ax in enumerate(axes):
        dim = x.shape[ax]
        st = strides[k] if strides is not None and k < len(strides) else 1
        step = 1 if mode == "size" else st
        b = begin[k] if begin is not None and k < len(begin) else (0 if st > 0 else 2**63 - 1)
        if end is not None and k < len(end):
            e = end[k]
            if mode == "size":
                e = 2**63 - 1 if e < 0 else b + e
        else:
            e = 0 if st < 0 else 2**63 - 1
        lo, hi = (-1, dim - 1) if step < 0 else (0, dim)

        def canon(i):
            if i < 0:
                i += dim
            return min(max(i, lo), hi)

        index[ax] = list(range(canon(b), canon(e), step))
    out = x
    for ax in range(nd):
        if isinstance(index[ax], list):
            out = np.take(out, np.array(index[ax], dtype=np.int64), axis=ax)
    return out


def gen_slicing():
    section("strided_slice: end and size modes, negative strides, axes, missing entries")
    x = rand((4, 5))
    for b, e, s, extra in [
        ([1, 0], [3, 4], [1, 2], {}),
        ([3], [0], [-1], {}),
        ([-1, -1], [-5, 0], [-2, -1], {}),
        ([0, 1], [100, 100], None, {}),
        ([-100], [2], [1], {}),
        ([1], [4], [2], {"axes": [1]}),
        ([2, 1], [4, 3], [1, 1], {"axes": [1, 0]}),
        ([1, 0], [2, -1], None, {"slice_mode": "size"}),
        ([-2], [1], None, {"slice_mode": "size", "axes": [-1]}),
        ([3], [], [-1], {}),
        ([3, 1], [0], [-1, 1], {}),
        ([2, 2], [2, 2], [1, 1], {}),
    ]:
        attrs = {"begin": b, "end": e, "strides": s}
        attrs.update(extra)
        want = strided_slice_ref(x, b, e, s, extra.get("axes"), extra.get("slice_mode", "end"))
        case("strided_slice", [x], want, attrs)
    for dt in ["int8", "bool", "float64"]:
        y = rand((3, 4, 2), dt)
        b, e, s = [2, 0, 1], [0, 4, 2], [-1, 3, 1]
        case("strided_slice", [y], strided_slice_ref(y, b, e, s), {"begin": b, "end": e, "strides": s})

    section("dyn.strided_slice: begin, end, strides operands slicing the leading axes")
    y = rand((4, 5, 2))
    for b, e, s, mode in [([1, 4], [3, 0], [1, -2], "end"), ([0], [-1], [2], "end"), ([1, 2], [2, 2], [1, 1], "size")]:
        want = strided_slice_ref(y, b, e, s, None, mode)
        case("dyn.strided_slice", [y, arr(b, "int64"), arr(e, "int64"), arr(s, "int64")], want, {"slice_mode": mode})
    yi = rand((4, 5), "int32")
    case("dyn.strided_slice", [yi, arr([-1], "int32"), arr([-5], "int32"), arr([-1], "int32")],
         strided_slice_ref(yi, [-1], [-5], [-1]))
    case("dyn.strided_slice", [y, arr([3], "int64"), arr([1], "int64"), arr([1], "int64")], "error: is after end")
    case("dyn.strided_slice", [y, arr([0], "int64"), arr([1], "int64"), arr([0], "int64")], "error: stride of axis")

    section("slice_like")
    x = rand((4, 5))
    case("slice_like", [x, rand((2, 3))], x[:2, :3])
    case("slice_like", [x, rand((2, 3))], x[:, :3], {"axes": [1]})
    x = rand((3, 4, 5), "int16")
    case("slice_like", [x, rand((2, 2), "int16")], x[:2, :2, :])
    case("slice_like", [x, rand((3, 1, 2), "int16")], x[:, :, :2], {"axes": [-1]})


# {==== indexing ====}

def take_ref(data, ind, axis=None, mode="clip", batch_dims=0):
    """take: clip clamps into [0, n-1] (negative indices become 0), wrap
    takes them modulo n; batch_dims leading dims are shared."""
    if axis is None:
        flat = data.reshape(-1)
        n = flat.size
        i = ind.astype(np.int64)
        i = np.clip(i, 0, n - 1) if mode == "clip" else np.mod(i, n)
        return flat[i]
    axis = axis % data.ndim
    n = data.shape[axis]
    i = ind.astype(np.int64)
    i = np.clip(i, 0, n - 1) if mode == "clip" else np.mod(i, n)
    if batch_dims == 0:
        return np.take(data, i, axis=axis)
    outs = []
    for b in range(data.shape[0]):
        outs.append(take_ref(data[b], i[b], axis - 1, "clip", batch_dims - 1))
    return np.stack(outs)


def gen_take_gather():
    section("take: clip (default, clamps; negative -> 0), wrap, fast; axis None flattens; batch_dims")
    x = rand((3, 4))
    i = arr([[-3, 0, 5], [11, 12, 40]], "int32")
    case("take", [x, i], take_ref(x, i))
    i = arr([[-1, 3], [4, 0]], "int64")
    case("take", [x, i], take_ref(x, i, axis=1), {"axis": 1})
    i = arr([-1, -4, 5, 2], "int32")
    case("take", [x, i], take_ref(x, i, axis=0, mode="wrap"), {"axis": 0, "mode": "wrap"})
    i = arr([-7, 13], "int64")
    case("take", [x, i], take_ref(x, i, mode="wrap"), {"mode": "wrap"})
    i = arr([[3, 0], [1, 2]], "int32")
    case("take", [x, i], take_ref(x, i, axis=-1), {"axis": -1, "mode": "fast"})
    xu = rand((5, 2), "uint8")
    i = arr([4, 0, 4], "uint16")
    case("take", [xu, i], take_ref(xu, i, axis=0), {"axis": 0})
    xb = rand((2, 5), "bool")
    i = arr(3, "int32")
    case("take", [xb, i], take_ref(xb, i, axis=1), {"axis": 1}, note="a scalar index drops the axis")
    x3 = rand((2, 4, 3))
    i = arr([[0, 3], [2, -1]], "int64")
    case("take", [x3, i], take_ref(x3, i, axis=1, batch_dims=1), {"axis": 1, "batch_dims": 1})
    x3h = rand((2, 4, 3), "float16")
    i = arr([[1], [3]], "int32")
    case("take", [x3h, i], take_ref(x3h, i, axis=2, batch_dims=1), {"axis": 2, "batch_dims": -1})
    case("take", [x, arr([0, 4], "int32")], "error: out of range", {"axis": 1, "mode": "fast"})
    case("take", [x, arr([-1], "int32")], "error: out of range", {"axis": 0, "mode": "fast"})
    case("take", [x, arr([12], "int64")], "error: out of range", {"mode": "fast"})

    section("gather (TVM does not wrap negative indices: they are errors)")
    x = rand((3, 4))
    i = arr([[0, 3], [2, 1], [1, 1]], "int32")
    case("gather", [x, i], np.take_along_axis(x, i.astype(np.int64), axis=1), {"axis": 1})
    i = arr([[2, 0, 1, 1], [0, 0, 2, 1]], "int64")
    case("gather", [x, i], np.take_along_axis(x, i, axis=0), {"axis": 0})
    xi = rand((2, 3, 2), "int64")
    i = arr(rng.integers(0, 3, size=(2, 5, 2)), "int32")
    case("gather", [xi, i], np.take_along_axis(xi, i.astype(np.int64), axis=1), {"axis": -2})
    case("gather", [x, arr([[0, 4], [0, 0], [1, 1]], "int32")], "error: out of range", {"axis": 1})
    case("gather", [x, arr([[0, 0, -1, 0]], "int32")], "error: out of range", {"axis": 0})

    section("gather_nd: indices (M, Y...), batch_dims")
    x = rand((3, 4))
    i = arr([[0, 2], [3, 1]], "int32")
    case("gather_nd", [x, i], x[i[0], i[1]])
    i = arr([[2, 0]], "int64")
    case("gather_nd", [x, i], x[i[0]])
    x3 = rand((2, 3, 4), "int32")
    i = arr([[2, 1]], "int64")
    want = np.stack([x3[b, i[0, b]] for b in range(2)])
    case("gather_nd", [x3, i], want, {"batch_dims": 1})
    i = arr([[[1, 0], [2, 2]], [[3, 0], [1, 1]]], "int32")
    want = np.stack([np.stack([x3[b, i[0, b, j], i[1, b, j]] for j in range(2)]) for b in range(2)])
    case("gather_nd", [x3, i], want, {"batch_dims": 1})
    xb = rand((2, 2), "bool")
    i = arr([[1, 0, 1], [0, 1, 1]], "uint8")
    case("gather_nd", [xb, i], xb[i[0], i[1]])
    case("gather_nd", [x, arr([[0, 3], [0, 4]], "int32")], "error: out of range")


def scatter_elements_ref(data, ind, upd, axis, red):
    out = data.copy()
    axis %= data.ndim
    for p in itertools.product(*[range(d) for d in ind.shape]):
        k = int(ind[p])
        if k < 0:
            k += data.shape[axis]
        q = list(p)
        q[axis] = k
        q = tuple(q)
        a, u = out[q], upd[p]
        if red == "update":
            out[q] = u
        elif red == "add":
            out[q] = a + u
        elif red == "mul":
            out[q] = a * u
        elif red == "mean":
            if out.dtype.kind == "f":
                out[q] = (float(a) + float(u)) / 2
            else:
                s = np.array(int(a) + int(u)).astype(out.dtype)  # wraps to the dtype
                out[q] = int(s / 2)  # then divides, truncating
        elif red == "min":
            out[q] = min(a, u)
        else:
            out[q] = max(a, u)
    return out


def scatter_nd_ref(data, ind, upd, mode):
    out = data.copy()
    m = ind.shape[0]
    for y in itertools.product(*[range(d) for d in ind.shape[1:]]):
        target = tuple(int(ind[(j,) + y]) for j in range(m))
        a, u = out[target], upd[y]
        if mode == "update":
            out[target] = u
        elif mode == "add":
            out[target] = a + u
        elif mode == "mul":
            out[target] = a * u
        elif mode == "min":
            out[target] = np.minimum(a, u)
        else:
            out[target] = np.maximum(a, u)
    return out


def gen_scatter():
    section("scatter_elements: reductions in index order; a negative index counts from the end")
    x = rand((3, 4))
    i = arr([[1, 0, 2, 2], [0, 2, 1, -1]], "int64")
    u = rand((2, 4))
    for red in ["update", "add", "mul", "mean", "min", "max"]:
        case("scatter_elements", [x, i, u], scatter_elements_ref(x, i, u, 0, red), {"axis": 0, "reduction": red})
    xi = rand((3, 4), "int32")
    i = arr([[3, 3], [0, -4], [1, 1]], "int32")
    ui = rand((3, 2), "int32")
    for red in ["add", "mean", "max"]:
        case("scatter_elements", [xi, i, ui], scatter_elements_ref(xi, i, ui, 1, red), {"axis": -1, "reduction": red})
    x8 = arr([[100, -100, 7]], "int8")
    i8 = arr([[0, 1, 2]], "int32")
    u8 = arr([[100, -100, -8]], "int8")
    case("scatter_elements", [x8, i8, u8], scatter_elements_ref(x8, i8, u8, 1, "mean"),
         {"axis": 1, "reduction": "mean"},
         note="int8 mean: the sum wraps to the dtype, then divides truncating")
    xb = rand((2, 3), "bool")
    i = arr([[1, 0, 1]], "int64")
    ub = rand((1, 3), "bool")
    case("scatter_elements", [xb, i, ub], scatter_elements_ref(xb, i, ub, 0, "update"))
    case("scatter_elements", [x, arr([[3, 0, 0, 0]], "int64"), rand((1, 4))], "error: out of range")
    case("scatter_elements", [x, arr([[-4, 0, 0, 0]], "int64"), rand((1, 4))], "error: out of range")

    section("scatter_nd: mode update/add/mul/min/max")
    x = rand((5,))
    i = arr([[1, 3, 1]], "int64")
    u = rand((3,))
    for mode in ["update", "add", "mul", "min", "max"]:
        case("scatter_nd", [x, i, u], scatter_nd_ref(x, i, u, mode), {"mode": mode})
    x2 = rand((3, 4), "int32")
    i = arr([[0, 2, 0], [1, 3, 1]], "int32")
    u = rand((3,), "int32")
    case("scatter_nd", [x2, i, u], scatter_nd_ref(x2, i, u, "add"), {"mode": "add"})
    i = arr([[2, 0]], "int64")
    u = rand((2, 4), "int32")
    case("scatter_nd", [x2, i, u], scatter_nd_ref(x2, i, u, "update"))
    xh = rand((2, 2), "float16")
    i = arr([[[0, 1]], [[1, 1]]], "int32")
    u = rand((1, 2), "float16")
    case("scatter_nd", [xh, i, u], scatter_nd_ref(xh, i, u, "max"), {"mode": "max"})
    case("scatter_nd", [x, arr([[5]], "int64"), rand((1,))], "error: out of range")
    case("scatter_nd", [x, arr([[-1]], "int64"), rand((1,))], "error: out of range")


# {==== broadcasting, tiling, reversing ====}

def gen_broadcast_tile():
    section("broadcast_to, broadcast_to_like, dyn.broadcast_to")
    x = rand((3, 1))
    case("broadcast_to", [x], np.broadcast_to(x, (2, 3, 4)), {"shape": [2, 3, 4]})
    xb = rand((1,), "bool")
    case("broadcast_to", [xb], np.broadcast_to(xb, (2, 2)), {"shape": [2, 2]})
    xs = rand((), "int32")
    case("broadcast_to", [xs], np.broadcast_to(xs, (3,)), {"shape": [3]})
    xi = rand((2, 1, 3), "int16")
    case("broadcast_to_like", [xi, rand((4, 2, 5, 3), "int16")], np.broadcast_to(xi, (4, 2, 5, 3)))
    case("dyn.broadcast_to", [x, arr([2, 3, 2], "int64")], np.broadcast_to(x, (2, 3, 2)))
    case("dyn.broadcast_to", [rand((3,)), arr([2, 4], "int64")], "error: cannot broadcast")
    case("dyn.broadcast_to", [rand((1,)), arr([2, -4], "int64")], "error: negative size")

    section("tile, dyn.tile")
    x = rand((2, 3))
    case("tile", [x], np.tile(x, (2, 1)), {"reps": [2, 1]})
    case("tile", [x], np.tile(x, (2,)), {"reps": [2]})
    xi = rand((2, 3), "int8")
    case("tile", [xi], np.tile(xi, (2, 1, 2)), {"reps": [2, 1, 2]})
    case("dyn.tile", [x, arr([1, 3], "int64")], np.tile(x, (1, 3)))
    case("dyn.tile", [x, arr([0, 2], "int64")], np.tile(x, (0, 2)))
    case("dyn.tile", [x, arr([2, -1], "int64")], "error: not allowed")

    section("repeat, reverse, reverse_sequence")
    case("repeat", [x], np.repeat(x, 2, axis=1), {"repeats": 2, "axis": 1})
    xi = rand((2, 3), "int8")
    case("repeat", [xi], np.repeat(xi, 3, axis=0), {"repeats": 3, "axis": -2})
    case("reverse", [x], x[::-1], {"axis": 0})
    xb = rand((2, 3, 2), "bool")
    case("reverse", [xb], xb[:, :, ::-1], {"axis": -1})

    def revseq(data, lens, seq_axis, batch_axis):
        out = data.copy()
        dim = data.shape[seq_axis]
        for b in range(data.shape[batch_axis]):
            n = min(int(lens[b]), dim)
            if n <= 1:
                continue
            src = [slice(None)] * data.ndim
            src[batch_axis] = b
            src[seq_axis] = slice(0, n)
            out[tuple(src)] = np.flip(data[tuple(src)], axis=seq_axis - (1 if batch_axis < seq_axis else 0))
        return out

    x = rand((4, 5))
    lens = arr([1, 3, 5, 9], "int32")
    case("reverse_sequence", [x, lens], revseq(x, lens, 1, 0), note="a length > the axis reverses it all")
    x3 = rand((5, 3, 2), "int32")
    lens = arr([0, 2, 4], "int64")
    case("reverse_sequence", [x3, lens], revseq(x3, lens, 0, 1), {"seq_axis": 0, "batch_axis": 1})
    lens = arr([-1, 5, 2], "int64")
    case("reverse_sequence", [x3, lens], revseq(x3, lens, 0, 1), {"seq_axis": -3, "batch_axis": -2})


def gen_layout():
    section("layout_transform")
    x = rand((2, 8, 3, 2))
    nhwc = x.transpose(0, 2, 3, 1)
    case("layout_transform", [x], nhwc, {"src_layout": "NCHW", "dst_layout": "NHWC"})
    case("layout_transform", [nhwc], x, {"src_layout": "NHWC", "dst_layout": "NCHW"})
    n4c = x.reshape(2, 2, 4, 3, 2).transpose(0, 1, 3, 4, 2)
    case("layout_transform", [x], n4c, {"src_layout": "NCHW", "dst_layout": "NCHW4c"})
    case("layout_transform", [n4c], x, {"src_layout": "NCHW4c", "dst_layout": "NCHW"})
    n2c = x.reshape(2, 4, 2, 3, 2).transpose(0, 1, 3, 4, 2)
    case("layout_transform", [n4c], n2c, {"src_layout": "NCHW4c", "dst_layout": "NCHW2c"})
    xi = rand((1, 4, 2, 3), "int8")
    nhwc4c = xi.reshape(1, 1, 4, 2, 3).transpose(0, 3, 4, 1, 2)
    case("layout_transform", [xi], nhwc4c, {"src_layout": "NCHW", "dst_layout": "NHWC4c"})
    xo = rand((8, 4, 3, 3), "float16")
    oihw4i4o = xo.reshape(2, 4, 1, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1)
    case("layout_transform", [xo], oihw4i4o, {"src_layout": "OIHW", "dst_layout": "OIHW4i4o"})


# {==== init ops ====}

def gen_init():
    section("one_hot, dyn.one_hot (an index outside 0..depth-1 matches nothing)")

    def one_hot(ind, depth, axis, on, off, dtype):
        ind = ind.astype(np.int64)
        hot = ind[..., None] == np.arange(depth)
        out = np.where(hot, on, off).astype(dtype)
        return np.moveaxis(out, -1, axis if axis >= 0 else ind.ndim)

    i = arr([[0, 3, -1], [2, 5, 1]], "int32")
    on, off = arr(1, "float32"), arr(0, "float32")
    case("one_hot", [i, on, off], one_hot(i, 4, -1, 1.0, 0.0, "float32"), {"depth": 4, "axis": -1, "dtype": "float32"})
    case("one_hot", [i, on, off], one_hot(i, 4, 0, 1.0, 0.0, "float32"), {"depth": 4, "axis": 0})
    on, off = arr(2.75, "float32"), arr(-1.5, "float32")
    case("one_hot", [i, on, off], one_hot(i, 3, 1, 2, -1, "int32"), {"depth": 3, "axis": 1, "dtype": "int32"},
         note="on/off converted to the dtype (truncating)")
    i = arr([1, 0], "int64")
    ob, fb = arr(True, "bool"), arr(False, "bool")
    case("one_hot", [i, ob, fb], one_hot(i, 2, -1, True, False, "bool"), {"depth": 2})
    i = arr([[0, 2], [1, 1]], "int32")
    case("dyn.one_hot", [i, arr(5, "int64"), arr(-5, "int64"), arr(3, "int32")], one_hot(i, 3, -1, 5, -5, "int64"))
    case("dyn.one_hot", [i, arr(1, "float32"), arr(0, "float32"), arr(0, "int32")], "error: depth must be positive")

    section("full, zeros, ones and their dyn.* variants")
    f = arr(2.5, "float32")
    case("full", [f], np.full((2, 3), 2.5, "float32"), {"shape": [2, 3]})
    f = arr(-2.75, "float32")
    case("full", [f], np.full((3,), -2, "int32"), {"shape": [3], "dtype": "int32"})
    f = arr(5, "int32")
    case("full", [f], np.full((2, 2), True), {"shape": [2, 2], "dtype": "bool"})
    f = arr(7, "int64")
    case("full", [f], np.full((), 7.0, "float16"), {"shape": [], "dtype": "float16"})
    case("dyn.full", [arr(3, "int8"), arr([2, 1, 2], "int64")], np.full((2, 1, 2), 3, "int8"))
    case("dyn.full", [arr(1.5, "float64"), arr([3], "int32")], np.full((3,), 1.5, "float32"), {"dtype": "float32"})
    case("dyn.full", [arr(1, "float32"), arr([-1, 2], "int64")], "error: negative size")
    case("zeros", [], np.zeros((2, 3), "float32"), {"shape": [2, 3], "dtype": "float32"})
    case("zeros", [], np.zeros((4,), "int8"), {"shape": [4], "dtype": "int8"})
    case("ones", [], np.ones((3, 2), "float32"), {"shape": [3, 2]})
    case("ones", [], np.ones((2,), bool), {"shape": [2], "dtype": "bool"})
    case("ones", [], np.ones((), "float64"), {"shape": [], "dtype": "float64"})
    case("dyn.zeros", [arr([3, 2], "int64")], np.zeros((3, 2), "float32"))
    case("dyn.zeros", [arr([2, 0], "int32")], np.zeros((2, 0), "int32"), {"dtype": "int32"})
    case("dyn.ones", [arr([2, 2, 1], "int64")], np.ones((2, 2, 1), "uint8"), {"dtype": "uint8"})
    case("dyn.ones", [arr([2, -3], "int64")], "error: negative size")
    case("dyn.ones", [arr([100000, 100000, 1000], "int64")], "error: too large")

    section("arange: ceil((stop - start) / step) values")
    for start, stop, step, dt in [
        (0.5, 3.0, 0.5, "float32"),
        (0, 5, 1, "float32"),
        (1.0, -1.0, -0.3, "float64"),
        (10, 1, -3, "int32"),
        (-4, 7, 3, "int64"),
        (3, 3, 1, "int32"),
        (5, 1, 1, "int16"),
        (2, 9, 2, "uint8"),
    ]:
        want = np.arange(start, stop, step, dtype=np.float64).astype(dt) if dt.startswith("float") else \
            np.array(list(range(start, stop, step)), dtype=dt)
        case("arange", [arr(start, dt), arr(stop, dt), arr(step, dt)], want, {"dtype": dt})
    case("arange", [arr(0, "int32"), arr(4, "int32"), arr(0, "int32")], "error: step is 0", {"dtype": "int32"})
    case("arange", [arr(0, "float32"), arr(1e30, "float32"), arr(1, "float32")], "error: too large",
         {"dtype": "float32"})

    section("shape_of")
    case("shape_of", [rand((2, 3, 4))], arr([2, 3, 4], "int32"))
    case("shape_of", [rand((5, 0), "bool")], arr([5, 0], "int64"), {"dtype": "int64"})
    case("shape_of", [rand((), "int8")], arr(0, "int32"), note="a scalar: a 0-d result holding 0")


# {==== scans, einsum, meshgrid, sparse_to_dense ====}

def scan_ref(x, axis, dtype, exclusive, prod):
    y = x.astype(dtype)
    if axis is None:
        y = y.reshape(-1)
        axis = 0
    res = np.cumprod(y, axis=axis, dtype=dtype) if prod else np.cumsum(y, axis=axis, dtype=dtype)
    if exclusive:
        first = np.take(np.ones_like(res) if prod else np.zeros_like(res), [0], axis=axis)
        res = np.concatenate([first, np.take(res, range(res.shape[axis] - 1), axis=axis)], axis=axis)
    return res


def gen_scan():
    section("cumsum, cumprod: axis None flattens; exclusive; dtype (inputs converted first)")
    x = rand((2, 3))
    case("cumsum", [x], scan_ref(x, None, "float32", False, False), tol="rtol=1e-5, atol=1e-5")
    xi = rand((2, 3, 2), "int32")
    case("cumsum", [xi], scan_ref(xi, 1, "int32", False, False), {"axis": 1})
    case("cumsum", [xi], scan_ref(xi, -1, "int32", True, False), {"axis": -1, "exclusive": True})
    x8 = arr([100, 100, 100, -128], "int8")
    case("cumsum", [x8], scan_ref(x8, 0, "int64", False, False), {"axis": 0, "dtype": "int64"})
    case("cumsum", [x8], scan_ref(x8, 0, "int8", False, False), {"axis": 0}, note="int8 wraps")
    xb = rand((3, 4), "bool")
    case("cumsum", [xb], scan_ref(xb, 1, "int32", False, False), {"axis": 1, "dtype": "int32"})
    xh = arr(rng.random((5,)) + 0.5, "float16")
    case("cumsum", [xh], scan_ref(xh, 0, "float16", False, False), {"axis": 0}, tol="rtol=1e-3, atol=1e-3")
    xd = arr(rng.random((3, 3)) + 0.5, "float64")
    case("cumprod", [xd], scan_ref(xd, 0, "float64", False, True), {"axis": 0})
    case("cumprod", [xi], scan_ref(xi, None, "int32", True, True), {"exclusive": True})
    xf = arr(rng.random((2, 4)) * 2, "float32")
    case("cumprod", [xf], scan_ref(xf, 1, "float32", False, True), {"axis": 1}, tol="rtol=1e-5, atol=1e-6")
    xs = arr([2.7, -1.9, 3.5], "float32")
    case("cumprod", [xs], scan_ref(xs, 0, "int32", False, True), {"axis": 0, "dtype": "int32"},
         note="floats truncate to the dtype before the scan")


def gen_einsum():
    section("einsum: general contractions by loops over every label")
    a, b = rand((2, 3)), rand((3, 4))
    tol = "rtol=1e-5, atol=1e-5"
    case("einsum", [[a, b]], np.einsum("ij,jk->ik", a, b), {"equation": "ij,jk->ik"}, tol=tol)
    case("einsum", [[a, b]], np.einsum("ij,jk", a, b), {"equation": "ij,jk"}, tol=tol, note="implicit output")
    s = rand((3, 3))
    case("einsum", [[s]], np.einsum("ii->i", s), {"equation": "ii->i"})
    case("einsum", [[s]], np.einsum("ii", s), {"equation": "ii"}, tol=tol, note="trace")
    case("einsum", [[a]], np.einsum("ij->ji", a), {"equation": "ij->ji"})
    case("einsum", [[a]], np.einsum("ij->", a), {"equation": "ij->"}, tol=tol)
    v, w = rand((4,)), rand((4,))
    case("einsum", [[v, w]], np.einsum("i,i->", v, w), {"equation": "i,i->"}, tol=tol)
    case("einsum", [[v, w]], np.einsum("i,j->ij", v, w), {"equation": "i, j -> ij"})
    p, q = rand((2, 2, 3)), rand((2, 3, 2))
    case("einsum", [[p, q]], np.einsum("bij,bjk->bik", p, q), {"equation": "bij,bjk->bik"}, tol=tol)
    e1, e2 = rand((2, 1, 2, 3)), rand((3, 3, 2))
    case("einsum", [[e1, e2]], np.einsum("...ij,...jk->...ik", e1, e2), {"equation": "...ij,...jk->...ik"}, tol=tol,
         note="ellipsis dims broadcast")
    case("einsum", [[e1]], np.einsum("...ij->...ji", e1), {"equation": "...ij->...ji"})
    case("einsum", [[e1]], np.einsum("a...", e1), {"equation": "a..."}, note="implicit: ellipsis first")
    ai, bi = rand((2, 3), "int32"), rand((2, 3), "int32")
    case("einsum", [[ai, bi]], np.einsum("ij,ij->i", ai, bi), {"equation": "ij,ij->i"})
    c1, c2, c3 = rand((2, 3)), rand((3, 4)), rand((4,))
    case("einsum", [[c1, c2, c3]], np.einsum("ij,jk,k->i", c1, c2, c3), {"equation": "ij,jk,k->i"}, tol=tol)
    bc1, bc2 = rand((2, 1)), rand((2, 3))
    case("einsum", [[bc1, bc2]], np.broadcast_to(bc1, (2, 3)) * bc2, {"equation": "ij,ij->ij"},
         note="a label of extent 1 broadcasts")
    u1, u2 = rand((2, 3)), rand((3,))
    case("einsum", [[u1, u2]], np.einsum("Ab,b->A", u1, u2), {"equation": "Ab,b->A"}, tol=tol)
    hd = rand((2, 3), "float64")
    case("einsum", [[hd, hd]], np.einsum("ij,kj->ik", hd, hd), {"equation": "ij,kj->ik"})


def gen_meshgrid_sparse():
    section("meshgrid: indexing ij, xy (first two grid dims swapped); scalars count 1")
    x, y = rand((3,)), rand((2,))
    case("meshgrid", [[x, y]], list(np.meshgrid(x, y, indexing="ij")), {"indexing": "ij"})
    case("meshgrid", [[x, y]], list(np.meshgrid(x, y, indexing="ij")))
    xi, yi, zi = rand((2,), "int32"), rand((3,), "int32"), rand((4,), "int32")
    case("meshgrid", [[xi, yi, zi]], list(np.meshgrid(xi, yi, zi, indexing="xy")), {"indexing": "xy"})
    s = rand((), "float32")
    case("meshgrid", [[x, s]], list(np.meshgrid(x, s, indexing="xy")), {"indexing": "xy"})
    case("meshgrid", [[y]], list(np.meshgrid(y, indexing="xy")), {"indexing": "xy"})

    section("sparse_to_dense, dyn.sparse_to_dense (a later index wins; one outside the output matches nothing)")

    def s2d(ind, vals, default, shape):
        out = np.full(shape, default, dtype=vals.dtype)
        rows = ind.reshape(-1, 1) if ind.ndim < 2 else ind
        for j, r in enumerate(rows):
            r = tuple(int(t) for t in r)
            if all(0 <= t < d for t, d in zip(r, shape)):
                out[r] = vals if vals.ndim == 0 else vals[j]
        return out

    ind = arr([[0, 1], [2, 3], [1, 0]], "int32")
    vals = rand((3,))
    d = arr(0.5, "float32")
    case("sparse_to_dense", [ind, vals, d], s2d(ind, vals, 0.5, (3, 4)), {"output_shape": [3, 4]})
    ind = arr([4, 0, 4, 9, -1], "int64")
    vals = arr([1, 2, 3, 4, 5], "int32")
    d = arr(-1, "int32")
    case("sparse_to_dense", [ind, vals, d], s2d(ind, vals, -1, (5,)), {"output_shape": [5]})
    ind = arr([[1], [0]], "int32")
    vals = arr(True, "bool")
    d = arr(False, "bool")
    case("sparse_to_dense", [ind, vals, d], s2d(ind, vals, False, (3, 2)), {"output_shape": [3, 2]},
         note="a 1-wide index row selects a whole row")
    ind = arr(2, "int32")
    vals = arr(7.0, "float64")
    d = arr(1.0, "float64")
    case("sparse_to_dense", [ind, vals, d], s2d(ind, vals, 1.0, (4,)), {"output_shape": [4]})
    ind = arr([[0, 0], [1, 2]], "int64")
    vals = arr([3, 4], "int8")
    d = arr(0, "int8")
    case("dyn.sparse_to_dense", [ind, vals, d, arr([2, 3], "int64")], s2d(ind, vals, 0, (2, 3)))
    case("dyn.sparse_to_dense", [ind, vals, d, arr([2, -3], "int64")], "error: negative size")


def main():
    os.makedirs(DATA, exist_ok=True)
    for f in os.listdir(DATA):
        if f.endswith(".npy"):
            os.remove(os.path.join(DATA, f))
    lines.append("# transform.txt: cases of the transform family's reference kernels (runtime/kernels/k_transform.c).")
    lines.append("# Generated by tests/kernels/gen_transform.py -- edit that and rerun it, not this file.")
    gen_reshape()
    gen_transpose_squeeze_expand()
    gen_join_split()
    gen_slicing()
    gen_take_gather()
    gen_scatter()
    gen_broadcast_tile()
    gen_layout()
    gen_init()
    gen_scan()
    gen_einsum()
    gen_meshgrid_sparse()
    with open(os.path.join(HERE, "transform.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
