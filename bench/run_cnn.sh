#!/bin/sh
# CNN benchmark: relayc against ONNX Runtime and PyTorch eager on torchvision
# classifiers with fixed-seed random weights (bench/models/cnn.py), batch 1,
# one 1x3x224x224 image, THREADS threads (default 1).
#
#   sh bench/run_cnn.sh BUILD/relayc [MODEL ...]
#
# MODEL is a torchvision.models name (default: resnet18 mobilenet_v2
# resnet50). For each model the script
#   1. exports it with torch.onnx.export (opset 13) and imports it with
#      `relayc import model.onnx -o model.relay --params-out model.params`
#      (Relay text and TVM's .params), then builds it with
#      `relayc build model.relay --params model.params` (relayc's default
#      -O2, baseline x86-64 with AVX2/AVX-512 versions of the kernels);
#   2. runs relayc, ONNX Runtime (npm's onnxruntime-node,
#      bench/models/ort_run.js) and PyTorch eager once each and compares the
#      outputs with PyTorch's (max |out - ref| / max |ref| <= TOL); a model
#      whose outputs disagree is not timed and the exit status is 1;
#   3. times each engine: median and minimum wall time of REPEAT calls after
#      a warm-up, and prints a table with the ratios engine / relayc (below
#      1: the engine is faster), the build time and relayc's GFLOP/s. With
#      ROUNDS=N (N > 1) the engines take turns N times, REPEAT calls each
#      per turn, and the table gives the median of the turns' medians, the
#      least minimum and all the calls: on a host whose speed drifts from
#      minute to minute, engines timed one after the other are compared at
#      different speeds.
# It first prints the CPU, and one core's FMA peak (bench/models/peak.c).
#
# Environment: THREADS (each engine's threads: relayc's `build --threads`
# and `run --threads`, ONNX Runtime's intra-op threads, torch's
# set_num_threads; default 1), REPEAT (default 30), WARMUP (peers' warm-up
# calls, default 5), ROUNDS (1), TOL (1e-4), PYTHON (/usr/bin/python3, with torch and
# torchvision), NODE_DIR (where onnxruntime-node is installed; default bench/node, which
# bench/run_models.sh fills), KEEP=1 (keep the files, under bench/out/).
set -u
if [ $# -lt 1 ]; then
  echo "usage: sh bench/run_cnn.sh PATH/TO/relayc [MODEL ...]" >&2
  exit 2
fi
RELAYC=$1
shift
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
[ -x "$RELAYC" ] || { echo "bench: $RELAYC is not an executable" >&2; exit 2; }
MODELS="resnet18 mobilenet_v2 resnet50"
[ $# -gt 0 ] && MODELS=$*
REPEAT=${REPEAT:-30}
ROUNDS=${ROUNDS:-1}
export THREADS=${THREADS:-1}
TOL=${TOL:-1e-4}
PYTHON=${PYTHON:-/usr/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/models
NODE_DIR=${NODE_DIR:-$HERE/node}
export WARMUP=${WARMUP:-5}
mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/cnn.XXXXXX") || exit 1
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then echo "bench: files kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The peers run on THREADS threads.
peer() { env OMP_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" "$@"; }

HAVE_ORT=1
node -e "require(require.resolve('onnxruntime-node', {paths: [process.argv[1]]}))" "$NODE_DIR" >/dev/null 2>&1 ||
  HAVE_ORT=0
CPU=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)
ISA=baseline
grep -qw avx2 /proc/cpuinfo && ISA=AVX2
grep -qw avx512f /proc/cpuinfo && ISA=AVX-512
echo "bench: $CPU, $(nproc) CPUs, $ISA, cc $(cc -dumpfullversion 2>/dev/null || echo '?'), load average" \
  "$(cut -d ' ' -f 1-3 /proc/loadavg)"
echo "bench: torch $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)," \
  "torchvision $("$PYTHON" -c 'import torchvision; print(torchvision.__version__)' 2>/dev/null)"
if [ $HAVE_ORT = 1 ]; then
  echo "bench: onnxruntime-node $(node -e "console.log(require(require.resolve('onnxruntime-node/package.json', {paths: [process.argv[1]]})).version)" "$NODE_DIR")"
else
  echo "bench: no onnxruntime-node in $NODE_DIR (sh bench/run_models.sh installs it): ONNX Runtime not run"
fi
if cc -std=c11 -D_POSIX_C_SOURCE=199309L -O2 -o "$WORK/peak" "$SRC/peak.c" 2>/dev/null; then
  "$WORK/peak" | grep fma | sed 's/^peak: /bench: peak /'
fi

# GFLOP of one image (multiply-adds x 2) of the convolutions and dense layers.
gflop() {
  case $1 in
    resnet18) echo 3.64 ;;
    resnet50) echo 8.18 ;;
    mobilenet_v2) echo 0.60 ;;
    *) echo 0 ;;
  esac
}

