#!/usr/bin/python3
"""Writes the inputs and the expected result of tests/run/rnn_hoisted.relay:
an Elman RNN, h' = tanh(x_t W^T + h U^T + b), stepped by a self-recursive
global over T = 7 steps of a batch of 2, computed here in float64 with
numpy. Run from the repository root: /usr/bin/python3 tests/tools/make_rnn_hoist.py"""
import os
import numpy as np

T, B, K, N = 7, 2, 5, 6
rng = np.random.default_rng(20261201)
xs = rng.uniform(-1, 1, size=(T, B, K)).astype(np.float32)
w = rng.uniform(-0.5, 0.5, size=(N, K)).astype(np.float32)
u = rng.uniform(-0.5, 0.5, size=(N, N)).astype(np.float32)
b = rng.uniform(-0.5, 0.5, size=(N,)).astype(np.float32)
xt = rng.uniform(-1, 1, size=(K, T)).astype(np.float32)

h = np.zeros((B, N))
hs = []
for t in range(T):
    h = np.tanh(xs[t].astype(np.float64) @ w.T.astype(np.float64) + h @ u.T.astype(np.float64) + b)
    hs.append(h)
# the second loop walks backwards from T - 1 over the rows of xt's
# transpose: take(xt, t, axis=1) is not hoisted (the last axis), its
# result the sum of x_t W^T over the steps
acc = np.zeros((N,))
for t in range(T - 1, -1, -1):
    acc = acc + xt[:, t].astype(np.float64) @ w.T.astype(np.float64)

d = "tests/run/data"
np.save(os.path.join(d, "rnn_hoisted_xs.npy"), xs)
np.save(os.path.join(d, "rnn_hoisted_w.npy"), w)
np.save(os.path.join(d, "rnn_hoisted_u.npy"), u)
np.save(os.path.join(d, "rnn_hoisted_b.npy"), b)
np.save(os.path.join(d, "rnn_hoisted_xt.npy"), xt)
os.makedirs("tests/run/rnn_hoisted.expected.d", exist_ok=True)
np.save("tests/run/rnn_hoisted.expected.d/0.npy", h.astype(np.float32))
np.save("tests/run/rnn_hoisted.expected.d/1.npy", acc.astype(np.float32))
