#!/usr/bin/env bash
# Cost of the HTTP endpoint (HEAPKIT_HTTP): profiler_bench with sampling at the default rate
# (TCMALLOC_SAMPLE_PARAMETER=524288) without and with the endpoint on and idle, interleaved,
# medians of --reps runs (hyperfine); then the latency of scrapes of /debug/pprof/heap (first:
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
hyperfine -N --runs "$reps" --warmup 1 --export-markdown "$work/cost.md" \
  -n endpoint_off "env LD_PRELOAD=$lib TCMALLOC_SAMPLE_PARAMETER=524288 $bench 30000000 4" \
  -n endpoint_idle "env LD_PRELOAD=$lib TCMALLOC_SAMPLE_PARAMETER=524288 HEAPKIT_HTTP=127.0.0.1:0 $bench 30000000 4" \
  >/dev/null
cat "$work/cost.md"

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
