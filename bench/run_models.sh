#!/bin/sh
# Model benchmark: relayc's compiled code against PyTorch (eager and
# TorchScript), ONNX Runtime and OpenBLAS on four models with fixed-seed
# weights (bench/models/gen.py): an MLP, an LSTM stepped by a recursive loop,
# a Tree-LSTM over an ADT tree, and a 1024x1024x1024 dense.
#
#   sh bench/run_models.sh BUILD/relayc [MODEL ...]
#
# MODEL is one of mlp lstm treelstm dense (default: all). The script
#   1. installs what the peers need when it is missing (Debian's
#      python3-torch python3-numpy python3-onnx libopenblas0-pthread
#      libopenblas-dev, nodejs and npm when there is no node; npm's
#      onnxruntime-node into bench/node/ with --ignore-scripts);
#   2. generates the models (Relay text, .params, inputs) and builds each
#      with `relayc build --params model.params` at relayc's default -O2;
#   3. runs every engine once and compares its output with PyTorch eager's
#      (max |out - ref| / max |ref| <= TOL); a model whose outputs disagree
#      is not timed and the exit status is 1;
#   4. times each engine: median and minimum wall time of REPEAT calls
#      after a warm-up (relayc: `relayc run model.so --repeat N`, one
#      warm-up call; the peers: WARMUP calls), and prints one table with
#      the ratios engine / relayc of the medians and of the minima (below
#      1: the engine is faster). On a shared machine the minimum is the
#      steadier figure: preemption inflates the median, most of all for
#      calls of several milliseconds.
#
# It first prints the machine (CPU, vector ISA, OpenBLAS's kernels) and one
# core's limits measured by bench/models/peak.c: float32 FMA GFLOP/s with
# AVX2 and AVX-512, and read GB/s from L2, L3 and memory.
#
# Everything runs on one thread. The peers run with OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE unset and OPENBLAS_NUM_THREADS=1 (relayc's runs keep the
# environment as it is). Debian's OpenBLAS 0.3.21 does not know every recent
# CPU and falls back to its SSE3 kernels (core Prescott); PEER_CORETYPE=auto
# (the default) then names the kernel set the CPU can run (SkylakeX with
# AVX-512, Haswell with AVX2) for the peers and says so; the dense model
# also times OpenBLAS with the core it detected. PEER_CORETYPE=detected
# keeps OpenBLAS's own choice, any other value is passed as
# OPENBLAS_CORETYPE.
#
# Environment: REPEAT (calls per engine, default 200), DENSE_REPEAT (the
# peers' calls on dense, default 50), DENSE_REPEAT_RELAYC (relayc's calls on
# dense, default 10: about 0.8 s each with the reference loop), WARMUP
# (peer warm-up calls, default 5), TOL (default 1e-4), OPT (relayc's C
# level, e.g. -O3; default relayc's -O2), PEER_CORETYPE (auto), PYTHON (a
# python3 with torch; default /usr/bin/python3), NODE_DIR (where npm
# installs onnxruntime-node; default bench/node), ORT_VERSION (1.30.0),
# INSTALL=0 (install nothing: a missing peer is reported as unavailable),
# KEEP=1 (keep the generated files). Files go to a fresh directory under
# bench/out/ (generated output).
set -u

if [ $# -lt 1 ]; then
  echo "usage: sh bench/run_models.sh PATH/TO/relayc [MODEL ...]" >&2
  exit 2
fi
RELAYC=$1
shift
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
if [ ! -x "$RELAYC" ]; then
  echo "bench: $RELAYC is not an executable (build it first: make build)" >&2
  exit 2
fi

MODELS="mlp lstm treelstm dense"
if [ $# -gt 0 ]; then
  MODELS=$*
fi
for m in $MODELS; do
  case $m in mlp | lstm | treelstm | dense) ;; *)
    echo "bench: unknown model '$m' (mlp, lstm, treelstm, dense)" >&2
    exit 2 ;;
  esac
done

