#!/bin/sh
# Runs one fuzz target for a while, seeded with the repository's inputs of
# its format. Exits non-zero when the fuzzer found a crash, a sanitizer
# error, a leak, a timeout or an out-of-memory input; those inputs are
# printed and kept. The last line says how many inputs ran.
#
#   sh fuzz/smoke.sh FUZZER SECONDS [more libFuzzer flags...]
#
# FUZZER is build-fuzz/fuzz_<target>; the target (parser, npy, params, onnx,
# metadata) chooses the seeds, the dictionary fuzz/dict/<target>.dict and
# the input size limit. fuzz/smoke_all.sh runs every target in turn.
#
# Environment: FUZZ_CORPUS=DIR keeps the corpus in DIR (created and seeded if
# needed; new inputs found accumulate there across runs) instead of a
# temporary directory. Failing inputs go to FUZZER's directory, under
# fuzz-artifacts/, and the fuzzer's output to fuzz-artifacts/<target>.log.
set -u

if [ $# -lt 2 ]; then
  echo "usage: sh fuzz/smoke.sh FUZZER SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
FUZZER=$1
SECONDS_=$2
shift 2
case $FUZZER in /*) ;; *) FUZZER=$(pwd)/$FUZZER ;; esac
if [ ! -x "$FUZZER" ]; then
  echo "fuzz: $FUZZER is not an executable (build it: make fuzz-smoke)" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NAME=$(basename "$FUZZER")
TARGET=${NAME#fuzz_}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/relayc-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

# {==== Corpus ====}

if [ -n "${FUZZ_CORPUS:-}" ]; then
  CORPUS=$FUZZ_CORPUS
else
  CORPUS=$WORK/corpus
fi
mkdir -p "$CORPUS" || exit 2
nseeds=0

# seed FILE...: copies each file into the corpus, its name prefixed with its
# directory (names repeat between directories).
seed() {
  for f in "$@"; do
    [ -f "$f" ] || continue
    d=$(basename "$(dirname "$f")")
    cp "$f" "$CORPUS/seed-$d-$(basename "$f")" || exit 2
    nseeds=$((nseeds + 1))
  done
}

# Inputs that once failed, and the checked-in seeds, for every target.
seed "$ROOT"/fuzz/regressions/"$TARGET"/* "$ROOT"/fuzz/seeds/"$TARGET"/*

case $TARGET in
parser)
  MAX_LEN=65536
  MALLOC_MB=2048
  seed "$ROOT"/tests/corpus/*.relay "$ROOT"/tests/errors/*.relay "$ROOT"/examples/*.relay
  # A few built-in seeds, so that the run is useful even without test files.
  printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {\n  %%0 = add(%%x, %%x) /* ty=Tensor[(1, 4), float32] */;\n  nn.relu(%%0)\n}\n' \
    >"$CORPUS/seed-builtin-graph.relay"
  printf '#[version = "0.0.5"]\ntype List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n\ndef @len[A](%%l: List[A]) -> int32 {\n  match (%%l) {\n    Cons(_, %%rest) => { add(1, @len(%%rest)) },\n    Nil => { 0 },\n  }\n}\n' \
    >"$CORPUS/seed-builtin-adt.relay"
  printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(5), float32]) {\n  let %%y = fn (%%p: Tensor[(5), float32], Primitive=1) { multiply(%%p, meta[relay.Constant][0]) };\n  %%y(%%x)\n}\n\n#[metadata]\n{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}, {"type_key": "Array", "data": [3]}, {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"}}], "b64ndarrays": ["P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8="], "attrs": {"tvm_version": "0.16.0"}}\n' \
    >"$CORPUS/seed-builtin-meta.relay"
  printf 'free_var %%x: int32;\nif (less(%%x, 0)) { ref(-1i64) } else { ref(2i64) }\n' \
    >"$CORPUS/seed-builtin-expr.relay"
  nseeds=$((nseeds + 4))
  ;;
