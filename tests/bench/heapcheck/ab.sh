#!/usr/bin/env bash
# Interleaved A/B run of one benchmark program: heapkit HEAPCHECK=normal, gcc -fsanitize=leak
# and the uninstrumented program, alternating within each round, so that load changes on a
# shared machine hit all three alike (run.sh measures cells one after another).
#
#   tests/bench/heapcheck/ab.sh <build-dir> <rounds> <graph|alloc_heavy|small_leak>
#
# Prints the median wall and CPU (user+sys) seconds of each variant.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
rounds=$2
prog=$3
lib="$build/libheapkit.so"
[[ -f "$lib" ]] || { echo "ab.sh: $lib not found (build heapkit first)" >&2; exit 1; }
work=$(mktemp -d /tmp/heapcheck-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
g++ -O2 -g -o "$work/$prog" "$here/$prog.cc"
g++ -O2 -g -fsanitize=leak -o "$work/$prog.lsan" "$here/$prog.cc"
one() {  # variant, command...
  local v=$1
  shift
  /usr/bin/time -o "$work/t" -f "%e %U %S" "$@" >/dev/null 2>&1 || true
  echo "$v $(tail -n 1 "$work/t")" >>"$work/all"
}
for ((i = 0; i < rounds; i++)); do
  one heapkit env HEAPCHECK=normal LD_PRELOAD="$lib" HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$prog"
  one lsan "$work/$prog.lsan"
  one glibc "$work/$prog"
done
for v in heapkit lsan glibc; do
  w=$(awk -v v=$v '$1 == v {print $2}' "$work/all" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
  c=$(awk -v v=$v '$1 == v {print $3 + $4}' "$work/all" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
  echo "$prog $v: median wall $w s, cpu $c s ($rounds rounds)"
done
