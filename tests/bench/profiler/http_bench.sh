#!/usr/bin/env bash
# Cost of the HTTP endpoint (HEAPKIT_HTTP): profiler_bench with sampling at the default rate
# (TCMALLOC_SAMPLE_PARAMETER=524288) without and with the endpoint on and idle, interleaved
# within each repetition, medians of --reps runs of CPU (user + sys) and wall time
# (/usr/bin/time); then the latency of scrapes of /debug/pprof/heap (first:
# builds the symbolizer; then warm) and /metrics on a running profiler_http_workload.
#
#   tests/bench/profiler/http_bench.sh [--reps 10] [--build build]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$here/../../.." && pwd)/build
reps=10
while [[ $# -gt 0 ]]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "http_bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench=$build/tests/bench/profiler/profiler_bench
workload=$build/tests/profiler/http/profiler_http_workload
lib=$build/libheapkit.so
work=$(mktemp -d /tmp/heapkit-http-bench.XXXXXX)
trap 'rm -rf "$work"; [[ -n ${pid:-} ]] && kill "$pid" 2>/dev/null; true' EXIT

echo "## profiler_bench 30000000 4: sampling at the default rate, endpoint off vs on and idle"
for rep in $(seq "$reps"); do
  for config in endpoint_off endpoint_idle; do
    extra=()
    [[ $config == endpoint_idle ]] && extra=(HEAPKIT_HTTP=127.0.0.1:0)
    /usr/bin/time -f "%U %S %e" -o "$work/time" env LD_PRELOAD="$lib" \
      TCMALLOC_SAMPLE_PARAMETER=524288 "${extra[@]}" "$bench" 30000000 4 >/dev/null 2>&1
    awk -v c="$config" '{print c, $1 + $2, $3}' "$work/time" >>"$work/times"
  done
done
echo "| configuration | CPU s (median) | wall s (median) |"
echo "|---|---:|---:|"
for config in endpoint_off endpoint_idle; do
  cpu=$(awk -v c="$config" '$1 == c {print $2}' "$work/times" | sort -g |
        awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  wall=$(awk -v c="$config" '$1 == c {print $3}' "$work/times" | sort -g |
         awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "| $config | $cpu | $wall |"
  eval "cpu_$config=$cpu"
done
awk -v a="$cpu_endpoint_idle" -v b="$cpu_endpoint_off" 'BEGIN {printf "\nCPU idle / off: %.3f\n", a / b}'

echo
echo "## Scrape latency (profiler_http_workload, curl time_total in ms)"
mkfifo "$work/in"
LD_PRELOAD=$lib HEAPKIT_HTTP=127.0.0.1:0 "$workload" <"$work/in" >"$work/out" 2>"$work/err" &
pid=$!
exec 3>"$work/in"
for _ in $(seq 50); do grep -q listening "$work/err" 2>/dev/null && break; sleep 0.1; done
port=$(grep -o '[0-9]*$' "$work/err")
url=http://127.0.0.1:$port
first=$(curl -s -o /dev/null -w '%{time_total}' "$url/debug/pprof/heap")
warm=()
for _ in $(seq "$reps"); do warm+=("$(curl -s -o /dev/null -w '%{time_total}' "$url/debug/pprof/heap")"); done
metrics=()
for _ in $(seq "$reps"); do metrics+=("$(curl -s -o /dev/null -w '%{time_total}' "$url/metrics")"); done
stacks=$(curl -s "$url/metrics" | awk '/^heapkit_profile_stacks /{print $2}')
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {printf "%.1f", 1000*a[int((NR+1)/2)]}'; }
echo "| scrape | ms |"
echo "|---|---:|"
echo "| /debug/pprof/heap, first (symbolizer built) | $(median "$first") |"
echo "| /debug/pprof/heap, warm (median of $reps) | $(median "${warm[@]}") |"
echo "| /metrics (median of $reps) | $(median "${metrics[@]}") |"
echo
echo "stacks in the profile: $stacks"
exec 3>&-
wait "$pid"
pid=
