#!/usr/bin/python3
"""Writes the ONNX models of tests/onnx/ and their inputs and expected outputs.

Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx, python3-numpy)
from anywhere; the output is deterministic for a given torch version (fixed
seeds), and the files are committed, so the tests themselves need neither
torch nor onnx:

  models/NAME.onnx        the model (torch.onnx.export, or onnx.helper)
  models/NAME.in.npy      its input (every model here has one)
  models/NAME.out.npy     the expected output: PyTorch's, or NumPy's for the
                          onnx.helper models
  models/two_outputs.*    a model with two outputs (its input: .x.npy)

Models made to fail (tests/onnx/onnx_test.sh checks each error):
  bad_op.onnx (an operator relayc does not know), bad_opset.onnx (opset 19),
  truncated.onnx (half of mlp.onnx), external.onnx (weights in external.bin)
  and external_missing.onnx (its data file absent).
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
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(7)
torch.set_num_threads(1)
warnings.filterwarnings("ignore")


def export(name, model, x, opset=13):
    model.eval()
    with torch.no_grad():
        y = model(x)
    path = os.path.join(OUT, name + ".onnx")
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"], opset_version=opset,
                      do_constant_folding=True)
    np.save(os.path.join(OUT, name + ".in.npy"), x.numpy())
    np.save(os.path.join(OUT, name + ".out.npy"), y.numpy())


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 64)
        self.b = nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.b(torch.relu(self.a(x))), dim=-1)


class Block(nn.Module):
    """A ResNet basic block and a classifier head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn0 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.c1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)
        for bn in (self.bn0, self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.data.uniform_(0.5, 1.5)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn0(self.stem(x))))
        y = torch.relu(self.bn1(self.c1(x)))
        y = self.bn2(self.c2(y))
        x = torch.relu(x + y)
        x = torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


class Mobile(nn.Module):
    """Depthwise and pointwise convolutions, ReLU6 (Clip), HardSwish, average pooling."""

    def __init__(self):
        super().__init__()
        self.pw1 = nn.Conv2d(4, 16, 1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw2 = nn.Conv2d(16, 8, 1)
        self.avg = nn.AvgPool2d(2)

    def forward(self, x):
        x = nn.functional.relu6(self.pw1(x))
        x = nn.functional.hardswish(self.dw(x))
        return self.avg(self.pw2(x))


class Misc(nn.Module):
    """Shape operators and elementwise math: Transpose, Reshape, Concat,
    Unsqueeze/Squeeze, Gather, ReduceMean, Sigmoid, Tanh, Pow, Sqrt, Div, Erf
    (GELU), Where, Cast, MatMul."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 4) * 0.5)

    def forward(self, x):  # x: (2, 3, 6)
        t = x.transpose(1, 2)  # (2, 6, 3)
        r = t.reshape(2, 18)
        c = torch.cat([r, r * 2], dim=1)  # (2, 36)
        u = c.unsqueeze(1).squeeze(1)
        g = u[:, 3]  # Gather
        m = x.mean(dim=-1, keepdim=True)
        s = torch.sigmoid(x) + torch.tanh(x) * torch.pow(x, 2) / (torch.sqrt(x * x + 1))
        e = nn.functional.gelu(x)
        w = torch.where(x > 0, x, m)
        k = (x > 0.5).to(torch.float32)
        mm = torch.matmul(x, self.w)  # (2, 3, 4)
        return torch.cat([s.flatten(), e.flatten(), w.flatten(), k.flatten(), mm.flatten(), g.flatten(),
                          u.flatten()])


class Decoder(nn.Module):
    """ConvTranspose, Split (chunk), LayerNormalization (opset 17)."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.norm = nn.LayerNorm(8)

    def forward(self, x):  # x: (1, 6, 4, 4)
        a, b = torch.chunk(self.up(x), 2, dim=1)  # (1, 2, 8, 8) each
        return self.norm(a * torch.sigmoid(b))


export("mlp", Mlp(), torch.randn(4, 32))
export("block", Block(), torch.randn(1, 3, 32, 32))
export("mobile", Mobile(), torch.randn(1, 4, 8, 8), opset=14)
export("misc", Misc(), torch.randn(2, 3, 6))
export("mlp_opset11", Mlp(), torch.randn(2, 32), opset=11)
export("decoder", Decoder(), torch.randn(1, 6, 4, 4), opset=17)


class Upsample(nn.Module):
    """Resize: nearest (asymmetric, floor) by scales, and bilinear to a size."""

    def forward(self, x):  # x: (1, 3, 5, 7)
        a = nn.functional.interpolate(x, scale_factor=2, mode="nearest")
        b = nn.functional.interpolate(x, size=(10, 14), mode="bilinear", align_corners=False)
        c = nn.functional.interpolate(x, size=(9, 13), mode="bilinear", align_corners=True)
        return torch.cat([a.flatten(), b.flatten(), c.flatten()])


export("upsample", Upsample(), torch.randn(1, 3, 5, 7))


def save_helper(name, graph, opset, x=None, y=None):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_models")
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    if x is not None:
        np.save(os.path.join(OUT, name + ".in.npy"), x)
        np.save(os.path.join(OUT, name + ".out.npy"), y)


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


# Opset 7: Clip's bounds are attributes; Gemm with alpha, beta and transA.
rng = np.random.default_rng(3)
a = rng.standard_normal((5, 3)).astype(np.float32)
b = rng.standard_normal((5, 4)).astype(np.float32)
c = rng.standard_normal((4,)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Gemm", ["x", "b", "c"], ["g"], name="gemm", alpha=0.5, beta=2.0, transA=1),
     helper.make_node("Clip", ["g"], ["y"], name="clip", min=-1.0, max=1.5)],
    "opset7", [vi("x", [5, 3])], [vi("y", [3, 4])],
    initializer=[numpy_helper.from_array(b, "b"), numpy_helper.from_array(c, "c")])
