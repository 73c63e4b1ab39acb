#!/bin/sh
# Dynamic-program benchmark: runs the Relay programs of bench/dynamic/ (ADTs,
# recursion, closures, a tensor loop) with the reference interpreter and
# compiled, and prints the median call times and the speedup.
#
#   sh bench/run_dynamic.sh BUILD/relayc [PROGRAM ...]
#
# PROGRAM is a name from bench/dynamic/ without .relay (default: all of
# PROGRAMS below). Each program is first run once each way without --repeat
# (`relayc run FILE --interp` and `relayc run FILE`) and the two printed
# results must be identical: the exit status is 1 when they differ or a run
# fails. Then `relayc run FILE --interp --repeat K` and `relayc run LIB.so
# --repeat K` give the medians (one warm-up, then K timed calls; compiling is
# not timed), where LIB.so is built once by `relayc build FILE` (the code
# `relayc run FILE` compiles and loads). The project's target is compiled
# >= 10x faster than the interpreter; the table says whether each program
# meets it (by the medians), but a missed target does not change the exit
# status.
#
# The medians are wall time, which a loaded machine inflates. The table also
# gives CPU time per call: user + system CPU time of the --repeat process
# minus that of a plain run (one call), divided by K (from /usr/bin/time, 10
# ms resolution, or Python's getrusage with TIMER=python).
#
# Environment: REPEAT (K, default 5), TARGET (the speedup target, default
# 10), OPT (C compiler level for the compiled code, e.g. -O3; default:
# relayc's -O2), KEEP=1 keeps the outputs, TIMER=python. Files go to a fresh
# directory under bench/out/ (generated output).
set -u

if [ $# -lt 1 ]; then
  echo "usage: sh bench/run_dynamic.sh PATH/TO/relayc [PROGRAM ...]" >&2
  exit 2
fi
RELAYC=$1
shift
case $RELAYC in /*) ;; *) RELAYC=$(pwd)/$RELAYC ;; esac
if [ ! -x "$RELAYC" ]; then
  echo "bench: $RELAYC is not an executable (build it first: make build)" >&2
  exit 2
fi

REPEAT=${REPEAT:-5}
TARGET=${TARGET:-10}
OPT=${OPT:-}
HERE=$(cd "$(dirname "$0")" && pwd)
DYN=$HERE/dynamic

# The programs, in table order (each is bench/dynamic/NAME.relay).
PROGRAMS="loop list_fold tree closures rnn"
if [ $# -gt 0 ]; then
  PROGRAMS=$*
fi

mkdir -p "$HERE/out" || exit 1
WORK=$(mktemp -d "$HERE/out/dynamic.XXXXXX") || exit 1
cleanup() {
  if [ "${KEEP:-0}" = 1 ]; then
    echo "bench: files kept in $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# {==== CPU timer: "USER_S SYSTEM_S" of one command into a file ====}

if [ "${TIMER:-}" != python ] &&
   /usr/bin/time -f "%U %S" -o "$WORK/probe" true >/dev/null 2>&1 && [ -s "$WORK/probe" ]; then
  TIMER=gnu
else
  TIMER=python
  cat >"$WORK/cputime.py" <<'EOF'
import resource, subprocess, sys
out, cmd = sys.argv[1], sys.argv[2:]
rc = subprocess.call(cmd)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(out, "w") as f:
    f.write("%.3f %.3f\n" % (r.ru_utime, r.ru_stime))
sys.exit(rc)
EOF
fi

# run_relayc NAME OUT ARGS...: `relayc ARGS`; stdout to OUT, stderr to
# OUT.err, CPU seconds to OUT.cpu. Prints the failure and returns 1 when
# relayc fails.
run_relayc() {
  _name=$1 _out=$2
  shift 2
  if [ $TIMER = gnu ]; then
    /usr/bin/time -f "%U %S" -o "$_out.cpu" "$RELAYC" "$@" >"$_out" 2>"$_out.err"
  else
    python3 "$WORK/cputime.py" "$_out.cpu" "$RELAYC" "$@" >"$_out" 2>"$_out.err"
  fi
  _rc=$?
  if [ $_rc -ne 0 ]; then
    echo "bench: $_name: relayc $* failed (exit $_rc):" >&2
    head -n 20 "$_out.err" >&2
    return 1
  fi
  return 0
}

# median_of FILE: the M of the last "time_ms: median=M ..." line.
median_of() {
  sed -n 's/^time_ms: median=\([0-9.]*\) .*/\1/p' "$1" | tail -n 1
}

