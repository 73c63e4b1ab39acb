#!/bin/sh
# emu512_run.sh RELAYC NPYCMP FILE.relay [RELAYC ARGS...]: check_run.sh
# at -O1 with the kernels' AVX-512 versions run in emulation
# (tests/tools/emu512.h), so that a machine without AVX-512 checks them
# too. The emulation compiles for AVX2 with FMA: elsewhere (another
# architecture, an older x86-64) the test is skipped (exit 77).
set -u
[ $# -ge 3 ] || { echo "usage: emu512_run.sh RELAYC NPYCMP FILE.relay [RELAYC ARGS...]" >&2; exit 2; }
relayc=$1
npycmp=$2
file=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "$(uname -m)" != x86_64 ] || ! grep -qw avx2 /proc/cpuinfo 2>/dev/null || ! grep -qw fma /proc/cpuinfo; then
  echo "skipped: the emulation needs an x86-64 CPU with AVX2 and FMA"
  exit 77
fi
# The header found through CPATH, not named by its path in --cflags (split
# at spaces): a checkout whose path has spaces works too.
CPATH="$root/tests/tools${CPATH:+:$CPATH}"
export CPATH
exec sh "$root/tests/tools/check_run.sh" "$relayc" "$npycmp" "$file" -O1 \
  --cflags "-include emu512.h -mavx2 -mfma -Wno-psabi" "$@"
