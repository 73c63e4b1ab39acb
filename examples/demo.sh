#!/bin/sh
# demo.sh RELAYC: the main job on the shipped examples: check each one,
# compile two dynamic programs (list recursion, tree recursion) to shared
# libraries and run them, timed against the reference interpreter, and show
# the C interface relayc generates.
set -eu
relayc=$1
case $relayc in /*) ;; *) relayc=$(pwd)/$relayc ;; esac
cd "$(dirname "$0")"
for f in *.relay; do
  printf '== relayc check examples/%s: ' "$f"
  "$relayc" check "$f"
  echo "ok"
done
echo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== relayc build examples/list_fold.relay -o list_fold.so   (sum of 1..10 by a fold over a list)"
"$relayc" build list_fold.relay -o "$tmp/list_fold.so"
echo "== relayc run list_fold.so --repeat 1000   (compiled)"
"$relayc" run "$tmp/list_fold.so" --repeat 1000
echo "== relayc run examples/list_fold.relay --interp --repeat 1000   (interpreted)"
"$relayc" run list_fold.relay --interp --repeat 1000
echo
echo "== relayc run examples/tree.relay --repeat 1000   (a binary search tree: sum and depth; compiled on the fly)"
"$relayc" run tree.relay --repeat 1000
echo "== relayc run examples/tree.relay --interp --repeat 1000"
"$relayc" run tree.relay --interp --repeat 1000
echo
echo "== relayc build examples/mlp.relay -o libmlp.a   (a static library and its header, mlp.h)"
"$relayc" build mlp.relay -o "$tmp/libmlp.a"
grep -A 7 '^/\* @main' "$tmp/mlp.h"
echo
echo "== relayc check --print examples/list_fold.relay   (the typed module)"
"$relayc" check --print list_fold.relay

echo
echo "== relayc check on a module with two mistakes (read from standard input)"
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(1, 8, 32, 32), float32], %%w: Tensor[(8, 8, 3, 3), float32]) {\n  %%0 = nn.conv2 (%%x, %%w, padding=[1, 1]);\n  nn.relu(%%y)\n}\n' |
  "$relayc" check - 2>&1 || echo "(exit status $?)"
