#!/usr/bin/python3
"""Writes the recurrent and control-flow ONNX models of tests/onnx/control/
(LSTM, GRU, RNN, If, Loop), their inputs and expected outputs.

Run with Debian's /usr/bin/python3 (python3-torch, python3-onnx, python3-numpy)
from anywhere; the output is deterministic for a given torch version (fixed
seeds), and the files are committed, so the tests (control_test.sh) need
neither torch nor onnx:

  control/NAME.onnx               the model (torch.onnx.export, of torch.nn
                                  modules or torch.jit.script modules, or
                                  onnx.helper)
  control/NAME.in.INPUT.npy       its inputs, by ONNX input name
  control/NAME.out.K.OUTPUT.npy   its expected outputs, by position and ONNX
                                  output name: PyTorch's, or for the
                                  onnx.helper models NumPy's (the ONNX
                                  operator's definition)
  control/bad_*.onnx              models made to fail; control_test.sh checks
                                  each error
"""
import os
import warnings
from typing import List

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "control")
os.makedirs(OUT, exist_ok=True)
torch.manual_seed(11)
torch.set_num_threads(1)
warnings.filterwarnings("ignore")


def save_io(name, inputs, outputs):
    for k, v in inputs.items():
        np.save(os.path.join(OUT, "%s.in.%s.npy" % (name, k)), v)
    for i, (k, v) in enumerate(outputs.items()):
        np.save(os.path.join(OUT, "%s.out.%d.%s.npy" % (name, i, k)), v)


def export(name, model, args, input_names, output_names, opset=13, script=False):
    """torch.onnx.export of model (scripted first when script) on args."""
    model.eval()
    with torch.no_grad():
        y = model(*args)
    if not isinstance(y, tuple):
        y = (y,)
    flat = []
    for v in y:  # (output, (h, c)) as torch.nn.LSTM gives it
        flat.extend(v if isinstance(v, tuple) else (v,))
    if script:
        model = torch.jit.script(model)
    torch.onnx.export(model, args, os.path.join(OUT, name + ".onnx"), input_names=input_names,
                      output_names=output_names, opset_version=opset)
    save_io(name, {k: a.numpy() for k, a in zip(input_names, args)},
            {k: v.numpy() for k, v in zip(output_names, flat)})


# {==== torch.nn recurrent modules ====}

class Lstm(nn.Module):
    def __init__(self, layers, bidirectional, batch_first=False):
        super().__init__()
        self.rnn = nn.LSTM(5, 7, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)

    def forward(self, x):
        return self.rnn(x)


class LstmState(nn.Module):
    """An LSTM given its initial state."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 6)

    def forward(self, x, h0, c0):
        return self.rnn(x, (h0, c0))


class Gru(nn.Module):
    def __init__(self, layers, bidirectional, batch_first=False):
        super().__init__()
        self.rnn = nn.GRU(5, 6, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)

    def forward(self, x, h0=None):
        return self.rnn(x, h0)


class GruState(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 4, bidirectional=True, bias=False)

    def forward(self, x, h0):
        return self.rnn(x, h0)


export("lstm1", Lstm(1, False), (torch.randn(6, 2, 5),), ["input"], ["y", "h", "c"])
export("lstm2bi", Lstm(2, True), (torch.randn(5, 3, 5),), ["input"], ["y", "h", "c"])
export("lstm_bf", Lstm(1, True, batch_first=True), (torch.randn(2, 4, 5),), ["input"], ["y", "h", "c"])
export("lstm_state", LstmState(), (torch.randn(3, 2, 4), torch.randn(1, 2, 6), torch.randn(1, 2, 6)),
       ["x", "h0", "c0"], ["y", "h", "c"])
export("lstm_opset9", Lstm(1, False), (torch.randn(4, 1, 5),), ["input"], ["y", "h", "c"], opset=9)
export("gru2", Gru(2, False, batch_first=True), (torch.randn(2, 5, 5),), ["input"], ["y", "h"])
export("gru_bi", GruState(), (torch.randn(4, 2, 3), torch.randn(2, 2, 4)), ["x", "h0"], ["y", "h"])


# {==== Scripted control flow ====}

class ForLoop(nn.Module):
    """A for loop over the rows of its input (Loop with a trip count) that
    reads the graph's input and weights from its body."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.zeros(2, 4)
        for i in range(x.size(0)):
            h = torch.tanh(self.lin(x[i]) + h)
        return h


