#!/bin/sh
# profile_test.sh RELAYC SRC: what a build is for, and where its time goes.
#   - relayc build --profile / relayc run --profile: one row per kernel with
#     its operators, shape, schedule and calls (the --repeat runs after the
#     warm-up counted), the
#     control flow between kernels and the total; a library built without
#     --profile is refused with a clear message; ordinary C has no timing
#     code and does not change with -v;
#   - relayc build -v and NAME.h say the version, target, levels and the
#     kernels by schedule;
#   - --target native: the module records its ISA extensions; on a CPU that
#     lacks one (simulated with RLYRT_CPU_DISABLE) rlyrt_module_load,
#     NAME_module() and the typed entry points fail with RLYRT_E_UNSUPPORTED
#     naming what is missing, instead of running the code.
# Run from tests/ (SRC: the repository root).
set -u
relayc=$1
src=$2
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

mlp=run/mlp_softmax.relay
# shellcheck disable=SC2046
set -- $(sed "s|tests/|$src/tests/|g" run/mlp_softmax.args)
inputs="$*"

# {==== Profiling ====}
# shellcheck disable=SC2086
expect 0 "" "$relayc" build "$mlp" -o "$tmp/prof.so" --profile
# shellcheck disable=SC2086
expect 0 "control flow between kernels" "$relayc" run "$tmp/prof.so" $inputs --profile --repeat 4
out="$tmp/prof.txt"
cp "$tmp/out" "$out"
# One warm-up and 4 runs: the profile counts the 4 timed runs, every kernel
# called 4 times; the GEMVs carry their fused operators and shapes; the
# softmax its own schedule.
check "grep -Eq '^profile: 4 runs, ' '$out'" "the profile covers the 4 runs after the warm-up"
check "grep -Eq '^K[0-9]+ +nn.dense, nn.bias_add, nn.relu +\\(2, 16\\) +GEMV float32 +4 ' '$out'" \
  "a row for the fused dense+bias+relu kernel with its shape, schedule and 4 calls"
check "grep -Eq '^K[0-9]+ +nn.softmax +\\(2, 4\\) +softmax rows float32 +4 ' '$out'" "a row for the softmax kernel"
check "grep -Eq '^ +total +[0-9.]+ +100.0%' '$out'" "a total row at 100%"
check "grep -Eq '^time_ms: ' '$out'" "the times of --repeat still end the output"
# Rows sorted by total time, most first.
awk '/^K[0-9]/ { print $(NF-3) }' "$out" >"$tmp/ms"
check "sort -rn '$tmp/ms' | cmp -s - '$tmp/ms'" "kernel rows are sorted by total time"
# Each kernel's fastest call: above 0, at most its mean.
check "grep -Eq '^kernel +ops +shape +schedule +calls +total ms +mean us +min us +share\$' '$out'" "the header names the columns"
check "awk '/^K[0-9]/ { n++; if (!(\$(NF-1) > 0 && \$(NF-1) <= \$(NF-2))) bad++ } END { exit !(n > 0 && !bad) }' '$out'" \
  "every kernel's min us is above 0 and at most its mean"
# The shares of the kernels and of the control flow add up to 100%.
check "awk '/^K[0-9]|^- / { s += \$NF } END { exit !(s > 99.5 && s < 100.5) }' '$out'" "the shares add up to 100%"
# Relay text compiled on the fly, with profiling.
# shellcheck disable=SC2086
expect 0 "^K[0-9]+ +nn.softmax" "$relayc" run "$mlp" $inputs --profile
expect 0 "" "$relayc" build "$mlp" -o "$tmp/plain.so"
# shellcheck disable=SC2086
expect 1 "built without --profile: rebuild it with 'relayc build --profile'" "$relayc" run "$tmp/plain.so" $inputs --profile
expect 2 "does not go with --interp" "$relayc" run "$mlp" --interp --profile
# Ordinary C has no timing code; profiled C has it, deterministically.
expect 0 "" "$relayc" build "$mlp" -o "$tmp/plain.c"
expect 0 "" "$relayc" build "$mlp" -o "$tmp/p1.c" --profile --name p
expect 0 "" "$relayc" build "$mlp" -o "$tmp/p2.c" --profile --name p
check "! grep -q 'rlyrt_profile\\|_module_build\\|_body' '$tmp/plain.c'" "ordinary C has no timing code"
check "grep -q 'rlyrt_profile_add(&K0_prof, t0)' '$tmp/p1.c'" "profiled C times K0"
check "cmp -s '$tmp/p1.c' '$tmp/p2.c'" "profiled C is deterministic"