REPEAT=${REPEAT:-200}
DENSE_REPEAT=${DENSE_REPEAT:-50}
DENSE_REPEAT_RELAYC=${DENSE_REPEAT_RELAYC:-10}
WARMUP=${WARMUP:-5}
TOL=${TOL:-1e-4}
OPT=${OPT:-}
PEER_CORETYPE=${PEER_CORETYPE:-auto}
PYTHON=${PYTHON:-/usr/bin/python3}
INSTALL=${INSTALL:-1}
ORT_VERSION=${ORT_VERSION:-1.30.0}
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/models
NODE_DIR=${NODE_DIR:-$HERE/node}
export WARMUP

mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/models.XXXXXX") || exit 1
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "bench: files kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
LOG=$WORK/install.log
: >"$LOG"

# {==== Installing the peers ====}

APT_UPDATED=0

# apt_install PKG...: installs Debian packages (needs root and INSTALL=1).
apt_install() {
  if [ "$INSTALL" != 1 ]; then
    echo "bench: missing $* (INSTALL=0: not installing)" >&2
    return 1
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "bench: missing $*: run as root to install them (apt-get install -y $*)" >&2
    return 1
  fi
  if [ $APT_UPDATED = 0 ]; then
    echo "bench: apt-get update"
    apt-get update >>"$LOG" 2>&1
    APT_UPDATED=1
  fi
  echo "bench: apt-get install -y $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y "$@" >>"$LOG" 2>&1; then
    echo "bench: apt-get install $* failed:" >&2
    tail -n 5 "$LOG" >&2
    return 1
  fi
}

# deb_missing PKG...: prints the packages that are not installed.
deb_missing() {
  for p in "$@"; do
    case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) in
      "install ok installed") ;;
      *) printf '%s ' "$p" ;;
    esac
  done
}

PKGS=$(deb_missing python3-torch python3-numpy python3-onnx libopenblas0-pthread libopenblas-dev)
if [ -n "$PKGS" ]; then
  # shellcheck disable=SC2086
  apt_install $PKGS
fi
if ! "$PYTHON" -c 'import torch, numpy' >/dev/null 2>&1; then
  echo "bench: $PYTHON cannot import torch and numpy (Debian's python3-torch, python3-numpy)" >&2
  exit 1
fi
HAVE_ONNX=1
"$PYTHON" -c 'import onnx' >/dev/null 2>&1 || HAVE_ONNX=0
HAVE_BLAS=1
pkg-config --exists openblas 2>/dev/null || HAVE_BLAS=0

# ONNX Runtime for Node.js: npm's onnxruntime-node carries its CPU library
# (bin/napi-v*/linux/x64/); its install script only fetches the CUDA and
# TensorRT libraries, so --ignore-scripts is enough.
HAVE_ORT=0
ORT_WHY=""
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
ort_loads() {
  node -e "require(require.resolve('onnxruntime-node', {paths: [process.argv[1]]}))" "$NODE_DIR" >/dev/null 2>&1
}
if ! command -v node >/dev/null 2>&1; then
  ORT_WHY="no node"
elif ort_loads; then
  HAVE_ORT=1
elif [ "$INSTALL" != 1 ]; then
  ORT_WHY="onnxruntime-node not in $NODE_DIR (INSTALL=0)"
else
  echo "bench: npm install --ignore-scripts onnxruntime-node@$ORT_VERSION (into $NODE_DIR)"
  mkdir -p "$NODE_DIR" &&
    (cd "$NODE_DIR" && npm install --ignore-scripts --no-audit --no-fund --prefix . \
      "onnxruntime-node@$ORT_VERSION") >>"$LOG" 2>&1
  if ort_loads; then
    HAVE_ORT=1
  else
    ORT_WHY="onnxruntime-node does not load (see npm's log)"
    tail -n 5 "$LOG" >&2
  fi
fi
[ $HAVE_ONNX = 1 ] || ORT_WHY="no python3-onnx to write the model"
[ $HAVE_ONNX = 1 ] || HAVE_ORT=0

# {==== The peers' environment ====}

