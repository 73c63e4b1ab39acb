#!/bin/sh
# winograd_groups_test.sh RELAYC NPYCMP: lower/winograd.c's kernel when the
# transformed input V of the whole batch would pass its cap (8 MiB): a
# batch of 3 images of 96 x 56 x 56 (3.1 MB of V each: 7 blocks x 36
# points x 96 channels x 32 rows) runs in groups of 2 images (the last
# group of 1), the loop that `J.q0 +=` names, where V is shared among the
# threads (RLY_WINO_SHARED=1; by default each thread has its own V of one
# block and no groups are needed). The result matches the interpreter's
# and is the same bits at 1, 2 and 3 threads, V shared or per thread
# (every kernel split, RLY_SPLIT_ALL=1); so do single images of one and
# two blocks. Run from anywhere.
set -u
relayc=$1
npycmp=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# the input: sin(0.37 i), different in every image and channel
cat >"$tmp/x.relay" <<'EOR'
#[version = "0.0.5"]
def @main() {
  reshape(sin(multiply(arange(0f, 903168f, 1f, dtype="float32"), 0.37f)), newshape=[3, 96, 56, 56])
}
EOR
cat >"$tmp/c.relay" <<'EOR'
#[version = "0.0.5"]
def @main(%x: Tensor[(3, 96, 56, 56), float32]) {
  nn.relu(add(nn.conv2d(%x, multiply(ones(shape=[16, 96, 3, 3], dtype="float32"), 0.5f), padding=[1, 1],
    channels=16, kernel_size=[3, 3]), -1f))
}
EOR
"$relayc" run "$tmp/x.relay" --interp --output "$tmp/x.npy" >/dev/null || { echo "FAIL: the input"; exit 1; }
RLY_WINO_SHARED=1 RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c.relay" --emit c -o "$tmp/c.c" || exit 1
grep -q 'Winograd F(4x4 3x3)' "$tmp/c.c" || { echo "FAIL: not Winograd"; fail=1; }
grep -q 'for (; J.q0 < 3; J.q0 += 2)' "$tmp/c.c" || { echo "FAIL: no groups of 2 images"; fail=1; }
grep -q 'const int shared = nt > 1;' "$tmp/c.c" || { echo "FAIL: V not shared"; fail=1; }
RLY_WINO_SHARED=1 RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c.relay" -o "$tmp/cs.so" || exit 1
RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c.relay" -o "$tmp/c.so" || exit 1
"$relayc" run "$tmp/c.relay" --interp --input x="$tmp/x.npy" --output "$tmp/want.npy" >/dev/null || exit 1
for n in 1 2 3; do
  for v in c cs; do
    "$relayc" run "$tmp/$v.so" --input x="$tmp/x.npy" --threads $n --output "$tmp/got$v$n.npy" >/dev/null ||
      { echo "FAIL: run $v at $n threads"; fail=1; }
  done
done
"$npycmp" --rtol 1e-5 --atol 1e-4 "$tmp/gotc1.npy" "$tmp/want.npy" || { echo "FAIL: differs from the interpreter"; fail=1; }
for n in 1 2 3; do
  for v in c cs; do
    cmp -s "$tmp/gotc1.npy" "$tmp/got$v$n.npy" || { echo "FAIL: $v at $n threads differs from 1"; fail=1; }
  done
done
# One image: with V per thread (_own_task) an item is a whole block when
# the blocks divide evenly among the threads, else a block and panel: 14x14
# is one block (2 and 3 threads: panels, every thread transforming the
# block), 28x28 two (2 threads: whole blocks, 3: panels); with V shared
# (RLY_WINO_SHARED=1) the two phases are split apart (_in_task and _task).
# The same bits at 1, 2 and 3 threads.
for hw in 14 28; do
  cat >"$tmp/x$hw.relay" <<EOR
#[version = "0.0.5"]
def @main() {
  reshape(cos(multiply(arange(0f, $((24 * hw * hw))f, 1f, dtype="float32"), 0.21f)), newshape=[1, 24, $hw, $hw])
}
EOR
  cat >"$tmp/c$hw.relay" <<EOR
#[version = "0.0.5"]
def @main(%x: Tensor[(1, 24, $hw, $hw), float32]) {
  nn.relu(add(nn.conv2d(%x, multiply(sin(reshape(cumsum(ones(shape=[8640], dtype="float32"), axis=0), newshape=[40, 24, 3, 3])), 0.1f),
    padding=[1, 1], channels=40, kernel_size=[3, 3]), -0.5f))
}
EOR
  "$relayc" run "$tmp/x$hw.relay" --interp --output "$tmp/x$hw.npy" >/dev/null || { echo "FAIL: the input $hw"; fail=1; }
  RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c$hw.relay" -o "$tmp/c$hw.c" || exit 1
  grep -q 'Winograd F(4x4 3x3)' "$tmp/c$hw.c" && grep -q '_own_task, &J)' "$tmp/c$hw.c" &&
    grep -q '_in_task, &J)' "$tmp/c$hw.c" || { echo "FAIL: $hw x $hw is not Winograd with both ways of splitting"; fail=1; }
  RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c$hw.relay" -o "$tmp/c$hw.so" || exit 1
  RLY_WINO_SHARED=1 RLY_SPLIT_ALL=1 "$relayc" build "$tmp/c$hw.relay" -o "$tmp/c${hw}s.so" || exit 1
  "$relayc" run "$tmp/c$hw.relay" --interp --input x="$tmp/x$hw.npy" --output "$tmp/want$hw.npy" >/dev/null || exit 1
  for n in 1 2 3; do
    for v in "" s; do
      "$relayc" run "$tmp/c$hw$v.so" --input x="$tmp/x$hw.npy" --threads $n --output "$tmp/got$hw$v-$n.npy" >/dev/null ||
        { echo "FAIL: $hw x $hw$v at $n threads"; fail=1; }
    done
  done
  "$npycmp" --rtol 1e-5 --atol 1e-4 "$tmp/got$hw-1.npy" "$tmp/want$hw.npy" ||
    { echo "FAIL: $hw x $hw differs from the interpreter"; fail=1; }
  for n in 1 2 3; do
    for v in "" s; do
      cmp -s "$tmp/got$hw-1.npy" "$tmp/got$hw$v-$n.npy" || { echo "FAIL: $hw x $hw$v at $n threads differs from 1"; fail=1; }
    done
  done
done
[ $fail = 0 ] && echo "winograd groups: ok"
exit $fail
