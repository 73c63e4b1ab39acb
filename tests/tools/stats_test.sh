#!/bin/sh
# stats_test.sh RELAYC NPYCMP SRC: `relayc build --stats`, and the constants
# of a big model in a file of their own (NAME.blob, .incbin).
#   - --stats on a small model (tests/run/mlp_softmax.relay) prints the
#     fused groups, a line per kernel (operators | shape | schedule), the
#     workspace, the constants' bytes and the time of every phase, for .so
#     and for .c; --help documents it; without --stats nothing is printed;
#   - a model whose folded constants take 1.25 MiB (over the 1 MiB at which
#     they leave the C): .so, .a and .o hold them (the C has an .incbin, the
#     artifacts need no other file), the .so and a C program linked with the
#     .a compute what the interpreter computes, --keep-source keeps
#     NAME.blob next to NAME.c, OUT.c carries the constants inline (no
#     .incbin, no NAME.blob), and two builds give the same bytes.
# Run from tests/ (SRC: the repository root).
set -u
relayc=$1
npycmp=$2
src=$3
cc=${CC:-cc}
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

# check COND MESSAGE: a plain assertion.
check() {
  if eval "$1"; then pass=$((pass + 1)); else echo "FAIL: $2"; fail=$((fail + 1)); fi
}

# has FILE PATTERN MESSAGE: FILE has a line matching the grep -E PATTERN.
has() {
  if grep -Eq -- "$2" "$1"; then pass=$((pass + 1)); else
    echo "FAIL: $3: no line matches /$2/ in:"; sed 's/^/  /' "$1" | head -30
    fail=$((fail + 1))
  fi
}

# {==== --stats on a small model ====}

expect 0 '--stats' "$relayc" build --help
mlp=run/mlp_softmax.relay
"$relayc" build "$mlp" -o "$tmp/mlp.so" --stats >"$tmp/stats" 2>"$tmp/err"
check '[ $? -eq 0 ] && [ -f "$tmp/mlp.so" ]' "relayc build --stats $mlp failed: $(cat "$tmp/err")"
has "$tmp/stats" "^relayc build --stats: $tmp/mlp.so\$" "the header names the output"
has "$tmp/stats" '^fused groups: [1-9][0-9]* kernels, [1-9][0-9]* of several operators$' "fused groups"
has "$tmp/stats" '^kernel 1: nn\.dense, nn\.bias_add[^|]* \| \([0-9, ]+\) \| [A-Za-z]' "kernel 1: ops | shape | schedule"
has "$tmp/stats" '^kernel [0-9]+: nn\.softmax \| \([0-9, ]+\) \| [A-Za-z]' "the softmax kernel"
has "$tmp/stats" '^workspace: [0-9]+ bytes$' "workspace"
has "$tmp/stats" '^workspace @main: [0-9]+ bytes \(static plan\)$' "@main's workspace"
has "$tmp/stats" '^constants: [0-9]+ tensors, [0-9]+ bytes' "constants"
for phase in parse metadata infer passes codegen write 'C compiler' total; do
  has "$tmp/stats" "^time $phase: [0-9]+\.[0-9] ms" "time of $phase"
done
check '[ ! -s "$tmp/err" ]' "--stats wrote on stderr: $(cat "$tmp/err")"
# The kernel lines agree with -v's count.
n=$(grep -c '^kernel [0-9]*:' "$tmp/stats")
has "$tmp/stats" "^fused groups: $n kernels" "one line per kernel"
expect 0 '^time C compiler: [0-9.]+ ms \(none: OUT\.c\)$' "$relayc" build "$mlp" -o "$tmp/mlp.c" --stats
"$relayc" build "$mlp" -o "$tmp/quiet.so" >"$tmp/out" 2>&1
check '[ $? -eq 0 ] && [ ! -s "$tmp/out" ]' "relayc build without --stats printed: $(head -3 "$tmp/out")"
expect 2 'unknown option' "$relayc" check "$mlp" --stats

# HoistLoopProjection runs from -O1: the RNN's input projection of all 7
# steps is one GEMM; at -O0 every step keeps its own GEMV.
expect 0 '^kernel [0-9]+: nn\.dense \| \(7, 2, 6\) \| packed GEMM' "$relayc" build run/rnn_hoisted.relay -o "$tmp/rnn.c" --stats
"$relayc" build run/rnn_hoisted.relay -o "$tmp/rnn0.c" -O0 --stats >"$tmp/out" 2>&1
check '[ $? -eq 0 ] && ! grep -q "(7, 2, 6)" "$tmp/out"' "-O0 hoisted the projection: $(cat "$tmp/out")"

# A let-bound batch_norm projected later (the ONNX importer's let chains):
# GraphForm runs before SimplifyInference, so it becomes elementwise ops
# (fused with the relu), not a reference nn.batch_norm kernel.
cat >"$tmp/bn.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 4, 3, 3), float32], %g: Tensor[(4), float32], %b: Tensor[(4), float32],
          %m: Tensor[(4), float32], %v: Tensor[(4), float32]) {
  let %n = nn.batch_norm(%x, %g, %b, %m, %v);
  let %y = %n.0;
  nn.relu(%y)
}
EOF
expect 0 '^kernel 1: .*multiply.*nn\.relu' "$relayc" build "$tmp/bn.relay" -o "$tmp/bn.c" --stats
check '! grep -q "nn.batch_norm" "$tmp/out"' "a let-bound batch_norm was not simplified: $(cat "$tmp/out")"

