#!/bin/sh
# winograd_test.sh RELAYC: the choice of lower/winograd.c's schedule and its
# filter transform (run/conv_winograd and compiled/winograd*/ check the
# results):
#   - `relayc build --stats` on ResNet's 3x3 stride-1 shapes with constant
#     filters (folded from ones()) names Winograd F(4x4, 3x3) at 56x56 and
#     28x28, the fused epilogue included, F(2x2, 3x3) at 14x14 with 256
#     channels (U(4x4) of 9.4 MB: read from memory at each call) and
#     F(4x4) at 14x14 with 64 (U of 0.6 MB); a 7x7 image of 512
#     channels, a stride-2 convolution and a filter that is an input keep
#     the im2col GEMM; RLY_WINOGRAD=0 gives none, RLY_WINOGRAD=2 and 4 give
#     every 3x3 stride-1 constant filter F(2x2) or F(4x4);
#   - the filter transform end to end: conv2d of ones by a filter of ones
#     (x 0.5) on F(2x2) and F(4x4) prints what the interpreter prints
#     (tests/unit/test_winograd.c checks the transform itself);
#   - that C (and its F(2x2) variant) compiles without warnings (gcc,
#     clang; every ISA level) and is the same on every build;
#   - split over threads (RLY_SPLIT_ALL=1), run/conv_winograd's results are
#     the same bits at 1, 2 and 3 threads, on F(2x2) and on F(4x4), with V
#     per thread (2 threads: whole blocks; 3: blocks and panels, some
#     blocks transformed by two threads) and shared (RLY_WINO_SHARED=1).
# Run from the repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # check WHAT GOT WANT
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: got $2, want $3"
    fail=1
  fi
}
cat >"$tmp/resnet.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%a: Tensor[(1, 64, 56, 56), float32], %b: Tensor[(1, 128, 28, 28), float32],
          %c: Tensor[(1, 256, 14, 14), float32], %d: Tensor[(1, 512, 7, 7), float32],
          %w: Tensor[(64, 64, 3, 3), float32], %bias: Tensor[(64), float32], %e: Tensor[(1, 64, 14, 14), float32]) {
  %0 = nn.relu(nn.bias_add(nn.conv2d(%a, multiply(ones(shape=[64, 64, 3, 3], dtype="float32"), 0.5f), padding=[1, 1],
    channels=64, kernel_size=[3, 3]), %bias));
  %1 = nn.conv2d(%b, multiply(ones(shape=[128, 128, 3, 3], dtype="float32"), 0.5f), padding=[1, 1], channels=128,
    kernel_size=[3, 3]);
  %2 = nn.conv2d(%c, multiply(ones(shape=[256, 256, 3, 3], dtype="float32"), 0.5f), padding=[1, 1], channels=256,
    kernel_size=[3, 3]);
  %3 = nn.conv2d(%d, multiply(ones(shape=[512, 512, 3, 3], dtype="float32"), 0.5f), padding=[1, 1], channels=512,
    kernel_size=[3, 3]);
  %4 = nn.conv2d(%a, multiply(ones(shape=[128, 64, 3, 3], dtype="float32"), 0.5f), strides=[2, 2], padding=[1, 1],
    channels=128, kernel_size=[3, 3]);
  %5 = nn.conv2d(%a, %w, padding=[1, 1], channels=64, kernel_size=[3, 3]);
  %6 = nn.conv2d(%e, multiply(ones(shape=[64, 64, 3, 3], dtype="float32"), 0.5f), padding=[1, 1], channels=64,
    kernel_size=[3, 3]);
  (%0, %1, %2, %3, %4, %5, %6)
}
EOF
stats() { # stats [RLY_WINOGRAD]: --stats of the program, C only
  RLY_WINOGRAD=${1:-} "$relayc" build "$tmp/resnet.relay" --stats -o "$tmp/r${1:-}.c" >"$tmp/stats" 2>&1 ||
    { cat "$tmp/stats"; exit 1; }
}
stats
check "F(4x4) at 56x56 with relu and bias" \
  "$(grep -c 'nn.conv2d, nn.bias_add, nn.relu | (1, 64, 56, 56) | conv2d Winograd F(4x4 3x3)' "$tmp/stats")" 1
check "F(4x4) at 28x28" "$(grep -c '(1, 128, 28, 28) | conv2d Winograd F(4x4 3x3)' "$tmp/stats")" 1
check "F(2x2) at 14x14, 256 channels" "$(grep -c '(1, 256, 14, 14) | conv2d Winograd F(2x2 3x3)' "$tmp/stats")" 1
check "F(4x4) at 14x14, 64 channels" "$(grep -c '(1, 64, 14, 14) | conv2d Winograd F(4x4 3x3)' "$tmp/stats")" 1
check "Winograd kernels" "$(grep -c 'Winograd' "$tmp/stats")" 4
check "im2col at 7x7" "$(grep -c '(1, 512, 7, 7) | conv2d im2col GEMM' "$tmp/stats")" 1
check "im2col at stride 2" "$(grep -c '(1, 128, 28, 28) | conv2d im2col GEMM' "$tmp/stats")" 1
check "im2col for an input filter" "$(grep -c 'nn.conv2d | (1, 64, 56, 56) | conv2d im2col GEMM' "$tmp/stats")" 1
stats 0
check "RLY_WINOGRAD=0" "$(grep -c 'Winograd' "$tmp/stats")" 0
for m in 2 4; do
  stats $m
  check "RLY_WINOGRAD=$m" "$(grep -c "Winograd F(${m}x$m 3x3)" "$tmp/stats")" 5
