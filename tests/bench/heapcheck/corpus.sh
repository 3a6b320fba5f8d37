#!/usr/bin/env bash
# Corpus benchmark: many small programs, leaking and not (corpus.cc, one case per process),
# under heapkit HEAPCHECK=normal and under gcc -fsanitize=leak, interleaved case by case in
# every round so that load swings hit both alike. Reports, per variant, the median over the
# rounds of the total wall time of all leaking cases and of all clean cases, and the median
# task time per leaking case (sum over cases of each case's median wall seconds).
#
#   tests/bench/heapcheck/corpus.sh <build-dir> [rounds] [opt-flags]
#
# opt-flags (default "-O2 -g"): how corpus.cc is compiled for both variants.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
rounds=${2:-7}
flags=${3:--O2 -g}
lib="$build/libheapkit.so"
[[ -f "$lib" ]] || { echo "corpus.sh: $lib not found (build heapkit first)" >&2; exit 1; }
work=$(mktemp -d /tmp/heapcheck-corpus.XXXXXX)
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086
g++ $flags -pthread -o "$work/corpus" "$here/corpus.cc"
# shellcheck disable=SC2086
g++ $flags -pthread -fsanitize=leak -o "$work/corpus.lsan" "$here/corpus.cc"
mapfile -t cases < <("$work/corpus" list)

now() { date +%s.%N; }
for ((i = 0; i < rounds; i++)); do
  for c in "${cases[@]}"; do
    read -r name kind <<<"$c"
    t0=$(now)
    env HEAPCHECK=normal LD_PRELOAD="$lib" HEAP_CHECK_DUMP_DIRECTORY="$work" \
      "$work/corpus" "$name" >/dev/null 2>"$work/heapkit.err" || true
    t1=$(now)
    "$work/corpus.lsan" "$name" >/dev/null 2>"$work/lsan.err" || true
    t2=$(now)
    # Both checkers must agree on which cases leak (the corpus is the same program).
    hk=clean; grep -q "detected leaks" "$work/heapkit.err" && hk=leak
    ls=clean; grep -q "LeakSanitizer: detected memory leaks" "$work/lsan.err" && ls=leak
    if [[ $hk != "$kind" || $ls != "$kind" ]]; then
      echo "corpus.sh: case $name: expected $kind, heapkit says $hk, LSan says $ls" >&2
      exit 1
    fi
    echo "$i $name $kind heapkit $(echo "$t1 - $t0" | bc -l)" >>"$work/all"
    echo "$i $name $kind lsan $(echo "$t2 - $t1" | bc -l)" >>"$work/all"
  done
done
med() { sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'; }
nleak=$(printf '%s\n' "${cases[@]}" | grep -c ' leak$')
nclean=$(printf '%s\n' "${cases[@]}" | grep -c ' clean$')
echo "corpus: $nleak leaking + $nclean clean cases, $rounds rounds, compiled $flags"
for v in heapkit lsan; do
  for k in leak clean; do
    # Total of one round, median over rounds.
    tot=$(awk -v v=$v -v k=$k '$3 == k && $4 == v {s[$1] += $5} END {for (r in s) print s[r]}' \
          "$work/all" | med)
    echo "$v $k: median round total $tot s"
  done
done
for v in heapkit lsan; do
  per=$(awk -v v=$v '$3 == "leak" && $4 == v {print $5}' "$work/all" | med)
  echo "$v: median wall per leaking run $per s"
done
