#!/bin/sh
# Runs several fuzz targets one after the other (fuzz/smoke.sh each),
# sharing a total time, and prints each one's execution count at the end.
# Exits non-zero when any target found something; the others still run.
#
#   sh fuzz/smoke_all.sh BUILD_DIR SECONDS [TARGET...]
#
# TARGETs are parser, npy, params, metadata, onnx (the default: all five), run as
# BUILD_DIR/fuzz_<target>. SECONDS is the total: the parser, the largest
# reader, gets three shares and every other target one, so 140 s gives
# 60 s to the parser and 20 s to each of the others (at least 1 s each).
# With FUZZ_CORPUS=DIR, each target keeps its corpus in DIR/<target>.
set -u

if [ $# -lt 2 ]; then
  echo "usage: sh fuzz/smoke_all.sh BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
BUILD=$1
TOTAL=$2
shift 2
[ $# -gt 0 ] || set -- parser npy params metadata onnx
HERE=$(cd "$(dirname "$0")" && pwd)

shares=0
for t in "$@"; do
  if [ "$t" = parser ]; then shares=$((shares + 3)); else shares=$((shares + 1)); fi
done

OUT=$(mktemp "${TMPDIR:-/tmp}/relayc-fuzz-out.XXXXXX") || exit 2
trap 'rm -f "$OUT"' EXIT
trap 'exit 130' INT TERM

summary=""
failed=0
for t in "$@"; do
  if [ "$t" = parser ]; then share=3; else share=1; fi
  secs=$((TOTAL * share / shares))
  [ $secs -ge 1 ] || secs=1
  echo "fuzz: running fuzz_$t for $secs s (its output: $BUILD/fuzz-artifacts/$t.log)"
  if [ -n "${FUZZ_CORPUS:-}" ]; then
    FUZZ_CORPUS=$FUZZ_CORPUS/$t sh "$HERE/smoke.sh" "$BUILD/fuzz_$t" "$secs" >"$OUT" 2>&1
  else
    sh "$HERE/smoke.sh" "$BUILD/fuzz_$t" "$secs" >"$OUT" 2>&1
  fi
  rc=$?
  # Everything when something went wrong; the summary line otherwise.
  if [ $rc -ne 0 ]; then
    cat "$OUT"
    failed=$((failed + 1))
  fi
  line=$(tail -n 1 "$OUT")
  line=${line#fuzz: }
  echo "$line"
  summary="$summary
  $line"
done

echo "fuzz: summary ($TOTAL s in all):$summary"
if [ $failed -gt 0 ]; then
  echo "fuzz: FAILED: $failed of $# target(s) found something" >&2
  exit 1
fi
exit 0
