#!/bin/sh
# conv_test.sh RELAYC: the schedules of lower/conv.c and lower/pool.c on
# tests/run/conv_prepacked.relay and conv_schedules.relay (whose results
# run/, compiled/*/ and compiled/isa*/ check):
#   - `relayc build --stats` names each kernel's schedule: the 1x1 GEMM,
#     the im2col GEMM (each in tiles of NR pixels by MR filters or of 7
#     pixels by NR filters), the depthwise and direct kernels and the pools, and the GEMMs
#     read their filters packed at build time when the filters are
#     constants (a .params file), packed at run time when they are inputs;
#   - the packed filters are in the blob (12-row panels; for tiles of 7
#     pixels 16-wide panels, the filters zero-padded to a multiple of 32);
#   - that C compiles without warnings (gcc, clang; every ISA level);
#   - the C is the same on every build (determinism);
#   - split over threads (RLY_SPLIT_ALL=1), the results are the same bits
#     at 1, 2 and 3 threads.
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
prog=tests/run/conv_prepacked.relay
params=tests/run/data/conv_prepacked.params

"$relayc" build "$prog" --params "$params" --stats -o "$tmp/p.so" >"$tmp/stats" 2>&1 || { cat "$tmp/stats"; exit 1; }
count() { grep -c "^ *kernel [0-9]*: .* | $1\$" "$tmp/stats"; }
check "1x1 GEMM (packed)" "$(count 'conv2d 1x1 GEMM float32 (filter packed at build time)')" 12
check "im2col GEMM (packed)" "$(count 'conv2d im2col GEMM float32 (filter packed at build time)')" 4
check "im2col GEMM, tiles of 7 pixels (packed)" \
  "$(count 'conv2d im2col GEMM float32 (tiles of 7 pixels; filter packed at build time)')" 3
check "1x1 GEMM, tiles of 7 pixels (packed)" \
  "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels; filter packed at build time)')" 3
check "depthwise" "$(count 'depthwise conv2d float32')" 4
check "direct" "$(count 'conv2d direct float32')" 5
check "max pool" "$(count 'max pool float32')" 1
check "average pools" "$(count 'average pool float32')" 4
check "reference kernels" "$(grep -c '| reference$' "$tmp/stats")" 0

"$relayc" build tests/run/conv_schedules.relay --stats -o "$tmp/s.so" >"$tmp/stats" 2>&1 || { cat "$tmp/stats"; exit 1; }
check "1x1 GEMM" "$(count 'conv2d 1x1 GEMM float32')" 12
check "im2col GEMM" "$(count 'conv2d im2col GEMM float32')" 5
check "im2col GEMM, tiles of 7 pixels" "$(count 'conv2d im2col GEMM float32 (tiles of 7 pixels)')" 4
check "1x1 GEMM, tiles of 7 pixels" "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels)')" 3
# RLY_CONV_ROWS=1: every GEMM in tiles of 7 pixels
RLY_CONV_ROWS=1 "$relayc" build tests/run/conv_schedules.relay --stats -o "$tmp/r.so" >"$tmp/stats" 2>&1 ||
  { cat "$tmp/stats"; exit 1; }
check "1x1 GEMM, tiles of 7 pixels (all)" "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels)')" 15
check "im2col GEMM, tiles of 7 pixels (all)" "$(count 'conv2d im2col GEMM float32 (tiles of 7 pixels)')" 9
check "packed at build time (inputs)" "$(grep -c 'packed at build time' "$tmp/stats")" 0

"$relayc" build "$prog" --params "$params" --emit c -o "$tmp/a.c" || exit 1
mkdir "$tmp/again" && "$relayc" build "$prog" --params "$params" --emit c -o "$tmp/again/a.c" || exit 1
cmp -s "$tmp/a.c" "$tmp/again/a.c" || { echo "FAIL: two builds differ"; fail=1; }
# w2 (130 filters of 32 x 3 x 3, Winograd F(4x4)) transformed and packed:
# 36 points x 5 panels x 32 channels x 32 floats
check "w2 packed" "$(grep -c '^static const int64_t C[0-9]*_shape\[\] = {184320}' "$tmp/a.c")" 1
check "run-time filter packing" "$(grep -c 'dst\[l \* MR + r\] = src\[l\]' "$tmp/a.c")" 0
# w11 (64 filters of 288, tiles of 7 pixels) packed: 4 panels x 288 x 16 floats
check "w11 packed" "$(grep -c '^static const int64_t C[0-9]*_shape\[\] = {18432}' "$tmp/a.c")" 1
check "run-time filter packing (tiles of 7 pixels)" "$(grep -c 'dst\[l \* NR + x\] = src\[l\]' "$tmp/a.c")" 0
# Tiles of 7 pixels of 128 filters and more that read the input in place
# (x24's 1x1 and x26's 3x3 at stride 2) pack it on AVX2 (rows_lpack): one
# AVX2 function each reads the pixels from ap, and none of AVX-512's.
check "AVX2 pixel packs" "$(grep -c '^                const float \*restrict pa = ap + ir \* kc;$' "$tmp/a.c")" 2
# Every tile of 7 pixels of a packed filter prefetches the next run of
# panels' lines: the tile's own two (AVX-512: 32 filters), or its share of
# the next panel (portable: 8 filters of 16): the 6 such kernels, at each
# of the 3 ISA levels.
check "filter prefetch per ISA" "$(grep -c 'pf = pb - (ic + jr) % ' "$tmp/a.c")" 18
check "filter prefetch, AVX-512's run of two panels" "$(grep -c 'pf = pb - (ic + jr) % 32 + kc \* 32' "$tmp/a.c")" 6
# AVX-512's tiles read their second vector of filters from the next panel
check "AVX-512 tiles across two panels" \
  "$(grep -c 'const __m512 b1 = _mm512_loadu_ps(pb + 16 \* kc + l \* PB + 0);' "$tmp/a.c")" 6
