#!/usr/bin/python3
"""The models of bench/models/gen.py in PyTorch, eager and TorchScript, on the
same weights (weights.npz) and inputs (INPUT.npy), one thread.

    /usr/bin/python3 bench/models/torch_peer.py check MODEL DIR OUTDIR
    /usr/bin/python3 bench/models/torch_peer.py time MODEL DIR REPEAT [ENGINE ...]

`check` runs every engine of MODEL once and writes OUTDIR/ENGINE.npy (the
result as float32). `time` runs each engine WARMUP times (environment
WARMUP, default 5: TorchScript's profiling executor optimizes a graph after
its first calls), then REPEAT timed calls, and prints one line per engine:

    ENGINE time_ms: median=M min=A max=B n=REPEAT

(the format of `relayc run --repeat`). Engines per model:
    mlp       eager, script
    lstm      eager (a Python loop of the cell's ops, the Relay program's
              steps), nn.LSTM (the fused eager module), script (the loop
              scripted)
    treelstm  eager (recursion over Python tree nodes built per call, as the
              Relay @build does), script (TorchScript has no recursion: an
              explicit stack over the same tree), trace (torch.jit.trace of
              the eager model: the 127 cells of this tree unrolled into one
              graph)
    dense     eager (F.linear: a @ b^T), script

Needs Debian's python3-torch and python3-numpy. The caller sets the BLAS
environment (OPENBLAS_NUM_THREADS=1); this script sets torch's own thread
counts to 1.
"""

import os
import sys
import time
from typing import List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

ENGINES = {
    "mlp": ["eager", "script"],
    "lstm": ["eager", "nn.LSTM", "script"],
    "treelstm": ["eager", "script", "trace"],
    "dense": ["eager", "script"],
}


def tensor(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


# {==== MLP ====}

def mlp_module(w):
    m = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 10), nn.Softmax(dim=-1))
    with torch.no_grad():
        for i, layer in enumerate([m[0], m[2], m[4]]):
            layer.weight.copy_(tensor(w["fc%d.weight" % (i + 1)]))
            layer.bias.copy_(tensor(w["fc%d.bias" % (i + 1)]))
    return m.eval()


# {==== LSTM ====}