save_helper("opset7", g, 7, a, np.clip(0.5 * a.T @ b + 2 * c, -1.0, 1.5).astype(np.float32))

# Two outputs, one named with characters a file name cannot keep: `relayc run
# --output DIR` writes DIR/relu_out_0.npy and DIR/neg.npy.
g = helper.make_graph([helper.make_node("Relu", ["x"], ["relu/out:0"]), helper.make_node("Neg", ["x"], ["neg"])],
                      "two", [vi("x", [3])], [vi("relu/out:0", [3]), vi("neg", [3])])
save_helper("two_outputs", g, 13)
np.save(os.path.join(OUT, "two_outputs.x.npy"), np.array([-1, 0, 2], dtype=np.float32))

# Graph inputs and initializers named like the importer's own let variables
# (%v0, %v1, ...): renamed, not shadowed (relu(v0) + v0, not relu(v0) twice).
x = np.array([[-1.5, 2.0, -0.25, 3.0]], dtype=np.float32)
w = np.array([0.5, -1.0, 2.0, 0.0], dtype=np.float32)
g = helper.make_graph(
    [helper.make_node("Relu", ["v0"], ["r"]), helper.make_node("Add", ["r", "v0"], ["s"]),
     helper.make_node("Mul", ["s", "v1"], ["y"])],
    "tmp_names", [vi("v0", [1, 4])], [vi("y", [1, 4])], initializer=[numpy_helper.from_array(w, "v1")])
save_helper("tmp_names", g, 13, x, ((np.maximum(x, 0) + x) * w).astype(np.float32))

# Failures.
g = helper.make_graph([helper.make_node("Det", ["x"], ["y"], name="the_det")],
                      "bad", [vi("x", [2, 2])], [vi("y", [])])
save_helper("bad_op", g, 13)
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "bad", [vi("x", [2])], [vi("y", [2])])
save_helper("bad_opset", g, 19)
with open(os.path.join(OUT, "mlp.onnx"), "rb") as f:
    data = f.read()
with open(os.path.join(OUT, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])

# External data: the weight of a MatMul in external.bin.
w = rng.standard_normal((3, 2)).astype(np.float32)
x = rng.standard_normal((4, 3)).astype(np.float32)
wt = numpy_helper.from_array(w, "w")
wt.ClearField("raw_data")
wt.data_location = TensorProto.EXTERNAL
for k, v in (("location", "external.bin"), ("offset", "16"), ("length", str(w.nbytes))):
    e = wt.external_data.add()
    e.key, e.value = k, v
with open(os.path.join(OUT, "external.bin"), "wb") as f:
    f.write(b"\0" * 16 + w.tobytes())
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "ext", [vi("x", [4, 3])],
                      [vi("y", [4, 2])], initializer=[wt])
save_helper("external", g, 13, x, (x @ w).astype(np.float32))
for e in wt.external_data:
    if e.key == "location":
        e.value = "missing.bin"
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "ext", [vi("x", [4, 3])],
                      [vi("y", [4, 2])], initializer=[wt])
save_helper("external_missing", g, 13)
