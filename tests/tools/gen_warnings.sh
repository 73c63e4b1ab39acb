#!/bin/sh
# gen_warnings.sh RELAYC INCLUDE_DIR: the generated C of every program of
# the corpus (tests/run, tests/corpus, tests/api, examples) compiles with
# -Wall -Wextra -Werror under cc, and under clang when it is installed.
# Run from the repository root.
set -u
relayc=$1
inc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compilers=${CC:-cc}
command -v clang >/dev/null 2>&1 && compilers="$compilers clang"
n=0
fail=0
for f in tests/run/*.relay tests/corpus/*.relay tests/api/*.relay examples/*.relay; do
  name=m_$(basename "$f" .relay | tr -c 'a-zA-Z0-9_\n' '_')
  # Programs the type checker rejects on purpose are not compiled.
  "$relayc" check "$f" >/dev/null 2>&1 || continue
  if ! "$relayc" build "$f" -o "$tmp/$name.c" --name "$name" >"$tmp/log" 2>&1; then
    echo "FAIL: relayc build $f"; cat "$tmp/log"; fail=$((fail + 1)); continue
  fi
  for cc in $compilers; do
    if ! "$cc" -std=c11 -Wall -Wextra -Werror -O1 -I"$inc" -I"$tmp" -c "$tmp/$name.c" -o "$tmp/$name.o" >"$tmp/log" 2>&1; then
      echo "FAIL: $cc on the C of $f"; head -20 "$tmp/log"; fail=$((fail + 1))
    fi
  done
  n=$((n + 1))
done
echo "gen_warnings: $n programs compiled warning-free with: $compilers; $fail failed"
[ "$fail" -eq 0 ] && [ "$n" -gt 100 ]