# AVX2 on tiles of 16 pixels where AVX-512 takes tiles of 7 (put_kernel_alt):
# by the shape rule, ResNet's 512 -> 128 1x1 at 28x28 and not the same
# at 14x14 (under NCP pixels); with RLY_CONV_ALT=1 every packed GEMM, its
# filter packed twice (an AVX-512 kernel and an AVX2 one behind one
# dispatch, the second packing one more argument of the call).
for hw in 28 14; do
  cat >"$tmp/z$hw.relay" <<EOF
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 512, $hw, $hw), float32]) {
  nn.relu(nn.conv2d(%x, ones(shape=[128, 512, 1, 1], dtype="float32"), padding=[0, 0, 0, 0], channels=128, kernel_size=[1, 1]))
}
EOF
  "$relayc" build "$tmp/z$hw.relay" --stats -o "$tmp/z.so" >"$tmp/stats" 2>&1 || { cat "$tmp/stats"; exit 1; }
  want=0
  [ $hw = 28 ] && want=1
  check "AVX2's own tiles at ${hw}x$hw" \
    "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels; on AVX2 of 16 pixels; filter packed at build time twice)')" $want
  check "tiles of 7 pixels at ${hw}x$hw" "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels.*')" 1
done
RLY_CONV_ALT=1 "$relayc" build "$prog" --params "$params" --stats -o "$tmp/alt.so" >"$tmp/stats" 2>&1 ||
  { cat "$tmp/stats"; exit 1; }
check "1x1 GEMM, AVX2's own tiles (all)" \
  "$(count 'conv2d 1x1 GEMM float32 (tiles of 7 pixels; on AVX2 of 16 pixels; filter packed at build time twice)')" 15
check "im2col GEMM, AVX2's own tiles (all)" \
  "$(count 'conv2d im2col GEMM float32 (tiles of 7 pixels; on AVX2 of 16 pixels; filter packed at build time twice)')" 7
RLY_CONV_ALT=1 "$relayc" build "$prog" --params "$params" --emit c -o "$tmp/alt.c" || exit 1
check "AVX2 kernels of their own" \
  "$(grep -c '^static rlyrt_status K[0-9]*_n(rlyrt_object \*const \*args, rlyrt_object \*\*out, const char \*rly_w) {$' "$tmp/alt.c")" 22
# (and the max pool's paths: tests/run/pool_max.relay)
"$relayc" build tests/run/pool_max.relay --emit c -o "$tmp/pm.c" || exit 1
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  for flags in "-O2" "-O2 -mavx2 -mfma" "-O3 -mavx512f -mavx2 -mfma"; do
    for c in a pm alt; do
      # shellcheck disable=SC2086
      if ! "$cc" -std=c11 -Wall -Wextra -Wshadow -Werror $flags -Iinclude -I"$tmp" -c "$tmp/$c.c" -o "$tmp/$c.o" >"$tmp/log" 2>&1; then
        echo "FAIL: $cc $flags ($c.c)"; head -20 "$tmp/log"; fail=1
      fi
    done
  done
done
# Threads: with every kernel given its parallel code (RLY_SPLIT_ALL=1), the
# kernels split into parts (rlyrt_parallel_for in every conv and pool
# kernel) and the results are the same bits at 1, 2 and 3 threads.
RLY_SPLIT_ALL=1 "$relayc" build "$prog" --params "$params" --emit c -o "$tmp/par.c" || exit 1
# (32 convolutions, the 2 Winograd ones by block or in two phases: three
# calls each, and 5 pools)
check "parallel conv and pool kernels" "$(grep -c 'rlyrt_parallel_for(nt, .*_task, &J)' "$tmp/par.c")" 42
args=$(cat tests/run/conv_schedules.args)
for n in 1 2 3; do
  # shellcheck disable=SC2086
  RLY_SPLIT_ALL=1 "$relayc" run tests/run/conv_schedules.relay $args --threads $n --output "$tmp/t$n" >/dev/null ||
    { echo "FAIL: run at $n threads"; fail=1; }
done
for n in 2 3; do
  diff -r "$tmp/t1" "$tmp/t$n" >/dev/null || { echo "FAIL: $n threads differ from 1"; fail=1; }
done
[ $fail = 0 ] && echo "conv: ok"
exit $fail