npy)
  MAX_LEN=16384
  MALLOC_MB=256
  seed "$ROOT"/tests/runtime/data/*.npy "$ROOT"/tests/run/data/*.npy
  ;;
params)
  MAX_LEN=16384
  MALLOC_MB=256
  seed "$ROOT"/tests/corpus/*.params
  ;;
metadata)
  MAX_LEN=16384
  MALLOC_MB=256
  # The section of every .relay file that has one: the text after the
  # `#[metadata]` line.
  for f in "$ROOT"/tests/corpus/*.relay "$ROOT"/tests/errors/*.relay "$ROOT"/examples/*.relay; do
    [ -f "$f" ] && grep -q '^#\[metadata\]' "$f" || continue
    d=$(basename "$(dirname "$f")")
    awk 'on { print } /^#\[metadata\]/ { on = 1 }' "$f" >"$CORPUS/seed-$d-$(basename "$f" .relay).json" || exit 2
    nseeds=$((nseeds + 1))
  done
  ;;
onnx)
  MAX_LEN=65536
  MALLOC_MB=512
  seed "$ROOT"/tests/onnx/models/*.onnx "$ROOT"/tests/onnx/control/*.onnx
  ;;
*)
  echo "fuzz: unknown target '$TARGET' (expected fuzz_parser, fuzz_npy, fuzz_params, fuzz_metadata or fuzz_onnx)" >&2
  exit 2
  ;;
esac

# {==== Run ====}
# -entropic_scale_per_exec_time: slow inputs (such as the regression input
# that converts a million attribute values) are mutated less often; without
# it, a short run spends most of its time on them.

ART=$(dirname "$FUZZER")/fuzz-artifacts
mkdir -p "$ART" || exit 2
# Only this target's failures: smoke_all.sh runs the others into the same place.
rm -f "$ART/$NAME"-crash-* "$ART/$NAME"-leak-* "$ART/$NAME"-timeout-* "$ART/$NAME"-oom-* \
  "$ART/$NAME"-slow-unit-*
LOG=$ART/$TARGET.log

echo "fuzz: $NAME: $nseeds seed files from the repository, corpus $CORPUS, $SECONDS_ s"
{
  (cd "$WORK" && "$FUZZER" -max_total_time="$SECONDS_" -max_len=$MAX_LEN -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=$MALLOC_MB -dict="$ROOT/fuzz/dict/$TARGET.dict" \
    -entropic_scale_per_exec_time=1 -artifact_prefix="$ART/$NAME-" -print_final_stats=1 "$@" "$CORPUS")
  echo $? >"$WORK/rc"
} 2>&1 | tee "$LOG"
rc=$(cat "$WORK/rc" 2>/dev/null || echo 1)

found=0
for f in "$ART/$NAME"-crash-* "$ART/$NAME"-leak-* "$ART/$NAME"-timeout-* "$ART/$NAME"-oom-*; do
  [ -f "$f" ] || continue
  found=$((found + 1))
  echo "==== $f ($(wc -c <"$f" | tr -d ' ') bytes) ===="
  head -c 4096 "$f" | cat -v
  echo
  echo "reproduce: $FUZZER $f"
done

# The summary line (smoke_all.sh collects these): executions and new inputs.
fuzz_stat() { sed -n "s/^stat::$1: *//p" "$LOG" | tail -n 1; }
runs=$(fuzz_stat number_of_executed_units)
new=$(fuzz_stat new_units_added)
if [ "$rc" -ne 0 ] || [ $found -gt 0 ]; then
  echo "fuzz: $NAME: FAILED after ${runs:-?} runs (fuzzer exit status $rc, $found failing input(s) in $ART)" >&2
  exit 1
fi
echo "fuzz: $NAME: ${runs:-?} runs in $SECONDS_ s, ${new:-?} new inputs: no failures"
exit 0
