#!/usr/bin/python3
"""Writes DIR/lstm.onnx: the LSTM of bench/models/gen.py as one ONNX LSTM
node (opset 14), on the weights of DIR/weights.npz, for ONNX Runtime
(bench/models/ort_lstm.js).

    X (T, 1, 64) -> LSTM(hidden 128, forward) -> Y_h (1, 1, 128)

ONNX orders the gates i, o, f, c where the Relay model (and PyTorch) use i, f,
g, o, so the four blocks of rows of W, R and B are permuted. B is the
concatenation of the input and recurrent biases: the model's one bias and
zeros. Needs Debian's python3-onnx and python3-numpy.

    /usr/bin/python3 bench/models/lstm_onnx.py DIR
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def reorder(a, hidden):
    """Rows in blocks i, f, g, o -> i, o, f, g (ONNX's i, o, f, c)."""
    blocks = [a[k * hidden:(k + 1) * hidden] for k in range(4)]
    return np.concatenate([blocks[0], blocks[3], blocks[1], blocks[2]])


def main(argv):
    if len(argv) != 1:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    d = argv[0]
    w = np.load(os.path.join(d, "weights.npz"))
    xs = np.load(os.path.join(d, "xs.npy"))
    w_ih, w_hh, b = w["lstm.w_ih"], w["lstm.w_hh"], w["lstm.b"]
    hidden = w_hh.shape[1]
    steps, batch, nin = xs.shape
    inits = [
        numpy_helper.from_array(reorder(w_ih, hidden)[None].astype(np.float32), "W"),
        numpy_helper.from_array(reorder(w_hh, hidden)[None].astype(np.float32), "R"),
        numpy_helper.from_array(np.concatenate([reorder(b, hidden), np.zeros_like(b)])[None]
                                .astype(np.float32), "B"),
    ]
    node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["", "Y_h"], hidden_size=int(hidden))
    graph = helper.make_graph(
        [node], "lstm",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [steps, batch, nin])],
        [helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [1, batch, hidden])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "lstm.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
