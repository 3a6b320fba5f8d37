#!/usr/bin/env bash
# The long stress run: heapkit_stress for N seconds (default 60) in each configuration, results
# written to tests/stress/RESULTS.md (between its markers).
#   tests/stress/run_long.sh [build-dir] [seconds]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-$root/build}")
seconds=${2:-60}
work=$(mktemp -d /tmp/heapkit-stress-long.XXXXXX)
trap 'rm -rf "$work"' EXIT
out=$work/results.md
status=0
{
  echo "Command: \`tests/stress/run_long.sh ${1:-} $seconds\`, $(date -u '+%Y-%m-%d %H:%M UTC'), tree $(git -C "$root" describe --always --dirty),"
  echo "$(nproc) cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg) (shared machine)."
  echo
  echo '```'
} >"$out"
for config in glibc minimal sampled heapcheck; do
  /usr/bin/time -f "stress.$config: CPU user %U s, sys %S s, max RSS %M KiB" \
    "$here/run_stress.sh" "$config" "$build/tests/stress/heapkit_stress" \
    "$build/libheapkit_minimal.so" "$build/libheapkit.so" "$build/pprof-tool/pprof-tool" "$seconds" \
    >"$work/$config.log" 2>&1 || status=1
  cat "$work/$config.log" >>"$out"
  cat "$work/$config.log"
done
echo '```' >>"$out"
results=$here/RESULTS.md
awk -v f="$out" '/^<!-- run_long begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
                 /^<!-- run_long end -->/ { skip = 0 } !skip' "$results" >"$work/new" && cp "$work/new" "$results"
echo "run_long.sh: results in $results (status $status)"
exit $status