# {==== What was built ====}
version=$("$relayc" --version | sed 's/^relayc //')
expect 0 "^relayc $version\$" "$relayc" build "$mlp" -o "$tmp/v.so" -v
check "grep -q '^target: baseline x86-64; GEMV/GEMM kernels pick AVX-512, AVX2+FMA or portable code at run time' '$tmp/out'" \
  "-v names the default target"
check "grep -q '^optimisation: -O2, fusion on, profiling off' '$tmp/out'" "-v gives the levels"
check "grep -q '^kernels: 3 (2 GEMV float32, 1 softmax rows float32)' '$tmp/out'" "-v counts the kernels by schedule"
expect 0 "optimisation: -O0, fusion off, profiling on" "$relayc" build "$mlp" -o "$tmp/v.so" -v -O0 --profile
expect 0 "optimisation: -O3, fusion off, profiling off" "$relayc" build "$mlp" -o "$tmp/v.so" -v -O3 --no-fuse
expect 0 "optimisation: -Os \\(the passes of -O2\\), fusion on, profiling off" "$relayc" build "$mlp" -o "$tmp/v.so" -v -Os
check "grep -q ' -Os ' '$tmp/out'" "-v -Os shows the C compiler at -Os"
mkdir -p "$tmp/lib"
expect 0 "" "$relayc" build "$mlp" -o "$tmp/lib/libv.a"
check "grep -q '^/\\* Built by relayc $version\$' '$tmp/lib/v.h'" "the header names relayc's version"
check "grep -q '^\\*\\*   kernels: 3 (2 GEMV float32, 1 softmax rows float32) \\*/' '$tmp/lib/v.h'" \
  "the header counts the kernels by schedule"

# {==== --target native ====}
if ! grep -qw ssse3 /proc/cpuinfo 2>/dev/null || [ "$(uname -m)" != x86_64 ]; then
  echo "profile test: skipping --target native (not an x86-64 CPU with SSSE3)"
else
  expect 0 "^target: native \\(-march=native\\): .*ssse3.*; checked when the module is loaded" \
    "$relayc" build "$mlp" -o "$tmp/nat.so" --target native -v
  # shellcheck disable=SC2086
  expect 0 "^\\[\\[" "$relayc" run "$tmp/nat.so" $inputs
  # shellcheck disable=SC2086
  expect 1 "was built for CPUs with .*ssse3.*this CPU lacks ssse3" \
    env RLYRT_CPU_DISABLE=ssse3 "$relayc" run "$tmp/nat.so" $inputs
  # The same in a program linked with the static library: NAME_module() and
  # the typed entry point check the CPU before anything else.
  expect 0 "" "$relayc" build "$mlp" -o "$tmp/lib/libnat.a" --target native --name nat
  cat >"$tmp/nat_main.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include "nat.h"
int main(int argc, char **argv) {
  (void)argv;
  const rlyrt_module_build *b = nat_module_build();
  if (!b || !strstr(b->isa, "ssse3") || strcmp(b->target, "native") != 0) return 10;
  const rlyrt_module_info *m = nat_module();
  rlyrt_status s = nat_main(NULL, NULL, NULL, NULL, NULL, NULL, NULL);
  if (argc > 1) { /* the CPU lacks an extension */
    if (m) return 11;
    if (s != RLYRT_E_UNSUPPORTED || !strstr(rlyrt_last_error(), "lacks ssse3")) return 12;
  } else {
    if (!m) return 13;
    if (s != RLYRT_E_ARG) return 14; /* past the check: x is NULL */
  }
  printf("ok\n");
  return 0;
}
EOF
  if ! "$cc" -std=c11 -Wall -Werror -I"$src/include" -I"$tmp/lib" -o "$tmp/nat_main" "$tmp/nat_main.c" \
    "$tmp/lib/libnat.a" -lm >"$tmp/cc.log" 2>&1 &&
    ! "$cc" -std=c11 -Wall -Werror -I"$src/include" -I"$tmp/lib" -o "$tmp/nat_main" "$tmp/nat_main.c" \
      "$tmp/lib/libnat.a" -lm -ldl -lpthread >"$tmp/cc.log" 2>&1; then
    echo "FAIL: cannot build the static native test program"; sed 's/^/  /' "$tmp/cc.log" | head -20
    fail=$((fail + 1))
  else
    expect 0 "^ok" "$tmp/nat_main"
    expect 0 "^ok" env RLYRT_CPU_DISABLE="nosuch, ssse3" "$tmp/nat_main" lacking
  fi
fi

echo "profile test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
