#!/usr/bin/env bash
# Leak-checker benchmark: heapkit HEAPCHECK=normal vs gperftools 2.10 HEAPCHECK=normal
# (LD_PRELOAD libtcmalloc.so.4) vs gcc -fsanitize=leak, plus the uninstrumented program.
#
#   tests/bench/heapcheck/run.sh [build-dir] [runs] [gperftools-runs]
#
# build-dir must hold libheapkit.so (default: ./build); runs = repetitions per cell (default 5,
# the median is reported); gperftools-runs (default 1) for the gperftools cells, which take
# minutes each. Programs are compiled here with g++ -O2 -g into a temporary directory.
# A second table runs the leak-check scenarios of tests/heapcheck (built -O2 against
# gperftools' own <gperftools/heap-checker.h> and -ltcmalloc) under gperftools and compares
# with the exact expected results that heapkit's e2e test asserts. On a loaded machine, ab.sh
# (same directory) compares heapkit, LSan and glibc on one program with the variants interleaved.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../../build}" && pwd)
runs=${2:-5}
gruns=${3:-1}
lib="$build/libheapkit.so"
tcmalloc=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
work=$(mktemp -d /tmp/heapcheck-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
[[ -f "$lib" ]] || { echo "run.sh: $lib not found (build heapkit first)" >&2; exit 1; }

for p in small_leak graph alloc_heavy; do
  g++ -O2 -g -o "$work/$p" "$here/$p.cc"
  g++ -O2 -g -fsanitize=leak -o "$work/$p.lsan" "$here/$p.cc"
done

# "median-wall / median-cpu" seconds over the runs of "$@" (cpu = user+sys, children included,
# the robust number on a shared machine). Exit status ignored: leak checkers exit non-zero.
median() {
  local walls=() cpus=() n=$runs
  if [[ "$*" == *libtcmalloc* ]]; then n=$gruns; fi
  for ((i = 0; i < n; i++)); do
    /usr/bin/time -o "$work/time" -f "%e %U %S" "$@" >/dev/null 2>"$work/stderr" || true
    read -r w u s < <(tail -n 1 "$work/time")
    walls+=("$w")
    cpus+=("$(echo "$u + $s" | bc -l)")
  done
  local mw mc
  mw=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
  mc=$(printf '%s\n' "${cpus[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}')
  echo "$mw / $mc"
}

verdict() {  # first line of the checker's summary from the last run
  grep -m1 -E "detected leaks|No leaks found|SUMMARY: LeakSanitizer|no leaks" "$work/stderr" \
    | cut -c1-90 || echo "(no summary line)"
}

printf '| program | variant | median wall s / cpu s | summary line |\n|---|---|---|---|\n'
for p in small_leak graph; do
  args=()
  t=$(median "$work/$p" "${args[@]}");                               printf '| %s | uninstrumented (glibc) | %s | |\n' "$p" "$t"
  t=$(median env HEAPCHECK=normal HEAP_CHECK_REPORT_CLEAN=true LD_PRELOAD="$lib" HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$p"); printf '| %s | heapkit HEAPCHECK=normal | %s | %s |\n' "$p" "$t" "$(verdict)"
  t=$(median env HEAPCHECK=normal LD_PRELOAD="$tcmalloc" PPROF_PATH=/usr/bin/google-pprof HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$p"); printf '| %s | gperftools 2.10 HEAPCHECK=normal | %s | %s |\n' "$p" "$t" "$(verdict)"
  t=$(median "$work/$p.lsan");                                        printf '| %s | gcc -fsanitize=leak | %s | %s |\n' "$p" "$t" "$(verdict)"
done
p=alloc_heavy
t=$(median "$work/$p");                                               printf '| %s | uninstrumented (glibc) | %s | |\n' "$p" "$t"
t=$(median env LD_PRELOAD="$lib" "$work/$p");                         printf '| %s | heapkit allocator, no check | %s | |\n' "$p" "$t"
t=$(median env HEAPCHECK=normal HEAP_CHECK_REPORT_CLEAN=true LD_PRELOAD="$lib" HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$p"); printf '| %s | heapkit HEAPCHECK=normal | %s | %s |\n' "$p" "$t" "$(verdict)"
t=$(median env HEAPCHECK=normal LD_PRELOAD="$tcmalloc" PPROF_PATH=/usr/bin/google-pprof HEAP_CHECK_DUMP_DIRECTORY="$work" "$work/$p"); printf '| %s | gperftools 2.10 HEAPCHECK=normal | %s | %s |\n' "$p" "$t" "$(verdict)"
t=$(median "$work/$p.lsan");                                          printf '| %s | gcc -fsanitize=leak | %s | %s |\n' "$p" "$t" "$(verdict)"

# ---- scenario exactness under gperftools (heapkit's own results: ctest -R HeapcheckE2E) ----
root=$(cd "$here/../../.." && pwd)
g++ -O2 -g -fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc -fno-builtin-free \
  -o "$work/scen_gperf" "$root/tests/heapcheck/scenarios/scenarios.cc" -ltcmalloc -pthread -ldl
printf '\n| scenario (HEAPCHECK=normal) | expected | gperftools 2.10 | exact? |\n|---|---|---|---|\n'
while read -r name expect; do
  got=$(HEAPCHECK=normal LD_PRELOAD="$tcmalloc" PPROF_PATH=/usr/bin/google-pprof \
        HEAP_CHECK_DUMP_DIRECTORY="$work" timeout 300 "$work/scen_gperf" "$name" 2>&1 >/dev/null \
        | sed -n -E 's/^Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects.*/\1\/\2/p; s/^No leaks found for check "_main_".*/none/p' | head -1 || true)
  [[ -z "$got" ]] && got="(no verdict)"
  ok=no; [[ "$got" == "$expect" ]] && ok=yes
  printf '| %s | %s | %s | %s |\n' "$name" "$expect" "$got" "$ok"
done <<'LIST'
lost_pointer 33/1
cycles 144/3
globals none
tls none
thread_stack none
thread_register none
thread_register_lost 40/1
interior 4096/1
indirect_chain 480/10
xor_hidden 64/1
realloc_memalign_calloc 1833/5
huge 67108864/1
exited_threads 800/50
stl_globals none
many_small 800000/100000
named 11/1
disabler 12/1
ignore_object 17/1
strict none
stale_stack 77/1
busy_threads 21/1
LIST
