#!/usr/bin/python3
"""Writes the ONNX models of tests/onnx/models that exercise the semantics of
older opsets: Softmax and LogSoftmax before opset 13 on an axis that is not
the last (the input seen as 2-D), Upsample (opsets 7 and 9) and Resize before
opset 11. Same layout as gen_models.py (NAME.onnx, NAME.in.npy, NAME.out.npy,
tested by onnx_test.sh); run with Debian's /usr/bin/python3. Expected outputs
are PyTorch's for the exported model and NumPy's (the operators' definitions)
for the onnx.helper ones.
"""
import os
import warnings

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "models")
torch.manual_seed(5)
warnings.filterwarnings("ignore")
rng = np.random.default_rng(9)


def save(name, graph, opset, x, y):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_legacy")
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    np.save(os.path.join(OUT, name + ".in.npy"), x)
    np.save(os.path.join(OUT, name + ".out.npy"), y.astype(np.float32))


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# Softmax (axis 1) and LogSoftmax (axis 0) of a (2, 3, 4) input at opset 11:
# over the 2-D views (2, 12) and (1, 24).
x = rng.standard_normal((2, 3, 4)).astype(np.float32)


def softmax2d(v, axis):
    m = v.reshape(int(np.prod(v.shape[:axis])), -1)
    e = np.exp(m - m.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(v.shape)


g = helper.make_graph(
    [helper.make_node("Softmax", ["input"], ["s"], axis=1),
     helper.make_node("LogSoftmax", ["input"], ["l"], axis=0),
     helper.make_node("Concat", ["s", "l"], ["output"], axis=0)],
    "softmax_opset11", [vi("input", [2, 3, 4])], [vi("output", [4, 3, 4])])
save("softmax_opset11", g, 11, x, np.concatenate([softmax2d(x, 1), np.log(softmax2d(x, 0))]))


# Upsample at opset 9 from torch (nearest, scale 2 and 3).
class Up(nn.Module):
    def forward(self, x):
        return nn.functional.interpolate(x, scale_factor=(2, 3), mode="nearest")


x = torch.randn(1, 2, 3, 4)
torch.onnx.export(Up(), (x,), os.path.join(OUT, "upsample_opset9.onnx"), input_names=["input"],
                  output_names=["output"], opset_version=9)
np.save(os.path.join(OUT, "upsample_opset9.in.npy"), x.numpy())
np.save(os.path.join(OUT, "upsample_opset9.out.npy"), Up()(x).numpy())


def bilinear_asymmetric(v, sh, sw):
    """ONNX's linear upsampling before opset 11: output (y, x) reads the
    input at (y / sh, x / sw), clamped at the last row and column."""
    n, c, h, w = v.shape
    oh, ow = int(np.floor(h * sh)), int(np.floor(w * sw))
    out = np.zeros((n, c, oh, ow), np.float64)
    for i in range(oh):
        fy = min(i / sh, h - 1)
        y0 = int(np.floor(fy))
        y1, dy = min(y0 + 1, h - 1), fy - y0
        for j in range(ow):
            fx = min(j / sw, w - 1)
            x0 = int(np.floor(fx))
            x1, dx = min(x0 + 1, w - 1), fx - x0
            out[:, :, i, j] = (v[:, :, y0, x0] * (1 - dy) * (1 - dx) + v[:, :, y0, x1] * (1 - dy) * dx +
                               v[:, :, y1, x0] * dy * (1 - dx) + v[:, :, y1, x1] * dy * dx)
    return out


def nearest_floor(v, sh, sw):
    n, c, h, w = v.shape
    oh, ow = int(np.floor(h * sh)), int(np.floor(w * sw))
    rows = np.minimum(np.floor(np.arange(oh) / sh).astype(int), h - 1)
    cols = np.minimum(np.floor(np.arange(ow) / sw).astype(int), w - 1)
    return v[:, :, rows][:, :, :, cols]


# Upsample at opset 7 (scales an attribute), linear; Resize at opset 10
# (scales an input), nearest with a fractional scale.
x = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
g = helper.make_graph([helper.make_node("Upsample", ["input"], ["output"], mode="linear", scales=[1.0, 1.0, 2.0, 1.5])],
                      "upsample_opset7", [vi("input", [1, 2, 3, 4])], [vi("output", [1, 2, 6, 6])])
save("upsample_opset7", g, 7, x, bilinear_asymmetric(x, 2.0, 1.5))
scales = numpy_helper.from_array(np.array([1, 1, 2.5, 1.75], np.float32), "scales")
g = helper.make_graph([helper.make_node("Resize", ["input", "scales"], ["output"], mode="nearest")],
                      "resize_opset10", [vi("input", [1, 2, 3, 4])], [vi("output", [1, 2, 7, 7])],
                      initializer=[scales])
save("resize_opset10", g, 10, x, nearest_floor(x, 2.5, 1.75))
