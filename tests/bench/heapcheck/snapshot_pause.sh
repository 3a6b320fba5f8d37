#!/usr/bin/env bash
# The pause of a forked-snapshot check against the stop-the-world check (snapshot_pause.cc):
# 64 MiB, 512 MiB and 2 GiB live pointer-dense heaps, 8 busy threads, the two kinds alternated
# in each run; each run with the heap in small pages and in transparent huge pages
# (TCMALLOC_HUGE_PAGES=true), one after the other (A/B pairs on a shared machine); then the same
# with the threads writing into the heap (the copy's extra memory).
#
#   tests/bench/heapcheck/snapshot_pause.sh <build-dir> [checks per kind] [MiB...]
#   SNAPSHOT_PAUSE_MODES="read" ... : only the read-mostly runs ("write": only the writing ones)
set -euo pipefail
build=$(cd "$1" && pwd)
checks=${2:-5}
shift $(( $# > 1 ? 2 : 1 ))
sizes=("${@:-64 512 2048}")
modes=${SNAPSHOT_PAUSE_MODES:-read write}
bench=$build/tests/bench/heapcheck/heapcheck_snapshot_pause
for mib in ${sizes[*]}; do
  for mode in $modes; do
    for huge in false true; do
      echo "== $mib MiB $mode, TCMALLOC_HUGE_PAGES=$huge (load: $(cut -d' ' -f1-3 /proc/loadavg))"
      TCMALLOC_HUGE_PAGES=$huge HEAPCHECK=local "$bench" "$mib" "$checks" \
        $([[ $mode == write ]] && echo write) 2>/dev/null
    done
  done
done
