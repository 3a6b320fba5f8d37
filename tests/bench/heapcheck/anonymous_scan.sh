#!/usr/bin/env bash
# What scanning anonymous memory as roots costs a check's stop (anonymous_scan.cc): the stop's
# length ("threads stopped ... for N us; the check took ...", PERFTOOLS_VERBOSE=1) with and without
# HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS, interleaved, median of `runs`, for each size and content.
#
#   tests/bench/heapcheck/anonymous_scan.sh [build-dir] [runs] [MiB...]
#
# build-dir holds libheapkit.so (default: build); runs default 5; sizes default 256 1024 2048.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-5}
shift 2 || shift $#
sizes=("${@:-256 1024 2048}")
work=$(mktemp -d /tmp/heapcheck-anon.XXXXXX)
trap 'rm -rf "$work"' EXIT
g++ -O2 -o "$work/anonymous_scan" "$here/anonymous_scan.cc"
stop_us() {  # scan, MiB, words
  HEAPCHECK=normal PERFTOOLS_VERBOSE=1 HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=$1 \
    LD_PRELOAD="$build/libheapkit.so" "$work/anonymous_scan" "$2" "$3" 2>&1 >/dev/null |
    sed -nE 's/.*threads stopped .* for ([0-9]+) us; the check took.*/\1/p' || true
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '| MiB | words | stop, scan on (us) | stop, scan off (us) | added ms per GiB |\n|---|---|---|---|---|\n'
for mib in ${sizes[*]}; do
  for words in small heap reserved; do
    on=() off=()
    for _ in $(seq "$runs"); do
      on+=("$(stop_us true "$mib" "$words")")
      off+=("$(stop_us false "$mib" "$words")")
    done
    m_on=$(printf '%s\n' "${on[@]}" | median) m_off=$(printf '%s\n' "${off[@]}" | median)
    printf '| %s | %s | %s | %s | %s |\n' "$mib" "$words" "$m_on" "$m_off" \
      "$(awk -v a="$m_on" -v b="$m_off" -v m="$mib" 'BEGIN { printf "%.1f", (a - b) / 1000 / (m / 1024) }')"
  done
done
