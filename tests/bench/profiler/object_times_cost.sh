#!/usr/bin/env bash
# Cost of the lifetimes, free stacks and ages (HEAP_PROFILE_LIFETIMES=1,
# HEAP_PROFILE_FREE_STACKS=1, HEAP_PROFILE_AGES=1) at the default rate:
#  1. callgrind instructions per malloc+free pair on the unsampled fast path: `alloc_bench
#     pairs 16 N` for N = 200000 and 400000, (Ir(400k) - Ir(200k)) / 200k, under libheapkit.so
#     without HEAPPROFILE, with HEAPPROFILE, and with HEAPPROFILE and all three settings on
#     (and, with --main <build dir>, main's libheapkit.so without HEAPPROFILE);
#  2. callgrind instructions of the profiler churn loop (`profiler_bench 2000000 0`) under
#     HEAPPROFILE, settings off and on; the same in exact mode (`profiler_bench 200000 0`,
#     TCMALLOC_SAMPLE_PARAMETER=1);
#  3. wall and CPU seconds of `profiler_bench 30000000 4` under HEAPPROFILE, off and on
#     interleaved, --reps runs each (medians).
#
#   tests/bench/profiler/object_times_cost.sh [--reps 7] [--main <baseline build>]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
bench=$build/tests/bench/profiler/profiler_bench
alloc_bench=$build/tests/bench/alloc/alloc_bench
heapkit=$build/libheapkit.so
reps=7
main=
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --main) main=$2; shift 2 ;;
    *) echo "object_times_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/heapkit-object-times-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
ON=(HEAP_PROFILE_LIFETIMES=1 HEAP_PROFILE_FREE_STACKS=1 HEAP_PROFILE_AGES=1)
settings() { [[ $1 == on ]] && echo "${ON[@]}" || true; }

ir() {  # ir <lib> <profile dir or -> <on|off> <command...>: callgrind's instruction count
  local lib=$1 dir=$2 cfg=$3
  shift 3
  local env_args=(LD_PRELOAD="$lib")
  [[ $dir != - ]] && { mkdir -p "$dir"; env_args+=(HEAPPROFILE="$dir/prof"); }
  env "${env_args[@]}" $(settings "$cfg") valgrind --tool=callgrind \
    --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : //p'
}
per_pair() {  # per_pair <lib> <profile dir or -> <on|off>
  local a b
  a=$(ir "$1" "$2" "$3" "$alloc_bench" pairs 16 200000)
  b=$(ir "$1" "$2" "$3" "$alloc_bench" pairs 16 400000)
  echo "$(( b - a )) / 200000" | bc -l | xargs printf '%.4f'
}
if [[ -n $main ]]; then
  echo "instructions per pair, main, no HEAPPROFILE: $(per_pair "$main/libheapkit.so" - off)"
fi
echo "instructions per pair, no HEAPPROFILE: $(per_pair "$heapkit" - off)"
echo "instructions per pair, HEAPPROFILE: $(per_pair "$heapkit" "$work/pp_off" off)"
echo "instructions per pair, HEAPPROFILE + lifetimes, free stacks, ages: $(per_pair "$heapkit" "$work/pp_on" on)"
for cfg in off on; do
  echo "callgrind instructions, profiler_bench 2000000 0, settings $cfg: $(ir "$heapkit" "$work/cg_$cfg" $cfg "$bench" 2000000 0)"
done
for cfg in off on; do
  echo "callgrind instructions, exact mode, profiler_bench 200000 0, settings $cfg: $(TCMALLOC_SAMPLE_PARAMETER=1 ir "$heapkit" "$work/ex_$cfg" $cfg "$bench" 200000 0)"
done
run() {  # run <off|on> <rep>
  local dir=$work/$1.$2
  mkdir -p "$dir"
  /usr/bin/time -f "%e %U %S" -o "$dir/time" env LD_PRELOAD="$heapkit" HEAPPROFILE="$dir/prof" \
    $(settings "$1") "$bench" 30000000 4 > /dev/null 2>&1
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
  echo "$name s, profiler_bench 30000000 4, median of $reps: off $off, on $on, on/off $(echo "$on / $off" | bc -l | xargs printf '%.4f')"
done
