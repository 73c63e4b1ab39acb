#!/bin/sh
# real_models.sh RELAYC NPYCMP [MODEL...]: real models with fixed-seed random
# weights, exported by torch.onnx.export (opset 13), built by relayc straight
# from the .onnx file and run on one input; the output must match PyTorch's
# within rtol/atol 1e-4. MODELs are torchvision.models classifier names (one
# 1x3x224x224 image) or one of:
#   mlp           Linear 20-30, ReLU, Linear 30-5, LogSoftmax (batch 4)
#   encoder       nn.TransformerEncoderLayer, d_model 64, 4 heads, relu
#   encoder_gelu  the same with activation="gelu" (the Erf pattern)
# Default: the models issue 12 names: resnet18 mobilenet_v2 squeezenet1_0
# vgg11 densenet121 efficientnet_b0 mlp encoder encoder_gelu.
#
# Not part of `make test`: it needs Debian's python3-torchvision (installed
# here when missing) and minutes for the big classifiers. Prints the build
# time, peak memory of the build and the run time of each.
set -u
[ $# -ge 2 ] || { echo "usage: sh tests/onnx/real_models.sh RELAYC NPYCMP [MODEL...]" >&2; exit 2; }
relayc=$1
npycmp=$2
shift 2
[ $# -gt 0 ] || set -- resnet18 mobilenet_v2 squeezenet1_0 vgg11 densenet121 efficientnet_b0 mlp encoder encoder_gelu
if ! /usr/bin/python3 -c "import torchvision" 2>/dev/null; then
  SUDO=
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torchvision || exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
for name in "$@"; do
  /usr/bin/python3 - "$name" "$tmp" <<'PY' || { echo "FAIL: $name: export"; fail=1; continue; }
import sys, warnings
import numpy as np
import torch, torchvision
warnings.filterwarnings("ignore")
name, out = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
torch.set_num_threads(1)
nn = torch.nn
if name == "mlp":
    m, x = nn.Sequential(nn.Linear(20, 30), nn.ReLU(), nn.Linear(30, 5), nn.LogSoftmax(-1)), torch.randn(4, 20)
elif name in ("encoder", "encoder_gelu"):
    act = "gelu" if name == "encoder_gelu" else "relu"
    m = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0, activation=act,
                                   batch_first=True)
    x = torch.randn(2, 10, 64)
else:
    m, x = getattr(torchvision.models, name)(), torch.randn(1, 3, 224, 224)
m = m.eval()
with torch.no_grad():
    y = m(x)
torch.onnx.export(m, (x,), f"{out}/{name}.onnx", input_names=["input"], output_names=["output"], opset_version=13)
np.save(f"{out}/{name}.in.npy", x.numpy())
np.save(f"{out}/{name}.out.npy", y.numpy())
PY
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$relayc" build "$tmp/$name.onnx" -o "$tmp/$name.so" ||
    { echo "FAIL: $name: build"; fail=1; continue; }
  read secs kb <"$tmp/time"
  run=$("$relayc" run "$tmp/$name.so" --input "input=$tmp/$name.in.npy" --output "$tmp/$name.got.npy" --repeat 1 |
        sed -n 's/^time_ms: median=\([0-9.]*\).*/\1/p')
  if "$npycmp" --rtol 1e-4 --atol 1e-4 "$tmp/$name.got.npy" "$tmp/$name.out.npy"; then
    echo "$name: build ${secs} s, peak ${kb} KB; run ${run} ms; matches PyTorch within 1e-4"
  else
    echo "FAIL: $name: the output differs from PyTorch's"
    fail=1
  fi
done
exit $fail
