#!/bin/sh
# Parse benchmark: times `relayc check` and `relayc fmt` on generated modules
# (ResNet-50 with its weights in the metadata section, a deep conv2d chain,
# a long let chain) and reports wall time and peak memory.
#
#   sh bench/run.sh BUILD/relayc
#
# Environment: RUNS (runs per case, default 5), SEED (weights, default 0),
# LAYERS (conv chain depth, default 2000), LETS (let chain length, default
# 20000), KEEP=1 keeps the generated files, TIMER=python measures with a
# Python wrapper instead of /usr/bin/time. Files go to a fresh directory
# under bench/out/ (generated output; keep it out of version control).
set -u

if [ $# -ne 1 ]; then
  echo "usage: sh bench/run.sh PATH/TO/relayc" >&2
  exit 2
fi
RELAYC=$1
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
if [ ! -x "$RELAYC" ]; then
  echo "bench: $RELAYC is not an executable (build it first: make build)" >&2
  exit 2
fi

RUNS=${RUNS:-5}
SEED=${SEED:-0}
LAYERS=${LAYERS:-2000}
LETS=${LETS:-20000}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}

mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/run.XXXXXX") || exit 1
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "bench: files kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# {==== Timer: prints "SECONDS PEAK_RSS_KB" of one command into a file ====}

# GNU time if it understands -f; else a small Python wrapper (the wrapper is a
# fresh process per run, so RUSAGE_CHILDREN is exactly the command's peak).
if [ "${TIMER:-}" != python ] &&
   /usr/bin/time -f "%e %M" -o "$WORK/probe" true >/dev/null 2>&1 && [ -s "$WORK/probe" ]; then
  TIMER=gnu
else
  TIMER=python
  cat >"$WORK/timeit.py" <<'EOF'
import resource, subprocess, sys, time
out, stdout_path, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(stdout_path, "wb") as so:
    t0 = time.perf_counter()
    rc = subprocess.call(cmd, stdout=so)
    dt = time.perf_counter() - t0
kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
with open(out, "w") as f:
    f.write("%.3f %d\n" % (dt, kb))
sys.exit(rc)
EOF
fi

# timed OUTFILE STDOUT_PATH CMD...  (stderr of CMD goes to $WORK/stderr)
timed() {
  _out=$1 _so=$2
  shift 2
  if [ $TIMER = gnu ]; then
    /usr/bin/time -f "%e %M" -o "$_out" "$@" >"$_so" 2>"$WORK/stderr"
  else
    "$PY" "$WORK/timeit.py" "$_out" "$_so" "$@" 2>"$WORK/stderr"
  fi
}

# {==== Inputs ====}

echo "bench: generating inputs in $WORK"
"$PY" "$HERE/gen_resnet50.py" "$WORK/resnet50.relay" --seed "$SEED" || exit 1
"$PY" "$HERE/gen_chain.py" "$WORK/conv_chain.relay" --layers "$LAYERS" || exit 1
"$PY" "$HERE/gen_chain.py" "$WORK/let_chain.relay" --let --length "$LETS" || exit 1

# {==== Cases ====}

FAILED=0
ROWS=$WORK/rows

# bench NAME CMD FILE: runs `relayc CMD FILE` RUNS times, appends a table row.
bench() {
  _name=$1 _cmd=$2 _file=$3
  _size=$(wc -c <"$_file" | tr -d ' ')
  : >"$WORK/samples"
  _i=0
  while [ $_i -lt "$RUNS" ]; do
    if ! timed "$WORK/sample" /dev/null "$RELAYC" "$_cmd" "$_file"; then
      echo "bench: relayc $_cmd $(basename "$_file") failed:" >&2
      head -n 20 "$WORK/stderr" >&2
      printf '%s\t%s\t%s\tFAILED\n' "$_name" "$_cmd" "$_size" >>"$ROWS"
      FAILED=1
      return
    fi
    tail -n 1 "$WORK/sample" >>"$WORK/samples"
    _i=$((_i + 1))
  done
  # median / min / max seconds, max peak RSS (KiB), RSS / file size
  sort -n -k1,1 "$WORK/samples" | awk -v name="$_name" -v cmd="$_cmd" -v size="$_size" '
    { t[NR] = $1; if ($2 > rss) rss = $2 }
    END {
      n = NR
      med = (n % 2) ? t[(n + 1) / 2] : (t[n / 2] + t[n / 2 + 1]) / 2
      printf "%s\t%s\t%s\t%.3f\t%.3f\t%.3f\t%d\t%.2f\n", name, cmd, size, med, t[1], t[n], rss, rss * 1024 / size
    }' >>"$ROWS"
}

: >"$ROWS"
echo "bench: $RUNS runs per case, timer: $TIMER, $(nproc 2>/dev/null || echo '?') CPUs"
for c in check fmt; do
  bench resnet50 $c "$WORK/resnet50.relay"
done
for c in check fmt; do
  bench "conv_chain($LAYERS)" $c "$WORK/conv_chain.relay"
done
for c in check fmt; do
  bench "let_chain($LETS)" $c "$WORK/let_chain.relay"
done

# {==== Table ====}

echo
awk -F '\t' '
  BEGIN {
    printf "%-18s %-6s %10s %9s %9s %9s %10s %9s\n", "input", "cmd", "size MB", "median s", "min s", "max s", "peak MiB", "RSS/size"
  }
  NF == 4 { printf "%-18s %-6s %10.1f %9s\n", $1, $2, $3 / 1e6, "FAILED"; next }
  { printf "%-18s %-6s %10.1f %9.3f %9.3f %9.3f %10.1f %9.2f\n", $1, $2, $3 / 1e6, $4, $5, $6, $7 / 1024, $8 }
' "$ROWS"

exit $FAILED
