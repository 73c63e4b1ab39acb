#!/bin/sh
# threads_test.sh RELAYC: kernels split over threads give the same bits for
# any thread count (lower/*.c, runtime/src/threads.c).
#   - every tests/run program with a tensor result is built once with
#     RLY_SPLIT_ALL=1 (every kernel that can split gets its parallel code,
#     whatever its size) and run with --threads 1, 2 and 3: the outputs must
#     be the same bytes;
#   - tests/api/threads.relay (kernels above the real thresholds; inputs
#     written by python3/numpy) likewise, built normally;
#   - the thresholds: its kernels split, an LSTM-sized GEMV and chain
#     (1 x 512 x 128) do not;
#   - --threads: recorded by build (-v says it), bad counts and --interp
#     refused with exit status 2.
# Run from the repository root. Fails on any difference.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() {
  echo "FAIL: $*"
  fail=1
}

# run_at SO ARGS OUT N: relayc run at N threads, the result to OUT.
run_at() {
  # shellcheck disable=SC2086
  "$relayc" run "$1" $2 --threads "$4" --output "$3" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
}

# same_at SO ARGS NAME: the results at 1, 2 and 3 threads are the same bytes.
same_at() {
  for n in 1 2 3; do
    run_at "$1" "$2" "$tmp/$3.$n" "$n" || { bad "$3: run at $n threads"; return; }
  done
  for n in 2 3; do
    if [ -d "$tmp/$3.1" ]; then
      for f in "$tmp/$3.1"/*; do
        cmp -s "$f" "$tmp/$3.$n/${f##*/}" || bad "$3: field ${f##*/} differs at $n threads"
      done
    else
      cmp -s "$tmp/$3.1" "$tmp/$3.$n" || bad "$3: the result differs at $n threads"
    fi
  done
}

splits=0
for f in tests/run/*.relay; do
  base=${f%.relay}
  name=${base##*/}
  [ -f "$base.expected.npy" ] || [ -d "$base.expected.d" ] || continue
  args=""
  [ -f "$base.args" ] && args=$(cat "$base.args")
  # --params goes to the build; the inputs to the runs
  params=$(printf '%s\n' "$args" | sed -n 's/.*\(--params [^ ]*\).*/\1/p')
  inputs=$(printf '%s\n' "$args" | sed 's/--params [^ ]*//')
  # shellcheck disable=SC2086
  RLY_SPLIT_ALL=1 "$relayc" build "$f" $params -o "$tmp/$name.so" 2>"$tmp/err" || { cat "$tmp/err"; bad "$name: build"; continue; }
  # shellcheck disable=SC2086
  RLY_SPLIT_ALL=1 "$relayc" build "$f" $params --emit c -o "$tmp/$name.c" 2>/dev/null &&
    splits=$((splits + $(grep -c 'rlyrt_parallel_for(' "$tmp/$name.c")))
  same_at "$tmp/$name.so" "$inputs" "$name"
done
[ "$splits" -ge 20 ] || bad "only $splits parallel kernels in the tests/run programs"

# Real sizes.
if /usr/bin/env python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/env python3 - "$tmp" <<'PY'
import sys, numpy as np
r = np.random.default_rng(7)
shapes = dict(x=(200, 300), w=(400, 300), b=(400,), v=(1, 2048), u=(1024, 2048), p=(4, 64, 128), q=(4, 96, 128),
              e=(256, 512), f=(512,))
for k, s in shapes.items():
    np.save('%s/in_%s.npy' % (sys.argv[1], k), r.standard_normal(s).astype(np.float32))
PY
  "$relayc" build tests/api/threads.relay -o "$tmp/big.so" || bad "threads.relay: build"
  inputs=""
  for k in x w b v u p q e f; do inputs="$inputs --input $k=$tmp/in_$k.npy"; done
  same_at "$tmp/big.so" "$inputs" big
else
  echo "threads_test: no numpy: the real-size check is skipped"
fi
"$relayc" build tests/api/threads.relay --emit c -o "$tmp/big.c" || bad "threads.relay: --emit c"
n=$(grep -c 'rlyrt_parallel_for(' "$tmp/big.c")
[ "$n" -ge 4 ] || bad "threads.relay: $n parallel_for calls, want one per kernel at least"
cat >"$tmp/small.relay" <<'R'
#[version = "0.0.5"]
def @main(%h: Tensor[(1, 128), float32], %w: Tensor[(512, 128), float32], %c: Tensor[(1, 512), float32]) {
  %0 = nn.dense(%h, %w, units=512);
  %1 = add(%0, %c);
  sigmoid(%1)
}
R
"$relayc" build "$tmp/small.relay" --emit c -o "$tmp/small.c" || bad "small: --emit c"
n=$(grep -c 'rlyrt_parallel_for' "$tmp/small.c")
[ "$n" -eq 0 ] || bad "an LSTM-sized GEMV splits ($n parallel_for)"

# The option.
"$relayc" build "$tmp/small.relay" -o "$tmp/s.so" --threads 3 -v 2>&1 | grep -q '^threads: 3 ' || bad "build -v does not say threads: 3"
"$relayc" build "$tmp/small.relay" -o "$tmp/s.so" --threads 0 -v 2>&1 | grep -q '^threads: one per CPU' || bad "build -v does not say one per CPU"
"$relayc" build "$tmp/small.relay" -o "$tmp/s.so" -v 2>&1 | grep -q '^threads: 1 ' || bad "the default is not 1"
for v in -1 257 x ""; do
  "$relayc" build "$tmp/small.relay" -o "$tmp/s.so" --threads "$v" >/dev/null 2>&1
  [ $? -eq 2 ] || bad "--threads '$v' is not a usage error"
done
"$relayc" run "$tmp/small.relay" --interp --threads 2 >/dev/null 2>&1
[ $? -eq 2 ] || bad "run --interp --threads is not a usage error"
"$relayc" build --help | grep -q -- '--threads N' || bad "build --help does not describe --threads"
exit $fail
