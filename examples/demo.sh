#!/bin/sh
# demo.sh RELAYC: the main job on the shipped examples. Until the compiler
# back end exists, that is checking each example (types included), running
# two of them with the reference interpreter, and printing one in canonical
# form.
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
echo "== relayc run examples/list_fold.relay --interp --repeat 100   (sum of 1..10 by a fold over a list)"
"$relayc" run list_fold.relay --interp --repeat 100
echo
echo "== relayc run examples/tree.relay --interp   (a binary search tree: sum and depth)"
"$relayc" run tree.relay --interp
echo
echo "== relayc check --print examples/list_fold.relay   (the typed module)"
"$relayc" check --print list_fold.relay

echo
echo "== relayc check on a module with two mistakes (read from standard input)"
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(1, 8, 32, 32), float32], %%w: Tensor[(8, 8, 3, 3), float32]) {\n  %%0 = nn.conv2 (%%x, %%w, padding=[1, 1]);\n  nn.relu(%%y)\n}\n' |
  "$relayc" check - 2>&1 || echo "(exit status $?)"