# cpu_per_call ONE.cpu REPEATED.cpu K: (cpu(REPEATED) - cpu(ONE)) / K in ms.
cpu_per_call() {
  awk -v k="$3" 'FNR == NR { a = $1 + $2; next } { b = $1 + $2 } END { printf "%.1f", (b - a) * 1000 / k }' \
    "$1" "$2"
}

FAILED=0
ROWS=$WORK/rows
: >"$ROWS"

# row NAME WORD: a table row with no numbers (FAILED, MISMATCH).
row() {
  printf '%s\t%s\n' "$1" "$2" >>"$ROWS"
}

echo "bench: $REPEAT timed calls per run (after one warm-up), $(nproc 2>/dev/null || echo '?') CPUs," \
  "load average $(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')"

for p in $PROGRAMS; do
  f=$DYN/$p.relay
  if [ ! -f "$f" ]; then
    echo "bench: no program $f" >&2
    row "$p" FAILED
    FAILED=1
    continue
  fi
  # Results: one plain run each way, compared as text.
  if ! run_relayc "$p" "$WORK/$p.interp" run "$f" --interp ||
     ! run_relayc "$p" "$WORK/$p.comp" run "$f" $OPT; then
    row "$p" FAILED
    FAILED=1
    continue
  fi
  if ! cmp -s "$WORK/$p.interp" "$WORK/$p.comp"; then
    echo "bench: $p: the results differ" >&2
    echo "  interpreter: $(head -c 300 "$WORK/$p.interp")" >&2
    echo "  compiled:    $(head -c 300 "$WORK/$p.comp")" >&2
    row "$p" MISMATCH
    FAILED=1
    continue
  fi
  echo "bench: $p = $(head -c 200 "$WORK/$p.interp")"
  # Times. A plain run of the library gives the CPU time of loading it plus
  # one call (and its result must be the same too).
  if ! run_relayc "$p" "$WORK/$p.build" build "$f" -o "$WORK/$p.so" $OPT ||
     ! run_relayc "$p" "$WORK/$p.so1" run "$WORK/$p.so" ||
     ! run_relayc "$p" "$WORK/$p.interp.t" run "$f" --interp --repeat "$REPEAT" ||
     ! run_relayc "$p" "$WORK/$p.comp.t" run "$WORK/$p.so" --repeat "$REPEAT"; then
    row "$p" FAILED
    FAILED=1
    continue
  fi
  if ! cmp -s "$WORK/$p.interp" "$WORK/$p.so1"; then
    echo "bench: $p: the built library prints $(head -c 300 "$WORK/$p.so1")" >&2
    row "$p" MISMATCH
    FAILED=1
    continue
  fi
  im=$(median_of "$WORK/$p.interp.t")
  cm=$(median_of "$WORK/$p.comp.t")
  if [ -z "$im" ] || [ -z "$cm" ]; then
    echo "bench: $p: no time_ms line in the output of --repeat" >&2
    row "$p" FAILED
    FAILED=1
    continue
  fi
  icpu=$(cpu_per_call "$WORK/$p.interp.cpu" "$WORK/$p.interp.t.cpu" "$REPEAT")
  ccpu=$(cpu_per_call "$WORK/$p.so1.cpu" "$WORK/$p.comp.t.cpu" "$REPEAT")
  printf '%s\t%s\t%s\t%s\t%s\n' "$p" "$im" "$cm" "$icpu" "$ccpu" >>"$ROWS"
done

# {==== Table ====}

echo
awk -F '\t' -v target="$TARGET" '
  BEGIN {
    f = "%-10s %10s %10s %8s %10s %10s %8s  %s\n"
    printf f, "", "interp", "compiled", "", "interp", "compiled", "CPU", ""
    printf f, "program", "median ms", "median ms", "speedup", "CPU ms", "CPU ms", "speedup", "target " target "x"
  }
  NF == 2 { printf "%-10s %10s\n", $1, $2; next }
  {
    r = ($3 > 0) ? $2 / $3 : 0
    rc = ($5 > 0) ? sprintf("%.1fx", $4 / $5) : "-"
    printf "%-10s %10.1f %10.1f %7.1fx %10.1f %10.1f %8s  %s\n", $1, $2, $3, r, $4, $5, rc, (r >= target) ? "met" : "missed"
  }
' "$ROWS"

exit $FAILED