FAILED=0
ROWS=$WORK/rows
: >"$ROWS"
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$ROWS"; }
timed() { # timed MODEL ENGINE FILE
  _t=$(sed -n 's/.*time_ms: median=\([0-9.]*\) min=\([0-9.]*\) max=[0-9.]* n=\([0-9]*\).*/\1\t\2\t\3/p' "$3" | tail -n 1)
  if [ -z "$_t" ]; then
    echo "bench: $1: $2 printed no time:" >&2
    head -n 20 "$3" >&2
    row "$1" "$2" FAILED
    FAILED=1
    return 1
  fi
  printf '%s\t%s\t%s\n' "$1" "$2" "$_t" >>"$ROWS"
}

# rounds FILE: several turns' "time_ms:" lines -> one more line (the last,
# which `timed` reads): the median of the medians, the least minimum, the
# largest maximum and all the calls. A file with one such line is left.
rounds() {
  [ "$(grep -c 'time_ms: median=' "$1")" -gt 1 ] || return 0
  sed -n 's/.*time_ms: median=\([0-9.]*\) min=\([0-9.]*\) max=\([0-9.]*\) n=\([0-9]*\).*/\1 \2 \3 \4/p' "$1" |
    sort -n | awk '{ med[NR] = $1; if (NR == 1 || $2 < lo) lo = $2; if ($3 > hi) hi = $3; n += $4 }
      END { m = NR % 2 ? med[(NR + 1) / 2] : (med[NR / 2] + med[NR / 2 + 1]) / 2
            printf "rounds %d: time_ms: median=%.3f min=%.3f max=%.3f n=%d\n", NR, m, lo, hi, n }' >>"$1"
}

