#!/bin/sh
# parts_test.sh RELAYC: kernels of one shape at several places share one
# body (codegen/kernels.c), and a C file of several bodies is compiled in
# parts at the same time (driver.c, RELAYC_JOBS) into the same results as
# compiled whole:
#   - two conv2d of one shape at two places: one body (NAME_Kn_at), called
#     by two kernels with their own source positions; two pools: two more
#     bodies; the C file's second line says "relayc-parts: 3, B bytes";
#   - RELAYC_JOBS=1 compiles the file whole (one C compiler, no -DRC_PART),
#     RELAYC_JOBS=2 in two parts (-DRC_PART=0 and 1), RELAYC_JOBS=2 with
#     RLY_PART_BYTES=1 in three (more parts than CPUs: a queue); all give
#     the same bits, with and without --profile (the records in part 0);
#     without RELAYC_JOBS, a file this small compiles whole;
#   - more parts than CPUs come in whole rounds: bodies that need 3 parts
#     of RLY_PART_BYTES make 4 on 2 CPUs, 3 on 3 CPUs;
#   - an object (.o) built in parts is one relocatable object: the bodies
#     of the other part are defined in it, none is left undefined; a static
#     library (.a) built in parts archives both parts (tests/tools/api_test.sh
#     links one into a C program);
#   - the C file compiled whole by the C compiler with -Wall -Wextra -Werror.
# Run from the repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
failed() {
  echo "FAIL: $*"
  fail=1
}
cat >"$tmp/twice.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 32, 14, 14), float32], %y: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(64, 32, 3, 3), float32], %b: Tensor[(64), float32]) {
  %0 = nn.relu(nn.bias_add(nn.conv2d(%x, %w, padding=[1, 1], channels=64, kernel_size=[3, 3]), %b));
  %1 = nn.relu(nn.bias_add(nn.conv2d(%y, %w, padding=[1, 1], channels=64, kernel_size=[3, 3]), %b));
  %2 = nn.max_pool2d(%1, pool_size=[2, 2], strides=[2, 2]);
  %3 = nn.avg_pool2d(%0, pool_size=[2, 2], strides=[2, 2]);
  (%0, %2, %3)
}
EOF
D=tests/run/data
inputs="--input x=$D/conv_x11.npy --input y=$D/conv_x11.npy --input w=$D/conv_w11.npy --input b=$D/conv_b11.npy"

"$relayc" build "$tmp/twice.relay" -o "$tmp/twice.c" >"$tmp/log" 2>&1 || { failed "build twice.c"; cat "$tmp/log"; }
c="$tmp/twice.c"
case $(sed -n 2p "$c") in
"/* relayc-parts: 3, "*" bytes */") ;;
*) failed "second line: $(sed -n 2p "$c")" ;;
esac
[ "$(grep -c '^RC_BODY rlyrt_status twice_K[0-9]*_at(' "$c")" = 3 ] || failed "not three bodies"
calls=$(grep -o 'return twice_K0_at(args, out, "[^"]*")' "$c")
[ "$(echo "$calls" | grep -c 'twice.relay:3:8')" = 1 ] && [ "$(echo "$calls" | grep -c 'twice.relay:4:8')" = 1 ] ||
  failed "the conv body is not called with both positions: $calls"
cc -std=c11 -Wall -Wextra -Wno-misleading-indentation -Werror -O1 -fPIC -Iinclude -I"$tmp" -c "$c" -o "$tmp/whole.o" \
  >"$tmp/log" 2>&1 || { failed "the C compiled whole"; cat "$tmp/log"; }

