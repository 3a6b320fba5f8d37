#!/usr/bin/env bash
# Peak RSS of small allocating programs (small_rss.c: none, n1000, simple, cfrac) under each
# preloaded allocator, side by side: medians of R runs (default 7) of /usr/bin/time's max RSS
# (which also counts /usr/bin/time's own pages, preloaded too, from before the exec) and of the
# program's own VmHWM, in KiB.
# Usage: small_rss.sh <build dir> [runs=7] [name=lib.so ...]  (extra rows, e.g. an older build's
# library for a before/after pair)
set -euo pipefail
build=$1 runs=${2:-7}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/small_rss" "$here/small_rss.c"
source "$here/peer_libs.sh"
peer_libs "$build" "$@"
modes=(none n1000 simple cfrac)
declare -A time_rss own_rss
for ((r = 0; r < runs; r++)); do  # interleaved: every allocator once per round
  for mode in "${modes[@]}"; do
    for i in "${!names[@]}"; do
      [[ -z ${libs[$i]} || -f ${libs[$i]} ]] || continue
      out=$(env ${libs[$i]:+LD_PRELOAD=${libs[$i]}} /usr/bin/time -f 'M %M' "$tmp/small_rss" "$mode" 2>&1)
      time_rss[$mode,$i]+="$(awk '/^M /{print $2}' <<<"$out") "
      own_rss[$mode,$i]+="$(awk '!/^M /{print $1}' <<<"$out") "
    done
  done
done
printf '| allocator |'
for mode in "${modes[@]}"; do printf ' %s: max RSS | %s: own VmHWM |' "$mode" "$mode"; done
printf '\n|---|'
for mode in "${modes[@]}"; do printf -- '---|---|'; done
printf '\n'
for i in "${!names[@]}"; do
  [[ -n ${time_rss[none,$i]:-} ]] || continue
  printf '| %s |' "${names[$i]}"
  for mode in "${modes[@]}"; do
    printf ' %s | %s |' "$(median <<<"${time_rss[$mode,$i]}")" "$(median <<<"${own_rss[$mode,$i]}")"
  done
  printf '\n'
done
