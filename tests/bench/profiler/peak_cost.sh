#!/usr/bin/env bash
# Cost of HEAP_PROFILE_PEAK=1 at the default rate: profiler_bench's large workload under
# HEAPPROFILE with the peak profile off and on, interleaved (order alternating), --reps runs
# each; prints the medians of wall and CPU (user + sys) seconds and their ratio. Then callgrind
# instruction counts of the churn loop (`profiler_bench 2000000 0`), off and on.
#
#   tests/bench/profiler/peak_cost.sh [--reps 7] [--no-callgrind]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
bench=$build/tests/bench/profiler/profiler_bench
heapkit=$build/libheapkit.so
reps=7
callgrind=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --no-callgrind) callgrind=0; shift ;;
    *) echo "peak_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/heapkit-peak-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
run() {  # run <off|on> <rep>
  local dir=$work/$1.$2
  mkdir -p "$dir"
  /usr/bin/time -f "%e %U %S" -o "$dir/time" env LD_PRELOAD="$heapkit" HEAPPROFILE="$dir/prof" \
    HEAP_PROFILE_PEAK=$([[ $1 == on ]] && echo 1 || echo 0) "$bench" 30000000 4 > /dev/null 2>&1
  read -r wall user sys < "$dir/time"
  echo "$1 $wall $(echo "$user + $sys" | bc -l)" >> "$work/times"
}
for ((rep = 1; rep <= reps; rep++)); do
  if ((rep % 2)); then run off $rep; run on $rep; else run on $rep; run off $rep; fi
done
median() { grep "^$1 " "$work/times" | awk -v c="$2" '{print $c}' | sort -g |
           awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for col in 2 3; do
  name=$([[ $col == 2 ]] && echo wall || echo CPU)
  off=$(median off $col); on=$(median on $col)
  echo "$name s, median of $reps: off $off, on $on, on/off $(echo "$on / $off" | bc -l | xargs printf '%.4f')"
done
if [[ $callgrind == 1 ]]; then
  for cfg in off on; do
    mkdir -p "$work/cg_$cfg"
    n=$(env LD_PRELOAD="$heapkit" HEAPPROFILE="$work/cg_$cfg/prof" \
          HEAP_PROFILE_PEAK=$([[ $cfg == on ]] && echo 1 || echo 0) \
          valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" 2000000 0 2>&1 |
        sed -n 's/.*Collected : //p')
    echo "callgrind instructions, profiler_bench 2000000 0, peak $cfg: $n"
  done
fi
