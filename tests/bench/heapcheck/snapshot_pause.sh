#!/usr/bin/env bash
# The pause of a forked-snapshot check against the stop-the-world check (snapshot_pause.cc):
# 64 MiB, 512 MiB and 2 GiB live pointer-dense heaps, 8 busy threads, the two kinds alternated
# in each run; then the same with the threads writing into the heap (the copy's extra memory).
#
#   tests/bench/heapcheck/snapshot_pause.sh <build-dir> [checks per kind] [MiB...]
set -euo pipefail
build=$(cd "$1" && pwd)
checks=${2:-5}
shift $(( $# > 1 ? 2 : 1 ))
sizes=("${@:-64 512 2048}")
bench=$build/tests/bench/heapcheck/heapcheck_snapshot_pause
for mib in ${sizes[*]}; do
  for mode in "" write; do
    echo "== $mib MiB ${mode:-read} (load: $(cut -d' ' -f1-3 /proc/loadavg))"
    HEAPCHECK=local "$bench" "$mib" "$checks" $mode 2>/dev/null
  done
done
