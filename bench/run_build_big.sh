#!/bin/sh
# Building a big model: `relayc build` of ResNet-50 as TVM prints it with
# its weights in the metadata section (bench/gen_resnet50.py, about 137 MB
# of text, 102 MB of float32 weights), to a shared library. Prints, for
# each run, the wall time, the CPU time (relayc and the programs it ran),
# the peak resident set size (the largest of relayc and its children) and
# that peak over the text's size, then the phases `relayc build --stats`
# measured in the last run.
#
#   sh bench/run_build_big.sh BUILD/relayc [RUNS]
#
# Environment: SEED (the weights, default 0), CC (the C compiler relayc
# runs, default cc), EMIT (so, a or obj; default so), KEEP=1 keeps the
# files. Needs GNU time (/usr/bin/time) and python3. Files go to a fresh
# directory under bench/out/ (about 250 MB).
set -u

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: sh bench/run_build_big.sh PATH/TO/relayc [RUNS]" >&2
  exit 2
fi
RELAYC=$1
RUNS=${2:-3}
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
[ -x "$RELAYC" ] || { echo "bench: $RELAYC is not an executable" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: needs GNU time (/usr/bin/time)" >&2; exit 2; }
SEED=${SEED:-0}
CC=${CC:-cc}
EMIT=${EMIT:-so}
case $EMIT in so) OUTF=r50.so ;; a) OUTF=libr50.a ;; obj) OUTF=r50.o ;; *) echo "bench: EMIT is so, a or obj" >&2; exit 2 ;; esac
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$HERE/out"
DIR=$(mktemp -d "$HERE/out/build_big.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$DIR"' EXIT

python3 "$HERE/gen_resnet50.py" "$DIR/resnet50.relay" --seed "$SEED" >/dev/null || exit 1
size=$(wc -c <"$DIR/resnet50.relay")
echo "resnet50.relay: $size bytes; relayc build -o $OUTF --cc $CC, $RUNS runs"
echo
echo "| run | wall s | CPU s | peak MiB | peak / text |"
echo "| --- | --- | --- | --- | --- |"
status=0
i=1
while [ "$i" -le "$RUNS" ]; do
  rm -f "$DIR/$OUTF"
  if /usr/bin/time -f "%e %U %S %M" -o "$DIR/time" "$RELAYC" build "$DIR/resnet50.relay" -o "$DIR/$OUTF" \
      --cc "$CC" --stats >"$DIR/stats" 2>"$DIR/err"; then
    read -r wall user sys kb <"$DIR/time"
    awk -v i="$i" -v w="$wall" -v u="$user" -v s="$sys" -v k="$kb" -v n="$size" \
      'BEGIN { printf "| %d | %.2f | %.2f | %.1f | %.2f |\n", i, w, u + s, k / 1024, k * 1024 / n }'
  else
    echo "| $i | FAILED | | | |"
    sed 's/^/  /' "$DIR/err" | head -20
    status=1
  fi
  i=$((i + 1))
done
echo
echo "Last run, relayc build --stats (kernel lines left out):"
grep -v '^kernel ' "$DIR/stats" | sed 's/^/    /'
exit $status
