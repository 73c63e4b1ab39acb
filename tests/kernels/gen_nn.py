#!/usr/bin/python3
"""gen_nn.py: fixtures for the nn family's reference kernels.

Writes tests/kernels/data/nn/*.npy and tests/kernels/nn.txt (the case format
of tests/unit/test_kernels.c). Expected values are computed here with NumPy
from the operators' definitions (TVM v0.16 semantics, spec sections 9.2 and
11): convolutions, pools and resizes are plain loops over output positions,
written independently of the C kernels. Tensors are in canonical layouts
(NC<spatial>, OI<spatial>) and transposed to the layout a case tests.

Run with /usr/bin/python3 (NumPy 1.24) from anywhere; the output is
deterministic (fixed seed), so rerunning reproduces the checked-in files.
"""
import itertools
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "nn")
rng = np.random.default_rng(20240611)
lines = []
names = set()

F16 = " | rtol=2e-3, atol=2e-3"


# ---------------------------------------------------------------- helpers

def rf(*shape, dtype=np.float32, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(dtype)


def ri(*shape, lo=-4, hi=5, dtype=np.int32):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def save(name, arr):
    path = os.path.join(DATA, name + ".npy")
    np.save(path, np.array(arr, order="C"))
    return "nn/" + name + ".npy"


def case(op, name, inputs, outputs, attrs="", tol=""):
    """One case line: op | inputs | attrs => outputs (or 'error: ...')."""
    assert name not in names, name
    names.add(name)
    parts = [op]
    for i, a in enumerate(inputs):
        parts.append(save(f"{name}_a{i}", a))
    if attrs:
        parts.append("attrs: " + attrs)
    if isinstance(outputs, str):
        rhs = outputs
    else:
        if not isinstance(outputs, (list, tuple)):
            outputs = [outputs]
        outs = []
        for i, o in enumerate(outputs):
            outs.append(save(f"{name}_out" if len(outputs) == 1 else f"{name}_out{i}", o))
        rhs = " ".join(outs)
    lines.append(" | ".join(parts) + " => " + rhs + tol)


def comment(text):
    lines.append("")
    lines.append("# " + text)


def lay(a, primal, layout):
    """a in the canonical layout primal ("NCHW") transposed to layout."""
    return np.transpose(a, [primal.index(ch) for ch in layout])


def acc_type(a):
    return np.float64 if a.dtype.kind == "f" else np.int64


def trunc_div(s, n):
    """Integer division truncating toward zero (TVM's div on integers)."""
    q = abs(int(s)) // abs(int(n))
    return q if (s >= 0) == (n > 0) else -q


def lowest(dt):
    dt = np.dtype(dt)
    return np.finfo(dt).min if dt.kind == "f" else np.iinfo(dt).min if dt.kind in "iu" else 0


def ilist(v):
    return "[" + ", ".join(str(int(x)) for x in v) + "]"


def fnum(v):
    return repr(float(v)) + "f"


# ---------------------------------------------------------------- convolutions

def conv_ref(x, w, strides, pb, pa, dil, groups):
    """Cross-correlation, data [N, C, *S], weight [O, C/groups, *K]."""
    at = acc_type(x)
    x = x.astype(at)
    w = w.astype(at)
    n = x.ndim - 2
    N, C = x.shape[:2]
    O = w.shape[0]
    K = w.shape[2:]
    cg, og = C // groups, O // groups
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pb[i], pa[i]) for i in range(n)])
    osz = [(x.shape[2 + i] + pb[i] + pa[i] - ((K[i] - 1) * dil[i] + 1)) // strides[i] + 1 for i in range(n)]
    out = np.zeros((N, O) + tuple(osz), dtype=at)
    for o in range(O):
        g = o // og
        for pos in itertools.product(*[range(v) for v in osz]):
            sl = tuple(slice(pos[i] * strides[i], pos[i] * strides[i] + (K[i] - 1) * dil[i] + 1, dil[i])
                       for i in range(n))
            win = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[(slice(None), o) + pos] = (win * w[o]).reshape(N, -1).sum(axis=1)
    return out


def convt_ref(x, w, strides, pb, pa, opad, dil, groups):
    """Transposed convolution by scattering: data [N, C, *S], weight
    [C, O/groups, *K]; input x contributes to y = x*s + k*d - pad_before."""
    at = acc_type(x)
    x = x.astype(at)
    w = w.astype(at)
    n = x.ndim - 2
    N, C = x.shape[:2]
    og = w.shape[1]
    K = w.shape[2:]
    S = x.shape[2:]
    cg = C // groups
    osz = [strides[i] * (S[i] - 1) + (K[i] - 1) * dil[i] + 1 - pb[i] - pa[i] + opad[i] for i in range(n)]
    out = np.zeros((N, og * groups) + tuple(osz), dtype=at)
    for ci in range(C):
        g = ci // cg
        for xpos in itertools.product(*[range(v) for v in S]):
            for kpos in itertools.product(*[range(v) for v in K]):
                y = tuple(xpos[i] * strides[i] + kpos[i] * dil[i] - pb[i] for i in range(n))
                if all(0 <= y[i] < osz[i] for i in range(n)):
                    contrib = x[(slice(None), ci) + xpos][:, None] * w[(ci, slice(None)) + kpos][None, :]
                    out[(slice(None), slice(g * og, (g + 1) * og)) + y] += contrib
    return out


def conv_case(name, op, x, w, strides, pb, pa, dil, groups, attrs, dl=None, kl=None, ol=None,
              out_dtype=None, tol="", transpose=False, opad=None, weight_view=None):
    """x, w canonical; dl/kl/ol the layouts to test (None: canonical)."""
    n = x.ndim - 2
    sp = "DHW"[3 - n:]
    dprim, kprim = "NC" + sp, ("IO" if transpose else "OI") + sp
    if transpose:
        ref = convt_ref(x, w, strides, pb, pa, opad, dil, groups)
    else:
        ref = conv_ref(x, w if weight_view is None else weight_view, strides, pb, pa, dil, groups)
    odt = np.dtype(out_dtype) if out_dtype else x.dtype
    ref = ref.astype(odt)
    xin = lay(x, dprim, dl) if dl else x
    win = lay(w, kprim, kl) if kl else w
    oo = lay(ref, dprim, ol or dl) if (ol or dl) else ref
    extra = []
    if dl:
        extra.append(f'data_layout="{dl}"')
    if kl:
        extra.append(f'kernel_layout="{kl}"')
    if ol:
        extra.append(f'out_layout="{ol}"')
    if out_dtype:
        extra.append(f'out_dtype="{out_dtype}"')
    full = ", ".join([a for a in [attrs] + extra if a])
    case(op, name, [xin, win], oo, full, tol)


def gen_conv():
    comment("nn.conv2d: cross-correlation, zero padding, strides, dilation, groups, layouts, out_dtype")
    x = rf(1, 3, 6, 6)
    w = rf(4, 3, 3, 3)
    conv_case("conv2d_basic", "nn.conv2d", x, w, [1, 1], [0, 0], [0, 0], [1, 1], 1, "")
    conv_case("conv2d_s2p1", "nn.conv2d", x, w, [2, 2], [1, 1], [1, 1], [1, 1], 1,
              "strides=[2, 2], padding=[1, 1]")
    conv_case("conv2d_pad4_dil", "nn.conv2d", x, w, [1, 2], [1, 0], [2, 1], [2, 1], 1,
              "strides=[1, 2], padding=[1, 0, 2, 1], dilation=[2, 1]")
    conv_case("conv2d_pad1", "nn.conv2d", x, rf(2, 3, 2, 2), [1, 1], [1, 1], [1, 1], [1, 1], 1,
              "padding=[1]")
    conv_case("conv2d_depthwise", "nn.conv2d", x, rf(3, 1, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], 3,
              "padding=[1, 1], groups=3")
    conv_case("conv2d_depthmult", "nn.conv2d", x, rf(6, 1, 3, 3), [2, 2], [0, 0], [0, 0], [1, 1], 3,
              "strides=[2, 2], groups=3")
    x4 = rf(1, 4, 5, 5)
    conv_case("conv2d_groups2", "nn.conv2d", x4, rf(6, 2, 3, 3), [1, 1], [1, 1], [1, 1], [1, 1], 2,
              "padding=[1, 1], groups=2")
    # TVM's depthwise form: weight [C, m, kh, kw] with channels = C*m reads w[o/m, o%m].
    wd = rf(3, 2, 3, 3)
    conv_case("conv2d_dwform", "nn.conv2d", x, wd, [1, 1], [0, 0], [0, 0], [1, 1], 3,
              "groups=3, channels=6, kernel_size=[3, 3]", weight_view=wd.reshape(6, 1, 3, 3))
    conv_case("conv2d_nhwc_hwio", "nn.conv2d", x, w, [2, 2], [1, 1], [1, 1], [1, 1], 1,
              "strides=[2, 2], padding=[1, 1]", dl="NHWC", kl="HWIO")
    conv_case("conv2d_nhwc_ohwi_g", "nn.conv2d", x4, rf(4, 2, 2, 3), [1, 1], [0, 1], [1, 0], [1, 1], 2,
              "padding=[0, 1, 1, 0], groups=2", dl="NHWC", kl="OHWI")
    conv_case("conv2d_outlayout", "nn.conv2d", x, w, [1, 1], [0, 0], [0, 0], [1, 1], 1, "", ol="NHWC")
    conv_case("conv2d_hwcn_ihwo", "nn.conv2d", x, w, [1, 1], [1, 1], [1, 1], [1, 1], 1, "padding=[1, 1]",
              dl="HWCN", kl="IHWO", ol="CNHW")
    xi8, wi8 = ri(1, 3, 5, 5, dtype=np.int8), ri(2, 3, 3, 3, dtype=np.int8)
    conv_case("conv2d_i8_i32", "nn.conv2d", xi8, wi8, [1, 1], [1, 1], [1, 1], [1, 1], 1, "padding=[1, 1]",
              out_dtype="int32")
    conv_case("conv2d_i32", "nn.conv2d", ri(1, 3, 5, 5), ri(2, 3, 3, 3), [2, 2], [0, 0], [0, 0], [1, 1], 1,
              "strides=[2, 2]")
    # int8 products wrap in int8 when no out_dtype widens them.
    xw, ww = ri(1, 2, 3, 3, lo=-20, hi=21, dtype=np.int8), ri(1, 2, 2, 2, lo=-20, hi=21, dtype=np.int8)
    conv_case("conv2d_i8_wrap", "nn.conv2d", xw, ww, [1, 1], [0, 0], [0, 0], [1, 1], 1, "")
    conv_case("conv2d_u8_f32", "nn.conv2d", ri(1, 2, 4, 4, lo=0, hi=9, dtype=np.uint8),
              ri(2, 2, 3, 3, lo=0, hi=9, dtype=np.uint8), [1, 1], [0, 0], [0, 0], [1, 1], 1, "",
              out_dtype="float32")
    conv_case("conv2d_f16", "nn.conv2d", rf(1, 3, 5, 5, dtype=np.float16), rf(2, 3, 3, 3, dtype=np.float16),
              [1, 1], [1, 1], [1, 1], [1, 1], 1, "padding=[1, 1]", tol=" | rtol=5e-3, atol=5e-3")
    conv_case("conv2d_f64", "nn.conv2d", rf(1, 3, 5, 5, dtype=np.float64), rf(2, 3, 3, 3, dtype=np.float64),
              [1, 2], [0, 1], [1, 0], [1, 1], 1, "strides=[1, 2], padding=[0, 1, 1, 0]")

    comment("nn.conv1d / nn.conv3d")
    x1 = rf(2, 3, 9)
    conv_case("conv1d_basic", "nn.conv1d", x1, rf(4, 3, 3), [1], [0], [0], [1], 1, "")
    conv_case("conv1d_s2_pad_dil", "nn.conv1d", x1, rf(4, 3, 3), [2], [1], [2], [2], 1,
              "strides=[2], padding=[1, 2], dilation=[2]")
    conv_case("conv1d_pad1", "nn.conv1d", x1, rf(2, 3, 2), [1], [2], [2], [1], 1, "padding=[2]")
    conv_case("conv1d_nwc_wio_g", "nn.conv1d", rf(1, 4, 7), rf(6, 2, 3), [1], [1], [1], [1], 2,
              "padding=[1, 1], groups=2", dl="NWC", kl="WIO")
    conv_case("conv1d_i16", "nn.conv1d", ri(1, 2, 6, dtype=np.int16), ri(3, 2, 2, dtype=np.int16), [1], [0], [0],
              [1], 1, "")
    x3 = rf(1, 2, 4, 4, 4)
    conv_case("conv3d_basic", "nn.conv3d", x3, rf(3, 2, 2, 2, 2), [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 1, "")
    conv_case("conv3d_s2p1", "nn.conv3d", x3, rf(2, 2, 3, 3, 3), [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], 1,
              "strides=[2, 2, 2], padding=[1]")
    conv_case("conv3d_pad6_dil", "nn.conv3d", x3, rf(2, 2, 2, 2, 2), [1, 1, 1], [1, 0, 0], [0, 1, 1], [1, 2, 1], 1,
              "padding=[1, 0, 0, 0, 1, 1], dilation=[1, 2, 1]")
    conv_case("conv3d_ndhwc_g", "nn.conv3d", x3, rf(4, 1, 2, 2, 2), [1, 1, 1], [0, 0, 0], [0, 0, 0], [1, 1, 1], 2,
              "groups=2", dl="NDHWC", kl="DHWIO")

    comment("nn.conv{1,2,3}d_transpose: y = x*s + k*d - pad_before, output_padding, groups (weight IO..)")
    xt = rf(1, 3, 4, 4)
    conv_case("conv2dt_basic", "nn.conv2d_transpose", xt, rf(3, 2, 3, 3), [1, 1], [0, 0], [0, 0], [1, 1], 1, "",
              transpose=True, opad=[0, 0])
    conv_case("conv2dt_s2_p1_op1", "nn.conv2d_transpose", xt, rf(3, 2, 3, 3), [2, 2], [1, 1], [1, 1], [1, 1], 1,
              "strides=[2, 2], padding=[1, 1], output_padding=[1, 1]", transpose=True, opad=[1, 1])
    conv_case("conv2dt_asym", "nn.conv2d_transpose", xt, rf(3, 2, 2, 3), [2, 1], [0, 1], [1, 0], [1, 1], 1,
              "strides=[2, 1], padding=[0, 1, 1, 0], output_padding=[1, 0]", transpose=True, opad=[1, 0])
    conv_case("conv2dt_groups", "nn.conv2d_transpose", rf(1, 4, 3, 3), rf(4, 3, 3, 3), [2, 2], [1, 1], [1, 1],
              [1, 1], 2, "strides=[2, 2], padding=[1, 1], groups=2", transpose=True, opad=[0, 0])
    conv_case("conv2dt_groups_ch", "nn.conv2d_transpose", rf(1, 4, 3, 3), rf(4, 1, 2, 2), [1, 1], [0, 0], [0, 0],
              [1, 1], 4, "channels=4, kernel_size=[2, 2], groups=4", transpose=True, opad=[0, 0])
    conv_case("conv2dt_nhwc", "nn.conv2d_transpose", xt, rf(3, 2, 3, 3), [2, 2], [1, 1], [1, 1], [1, 1], 1,
              "strides=[2, 2], padding=[1, 1]", dl="NHWC", kl="HWOI", transpose=True, opad=[0, 0])
    conv_case("conv2dt_oihw", "nn.conv2d_transpose", xt, rf(3, 2, 2, 2), [2, 2], [0, 0], [0, 0], [1, 1], 1,
              "strides=[2, 2]", kl="OIHW", transpose=True, opad=[0, 0])
    conv_case("conv2dt_i32", "nn.conv2d_transpose", ri(1, 2, 3, 3), ri(2, 2, 2, 2), [2, 2], [0, 0], [0, 0], [1, 1],
              1, "strides=[2, 2]", transpose=True, opad=[0, 0])
    conv_case("conv1dt_basic", "nn.conv1d_transpose", rf(2, 3, 5), rf(3, 2, 3), [2], [1], [1], [1], 1,
              "strides=[2], padding=[1], output_padding=[1]", transpose=True, opad=[1])
    conv_case("conv1dt_nwc", "nn.conv1d_transpose", rf(1, 2, 4), rf(2, 3, 2), [3], [0], [1], [1], 1,
              "strides=[3], padding=[0, 1]", dl="NWC", kl="WIO", transpose=True, opad=[0])
    conv_case("conv3dt_basic", "nn.conv3d_transpose", rf(1, 2, 3, 3, 3), rf(2, 2, 2, 2, 2), [2, 2, 2], [0, 0, 0],
              [0, 0, 0], [1, 1, 1], 1, "strides=[2, 2, 2]", transpose=True, opad=[0, 0, 0])
    conv_case("conv3dt_pad_op", "nn.conv3d_transpose", rf(1, 2, 2, 3, 3), rf(2, 1, 3, 3, 3), [2, 1, 2], [1, 1, 1],
              [1, 1, 1], [1, 1, 1], 1, "strides=[2, 1, 2], padding=[1, 1, 1], output_padding=[1, 0, 1]",
              transpose=True, opad=[1, 0, 1])


# ---------------------------------------------------------------- dense, matmul, batch_matmul

def gen_dense():
    comment("nn.dense: x . w^T; nn.matmul (transpose_a/b); nn.batch_matmul (batch 1 broadcasts)")
    x, w = rf(3, 5), rf(4, 5)
    case("nn.dense", "dense_f32", [x, w], (x.astype(np.float64) @ w.T).astype(np.float32), "units=None")
    x3 = rf(2, 3, 5)
    case("nn.dense", "dense_3d", [x3, w], (x3.astype(np.float64) @ w.T).astype(np.float32), "units=4")
    x1 = rf(5)
    case("nn.dense", "dense_1d", [x1, w], (x1.astype(np.float64) @ w.T).astype(np.float32), "units=None")
    xi, wi = ri(3, 6, dtype=np.int8), ri(2, 6, dtype=np.int8)
    case("nn.dense", "dense_i8_i32", [xi, wi], (xi.astype(np.int64) @ wi.T.astype(np.int64)).astype(np.int32),
         'units=None, out_dtype="int32"')
    xh, wh = rf(2, 4, dtype=np.float16), rf(3, 4, dtype=np.float16)
    case("nn.dense", "dense_f16", [xh, wh], (xh.astype(np.float64) @ wh.T.astype(np.float64)).astype(np.float16),
         "units=None", F16)
    a, b = rf(3, 5), rf(5, 4)
    case("nn.matmul", "matmul_nn", [a, b], (a.astype(np.float64) @ b).astype(np.float32), "units=None")
    case("nn.matmul", "matmul_ta", [a.T.copy(), b], (a.astype(np.float64) @ b).astype(np.float32),
         "units=None, transpose_a=True")
    case("nn.matmul", "matmul_tb", [a, b.T.copy()], (a.astype(np.float64) @ b).astype(np.float32),
         "units=4, transpose_b=True")
    case("nn.matmul", "matmul_tatb", [a.T.copy(), b.T.copy()], (a.astype(np.float64) @ b).astype(np.float32),
         "units=None, transpose_a=True, transpose_b=True")
    a3 = rf(2, 3, 5)
    case("nn.matmul", "matmul_batched", [a3, b], (a3.astype(np.float64) @ b).astype(np.float32), "units=None")
    case("nn.matmul", "matmul_batched_ta", [np.swapaxes(a3, 1, 2).copy(), b],
         (a3.astype(np.float64) @ b).astype(np.float32), "units=None, transpose_a=True")
    ai, bi = ri(2, 3), ri(3, 4)
    case("nn.matmul", "matmul_i32", [ai, bi], (ai.astype(np.int64) @ bi).astype(np.int32), "units=None")
    case("nn.matmul", "matmul_f64", [a.astype(np.float64), b.astype(np.float64)], a.astype(np.float64) @ b,
         "units=None")

    A, B = rf(2, 3, 4), rf(2, 4, 5)
    ref = (A.astype(np.float64) @ B).astype(np.float32)
    case("nn.batch_matmul", "bmm_nn", [A, B], ref)
    case("nn.batch_matmul", "bmm_tb", [A, np.swapaxes(B, 1, 2).copy()], ref, "transpose_b=True")
    case("nn.batch_matmul", "bmm_ta", [np.swapaxes(A, 1, 2).copy(), B], ref, "transpose_a=True, transpose_b=False")
    case("nn.batch_matmul", "bmm_tatb", [np.swapaxes(A, 1, 2).copy(), np.swapaxes(B, 1, 2).copy()], ref,
         "transpose_a=True, transpose_b=True")
    A1, B3 = rf(1, 3, 4), rf(3, 4, 2)
    case("nn.batch_matmul", "bmm_bcast_a", [A1, B3], (A1.astype(np.float64) @ B3).astype(np.float32))
    A3, B1 = rf(3, 2, 4), rf(1, 4, 2)
    case("nn.batch_matmul", "bmm_bcast_b", [A3, B1], (A3.astype(np.float64) @ B1).astype(np.float32))
    Ai, Bi = ri(2, 2, 3, dtype=np.int8), ri(2, 3, 2, dtype=np.int8)
    case("nn.batch_matmul", "bmm_i8_i32", [Ai, Bi], (Ai.astype(np.int64) @ Bi).astype(np.int32), 'out_dtype="int32"')
    case("nn.batch_matmul", "bmm_i32", [Ai.astype(np.int32), Bi.astype(np.int32)],
         (Ai.astype(np.int64) @ Bi).astype(np.int32))


# ---------------------------------------------------------------- per-channel ops, normalisations

def bshape(nd, axis, n):
    s = [1] * nd
    s[axis] = n
    return s


def gen_norms():
    comment("nn.bias_add / nn.prelu (per-channel along axis)")
    x = rf(2, 3, 2, 2)
    b = rf(3)
    case("nn.bias_add", "bias_add_nchw", [x, b], (x + b.reshape(1, 3, 1, 1)).astype(np.float32))
    x2, b2 = rf(2, 3, 4), rf(4)
    case("nn.bias_add", "bias_add_last", [x2, b2], (x2 + b2).astype(np.float32), "axis=-1")
    xi, bi = ri(2, 3, 2, dtype=np.int32), ri(3, dtype=np.int32)
    case("nn.bias_add", "bias_add_i32", [xi, bi], xi + bi.reshape(1, 3, 1))
    x8, b8 = ri(2, 2, lo=100, hi=127, dtype=np.int8), np.array([100, 27], dtype=np.int8)
    case("nn.bias_add", "bias_add_i8_wrap", [x8, b8], (x8.astype(np.int64) + b8).astype(np.int8))
    xh, bh = rf(2, 3, dtype=np.float16), rf(3, dtype=np.float16)
    case("nn.bias_add", "bias_add_f16", [xh, bh], (xh.astype(np.float64) + bh).astype(np.float16), "", F16)

    al = rf(3)
    case("nn.prelu", "prelu_nchw", [x, al], np.where(x > 0, x, x * al.reshape(1, 3, 1, 1)).astype(np.float32))
    xn, an = rf(1, 2, 2, 3), rf(3)
    case("nn.prelu", "prelu_nhwc", [xn, an], np.where(xn > 0, xn, xn * an).astype(np.float32), "axis=3")
    xp, ap = ri(2, 3, dtype=np.int32), ri(3, lo=1, hi=4, dtype=np.int32)
    case("nn.prelu", "prelu_i32", [xp, ap], np.where(xp > 0, xp, xp * ap).astype(np.int32))

    comment("nn.batch_norm: (x - mean) / sqrt(var + eps) * gamma + beta; result (out, moving_mean, moving_var)")
    for name, shape, axis, attrs, dt, tol in [
        ("bn_nchw", (2, 3, 2, 2), 1, "", np.float32, ""),
        ("bn_nhwc_nocenter", (1, 2, 2, 4), 3, "axis=3, epsilon=0.001f, center=False", np.float32, ""),
        ("bn_noscale", (2, 5), 1, "axis=-1, scale=False", np.float32, ""),
        ("bn_f16", (2, 3, 2), 1, "", np.float16, F16),
        ("bn_f64", (3, 2, 2), 1, "axis=1, epsilon=0.5f", np.float64, ""),
    ]:
        x = rf(*shape, dtype=dt)
        C = shape[axis]
        g, be, mu = rf(C, dtype=dt), rf(C, dtype=dt), rf(C, dtype=dt)
        var = (rng.random(C) + 0.5).astype(dt)
        eps = 1e-3 if "0.001" in attrs else 0.5 if "0.5f" in attrs else 1e-5
        bs = bshape(len(shape), axis, C)
        y = (x.astype(np.float64) - mu.reshape(bs)) / np.sqrt(var.astype(np.float64).reshape(bs) + eps)
        if "scale=False" not in attrs:
            y = y * g.reshape(bs)
        if "center=False" not in attrs:
            y = y + be.reshape(bs)
        case("nn.batch_norm", name, [x, g, be, mu, var], [y.astype(dt), mu, var], attrs, tol)

    def norm_ref(x, red, gamma, beta, axis, eps, center=True, scale=True):
        xd = x.astype(np.float64)
        mean = xd.mean(axis=red, keepdims=True)
        var = ((xd - mean) ** 2).mean(axis=red, keepdims=True)
        y = (xd - mean) / np.sqrt(var + eps)
        bs = bshape(x.ndim, axis, x.shape[axis])
        if scale:
            y = y * gamma.reshape(bs)
        if center:
            y = y + beta.reshape(bs)
        return y.astype(x.dtype)

    comment("nn.layer_norm (over axis)")
    x = rf(2, 3, 5)
    g, be = rf(5), rf(5)
    case("nn.layer_norm", "ln_last", [x, g, be], norm_ref(x, (2,), g, be, 2, 1e-5))
    g1, b1 = rf(3), rf(3)
    case("nn.layer_norm", "ln_axis1", [x, g1, b1], norm_ref(x, (1,), g1, b1, 1, 1e-2, center=False),
         "axis=1, epsilon=0.01f, center=False")
    case("nn.layer_norm", "ln_noscale", [x, g, be], norm_ref(x, (2,), g, be, 2, 1e-5, scale=False), "scale=False")
    xd = rf(2, 4, dtype=np.float64)
    gd, bd = rf(4, dtype=np.float64), rf(4, dtype=np.float64)
    case("nn.layer_norm", "ln_f64", [xd, gd, bd], norm_ref(xd, (1,), gd, bd, 1, 1e-5))
    xh = rf(2, 4, dtype=np.float16)
    gh, bh = rf(4, dtype=np.float16), rf(4, dtype=np.float16)
    case("nn.layer_norm", "ln_f16", [xh, gh, bh], norm_ref(xh, (1,), gh, bh, 1, 1e-5), "", F16)

    comment("nn.group_norm: over the channels of a group and every axis after the channel axis")

    def gn_ref(x, G, axis, gamma, beta, eps):
        xd = x.astype(np.float64)
        shp = list(x.shape)
        C = shp[axis]
        new = shp[:axis] + [G, C // G] + shp[axis + 1:]
        xr = xd.reshape(new)
        red = tuple(range(axis + 1, len(new)))
        mean = xr.mean(axis=red, keepdims=True)
        var = ((xr - mean) ** 2).mean(axis=red, keepdims=True)
        y = ((xr - mean) / np.sqrt(var + eps)).reshape(shp)
        bs = bshape(x.ndim, axis, C)
        return (y * gamma.reshape(bs) + beta.reshape(bs)).astype(x.dtype)

    x = rf(2, 6, 2, 2)
    g, be = rf(6), rf(6)
    case("nn.group_norm", "gn_g3", [x, g, be], gn_ref(x, 3, 1, g, be, 1e-5), "num_groups=3")
    case("nn.group_norm", "gn_g2", [x, g, be], gn_ref(x, 2, 1, g, be, 1e-5), "num_groups=2, axis=1")
    case("nn.group_norm", "gn_g1", [x, g, be], gn_ref(x, 1, 1, g, be, 1e-5), "num_groups=1")
    xn = rf(2, 2, 3, 4)
    g4, b4 = rf(4), rf(4)
    case("nn.group_norm", "gn_last_axis", [xn, g4, b4], gn_ref(xn, 2, 3, g4, b4, 1e-5), "num_groups=2, axis=-1")

    comment("nn.instance_norm: over every axis but 0 and axis")
    x = rf(2, 3, 2, 3)
    g, be = rf(3), rf(3)
    case("nn.instance_norm", "in_nchw", [x, g, be], norm_ref(x, (2, 3), g, be, 1, 1e-5))
    xn = rf(2, 2, 3, 3)
    case("nn.instance_norm", "in_nhwc", [xn, g, be], norm_ref(xn, (1, 2), g, be, 3, 1e-3),
         "axis=3, epsilon=0.001f")
    x3 = rf(2, 3, 5)
    case("nn.instance_norm", "in_3d", [x3, g, be], norm_ref(x3, (2,), g, be, 1, 1e-5, center=False), "center=False")

    comment("nn.l2_normalize: x / sqrt(max(sum(x^2 over axis), eps))")
    x = rf(2, 3, 2, 2)
    xd = x.astype(np.float64)
    ss = (xd * xd).sum(axis=1, keepdims=True)
    case("nn.l2_normalize", "l2_axis1", [x], (xd / np.sqrt(np.maximum(ss, 1e-10))).astype(np.float32),
         "eps=1e-10f, axis=[1]")
    ss = (xd * xd).sum(axis=(1, 3), keepdims=True)
    case("nn.l2_normalize", "l2_axes", [x], (xd / np.sqrt(np.maximum(ss, 1e-10))).astype(np.float32),
         "eps=1e-10f, axis=[1, -1]")
    ss = (xd * xd).sum(axis=1, keepdims=True)
    case("nn.l2_normalize", "l2_eps", [x], (xd / np.sqrt(np.maximum(ss, 4.0))).astype(np.float32),
         "eps=4f, axis=[1]")

    comment("nn.lrn: x / (bias + alpha * sum(x^2 over the window) / size)^beta")

    def lrn_ref(x, size, axis, bias, alpha, beta):
        xd = x.astype(np.float64)
        sq = np.zeros_like(xd)
        C = x.shape[axis]
        for ch in range(C):
            lo, hi = ch - size // 2, ch - size // 2 + size
            idx = [j for j in range(lo, hi) if 0 <= j < C]
            sl = [slice(None)] * x.ndim
            sl[axis] = idx
            dst = [slice(None)] * x.ndim
            dst[axis] = slice(ch, ch + 1)
            sq[tuple(dst)] = (xd[tuple(sl)] ** 2).sum(axis=axis, keepdims=True)
        return (xd / (bias + alpha * sq / size) ** beta).astype(x.dtype)

    x = rf(1, 7, 2, 2)
    case("nn.lrn", "lrn_default", [x], lrn_ref(x, 5, 1, 2.0, 1e-4, 0.75))
    case("nn.lrn", "lrn_big_alpha", [x], lrn_ref(x, 3, 1, 1.0, 0.5, 0.75), "size=3, bias=1f, alpha=0.5f, beta=0.75f")
    xn = rf(1, 2, 2, 6)
    case("nn.lrn", "lrn_nhwc", [xn], lrn_ref(xn, 3, 3, 2.0, 0.3, 0.5), "size=3, axis=3, alpha=0.3f, beta=0.5f")
    case("nn.lrn", "lrn_even", [x], lrn_ref(x, 4, 1, 1.0, 0.4, 1.0), "size=4, bias=1f, alpha=0.4f, beta=1f")

    comment("nn.softmax / nn.log_softmax / nn.fast_softmax (stable: x - max)")

    def sm(x, axis, log=False):
        xd = x.astype(np.float64)
        m = xd.max(axis=axis, keepdims=True)
        e = np.exp(xd - m)
        s = e.sum(axis=axis, keepdims=True)
        return ((xd - m - np.log(s)) if log else e / s).astype(x.dtype)

    x = rf(2, 3, 4)
    big = (rf(2, 5) * 10 + 1000).astype(np.float32)
    for op, log in [("nn.softmax", False), ("nn.log_softmax", True), ("nn.fast_softmax", False)]:
        short = op[3:]
        case(op, f"{short}_last", [x], sm(x, -1, log))
        case(op, f"{short}_axis1", [x], sm(x, 1, log), "axis=1")
        case(op, f"{short}_big", [big], sm(big, -1, log), "", " | rtol=1e-5, atol=1e-5" if log else "")
    xh = rf(3, 4, dtype=np.float16)
    case("nn.softmax", "softmax_f16", [xh], sm(xh, -1), "", F16)
    xd = rf(2, 3, dtype=np.float64)
    case("nn.softmax", "softmax_f64", [xd], sm(xd, 0), "axis=0")
    case("nn.log_softmax", "log_softmax_f64", [xd], sm(xd, -1, True), "axis=-1")

    comment("nn.dropout (inference): (data, ones)")
    x = rf(2, 3)
    case("nn.dropout", "dropout_f32", [x], [x, np.ones_like(x)], "rate=0.3f")
    xi = ri(4, dtype=np.int32)
    case("nn.dropout", "dropout_i32", [xi], [xi, np.ones_like(xi)])


# ---------------------------------------------------------------- pooling

def pool_ref(x, kind, k, s, d, pb, pa, ceil, cip=False):
    """x canonical [N, C, *S]. Window taps y*s - pad_before + j*d; max pads
    with the dtype's lowest value; avg divides by the taps inside the input
    (count_include_pad=False, at least 1) or inside the padded input."""
    n = len(k)
    S = x.shape[2:]
    osz = []
    for i in range(n):
        num = S[i] + pb[i] + pa[i] - ((k[i] - 1) * d[i] + 1)
        if ceil:
            num += s[i] - 1
        osz.append(num // s[i] + 1)
    isint = x.dtype.kind in "iub"
    out = np.zeros(x.shape[:2] + tuple(osz), dtype=x.dtype)
    for pos in itertools.product(*[range(v) for v in osz]):
        taps = [[pos[i] * s[i] - pb[i] + j * d[i] for j in range(k[i])] for i in range(n)]
        valid = [[p for p in taps[i] if 0 <= p < S[i]] for i in range(n)]
        empty = any(len(v) == 0 for v in valid)
        for b in range(x.shape[0]):
            for ch in range(x.shape[1]):
                vals = [] if empty else x[b, ch][np.ix_(*valid)].ravel().tolist()
                if kind == "max":
                    m = max(vals) if vals else lowest(x.dtype)
                    out[(b, ch) + pos] = m
                else:
                    if cip:
                        cnt = 1
                        for i in range(n):
                            cnt *= len([p for p in taps[i] if p <= S[i] + pa[i] - 1])
                    else:
                        cnt = max(1, int(np.prod([len(v) for v in valid])))
                    if isint:
                        tot = int(sum(int(v) for v in vals))
                        out[(b, ch) + pos] = trunc_div(tot, cnt)
                    else:
                        out[(b, ch) + pos] = math.fsum(float(v) for v in vals) / cnt
    return out


def pool_case(name, op, x, k, s, d, pb, pa, ceil, cip, attrs, layout=None, primal=None, tol=""):
    kind = "max" if "max" in op else "avg"
    ref = pool_ref(x, kind, k, s, d, pb, pa, ceil, cip)
    if layout:
        full = attrs + (", " if attrs else "") + f'layout="{layout}"'
        case(op, name, [lay(x, primal, layout)], lay(ref, primal, layout), full, tol)
    else:
        case(op, name, [x], ref, attrs, tol)


def adaptive_ref(x, kind, osz):
    n = len(osz)
    S = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(osz), dtype=x.dtype)
    isint = x.dtype.kind in "iub"
    for pos in itertools.product(*[range(v) for v in osz]):
        sl = []
        cnt = 1
        for i in range(n):
            start = (pos[i] * S[i]) // osz[i]
            end = -((-(pos[i] + 1) * S[i]) // osz[i])
            sl.append(slice(start, end))
            cnt *= end - start
        win = x[(slice(None), slice(None)) + tuple(sl)]
        red = tuple(range(2, 2 + n))
        if kind == "max":
            out[(slice(None), slice(None)) + pos] = win.max(axis=red)
        elif isint:
            tot = win.astype(np.int64).sum(axis=red)
            out[(slice(None), slice(None)) + pos] = np.vectorize(lambda t: trunc_div(t, cnt))(tot)
        else:
            out[(slice(None), slice(None)) + pos] = win.astype(np.float64).sum(axis=red) / cnt
    return out


def gen_pools():
    comment("nn.max_pool2d / nn.avg_pool2d: padding, ceil_mode, count_include_pad, dilation, layouts")
    x = rf(1, 2, 6, 6)
    xneg = -np.abs(rf(1, 2, 5, 5)) - 1  # all negative: padding must not win a max
    pool_case("maxpool2d_basic", "nn.max_pool2d", x, [3, 3], [2, 2], [1, 1], [0, 0], [0, 0], False, False,
              "pool_size=[3, 3], strides=[2, 2]")
    pool_case("maxpool2d_pad_neg", "nn.max_pool2d", xneg, [3, 3], [1, 1], [1, 1], [1, 1], [1, 1], False, False,
              "pool_size=[3, 3], padding=[1, 1]")
    pool_case("maxpool2d_ceil", "nn.max_pool2d", x, [3, 3], [2, 2], [1, 1], [0, 0], [0, 0], True, False,
              "pool_size=[3, 3], strides=[2, 2], ceil_mode=True")
    pool_case("maxpool2d_ceil_pad", "nn.max_pool2d", xneg, [2, 2], [2, 2], [1, 1], [1, 0], [0, 1], True, False,
              "pool_size=[2, 2], strides=[2, 2], padding=[1, 0, 0, 1], ceil_mode=True")
    pool_case("maxpool2d_dil", "nn.max_pool2d", x, [2, 2], [1, 2], [2, 2], [0, 1], [1, 0], False, False,
              "pool_size=[2, 2], strides=[1, 2], dilation=[2, 2], padding=[0, 1, 1, 0]")
    pool_case("maxpool2d_nhwc", "nn.max_pool2d", x, [2, 3], [2, 1], [1, 1], [1, 0], [1, 0], False, False,
              "pool_size=[2, 3], strides=[2, 1], padding=[1, 0]", layout="NHWC", primal="NCHW")
    # A split layout: NCHW4c is [N, C, H, W, c]; only H and W pool.
    xs = rf(1, 1, 5, 5, 4)
    ref = np.moveaxis(pool_ref(np.moveaxis(xs, 4, 2).reshape(1, 4, 5, 5), "max", [2, 2], [2, 2], [1, 1], [0, 0],
                               [0, 0], False), 1, 3).reshape(1, 1, 2, 2, 4)
    case("nn.max_pool2d", "maxpool2d_nchw4c", [xs], ref, 'pool_size=[2, 2], strides=[2, 2], layout="NCHW4c"')
    xi8 = ri(1, 2, 4, 4, lo=-128, hi=-100, dtype=np.int8)
    pool_case("maxpool2d_i8_pad", "nn.max_pool2d", xi8, [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, False,
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]")
    pool_case("maxpool2d_u8", "nn.max_pool2d", ri(1, 1, 4, 4, lo=0, hi=255, dtype=np.uint8), [2, 2], [2, 2], [1, 1],
              [0, 0], [0, 0], False, False, "pool_size=[2, 2], strides=[2, 2]")
    pool_case("maxpool2d_f16", "nn.max_pool2d", rf(1, 2, 4, 4, dtype=np.float16), [2, 2], [1, 1], [1, 1], [0, 0],
              [0, 0], False, False, "pool_size=[2, 2]")

    pool_case("avgpool2d_basic", "nn.avg_pool2d", x, [2, 2], [2, 2], [1, 1], [0, 0], [0, 0], False, False,
              "pool_size=[2, 2], strides=[2, 2]")
    pool_case("avgpool2d_pad_excl", "nn.avg_pool2d", x, [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, False,
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]")
    pool_case("avgpool2d_pad_incl", "nn.avg_pool2d", x, [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, True,
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True")
    # ceil_mode windows past the padded input: count_include_pad counts only up to in + pad_after - 1.
    pool_case("avgpool2d_ceil_incl", "nn.avg_pool2d", rf(1, 1, 6, 6), [2, 2], [2, 2], [1, 1], [1, 1], [0, 0], True,
              True, "pool_size=[2, 2], strides=[2, 2], padding=[1, 1, 0, 0], ceil_mode=True, count_include_pad=True")
    pool_case("avgpool2d_ceil_excl", "nn.avg_pool2d", rf(1, 1, 6, 6), [3, 3], [2, 2], [1, 1], [0, 0], [0, 0], True,
              False, "pool_size=[3, 3], strides=[2, 2], ceil_mode=True")
    pool_case("avgpool2d_dil_pad", "nn.avg_pool2d", x, [2, 2], [1, 1], [2, 2], [1, 1], [1, 1], False, False,
              "pool_size=[2, 2], dilation=[2, 2], padding=[1, 1]")
    pool_case("avgpool2d_dil_incl", "nn.avg_pool2d", x, [2, 2], [2, 2], [2, 2], [1, 1], [1, 1], False, True,
              "pool_size=[2, 2], strides=[2, 2], dilation=[2, 2], padding=[1, 1], count_include_pad=True")
    pool_case("avgpool2d_nhwc", "nn.avg_pool2d", x, [3, 3], [1, 1], [1, 1], [1, 1], [1, 1], False, False,
              "pool_size=[3, 3], padding=[1, 1]", layout="NHWC", primal="NCHW")
    xi = ri(1, 2, 5, 5, lo=-9, hi=10, dtype=np.int32)
    pool_case("avgpool2d_i32_trunc", "nn.avg_pool2d", xi, [2, 2], [1, 1], [1, 1], [1, 1], [0, 0], False, False,
              "pool_size=[2, 2], padding=[1, 1, 0, 0]")
    pool_case("avgpool2d_i32_incl", "nn.avg_pool2d", xi, [3, 3], [2, 2], [1, 1], [1, 1], [1, 1], False, True,
              "pool_size=[3, 3], strides=[2, 2], padding=[1, 1], count_include_pad=True")
    pool_case("avgpool2d_f64", "nn.avg_pool2d", rf(1, 2, 4, 4, dtype=np.float64), [2, 2], [2, 2], [1, 1], [0, 0],
              [0, 0], False, False, "pool_size=[2, 2], strides=[2, 2]")

    comment("nn.{max,avg}_pool1d / 3d")
    x1 = rf(2, 2, 8)
    pool_case("maxpool1d_basic", "nn.max_pool1d", x1, [3], [2], [1], [1], [1], False, False,
              "pool_size=[3], strides=[2], padding=[1]")
    pool_case("maxpool1d_ceil_dil", "nn.max_pool1d", x1, [2], [3], [2], [0], [1], True, False,
              "pool_size=[2], strides=[3], dilation=[2], padding=[0, 1], ceil_mode=True")
    pool_case("maxpool1d_nwc", "nn.max_pool1d", x1, [2], [2], [1], [0], [0], False, False,
              "pool_size=[2], strides=[2]", layout="NWC", primal="NCW")
    pool_case("avgpool1d_excl", "nn.avg_pool1d", x1, [3], [2], [1], [1], [1], False, False,
              "pool_size=[3], strides=[2], padding=[1]")
    pool_case("avgpool1d_incl", "nn.avg_pool1d", x1, [3], [2], [1], [1], [2], False, True,
              "pool_size=[3], strides=[2], padding=[1, 2], count_include_pad=True")
    pool_case("avgpool1d_i16", "nn.avg_pool1d", ri(1, 2, 7, lo=-20, hi=20, dtype=np.int16), [3], [2], [1], [1], [1],
              False, False, "pool_size=[3], strides=[2], padding=[1]")
    x3 = rf(1, 2, 4, 4, 4)
    pool_case("maxpool3d_basic", "nn.max_pool3d", x3, [2, 2, 2], [2, 2, 2], [1, 1, 1], [0, 0, 0], [0, 0, 0], False,
              False, "pool_size=[2, 2, 2], strides=[2, 2, 2]")
    pool_case("maxpool3d_pad_ceil", "nn.max_pool3d", x3, [3, 2, 2], [2, 2, 1], [1, 1, 1], [1, 0, 0], [1, 1, 0], True,
              False, "pool_size=[3, 2, 2], strides=[2, 2, 1], padding=[1, 0, 0, 1, 1, 0], ceil_mode=True")
    pool_case("avgpool3d_incl", "nn.avg_pool3d", x3, [2, 2, 2], [2, 2, 2], [1, 1, 1], [1, 1, 1], [1, 1, 1], False,
              True, "pool_size=[2, 2, 2], strides=[2, 2, 2], padding=[1], count_include_pad=True")
    pool_case("avgpool3d_ndhwc", "nn.avg_pool3d", x3, [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1], [1, 1, 1], False,
              False, "pool_size=[3, 3, 3], padding=[1, 1, 1]", layout="NDHWC", primal="NCDHW")

    comment("nn.global_{avg,max}_pool2d")
    x = rf(2, 3, 3, 4)
    case("nn.global_avg_pool2d", "gavg_nchw", [x], x.astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(np.float32))
    case("nn.global_max_pool2d", "gmax_nchw", [x], x.max(axis=(2, 3), keepdims=True))
    xn = lay(x, "NCHW", "NHWC")
    case("nn.global_avg_pool2d", "gavg_nhwc", [xn],
         xn.astype(np.float64).mean(axis=(1, 2), keepdims=True).astype(np.float32), 'layout="NHWC"')
    case("nn.global_max_pool2d", "gmax_nhwc", [xn], xn.max(axis=(1, 2), keepdims=True), 'layout="NHWC"')
    xi = ri(1, 2, 3, 3, lo=-9, hi=10)
    case("nn.global_avg_pool2d", "gavg_i32", [xi], adaptive_ref(xi, "avg", [1, 1]))
    case("nn.global_max_pool2d", "gmax_i8", [xi.astype(np.int8)], xi.astype(np.int8).max(axis=(2, 3), keepdims=True))

    comment("nn.adaptive_{avg,max}_pool{1,2,3}d: window [floor(o*in/out), ceil((o+1)*in/out))")
    x = rf(1, 2, 5, 6)
    for kind in ("avg", "max"):
        op = f"nn.adaptive_{kind}_pool2d"
        case(op, f"adapt{kind}2d_3x4", [x], adaptive_ref(x, kind, [3, 4]), "output_size=[3, 4]")
        case(op, f"adapt{kind}2d_one", [x], adaptive_ref(x, kind, [2, 2]), "output_size=[2]")
        case(op, f"adapt{kind}2d_up", [x], adaptive_ref(x, kind, [7, 8]), "output_size=[7, 8]")
        case(op, f"adapt{kind}2d_nhwc", [lay(x, "NCHW", "NHWC")], lay(adaptive_ref(x, kind, [2, 4]), "NCHW", "NHWC"),
             'output_size=[2, 4], layout="NHWC"')
        case(op, f"adapt{kind}2d_keep", [x], adaptive_ref(x, kind, [5, 6]), "output_size=None")
        x1 = rf(2, 3, 7)
        case(f"nn.adaptive_{kind}_pool1d", f"adapt{kind}1d", [x1], adaptive_ref(x1, kind, [3]), "output_size=[3]")
        case(f"nn.adaptive_{kind}_pool1d", f"adapt{kind}1d_nwc", [lay(x1, "NCW", "NWC")],
             lay(adaptive_ref(x1, kind, [4]), "NCW", "NWC"), 'output_size=[4], layout="NWC"')
        x3 = rf(1, 2, 3, 4, 5)
        case(f"nn.adaptive_{kind}_pool3d", f"adapt{kind}3d", [x3], adaptive_ref(x3, kind, [2, 3, 2]),
             "output_size=[2, 3, 2]")
        case(f"nn.adaptive_{kind}_pool3d", f"adapt{kind}3d_ndhwc", [lay(x3, "NCDHW", "NDHWC")],
             lay(adaptive_ref(x3, kind, [1, 2, 3]), "NCDHW", "NDHWC"), 'output_size=[1, 2, 3], layout="NDHWC"')
    xi = ri(1, 2, 5, 5, lo=-9, hi=10)
    case("nn.adaptive_avg_pool2d", "adaptavg2d_i32", [xi], adaptive_ref(xi, "avg", [3, 2]), "output_size=[3, 2]")
    case("nn.adaptive_max_pool2d", "adaptmax2d_i32", [xi], adaptive_ref(xi, "max", [3, 2]), "output_size=[3, 2]")


# ---------------------------------------------------------------- pad, batch_flatten, dilate

def pad_ref(x, widths, mode, value):
    """Index o of an axis reads x[o - before]; outside: value, the nearest
    edge, or the reflection (no edge repeat)."""
    out_shape = [x.shape[i] + b + a for i, (b, a) in enumerate(widths)]
    out = np.empty(out_shape, dtype=x.dtype)
    for pos in itertools.product(*[range(v) for v in out_shape]):
        src = []
        inside = True
        for i, (b, _) in enumerate(widths):
            v, n = pos[i] - b, x.shape[i]
            if not 0 <= v < n:
                if mode == "constant":
                    inside = False
                elif mode == "edge":
                    v = min(max(v, 0), n - 1)
                else:
                    v = -v if v < 0 else 2 * (n - 1) - v
            src.append(v)
        out[pos] = x[tuple(src)] if inside else value
    return out


def gen_pad():
    comment("nn.pad (constant/edge/reflect, negative widths crop) and dyn.nn.pad (widths as a tensor)")
    x = rf(3, 4)
    pv = np.array(1.5, dtype=np.float32)
    case("nn.pad", "pad_const", [x, pv], pad_ref(x, [(1, 2), (0, 1)], "constant", 1.5),
         "pad_width=[[1, 2], [0, 1]]")
    case("nn.pad", "pad_edge", [x, pv], pad_ref(x, [(2, 1), (1, 2)], "edge", 0), 'pad_width=[[2, 1], [1, 2]], pad_mode="edge"')
    case("nn.pad", "pad_reflect", [x, pv], pad_ref(x, [(2, 1), (3, 2)], "reflect", 0),
         'pad_width=[[2, 1], [3, 2]], pad_mode="reflect"')
    # Cropping: [-1, 1] drops the first row and adds one; [2, -2] adds two columns and drops the last two.
    crop = np.full((3, 4), 1.5, dtype=np.float32)
    crop[0:2, 2:4] = x[1:3, 0:2]
    assert (crop == pad_ref(x, [(-1, 1), (2, -2)], "constant", 1.5)).all()
    case("nn.pad", "pad_crop", [x, pv], crop, "pad_width=[[-1, 1], [2, -2]]")
    x4 = rf(1, 2, 3, 3)
    case("nn.pad", "pad_nchw", [x4, np.array(0, dtype=np.float32)],
         pad_ref(x4, [(0, 0), (0, 0), (1, 1), (2, 0)], "constant", 0.0),
         "pad_width=[[0, 0], [0, 0], [1, 1], [2, 0]]")
    case("nn.pad", "pad_reflect4", [x4, np.array(0, dtype=np.float32)],
         pad_ref(x4, [(0, 0), (1, 0), (2, 2), (1, 2)], "reflect", 0.0),
         'pad_width=[[0, 0], [1, 0], [2, 2], [1, 2]], pad_mode="reflect"')
    xi = ri(2, 3, dtype=np.int32)
    case("nn.pad", "pad_i32_fvalue", [xi, np.array(-2.7, dtype=np.float32)],
         pad_ref(xi, [(1, 1), (1, 0)], "constant", -2), "pad_width=[[1, 1], [1, 0]]")
    case("nn.pad", "pad_i8_edge", [xi.astype(np.int8), np.array(0, dtype=np.int8)],
         pad_ref(xi.astype(np.int8), [(0, 2), (2, 1)], "edge", 0), 'pad_width=[[0, 2], [2, 1]], pad_mode="edge"')
    xb = rng.random((2, 2)) > 0.5
    case("nn.pad", "pad_bool", [xb, np.array(True)], pad_ref(xb, [(1, 0), (0, 1)], "constant", True),
         "pad_width=[[1, 0], [0, 1]]")
    xh = rf(3, dtype=np.float16)
    case("nn.pad", "pad_f16", [xh, np.array(0.25, dtype=np.float32)], pad_ref(xh, [(1, 1)], "constant", 0.25),
         "pad_width=[[1, 1]]")
    pw = np.array([[1, 0], [2, 1]], dtype=np.int64)
    case("dyn.nn.pad", "dynpad_const", [x, pw, pv], pad_ref(x, [(1, 0), (2, 1)], "constant", 1.5))
    case("dyn.nn.pad", "dynpad_reflect", [x, pw, pv], pad_ref(x, [(1, 0), (2, 1)], "reflect", 0),
         'pad_mode="reflect"')
    pw32 = np.array([[0, 1], [1, 1], [2, 0]], dtype=np.int32)
    x3 = ri(2, 2, 2)
    case("dyn.nn.pad", "dynpad_edge_i32", [x3, pw32, np.array(0, dtype=np.int32)],
         pad_ref(x3, [(0, 1), (1, 1), (2, 0)], "edge", 0), 'pad_mode="edge"')
    case("dyn.nn.pad", "dynpad_negative", [x, np.array([[-2, -2], [0, 0]], dtype=np.int64), pv],
         "error: negative size")

    comment("nn.batch_flatten")
    x = rf(2, 3, 4)
    case("nn.batch_flatten", "flatten_f32", [x], x.reshape(2, 12))
    xi = ri(2, 2, 2, 2, dtype=np.int8)
    case("nn.batch_flatten", "flatten_i8", [xi], xi.reshape(2, 8))
    xb = rng.random((3, 2)) > 0.5
    case("nn.batch_flatten", "flatten_bool", [xb], xb.reshape(3, 2))

    comment("nn.dilate: out[i*s] = x[i], dilation_value elsewhere")

    def dilate_ref(x, st, val):
        shp = [(d - 1) * s + 1 for d, s in zip(x.shape, st)]
        out = np.full(shp, val, dtype=x.dtype)
        out[tuple(slice(None, None, s) for s in st)] = x
        return out

    x = rf(3, 4)
    case("nn.dilate", "dilate_f32", [x], dilate_ref(x, [2, 3], 0.5), "strides=[2, 3], dilation_value=0.5f")
    xi = ri(2, 2, 3, dtype=np.int8)
    case("nn.dilate", "dilate_i8", [xi], dilate_ref(xi, [1, 2, 2], 0), "strides=[1, 2, 2]")
    x4 = rf(1, 2, 2, 2)
    case("nn.dilate", "dilate_nchw", [x4], dilate_ref(x4, [1, 1, 2, 2], 0.0), "strides=[1, 1, 2, 2]")


# ---------------------------------------------------------------- resize, upsampling

def r_inx(x, inn, out, ctm, start=0.0, end=0.0):
    """topi's get_inx: the input coordinate of output coordinate x."""
    scale = inn / out
    if ctm == "half_pixel":
        return (x + 0.5) * scale - 0.5
    if ctm == "align_corners":
        return (inn - 1) / (out - 1) * x if out > 1 else 0.0
    if ctm == "asymmetric":
        return scale * x
    if ctm == "pytorch_half_pixel":
        return (x + 0.5) * scale - 0.5 if out > 1 else 0.0
    if ctm == "tf_half_pixel_for_nn":
        return (x + 0.5) * scale
    assert ctm == "tf_crop_and_resize"
    if out > 1:
        return start * (inn - 1) + x * (end - start) * (inn - 1) / (out - 1)
    return 0.5 * (start + end) * (inn - 1)


def r_round(v, rounding):
    """topi's get_closest_index; "round" rounds half away from zero."""
    if rounding == "round":
        return int(math.copysign(math.floor(abs(v) + 0.5), v))
    if rounding == "round_prefer_floor":
        return math.ceil(v - 0.5)
    if rounding == "round_prefer_ceil":
        return math.floor(v + 0.5)
    if rounding == "floor":
        return math.floor(v + 1e-5)
    assert rounding == "ceil"
    return math.ceil(v - 1e-5)


def cubic_w(t, a):
    """Cubic convolution weights of the taps floor-1 .. floor+2 at fraction t."""
    def k(s):
        s = abs(s)
        if s <= 1:
            return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
        if s < 2:
            return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
        return 0.0
    return [k(t + 1), k(t), k(1 - t), k(2 - t)]


def resize_ref(x, size, method, ctm, rounding="", alpha=-0.5, exclude=False, extrap=0.0, roi=None,
               int_div=False, out_dtype=None):
    """x canonical [N, C, *S]; the value interpolated in double, stored with
    a cast (float to int truncates toward zero)."""
    n = len(size)
    S = x.shape[2:]
    roi = roi or [0.0] * (2 * n)
    if rounding == "":
        rounding = "round" if ctm == "align_corners" else "floor"
    xd = x.astype(np.float64)
    out = np.zeros(x.shape[:2] + tuple(size), dtype=np.float64)
    for pos in itertools.product(*[range(v) for v in size]):
        inx = [r_inx(pos[i], S[i], size[i], ctm, roi[i], roi[n + i]) for i in range(n)]
        if ctm == "tf_crop_and_resize" and any(v < 0 or v > S[i] - 1 for i, v in enumerate(inx)):
            out[(slice(None), slice(None)) + pos] = extrap
            continue
        taps = []  # per dim: list of (index, weight)
        for i in range(n):
            if method == "nearest_neighbor":
                if int_div and ctm == "asymmetric" and size[i] % S[i] == 0:
                    j = pos[i] // (size[i] // S[i])
                else:
                    j = r_round(inx[i], rounding)
                taps.append([(j, 1.0)])
            elif method == "linear":
                f = math.floor(inx[i])
                t = inx[i] - f
                taps.append([(f, 1 - t), (f + 1, t)])
            else:
                f = math.floor(inx[i])
                w = cubic_w(inx[i] - f, alpha)
                idx = [f - 1, f, f + 1, f + 2]
                if exclude:
                    w = [0.0 if not 0 <= j < S[i] else wj for j, wj in zip(idx, w)]
                    s = sum(w)
                    w = [wj / s for wj in w]
                taps.append(list(zip(idx, w)))
        v = np.zeros(x.shape[:2])
        for combo in itertools.product(*taps):
            w = 1.0
            idx = []
            for i, (j, wj) in enumerate(combo):
                w *= wj
                idx.append(min(max(j, 0), S[i] - 1))
            v = v + w * xd[(slice(None), slice(None)) + tuple(idx)]
        out[(slice(None), slice(None)) + pos] = v
    odt = np.dtype(out_dtype) if out_dtype else x.dtype
    if odt.kind in "iu":
        out = np.trunc(out)
    return out.astype(odt)


def resize_attrs(size, n, method, ctm, rounding, extra=""):
    roi = "[" + ", ".join(["0f"] * (2 * n)) + "]"
    a = f'size={ilist(size)}, roi={roi}, method="{method}", coordinate_transformation_mode="{ctm}", ' \
        f'rounding_method="{rounding}"'
    return a + (", " + extra if extra else "")


def gen_resize():
    comment("image.resize2d: methods, coordinate_transformation_mode, rounding_method, cubic options")
    x = rf(1, 2, 4, 4)
    op = "image.resize2d"

    def r2(name, xin, size, method, ctm, rounding="", extra="", layout=None, tol="", **kw):
        ref = resize_ref(xin, size, method, ctm, rounding, int_div=True, **kw)
        attrs = resize_attrs(size, 2, method, ctm, rounding, extra)
        if layout:
            case(op, name, [lay(xin, "NCHW", layout)], lay(ref, "NCHW", layout), attrs + f', layout="{layout}"', tol)
        else:
            case(op, name, [xin], ref, attrs, tol)

    r2("resize2d_linear_hp", x, [6, 5], "linear", "half_pixel")
    r2("resize2d_linear_ac", x, [7, 3], "linear", "align_corners")
    r2("resize2d_linear_asym", x, [6, 6], "linear", "asymmetric")
    r2("resize2d_linear_down", x, [3, 2], "linear", "half_pixel")
    r2("resize2d_linear_pt1", x, [1, 3], "linear", "pytorch_half_pixel")
    r2("resize2d_nearest_asym", x, [8, 8], "nearest_neighbor", "asymmetric")
    r2("resize2d_nearest_asym_frac", x, [6, 7], "nearest_neighbor", "asymmetric")
    # Integer upscale, nearest, asymmetric: topi divides indices exactly, so "round" does not round 0.5 up.
    r2("resize2d_nearest_intdiv_round", x, [8, 8], "nearest_neighbor", "asymmetric", "round")
    r2("resize2d_nearest_round_frac", x, [6, 6], "nearest_neighbor", "asymmetric", "round")
    # align_corners 2 -> 3 hits x.5 exactly: "round" goes half away from zero.
    x2 = rf(1, 1, 2, 2)
    r2("resize2d_nearest_ac_ties", x2, [3, 5], "nearest_neighbor", "align_corners")
    r2("resize2d_nearest_ac_floor", x2, [3, 5], "nearest_neighbor", "align_corners", "floor")
    r2("resize2d_nearest_prefer_floor", x2, [3, 5], "nearest_neighbor", "align_corners", "round_prefer_floor")
    r2("resize2d_nearest_prefer_ceil", x2, [3, 5], "nearest_neighbor", "align_corners", "round_prefer_ceil")
    r2("resize2d_nearest_ceil", x, [6, 3], "nearest_neighbor", "half_pixel", "ceil")
    r2("resize2d_nearest_hp_round", x, [6, 3], "nearest_neighbor", "half_pixel", "round")
    r2("resize2d_nearest_tfnn", x, [6, 3], "nearest_neighbor", "tf_half_pixel_for_nn")
    r2("resize2d_cubic_hp", x, [6, 5], "cubic", "half_pixel")
    r2("resize2d_cubic_exclude", x, [7, 6], "cubic", "half_pixel", extra="cubic_alpha=-0.75f, cubic_exclude=1",
       alpha=-0.75, exclude=True)
    r2("resize2d_cubic_ac", x, [5, 3], "cubic", "align_corners")
    r2("resize2d_nhwc", x, [6, 5], "linear", "half_pixel", layout="NHWC")
    # tf_crop_and_resize: roi = [start_h, start_w, end_h, end_w], extrapolation outside.
    roi = [0.1, -0.2, 0.9, 1.3]
    ref = resize_ref(x, [5, 6], "linear", "tf_crop_and_resize", roi=roi, extrap=-7.0)
    case(op, "resize2d_crop", [x], ref,
         'size=[5, 6], roi=[0.1f, -0.2f, 0.9f, 1.3f], method="linear", coordinate_transformation_mode='
         '"tf_crop_and_resize", rounding_method="", extrapolation_value=-7f')
    xu = ri(1, 2, 3, 3, lo=0, hi=255, dtype=np.uint8)
    case(op, "resize2d_u8_to_f32", [xu], resize_ref(xu, [5, 4], "linear", "half_pixel", out_dtype="float32"),
         resize_attrs([5, 4], 2, "linear", "half_pixel", "", 'out_dtype="float32"'))
    xi = ri(1, 1, 3, 3, lo=-50, hi=50, dtype=np.int32)
    case(op, "resize2d_i32_linear", [xi], resize_ref(xi, [5, 4], "linear", "align_corners"),
         resize_attrs([5, 4], 2, "linear", "align_corners", ""))
    case(op, "resize2d_i8_nearest", [xi.astype(np.int8)],
         resize_ref(xi.astype(np.int8), [6, 6], "nearest_neighbor", "asymmetric", int_div=True),
         resize_attrs([6, 6], 2, "nearest_neighbor", "asymmetric", ""))
    xh = rf(1, 1, 3, 3, dtype=np.float16)
    case(op, "resize2d_f16", [xh], resize_ref(xh, [4, 5], "linear", "half_pixel"),
         resize_attrs([4, 5], 2, "linear", "half_pixel", ""), F16)

    comment("image.resize1d / image.resize3d")
    x1 = rf(2, 2, 5)
    for name, size, method, ctm, rnd in [("resize1d_linear", [8], "linear", "half_pixel", ""),
                                         ("resize1d_nearest", [3], "nearest_neighbor", "asymmetric", ""),
                                         ("resize1d_nearest_ac", [9], "nearest_neighbor", "align_corners", ""),
                                         ("resize1d_cubic", [7], "cubic", "align_corners", "")]:
        case("image.resize1d", name, [x1], resize_ref(x1, size, method, ctm, rnd),
             resize_attrs(size, 1, method, ctm, rnd))
    case("image.resize1d", "resize1d_nwc", [lay(x1, "NCW", "NWC")],
         lay(resize_ref(x1, [4], "linear", "asymmetric"), "NCW", "NWC"),
         resize_attrs([4], 1, "linear", "asymmetric", "", 'layout="NWC"'))
    x3 = rf(1, 2, 3, 3, 4)
    for name, size, method, ctm in [("resize3d_linear", [4, 5, 3], "linear", "half_pixel"),
                                    ("resize3d_nearest", [6, 6, 8], "nearest_neighbor", "asymmetric"),
                                    ("resize3d_cubic", [4, 4, 5], "cubic", "align_corners")]:
        case("image.resize3d", name, [x3], resize_ref(x3, size, method, ctm), resize_attrs(size, 3, method, ctm, ""))
    case("image.resize3d", "resize3d_ndhwc", [lay(x3, "NCDHW", "NDHWC")],
         lay(resize_ref(x3, [2, 4, 3], "linear", "align_corners"), "NCDHW", "NDHWC"),
         resize_attrs([2, 4, 3], 3, "linear", "align_corners", "", 'layout="NDHWC"'))

    comment("dyn.image.resize2d (size [2] and roi [4] as tensors; no exact-division shortcut)")
    case("dyn.image.resize2d", "dynresize2d_linear", [x, np.array([6, 3], dtype=np.int64),
                                                      np.zeros(4, dtype=np.float32)],
         resize_ref(x, [6, 3], "linear", "half_pixel"),
         'method="linear", coordinate_transformation_mode="half_pixel", rounding_method=""')
    case("dyn.image.resize2d", "dynresize2d_nearest_round", [x, np.array([8, 8], dtype=np.int32),
                                                             np.zeros(4, dtype=np.float32)],
         resize_ref(x, [8, 8], "nearest_neighbor", "asymmetric", "round"),
         'method="nearest_neighbor", coordinate_transformation_mode="asymmetric", rounding_method="round"')
    case("dyn.image.resize2d", "dynresize2d_crop",
         [x, np.array([3, 4], dtype=np.int64), np.array([0.0, 0.25, 1.2, 0.75], dtype=np.float32)],
         resize_ref(x, [3, 4], "nearest_neighbor", "tf_crop_and_resize", "round",
                    roi=[0.0, 0.25, 1.2, 0.75], extrap=2.5),
         'method="nearest_neighbor", coordinate_transformation_mode="tf_crop_and_resize", rounding_method="round", '
         'extrapolation_value=2.5f')
    case("dyn.image.resize2d", "dynresize2d_nhwc", [lay(x, "NCHW", "NHWC"), np.array([3, 5], dtype=np.int64),
                                                    np.zeros(4, dtype=np.float32)],
         lay(resize_ref(x, [3, 5], "cubic", "half_pixel"), "NCHW", "NHWC"),
         'layout="NHWC", method="cubic", coordinate_transformation_mode="half_pixel", rounding_method=""')
    case("dyn.image.resize2d", "dynresize2d_negative", [x, np.array([-1, 3], dtype=np.int64),
                                                        np.zeros(4, dtype=np.float32)],
         "error: negative output size", 'method="linear"')

    comment("nn.upsampling / nn.upsampling3d: resize to round(dim*scale); align_corners or asymmetric")

    def up2(name, xin, sh, sw, method, ac, layout=None):
        H, W = xin.shape[2:]
        size = [int(np.round(H * sh)), int(np.round(W * sw))]
        m = {"nearest_neighbor": "nearest_neighbor", "bilinear": "linear", "bicubic": "cubic"}[method]
        ref = resize_ref(xin, size, m, "align_corners" if ac else "asymmetric", int_div=True)
        attrs = f'scale_h={fnum(sh)}, scale_w={fnum(sw)}, method="{method}", align_corners={ac}'
        if layout:
            case("nn.upsampling", name, [lay(xin, "NCHW", layout)], lay(ref, "NCHW", layout),
                 attrs + f', layout="{layout}"')
        else:
            case("nn.upsampling", name, [xin], ref, attrs)

    x = rf(1, 2, 3, 4)
    up2("upsampling_nearest2", x, 2, 2, "nearest_neighbor", False)
    up2("upsampling_nearest_frac", x, 1.5, 2.5, "nearest_neighbor", False)
    up2("upsampling_nearest_ac", x, 2, 3, "nearest_neighbor", True)
    up2("upsampling_bilinear", x, 2, 2, "bilinear", False)
    up2("upsampling_bilinear_ac", x, 2, 1.5, "bilinear", True)
    up2("upsampling_bicubic", x, 2, 2, "bicubic", False)
    up2("upsampling_nhwc", x, 2, 3, "nearest_neighbor", False, layout="NHWC")
    xi = ri(1, 1, 2, 3, dtype=np.int8)
    up2("upsampling_i8", xi, 3, 2, "nearest_neighbor", False)

    def up3(name, xin, sc, method, ctm, layout=None):
        size = [int(np.round(d * s)) for d, s in zip(xin.shape[2:], sc)]
        m = "linear" if method == "trilinear" else method
        ref = resize_ref(xin, size, m, ctm)
        attrs = f'scale_d={fnum(sc[0])}, scale_h={fnum(sc[1])}, scale_w={fnum(sc[2])}, method="{method}", ' \
                f'coordinate_transformation_mode="{ctm}"'
        if layout:
            case("nn.upsampling3d", name, [lay(xin, "NCDHW", layout)], lay(ref, "NCDHW", layout),
                 attrs + f', layout="{layout}"')
        else:
            case("nn.upsampling3d", name, [xin], ref, attrs)

    x3 = rf(1, 2, 2, 3, 2)
    up3("upsampling3d_nearest_hp", x3, [2, 2, 2], "nearest_neighbor", "half_pixel")
    up3("upsampling3d_nearest_asym", x3, [2, 1, 3], "nearest_neighbor", "asymmetric")
    up3("upsampling3d_trilinear_ac", x3, [2, 2, 1.5], "trilinear", "align_corners")
    up3("upsampling3d_trilinear_hp", x3, [1.5, 2, 2], "trilinear", "half_pixel", layout="NDHWC")

    comment("dyn.nn.upsampling / dyn.nn.upsampling3d (scales as scalars; sizes round half away from zero)")
    x = rf(1, 2, 3, 4)
    case("dyn.nn.upsampling", "dynup_nearest", [x, np.array(2.0, dtype=np.float32), np.array(1.5, dtype=np.float32)],
         resize_ref(x, [6, 6], "nearest_neighbor", "asymmetric"), 'method="nearest_neighbor"')
    case("dyn.nn.upsampling", "dynup_bilinear_ac",
         [x, np.array(1.5, dtype=np.float64), np.array(2.0, dtype=np.float64)],
         resize_ref(x, [5, 8], "linear", "align_corners"), 'method="bilinear", align_corners=True')
    case("dyn.nn.upsampling", "dynup_nhwc", [lay(x, "NCHW", "NHWC"), np.array(2.0, dtype=np.float32),
                                             np.array(0.5, dtype=np.float32)],
         lay(resize_ref(x, [6, 2], "nearest_neighbor", "asymmetric"), "NCHW", "NHWC"),
         'layout="NHWC", method="nearest_neighbor"')
    x3 = rf(1, 1, 2, 2, 3)
    case("dyn.nn.upsampling3d", "dynup3d_trilinear",
         [x3, np.array(2.0, dtype=np.float32), np.array(1.5, dtype=np.float32), np.array(1.0, dtype=np.float32)],
         resize_ref(x3, [4, 3, 3], "linear", "half_pixel"), 'method="trilinear"')
    case("dyn.nn.upsampling3d", "dynup3d_nearest",
         [x3, np.array(1.0, dtype=np.float32), np.array(2.0, dtype=np.float32), np.array(2.0, dtype=np.float32)],
         resize_ref(x3, [2, 4, 6], "nearest_neighbor", "asymmetric"),
         'method="nearest_neighbor", coordinate_transformation_mode="asymmetric"')


# ---------------------------------------------------------------- depth_to_space, space_to_depth

def gen_subpixel():
    comment("nn.depth_to_space (DCR, CRD) / nn.space_to_depth")

    def d2s(x, b, mode):
        N, C, H, W = x.shape
        if mode == "DCR":
            t = x.reshape(N, b, b, C // (b * b), H, W).transpose(0, 3, 4, 1, 5, 2)
        else:
            t = x.reshape(N, C // (b * b), b, b, H, W).transpose(0, 1, 4, 2, 5, 3)
        return t.reshape(N, C // (b * b), H * b, W * b)

    def s2d(x, b):
        N, C, H, W = x.shape
        x = x[:, :, :H // b * b, :W // b * b]
        t = x.reshape(N, C, H // b, b, W // b, b).transpose(0, 3, 5, 1, 2, 4)
        return t.reshape(N, C * b * b, H // b, W // b)

    x = rf(1, 8, 2, 3)
    case("nn.depth_to_space", "d2s_dcr", [x], d2s(x, 2, "DCR"), "block_size=2")
    case("nn.depth_to_space", "d2s_crd", [x], d2s(x, 2, "CRD"), 'block_size=2, mode="CRD"')
    case("nn.depth_to_space", "d2s_nhwc", [lay(x, "NCHW", "NHWC")], lay(d2s(x, 2, "DCR"), "NCHW", "NHWC"),
         'block_size=2, layout="NHWC"')
    xi = ri(2, 9, 2, 2, dtype=np.int32)
    case("nn.depth_to_space", "d2s_i32_crd", [xi], d2s(xi, 3, "CRD"), 'block_size=3, mode="CRD"')
    x = rf(1, 2, 4, 6)
    case("nn.space_to_depth", "s2d_basic", [x], s2d(x, 2), "block_size=2")
    xo = rf(1, 3, 5, 5)
    case("nn.space_to_depth", "s2d_floor", [xo], s2d(xo, 2), "block_size=2")
    case("nn.space_to_depth", "s2d_nhwc", [lay(x, "NCHW", "NHWC")], lay(s2d(x, 2), "NCHW", "NHWC"),
         'block_size=2, layout="NHWC"')
    xb = rng.random((1, 1, 4, 4)) > 0.5
    case("nn.space_to_depth", "s2d_bool", [xb], s2d(xb, 2), "block_size=2")


def main():
    os.makedirs(DATA, exist_ok=True)
    for f in os.listdir(DATA):
        if f.endswith(".npy"):
            os.remove(os.path.join(DATA, f))
    lines.append("# nn.txt: cases for the nn family's reference kernels (written by gen_nn.py; do not edit).")
    lines.append("# Format: see tests/unit/test_kernels.c. Paths are under tests/kernels/data/.")
    gen_conv()
    gen_dense()
    gen_norms()
    gen_pools()
    gen_pad()
    gen_resize()
    gen_subpixel()
    with open(os.path.join(HERE, "nn.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    ncases = sum(1 for l in lines if l and not l.startswith("#"))
    print(f"wrote {ncases} cases")


if __name__ == "__main__":
    main()