for prof in "" --profile; do
  for j in 1 2 3; do
    # 3: two CPUs, parts of one byte at most: as many parts as bodies
    bytes=0
    [ $j = 3 ] && bytes=1
    # shellcheck disable=SC2086
    RELAYC_JOBS=$((j < 3 ? j : 2)) RLY_PART_BYTES=$bytes "$relayc" build "$tmp/twice.relay" $prof -v \
      -o "$tmp/t$j$prof.so" >"$tmp/log$j" 2>&1 || { failed "build $j $prof"; cat "$tmp/log$j"; continue; }
    n=$(grep -c -- '-DRC_PART=' "$tmp/log$j")
    want=0
    [ $j = 2 ] && want=2
    [ $j = 3 ] && want=3
    [ "$n" = $want ] || failed "build $j $prof: $n compiles of a part, not $want"
    # shellcheck disable=SC2086
    "$relayc" run "$tmp/t$j$prof.so" $inputs $prof --output "$tmp/out$j$prof" >"$tmp/run$j" 2>&1 ||
      { failed "run at RELAYC_JOBS=$j $prof"; cat "$tmp/run$j"; }
  done
  diff -r "$tmp/out1$prof" "$tmp/out2$prof" >/dev/null || failed "$prof: two parts give other results"
  diff -r "$tmp/out1$prof" "$tmp/out3$prof" >/dev/null || failed "$prof: three parts give other results"
  if [ -n "$prof" ]; then
    [ "$(grep -c 'conv2d' "$tmp/run2")" -ge 2 ] || { failed "--profile in parts: no conv2d rows"; cat "$tmp/run2"; }
  fi
done

env -u RELAYC_JOBS "$relayc" build "$tmp/twice.relay" -v -o "$tmp/small.so" >"$tmp/log" 2>&1 || { failed "build small.so"; cat "$tmp/log"; }
! grep -q -- '-DRC_PART=' "$tmp/log" || failed "a small file compiled in parts"

# four bodies, parts of a third of their bytes: 3 parts, rounded up to
# whole rounds of the CPUs
cat >"$tmp/four.relay" <<'EOF'
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 32, 14, 14), float32], %w: Tensor[(64, 32, 3, 3), float32], %v: Tensor[(16, 32, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1], channels=64, kernel_size=[3, 3]);
  %1 = nn.conv2d(%x, %v, channels=16, kernel_size=[1, 1]);
  (%0, %1, nn.max_pool2d(%x, pool_size=[2, 2], strides=[2, 2]), nn.avg_pool2d(%x, pool_size=[2, 2], strides=[2, 2]))
}
EOF
"$relayc" build "$tmp/four.relay" -o "$tmp/four.c" >"$tmp/log" 2>&1 || { failed "build four.c"; cat "$tmp/log"; }
fb=$(sed -n 's|^/\* relayc-parts: 4, \([0-9]*\) bytes \*/$|\1|p' "$tmp/four.c")
if [ -z "$fb" ]; then
  failed "four.c, second line: $(sed -n 2p "$tmp/four.c")"
else
  for jp in 2:4 3:3; do
    RELAYC_JOBS=${jp%:*} RLY_PART_BYTES=$(((fb + 2) / 3)) "$relayc" build "$tmp/four.relay" -v -o "$tmp/four.so" \
      >"$tmp/log" 2>&1 || { failed "build four.so"; cat "$tmp/log"; }
    [ "$(grep -c -- "-DRC_PARTS=${jp#*:} " "$tmp/log")" = "${jp#*:}" ] ||
      failed "four bodies on ${jp%:*} CPUs: not ${jp#*:} parts: $(grep -o -- '-DRC_PARTS=[0-9]*' "$tmp/log" | head -1)"
  done
fi

RELAYC_JOBS=2 "$relayc" build "$tmp/twice.relay" -o "$tmp/twice.o" >"$tmp/log" 2>&1 || { failed "build .o"; cat "$tmp/log"; }
nm "$tmp/twice.o" >"$tmp/nm" 2>&1 || failed "nm twice.o"
grep -q ' T twice_K0_at$' "$tmp/nm" && grep -q ' T twice_K2_at$' "$tmp/nm" || failed "twice.o lacks a body: $(grep _at "$tmp/nm")"
! grep -q ' U twice_' "$tmp/nm" || failed "twice.o leaves a body undefined"
RELAYC_JOBS=2 "$relayc" build "$tmp/twice.relay" -o "$tmp/libtwice.a" >"$tmp/log" 2>&1 || { failed "build .a"; cat "$tmp/log"; }
[ "$(ar t "$tmp/libtwice.a" | grep -c '^part[01]\.o$')" = 2 ] || failed "libtwice.a: $(ar t "$tmp/libtwice.a" | head -3)"

[ $fail = 0 ] && echo "parts: ok"
exit $fail