# The static plan packs the largest tensors first. Six kernels (--no-fuse),
# sizes in units of 4096 bytes: S (4) = exp(x), P (1) = sum(S), C1 (1) =
# sin(P), C2 (1) = sin(C1), D (4) = P + x, C3 (4) = C2 + D. Nine units are
# live at C3 (C2, D, C3); first fit in definition order, which put D and C3
# above S's freed four units, needed thirteen (53248 bytes).
cat >"$tmp/plan.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(4, 1024), float32]) -> Tensor[(1024), float32] {
  %0 = exp(%x);
  %1 = sum(%0, axis=[0]);
  %2 = sin(%1);
  %3 = add(%1, %x);
  %4 = sin(%2);
  %5 = add(%4, %3);
  sum(%5, axis=[0])
}
EOF
expect 0 '^workspace @main: 36864 bytes \(static plan\)$' "$relayc" build "$tmp/plan.relay" -o "$tmp/plan.so" --no-fuse --stats
cat >"$tmp/px.relay" <<'EOF'
#[version = "0.0.5"]
multiply(sin(reshape(cumsum(ones(shape=[4096], dtype="float32"), axis=0), newshape=[4, 1024])), 0.5f)
EOF
expect 0 '' "$relayc" run "$tmp/px.relay" --interp --output "$tmp/px.npy"
expect 0 '' "$relayc" run "$tmp/plan.relay" --interp --input x="$tmp/px.npy" --output "$tmp/pwant.npy"
expect 0 '' "$relayc" run "$tmp/plan.so" --input x="$tmp/px.npy" --output "$tmp/pgot.npy"
expect 0 '' "$npycmp" "$tmp/pgot.npy" "$tmp/pwant.npy"

# {==== Big constants: NAME.blob and .incbin ====}

# 500 x 641 float32 weights sin(1..320500) and a bias, both folded from
# calls at build time: 1,284,048 bytes of constants (the bias at offset
# 1,282,048, 64-aligned).
cat >"$tmp/big.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 641), float32]) -> Tensor[(1, 500), float32] {
  %0 = ones(shape=[320500], dtype="float32");
  %1 = cumsum(%0, axis=0);
  %2 = reshape(%1, newshape=[500, 641]);
  %3 = sin(%2);
  %4 = nn.dense(%x, %3, units=500);
  %5 = ones(shape=[500], dtype="float32");
  %6 = cumsum(%5, axis=0);
  %7 = multiply(%6, -0.01f);
  %8 = nn.bias_add(%4, %7);
  nn.relu(%8)
}
EOF
cat >"$tmp/x.relay" <<'EOF'
#[version = "0.0.5"]
cos(reshape(cumsum(ones(shape=[641], dtype="float32"), axis=0), newshape=[1, 641]))
EOF
big=$tmp/big.relay
expect 0 '' "$relayc" run "$tmp/x.relay" --interp --output "$tmp/x.npy"
expect 0 '' "$relayc" run "$big" --interp --input x="$tmp/x.npy" --output "$tmp/want.npy"

mkdir "$tmp/a" "$tmp/b" "$tmp/ks" "$tmp/c"
"$relayc" build "$big" -o "$tmp/a/big.so" --stats --keep-source "$tmp/ks" --cc "$cc" >"$tmp/stats" 2>"$tmp/err"
check '[ $? -eq 0 ]' "relayc build $big -o big.so failed: $(cat "$tmp/err")"
has "$tmp/stats" '^constants: 2 tensors, 1284048 bytes \(in big\.blob, assembled with \.incbin\)$' "big constants in big.blob"
check '[ -f "$tmp/ks/big.blob" ] && [ "$(wc -c <"$tmp/ks/big.blob")" -eq 1284048 ]' "--keep-source keeps big.blob (1284048 bytes)"
has "$tmp/ks/big.c" '\.incbin \\"big\.blob\\"' "the kept C includes big.blob"
check '[ "$(wc -c <"$tmp/ks/big.c")" -lt 100000 ]' "the kept C is small (the constants are not in it)"
check '[ ! -e "$tmp/a/big.blob" ]' "big.blob is not left next to the .so"
# The artifact is self-contained: moved away from everything, it computes
# what the interpreter computes.
mv "$tmp/a/big.so" "$tmp/c/moved.so"
expect 0 '' "$relayc" run "$tmp/c/moved.so" --input x="$tmp/x.npy" --output "$tmp/got.npy"
expect 0 '' "$npycmp" "$tmp/got.npy" "$tmp/want.npy"
mv "$tmp/c/moved.so" "$tmp/a/big.so"
# Deterministic: the same bytes twice.
expect 0 '' "$relayc" build "$big" -o "$tmp/b/big.so" --cc "$cc"
check 'cmp -s "$tmp/a/big.so" "$tmp/b/big.so"' "two builds of big.so differ"

