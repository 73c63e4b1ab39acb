#!/bin/sh
# demo.sh RELAYC: the main job on the shipped examples. Until the compiler
# back end exists, that is checking each example and printing it in
# canonical form.
set -eu
relayc=$1
cd "$(dirname "$0")"
for f in *.relay; do
  echo "== relayc check examples/$f"
  "$relayc" check "$f"
  echo "ok"
done
echo
echo "== relayc fmt examples/mlp.relay"
"$relayc" fmt mlp.relay