# OpenBLAS's choice of kernels with the environment cleared, and the CPU's.
detect_core() {
  # shellcheck disable=SC2086
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 $1 "$PYTHON" -c '
import ctypes
lib = ctypes.CDLL("libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
print(lib.openblas_get_corename().decode())' 2>/dev/null || echo unknown
}
CORE_DETECTED=$(detect_core "")
ISA=none
if grep -qw avx512f /proc/cpuinfo; then
  ISA=AVX-512
elif grep -qw avx2 /proc/cpuinfo; then
  ISA=AVX2
fi
CORE_ENV=""
case $PEER_CORETYPE in
  detected) ;;
  auto)
    case "$ISA:$CORE_DETECTED" in
      AVX-512:SkylakeX | AVX-512:Cooperlake | AVX-512:SapphireRapids | AVX-512:unknown) ;;
      AVX-512:*) CORE_ENV=OPENBLAS_CORETYPE=SkylakeX ;;
      AVX2:Haswell | AVX2:Zen | AVX2:SkylakeX | AVX2:unknown) ;;
      AVX2:*) CORE_ENV=OPENBLAS_CORETYPE=Haswell ;;
    esac ;;
  *) CORE_ENV=OPENBLAS_CORETYPE=$PEER_CORETYPE ;;
esac
CORE_USED=$CORE_DETECTED
[ -n "$CORE_ENV" ] && CORE_USED=$(detect_core "$CORE_ENV")

# peer CMD...: a peer's command, with the BLAS environment of the peers.
peer() {
  # shellcheck disable=SC2086
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $CORE_ENV "$@"
}

CPU=$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1)
FAMILY=$(sed -n 's/^cpu family[^:]*: *//p' /proc/cpuinfo | head -n 1)
CPU_MODEL=$(sed -n 's/^model[[:space:]]*: *//p' /proc/cpuinfo | head -n 1)
echo "bench: $CPU (family $FAMILY model $CPU_MODEL), $(nproc 2>/dev/null || echo '?') CPUs, $ISA," \
  "cc $(cc -dumpfullversion 2>/dev/null || echo '?'), load average $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "bench: torch $("$PYTHON" -c 'import torch; print(torch.__version__)' 2>/dev/null)," \
  "BLAS $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || echo '?')"
if [ -n "$CORE_ENV" ]; then
  echo "bench: OpenBLAS detects core $CORE_DETECTED on this $ISA CPU; the peers run with $CORE_ENV (core $CORE_USED)"
else
  echo "bench: OpenBLAS core $CORE_USED"
fi
if [ $HAVE_ORT = 1 ]; then
  echo "bench: onnxruntime-node $(node -e "console.log(require(require.resolve('onnxruntime-node/package.json', {paths: [process.argv[1]]})).version)" "$NODE_DIR"), node $(node --version)"
else
  echo "bench: no ONNX Runtime: $ORT_WHY"
fi

# One core's limits (bench/models/peak.c): FMA throughput and read bandwidth.
if cc -std=c11 -D_POSIX_C_SOURCE=199309L -O2 -o "$WORK/peak" "$SRC/peak.c" 2>"$WORK/peak.log"; then
  "$WORK/peak" | sed 's/^peak: /bench: peak /'
else
  echo "bench: no peak figures (bench/models/peak.c needs an x86-64 C compiler)"
fi

# {==== Models ====}

echo "bench: generating the models"
if ! "$PYTHON" "$SRC/gen.py" "$WORK" >"$WORK/gen.log" 2>&1; then
  cat "$WORK/gen.log" >&2
  exit 1
fi
if [ $HAVE_BLAS = 1 ]; then
  # shellcheck disable=SC2046
  if ! cc -std=c11 -D_POSIX_C_SOURCE=199309L -O2 -o "$WORK/sgemm" "$SRC/sgemm.c" \
      $(pkg-config --cflags --libs openblas) 2>"$WORK/sgemm.log"; then
    cat "$WORK/sgemm.log" >&2
    HAVE_BLAS=0
  fi
fi

FAILED=0
ROWS=$WORK/rows
: >"$ROWS"

# row MODEL ENGINE WORD: a table row with no numbers (FAILED, WRONG, ...).
row() {
  printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$ROWS"
}

