#!/usr/bin/env bash
# Corpus benchmark: many small programs, leaking and not (corpus.cc, one case per process),
# under heapkit HEAPCHECK=normal and under gcc -fsanitize=leak, interleaved case by case in
# every round so that load swings hit both alike. Reports, per variant, the median over the
# rounds of the total wall and CPU (user+sys) seconds of all leaking cases and of all clean
# cases, and the median wall / CPU seconds of one leaking run.
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

timed() {  # output file, command...: "wall cpu" seconds into $work/t
  local err=$1
  shift
  /usr/bin/time -o "$work/t" -f "%e %U %S" "$@" >/dev/null 2>"$err" || true
  read -r w u s < <(tail -n 1 "$work/t")
  echo "$w $(echo "$u + $s" | bc -l)"
}
for ((i = 0; i < rounds; i++)); do
  for c in "${cases[@]}"; do
    read -r name kind <<<"$c"
    hk_t=$(timed "$work/heapkit.err" env HEAPCHECK=normal LD_PRELOAD="$lib" \
             HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/corpus" "$name")
    ls_t=$(timed "$work/lsan.err" "$work/corpus.lsan" "$name")
    # Both checkers must agree on which cases leak (the corpus is the same program).
    hk=clean; grep -q "detected leaks" "$work/heapkit.err" && hk=leak
    ls=clean; grep -q "LeakSanitizer: detected memory leaks" "$work/lsan.err" && ls=leak
    if [[ $hk != "$kind" || $ls != "$kind" ]]; then
      echo "corpus.sh: case $name: expected $kind, heapkit says $hk, LSan says $ls" >&2
      exit 1
    fi
    echo "$i $name $kind heapkit $hk_t" >>"$work/all"
    echo "$i $name $kind lsan $ls_t" >>"$work/all"
  done
done
med() { sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}'; }
nleak=$(printf '%s\n' "${cases[@]}" | grep -c ' leak$')
nclean=$(printf '%s\n' "${cases[@]}" | grep -c ' clean$')
echo "corpus: $nleak leaking + $nclean clean cases, $rounds rounds, compiled $flags"
for v in heapkit lsan; do
  for k in leak clean; do
    # Totals of one round (wall, cpu), median over rounds.
    w=$(awk -v v=$v -v k=$k '$3 == k && $4 == v {s[$1] += $5} END {for (r in s) print s[r]}' \
        "$work/all" | med)
    c=$(awk -v v=$v -v k=$k '$3 == k && $4 == v {s[$1] += $6} END {for (r in s) print s[r]}' \
        "$work/all" | med)
    echo "$v $k: median round total wall $w s, cpu $c s"
  done
done
for v in heapkit lsan; do
  w=$(awk -v v=$v '$3 == "leak" && $4 == v {print $5}' "$work/all" | med)
  c=$(awk -v v=$v '$3 == "leak" && $4 == v {print $6}' "$work/all" | med)
  echo "$v: one leaking run, median wall $w s, cpu $c s"
done
