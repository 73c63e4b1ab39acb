#!/bin/sh
# Runs the parser fuzzer for a while, seeded with every .relay file of the
# repository (tests/corpus, tests/errors, examples). Exits non-zero when the
# fuzzer found a crash, a sanitizer error, a leak, a timeout or an
# out-of-memory input; those inputs are printed and kept.
#
#   sh fuzz/smoke.sh FUZZER SECONDS [more libFuzzer flags...]
#
# Environment: FUZZ_CORPUS=DIR keeps the corpus in DIR (created and seeded if
# needed; new inputs found accumulate there across runs) instead of a
# temporary directory. Failing inputs go to FUZZER's directory, under
# fuzz-artifacts/.
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
for f in "$ROOT"/tests/corpus/*.relay "$ROOT"/tests/errors/*.relay "$ROOT"/examples/*.relay; do
  [ -f "$f" ] || continue
  # Prefix with the directory: names repeat between tests/corpus and tests/errors.
  d=$(basename "$(dirname "$f")")
  cp "$f" "$CORPUS/seed-$d-$(basename "$f")" || exit 2
  nseeds=$((nseeds + 1))
done
# A few built-in seeds, so that the run is useful even without test files.
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {\n  %%0 = add(%%x, %%x) /* ty=Tensor[(1, 4), float32] */;\n  nn.relu(%%0)\n}\n' \
  >"$CORPUS/seed-builtin-graph.relay"
printf '#[version = "0.0.5"]\ntype List[A] {\n  Cons(A, List[A]),\n  Nil,\n}\n\ndef @len[A](%%l: List[A]) -> int32 {\n  match (%%l) {\n    Cons(_, %%rest) => { add(1, @len(%%rest)) },\n    Nil => { 0 },\n  }\n}\n' \
  >"$CORPUS/seed-builtin-adt.relay"
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(5), float32]) {\n  let %%y = fn (%%p: Tensor[(5), float32], Primitive=1) { multiply(%%p, meta[relay.Constant][0]) };\n  %%y(%%x)\n}\n\n#[metadata]\n{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}, {"type_key": "Array", "data": [3]}, {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "0", "span": "0", "virtual_device_": "0"}}], "b64ndarrays": ["P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8="], "attrs": {"tvm_version": "0.16.0"}}\n' \
  >"$CORPUS/seed-builtin-meta.relay"
printf 'free_var %%x: int32;\nif (less(%%x, 0)) { ref(-1i64) } else { ref(2i64) }\n' \
  >"$CORPUS/seed-builtin-expr.relay"

# {==== Dictionary: tokens of the text format ====}

DICT=$WORK/relay.dict
{
  for t in '#[version = \"0.0.5\"]' '#[metadata]' 'def' 'fn' 'let' 'if' 'else' 'type' \
           'match' 'match?' 'extern' 'free_var' 'ref' 'ref_read' 'ref_write' \
           'Tensor[' 'float32' 'float16' 'int64' 'int8x4' 'uint1' 'bool' 'bfloat16' \
           'True' 'False' 'None' 'nullptr' '_' '%0' '%x' '@main' '->' '=>' '/*' '*/' '//' \
           '/* ty=' 'meta[relay.Constant][0]' 'meta[relay.attrs.Conv2DAttrs][0]' \
           'meta[tir.SizeVar][0]' '1f' '-1' '0.5f' '1e-05f' '3i64' '2f64' '7i16' 'inff' \
           'nn.conv2d' 'nn.batch_norm' 'nn.dense' 'add' 'reshape' 'newshape=' 'axis=' \
           'padding=[1, 1, 1, 1]' 'Primitive=1' '.0' '\"b64ndarrays\"' '\"nodes\"' \
           '\"root\"' '\"type_key\"' '\"relay.Constant\"' '\"Array\"' '\"Map\"' '\"data\"' \
           '\"keys\"' '\"attrs\"' 'P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAA'; do
    printf '"%s"\n' "$t"
  done
} >"$DICT"

# {==== Run ====}

ART=$(dirname "$FUZZER")/fuzz-artifacts
mkdir -p "$ART" || exit 2
rm -f "$ART"/crash-* "$ART"/leak-* "$ART"/timeout-* "$ART"/oom-* "$ART"/slow-unit-*

echo "fuzz: $nseeds seed files from the repository, corpus $CORPUS, $SECONDS_ s"
(cd "$WORK" && "$FUZZER" -max_total_time="$SECONDS_" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -dict="$DICT" -artifact_prefix="$ART/" -print_final_stats=1 \
  "$@" "$CORPUS")
rc=$?

found=0
for f in "$ART"/crash-* "$ART"/leak-* "$ART"/timeout-* "$ART"/oom-*; do
  [ -f "$f" ] || continue
  found=$((found + 1))
  echo "==== $f ($(wc -c <"$f" | tr -d ' ') bytes) ===="
  head -c 4096 "$f" | cat -v
  echo
  echo "reproduce: $FUZZER $f"
done

if [ $rc -ne 0 ] || [ $found -gt 0 ]; then
  echo "fuzz: FAILED (fuzzer exit status $rc, $found failing input(s) in $ART)" >&2
  exit 1
fi
echo "fuzz: no failures in $SECONDS_ s"
exit 0
