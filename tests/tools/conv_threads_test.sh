#!/bin/sh
# conv_threads_test.sh RELAYC: the threads of lower/conv.c's GEMMs. With
# every kernel split (RLY_SPLIT_ALL=1), run/conv_prepacked (filters packed
# at build time) and run/conv_schedules (filters as inputs), in both tile
# shapes (default, and RLY_CONV_ROWS=1: tiles of 7 pixels), give the same
# bits at 1, 2, 3 and 4 threads, through every threaded path:
#   - the pixels packed once over the whole reduction for all the blocks
#     of filters (NAME_pack_item), where blocks of filters split the work;
#   - the zero-bordered input copied in parts of rows (NAME_copy_item);
#   - blocks of pixels packing their own pixels (NAME_task only).
# Run from the repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
export RLY_SPLIT_ALL=1
for prog in conv_prepacked conv_schedules; do
  args=$(cat "tests/run/$prog.args")
  for rows in 0 1; do
    what="$prog (RLY_CONV_ROWS=$rows)"
    # shellcheck disable=SC2086
    RLY_CONV_ROWS=$rows "$relayc" build "tests/run/$prog.relay" $(echo "$args" | grep -o -- '--params [^ ]*') \
      --keep-source "$tmp/src-$prog-$rows" -o "$tmp/$prog-$rows.so" >"$tmp/log" 2>&1 ||
      { echo "FAIL: build $what"; cat "$tmp/log"; fail=1; continue; }
    c=$(cat "$tmp/src-$prog-$rows"/*.c)
    for item in _pack_item _copy_item; do
      echo "$c" | grep -q "rlyrt_parallel_for(nt, .*$item, &J)" || { echo "FAIL: $what: no $item"; fail=1; }
    done
    inputs=$(echo "$args" | sed 's/--params [^ ]*//')
    for n in 1 2 3 4; do
      # shellcheck disable=SC2086
      "$relayc" run "$tmp/$prog-$rows.so" $inputs --threads $n --output "$tmp/out-$prog-$rows-$n" >/dev/null ||
        { echo "FAIL: $what: run at $n threads"; fail=1; }
    done
    for n in 2 3 4; do
      diff -r "$tmp/out-$prog-$rows-1" "$tmp/out-$prog-$rows-$n" >/dev/null ||
        { echo "FAIL: $what: $n threads differ from 1"; fail=1; }
    done
  done
done
[ $fail = 0 ] && echo "conv threads: ok"
exit $fail
