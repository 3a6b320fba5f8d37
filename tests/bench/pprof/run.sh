#!/bin/sh
# pprof-tool vs google-pprof --text vs go tool pprof -top, end to end, on
#   small: the golden test program's profile (needs a built tree: BUILD=<build dir>)
#   big:   a generated C++ program (FILES x PER functions, -O2 -g, non-PIE) and a synthetic
#          heapprofile with STACKS distinct stacks whose PCs land in its functions.
# Usage: tests/bench/pprof/run.sh [BUILD_DIR]   (env: RUNS=3 TIMEOUT=300 STACKS=12000)
# Prints a markdown table (medians of RUNS; a tool that exceeds TIMEOUT is reported as such)
# and checks that totals and the top-10 flat functions agree with google-pprof.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-/tmp/build-pprof}
PPROF_TOOL=${PPROF_TOOL:-$BUILD/pprof-tool/pprof-tool}
RUNS=${RUNS:-3}
TIMEOUT=${TIMEOUT:-300}
STACKS=${STACKS:-12000}
FILES=${FILES:-40}
PER=${PER:-100}
W=${WORK:-/tmp/heapkit-pprof-bench}
mkdir -p "$W"
unset DEBUGINFOD_URLS || true

if [ ! -x "$W/bigprog" ]; then
  python3 "$HERE/gen_program.py" "$W/src" "$FILES" "$PER"
  ls "$W"/src/*.cc | xargs -P2 -I{} sh -c 'g++ -O2 -g -fno-pie -c {} -o {}.o'
  g++ -no-pie -o "$W/bigprog" "$W"/src/*.o
fi
python3 "$HERE/gen_profile.py" "$W/bigprog" "$STACKS" "$W/big.heap" >&2

# time_cmd <label> <cmd...>: prints "<median seconds> <max RSS KB>" or "timeout".
time_cmd() {
  label=$1; shift
  : > "$W/$label.times"
  i=0
  while [ $i -lt "$RUNS" ]; do
    if ! timeout "$TIMEOUT" /usr/bin/time -f "%e %M" -o "$W/$label.t" "$@" > "$W/$label.out" 2> "$W/$label.err"; then
      echo "timeout"; return
    fi
    tail -1 "$W/$label.t" >> "$W/$label.times"
    i=$((i + 1))
  done
  sort -n "$W/$label.times" | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)], m[int((NR+1)/2)]}'
}

row() {  # row <case> <prog> <profile>
  ours=$(time_cmd "$1.ours" "$PPROF_TOOL" --text "$2" "$3")
  gp=$(time_cmd "$1.google" google-pprof --text "$2" "$3")
  go=$(time_cmd "$1.go" go tool pprof -top "$2" "$3")
  echo "| $1 | $ours | $gp | $go |"
}

echo "| case | pprof-tool (s, KB) | google-pprof --text (s, KB) | go tool pprof -top (s, KB) |"
echo "|---|---|---|---|"
SMALL_PROG=$BUILD/tests/pprof_tool/golden/pprof_golden_pie
SMALL_PROF=$BUILD/tests/pprof_tool/golden/work/pie.final.heap
if [ -f "$SMALL_PROF" ]; then row small "$SMALL_PROG" "$SMALL_PROF"; fi
row big "$W/bigprog" "$W/big.heap"

# Same totals and top-10 as google-pprof (show_bytes, templates stripped). google-pprof keeps
# every frame: the generated gen::leaf_N, reached from many callers, are allocation wrappers to
# pprof-tool's default report (charged to their callers), so compare with the frames kept.
"$PPROF_TOOL" --text --show_bytes --nodefraction=0 --keep_allocator_frames "$W/bigprog" "$W/big.heap" > "$W/ours.bytes"
if timeout "$TIMEOUT" google-pprof --text --show_bytes "$W/bigprog" "$W/big.heap" > "$W/google.bytes" 2>/dev/null; then
  python3 - "$W/ours.bytes" "$W/google.bytes" <<'PY'
import re, sys
def rows(path, google):
    out, total = [], None
    for line in open(path):
        m = re.match(r"^Total: (\d+)", line) or re.search(r"of (\d+) total", line)
        if m and total is None: total = int(m.group(1))
        m = re.match(r"^\s*(-?\d+)\s+\S+%\s+\S+%\s+(-?\d+)\s+\S+%\s+(.*)$", line)
        if m:
            name = re.sub(r"<[^<>]*>", "", m.group(3).strip())
            out.append((-int(m.group(1)), name.split(" (inline)")[0]))
    return total, sorted(out)[:10]
to, ro = rows(sys.argv[1], False)
tg, rg = rows(sys.argv[2], True)
print("\ntotal: pprof-tool %s, google-pprof %s -> %s" % (to, tg, "same" if to == tg else "DIFFERENT"))
print("top-10 flat: %s" % ("same" if ro == rg else "DIFFERENT\n ours %s\n google %s" % (ro, rg)))
PY
else
  echo "google-pprof did not finish within ${TIMEOUT}s: no comparison"
fi
