#!/bin/sh
# Render benchmark: pprof-tool's picture outputs on a >= 10,000-stack heap profile, end to end
# (read + symbolize + graph + render + write), beside google-pprof --svg on the same input.
#
#   tests/bench/render/run.sh [work dir]      (default /tmp/heapkit-bench-render)
#   env: BUILD=<cmake build dir> (default /tmp/build-graphs; needs target pprof-tool built)
#        RUNS=<n> (default 5)   PATHS=<n> stacks (default 12000)   FILLER=<n> (default 3000)
#
# The input comes from gen_program.py (this directory): a generated C++ program with 5 layers
# of 8 noinline functions (+ inlined dispatch helpers) and FILLER extra template functions,
# which writes its own live blocks as a legacy "heapprofile" dump, one distinct stack per path.
# Prints the median wall time of each command and a markdown table (see RESULTS.md).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-/tmp/heapkit-bench-render}
build=${BUILD:-/tmp/build-graphs}
runs=${RUNS:-5}
paths=${PATHS:-12000}
filler=${FILLER:-3000}
tool=$build/pprof-tool/pprof-tool
[ -x "$tool" ] || { echo "run.sh: $tool not built (ninja -C $build pprof-tool)"; exit 2; }
mkdir -p "$work"
cd "$work"

if [ ! -x prog ] || [ "$here/gen_program.py" -nt prog ]; then
  python3 "$here/gen_program.py" --paths "$paths" --filler "$filler" --output prog.cc
  g++ -O1 -g -fno-optimize-sibling-calls -fno-omit-frame-pointer -o prog prog.cc
fi
./prog big.heap >/dev/null
stacks=$(sed -n 's/.*@ \(0x.*\)$/\1/p' big.heap | sort -u | wc -l)
echo "input: $work/big.heap: $stacks distinct stacks; binary $(wc -c <prog) bytes"

# median_time <label> <command...>: runs the command $runs times (stdout to /dev/null) and
# prints the median wall time and the median CPU time (user + sys, children included).
median_time() {
  label=$1
  shift
  : >"$work/times"
  i=0
  while [ "$i" -lt "$runs" ]; do
    /usr/bin/time -o "$work/time1" -f "%e %U %S" "$@" >/dev/null 2>>"$work/stderr.log"
    awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$work/time1" >>"$work/times"
    i=$((i + 1))
  done
  wall=$(cut -d' ' -f1 "$work/times" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  cpu=$(cut -d' ' -f2 "$work/times" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
  printf '| %-28s | %6.2f s | %6.2f s |\n' "$label" "$wall" "$cpu"
}

echo "| command (median of $runs runs) | wall | CPU (user+sys) |"
echo "|---|---|---|"
median_time "pprof-tool --text" "$tool" --text prog big.heap
median_time "pprof-tool --dot" "$tool" --dot prog big.heap
median_time "pprof-tool --svg" "$tool" --svg prog big.heap
median_time "pprof-tool --png" "$tool" --png prog big.heap
median_time "pprof-tool --flamegraph" "$tool" --flamegraph prog big.heap
if command -v google-pprof >/dev/null 2>&1 && command -v dot >/dev/null 2>&1; then
  runs_saved=$runs
  runs=${GPPROF_RUNS:-3}
  median_time "google-pprof --svg" google-pprof --svg prog big.heap
  runs=$runs_saved
fi
# Sanity: both SVGs show the same top function.
"$tool" --svg prog big.heap >pprof-tool.svg
grep -q 'bench::layer4::Dispatch' pprof-tool.svg && echo "pprof-tool.svg shows bench::layer4::Dispatch"
if command -v google-pprof >/dev/null 2>&1; then
  google-pprof --svg prog big.heap >google-pprof.svg 2>/dev/null
  # google-pprof breaks names at "::" into separate lines.
  grep -q '>Dispatch<' google-pprof.svg && grep -q '>layer4<' google-pprof.svg &&
    echo "google-pprof.svg shows bench::layer4::Dispatch"
fi
echo "machine: $(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