for m in $MODELS; do
  D=$WORK/$m
  echo "bench: $m: exporting, importing, building"
  if ! peer "$PYTHON" "$SRC/cnn.py" gen "$D" "$m" >"$WORK/$m.gen.log" 2>&1; then
    tail -n 20 "$WORK/$m.gen.log" >&2
    row "$m" all FAILED
    FAILED=1
    continue
  fi
  t0=$(date +%s.%N)
  if ! (cd "$D" && "$RELAYC" import model.onnx -o model.relay --params-out model.params &&
        "$RELAYC" build model.relay --params model.params -o model.so --threads "$THREADS") >"$D/build.log" 2>&1; then
    head -n 20 "$D/build.log" >&2
    row "$m" relayc FAILED
    FAILED=1
    continue
  fi
  t1=$(date +%s.%N)
  echo "bench: $m: import and build $(echo "$t1 - $t0" | bc) s"
  OUTS=""
  if (cd "$D" && "$RELAYC" run model.so --input input=input.npy --output relayc.npy --threads "$THREADS") >"$D/relayc.log" 2>&1; then
    OUTS="relayc=$D/relayc.npy"
  else
    head -n 20 "$D/relayc.log" >&2
    row "$m" relayc FAILED
    FAILED=1
    continue
  fi
  ORT=0
  if [ $HAVE_ORT = 1 ] && peer node "$SRC/ort_run.js" "$NODE_DIR" "$D/model.onnx" "$D/input.npy" check "$D/ort.npy" \
      >"$D/ort.log" 2>&1; then
    ORT=1
    OUTS="$OUTS onnxruntime=$D/ort.npy"
  elif [ $HAVE_ORT = 1 ]; then
    head -n 20 "$D/ort.log" >&2
    row "$m" onnxruntime FAILED
    FAILED=1
  fi
  # shellcheck disable=SC2086
  if ! "$PYTHON" "$SRC/compare.py" "$TOL" "$D/torch.npy" $OUTS; then
    echo "bench: $m: the outputs disagree (tolerance $TOL); not timed" >&2
    row "$m" all WRONG
    FAILED=1
    continue
  fi
  if [ "$ROUNDS" -gt 1 ]; then echo "bench: $m: timing, $ROUNDS rounds"; else echo "bench: $m: timing"; fi
  : >"$D/relayc.time"; : >"$D/ort.time"; : >"$D/torch.time"
  r=0
  while [ $r -lt "$ROUNDS" ]; do
    r=$((r + 1))
    (cd "$D" && "$RELAYC" run model.so --input input=input.npy --repeat "$REPEAT" --threads "$THREADS") >>"$D/relayc.time" 2>&1
    [ $ORT = 1 ] && peer node "$SRC/ort_run.js" "$NODE_DIR" "$D/model.onnx" "$D/input.npy" time "$REPEAT" \
      >>"$D/ort.time" 2>&1
    peer "$PYTHON" "$SRC/cnn.py" time "$D" "$m" "$REPEAT" >>"$D/torch.time" 2>&1
  done
  for f in relayc ort torch; do rounds "$D/$f.time"; done
  timed "$m" relayc "$D/relayc.time"
  [ $ORT = 1 ] && timed "$m" onnxruntime "$D/ort.time"
  timed "$m" "torch eager" "$D/torch.time"
done

echo
awk -F '\t' -v r18="$(gflop resnet18)" -v r50="$(gflop resnet50)" -v mb2="$(gflop mobilenet_v2)" '
  BEGIN {
    gf["resnet18"] = r18; gf["resnet50"] = r50; gf["mobilenet_v2"] = mb2
    f = "| %-12s | %-12s | %10s | %10s | %5s | %15s | %12s | %8s |\n"
    printf f, "model", "engine", "median ms", "min ms", "calls", "median / relayc", "min / relayc", "GFLOP/s"
    printf "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n"
  }
  NF == 3 { printf "| %-12s | %-12s | %s |\n", $1, $2, $3; next }
  {
    if ($2 == "relayc") { base[$1] = $3; mbase[$1] = $4 }
    r = ($1 in base && base[$1] > 0) ? sprintf("%.2f", $3 / base[$1]) : "-"
    rm = ($1 in mbase && mbase[$1] > 0) ? sprintf("%.2f", $4 / mbase[$1]) : "-"
    g = ($1 in gf && $4 > 0) ? sprintf("%.1f", gf[$1] * 1000 / $4) : "-"
    printf "| %-12s | %-12s | %10.3f | %10.3f | %5d | %15s | %12s | %8s |\n", $1, $2, $3, $4, $5, r, rm, g
  }
' "$ROWS"
echo
[ "$ROUNDS" -gt 1 ] && echo "bench: $ROUNDS interleaved rounds of $REPEAT calls per engine: the median of the rounds' medians"
echo "bench: wall time per call (median and minimum), $THREADS thread(s); GFLOP/s from the minimum;" \
  "load average now $(cut -d ' ' -f 1-3 /proc/loadavg)"
exit $FAILED
