#!/usr/bin/env bash
# Per-stack cost of the leak checker: binary_tree.cc (2^20 live objects, each allocated from a
# distinct call stack) uninstrumented, under heapkit HEAPCHECK=normal, gcc -fsanitize=leak and
# gperftools 2.10 HEAPCHECK=normal (LD_PRELOAD libtcmalloc.so.4). The variants run interleaved,
# `runs` rounds (gperftools only in the first `gperftools-runs`: it takes a minute a run on a
# loaded machine); each cell is the median wall seconds, cpu (user+sys) seconds and max RSS.
#
#   tests/bench/heapcheck/stacks.sh [build-dir] [runs] [gperftools-runs]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
runs=${2:-5}
gruns=${3:-1}
lib="$build/libheapkit.so"
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
work=$(mktemp -d /tmp/heapcheck-stacks.XXXXXX)
trap 'rm -rf "$work"' EXIT
[[ -f "$lib" ]] || { echo "stacks.sh: $lib not found (build heapkit first)" >&2; exit 1; }
g++ -O2 -g -o "$work/tree" "$here/binary_tree.cc"
g++ -O2 -g -fsanitize=leak -o "$work/tree.lsan" "$here/binary_tree.cc"

names=(plain heapkit lsan gperftools)
command_for() {  # sets cmd to the command line of variant $1
  case $1 in
    plain) cmd=("$work/tree") ;;
    heapkit) cmd=(env HEAPCHECK=normal LD_PRELOAD="$lib" "$work/tree") ;;
    lsan) cmd=("$work/tree.lsan") ;;
    gperftools) cmd=(env HEAPCHECK=normal LD_PRELOAD="$tcmalloc" PPROF_PATH=/usr/bin/google-pprof
                     HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/tree") ;;
  esac
}
for ((i = 0; i < runs; i++)); do
  for v in "${names[@]}"; do
    [[ $v == gperftools && (! -f $tcmalloc || $i -ge $gruns) ]] && continue
    command_for "$v"
    /usr/bin/time -o "$work/t" -f '%e %U %S %M' "${cmd[@]}" >/dev/null 2>&1 || true
    read -r w u s m < <(tail -n 1 "$work/t")
    echo "$w $(echo "$u + $s" | bc -l) $m" >>"$work/$v"
  done
done
med() { sort -g | awk '{a[NR]=$1} END {printf "%s", a[int((NR+1)/2)]}'; }
printf '| variant | median wall s | median cpu s | median max RSS MB |\n|---|---|---|---|\n'
for v in "${names[@]}"; do
  [[ -f $work/$v ]] || continue
  w=$(cut -d' ' -f1 "$work/$v" | med); c=$(cut -d' ' -f2 "$work/$v" | med)
  m=$(cut -d' ' -f3 "$work/$v" | med)
  printf '| %s | %.2f | %.2f | %d |\n' "$v" "$w" "$c" $((m / 1024))
done
