#!/usr/bin/env bash
# The leak checker's cost on allocation-heavy C++ with varied stacks, where the stack capture is
# most of it: cxx_alloc.cc (built -O2, no frame pointers) and Debian's cppcheck -j1 on a source
# tree, each uninstrumented, under HEAPCHECK=normal with two libheapkit.so builds (before and
# after a change) and under LeakSanitizer (gcc -fsanitize=leak for cxx_alloc, LD_PRELOAD of
# liblsan.so for cppcheck: its default fast unwinder gives one-frame stacks on code without
# frame pointers; lsan-full adds fast_unwind_on_malloc=0, full stacks, in the first
# LSAN_FULL_ROUNDS rounds, default 1: it takes tens of seconds). The variants alternate within
# every round, so that a load swing on a shared machine hits all alike; cells are medians of wall
# and CPU (user + sys) seconds, n says of how many runs, and the last column their exit statuses.
#
#   [LSAN_FULL_ROUNDS=n] tests/bench/heapcheck/capture_ab.sh <before-lib> <after-lib> <rounds> \
#       [cxx-rounds] [tree]
#
# before-lib "none" leaves the before variant out (one library against LSan).
# tree: the sources cppcheck checks (default: Debian's nettle-dev examples, 21 files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=none
[[ $1 == none ]] || before=$(realpath "$1")
after=$(realpath "$2")
rounds=$3
cxx_rounds=${4:-40}
tree=${5:-/usr/share/doc/nettle-dev/examples}
lsan_full_rounds=${LSAN_FULL_ROUNDS:-1}
lsan=$(gcc -print-file-name=liblsan.so)
for f in $([[ $before == none ]] || echo "$before") "$after" "$lsan" /usr/bin/cppcheck; do
  [[ -e $f ]] || { echo "capture_ab.sh: $f not found" >&2; exit 1; }
done
work=$(mktemp -d /tmp/heapcheck-capture.XXXXXX)
trap 'rm -rf "$work"' EXIT
g++ -O2 -g -o "$work/cxx_alloc" "$here/cxx_alloc.cc"
g++ -O2 -g -fsanitize=leak -o "$work/cxx_alloc.lsan" "$here/cxx_alloc.cc"
cp -r "$tree" "$work/tree"

# Sets cmd to the command line of variant $2 of program $1.
command_for() {
  local hc=(env HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work")
  case $1 in
    cxx)
      case $2 in
        plain) cmd=("$work/cxx_alloc" "$cxx_rounds") ;;
        before) cmd=("${hc[@]}" LD_PRELOAD="$before" "$work/cxx_alloc" "$cxx_rounds") ;;
        after) cmd=("${hc[@]}" LD_PRELOAD="$after" "$work/cxx_alloc" "$cxx_rounds") ;;
        lsan) cmd=("$work/cxx_alloc.lsan" "$cxx_rounds") ;;
        lsan-full) cmd=(env LSAN_OPTIONS=fast_unwind_on_malloc=0 "$work/cxx_alloc.lsan"
                        "$cxx_rounds") ;;
      esac ;;
    cppcheck)
      local run=(/usr/bin/cppcheck -j1 -q "$work/tree")
      case $2 in
        plain) cmd=("${run[@]}") ;;
        before) cmd=("${hc[@]}" LD_PRELOAD="$before" "${run[@]}") ;;
        after) cmd=("${hc[@]}" LD_PRELOAD="$after" "${run[@]}") ;;
        lsan) cmd=(env LD_PRELOAD="$lsan" "${run[@]}") ;;
        lsan-full) cmd=(env LD_PRELOAD="$lsan" LSAN_OPTIONS=fast_unwind_on_malloc=0 "${run[@]}") ;;
      esac ;;
  esac
}

variants=(plain before after lsan lsan-full)
[[ $before == none ]] && variants=(plain after lsan lsan-full)
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((i = 0; i < rounds; i++)); do
  for prog in cxx cppcheck; do
    for v in "${variants[@]}"; do
      [[ $v == lsan-full && $i -ge $lsan_full_rounds ]] && continue
      command_for "$prog" "$v"
      status=0
      /usr/bin/time -o "$work/t" -f '%e %U %S' "${cmd[@]}" >/dev/null 2>&1 || status=$?
      read -r w u s < <(tail -n 1 "$work/t")
      echo "$w $(echo "$u + $s" | bc -l) $status" >>"$work/$prog.$v"
    done
  done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
med() { sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
# exit statuses: each distinct one with its count (a leak check's report exits 1; a crash or
# a timeout shows here, and its times are not the variant's).
printf '| program | variant | n | median wall s | median CPU s | CPU ÷ plain | exit statuses |\n'
printf '|---|---|---:|---:|---:|---:|---|\n'
for prog in cxx cppcheck; do
  base=$(cut -d' ' -f2 "$work/$prog.plain" | med)
  for v in "${variants[@]}"; do
    [[ -e $work/$prog.$v ]] || continue  # lsan-full with LSAN_FULL_ROUNDS=0
    w=$(cut -d' ' -f1 "$work/$prog.$v" | med)
    c=$(cut -d' ' -f2 "$work/$prog.$v" | med)
    statuses=$(cut -d' ' -f3 "$work/$prog.$v" | sort -n | uniq -c |
      awk '{printf "%s%s×%s", sep, $2, $1; sep=", "}')
    ratio=$([[ $base == 0.00 ]] && echo 0 || echo "$c / $base" | bc -l)
    printf '| %s | %s | %s | %s | %s | %.2f | %s |\n' "$prog" "$v" "$(wc -l <"$work/$prog.$v")" \
      "$w" "$c" "$ratio" "$statuses"
  done
done