# timed MODEL ENGINE FILE: the row of FILE's "time_ms: median=M min=A max=B
# n=N" line (the last one).
timed() {
  _t=$(sed -n 's/.*time_ms: median=\([0-9.]*\) min=\([0-9.]*\) max=[0-9.]* n=\([0-9]*\).*/\1\t\2\t\3/p' "$3" | tail -n 1)
  if [ -z "$_t" ]; then
    echo "bench: $1: $2 printed no time_ms line:" >&2
    head -n 20 "$3" >&2
    row "$1" "$2" FAILED
    FAILED=1
    return 1
  fi
  printf '%s\t%s\t%s\n' "$1" "$2" "$_t" >>"$ROWS"
}

# torch_engines MODEL: the engines of torch_peer.py, with their table names.
torch_engines() {
  case $1 in
    mlp | dense) echo "eager script" ;;
    lstm) echo "eager nn.LSTM script" ;;
    treelstm) echo "eager script trace" ;;
  esac
}
torch_label() {
  case $1 in
    eager) echo "torch eager" ;;
    nn.LSTM) echo "torch eager nn.LSTM" ;;
    script) echo "torch jit.script" ;;
    trace) echo "torch jit.trace" ;;
  esac
}

for m in $MODELS; do
  D=$WORK/$m
  n=$REPEAT
  nr=$REPEAT
  if [ "$m" = dense ]; then
    n=$DENSE_REPEAT
    nr=$DENSE_REPEAT_RELAYC
  fi
  INPUTS=$(sed 's/^/--input /' "$D/inputs.txt")
  PARAMS=""
  [ -f "$D/model.params" ] && PARAMS="--params model.params"
  echo "bench: $m: building and checking"
  # shellcheck disable=SC2086
  if ! (cd "$D" && "$RELAYC" build $PARAMS model.relay -o model.so $OPT) >"$D/build.log" 2>&1; then
    echo "bench: $m: relayc build failed:" >&2
    head -n 20 "$D/build.log" >&2
    row "$m" relayc FAILED
    FAILED=1
    continue
  fi
  # 1. One run of every engine, outputs compared with PyTorch eager's.
  # shellcheck disable=SC2086
  if ! (cd "$D" && "$RELAYC" run model.so $INPUTS --output relayc.npy) >"$D/relayc.log" 2>&1; then
    echo "bench: $m: relayc run failed:" >&2
    head -n 20 "$D/relayc.log" >&2
    row "$m" relayc FAILED
    FAILED=1
    continue
  fi
  if ! peer "$PYTHON" "$SRC/torch_peer.py" check "$m" "$D" "$D/torch" >"$D/torch.log" 2>&1; then
    echo "bench: $m: torch_peer.py check failed:" >&2
    tail -n 20 "$D/torch.log" >&2
    row "$m" torch FAILED
    FAILED=1
    continue
  fi
  OUTS="relayc=$D/relayc.npy"
  for e in $(torch_engines "$m"); do
    [ "$e" = eager ] || OUTS="$OUTS torch-$e=$D/torch/$e.npy"
  done
  ORT=0
  if [ "$m" = lstm ] && [ $HAVE_ORT = 1 ]; then
    if peer "$PYTHON" "$SRC/lstm_onnx.py" "$D" >"$D/onnx.log" 2>&1 &&
       peer node "$SRC/ort_lstm.js" "$NODE_DIR" "$D/lstm.onnx" "$D/xs.npy" check "$D/ort.npy" >>"$D/onnx.log" 2>&1; then
      ORT=1
      OUTS="$OUTS onnxruntime=$D/ort.npy"
    else
      echo "bench: lstm: ONNX Runtime failed:" >&2
      tail -n 10 "$D/onnx.log" >&2
      row "$m" onnxruntime FAILED
      FAILED=1
    fi
  fi
  BLAS=0
  if [ "$m" = dense ] && [ $HAVE_BLAS = 1 ]; then
    if peer "$WORK/sgemm" check "$D/a.npy" "$D/b.npy" "$D/sgemm.npy" 2>"$D/sgemm.log"; then
      BLAS=1
      OUTS="$OUTS openblas=$D/sgemm.npy"
    else
      cat "$D/sgemm.log" >&2
      row "$m" "openblas sgemm" FAILED
      FAILED=1
    fi
  fi
  # shellcheck disable=SC2086
  if ! "$PYTHON" "$SRC/compare.py" "$TOL" "$D/torch/eager.npy" $OUTS >"$D/compare.log" 2>&1; then
    cat "$D/compare.log"
    echo "bench: $m: the outputs disagree (tolerance $TOL); not timed" >&2
    row "$m" all WRONG
    FAILED=1
    continue
  fi
  cat "$D/compare.log"

  # 2. Times.
  echo "bench: $m: timing"
  # shellcheck disable=SC2086
  (cd "$D" && "$RELAYC" run model.so $INPUTS --repeat "$nr") >"$D/relayc.time" 2>&1
  timed "$m" relayc "$D/relayc.time"
  # shellcheck disable=SC2046
  peer "$PYTHON" "$SRC/torch_peer.py" time "$m" "$D" "$n" >"$D/torch.time" 2>&1
  for e in $(torch_engines "$m"); do
    grep "^$e time_ms:" "$D/torch.time" >"$D/torch.$e.time"
    timed "$m" "$(torch_label "$e")" "$D/torch.$e.time" || cat "$D/torch.time" >&2
  done
  if [ $ORT = 1 ]; then
    peer node "$SRC/ort_lstm.js" "$NODE_DIR" "$D/lstm.onnx" "$D/xs.npy" time "$n" >"$D/ort.time" 2>&1
    timed "$m" "onnxruntime LSTM op" "$D/ort.time"
  elif [ "$m" = lstm ] && [ $HAVE_ORT = 0 ]; then
    row "$m" "onnxruntime LSTM op" "unavailable: $ORT_WHY"
  fi
  if [ $BLAS = 1 ]; then
    peer "$WORK/sgemm" time "$D/a.npy" "$D/b.npy" "$n" >"$D/sgemm.time" 2>&1
    timed "$m" "openblas sgemm ($CORE_USED)" "$D/sgemm.time"
    if [ -n "$CORE_ENV" ]; then
      env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 \
        "$WORK/sgemm" time "$D/a.npy" "$D/b.npy" "$n" >"$D/sgemm0.time" 2>&1
      timed "$m" "openblas sgemm ($CORE_DETECTED)" "$D/sgemm0.time"
    fi
  elif [ "$m" = dense ]; then
    row "$m" "openblas sgemm" "unavailable: no libopenblas-dev"
  fi
