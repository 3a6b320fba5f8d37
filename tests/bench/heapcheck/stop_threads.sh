#!/usr/bin/env bash
# Stop-the-world cost with many threads (many_threads.c): the process's wall and CPU time at
# exit under HEAPCHECK=normal, for threads that take the suspend signal and threads that block
# every signal, with two builds of libheapkit.so side by side (runs interleaved), LeakSanitizer
# (which stops every thread with ptrace) and no checker.
#
#   tests/bench/heapcheck/stop_threads.sh <before/libheapkit.so> <after/libheapkit.so> [threads] [runs]
#
# Prints one line per cell: median wall / median CPU (user+sys) seconds, and the first line of
# the checker's verdict in the last run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=$1
after=$2
threads=${3:-200}
runs=${4:-5}
work=$(mktemp -d /tmp/heapcheck-stop.XXXXXX)
trap 'rm -rf "$work"' EXIT
gcc -O2 -g -o "$work/many_threads" "$here/many_threads.c" -lpthread
gcc -O2 -g -fsanitize=leak -o "$work/many_threads.lsan" "$here/many_threads.c" -lpthread

cells=(plain before after lsan)
run_cell() {  # cell mode
  case $1 in
    plain) "$work/many_threads" "$threads" "$2" ;;
    before) env LD_PRELOAD="$before" HEAPCHECK=normal "$work/many_threads" "$threads" "$2" ;;
    after) env LD_PRELOAD="$after" HEAPCHECK=normal "$work/many_threads" "$threads" "$2" ;;
    lsan) "$work/many_threads.lsan" "$threads" "$2" ;;
  esac
}

for mode in signal blocking; do
  declare -A walls=() cpus=()
  for ((i = 0; i < runs; i++)); do
    for cell in "${cells[@]}"; do
      /usr/bin/time -o "$work/time" -f "%e %U %S" bash -c "$(declare -f run_cell); \
        work=$work threads=$threads before=$before after=$after run_cell $cell $mode" \
        >/dev/null 2>"$work/$cell.err" || true
      read -r w u s < <(tail -n 1 "$work/time")
      walls[$cell]+="$w "
      cpus[$cell]+="$(echo "$u + $s" | bc -l) "
    done
  done
  for cell in "${cells[@]}"; do
    mw=$(printf '%s\n' ${walls[$cell]} | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
    mc=$(printf '%s\n' ${cpus[$cell]} | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
    verdict=$(grep -m1 -E "detected leaks|No leaks found|SUMMARY: LeakSanitizer" "$work/$cell.err" \
      | cut -c1-70 || true)
    printf '%-9s %-7s %s / %s  %s\n' "$mode" "$cell" "$mw" "$mc" "${verdict:-(no leak line)}"
  done
  unset walls cpus
done
