#!/bin/sh
# onnx_test.sh RELAYC NPYCMP: ONNX models in (tests/onnx/models, written by
# tests/onnx/gen_models.py and gen_legacy.py). Run from the repository's root.
#
# Each model with an input (NAME.in.npy) runs compiled at -O2 and -O0 and
# interpreted, straight from the .onnx file, and its output must match
# PyTorch's (NAME.out.npy) within rtol 1e-4, atol 1e-5. `relayc import`
# writes the same text twice (deterministic), and that text checks; with
# --params-out the initializers go to a .params file that `build --params`
# binds, with the same result. Broken models exit 1 with a clear error.
set -u
relayc=$1
npycmp=$2
models=tests/onnx/models
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

bad() {
  echo "FAIL: $*"
  fail=$((fail + 1))
}

# close NAME GOT: GOT matches NAME's expected output.
close() {
  if "$npycmp" --rtol 1e-4 --atol 1e-5 "$2" "$models/$1.out.npy" >"$tmp/cmp" 2>&1; then
    pass=$((pass + 1))
  else
    bad "$1: $3"; sed 's/^/  /' "$tmp/cmp" | head -5
  fi
}

for input in "$models"/*.in.npy; do
  name=$(basename "$input" .in.npy)
  model=$models/$name.onnx
  # The graph's input name: @main's first parameter.
  "$relayc" import "$model" -o "$tmp/$name.relay" || { bad "$name: import"; continue; }
  arg=$(sed -n 's/^def @main(%\([A-Za-z0-9_.]*\):.*/\1/p' "$tmp/$name.relay")
  "$relayc" import "$model" -o "$tmp/$name.again.relay"
  cmp -s "$tmp/$name.relay" "$tmp/$name.again.relay" || bad "$name: two imports differ"
  "$relayc" check "$tmp/$name.relay" || bad "$name: the imported text does not check"
  for mode in -O2 -O0 --interp; do
    rm -f "$tmp/out.npy"
    if "$relayc" run "$model" $mode --input "$arg=$input" --output "$tmp/out.npy" >"$tmp/log" 2>&1; then
      close "$name" "$tmp/out.npy" "run $mode"
    else
      bad "$name: run $mode"; sed 's/^/  /' "$tmp/log" | head -10
    fi
  done
  # Initializers as parameters, bound from a .params file.
  if "$relayc" import "$model" -o "$tmp/$name.p.relay" --params-out "$tmp/$name.params" &&
     "$relayc" build "$tmp/$name.p.relay" --params "$tmp/$name.params" -o "$tmp/$name.so" >"$tmp/log" 2>&1 &&
     "$relayc" run "$tmp/$name.so" --input "$arg=$input" --output "$tmp/out.npy" >>"$tmp/log" 2>&1; then
    close "$name" "$tmp/out.npy" "--params-out, build --params"
  else
    bad "$name: --params-out"; sed 's/^/  /' "$tmp/log" | head -10
  fi
done

# A tuple result goes to a directory, a file per output named by the ONNX
# output's name.
if "$relayc" run $models/two_outputs.onnx --input x=$models/two_outputs.x.npy --output "$tmp/two" >"$tmp/log" 2>&1 &&
   [ -f "$tmp/two/relu_out_0.npy" ] && [ -f "$tmp/two/neg.npy" ]; then
  pass=$((pass + 1))
else
  bad "two_outputs: files named by the outputs"; ls "$tmp/two" 2>&1 | sed 's/^/  /'; sed 's/^/  /' "$tmp/log" | head -5
fi

# expect PATTERN CMD...: CMD exits 1 with a message matching PATTERN.
expect() {
  pat=$1
  shift
  "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -ne 1 ] || ! grep -Eq -- "$pat" "$tmp/out"; then
    bad "$* -> exit $got, expected 1 and /$pat/"; sed 's/^/  /' "$tmp/out" | head -5
  else
    pass=$((pass + 1))
  fi
}
expect "ONNX node 'the_det' \(Det, opset 13\): operator Det is not supported" "$relayc" check $models/bad_op.onnx
expect "operator Det is not supported" "$relayc" build $models/bad_op.onnx -o "$tmp/x.so"
expect "operator Det is not supported" "$relayc" import $models/bad_op.onnx
expect "ONNX opset 19 is not supported \(relayc reads opsets 7 to 18\)" "$relayc" check $models/bad_opset.onnx
expect "not an ONNX model.*truncated or corrupt" "$relayc" run $models/truncated.onnx --interp
expect "initializer 'w': its external data: cannot open '.*missing.bin'" "$relayc" check $models/external_missing.onnx
printf 'not a model at all' >"$tmp/text.onnx"
expect "not an ONNX model" "$relayc" check "$tmp/text.onnx"
: >"$tmp/empty.onnx"
expect "the ONNX model has no graph" "$relayc" check "$tmp/empty.onnx"

echo "onnx_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
