#!/usr/bin/env bash
# Interleaved before/after run of the checker on one benchmark program: heapkit HEAPCHECK=normal
# from two builds (e.g. main's and a branch's), gcc -fsanitize=leak and the uninstrumented
# program, alternating within each round so that load changes on a shared machine hit all alike.
#
#   tests/bench/heapcheck/layout_ab.sh <before-build-dir> <after-build-dir> <rounds> <program>
#
# program: graph, alloc_heavy, small_leak or binary_tree (this directory). Prints, per variant,
# the median wall and CPU (user+sys) seconds and the median max RSS in MiB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=$(cd "$1" && pwd)/libheapkit.so
after=$(cd "$2" && pwd)/libheapkit.so
rounds=$3
prog=$4
for lib in "$before" "$after"; do
  [[ -f "$lib" ]] || { echo "layout_ab.sh: $lib not found (build heapkit first)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/heapcheck-layout-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
g++ -O2 -g -o "$work/$prog" "$here/$prog.cc"
g++ -O2 -g -fsanitize=leak -o "$work/$prog.lsan" "$here/$prog.cc"
one() {  # variant, command...
  local v=$1
  shift
  /usr/bin/time -o "$work/t" -f "%e %U %S %M" "$@" >/dev/null 2>&1 || true
  echo "$v $(tail -n 1 "$work/t")" >>"$work/all"
}
for ((i = 0; i < rounds; i++)); do
  one before env HEAPCHECK=normal LD_PRELOAD="$before" HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$prog"
  one after env HEAPCHECK=normal LD_PRELOAD="$after" HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$prog"
  one lsan "$work/$prog.lsan"
  one glibc "$work/$prog"
done
med() { sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
printf '| %s | variant | wall s | cpu s | max RSS MiB |\n' "$prog"
for v in before after lsan glibc; do
  w=$(awk -v v=$v '$1 == v {print $2}' "$work/all" | med)
  c=$(awk -v v=$v '$1 == v {print $3 + $4}' "$work/all" | med)
  m=$(awk -v v=$v '$1 == v {print $5 / 1024}' "$work/all" | med)
  printf '| | %s | %s | %s | %s |\n' "$v" "$w" "$c" "$m"
done
