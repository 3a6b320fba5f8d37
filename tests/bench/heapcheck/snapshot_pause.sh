#!/usr/bin/env bash
# The pause of a forked-snapshot check against the stop-the-world check (snapshot_pause.cc):
# 64 MiB, 512 MiB and 2 GiB live pointer-dense heaps, 8 busy threads, the two kinds alternated
# in each run; each run with the heap in small pages and in transparent huge pages
# (TCMALLOC_HUGE_PAGES=true), one after the other (A/B pairs on a shared machine); then the same
# with the threads writing into the heap (the copy's extra memory). The summary lines of every
# run are repeated at the end.
#
#   tests/bench/heapcheck/snapshot_pause.sh <build-dir> [checks per kind] [MiB...]
#   SNAPSHOT_PAUSE_MODES="read" ... : only the read-mostly runs ("write": only the writing ones)
#   SNAPSHOT_PAUSE_PAGES="true" ... : only the huge-page runs ("false": only the small pages)
#   SNAPSHOT_PAUSE_STW_CHECKS=N ... : N stop-the-world checks per run (default: as many as
#                                     snapshot checks; 0: none, for a quick look at 2 GiB)
#   SNAPSHOT_PAUSE_BASELINE=<build-dir> ... : each run also with that build's bench, right after
#                                     (interleaved A/B; its summary lines are marked "baseline")
set -euo pipefail
build=$(cd "$1" && pwd)
checks=${2:-5}
shift $(( $# > 1 ? 2 : 1 ))
sizes=("${@:-64 512 2048}")
modes=${SNAPSHOT_PAUSE_MODES:-read write}
pages=${SNAPSHOT_PAUSE_PAGES:-false true}
builds=("$build")
[[ -n ${SNAPSHOT_PAUSE_BASELINE:-} ]] && builds+=("$(cd "$SNAPSHOT_PAUSE_BASELINE" && pwd)")
summaries=$(mktemp "${TMPDIR:-/tmp}/heapkit-snapshot-pause.XXXXXX")
run=$(mktemp "${TMPDIR:-/tmp}/heapkit-snapshot-pause.XXXXXX")
trap 'rm -f "$summaries" "$run"' EXIT
for mib in ${sizes[*]}; do
  for mode in $modes; do
    for huge in $pages; do
      for b in "${builds[@]}"; do
        label=$([[ $b == "$build" ]] && echo "" || echo " baseline $b")
        echo "== $mib MiB $mode, TCMALLOC_HUGE_PAGES=$huge$label (load: $(cut -d' ' -f1-3 /proc/loadavg))"
        TCMALLOC_HUGE_PAGES=$huge HEAPCHECK=local \
          "$b/tests/bench/heapcheck/heapcheck_snapshot_pause" "$mib" "$checks" \
          $([[ $mode == write ]] && echo write) 2>/dev/null | tee "$run"
        sed -n "s|^summary|summary${label:+ (baseline)}|p" "$run" >>"$summaries"
      done
    done
  done
done
echo "== every summary (load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$summaries"
