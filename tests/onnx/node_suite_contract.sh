#!/bin/sh
# node_suite_contract.sh RELAYC DATA: the known-failures contract of
# tests/onnx/node_suite.py, on two cases of the ONNX backend node tests (in
# DATA, generated when missing): test_abs, which passes, and test_det_2d,
# which fails (Det is not imported). A true list passes; a listed case that
# passes, a failing case that is not listed and a wrong category each fail
# the run, saying which; --update writes the true list.
set -u
relayc=$1
data=$2
suite="/usr/bin/python3 $(dirname "$0")/node_suite.py --relayc $relayc --data $data --filter ^test_(abs|det_2d)$"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# run WANT_STATUS PATTERN LIST: the suite with the known failures LIST
# exits WANT_STATUS and prints a line matching PATTERN.
run() {
  printf '%b' "$3" >"$tmp/known"
  $suite --known "$tmp/known" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -ne "$1" ] || ! grep -Eq -- "$2" "$tmp/out"; then
    echo "FAIL: list '$3': exit $got, expected $1 and /$2/"
    sed 's/^/  /' "$tmp/out" | head -10
    fail=$((fail + 1))
  fi
}

run 0 '1 of 2 cases pass' 'test_det_2d op\n'
run 1 'NEW PASS: test_abs' 'test_det_2d op\ntest_abs op\n'
run 1 'NEW FAILURE: test_det_2d \(op\)' ''
run 1 'CHANGED: test_det_2d fails as op, listed as attr' 'test_det_2d attr\n'
printf '# a comment kept by --update\ntest_abs op\n' >"$tmp/known"
$suite --known "$tmp/known" --update >/dev/null 2>&1
if [ "$(cat "$tmp/known")" != "$(printf '# a comment kept by --update\ntest_det_2d  op')" ]; then
  echo "FAIL: --update wrote:"; sed 's/^/  /' "$tmp/known"
  fail=$((fail + 1))
fi
[ "$fail" -eq 0 ] && echo "node_suite_contract: all passed"
[ "$fail" -eq 0 ]
