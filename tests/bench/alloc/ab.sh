#!/usr/bin/env bash
# Interleaved A/B of one alloc_bench workload under several allocator libraries: each round runs
# every library once, in turn, so load changes on a shared machine hit all alike. For checking
# one change against its parent and the peers quickly; run.sh makes the full table.
#
#   tests/bench/alloc/ab.sh <rounds> "<workload args>" <lib.so|none> [<lib.so|none> ...]
#   e.g. HEAPKIT_BUILD_DIR=build tests/bench/alloc/ab.sh 9 "pairs 16 20000000" \
#          /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 /tmp/parent.so build/libheapkit_minimal.so
#
# Prints, per library, the median, min and max of the workload's first reported metric.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${HEAPKIT_BUILD_DIR:-$here/../../../build}
bench=$build/tests/bench/alloc/alloc_bench
[[ $# -ge 3 ]] || { sed -n '2,10p' "$0" >&2; exit 2; }
[[ -x $bench ]] || { echo "ab.sh: $bench not found (build target alloc_bench)" >&2; exit 1; }
rounds=$1
args=$2
shift 2
libs=("$@")
for l in "${libs[@]}"; do
  [[ $l == none || -f $l ]] || { echo "ab.sh: $l not found" >&2; exit 1; }
done
declare -A values
metric=""
for ((r = 0; r < rounds; r++)); do
  for l in "${libs[@]}"; do
    preload=$l
    [[ $l == none ]] && preload=""
    # shellcheck disable=SC2086  # the workload arguments are meant to split
    read -r name value < <(LD_PRELOAD=$preload "$bench" $args | head -n 1)
    metric=$name
    values[$l]+="$value "
  done
done
for l in "${libs[@]}"; do
  tr ' ' '\n' <<<"${values[$l]}" | sed '/^$/d' | sort -g |
    awk -v lib="$l" -v m="$metric" -v n="$rounds" \
      '{a[NR] = $1} END {printf "%s: %s median %.4g (min %.4g, max %.4g, %d rounds)\n", lib, m, a[int((NR + 1) / 2)], a[1], a[NR], n}'
done
