#!/bin/sh
# Constants benchmark: how long `relayc build` takes on a model with about
# 50 MB of float32 weights (embedded as one aligned binary blob written as a
# C string literal), whether the built library runs and gives NumPy's answer,
# and, for reference, how long the C compiler takes on the same weights
# written as a plain `const float w[] = {...};` initializer.
#
#   sh bench/run_weights.sh BUILD/relayc
#
# Environment: LAYERS / UNITS (the MLP, default 3 x 2048: 50.4 MB), SEED,
# CC (the C compiler of the reference compile, default cc), ARRAY=0 skips the
# plain-array compile (it takes minutes and a few GB of memory), ARRAY_OPT
# (its optimisation levels, default "-O2"; e.g. "-O0 -O2"), ARRAY_TIMEOUT
# (seconds, default 1800), KEEP=1 keeps the files, PYTHON (a python3 with
# NumPy; default python3, else /usr/bin/python3), TIMER=python.
# Files go to a fresh directory under bench/out/ (about 500 MB with the
# plain array). The exit status is 1 when a build or run fails or the
# output is wrong; timings never fail the script.
set -u

if [ $# -ne 1 ]; then
  echo "usage: sh bench/run_weights.sh PATH/TO/relayc" >&2
  exit 2
fi
RELAYC=$1
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
if [ ! -x "$RELAYC" ]; then
  echo "bench: $RELAYC is not an executable (build it first: make build)" >&2
  exit 2
fi

LAYERS=${LAYERS:-3}
UNITS=${UNITS:-2048}
SEED=${SEED:-0}
CC=${CC:-cc}
ARRAY=${ARRAY:-1}
ARRAY_OPT=${ARRAY_OPT:--O2}
ARRAY_TIMEOUT=${ARRAY_TIMEOUT:-1800}
HERE=$(cd "$(dirname "$0")" && pwd)
INCLUDE=$(cd "$HERE/../include" && pwd)

PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy' >/dev/null 2>&1; then PY=$p; break; fi
  done
fi
if [ -z "$PY" ] || ! "$PY" -c 'import numpy' >/dev/null 2>&1; then
  echo "bench: needs a python3 with NumPy (set PYTHON)" >&2
  exit 2
fi

mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/weights.XXXXXX") || exit 1
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "bench: files kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# {==== Timer: "SECONDS PEAK_RSS_KB" of one command into a file ====}

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

# timed STDOUT_PATH CMD...: runs CMD, its stderr to $WORK/stderr; leaves
# "SECONDS PEAK_KB" in $WORK/sample.
timed() {
  _so=$1
  shift
  if [ $TIMER = gnu ]; then
    /usr/bin/time -f "%e %M" -o "$WORK/sample" "$@" >"$_so" 2>"$WORK/stderr"
  else
    "$PY" "$WORK/timeit.py" "$WORK/sample" "$_so" "$@" 2>"$WORK/stderr"
  fi
}

FAILED=0
ROWS=$WORK/rows
: >"$ROWS"

size_of() { wc -c <"$1" | tr -d ' '; }

# step NAME SIZE_FILE CMD...: times CMD, appends "NAME SECONDS PEAK_KB SIZE"
# (SIZE: bytes of SIZE_FILE after the run, or - for none).
step() {
  _name=$1 _sf=$2
  shift 2
  if ! timed "$WORK/stdout" "$@"; then
    echo "bench: $_name failed: $*" >&2
    head -n 20 "$WORK/stderr" >&2
    printf '%s\tFAILED\n' "$_name" >>"$ROWS"
    FAILED=1
    return 1
  fi
  if [ -s "$WORK/stderr" ]; then
    echo "bench: $_name: $(wc -l <"$WORK/stderr" | tr -d ' ') lines on stderr, the first:" >&2
    head -n 2 "$WORK/stderr" | cut -c 1-200 >&2
  fi
  _sz=-
  [ "$_sf" != - ] && [ -f "$_sf" ] && _sz=$(size_of "$_sf")
  set -- $(tail -n 1 "$WORK/sample")
  printf '%s\t%s\t%s\t%s\n' "$_name" "$1" "$2" "$_sz" >>"$ROWS"
  return 0
}

# {==== Inputs ====}

echo "bench: generating the model in $WORK ($LAYERS x ${UNITS}x$UNITS float32)"
if [ "$ARRAY" = 1 ]; then
  "$PY" "$HERE/gen_weights.py" "$WORK" --layers "$LAYERS" --units "$UNITS" --seed "$SEED" --c-array || exit 1
else
  "$PY" "$HERE/gen_weights.py" "$WORK" --layers "$LAYERS" --units "$UNITS" --seed "$SEED" || exit 1
fi
M=$WORK/model.relay
echo "bench: timer: $TIMER, $(nproc 2>/dev/null || echo '?') CPUs, load average $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')"

# {==== relayc ====}

step "relayc check (parse + types)" - "$RELAYC" check "$M"
step "relayc build -o model.c (C only)" "$WORK/model.c" "$RELAYC" build "$M" -o "$WORK/model.c"
mkdir -p "$WORK/src"
step "relayc build -o model.so (-O2)" "$WORK/model.so" "$RELAYC" build "$M" -o "$WORK/model.so" --keep-source "$WORK/src"
step "relayc build -O0 -o model.so" "$WORK/model_O0.so" "$RELAYC" build -O0 "$M" -o "$WORK/model_O0.so"
# The C compiler alone on the generated C (the blob is nearly all of it).
for o in -O0 -O2; do
  if [ -f "$WORK/src/model.c" ]; then
    step "$CC $o -c model.c (generated)" "$WORK/gen$o.o" \
      "$CC" $o -fPIC -w -I "$INCLUDE" -I "$WORK/src" -c "$WORK/src/model.c" -o "$WORK/gen$o.o"
  fi
done

# {==== The built model runs and agrees with NumPy ====}

for so in model.so model_O0.so; do
  [ -f "$WORK/$so" ] || continue
  if "$RELAYC" run "$WORK/$so" --input "x=$WORK/x.npy" --output "$WORK/y_$so.npy" >"$WORK/run.out" 2>&1 &&
     "$PY" "$WORK/check.py" "$WORK/y_$so.npy" >"$WORK/check.out" 2>&1; then
    echo "bench: relayc run $so: $(cat "$WORK/check.out")"
  else
    echo "bench: relayc run $so FAILED:" >&2
    cat "$WORK/run.out" "$WORK/check.out" 2>/dev/null | head -n 20 >&2
    FAILED=1
  fi
done
INFER=
if [ -f "$WORK/model.so" ] &&
   "$RELAYC" run "$WORK/model.so" --input "x=$WORK/x.npy" --output "$WORK/y_rep.npy" --repeat 10 >"$WORK/rep.out" 2>&1; then
  INFER=$(sed -n 's/^time_ms: //p' "$WORK/rep.out" | tail -n 1)
fi

# {==== Reference: the same weights as a plain array initializer ====}

if [ "$ARRAY" = 1 ]; then
  echo "bench: compiling weights_array.c ($(($(size_of "$WORK/weights_array.c") / 1000000)) MB; this takes minutes)"
  for o in $ARRAY_OPT; do
    step "$CC $o -c weights_array.c (plain array)" "$WORK/array$o.o" \
      timeout "$ARRAY_TIMEOUT" "$CC" $o -c "$WORK/weights_array.c" -o "$WORK/array$o.o"
  done
fi

# {==== Table ====}

echo
awk -F '\t' '
  BEGIN { printf "%-44s %9s %10s %10s\n", "step", "wall s", "peak MiB", "output MB" }
  NF == 2 { printf "%-44s %9s\n", $1, $2; next }
  { printf "%-44s %9.2f %10.1f %10s\n", $1, $2, $3 / 1024, ($4 == "-") ? "-" : sprintf("%.1f", $4 / 1e6) }
' "$ROWS"
echo
echo "model.relay: $(($(size_of "$M") / 1000000)) MB; weights: $LAYERS x (${UNITS}x$UNITS + $UNITS) float32"
[ -n "$INFER" ] && echo "inference (relayc run model.so --repeat 10): $INFER"

exit $FAILED