class WhileLoop(nn.Module):
    """A while loop ended by its condition (Loop with cond), an If inside."""

    def forward(self, x):
        i = 0
        while x.sum() < 10.0 and i < 20:
            x = x * 2.0 + 0.5
            i += 1
        return x


class ListLoop(nn.Module):
    """A scripted RNN cell stepped by a for loop that appends each state to
    lists (SequenceEmpty, SequenceInsert in the Loop's body), stacked and
    concatenated after it (ConcatFromSequence)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.rec = nn.Linear(3, 3)

    def forward(self, x):
        h = torch.zeros(2, 3)
        hs: List[torch.Tensor] = []
        gs: List[torch.Tensor] = []
        for i in range(x.size(0)):
            h = torch.tanh(self.lin(x[i]) + self.rec(h))
            hs.append(h)
            gs.append(h * 2.0)
        return torch.stack(hs, dim=1), torch.cat(gs, dim=1), h


class Cond(nn.Module):
    """If: both branches compute from the input and the weights."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x):
        if x.sum() > 0:
            y = self.lin(x) * 2
        else:
            y = torch.relu(x) - 1
        return y


export("loop_for", ForLoop(), (torch.randn(5, 2, 4),), ["input"], ["output"], script=True)
export("loop_while", WhileLoop(), (torch.rand(2, 3) * 0.1,), ["input"], ["output"], script=True)
export("loop_list", ListLoop(), (torch.randn(5, 2, 4),), ["input"], ["stacked", "cat", "h"], script=True)
export("cond_pos", Cond(), (torch.rand(2, 3) + 0.1,), ["input"], ["output"], script=True)
export("cond_neg", Cond(), (-torch.rand(2, 3) - 0.1,), ["input"], ["output"], script=True)


# {==== Hand-built graphs (expected outputs from NumPy) ====}

rng = np.random.default_rng(5)


def save_helper(name, graph, opset, inputs=None, outputs=None):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_control")
    onnx.save(model, os.path.join(OUT, name + ".onnx"))
    if inputs is not None:
        save_io(name, inputs, outputs)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name + "_v"))


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def ref_lstm(x, w, r, b, h0, c0, p, reverse, clip=None, input_forget=False):
    """One direction of ONNX LSTM (gates i, o, f, c; peepholes i, o, f)."""
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    h, c = h0, c0
    hsz = r.shape[1]
    y = np.zeros((x.shape[0],) + h0.shape, np.float32)
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for t in steps:
        g = x[t] @ w.T + h @ r.T + b[: 4 * hsz] + b[4 * hsz:]
        gi, go, gf, gc = np.split(g, 4, axis=1)
        i = sigmoid(cl(gi + p[:hsz] * c))
        f = 1 - i if input_forget else sigmoid(cl(gf + p[2 * hsz:] * c))
        c = f * c + i * np.tanh(cl(gc))
        o = sigmoid(cl(go + p[hsz:2 * hsz] * c))
        h = o * np.tanh(c)
        y[t] = h
    return y, h, c


def ref_gru(x, w, r, b, h0, reverse, lbr):
    """One direction of ONNX GRU (gates z, r, h)."""
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    h = h0
    hsz = r.shape[1]
    wb, rb = b[: 3 * hsz], b[3 * hsz:]
    y = np.zeros((x.shape[0],) + h0.shape, np.float32)
    for t in steps:
        xw = x[t] @ w.T + wb
        xz, xr, xh = np.split(xw, 3, axis=1)
        z = sigmoid(xz + h @ r[:hsz].T + rb[:hsz])
        rr = sigmoid(xr + h @ r[hsz:2 * hsz].T + rb[hsz:2 * hsz])
        if lbr:
            n = np.tanh(xh + rr * (h @ r[2 * hsz:].T + rb[2 * hsz:]))
        else:
            n = np.tanh(xh + (rr * h) @ r[2 * hsz:].T + rb[2 * hsz:])
        h = (1 - z) * n + z * h
        y[t] = h
    return y, h


def f32(*shape):
    return (rng.standard_normal(shape) * 0.5).astype(np.float32)


