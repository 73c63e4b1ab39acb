#!/bin/sh
# meta_text_test.sh RELAYC: once a module is parsed, `relayc build` gives
# back the text of its metadata sections (compile.c: srcmap_truncate; a
# big model's weights in base64), and the diagnostics of the later phases
# still show their source lines:
#   - tests/corpus/metadata_consts.relay with a type error after its
#     constants are read: exit status 1, the error at its line and column,
#     the line itself and a caret under it;
#   - the same file as it is builds.
# Run from the repository root.
set -u
relayc=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
src=tests/corpus/metadata_consts.relay
sed 's|^  %3 = add(%u, meta\[relay.Constant\]\[3\] /\* ty=uint8 \*/) /\* ty=uint8 \*/;|  %3 = add(%x, %y);|' "$src" >"$tmp/bad.relay"
grep -q '^  %3 = add(%x, %y);$' "$tmp/bad.relay" || { echo "FAIL: could not make bad.relay"; exit 1; }
"$relayc" build "$tmp/bad.relay" -o "$tmp/bad.so" >"$tmp/out" 2>&1
status=$?
[ $status = 1 ] || { echo "FAIL: exit status $status, not 1"; fail=1; }
grep -q "bad.relay:7:[0-9]*: error: " "$tmp/out" || { echo "FAIL: no error at line 7"; fail=1; }
grep -q '^ *%3 = add(%x, %y);$' "$tmp/out" || { echo "FAIL: the line is not shown"; fail=1; }
grep -q '\^' "$tmp/out" || { echo "FAIL: no caret"; fail=1; }
[ $fail = 0 ] || cat "$tmp/out"
"$relayc" build "$src" -o "$tmp/good.so" >"$tmp/out" 2>&1 || { echo "FAIL: $src does not build"; cat "$tmp/out"; fail=1; }
[ $fail = 0 ] && echo "metadata text: ok"
exit $fail
