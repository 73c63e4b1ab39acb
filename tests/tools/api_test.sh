#!/bin/sh
# api_test.sh RELAYC SRC_DIR TEST_LOADER: compiled modules used from C, as
# a user's program would use them (tests/api/).
#   - builds tests/api/model.relay with RELAYC, from a temporary directory
#     (so closures are named "fn at model.relay:LINE:COL"), into model.so
#     (--name model), other.so (--name other, -O0) and lib/libmodel.a
#     (which writes lib/model.h); model.so and the library compiled in
#     parts (RELAYC_JOBS=3), other.so whole (RELAYC_JOBS=1);
#   - runs TEST_LOADER (tests/api/test_loader.c, a CMake target linked with
#     the build's runtime, sanitizers included) on model.so and other.so;
#   - compiles tests/api/test_static.c with ${CC:-cc}, strict warnings as
#     errors, against lib/model.h and SRC_DIR/include (the runtime header;
#     dlpack/dlpack.h from the system), links it with lib/libmodel.a and -lm
#     only, and runs it.
# Fails on any failure.
set -eu

[ $# -eq 3 ] || { echo "usage: api_test.sh RELAYC SRC_DIR TEST_LOADER" >&2; exit 2; }
abs() {
  case $1 in
  /*) printf '%s\n' "$1" ;;
  *) printf '%s/%s\n' "$(pwd)" "$1" ;;
  esac
}
relayc=$(abs "$1")
src=$(cd "$2" && pwd)
loader=$(abs "$3")
cc=${CC:-cc}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# run LOG CMD...: runs CMD with its output in LOG; on failure shows it and fails.
run() {
  log=$1
  shift
  "$@" >"$log" 2>&1 || {
    status=$?
    sed 's/^/  /' "$log" >&2
    fail "$* (exit status $status)"
  }
}

cd "$tmp"
cp "$src/tests/api/model.relay" model.relay
mkdir lib

# {==== The models ====}
# model.so in parts (driver.c: RELAYC_JOBS), other.so compiled whole
run build.log env RELAYC_JOBS=3 "$relayc" build model.relay -o model.so --name model --cc "$cc"
run build.log env RELAYC_JOBS=1 "$relayc" build model.relay -o other.so --name other --cc "$cc" -O0
# Unfused, so that @main keeps two intermediate tensors for test_static's
# workspace checks (fused, relu((x + y) * x) is one kernel and needs none).
run build.log env RELAYC_JOBS=3 "$relayc" build model.relay -o lib/libmodel.a --name model --cc "$cc" --no-fuse
[ -f lib/model.h ] || fail "relayc build -o lib/libmodel.a --name model wrote no lib/model.h"

# Both programs run, whatever the first gives; then any failure fails.
failed=""

# {==== The loader ====}
"$loader" "$tmp/model.so" "$tmp/other.so" || failed="$failed test_loader"

# {==== The static library in a plain C program ====}
flags="-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith -Wvla -Wpedantic -Werror"
# shellcheck disable=SC2086
if ! "$cc" $flags -I"$src/include" -Ilib -o test_static "$src/tests/api/test_static.c" lib/libmodel.a -lm \
  >cc.log 2>&1; then
  # A C library older than glibc 2.34 keeps dlopen (the runtime's loader) in libdl.
  # shellcheck disable=SC2086
  run cc.log "$cc" $flags -I"$src/include" -Ilib -o test_static "$src/tests/api/test_static.c" lib/libmodel.a \
    -lm -ldl -lpthread
fi
./test_static || failed="$failed test_static"
[ -z "$failed" ] || fail "$failed"
echo "api test: passed"
