#!/usr/bin/env bash
# Dump-time cost of the memory figures and of HEAP_PROFILE_RESIDENCY: memory_workload keeps a
# large heap of small objects live and times HeapProfilerDump (wall time in the process, several
# dumps per run), under a baseline libheapkit.so (e.g. a build without the memory block) and this
# tree's, residency off and on, at the default sampling rate and in exact mode. Medians.
#
#   tests/bench/profiler/dump_cost.sh [--mib 4096] [--reps 5] [--baseline /path/libheapkit.so]
#       [--heapkit build/libheapkit.so] [--workload build/tests/profiler/memory/memory_workload]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
mib=4096
reps=5
baseline=""
heapkit=$build/libheapkit.so
workload=$build/tests/profiler/memory/memory_workload
while [[ $# -gt 0 ]]; do
  case $1 in
    --mib) mib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --heapkit) heapkit=$2; shift 2 ;;
    --workload) workload=$2; shift 2 ;;
    *) echo "dump_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run() {  # label lib residency sample_parameter
  local label=$1 lib=$2 residency=$3 rate=$4 out
  out=$(env -u HEAPPROFILE LD_PRELOAD="$lib" HEAPPROFILE="$work/p" HEAP_PROFILE_RESIDENCY="$residency" \
        HEAP_PROFILE_ALLOCATION_INTERVAL=0 HEAP_PROFILE_INUSE_INTERVAL=0 \
        ${rate:+TCMALLOC_SAMPLE_PARAMETER=$rate} PERFTOOLS_VERBOSE=-1 \
        "$workload" dumpcost "$mib" "$reps" 2>/dev/null)
  rm -f "$work"/p.*
  local med
  med=$(grep dump_seconds <<<"$out" | awk '{print $2}' | median)
  printf '| %s | %s |\n' "$label" "$med"
}

echo "heap: $mib MiB of 56..1016-byte objects; $reps dumps per configuration; median seconds per dump"
echo
echo "| configuration | dump s |"
echo "|---|---:|"
for rate in "" 1; do
  mode=${rate:+exact}; mode=${mode:-sampled}
  [[ -n "$baseline" ]] && run "baseline, $mode" "$baseline" 0 "$rate"
  run "this tree, $mode, residency off" "$heapkit" 0 "$rate"
  run "this tree, $mode, residency on" "$heapkit" 1 "$rate"
done