done

# {==== Table ====}

echo
awk -F '\t' -v dense=1024 '
  BEGIN {
    f = "| %-8s | %-28s | %10s | %10s | %5s | %15s | %12s |\n"
    printf f, "model", "engine", "median ms", "min ms", "calls", "median / relayc", "min / relayc"
    printf "| %s | %s | %s | %s | %s | %s | %s |\n", "---", "---", "---:", "---:", "---:", "---:", "---:"
  }
  NF == 3 { printf "| %-8s | %-28s | %s |\n", $1, $2, $3; next }
  {
    if ($2 == "relayc") { base[$1] = $3; mbase[$1] = $4 }
    r = ($1 in base && base[$1] > 0) ? sprintf("%.2f", $3 / base[$1]) : "-"
    rm = ($1 in mbase && mbase[$1] > 0) ? sprintf("%.2f", $4 / mbase[$1]) : "-"
    printf "| %-8s | %-28s | %10.3f | %10.3f | %5d | %15s | %12s |\n", $1, $2, $3, $4, $5, r, rm
    if ($1 == "dense") gf[++ngf] = sprintf("dense: %s %.1f GFLOP/s", $2, 2 * dense * dense * dense / ($3 * 1e6))
  }
  END {
    for (i = 1; i <= ngf; i++) print gf[i]
  }
' "$ROWS"
echo
echo "bench: wall time per call (median and minimum of the calls), one thread;" \
  "load average now $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')"

exit $FAILED
