#!/bin/sh
# GEMM/GEMV kernels of relayc against OpenBLAS, in CPU time per call.
#
#   sh bench/run_gemm.sh BUILD/relayc
#
# For each shape (M x N x K of nn.dense, and one nn.batch_matmul) it writes
# random float32 inputs (numpy), builds a one-call Relay program with
# `relayc build` (default -O2; the kernel picks AVX-512, AVX2 or the
# portable version at run time), and OpenBLAS's cblas_sgemm
# (bench/models/sgemm.c, square shapes only, OPENBLAS_NUM_THREADS=1,
# OPENBLAS_CORETYPE=SkylakeX unless set). Each engine runs REPEAT calls
# (default 40 for the 1024^3 shapes, more for the small ones; one warm-up); the script prints the wall-time median
# and minimum that the engine reports and the CPU time per call: user+sys
# time of a run of REPEAT + 1 calls minus that of a run of 1, over REPEAT.
# On a machine that others share, CPU time does not count the time slices
# given to other jobs, which wall time does; it still counts their cache
# pollution. GFLOP/s are 2 M N K / time.
# THREADS=N (default 1) runs relayc's kernels on N threads (relayc run
# --threads N) and OpenBLAS on N too; CPU time then sums the threads', so
# compare wall times.
set -u
if [ $# -lt 1 ]; then
  echo "usage: sh bench/run_gemm.sh PATH/TO/relayc" >&2
  exit 2
fi
RELAYC=$1
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
REPEAT=${REPEAT:-40}
PYTHON=${PYTHON:-/usr/bin/python3}
THREADS=${THREADS:-1}
export OPENBLAS_NUM_THREADS=$THREADS
ENGINE=relayc
[ "$THREADS" = 1 ] || ENGINE="relayc ($THREADS threads)"
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/gemm.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

# cpu_s CMD...: user + sys seconds of CMD
cpu_s() {
  /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print $1 + $2}'
}

if cc -O2 "$HERE/models/sgemm.c" $(pkg-config --cflags --libs openblas 2>/dev/null) -o sgemm 2>/dev/null; then
  HAVE_BLAS=1
else
  HAVE_BLAS=0
  echo "bench: no OpenBLAS (libopenblas-dev): relayc only" >&2
fi

printf '| kernel | M x N x K | engine | median ms | min ms | CPU ms/call | GFLOP/s (CPU) |\n'
printf '| --- | --- | --- | ---: | ---: | ---: | ---: |\n'

# run NAME M N K RELAY_BODY PARAMS INPUTS [CALLS]: one program, relayc's times
run() {
  name=$1 m=$2 n=$3 k=$4 body=$5 params=$6 inputs=$7
  REPEAT_SAVED=$REPEAT
  REPEAT=${8:-$REPEAT}
  printf '#[version = "0.0.5"]\ndef @main(%s) {\n  %s\n}\n' "$params" "$body" >"$name.relay"
  "$RELAYC" build "$name.relay" -o "$name.so" || return 1
  line=$("$RELAYC" run "$name.so" $inputs --threads "$THREADS" --repeat "$REPEAT" | tail -1)
  a=$(cpu_s "$RELAYC" run "$name.so" $inputs --threads "$THREADS" --repeat $((REPEAT + 1)))
  b=$(cpu_s "$RELAYC" run "$name.so" $inputs --threads "$THREADS" --repeat 1)
  report "$name" "$m" "$n" "$k" "$ENGINE" "$line" "$a" "$b"
  REPEAT=$REPEAT_SAVED
}

# report NAME M N K ENGINE "time_ms: ..." CPU_ALL CPU_NONE
report() {
  med=$(echo "$6" | sed -n 's/.*median=\([0-9.]*\).*/\1/p')
  min=$(echo "$6" | sed -n 's/.*min=\([0-9.]*\).*/\1/p')
  awk -v name="$1" -v m="$2" -v n="$3" -v k="$4" -v e="$5" -v med="$med" -v min="$min" -v a="$7" -v b="$8" -v r="$REPEAT" \
    'BEGIN { c = (a - b) / r * 1000; g = c > 0 ? 2 * m * n * k / (c * 1e6) : 0;
             printf "| %s | %d x %d x %d | %s | %s | %s | %.2f | %.1f |\n", name, m, n, k, e, med, min, c, g }'
}

"$PYTHON" - <<'PY' || exit 1
import numpy as np
r = np.random.default_rng(0)
for name, shape in [("a1024", (1024, 1024)), ("b1024", (1024, 1024)), ("x784", (1, 784)), ("w784", (512, 784)),
                    ("x37", (37, 300)), ("w37", (45, 300)), ("bias512", (512,)), ("ba", (16, 128, 64)),
                    ("bb", (16, 64, 128))]:
    np.save(name + ".npy", r.standard_normal(shape).astype(np.float32))
PY

run dense 1024 1024 1024 'nn.dense(%a, %b)' \
  "%a: Tensor[(1024, 1024), float32], %b: Tensor[(1024, 1024), float32]" "--input a=a1024.npy --input b=b1024.npy"
if [ $HAVE_BLAS = 1 ]; then
  line=$(./sgemm time a1024.npy b1024.npy "$REPEAT" 2>/dev/null | tail -1)
  a=$(cpu_s ./sgemm time a1024.npy b1024.npy $((REPEAT + 1)))
  b=$(cpu_s ./sgemm time a1024.npy b1024.npy 1)
  report dense 1024 1024 1024 "openblas sgemm ($OPENBLAS_CORETYPE, $THREADS thread(s))" "$line" "$a" "$b"
fi
run dense_relu 1024 1024 1024 'nn.relu(nn.dense(%a, %b))' \
  "%a: Tensor[(1024, 1024), float32], %b: Tensor[(1024, 1024), float32]" "--input a=a1024.npy --input b=b1024.npy"
run gemv 1 512 784 'nn.dense(%x, %w)' \
  "%x: Tensor[(1, 784), float32], %w: Tensor[(512, 784), float32]" "--input x=x784.npy --input w=w784.npy" 20000
run gemv_bias_relu 1 512 784 'nn.relu(nn.bias_add(nn.dense(%x, %w), %b))' \
  "%x: Tensor[(1, 784), float32], %w: Tensor[(512, 784), float32], %b: Tensor[(512), float32]" \
  "--input x=x784.npy --input w=w784.npy --input b=bias512.npy" 20000
run dense_odd 37 45 300 'nn.dense(%x, %w)' \
  "%x: Tensor[(37, 300), float32], %w: Tensor[(45, 300), float32]" "--input x=x37.npy --input w=w37.npy" 20000
run batch_matmul 2048 128 64 'nn.batch_matmul(%a, %b, transpose_b=False)' \
  "%a: Tensor[(16, 128, 64), float32], %b: Tensor[(16, 64, 128), float32]" "--input a=ba.npy --input b=bb.npy" 2000
