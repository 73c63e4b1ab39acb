#!/bin/sh
# check_run.sh RELAYC NPYCMP FILE.relay [MODE [RELAYC ARGS...]]
# Runs `relayc run FILE` (from the repository root) with the arguments in
# FILE.args (if any; one shell word per argument, paths relative to the
# repository root). MODE is "interp" (the default: run --interp) or -O0..-O3, -Os
# (compiled at that level, with the extra RELAYC ARGS, e.g. --cc clang;
# the result is then also compared with the interpreter's:
# exactly for integers, bools and printed values, within npycmp's default
# tolerance for floats, or FILE.difftol's "--rtol R --atol A" where the
# compiled kernels round differently by design (Winograd convolutions);
# RLY_SKIP_INTERP=1 skips that comparison). A compiled
# run fails when the C compiler printed anything (a warning). The result is
# checked against:
#   FILE.expected       the exact standard output, or
#   FILE.expected.npy   a tensor result (compared with npycmp; FILE.tol may
#                       hold "--rtol R --atol A"), or
#   FILE.expected.d/    a tuple result, one .npy per field, or
#   FILE.error          a run-time error: exit status 1 and this text in stderr.
set -u
relayc=$1
npycmp=$2
file=$3
mode=${4:-interp}
[ $# -ge 4 ] && shift 4
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
difftol=""
[ -f "$base.difftol" ] && difftol=$(cat "$base.difftol")
if [ "$mode" = interp ]; then
  how=--interp
  set --
else
  how=$mode
fi
# relayc run, compiled or interpreted as MODE says; its standard error goes
# to $tmp/err and is shown. A compiled run fails on any C compiler output.
run_mode() {
  "$relayc" run "$rel" $how "$@" 2>"$tmp/err"
  status=$?
  cat "$tmp/err" >&2
  if [ "$mode" != interp ] && grep -q "the C compiler printed" "$tmp/err"; then
    echo "the C compiler printed a warning on the generated code" >&2
    return 99
  fi
  return $status
}
if [ -f "$base.expected.npy" ]; then
  # shellcheck disable=SC2086
  run_mode "$@" $args --output "$tmp/out.npy" || exit 1
  # shellcheck disable=SC2086
  "$npycmp" $tol "$tmp/out.npy" "$base.expected.npy" || exit 1
  [ "$mode" = interp ] || [ "${RLY_SKIP_INTERP:-0}" = 1 ] && exit 0
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args --output "$tmp/interp.npy" || exit 1
  # shellcheck disable=SC2086
  exec "$npycmp" $difftol "$tmp/out.npy" "$tmp/interp.npy"
elif [ -d "$base.expected.d" ]; then
  # shellcheck disable=SC2086
  run_mode "$@" $args --output "$tmp/out" || exit 1
  # shellcheck disable=SC2086
  "$npycmp" $tol "$tmp/out" "$base.expected.d" || exit 1
  [ "$mode" = interp ] || [ "${RLY_SKIP_INTERP:-0}" = 1 ] && exit 0
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args --output "$tmp/interp" || exit 1
  # shellcheck disable=SC2086
  exec "$npycmp" $difftol "$tmp/out" "$tmp/interp"
elif [ -f "$base.error" ]; then
  # shellcheck disable=SC2086
  run_mode "$@" $args >"$tmp/out" 2>/dev/null
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
  run_mode "$@" $args >"$tmp/out" || exit 1
  if ! diff -u "$base.expected" "$tmp/out"; then
    echo "the output of $rel differs from $base.expected"
    exit 1
  fi
  [ "$mode" = interp ] || [ "${RLY_SKIP_INTERP:-0}" = 1 ] && exit 0
  # shellcheck disable=SC2086
  "$relayc" run "$rel" --interp $args >"$tmp/interp" || exit 1
  if ! diff -u "$tmp/interp" "$tmp/out"; then
    echo "the compiled output of $rel differs from the interpreter's"
    exit 1
  fi
fi
