#!/bin/sh
# prepack_test.sh RELAYC: GEMM weights packed at build time (lower/gemm.c,
# codegen/consts.c), on tests/run/dense_prepacked.relay (whose results
# run/dense_prepacked and compiled/*/dense_prepacked check, at every ISA
# level):
#   - with its weights bound from a .params file (constants), the four
#     packed GEMMs read B packed at build time: no B packing in the C, the
#     packed panels in the blob, the unpacked weights only where something
#     else reads them (w1, by a GEMV);
#   - that C compiles without warnings (gcc, clang; every ISA level);
#   - the weights as metadata constants instead: the same packing;
#   - with the weights as inputs, the same kernels pack B at run time;
#   - the C is the same on every build (determinism).
# Run from the repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog=tests/run/dense_prepacked.relay
params=tests/run/data/dense_prepacked.params
fail=0
check() { # check WHAT GOT WANT
  if [ "$2" != "$3" ]; then
    echo "FAIL: $1: got $2, want $3"
    fail=1
  fi
}

"$relayc" build "$prog" --params "$params" --emit c -o "$tmp/a.c" || exit 1
mkdir "$tmp/again" && "$relayc" build "$prog" --params "$params" --emit c -o "$tmp/again/a.c" || exit 1
cmp -s "$tmp/a.c" "$tmp/again/a.c" || { echo "FAIL: two builds differ"; fail=1; }
check "prepacked kernels" "$(grep -c '^/\* .*: packed GEMM float32 (B packed at build time)' "$tmp/a.c")" 4
check "run-time B packing" "$(grep -c 'dst = bp + jr \* kc' "$tmp/a.c")" 0
check "B buffers" "$(grep -c 'float \*restrict bp' "$tmp/a.c")" 0
check "GEMV kernels" "$(grep -c '^/\* nn.dense: GEMV float32' "$tmp/a.c")" 1
# Constants: w1 packed (3 panels x 300 x 32 floats) and as is (70 x 300,
# for the GEMV), w2 packed (33 x 40 x 32), b2, w3 packed (one batch for
# all: 2 x 20 x 32), w4 packed (2 batches x 2 x 20 x 32); w2, w3 and w4
# unpacked are not stored.
check "constants" "$(grep -o '^static const int64_t C[0-9]*_shape\[\] = {[0-9, ]*}' "$tmp/a.c" | sed 's/.*{//; s/}//' | tr '\n' ';')" \
  "28800;42240;1040;1280;2560;70, 300;"
check "blob bytes" "$(grep -o '^/\* Constants: [0-9]* bytes' "$tmp/a.c")" "/* Constants: 387680 bytes"

# The C compiles without a warning with gcc and clang, for every ISA level
# (RLYRT_ISA_MIN 2 and 1: an artifact built for the machine's ISA).
for cc in gcc clang; do
  command -v "$cc" >/dev/null || continue
  for flags in "-O2" "-O2 -mavx2 -mfma" "-O3 -mavx512f -mavx2 -mfma"; do
    # shellcheck disable=SC2086
    if ! "$cc" -std=c11 -Wall -Wextra -Werror $flags -Iinclude -I"$tmp" -c "$tmp/a.c" -o "$tmp/a.o" >"$tmp/log" 2>&1; then
      echo "FAIL: $cc $flags"; head -20 "$tmp/log"; fail=1
    fi
  done
done

# The weights as metadata constants (the module printed with --params
# bound): the same C.
"$relayc" check --print --params "$params" "$prog" >"$tmp/meta.relay" || exit 1
mkdir "$tmp/meta" && "$relayc" build "$tmp/meta.relay" --emit c -o "$tmp/meta/a.c" || exit 1
check "prepacked kernels (metadata)" "$(grep -c '^/\* .*: packed GEMM float32 (B packed at build time)' "$tmp/meta/a.c")" 4
check "constants (metadata)" "$(grep -o '^/\* Constants: [0-9]* bytes' "$tmp/meta/a.c")" "/* Constants: 387680 bytes"

"$relayc" build "$prog" --emit c -o "$tmp/c.c" || exit 1
check "run-time packed kernels" "$(grep -c '^/\* .*: packed GEMM float32, ' "$tmp/c.c")" 4
check "run-time B packing (inputs)" "$(grep -c 'dst = bp + jr \* kc' "$tmp/c.c")" 12

[ "$fail" = 0 ] && echo "prepack: ok"
exit "$fail"
