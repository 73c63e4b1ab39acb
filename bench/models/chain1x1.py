#!/usr/bin/python3
"""A chain of 1x1 convolutions at 14x14, for what cold filters cost.

    /usr/bin/python3 bench/models/chain1x1.py DIR LAYERS

writes DIR/model.onnx (opset 13, input "input", output "output") and
DIR/input.npy (1x1024x14x14): LAYERS convolutions with bias and relu,
alternately 1024 -> 256 and 256 -> 1024 (ResNet-50's layer3 bottleneck
without its 3x3), 1 MB of filter each, random weights with a fixed seed.
With 4 layers the filters stay in L3 from one call to the next; with 40
(40 MB) each call reads them from memory, as a whole model's do. Time it
with relayc (`relayc import`, `build`, `run --repeat N --threads T`) and
ONNX Runtime (bench/models/ort_run.js DIR/model.onnx DIR/input.npy time N)
and compare the time per layer; bench/README.md has the numbers.
"""

import os
import sys

import numpy as np
import torch


def main(argv):
    if len(argv) != 3 or not argv[2].isdigit() or int(argv[2]) < 1:
        sys.stderr.write("usage: chain1x1.py DIR LAYERS\n")
        return 2
    out, n = argv[1], int(argv[2])
    torch.manual_seed(0)
    layers = []
    for i in range(n):
        cin, cout = (1024, 256) if i % 2 == 0 else (256, 1024)
        layers += [torch.nn.Conv2d(cin, cout, 1), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.5)  # keeps the activations from growing layer after layer
    x = torch.randn(1, 1024, 14, 14)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "input.npy"), x.numpy())
    torch.onnx.export(model, (x,), os.path.join(out, "model.onnx"), input_names=["input"],
                      output_names=["output"], opset_version=13)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
