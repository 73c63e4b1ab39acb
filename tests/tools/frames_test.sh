#!/bin/sh
# frames_test.sh RELAYC SRC_DIR TEST_FRAMES: builds tests/api/frames.relay
# into a shared library with RELAYC at -O2 and at -O0 (one kernel per
# operator call) and runs TEST_FRAMES (tests/api/test_frames.c) on each.
set -eu
[ $# -eq 3 ] || { echo "usage: frames_test.sh RELAYC SRC_DIR TEST_FRAMES" >&2; exit 2; }
relayc=$1
src=$2
test=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
for opt in -O2 -O0; do
  "$relayc" build "$src/tests/api/frames.relay" -o "$tmp/frames.so" $opt
  "$test" "$tmp/frames.so" $opt || { echo "FAIL: test_frames at $opt" >&2; exit 1; }
done
