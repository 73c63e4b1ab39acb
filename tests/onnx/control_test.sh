#!/bin/sh
# control_test.sh RELAYC NPYCMP: the recurrent and control-flow ONNX models
# (LSTM, GRU, If, Loop) of tests/onnx/control, written by
# tests/onnx/gen_control.py. Run from the repository's root.
#
# Each model runs compiled at -O2 and -O0 and interpreted, straight from the
# .onnx file, with its inputs NAME.in.INPUT.npy bound by ONNX input name,
# and each output must match NAME.out.OUTPUT.npy (PyTorch's, or NumPy's)
# within rtol 1e-4, atol 1e-5. `relayc import` writes the same text twice
# (deterministic), and that text checks and holds a recursive global (the
# loop); with --params-out the initializers become parameters (which a
# loop's body receives as arguments), bound by `build --params`, with the
# same results. The bad_* models exit 1 with a clear error.
set -u
relayc=$1
npycmp=$2
dir=tests/onnx/control
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

bad() {
  echo "FAIL: $*"
  fail=$((fail + 1))
}

# compare NAME GOT BY WHAT: every expected output of NAME
# (NAME.out.K.OUTPUT.npy) against GOT: a file when the model has one output,
# else a directory of files named by output (BY=name) or position (BY=index).
compare() {
  name=$1 got=$2 by=$3 what=$4
  set -- $(ls "$dir/$name".out.*.npy)
  for want in "$@"; do
    out=$(basename "$want" .npy)
    out=${out#"$name".out.}
    if [ $# -eq 1 ]; then file=$got
    elif [ "$by" = name ]; then file=$got/${out#*.}.npy
    else file=$got/${out%%.*}.npy
    fi
    if "$npycmp" --rtol 1e-4 --atol 1e-5 "$file" "$want" >"$tmp/cmp" 2>&1; then
      pass=$((pass + 1))
    else
      bad "$name: output ${out#*.}, $what"; sed 's/^/  /' "$tmp/cmp" | head -5
    fi
  done
}

for model in "$dir"/*.onnx; do
  name=$(basename "$model" .onnx)
  case $name in bad_*) continue ;; esac
  inputs=
  for f in "$dir/$name".in.*.npy; do
    arg=$(basename "$f" .npy)
    inputs="$inputs --input ${arg#"$name".in.}=$f"
  done
  "$relayc" import "$model" -o "$tmp/$name.relay" || { bad "$name: import"; continue; }
  "$relayc" import "$model" -o "$tmp/$name.again.relay"
  cmp -s "$tmp/$name.relay" "$tmp/$name.again.relay" || bad "$name: two imports differ"
  "$relayc" check "$tmp/$name.relay" || bad "$name: the imported text does not check"
  case $name in
    cond_*) grep -q '= if (' "$tmp/$name.relay" || bad "$name: no Relay if" ;;
    *) grep -Eq '^def @(loop|lstm|gru|rnn)[0-9]+\(' "$tmp/$name.relay" || bad "$name: no loop global" ;;
  esac
  for mode in -O2 -O0 --interp; do
    rm -rf "$tmp/out"
    if "$relayc" run "$model" $mode $inputs --output "$tmp/out" >"$tmp/log" 2>&1; then
      compare "$name" "$tmp/out" name "run $mode"
    else
      bad "$name: run $mode"; sed 's/^/  /' "$tmp/log" | head -10
    fi
  done
  # Initializers as parameters, bound from a .params file.
  rm -rf "$tmp/out"
  if "$relayc" import "$model" -o "$tmp/$name.p.relay" --params-out "$tmp/$name.params" &&
     "$relayc" build "$tmp/$name.p.relay" --params "$tmp/$name.params" -o "$tmp/$name.so" >"$tmp/log" 2>&1 &&
     "$relayc" run "$tmp/$name.so" $inputs --output "$tmp/out" >>"$tmp/log" 2>&1; then
    # The library does not know the ONNX names: its files are 0.npy, 1.npy, ...
    compare "$name" "$tmp/out" index "--params-out, build --params"
  else
    bad "$name: --params-out"; sed 's/^/  /' "$tmp/log" | head -10
  fi
done

# expect PATTERN CMD...: CMD exits 1 with a message matching PATTERN.
expect() {
  pat=$1
  shift
  "$@" >"$tmp/msg" 2>&1
  got=$?
  if [ "$got" -ne 1 ] || ! grep -Eq -- "$pat" "$tmp/msg"; then
    bad "$* -> exit $got, expected 1 and /$pat/"; sed 's/^/  /' "$tmp/msg" | head -5
  else
    pass=$((pass + 1))
  fi
}
expect "ONNX node 'short_body' \(Loop, opset 13\): its body has 1 outputs; the node's 1 outputs need 2" \
  "$relayc" check $dir/bad_loop_outputs.onnx
expect "ONNX node 'two_shapes' \(If, opset 13\): output 0 has dimension 0 of 3 in then_branch and 6 in else_branch" \
  "$relayc" build $dir/bad_if_shapes.onnx -o "$tmp/x.so"
expect "ONNX node 'early_scan' \(Loop, opset 13\): scan outputs need a loop that runs all M iterations" \
  "$relayc" import $dir/bad_loop_scan.onnx
expect "ONNX node 'odd_lstm' \(LSTM, opset 13\): activation 'Softsign' is not supported" \
  "$relayc" run $dir/bad_lstm_act.onnx --interp
expect "ONNX node 'lone_concat' \(ConcatFromSequence, opset 13\): reads only the list a Loop appended to" \
  "$relayc" check $dir/bad_sequence.onnx

echo "control_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
