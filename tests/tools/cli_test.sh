#!/bin/sh
# cli_test.sh RELAYC: the command-line contract (exit codes, help, fmt) and
# hostile inputs that must give a clear error and exit status 1, never a
# crash. Run from tests/.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# expect STATUS PATTERN CMD...: run CMD, check its exit status and that its
# combined output matches the grep -E PATTERN ("" = anything).
expect() {
  want=$1 pat=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $* -> exit $got, expected $want"; sed 's/^/  /' "$tmp/out" | head -20
    fail=$((fail + 1)); return
  fi
  if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
    echo "FAIL: $* -> output does not match /$pat/"; sed 's/^/  /' "$tmp/out" | head -20
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

ok=corpus/prelude.relay
# Usage and help.
expect 2 "usage: relayc" "$relayc"
expect 0 "commands:" "$relayc" --help
expect 0 "usage: relayc check" "$relayc" check --help
expect 0 "usage: relayc fmt" "$relayc" fmt -h
expect 0 "usage: relayc fmt" "$relayc" help fmt
expect 0 "^relayc [0-9]" "$relayc" --version
expect 2 "unknown command 'chek'" "$relayc" chek $ok
expect 2 "unknown option '--bogus'" "$relayc" check --bogus $ok
expect 2 "no input file" "$relayc" check
expect 2 "input file '$ok' is given twice" "$relayc" check $ok $ok
expect 2 "needs a file name" "$relayc" check $ok --params
expect 0 "usage: relayc run" "$relayc" run --help
expect 2 "--interp needs Relay text" "$relayc" run model.so --interp
expect 1 "cannot open 'model.onnx'" "$relayc" run model.onnx --interp
expect 1 "cannot open 'model.onnx'" "$relayc" run model.onnx
expect 0 "usage: relayc import" "$relayc" import --help
expect 2 "no input model" "$relayc" import
expect 2 "unknown option '--bogus'" "$relayc" import --bogus onnx/models/mlp.onnx
expect 2 "needs a count" "$relayc" run ../examples/list_fold.relay --interp --repeat 0
expect 2 "needs NAME=FILE.npy" "$relayc" run ../examples/list_fold.relay --interp --input x
expect 0 "^55$" "$relayc" run ../examples/list_fold.relay --interp
expect 0 "^time_ms: median=[0-9.]+ min=[0-9.]+ max=[0-9.]+ n=3$" "$relayc" run ../examples/list_fold.relay --interp --repeat 3
expect 1 "has no function @nope" "$relayc" run ../examples/list_fold.relay --interp --function nope
expect 1 "cannot be given as a .npy input" "$relayc" run ../examples/tree.relay --interp --function insert --input t=../tests/runtime/data/be_float16.npy --input v=../tests/runtime/data/be_float16.npy
# relayc build and compiled runs.
lf=../examples/list_fold.relay
expect 0 "usage: relayc build" "$relayc" build --help
expect 2 "no output: give it with -o" "$relayc" build $lf
expect 2 "cannot tell the kind of output" "$relayc" build $lf -o "$tmp/x.bin"
expect 2 "--emit needs so, a, obj or c" "$relayc" build $lf -o "$tmp/x.so" --emit dll
expect 2 "--name needs a C identifier" "$relayc" build $lf -o "$tmp/x.so" --name 9lives
expect 2 "--name needs a C identifier" "$relayc" build $lf -o "$tmp/x.so" --name rlyrt_x
expect 2 "unknown option '--jobs'" "$relayc" build $lf -o "$tmp/x.so" --jobs 4
expect 2 "--threads needs a count from 0 .one per CPU. to 256, not '4x'" "$relayc" build $lf -o "$tmp/x.so" --threads 4x
expect 1 "unknown operator" "$relayc" build errors/unknown_op.relay -o "$tmp/x.so"
expect 1 "cannot run 'no-such-cc'" "$relayc" build $lf -o "$tmp/x.so" --cc no-such-cc
expect 1 "the C compiler failed with exit status 1:" "$relayc" build $lf -o "$tmp/x.so" --cflags "-DX -include /no/such/header.h"
expect 0 "" "$relayc" build $lf -o "$tmp/lf.so"
expect 0 "^55$" "$relayc" run "$tmp/lf.so"
expect 0 "^55$" "$relayc" run $lf
expect 0 "^55$" "$relayc" run $lf -O0 --cc cc
expect 0 "^55$" "$relayc" run $lf --no-fuse
# Fusion: the MLP is three kernels (dense+bias_add+relu, dense+bias_add,
# softmax) fused, six unfused (-O0 or --no-fuse).
kernels() { grep -c '^static rlyrt_status K[0-9]*(' "$1"; }
expect 0 "" "$relayc" build ../examples/mlp.relay -o "$tmp/mlp_fused.c"
expect 0 "" "$relayc" build ../examples/mlp.relay -o "$tmp/mlp_nofuse.c" --no-fuse
expect 0 "" "$relayc" build ../examples/mlp.relay -o "$tmp/mlp_o0.c" -O0
expect 0 "^3$" kernels "$tmp/mlp_fused.c"
expect 0 "^6$" kernels "$tmp/mlp_nofuse.c"
expect 0 "^6$" kernels "$tmp/mlp_o0.c"
expect 0 "--no-fuse" "$relayc" build --help
expect 0 "^time_ms: median=[0-9.]+ min=[0-9.]+ max=[0-9.]+ n=3$" "$relayc" run "$tmp/lf.so" --repeat 3
expect 1 "has no function @nope" "$relayc" run "$tmp/lf.so" --function nope
expect 1 "cannot load" "$relayc" run "$tmp/missing.so"
printf 'not a library' >"$tmp/fake.so"
expect 1 "cannot load" "$relayc" run "$tmp/fake.so"
expect 1 "cannot be given as a .npy input" "$relayc" run ../examples/tree.relay --function insert --input t=../tests/runtime/data/be_float16.npy
expect 1 "missing input 'input'" "$relayc" run ../examples/mlp.relay
# Every kind of output; the header goes next to a .a, .o and .c.
mkdir -p "$tmp/o1" "$tmp/c1" "$tmp/c2"
expect 0 "" "$relayc" build $lf -o "$tmp/o1/libfold.a"
expect 0 "" test -f "$tmp/o1/fold.h"
expect 0 "" "$relayc" build $lf -o "$tmp/o1/fold.o" --name fold2
expect 0 "" test -f "$tmp/o1/fold2.h"
expect 0 "" "$relayc" build $lf -o "$tmp/c1/m.c" --keep-source "$tmp/kept"
expect 0 "" test -f "$tmp/kept/m.h"
# The same input gives the same bytes.
expect 0 "" "$relayc" build $lf -o "$tmp/c2/m.c"
expect 0 "" cmp "$tmp/c1/m.c" "$tmp/c2/m.c"
expect 0 "" cmp "$tmp/c1/m.h" "$tmp/c2/m.h"
# From an unrelated working directory.
expect 0 "" sh -c "cd '$tmp' && '$relayc' build '$(pwd)/$lf' -o elsewhere.so && '$relayc' run elsewhere.so"

# Files that cannot be read.
expect 1 "cannot open 'no/such/file.relay'" "$relayc" check no/such/file.relay
expect 1 "is a directory" "$relayc" check corpus

# A valid file; fmt's output checks again, from standard input and a file.
expect 0 "" "$relayc" check $ok
"$relayc" fmt $ok >"$tmp/p.relay"
expect 0 "" "$relayc" check "$tmp/p.relay"
expect 0 "" "$relayc" check - <"$tmp/p.relay"
expect 0 "" "$relayc" fmt -o "$tmp/q.relay" "$tmp/p.relay"
expect 0 "" cmp "$tmp/p.relay" "$tmp/q.relay"
expect 1 "cannot write" "$relayc" fmt -o "$tmp/no/such/dir/x.relay" $ok

# Hostile inputs: each a clear error with exit status 1.
printf '#[version = "0.0.5"]\ndef @main(%%x: float32) {\n  add(%%x,' >"$tmp/trunc.relay"
expect 1 "trunc.relay:3:[0-9]+: error: expected" "$relayc" check "$tmp/trunc.relay"
printf '\177ELF\001\002\003\000\000\377\376garbage\n' >"$tmp/garbage.relay"
expect 1 "garbage.relay: error: not a Relay text file \\(contains a NUL byte at offset 7\\)" "$relayc" check "$tmp/garbage.relay"
printf '#[version = "0.0.5"]\ndef @main() { "\377\376 not utf-8" }\n' >"$tmp/utf8.relay"
expect 1 "error: expected an expression" "$relayc" check "$tmp/utf8.relay"
printf '#[version = "0.0.5"]\ndef @main() { \303\251 }\n' >"$tmp/utf8b.relay"
expect 1 "error: unexpected character byte 0xc3" "$relayc" check "$tmp/utf8b.relay"
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() {\n"; for (i = 0; i < 100000; i++) printf "("; printf "1"; for (i = 0; i < 100000; i++) printf ")"; printf "\n}\n" }' >"$tmp/deep.relay"
expect 1 "error: nesting too deep" "$relayc" check "$tmp/deep.relay"
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() -> "; for (i = 0; i < 100000; i++) printf "("; printf "\n" }' >"$tmp/deeptype.relay"
expect 1 "error: nesting too deep" "$relayc" check "$tmp/deeptype.relay"
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() {\n  "; for (i = 0; i < 200000; i++) printf "9"; printf "\n}\n" }' >"$tmp/bigint.relay"
expect 1 "does not fit int64" "$relayc" check "$tmp/bigint.relay"
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() {\n  "; for (i = 0; i < 200000; i++) printf "9"; printf ".5f\n}\n" }' >"$tmp/bigfloat.relay"
expect 1 "does not fit float32" "$relayc" check "$tmp/bigfloat.relay"
printf '#[version = "0.0.5"]\ndef @main() {\n  1e999999999999999999f64\n}\n' >"$tmp/bigexp.relay"
expect 1 "does not fit float64" "$relayc" check "$tmp/bigexp.relay"

# Long chains are handled without deep recursion: 100,000 lets and a
# 100,000-deep graph-binding chain check (types included) and print on a
# 1 MiB stack.
awk 'BEGIN { print "#[version = \"0.0.5\"]"; print "def @main(%x0: float32) -> float32 {"; for (i = 1; i <= 100000; i++) printf "  let %%x%d = add(%%x%d, 1f);\n", i, i - 1; print "  %x100000"; print "}" }' >"$tmp/lets.relay"
expect 0 "" sh -c "ulimit -s 1024 && \"$relayc\" check \"$tmp/lets.relay\" && \"$relayc\" fmt \"$tmp/lets.relay\" >/dev/null"
awk 'BEGIN { print "#[version = \"0.0.5\"]"; print "def @main(%x: Tensor[(2), float32]) {"; print "  %0 = add(%x, %x);"; for (i = 1; i < 100000; i++) printf "  %%%d = multiply(%%%d, %%x);\n", i, i - 1; print "  %99999"; print "}" }' >"$tmp/graph.relay"
expect 0 "" sh -c "ulimit -s 1024 && \"$relayc\" check \"$tmp/graph.relay\" && \"$relayc\" fmt \"$tmp/graph.relay\" >/dev/null"

# Malformed metadata sections.
meta() { printf '#[version = "0.0.5"]\ndef @main() {\n  meta[relay.Constant][0]\n}\n#[metadata]\n%s\n' "$1" >"$tmp/meta.relay"; }
meta '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}'
expect 1 "meta.relay:5:1: error: .*JSON" "$relayc" check "$tmp/meta.relay"
meta '[1, 2, 3]'
expect 1 "meta.relay:5:1: error: metadata" "$relayc" check "$tmp/meta.relay"
blob_ok='P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3ZD9CSQk/IrUuP216WT8='
metadoc() { echo '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map", "keys": ["relay.Constant"], "data": [2]}, {"type_key": "Array", "data": [3]}, {"type_key": "relay.Constant", "attrs": {"data": "0", "span": "0"}}], "b64ndarrays": ["'"$1"'"], "attrs": {"tvm_version": "0.16.0"}}'; }
meta "$(metadoc "$blob_ok")"
expect 0 "" "$relayc" check "$tmp/meta.relay"
meta "$(metadoc 'P6G0lvBAXt0AAAAA!!!!')"
expect 1 "error: .*base64" "$relayc" check "$tmp/meta.relay"
meta "$(metadoc 'AAAAAAAAAAAAAAAAAQAAAAAAAAABAAAAAiABAAUAAAAAAAAAFAAAAAAAAAAv3w4/UzdkP0JJCT8itS4/bXpZPw==')"
expect 1 "error: .*magic" "$relayc" check "$tmp/meta.relay"
meta "$(metadoc 'P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABAAAAAAAAAAL98OP1M3ZD9CSQk/IrUuPw==')"
expect 1 "error: .*(size|match)" "$relayc" check "$tmp/meta.relay"
meta "$(metadoc 'P6G0lvBAXt0AAAAAAAAAAAEAAAAAAAAAAQAAAAIgAQAFAAAAAAAAABQAAAAAAAAAL98OP1M3')"
expect 1 "error: .*(truncated|short|size)" "$relayc" check "$tmp/meta.relay"
printf '#[version = "0.0.5"]\ndef @main() {\n  meta[relay.Constant][0]\n}\n' >"$tmp/nometa.relay"
expect 1 "nometa.relay:3:3: error: meta\\[relay.Constant\\]\\[0\\] used but the file has no metadata section" "$relayc" check "$tmp/nometa.relay"

# Params files.
expect 0 "" "$relayc" check --params corpus/params_model.params corpus/params_model.relay
head -c 40 corpus/params_model.params >"$tmp/trunc.params"
expect 1 "trunc.params: error:" "$relayc" check --params "$tmp/trunc.params" corpus/params_model.relay
expect 1 "cannot|error" "$relayc" check --params "$tmp/none.params" corpus/params_model.relay

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
