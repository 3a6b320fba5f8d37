#!/usr/bin/env bash
# Start-up cost of each allocator preloaded into a short C program (/bin/true): interleaved
# rounds of N spawns each, median and range of the per-spawn mean wall time (µs), median of the
# per-spawn CPU time of the child (user + system, µs: steadier than wall time on a loaded
# machine), and peak RSS (median of 5 runs): /bin/true's max RSS as /usr/bin/time reports it (which
# also counts /usr/bin/time's own pages, preloaded too, from before the exec), and startup_rss's
# own VmHWM with no allocation and after 1000 small allocations and a printf.
# Usage: exec_startup.sh <build dir> [rounds=9] [N=200] [name=lib.so ...]  (extra rows, e.g. an
# older build's library for a before/after pair)
set -euo pipefail
build=$1 rounds=${2:-9} n=${3:-200}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
launcher=$(mktemp -d)/exec_startup
trap 'rm -rf "$(dirname "$launcher")"' EXIT
cc -O2 -o "$launcher" "$here/exec_startup.c"
rss_probe=$(dirname "$launcher")/startup_rss
cc -O2 -o "$rss_probe" "$here/startup_rss.c"
source "$here/peer_libs.sh"
peer_libs "$build" "$@"
declare -A samples cpu_samples
for ((r = 0; r < rounds; r++)); do
  for i in "${!names[@]}"; do
    [[ -z ${libs[$i]} || -f ${libs[$i]} ]] || continue
    read -r wall cpu < <("$launcher" "$n" "${libs[$i]}" /bin/true)
    samples[${names[$i]}]+="$wall "
    cpu_samples[${names[$i]}]+="$cpu "
  done
done
printf '| allocator | µs per spawn (median) | min–max | CPU µs per spawn (median) | max RSS of /bin/true (KiB) | VmHWM, no allocation (KiB) | VmHWM, 1000 allocations (KiB) |\n|---|---|---|---|---|---|---|\n'
for i in "${!names[@]}"; do
  [[ -n ${samples[${names[$i]}]:-} ]] || continue
  read -r med lo hi < <(tr ' ' '\n' <<<"${samples[${names[$i]}]}" | sed '/^$/d' | sort -g |
    awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[1], v[NR]}')
  cpu=$(median <<<"${cpu_samples[${names[$i]}]}")
  rss=$(for k in 1 2 3 4 5; do
          env ${libs[$i]:+LD_PRELOAD=${libs[$i]}} /usr/bin/time -f %M /bin/true 2>&1
        done | tr '\n' ' ' | median)
  hwm() {
    for k in 1 2 3 4 5; do env ${libs[$i]:+LD_PRELOAD=${libs[$i]}} "$rss_probe" "$1"; done |
      tr '\n' ' ' | median
  }
  printf '| %s | %s | %s–%s | %s | %s | %s | %s |\n' "${names[$i]}" "$med" "$lo" "$hi" "$cpu" \
    "$rss" "$(hwm 0)" "$(hwm 1000)"
done
