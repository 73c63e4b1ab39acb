#!/usr/bin/python3
"""The CNN benchmark's models and its PyTorch peer (bench/run_cnn.sh).

    /usr/bin/python3 bench/models/cnn.py gen DIR MODEL
    /usr/bin/python3 bench/models/cnn.py time DIR MODEL REPEAT

MODEL is a torchvision.models classifier (resnet18, mobilenet_v2,
resnet50). Its weights are random with a fixed seed; the batch norms get
random statistics and affine parameters too (torchvision initializes them
to the identity), so that folding them is checked. gen writes
DIR/model.onnx (torch.onnx.export, opset 13, input "input", output
"output"), DIR/input.npy (one 1x3x224x224 image) and DIR/torch.npy (PyTorch
eager's output). time builds the same model again and prints the wall time
of REPEAT calls of PyTorch eager after WARMUP (environment, default 5) as
"eager time_ms: median=M min=A max=B n=REPEAT". THREADS (environment,
default 1) threads.
"""

import os
import sys
import time
import warnings

import numpy as np
import torch
import torchvision


def model(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)()
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                c = mod.num_features
                mod.weight.copy_(torch.rand(c, generator=g) + 0.5)
                mod.bias.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
                mod.running_var.copy_(torch.rand(c, generator=g) + 0.5)
    x = torch.randn(1, 3, 224, 224, generator=g)
    return m.eval(), x


def main(argv):
    warnings.filterwarnings("ignore")
    torch.set_num_threads(int(os.environ.get("THREADS", "1")))
    if len(argv) < 3 or argv[0] not in ("gen", "time"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    mode, out, name = argv[0], argv[1], argv[2]
    m, x = model(name)
    if mode == "gen":
        os.makedirs(out, exist_ok=True)
        with torch.no_grad():
            y = m(x)
        torch.onnx.export(m, (x,), os.path.join(out, "model.onnx"), input_names=["input"], output_names=["output"],
                          opset_version=13)
        np.save(os.path.join(out, "input.npy"), x.numpy())
        np.save(os.path.join(out, "torch.npy"), y.numpy())
        return 0
    repeat = int(argv[3])
    warmup = int(os.environ.get("WARMUP", "5"))
    times = []
    with torch.no_grad():
        for i in range(warmup + repeat):
            t0 = time.perf_counter()
            m(x)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    print("eager time_ms: median=%.3f min=%.3f max=%.3f n=%d" % (float(np.median(times)), times[0], times[-1], repeat))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
