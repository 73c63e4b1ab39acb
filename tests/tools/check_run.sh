#!/bin/sh
# check_run.sh RELAYC NPYCMP FILE.relay
# Runs `relayc run --interp FILE` (from the repository root) with the
# arguments in FILE.args (if any; one shell word per argument, paths
# relative to the repository root) and checks the result against:
#   FILE.expected       the exact standard output, or
#   FILE.expected.npy   a tensor result (compared with npycmp; FILE.tol may
#                       hold "--rtol R --atol A"), or
#   FILE.expected.d/    a tuple result, one .npy per field, or
#   FILE.error          a run-time error: exit status 1 and this text in stderr.
set -u
relayc=$1
npycmp=$2
file=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
rel=${file#"$root"/}
base=${file%.relay}
cd "$root" || exit 1
args=""
[ -f "$base.args" ] && args=$(cat "$base.args")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tol=""
[ -f "$base.tol" ] && tol=$(cat "$base.tol")
if [ -f "$base.expected.npy" ]; then
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args --output "$tmp/out.npy" || exit 1
  # shellcheck disable=SC2086
  exec "$npycmp" $tol "$tmp/out.npy" "$base.expected.npy"
elif [ -d "$base.expected.d" ]; then
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args --output "$tmp/out" || exit 1
  # shellcheck disable=SC2086
  exec "$npycmp" $tol "$tmp/out" "$base.expected.d"
elif [ -f "$base.error" ]; then
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args >"$tmp/out" 2>"$tmp/err"
  status=$?
  if [ "$status" -ne 1 ]; then
    echo "expected exit status 1, got $status"; cat "$tmp/err"; exit 1
  fi
  want=$(cat "$base.error")
  if ! grep -qF -- "$want" "$tmp/err"; then
    echo "stderr does not contain: $want"; cat "$tmp/err"; exit 1
  fi
  exit 0
else
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args >"$tmp/out" || exit 1
  if ! diff -u "$base.expected" "$tmp/out"; then
    echo "the output of $rel differs from $base.expected"
    exit 1
  fi
fi
