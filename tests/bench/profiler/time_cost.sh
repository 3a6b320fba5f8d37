#!/usr/bin/env bash
# Cost of the time-based answers (HEAP_PROFILE_PEAK=1, HEAP_PROFILE_RSS_LIMIT=64g and
# HEAP_PROFILE_TIMELINE=100ms: "all on")
# over HEAPPROFILE alone ("off"), same build:
#  1. default rate: profiler_bench's large workload, interleaved (order alternating), --reps
#     runs each: medians of wall and CPU (user + sys) seconds and their ratio;
#  2. default rate: callgrind instructions of the churn loop (`profiler_bench 2000000 0`);
#  3. exact mode (TCMALLOC_SAMPLE_PARAMETER=1): callgrind instructions of
#     `profiler_bench 200000 0`, off and on, --cg-reps runs each (medians).
# Callgrind counts each thread apart (--separate-threads=yes): the total, the workload's main
# thread alone, and the profiler's helper thread (the timeline's ticks, the RSS checks) with
# the ticks it made (from the timeline file's header) and its instructions per tick. Callgrind
# runs the program ~50-100x slower while the ticks keep their wall-clock period, so the helper
# thread's share under callgrind is that much larger than natively.
#
#   tests/bench/profiler/time_cost.sh [--reps 7] [--cg-reps 3] [--on "VAR=value ..."]
# --on: the settings of "on" instead (e.g. "HEAP_PROFILE_PEAK=1 HEAP_PROFILE_LIFETIMES=1
# HEAP_PROFILE_AGES=1": the three time answers a dump can carry).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
bench=$build/tests/bench/profiler/profiler_bench
heapkit=$build/libheapkit.so
reps=7
cg_reps=3
all_on=(HEAP_PROFILE_PEAK=1 HEAP_PROFILE_RSS_LIMIT=64g HEAP_PROFILE_TIMELINE=100ms)
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --cg-reps) cg_reps=$2; shift 2 ;;
    --on) read -r -a all_on <<< "$2"; shift 2 ;;
    *) echo "time_cost.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d /tmp/heapkit-time-cost.XXXXXX)
trap 'rm -rf "$work"' EXIT
settings() { [[ $1 == on ]] && echo "${all_on[@]}" || echo HEAP_PROFILE_PEAK=0; }
run() {  # run <off|on> <rep>
  local dir=$work/$1.$2
  mkdir -p "$dir"
  # bash's time: milliseconds (GNU time's 10 ms steps are 5 % of a 0.2 s run)
  local TIMEFORMAT="%3R %3U %3S"
  { time env LD_PRELOAD="$heapkit" HEAPPROFILE="$dir/prof" $(settings "$1") "$bench" 30000000 4 \
      > /dev/null 2>&1; } 2> "$dir/time"
  read -r wall user sys < "$dir/time"
  echo "$1 $wall $(echo "$user + $sys" | bc -l)" >> "$work/times"
}
for ((rep = 1; rep <= reps; rep++)); do
  if ((rep % 2)); then run off $rep; run on $rep; else run on $rep; run off $rep; fi
done
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for col in 2 3; do
  name=$([[ $col == 2 ]] && echo wall || echo CPU)
  off=$(grep '^off ' "$work/times" | awk -v c=$col '{print $c}' | median)
  on=$(grep '^on ' "$work/times" | awk -v c=$col '{print $c}' | median)
  echo "default rate, $name s, median of $reps: off $off, on $on, on/off $(echo "$on / $off" | bc -l | xargs printf '%.4f')"
done
# The ratio within each interleaved pair (the machine's drift cancels): its median.
paste <(grep '^on ' "$work/times" | awk '{print $3}') <(grep '^off ' "$work/times" | awk '{print $3}') |
  awk '{print $1 / $2}' | median | xargs printf 'default rate, CPU on/off per pair, median of %d: %.4f\n' "$reps"
cg() {  # cg <off|on> <extra env> <args...>: "<total> <main thread> <helper thread> <ticks>"
  local cfg=$1 extra=$2; shift 2
  rm -rf "$work/cg"; mkdir -p "$work/cg"
  env LD_PRELOAD="$heapkit" HEAPPROFILE="$work/cg/prof" $(settings "$cfg") $extra \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg/out" \
    "$bench" "$@" > /dev/null 2>&1
  local main helper ticks
  main=$(sed -n 's/^summary: //p' "$work/cg/out-01")
  helper=$(find "$work/cg" -name 'out-*' ! -name out-01 -exec sed -n 's/^summary: //p' {} + |
    awk '{s += $1} END {print s + 0}')
  ticks=0
  local timeline
  timeline=$(find "$work/cg" -name 'prof*.timeline.heap' | head -1)  # prof_<pid> under valgrind
  if [[ -n $timeline ]]; then
    ticks=$(sed -n 's/^# heapkit: timeline period_ms [0-9]* ticks \([0-9]*\).*/\1/p' \
      "$timeline" | head -1)
  fi
  echo "$((main + helper)) $main $helper ${ticks:-0}"
}
ratio() { echo "$2 / $1" | bc -l | xargs printf '%.4f'; }
for mode in default exact; do
  extra=$([[ $mode == exact ]] && echo TCMALLOC_SAMPLE_PARAMETER=1 || echo HEAP_PROFILE_ALLOCATION_INTERVAL=1073741824)
  args=$([[ $mode == exact ]] && echo "200000 0" || echo "2000000 0")
  : > "$work/cg_off"; : > "$work/cg_on"
  for ((rep = 1; rep <= cg_reps; rep++)); do
    cg off "$extra" $args >> "$work/cg_off"
    cg on "$extra" $args >> "$work/cg_on"
  done
  col() { awk -v c="$2" '{print $c}' "$1" | median; }
  off=$(col "$work/cg_off" 1); on=$(col "$work/cg_on" 1)
  off_main=$(col "$work/cg_off" 2); on_main=$(col "$work/cg_on" 2)
  helper=$(col "$work/cg_on" 3); ticks=$(col "$work/cg_on" 4)
  echo "$mode mode, callgrind instructions, profiler_bench $args, median of $cg_reps: off $off, on $on, on/off $(ratio "$off" "$on")"
  echo "$mode mode, main thread alone: off $off_main, on $on_main, on/off $(ratio "$off_main" "$on_main")"
  per_tick=$( ((ticks > 0)) && echo $((helper / ticks)) || echo -)
  echo "$mode mode, helper thread (on): $helper instructions, $ticks timeline ticks, $per_tick per tick"
done
