#!/bin/sh
# check_errors.sh RELAYC FILE.relay
# Runs `relayc check` on a malformed program (from the repository root, so
# paths print as tests/errors/NAME.relay), expects exit status 1 and exactly
# the `FILE:LINE:COL: error: ...` lines of FILE.expected.
set -u
relayc=$1
file=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
rel=${file#"$root"/}
expected=${file%.relay}.expected
cd "$root" || exit 1
out=$("$relayc" check "$rel" 2>&1 >/dev/null)
status=$?
if [ "$status" -ne 1 ]; then
  echo "expected exit status 1, got $status"
  echo "$out"
  exit 1
fi
got=$(printf '%s\n' "$out" | grep -E '^[^ ].*:[0-9]+:[0-9]+: error: |^[^ ]*: error: ')
want=$(cat "$expected")
if [ "$got" != "$want" ]; then
  echo "diagnostics differ from $expected"
  echo "--- expected"
  echo "$want"
  echo "--- got"
  echo "$got"
  echo "--- full output"
  echo "$out"
  exit 1
fi
exit 0
