#!/bin/sh
# check_golden.sh RELAYC FILE.relay
# Compares `relayc check --print FILE` (run from the repository root) with
# FILE.expected. With UPDATE=1 the expected file is rewritten instead.
set -u
relayc=$1
file=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rel=${file#"$root"/}
expected=${file%.relay}.expected
cd "$root" || exit 1
out=$("$relayc" check --print "$rel" 2>&1)
status=$?
if [ "${UPDATE:-0}" = 1 ]; then
  printf '%s\n' "$out" >"$expected"
  echo "updated $expected"
  exit 0
fi
if [ "$status" -ne 0 ]; then
  echo "relayc check --print failed with status $status:"
  echo "$out"
  exit 1
fi
if ! printf '%s\n' "$out" | diff -u "$expected" - ; then
  echo "the typed print of $rel differs from $expected (UPDATE=1 rewrites it)"
  exit 1
fi
exit 0