# A library of big constants is linked by gold, else lld, where PATH has
# one (driver.c, fast_linker; RLY_FAST_LINK_BYTES=0 makes these 1.3 MB
# big); should that link fail, the C compiler's own linker links again.
if command -v ld.gold >/dev/null 2>&1 || command -v ld.lld >/dev/null 2>&1; then
  RLY_FAST_LINK_BYTES=0 "$relayc" build "$big" -o "$tmp/b/fast.so" -v --cc "$cc" >"$tmp/log" 2>&1
  check '[ $? -eq 0 ]' "build with a fast linker: $(cat "$tmp/log")"
  has "$tmp/log" '-fuse-ld=(gold|lld)' "the library is linked by gold or lld"
  expect 0 '' "$relayc" run "$tmp/b/fast.so" --input x="$tmp/x.npy" --output "$tmp/got_fast.npy"
  expect 0 '' "$npycmp" "$tmp/got_fast.npy" "$tmp/want.npy"
fi
mkdir "$tmp/bin"
printf '#!/bin/sh\necho "ld.gold: broken" >&2\nexit 1\n' >"$tmp/bin/ld.gold"
chmod +x "$tmp/bin/ld.gold"
PATH="$tmp/bin:$PATH" RLY_FAST_LINK_BYTES=0 "$relayc" build "$big" -o "$tmp/b/slow.so" -v --cc "$cc" >"$tmp/log" 2>&1
check '[ $? -eq 0 ]' "build with a broken ld.gold: $(cat "$tmp/log")"
has "$tmp/log" '^# -fuse-ld=gold failed; linking again' "a failed fast link is done again"
check '! grep -q "broken" "$tmp/log"' "the failed link's message is shown: $(cat "$tmp/log")"
expect 0 '' "$relayc" run "$tmp/b/slow.so" --input x="$tmp/x.npy" --output "$tmp/got_slow.npy"
expect 0 '' "$npycmp" "$tmp/got_slow.npy" "$tmp/want.npy"
RELAYC_LD=default RLY_FAST_LINK_BYTES=0 "$relayc" build "$big" -o "$tmp/b/slow.so" -v --cc "$cc" >"$tmp/log" 2>&1
check '! grep -q -- "-fuse-ld" "$tmp/log"' "RELAYC_LD=default still chose a linker"

# A static library and an object: linked into a C program that calls the
# typed entry point.
expect 0 '' "$relayc" build "$big" -o "$tmp/a/libbig.a" --cc "$cc"
expect 0 '' "$relayc" build "$big" -o "$tmp/b/libbig.a" --cc "$cc"
check 'cmp -s "$tmp/a/libbig.a" "$tmp/b/libbig.a"' "two builds of libbig.a differ"
expect 0 '' "$relayc" build "$big" -o "$tmp/a/big.o" --cc "$cc"
check '[ ! -e "$tmp/a/big.blob" ]' "no big.blob next to the .a and .o"
cat >"$tmp/prog.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include "big.h"

int main(int argc, char **argv) {
  rlyrt_tensor *x = NULL;
  if (argc != 3 || rlyrt_npy_load(argv[1], &x) != RLYRT_OK) return 2;
  int64_t shape[2] = {1, 500};
  rlyrt_tensor *y = rlyrt_tensor_new((DLDataType){kDLFloat, 32, 1}, 2, shape, true);
  if (!y || big_main(&x->dl, &y->dl, NULL) != RLYRT_OK) {
    fprintf(stderr, "prog: %s\n", rlyrt_last_error());
    return 1;
  }
  if (rlyrt_npy_save(argv[2], y) != RLYRT_OK) return 1;
  rlyrt_release(&x->obj);
  rlyrt_release(&y->obj);
  return 0;
}
EOF
expect 0 '' "$cc" -std=c11 -Wall -Wextra -Werror -I"$tmp/a" -I"$src/include" -o "$tmp/prog_a" "$tmp/prog.c" "$tmp/a/libbig.a" -lm
expect 0 '' "$tmp/prog_a" "$tmp/x.npy" "$tmp/got_a.npy"
expect 0 '' "$npycmp" "$tmp/got_a.npy" "$tmp/want.npy"
# The object, linked first: the library then only brings the runtime.
expect 0 '' "$cc" -std=c11 -Wall -Wextra -Werror -I"$tmp/a" -I"$src/include" -o "$tmp/prog_o" "$tmp/prog.c" "$tmp/a/big.o" "$tmp/a/libbig.a" -lm
expect 0 '' "$tmp/prog_o" "$tmp/x.npy" "$tmp/got_o.npy"
expect 0 '' "$npycmp" "$tmp/got_o.npy" "$tmp/want.npy"

# OUT.c: the constants inline, no .incbin and no blob file.
expect 0 '' "$relayc" build "$big" -o "$tmp/c/big.c"
check '! grep -q incbin "$tmp/c/big.c" && [ ! -e "$tmp/c/big.blob" ]' "big.c refers to a blob file"
check '[ "$(wc -c <"$tmp/c/big.c")" -gt 1284048 ]' "big.c does not carry its constants"

echo "stats_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