# LSTM, reverse, with peepholes and clip, no bias input; initial state given.
T, B, I, H = 4, 2, 3, 5
x, w, r = f32(T, B, I), f32(1, 4 * H, I), f32(1, 4 * H, H)
h0, c0, p = f32(1, B, H), f32(1, B, H), f32(1, 3 * H)
y, yh, yc = ref_lstm(x, w[0], r[0], np.zeros(8 * H, np.float32), h0[0], c0[0], p[0], True, clip=0.9)
g = helper.make_graph(
    [helper.make_node("LSTM", ["x", "w", "r", "", "", "h0", "c0", "p"], ["y", "yh", "yc"], name="lstm",
                      hidden_size=H, direction="reverse", clip=0.9)],
    "lstm_peep", [vi("x", [T, B, I]), vi("h0", [1, B, H]), vi("c0", [1, B, H])],
    [vi("y", [T, 1, B, H]), vi("yh", [1, B, H]), vi("yc", [1, B, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"), numpy_helper.from_array(p, "p")])
save_helper("lstm_peep", g, 9, {"x": x, "h0": h0, "c0": c0}, {"y": y[:, None], "yh": yh[None], "yc": yc[None]})

# LSTM, layout 1 (batch-first, opset 14), input_forget, only Y_h asked for.
x, w, r, b = f32(B, T, I), f32(1, 4 * H, I), f32(1, 4 * H, H), f32(1, 8 * H)
_, yh, _ = ref_lstm(x.transpose(1, 0, 2), w[0], r[0], b[0], np.zeros((B, H), np.float32),
                    np.zeros((B, H), np.float32), np.zeros(3 * H, np.float32), False, input_forget=True)
g = helper.make_graph(
    [helper.make_node("LSTM", ["x", "w", "r", "b"], ["", "yh"], name="lstm", hidden_size=H, layout=1,
                      input_forget=1)],
    "lstm_layout1", [vi("x", [B, T, I])], [vi("yh", [B, 1, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"), numpy_helper.from_array(b, "b")])
save_helper("lstm_layout1", g, 14, {"x": x}, {"yh": yh[:, None]})

# GRU, bidirectional, linear_before_reset 0 (torch always gives 1).
x, w, r, b = f32(T, B, I), f32(2, 3 * H, I), f32(2, 3 * H, H), f32(2, 6 * H)
zero = np.zeros((B, H), np.float32)
yf, hf = ref_gru(x, w[0], r[0], b[0], zero, False, False)
yb, hb = ref_gru(x, w[1], r[1], b[1], zero, True, False)
g = helper.make_graph(
    [helper.make_node("GRU", ["x", "w", "r", "b"], ["y", "yh"], name="gru", hidden_size=H,
                      direction="bidirectional")],
    "gru_lbr0", [vi("x", [T, B, I])], [vi("y", [T, 2, B, H]), vi("yh", [2, B, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"), numpy_helper.from_array(b, "b")])
save_helper("gru_lbr0", g, 7, {"x": x}, {"y": np.stack([yf, yb], 1), "yh": np.stack([hf, hb])})

# LSTM, bidirectional, with sequence_lens given at run time (sequences of
# different lengths: the steps past a length keep the state and give zeros).
T, B = 5, 3
x, w, r, b = f32(T, B, I), f32(2, 4 * H, I), f32(2, 4 * H, H), f32(2, 8 * H)
lens = np.array([5, 2, 3], np.int32)
y = np.zeros((T, 2, B, H), np.float32)
yh = np.zeros((2, B, H), np.float32)
yc = np.zeros((2, B, H), np.float32)
zero, nop = np.zeros((1, H), np.float32), np.zeros(3 * H, np.float32)
for k in range(B):
    n = lens[k]
    for d in range(2):
        yd, hd, cd = ref_lstm(x[:n, k:k + 1], w[d], r[d], b[d], zero, zero, nop, d == 1)
        y[:n, d, k] = yd[:, 0]
        yh[d, k], yc[d, k] = hd[0], cd[0]
g = helper.make_graph(
    [helper.make_node("LSTM", ["x", "w", "r", "b", "lens"], ["y", "yh", "yc"], name="lstm", hidden_size=H,
                      direction="bidirectional")],
    "lstm_seqlens", [vi("x", [T, B, I]), vi("lens", [B], TensorProto.INT32)],
    [vi("y", [T, 2, B, H]), vi("yh", [2, B, H]), vi("yc", [2, B, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"), numpy_helper.from_array(b, "b")])
save_helper("lstm_seqlens", g, 13, {"x": x, "lens": lens}, {"y": y, "yh": yh, "yc": yc})

# RNN (the simple one), reverse, Relu, with an initial state.
T, B = 4, 2
x, w, r, b, h0 = f32(T, B, I), f32(1, H, I), f32(1, H, H), f32(1, 2 * H), f32(1, B, H)
h = h0[0]
y = np.zeros((T, 1, B, H), np.float32)
for t in range(T - 1, -1, -1):
    h = np.maximum(x[t] @ w[0].T + h @ r[0].T + b[0, :H] + b[0, H:], 0)
    y[t, 0] = h
g = helper.make_graph(
    [helper.make_node("RNN", ["x", "w", "r", "b", "", "h0"], ["y", "yh"], name="rnn", hidden_size=H,
                      direction="reverse", activations=["Relu"])],
    "rnn_relu", [vi("x", [T, B, I]), vi("h0", [1, B, H])], [vi("y", [T, 1, B, H]), vi("yh", [1, B, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r"), numpy_helper.from_array(b, "b")])
save_helper("rnn_relu", g, 13, {"x": x, "h0": h0}, {"y": y, "yh": h[None]})

# Loop with a trip count, no condition, a loop-carried value and two scan
# outputs: acc += x * i; scans acc and i (as float) each iteration. The body
# reads the graph's input x.
x = f32(2, 3)
body = helper.make_graph(
    [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
     helper.make_node("Mul", ["x", "fi"], ["xi"]),
     helper.make_node("Add", ["acc", "xi"], ["acc2"]),
     helper.make_node("Identity", ["cond"], ["cond2"]),
     helper.make_node("Unsqueeze", ["fi", "axes"], ["fi1"])],
    "body", [vi("i", [], TensorProto.INT64), vi("cond", [], TensorProto.BOOL), vi("acc", [2, 3])],
    [vi("cond2", [], TensorProto.BOOL), vi("acc2", [2, 3]), vi("acc2", [2, 3]), vi("fi1", [1])],
    initializer=[numpy_helper.from_array(np.array([0], np.int64), "axes")])
g = helper.make_graph(
    [const("m", np.array(4, np.int64)), const("acc0", np.ones((2, 3), np.float32)),
     helper.make_node("Loop", ["m", "", "acc0"], ["acc", "accs", "is"], name="loop", body=body)],
    "loop_scan", [vi("x", [2, 3])], [vi("acc", [2, 3]), vi("accs", [4, 2, 3]), vi("is", [4, 1])])
accs, acc = [], np.ones((2, 3), np.float32)
for i in range(4):
    acc = acc + x * i
    accs.append(acc)
save_helper("loop_scan", g, 13, {"x": x},
            {"acc": acc, "accs": np.stack(accs), "is": np.arange(4, dtype=np.float32)[:, None]})

# Loop driven by its condition only (M empty): halve v until its largest
# element is below the threshold; the body's condition comes from the
# loop-carried value, and a nested If picks the step. Outputs the last v and
# the count.
v0 = (np.abs(f32(3)) * 40 + 5).astype(np.float32)
then_g = helper.make_graph([helper.make_node("Mul", ["v", "half"], ["t_out"])], "then", [], [vi("t_out", [3])])
else_g = helper.make_graph([helper.make_node("Sub", ["v", "one"], ["e_out"])], "else", [], [vi("e_out", [3])])
body = helper.make_graph(
    [helper.make_node("ReduceMax", ["v"], ["mx"], keepdims=0),
     helper.make_node("Greater", ["mx", "big"], ["isbig"]),
     helper.make_node("If", ["isbig"], ["v2"], then_branch=then_g, else_branch=else_g),
     helper.make_node("Add", ["n", "one_i"], ["n2"]),
     helper.make_node("ReduceMax", ["v2"], ["mx2"], keepdims=0),
     helper.make_node("Greater", ["mx2", "thr"], ["go"])],
    "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("v", [3]),
             vi("n", [], TensorProto.INT64)],
    [vi("go", [], TensorProto.BOOL), vi("v2", [3]), vi("n2", [], TensorProto.INT64)])
g = helper.make_graph(
    [const("half", np.float32(0.5)), const("one", np.float32(1.0)), const("one_i", np.int64(1)),
     const("big", np.float32(8.0)), const("n0", np.int64(0)),
     helper.make_node("ReduceMax", ["start"], ["mx0"], keepdims=0),
     helper.make_node("Greater", ["mx0", "thr"], ["go0"]),
     helper.make_node("Loop", ["", "go0", "start", "n0"], ["v", "n"], name="loop", body=body)],
    "loop_cond", [vi("start", [3]), vi("thr", [])], [vi("v", [3]), vi("n", [], TensorProto.INT64)])
v, n, thr = v0.copy(), 0, np.float32(2.5)
while v.max() > thr:
    v = (v * np.float32(0.5) if v.max() > 8 else v - np.float32(1)).astype(np.float32)
    n += 1
save_helper("loop_cond", g, 13, {"start": v0, "thr": np.array(thr, np.float32)}, {"v": v, "n": np.array(n, np.int64)})

# Nested loops, each with a trip count from the graph (M computed, not a
# constant): s = sum over i < m, j < i + 1 of (x + j). The inner body reads
# the outer body's iteration number and the graph's input.
inner = helper.make_graph(
    [helper.make_node("Cast", ["j"], ["fj"], to=TensorProto.FLOAT),
     helper.make_node("Add", ["x", "fj"], ["xj"]),
     helper.make_node("Add", ["s_in", "xj"], ["s_out"]),
     helper.make_node("Identity", ["cj"], ["cj2"])],
    "inner", [vi("j", [], TensorProto.INT64), vi("cj", [], TensorProto.BOOL), vi("s_in", [2])],
    [vi("cj2", [], TensorProto.BOOL), vi("s_out", [2])])
outer = helper.make_graph(
    [helper.make_node("Add", ["i", "one_i"], ["i1"]),
     helper.make_node("Loop", ["i1", "", "s"], ["s2"], body=inner),
     helper.make_node("Identity", ["ci"], ["ci2"])],
    "outer", [vi("i", [], TensorProto.INT64), vi("ci", [], TensorProto.BOOL), vi("s", [2])],
    [vi("ci2", [], TensorProto.BOOL), vi("s2", [2])])
g = helper.make_graph(
    [const("one_i", np.int64(1)), const("s0", np.zeros(2, np.float32)),
     helper.make_node("Loop", ["m", "", "s0"], ["s"], name="outer_loop", body=outer)],
    "loop_nested", [vi("x", [2]), vi("m", [], TensorProto.INT64)], [vi("s", [2])])
x, m = f32(2), 3
s = np.zeros(2, np.float32)
for i in range(m):
    for j in range(i + 1):
        s = s + (x + np.float32(j))
save_helper("loop_nested", g, 13, {"x": x, "m": np.array(m, np.int64)}, {"s": s})

# Failures.
body = helper.make_graph([helper.make_node("Identity", ["c"], ["c2"])], "body",
                         [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("v", [3])],
                         [vi("c2", [], TensorProto.BOOL)])
g = helper.make_graph([const("m", np.int64(3)), helper.make_node("Loop", ["m", "", "x"], ["y"], name="short_body",
                                                                 body=body)],
                      "bad", [vi("x", [3])], [vi("y", [3])])
save_helper("bad_loop_outputs", g, 13)
then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["a"])], "then", [], [vi("a", [3])])
else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["b"], axis=0)], "else", [], [vi("b", [6])])
g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="two_shapes", then_branch=then_g,
                                        else_branch=else_g)],
                      "bad", [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("y", [3])])
save_helper("bad_if_shapes", g, 13)
body = helper.make_graph([helper.make_node("Less", ["v", "v"], ["c2"]), helper.make_node("Identity", ["v"], ["s"])],
                         "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL)],
                         [vi("c2", [], TensorProto.BOOL), vi("s", [])])
g = helper.make_graph([const("m", np.int64(3)), const("t", np.bool_(True)),
                       helper.make_node("Loop", ["m", "t"], ["y"], name="early_scan", body=body)],
                      "bad", [vi("v", [])], [vi("y", [3])])
save_helper("bad_loop_scan", g, 13)
w, r = f32(1, 4 * H, I), f32(1, 4 * H, H)
g = helper.make_graph(
    [helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="odd_lstm", hidden_size=H,
                      activations=["Sigmoid", "Softsign", "Tanh"])],
    "bad", [vi("x", [T, B, I])], [vi("y", [T, 1, B, H])],
    initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(r, "r")])
save_helper("bad_lstm_act", g, 13)
g = helper.make_graph([helper.make_node("SequenceEmpty", [], ["s"]),
                       helper.make_node("ConcatFromSequence", ["s"], ["y"], name="lone_concat", axis=0)],
                      "bad", [vi("x", [3])], [vi("y", [3])])
save_helper("bad_sequence", g, 13)
