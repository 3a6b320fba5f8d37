#!/usr/bin/env bash
# Cost of HEAP_PROFILE_FORMAT=proto|both at dump time (nothing changes on the allocation path):
#  1. memory_workload keeps a heap of small objects live and times HeapProfilerDump in the process
#     (several dumps per run), default sampling rate and exact mode, per format: median seconds
#     per dump;
#  2. http_stacks walks 2^bits distinct stacks at a small sampling period (nearly every leaf
#     sampled) with HEAP_PROFILE_LIFETIMES and HEAP_PROFILE_PEAK on: wall time of the whole run
#     (its exit dump writes the dump and two peak profiles) and the file sizes per format.
#
#   tests/bench/profiler/proto_cost.sh [--mib 512] [--reps 5] [--bits 14]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
mib=512
reps=5
bits=14
while [[ $# -gt 0 ]]; do
  case $1 in
    --mib) mib=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --bits) bits=$2; shift 2 ;;
    *) echo "proto_cost.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
lib=$build/libheapkit.so
memory_workload=$build/tests/profiler/memory/memory_workload
stacks=$build/tests/bench/profiler/profiler_http_stacks
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "1. HeapProfilerDump of $mib MiB of 56..1016-byte objects; $reps dumps per row; median s per dump"
echo
echo "| mode | legacy | proto | both |"
echo "|---|---:|---:|---:|"
for rate in 524288 1; do
  row="| $([[ $rate == 1 ]] && echo exact || echo 'default rate') |"
  for fmt in legacy proto both; do
    out=$(env LD_PRELOAD="$lib" HEAPPROFILE="$work/m" HEAP_PROFILE_FORMAT=$fmt \
          HEAP_PROFILE_ALLOCATION_INTERVAL=0 HEAP_PROFILE_INUSE_INTERVAL=0 \
          TCMALLOC_SAMPLE_PARAMETER=$rate PERFTOOLS_VERBOSE=-1 \
          "$memory_workload" dumpcost "$mib" "$reps" 2>/dev/null)
    rm -f "$work"/m.*
    row="$row $(grep dump_seconds <<<"$out" | awk '{print $2}' | median) |"
  done
  echo "$row"
done

echo
echo "2. http_stacks $bits (2^$bits stacks), TCMALLOC_SAMPLE_PARAMETER=4096, lifetimes and peak on;"
echo "   $reps runs per format; median wall s of the run; sizes of the exit dump's files (bytes)"
echo
echo "| format | wall s | .0001.heap | .0001.heap.pb.gz | .peak.heap | .peak.heap.pb.gz |"
echo "|---|---:|---:|---:|---:|---:|"
for fmt in legacy proto both; do
  times=()
  for ((i = 0; i < reps; i++)); do
    rm -f "$work"/s.*
    t0=$(date +%s%N)
    env LD_PRELOAD="$lib" HEAPPROFILE="$work/s" HEAP_PROFILE_FORMAT=$fmt HEAP_PROFILE_LIFETIMES=1 \
      HEAP_PROFILE_PEAK=1 TCMALLOC_SAMPLE_PARAMETER=4096 PERFTOOLS_VERBOSE=-1 \
      "$stacks" "$bits" </dev/null >/dev/null 2>&1
    t1=$(date +%s%N)
    times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", (b - a) / 1e9}')")
  done
  size() { [[ -f $1 ]] && stat -c %s "$1" || echo -; }
  echo "| $fmt | $(printf '%s\n' "${times[@]}" | median) | $(size "$work/s.0001.heap") |" \
       "$(size "$work/s.0001.heap.pb.gz") | $(size "$work/s.peak.heap") |" \
       "$(size "$work/s.peak.heap.pb.gz") |"
done
