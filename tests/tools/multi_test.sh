#!/bin/sh
# multi_test.sh RELAYC: several input files read as one module (the files of
# tests/multi/): names across files, file order, redefinitions naming both
# places, per-file metadata sections, an expression file as @main, build and
# run (compiled and interpreted), fmt of the merged module, usage errors.
# Run from tests/.
set -u
relayc=$1
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

# expect_text STATUS TEXT CMD...: the combined output is exactly TEXT.
expect_text() {
  want=$1 text=$2
  shift 2
  "$@" >"$tmp/out" 2>&1
  got=$?
  printf '%s\n' "$text" >"$tmp/want"
  if [ "$got" -ne "$want" ] || ! cmp -s "$tmp/want" "$tmp/out"; then
    echo "FAIL: $* -> exit $got (expected $want), output:"; sed 's/^/  /' "$tmp/out" | head -20
    echo "  expected:"; sed 's/^/  /' "$tmp/want"
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

m=multi
n7=run/data/function_select_input_n.npy

# Names across files: nat.relay needs the prelude, main.relay both.
expect 0 "" "$relayc" check $m/prelude.relay
expect 0 "" "$relayc" check $m/prelude.relay $m/nat.relay
expect 1 "^multi/nat.relay:24:10: error: unknown constructor 'Nil'$" "$relayc" check $m/nat.relay
expect 1 "^multi/nat.relay:34:17: error: unbound global '@hd'$" "$relayc" check $m/nat.relay
expect 1 "^multi/nat.relay:22:27: error: unknown type 'List'$" "$relayc" check $m/nat.relay
expect 1 "^multi/main.relay:7:13: error: unbound global '@nat_list'$" "$relayc" check $m/main.relay
expect 1 "^multi/main.relay:7:13: error: unbound global '@nat_list'$" "$relayc" check $m/prelude.relay $m/main.relay
# Mutual recursion across two files; neither checks alone.
expect 1 "^multi/even.relay:5:32: error: unbound global '@is_odd'$" "$relayc" check $m/even.relay
expect 1 "^multi/odd.relay:4:33: error: unbound global '@is_even'$" "$relayc" check $m/odd.relay
expect 0 "^\(True, True\)$" "$relayc" run --interp $m/even.relay $m/odd.relay
expect 0 "^\(True, True\)$" "$relayc" run $m/odd.relay $m/even.relay

# Any order: a later file's types and definitions are visible to an
# earlier file's.
expect 0 "" "$relayc" check $m/nat.relay $m/prelude.relay
expect 0 "^1515$" "$relayc" run --interp $m/main.relay $m/nat.relay $m/prelude.relay
expect 0 "^1515$" "$relayc" run --interp $m/prelude.relay $m/nat.relay $m/main.relay

# Build and run the three files, compiled and interpreted; options before,
# between and after the files.
expect 0 "" "$relayc" build $m/prelude.relay $m/nat.relay $m/main.relay -o "$tmp/prog.so"
expect 0 "^1515$" "$relayc" run "$tmp/prog.so"
expect 0 "^1515$" "$relayc" run $m/prelude.relay $m/nat.relay $m/main.relay
expect 0 "^1515$" "$relayc" run -O0 $m/prelude.relay --cc cc $m/nat.relay $m/main.relay
expect 0 "^time_ms: " "$relayc" run --interp $m/prelude.relay $m/nat.relay --repeat 2 $m/main.relay

# A definition repeated across files names both places.
expect_text 1 "multi/dup_hd.relay:4:5: error: redefinition of '@hd'
  def @hd(%x: int32) -> int32 {
      ^~~
multi/prelude.relay:15:5: note: '@hd' is first defined here
  def @hd[A](%xs: List[A]) -> A {
      ^~~" "$relayc" check $m/prelude.relay $m/dup_hd.relay
expect_text 1 "multi/prelude.relay:15:5: error: redefinition of '@hd'
  def @hd[A](%xs: List[A]) -> A {
      ^~~
multi/dup_hd.relay:4:5: note: '@hd' is first defined here
  def @hd(%x: int32) -> int32 {
      ^~~" "$relayc" check $m/dup_hd.relay $m/prelude.relay
printf '#[version = "0.0.5"]\ntype Seq[A] {\n  Cons(A),\n}\n\ntype Option[A] {\n  Just(A),\n}\n' >"$tmp/types.relay"
expect_text 1 "$tmp/types.relay:3:3: error: redefinition of constructor 'Cons'
    Cons(A),
    ^~~~
multi/prelude.relay:6:3: note: constructor 'Cons' is first defined here
    Cons(A, List[A]),
    ^~~~
$tmp/types.relay:6:6: error: redefinition of type 'Option'
  type Option[A] {
       ^~~~~~
multi/prelude.relay:10:6: note: type 'Option' is first defined here
  type Option[A] {
       ^~~~~~" "$relayc" check $m/prelude.relay "$tmp/types.relay"

# Each file keeps its own positions and source lines.
printf '#[version = "0.0.5"]\n\ndef @bad() -> int32 {\n  @hd(Cons(1f, Nil))\n}\n' >"$tmp/bad.relay"
expect_text 1 "$tmp/bad.relay:4:3: error: function body: expected int32, found float32
    @hd(Cons(1f, Nil))
    ^~~" "$relayc" check $m/prelude.relay $m/nat.relay "$tmp/bad.relay"
# Each file needs its own version header.
printf 'def @f() -> int32 {\n  1\n}\n' >"$tmp/nohead.relay"
expect 1 "^$tmp/nohead.relay:1:1: error: missing version header" "$relayc" check $m/prelude.relay "$tmp/nohead.relay"

# meta[relay.Constant][0] of each file is its own section's constant.
expect 0 "^\[11\. 22\. 33\.\]$" "$relayc" run --interp $m/meta_a.relay $m/meta_b.relay
expect 0 "^\[11\. 22\. 33\.\]$" "$relayc" run $m/meta_a.relay $m/meta_b.relay

# fmt prints the merged module: one file that runs alone and formats to
# itself.
expect 0 "" "$relayc" fmt -o "$tmp/all.relay" $m/prelude.relay $m/nat.relay $m/main.relay
expect 0 "^1515$" "$relayc" run --interp "$tmp/all.relay"
expect 0 "" "$relayc" fmt -o "$tmp/meta.relay" $m/meta_a.relay $m/meta_b.relay
expect 0 "^\[11\. 22\. 33\.\]$" "$relayc" run --interp "$tmp/meta.relay"
"$relayc" fmt "$tmp/meta.relay" >"$tmp/meta2.relay"
expect 0 "" cmp "$tmp/meta.relay" "$tmp/meta2.relay"

# An expression file given with module files is @main; its free variables
# are inputs.
expect 0 "^21$" "$relayc" run --interp $m/prelude.relay $m/expr.relay --input n=$n7
expect 0 "^21$" "$relayc" run --input n=$n7 $m/expr.relay $m/prelude.relay
expect 1 "missing input 'n'" "$relayc" run --interp $m/prelude.relay $m/expr.relay
expect_text 1 "multi/main.relay:6:5: error: redefinition of '@main'
  def @main() -> int32 {
      ^~~~~
multi/expr.relay:3:1: note: the expression of this file is '@main'
  free_var %n: int32;
  ^~~~~~~~" "$relayc" check $m/expr.relay $m/prelude.relay $m/nat.relay $m/main.relay
expect 1 "^multi/expr.relay:3:1: error: redefinition of '@main': an expression file given with other files is @main$" \
  "$relayc" check $m/prelude.relay $m/nat.relay $m/main.relay $m/expr.relay

# --params binds @main's parameters of the merged module.
expect 0 "" "$relayc" check --params corpus/params_model.params $m/prelude.relay corpus/params_model.relay
expect 1 "is not a parameter of @main" "$relayc" check --params corpus/params_model.params $m/prelude.relay $m/nat.relay $m/main.relay

# Files that cannot be read, and usage errors.
expect_text 1 "relayc: cannot open 'multi/no_such.relay': No such file or directory" \
  "$relayc" check $m/prelude.relay $m/no_such.relay
expect 1 "cannot open 'multi/no_such.relay'" "$relayc" run --interp $m/no_such.relay $m/prelude.relay
expect 2 "input file 'multi/prelude.relay' is given twice" "$relayc" check $m/prelude.relay $m/nat.relay $m/prelude.relay
expect 2 "input file '\./multi/prelude.relay' is given twice" "$relayc" check $m/prelude.relay ./$m/prelude.relay
expect 2 "input file '-' is given twice" "$relayc" check - -
expect 2 "a built library runs alone" "$relayc" run "$tmp/prog.so" $m/prelude.relay
expect 2 "no input file" "$relayc" run --interp

# The help tells about several files.
expect 0 "Several FILEs are one module" "$relayc" help check
expect 0 "usage: relayc check .*FILE\.\.\.$" "$relayc" help check
expect 0 "usage: relayc build FILE\.\.\. -o OUT" "$relayc" help build
expect 0 "usage: relayc run MODEL\.\.\." "$relayc" run --help
expect 0 "Several FILEs are one module" "$relayc" run --help
expect 0 "fmt prints the one merged module" "$relayc" fmt --help
expect 0 "as one module" "$relayc" --help

echo "multi: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