done
# conv2d(ones, ones x 0.5): 4.5 x 16 inside the image, less at its borders.
printf '#[version = "0.0.5"]\ndef @main(%%x: Tensor[(1, 16, 8, 8), float32]) {\n  nn.conv2d(%%x, multiply(ones(shape=[16, 16, 3, 3], dtype="float32"), 0.5f), padding=[1, 1], channels=16, kernel_size=[3, 3])\n}\n' \
  >"$tmp/ones.relay"
printf '#[version = "0.0.5"]\ndef @main() {\n  ones(shape=[1, 16, 8, 8], dtype="float32")\n}\n' >"$tmp/x.relay"
"$relayc" run "$tmp/x.relay" --interp --output "$tmp/x.npy" >/dev/null || { echo "FAIL: the input"; exit 1; }
for m in 2 4; do
  RLY_WINOGRAD=$m "$relayc" build "$tmp/ones.relay" --stats -o "$tmp/o$m.so" >"$tmp/stats" 2>&1 || { cat "$tmp/stats"; exit 1; }
  check "ones: F(${m}x$m)" "$(grep -c "Winograd F(${m}x$m 3x3)" "$tmp/stats")" 1
  "$relayc" run "$tmp/o$m.so" --input x="$tmp/x.npy" >"$tmp/out$m" || { echo "FAIL: run F($m)"; fail=1; }
done
"$relayc" run "$tmp/ones.relay" --interp --input x="$tmp/x.npy" >"$tmp/want" || exit 1
for m in 2 4; do
  cmp -s "$tmp/out$m" "$tmp/want" || { echo "FAIL: F(${m}x$m) on ones differs from the interpreter"; fail=1; }
done
"$relayc" build "$tmp/resnet.relay" --emit c -o "$tmp/a.c" || exit 1
mkdir "$tmp/again" && "$relayc" build "$tmp/resnet.relay" --emit c -o "$tmp/again/a.c" || exit 1
cmp -s "$tmp/a.c" "$tmp/again/a.c" || { echo "FAIL: two builds differ"; fail=1; }
RLY_WINOGRAD=2 "$relayc" build "$tmp/resnet.relay" --emit c -o "$tmp/a2.c" || exit 1
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  for flags in "-O2" "-O2 -mavx2 -mfma" "-O3 -mavx512f -mavx2 -mfma"; do
    for f in a a2; do
      # shellcheck disable=SC2086
      if ! "$cc" -std=c11 -Wall -Wextra -Wshadow -Werror $flags -Iinclude -I"$tmp" -c "$tmp/$f.c" -o "$tmp/a.o" >"$tmp/log" 2>&1; then
        echo "FAIL: $cc $flags $f.c"; head -20 "$tmp/log"; fail=1
      fi
    done
  done
done
args=$(cat tests/run/conv_winograd.args)
for m in 2 4; do
  for v in own shared; do
    hook=; [ $v = shared ] && hook=1
    RLY_WINO_SHARED=$hook RLY_SPLIT_ALL=1 RLY_WINOGRAD=$m "$relayc" build tests/run/conv_winograd.relay \
      --params tests/run/data/conv_winograd.params -o "$tmp/w$m$v.so" || exit 1
    for n in 1 2 3; do
      # shellcheck disable=SC2086
      "$relayc" run "$tmp/w$m$v.so" $args --threads $n --output "$tmp/t$m$v-$n" >/dev/null ||
        { echo "FAIL: run at $n threads"; fail=1; }
    done
  done
  # the kernels tell the splits apart: V per thread unless 4 threads a block
  RLY_SPLIT_ALL=1 RLY_WINOGRAD=$m "$relayc" build tests/run/conv_winograd.relay \
    --params tests/run/data/conv_winograd.params --emit c -o "$tmp/w$m.c" || exit 1
  RLY_WINO_SHARED=1 RLY_SPLIT_ALL=1 RLY_WINOGRAD=$m "$relayc" build tests/run/conv_winograd.relay \
    --params tests/run/data/conv_winograd.params --emit c \
    -o "$tmp/w${m}s.c" || exit 1
  check "F(${m}x$m): V per thread" "$(grep -c 'const int shared = nt > [0-9]' "$tmp/w$m.c")" 6
  check "F(${m}x$m): V shared" "$(grep -c 'const int shared = nt > 1;' "$tmp/w${m}s.c")" 6
  for v in own shared; do
    for n in 2 3; do
      diff -r "$tmp/t${m}own-1" "$tmp/t$m$v-$n" >/dev/null || { echo "FAIL: F(${m}x$m), V $v: $n threads differ from 1"; fail=1; }
    done
  done
done
[ $fail = 0 ] && echo "winograd: ok"
exit $fail