class LSTMLoop(nn.Module):
    """The Relay model's loop: one cell per step, gates i, f, g, o."""

    def __init__(self, w):
        super().__init__()
        self.w_ih = nn.Parameter(tensor(w["lstm.w_ih"]))
        self.w_hh = nn.Parameter(tensor(w["lstm.w_hh"]))
        self.b = nn.Parameter(tensor(w["lstm.b"]))
        self.hidden = int(self.w_hh.shape[1])

    def forward(self, xs: Tensor) -> Tensor:
        h = torch.zeros(1, self.hidden)
        c = torch.zeros(1, self.hidden)
        for t in range(xs.shape[0]):
            gates = F.linear(xs[t], self.w_ih) + F.linear(h, self.w_hh) + self.b
            i, f, g, o = gates.chunk(4, 1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
        return h


class LSTMFused(nn.Module):
    """torch.nn.LSTM on the same weights (b_ih = b, b_hh = 0)."""

    def __init__(self, w):
        super().__init__()
        w_ih = tensor(w["lstm.w_ih"])
        self.lstm = nn.LSTM(int(w_ih.shape[1]), int(w_ih.shape[0]) // 4)
        with torch.no_grad():
            self.lstm.weight_ih_l0.copy_(w_ih)
            self.lstm.weight_hh_l0.copy_(tensor(w["lstm.w_hh"]))
            self.lstm.bias_ih_l0.copy_(tensor(w["lstm.b"]))
            self.lstm.bias_hh_l0.zero_()

    def forward(self, xs: Tensor) -> Tensor:
        _, (h, _) = self.lstm(xs)
        return h[0]


# {==== TreeLSTM ====}

class TreeCells(nn.Module):
    """The leaf and node cells of the binary Tree-LSTM."""

    def __init__(self, w):
        super().__init__()
        for n in ["w", "b", "ul", "ur", "bn"]:
            setattr(self, n, nn.Parameter(tensor(w["tree." + n])))

    def leaf(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        i, o, u = F.linear(x, self.w, self.b).chunk(3, 1)
        c = torch.sigmoid(i) * torch.tanh(u)
        return torch.sigmoid(o) * torch.tanh(c), c

    def node(self, hl: Tensor, cl: Tensor, hr: Tensor, cr: Tensor) -> Tuple[Tensor, Tensor]:
        g = F.linear(hl, self.ul) + F.linear(hr, self.ur, self.bn)
        i, fl, fr, o, u = g.chunk(5, 1)
        c = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl) * cl + torch.sigmoid(fr) * cr
        return torch.sigmoid(o) * torch.tanh(c), c


class TreeEager(TreeCells):
    """Recursion over a tree of Python tuples: ("leaf", x) or (left, right)."""

    def __init__(self, w, depth):
        super().__init__(w)
        self.depth = depth

    def build(self, d, k, xs):
        if d == 0:
            return ("leaf", xs[k])
        return (self.build(d - 1, 2 * k, xs), self.build(d - 1, 2 * k + 1, xs))

    def cell(self, t):
        if t[0] == "leaf":
            return self.leaf(t[1])
        hl, cl = self.cell(t[0])
        hr, cr = self.cell(t[1])
        return self.node(hl, cl, hr, cr)

    def forward(self, xs):
        return self.cell(self.build(self.depth, 0, xs))[0]


class TreeStack(TreeCells):
    """The same post-order traversal with an explicit stack (scriptable)."""

    def __init__(self, w, depth):
        super().__init__(w)
        self.depth = depth

    def forward(self, xs: Tensor) -> Tensor:
        hs: List[Tensor] = []
        cs: List[Tensor] = []
        ds: List[int] = [self.depth]
        ks: List[int] = [0]
        seen: List[bool] = [False]
        while len(ds) > 0:
            d = ds.pop()
            k = ks.pop()
            s = seen.pop()
            if d == 0:
                h, c = self.leaf(xs[k])
                hs.append(h)
                cs.append(c)
            elif not s:
                ds += [d, d - 1, d - 1]
                ks += [k, 2 * k + 1, 2 * k]
                seen += [True, False, False]
            else:
                hr = hs.pop()
                cr = cs.pop()
                hl = hs.pop()
                cl = cs.pop()
                h, c = self.node(hl, cl, hr, cr)
                hs.append(h)
                cs.append(c)
        return hs[0]


# {==== dense ====}

class Dense(nn.Module):
    def forward(self, a: Tensor, b: Tensor) -> Tensor:
        return F.linear(a, b)


# {==== Engines ====}

def engines(model, d):
    """{engine: (callable, args)} for MODEL in directory D."""
    w = dict(np.load(os.path.join(d, "weights.npz")))
    if model == "dense":
        args = (tensor(np.load(os.path.join(d, "a.npy"))), tensor(np.load(os.path.join(d, "b.npy"))))
        m = Dense().eval()
        return {"eager": (m, args), "script": (torch.jit.script(m), args)}
    if model == "mlp":
        args = (tensor(np.load(os.path.join(d, "x.npy"))),)
        m = mlp_module(w)
        return {"eager": (m, args), "script": (torch.jit.script(m), args)}
    args = (tensor(np.load(os.path.join(d, "xs.npy"))),)
    if model == "lstm":
        m = LSTMLoop(w).eval()
        return {"eager": (m, args), "nn.LSTM": (LSTMFused(w).eval(), args),
                "script": (torch.jit.script(m), args)}
    if model == "treelstm":
        depth = int(np.log2(args[0].shape[0]))
        m = TreeEager(w, depth).eval()
        with torch.no_grad():
            traced = torch.jit.trace(m, args, check_trace=False)
        return {"eager": (m, args), "script": (torch.jit.script(TreeStack(w, depth).eval()), args),
                "trace": (traced, args)}
    raise SystemExit("torch_peer: unknown model %r" % model)


def main(argv):
    if len(argv) < 3 or argv[0] not in ("check", "time") or (argv[0] == "check" and len(argv) != 4):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    mode, model, d = argv[0], argv[1], argv[2]
    table = engines(model, d)
    if mode == "check":
        os.makedirs(argv[3], exist_ok=True)
        with torch.no_grad():
            for name, (fn, args) in table.items():
                out = fn(*args).numpy().astype(np.float32)
                np.save(os.path.join(argv[3], name + ".npy"), out)
        return 0
    repeat = int(argv[3])
    warmup = int(os.environ.get("WARMUP", "5"))
    names = argv[4:] or list(table)
    with torch.no_grad():
        for name in names:
            fn, args = table[name]
            for _ in range(warmup):
                fn(*args)
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                fn(*args)
                times.append((time.perf_counter() - t0) * 1e3)
            times.sort()
            print("%s time_ms: median=%.3f min=%.3f max=%.3f n=%d"
                  % (name, float(np.median(times)), times[0], times[-1], repeat), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
