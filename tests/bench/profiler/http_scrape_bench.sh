#!/usr/bin/env bash
# Cost of scraping the HTTP endpoint while the program works, and scrape latency by profile
# size (RESULTS.md, "HTTP endpoint: scrapes during the churn run, 1k/10k-stack latency").
#
# 1. profiler_bench <pairs> 4 at the default sampling rate with the endpoint on, interleaved
#    within each repetition: nobody scrapes / /debug/pprof/allocs every 10 s (Parca's default)
#    / every 1 s (ten times that); medians of --reps runs of the benchmark process's CPU
#    (user + sys, the server thread included) and wall time (/usr/bin/time). Scrapes start
#    0.5 s into the run, so even a short run pays the first one (which builds the
#    symbolizer's index).
# 2. profiler_http_stacks <bits> (2^bits distinct stacks, TCMALLOC_SAMPLE_PARAMETER=4096):
#    curl time_total of /debug/pprof/heap (first, then warm: median of --reps) for 1k and 16k
#    stacks, and of ?debug=1 (the text, no symbolization); and the CPU time the server thread
#    ("heapkit-http", /proc/<pid>/task/<tid>/stat utime + stime) spent on the warm scrapes, per
#    scrape: on a loaded machine the wall time also counts the waits for a CPU.
#
#   tests/bench/profiler/http_scrape_bench.sh [--reps 5] [--pairs 300000000] [--build build]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../../.." && pwd)/build
reps=5
pairs=300000000
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "http_scrape_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench=$build/tests/bench/profiler/profiler_bench
stacks=$build/tests/bench/profiler/profiler_http_stacks
lib=$build/libheapkit.so
work=$(mktemp -d /tmp/heapkit-scrape-bench.XXXXXX)
pids=()
trap 'rm -rf "$work"; for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# Scrapes $1/debug/pprof/allocs every $2 s (after 0.5 s) until $3 exits.
scraper() {
  local err=$1 interval=$2 target=$3 port=""
  for _ in $(seq 100); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$err" 2>/dev/null | grep -o '[0-9]*$' || true)
    [[ -n $port ]] && break
    sleep 0.05
  done
  sleep 0.5
  local n=0
  while kill -0 "$target" 2>/dev/null; do
    curl -s -o /dev/null --max-time 30 "http://127.0.0.1:$port/debug/pprof/allocs" && n=$((n + 1))
    sleep "$interval"
  done
  echo "$n" >"$err.scrapes"
}

if [[ $pairs -gt 0 ]]; then  # --pairs 0: the latency part alone
echo "## profiler_bench $pairs 4, endpoint on: no scrapes vs /debug/pprof/allocs every 10 s / 1 s"
for rep in $(seq "$reps"); do
  for config in no_scrapes every_10s every_1s; do
    err=$work/err.$config.$rep
    : >"$err"
    /usr/bin/time -f "%U %S %e" -o "$work/time" env LD_PRELOAD="$lib" \
      TCMALLOC_SAMPLE_PARAMETER=524288 HEAPKIT_HTTP=127.0.0.1:0 "$bench" "$pairs" 4 \
      >/dev/null 2>"$err" &
    tpid=$!
    spid=
    case $config in
      every_10s) scraper "$err" 10 "$tpid" & spid=$! ;;
      every_1s) scraper "$err" 1 "$tpid" & spid=$! ;;
    esac
    wait "$tpid"
    [[ -n $spid ]] && wait "$spid"
    scrapes=$(cat "$err.scrapes" 2>/dev/null || echo 0)
    awk -v c="$config" -v s="$scrapes" '{print c, $1 + $2, $3, s}' "$work/time" >>"$work/times"
  done
done
echo "| configuration | CPU s (median) | wall s (median) | scrapes per run (median) |"
echo "|---|---:|---:|---:|"
for config in no_scrapes every_10s every_1s; do
  cpu=$(awk -v c="$config" '$1 == c {print $2}' "$work/times" | median)
  wall=$(awk -v c="$config" '$1 == c {print $3}' "$work/times" | median)
  n=$(awk -v c="$config" '$1 == c {print $4}' "$work/times" | median)
  echo "| $config | $cpu | $wall | $n |"
  eval "cpu_$config=$cpu"
done
awk -v a="$cpu_every_10s" -v b="$cpu_every_1s" -v o="$cpu_no_scrapes" \
  'BEGIN {printf "\nCPU every 10 s / none: %.3f; every 1 s / none: %.3f\n", a / o, b / o}'
fi

echo
echo "## Scrape latency by profile size (profiler_http_stacks, curl time_total in ms)"
echo "| stacks in the profile | /debug/pprof/heap first | warm (median of $reps) | warm, server CPU ms per scrape | ?debug=1 (median of $reps) |"
echo "|---:|---:|---:|---:|---:|"
# utime + stime of the server thread of process $1, in clock ticks.
server_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    if [[ $(cat "$t/comm") == heapkit-http ]]; then
      awk '{print $14 + $15}' "$t/stat"
      return
    fi
  done
  echo 0
}
hz=$(getconf CLK_TCK)
for bits in ${HEAPKIT_BENCH_BITS:-10 14}; do
  mkfifo "$work/in.$bits"
  LD_PRELOAD=$lib HEAPKIT_HTTP=127.0.0.1:0 TCMALLOC_SAMPLE_PARAMETER=4096 "$stacks" "$bits" \
    <"$work/in.$bits" >"$work/out.$bits" 2>"$work/err.$bits" &
  pid=$!
  pids+=("$pid")
  exec 3>"$work/in.$bits"
  for _ in $(seq 600); do grep -q ready "$work/out.$bits" 2>/dev/null && break; sleep 0.1; done
  port=$(grep -o '[0-9]*$' "$work/err.$bits" | head -1)
  url=http://127.0.0.1:$port
  first=$(curl -s -o /dev/null -w '%{time_total}' "$url/debug/pprof/heap")
  ticks0=$(server_ticks "$pid")
  warm=$(for _ in $(seq "$reps"); do curl -s -o /dev/null -w '%{time_total}\n' "$url/debug/pprof/heap"; done | median)
  ticks1=$(server_ticks "$pid")
  text=$(for _ in $(seq "$reps"); do curl -s -o /dev/null -w '%{time_total}\n' "$url/debug/pprof/heap?debug=1"; done | median)
  n=$(curl -s "$url/metrics" | awk '/^heapkit_profile_stacks /{print $2}')
  awk -v n="$n" -v f="$first" -v w="$warm" -v t="$text" -v c="$((ticks1 - ticks0))" \
    -v hz="$hz" -v r="$reps" \
    'BEGIN {printf "| %d | %.1f | %.1f | %.1f | %.1f |\n", n, 1000 * f, 1000 * w,
            1000 * c / hz / r, 1000 * t}'
  exec 3>&-
  wait "$pid" || true
done
