#!/bin/sh
# gen_warnings.sh: the generated C of every program of the corpus (tests/run,
# tests/corpus, tests/api, examples) compiles without a single warning under
# -Wall -Wextra -Werror, with gcc and clang at every optimisation level
# (warnings such as -Wmaybe-uninitialized only appear once the optimiser
# inlines). Run from the repository root.
#
#   sh gen_warnings.sh gen RELAYC DIR            writes DIR/m_NAME.c and .h
#   sh gen_warnings.sh cc INCLUDE_DIR DIR CC -OL  compiles each of them
set -u
case ${1:-} in
gen)
  relayc=$2
  dir=$3
  rm -rf "$dir" && mkdir -p "$dir" || exit 1
  n=0
  fail=0
  for f in tests/run/*.relay tests/corpus/*.relay tests/api/*.relay examples/*.relay; do
    name=m_$(basename "$f" .relay | tr -c 'a-zA-Z0-9_\n' '_')
    # Programs the type checker rejects on purpose are not compiled.
    "$relayc" check "$f" >/dev/null 2>&1 || continue
    if ! "$relayc" build "$f" -o "$dir/$name.c" --name "$name" >"$dir/log" 2>&1; then
      echo "FAIL: relayc build $f"; cat "$dir/log"; fail=$((fail + 1)); continue
    fi
    n=$((n + 1))
  done
  rm -f "$dir/log"
  echo "gen_warnings: generated the C of $n programs; $fail failed"
  [ "$fail" -eq 0 ] && [ "$n" -gt 100 ]
  ;;
cc)
  inc=$2
  dir=$3
  cc=$4
  level=$5
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  n=0
  fail=0
  for c in "$dir"/m_*.c; do
    if ! "$cc" -std=c11 -Wall -Wextra -Werror "$level" -I"$inc" -I"$dir" -c "$c" -o "$tmp/m.o" >"$tmp/log" 2>&1; then
      echo "FAIL: $cc $level on $c"; head -20 "$tmp/log"; fail=$((fail + 1))
    fi
    n=$((n + 1))
  done
  echo "gen_warnings: $cc $level: $n files, $fail with warnings or errors"
  [ "$fail" -eq 0 ] && [ "$n" -gt 100 ]
  ;;
*)
  echo "usage: gen_warnings.sh gen RELAYC DIR | cc INCLUDE_DIR DIR CC -OLEVEL" >&2
  exit 2
  ;;
esac
