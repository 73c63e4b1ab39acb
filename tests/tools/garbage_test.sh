#!/bin/sh
# garbage_test.sh RELAYC: input that is not Relay text. A binary file gets
# one error ("not a Relay text file (...)"); text full of errors gets at most
# 20 of them (lexer, parser, names and types alike) and one "too many
# errors" line; excerpts never echo control characters, broken UTF-8 or
# whole long lines. check, fmt, build and run (compiled and --interp) alike.
# Run from tests/.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
limit="relayc: too many errors; only the first 20 are shown"

# try STATUS MAXLINES PATTERN CMD...: CMD exits with STATUS, prints at most
# MAXLINES lines, each of them printable ASCII and at most 200 bytes long,
# and its output matches the grep -E PATTERN.
try() {
  want=$1 max=$2 pat=$3
  shift 3
  "$@" >"$tmp/out" 2>&1
  got=$?
  lines=$(wc -l <"$tmp/out")
  longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$tmp/out")
  bad=$(LC_ALL=C tr -d '\n\040-\176' <"$tmp/out" | wc -c)
  why=""
  [ "$got" -ne "$want" ] && why="exit $got, expected $want"
  [ "$lines" -gt "$max" ] && why="$lines lines, expected at most $max"
  [ "$longest" -gt 200 ] && why="a line of $longest bytes"
  [ "$bad" -ne 0 ] && why="$bad bytes that are not printable ASCII"
  [ -z "$why" ] && ! LC_ALL=C grep -Eq -- "$pat" "$tmp/out" && why="output does not match /$pat/"
  if [ -n "$why" ]; then
    echo "FAIL: $* -> $why"; LC_ALL=C sed -n '1,12l' "$tmp/out"
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

# every FILE STATUS MAXLINES PATTERN: try check, fmt, build, run and
# run --interp on FILE.
every() {
  f=$1 st=$2 max=$3 pat=$4
  try "$st" "$max" "$pat" "$relayc" check "$f"
  try "$st" "$max" "$pat" "$relayc" fmt "$f"
  try "$st" "$max" "$pat" "$relayc" build "$f" -o "$tmp/out.so"
  try "$st" "$max" "$pat" "$relayc" run "$f"
  try "$st" "$max" "$pat" "$relayc" run --interp "$f"
}

# An ELF header: one line, the first NUL byte's offset.
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000\003\000>\000\001\000\000\000' >"$tmp/elf.bin"
every "$tmp/elf.bin" 1 1 "^$tmp/elf.bin: error: not a Relay text file \\(contains a NUL byte at offset 7\\)$"
# With other files: the binary one is named, the others are fine.
try 1 1 "^$tmp/elf.bin: error: not a Relay text file" "$relayc" check multi/prelude.relay "$tmp/elf.bin"
# The relayc binary itself.
every "$relayc" 1 1 "^.*: error: not a Relay text file \\(contains a NUL byte at offset [0-9]+\\)$"

# Binary without a NUL byte (control characters and bytes that are not
# UTF-8): the proportion rule.
printf '\177ELF\002\001\001\003\004\005\006\007\010\016\017\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037\200\201\377\376ls\n' >"$tmp/ctl.bin"
every "$tmp/ctl.bin" 1 1 "^$tmp/ctl.bin: error: not a Relay text file \\([0-9]+ of its first 38 bytes are control characters or not UTF-8\\)$"

# 4000 pseudo-random bytes from a fixed seed (an exact LCG, the same in
# every awk); written as octal escapes for printf.
awk 'BEGIN { x = 7; for (i = 0; i < 4000; i++) { x = (x * 75 + 74) % 65537; printf "\\%03o", x % 256 } }' >"$tmp/rand.esc"
printf "$(cat "$tmp/rand.esc")" >"$tmp/rand.bin"
every "$tmp/rand.bin" 1 1 "^$tmp/rand.bin: error: not a Relay text file \\("

# A text file with a NUL byte late in it.
awk 'BEGIN { printf "#[version = \"0.0.5\"]\n"; for (i = 0; i < 300; i++) printf "def @f%d() { %d }\n", i, i }' >"$tmp/late.relay"
printf 'x\000y\n' >>"$tmp/late.relay"
every "$tmp/late.relay" 1 1 "^$tmp/late.relay: error: not a Relay text file \\(contains a NUL byte at offset [0-9]+\\)$"

# A few stray bytes in a text file are lexical errors, escaped in the
# excerpt, not a verdict on the whole file.
printf '#[version = "0.0.5"]\ndef @main() -> int32 {\n  1 \001\033[31m\377 + 2\n}\n' >"$tmp/stray.relay"
try 1 6 '^    1 \\x01\\x1b\[31m\\xff \+ 2$' "$relayc" check "$tmp/stray.relay"
try 1 6 "^$tmp/stray.relay:3:5: error: unexpected character byte 0x01$" "$relayc" check "$tmp/stray.relay"
try 1 6 '^      \^~~~$' "$relayc" check "$tmp/stray.relay"
try 1 6 "^$tmp/stray.relay:3:11: error: unexpected character byte 0xff$" "$relayc" check "$tmp/stray.relay"
try 1 6 '^                  \^~~~$' "$relayc" check "$tmp/stray.relay"
# Well-formed UTF-8 stays as it is in an excerpt.
printf '#[version = "0.0.5"]\ndef @main() -> int32 {\n  "caf\303\251" 1\n}\n' >"$tmp/utf8.relay"
"$relayc" check "$tmp/utf8.relay" >"$tmp/u8" 2>&1
if grep -q "caf$(printf '\303\251')" "$tmp/u8"; then pass=$((pass + 1)); else echo "FAIL: UTF-8 excerpt"; cat "$tmp/u8"; fail=$((fail + 1)); fi

# A UTF-8 byte order mark starts a file as nothing; elsewhere it is an error.
printf '\357\273\277#[version = "0.0.5"]\ndef @main() -> int32 { 7 }\n' >"$tmp/bom.relay"
try 0 1 '^7$' "$relayc" run --interp "$tmp/bom.relay"
try 0 1 '^7$' "$relayc" run "$tmp/bom.relay"
printf '#[version = "0.0.5"]\ndef @main() -> int32 { \357\273\277 7 }\n' >"$tmp/bom2.relay"
try 1 6 "^$tmp/bom2.relay:2:24: error: unexpected character byte 0xef$" "$relayc" check "$tmp/bom2.relay"

# 10,000 bad tokens (a run of bad characters is one error, so each is
# followed by a good one): 20 errors, then the limit line (61 lines).
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() {\n"; for (i = 0; i < 10000; i++) printf "$ 1 "; printf "\n}\n" }' >"$tmp/lex.relay"
every "$tmp/lex.relay" 1 61 "^$limit$"
try 1 61 "^$tmp/lex.relay:3:77: error: unexpected character '\\$'$" "$relayc" check "$tmp/lex.relay"
# 10,000 syntax errors, name errors and type errors: the same limit.
awk 'BEGIN { print "#[version = \"0.0.5\"]"; for (i = 0; i < 10000; i++) printf "def @f%d() { ) }\n", i }' >"$tmp/syntax.relay"
every "$tmp/syntax.relay" 1 61 "^$limit$"
awk 'BEGIN { print "#[version = \"0.0.5\"]"; for (i = 0; i < 10000; i++) printf "def @f%d() { %%x }\n", i }' >"$tmp/names.relay"
every "$tmp/names.relay" 1 61 "^$limit$"
awk 'BEGIN { print "#[version = \"0.0.5\"]"; for (i = 0; i < 10000; i++) printf "def @f%d() { add(1f, 1) }\n", i }' >"$tmp/types.relay"
try 1 61 "^$limit$" "$relayc" check "$tmp/types.relay"
try 1 61 "^$limit$" "$relayc" run --interp "$tmp/types.relay"
for f in lex syntax names types; do
  n=$("$relayc" check "$tmp/$f.relay" 2>&1 | grep -c ': error: ')
  if [ "$n" -eq 20 ]; then pass=$((pass + 1)); else echo "FAIL: $f.relay: $n errors shown, expected 20"; fail=$((fail + 1)); fi
done
# Exactly 20 errors: all shown, no limit line.
awk 'BEGIN { print "#[version = \"0.0.5\"]"; for (i = 0; i < 20; i++) printf "def @f%d() { %%x }\n", i }' >"$tmp/twenty.relay"
"$relayc" check "$tmp/twenty.relay" >"$tmp/out" 2>&1
if [ "$(grep -c ': error: ' "$tmp/out")" -eq 20 ] && ! grep -q "too many errors" "$tmp/out"; then
  pass=$((pass + 1))
else
  echo "FAIL: twenty.relay"; tail -3 "$tmp/out"; fail=$((fail + 1))
fi

# A very long line: the excerpt is a window around the error.
awk 'BEGIN { printf "#[version = \"0.0.5\"]\ndef @main() -> int32 {\n  "; for (i = 0; i < 50000; i++) printf "1 + "; printf "$ 1\n}\n" }' >"$tmp/long.relay"
every "$tmp/long.relay" 1 3 "^$tmp/long.relay:3:200003: error: unexpected character '\\$'$"
try 1 3 '^  \.\.\. 1 \+ 1 \+ .*\+ \$ 1$' "$relayc" check "$tmp/long.relay"
# A long line of bytes that are not UTF-8 after 4 KiB of text: lexical
# errors with escaped, bounded excerpts.
awk 'BEGIN { printf "#[version = \"0.0.5\"]\n"; for (i = 0; i < 200; i++) printf "// comment line %d\n", i; printf "def @main() {\n" }' >"$tmp/tail.relay"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "\\377\\376 " }' >"$tmp/tail.esc"
printf "$(cat "$tmp/tail.esc")\n}\n" >>"$tmp/tail.relay"
every "$tmp/tail.relay" 1 61 "unexpected character byte 0xff"

echo "garbage: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
