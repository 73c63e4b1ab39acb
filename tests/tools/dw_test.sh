#!/bin/sh
# dw_test.sh RELAYC: lower/conv.c's depthwise kernel (CONV_DW) on
# run/conv_depthwise (tools/make_dw.py: every path of the kernel). The
# generated C takes each path (planes flat on masked loads, masked stores,
# an overlapping last vector, the portable buffer, the copy by column phase
# at stride 2, the next plane prefetched, large planes copied by rows into
# a window, each input vector loaded once for the rows that read it, the
# epilogue in registers, a residual read masked at a row's end), is the same C on a second build, and, with every kernel split (RLY_SPLIT_ALL=1), gives the same bits at 1,
# 2 and 3 threads at each ISA level (RLYRT_ISA_MAX=0, 1 and 2); the values
# themselves are checked by compiled/*/conv_depthwise. Run from the
# repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export RLY_SPLIT_ALL=1
prog=tests/run/conv_depthwise
args=$(cat "$prog.args")
for b in 1 2; do
  mkdir "$tmp/$b"
  "$relayc" build "$prog.relay" -o "$tmp/$b/dw.so" --keep-source "$tmp/$b" >"$tmp/log" 2>&1 ||
    { echo "FAIL: build"; cat "$tmp/log"; exit 1; }
done
cmp -s "$tmp/1/dw.c" "$tmp/2/dw.c" || { echo "FAIL: the generated C differs between two builds"; fail=1; }
c="$tmp/1/dw.c"
n=$(grep -c 'depthwise conv2d float32' "$c")
[ "$n" -ge 25 ] || { echo "FAIL: $n depthwise kernels, expected 25"; fail=1; }
# ... and the epilogues in registers: clip, a residual read masked (AVX-512)
for pat in '_mm512_maskz_loadu_ps((__mmask16)' '_mm512_mask_storeu_ps(c + ' '_mm256_maskstore_ps(c + ' \
  'io, _mm512_loadu_ps(r + x + 16)));' 'float tail\[' '__builtin_prefetch(pn, 0, 2);' '^ *j = [0-9]*;$' 'int64_t wb = 0, we = 0;' 'memmove(xp, xp + (r0 - wb) \* ' \
  'RLYRT_IN_REG(x);' '_mm256_shuffle_ps(a, b, 0xDD)), 0xD8)));' \
  '= _mm512_max_ps(_mm512_min_ps(' '= _mm256_max_ps(_mm256_min_ps(' 'v[0-9]* = _mm512_maskz_loadu_ps((__mmask16)0x[0-9a-f]*, p'; do
  grep -q -- "$pat" "$c" || { echo "FAIL: no '$pat' in the generated C"; fail=1; }
done
for isa in 0 1 2; do
  # shellcheck disable=SC2086
  "$relayc" build "$prog.relay" -o "$tmp/isa$isa.so" --cflags "-DRLYRT_ISA_MAX=$isa" >"$tmp/log" 2>&1 ||
    { echo "FAIL: build at RLYRT_ISA_MAX=$isa"; cat "$tmp/log"; fail=1; continue; }
  for n in 1 2 3; do
    # shellcheck disable=SC2086
    "$relayc" run "$tmp/isa$isa.so" $args --threads $n --output "$tmp/out-$isa-$n" >/dev/null ||
      { echo "FAIL: RLYRT_ISA_MAX=$isa: run at $n threads"; fail=1; }
  done
  for n in 2 3; do
    diff -r "$tmp/out-$isa-1" "$tmp/out-$isa-$n" >/dev/null ||
      { echo "FAIL: RLYRT_ISA_MAX=$isa: $n threads differ from 1"; fail=1; }
  done
done
[ $fail = 0 ] && echo "depthwise: ok"
exit $fail
