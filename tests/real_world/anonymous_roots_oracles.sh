#!/usr/bin/env bash
# heapkit's leak totals with and without anonymous mappings as roots
# (HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS) against valgrind memcheck (definitely + indirectly lost),
# on programs whose pointers live in their own allocators' arenas:
#   anonymous_roots_oracles.sh <libheapkit.so> [--no-valgrind]
# Cases: a python3 script (pymalloc), `python3 -m http.server` stopped with SIGTERM
# (HEAP_CHECK_AT_SIGNAL=TERM), gdb -batch running python, cc1plus on a 349-line C++ file
# (GCC's GC heap); CASES="gdb cc1plus" runs some. One line per case and tool; nothing is
# asserted (the figures go to RESULTS.md). valgrind runs with the same environment variables as
# heapkit. heapkit's reports go to files (HEAP_CHECK_REPORT_PATH), never to a child's stderr: gdb
# runs `iconv -l` with stderr into the pipe it reads and keeps (leaks) a string per word it
# reads, so a checked child's report lines would be gdb's leaks (valgrind does not trace
# children).
set -uo pipefail
lib=$(realpath "$1") use_valgrind=1
[[ ${2:-} == --no-valgrind ]] && use_valgrind=0
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/heapkit-anon-oracles.XXXXXX)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-/usr/bin/python3}  # the interpreter itself, not a wrapper script (pyenv shims)
root=$(cd "$here/../.." && pwd)
# cc1plus as the driver runs it (g++ -###) on the file real-world's gcc workload compiles first
# (349 lines, the standard library's headers).
source_file=${CXX_SOURCE:-$root/tests/stress/workloads.cc}
cc1plus_line=$(g++ -### -O2 -std=c++20 -c "$source_file" -o "$work/out.o" 2>&1 | grep -m1 '/cc1plus ')
script='import json, collections
d = collections.OrderedDict((str(i), {"v": [i] * 8, "s": "x" * (i % 300)}) for i in range(20000))
print(len(json.dumps(d)))'

# Runs case $1 (python | http | gdb | cc1plus) with the command prefix in the other arguments.
run_case() {
  local name=$1
  shift
  case $name in
    python) "$@" "$python" -c "$script" >/dev/null ;;
    gdb) "$@" gdb -nx -batch -ex 'python import json; print(json.dumps(list(range(10))))' >/dev/null ;;
    cc1plus) eval "$* $cc1plus_line" >/dev/null ;;
    http)
      "$@" "$python" -m http.server --bind 127.0.0.1 0 >/dev/null 2>"$work/http.err" &
      local pid=$! port=
      for _ in $(seq 200); do
        port=$(sed -nE 's/.*port ([0-9]+).*/\1/p' "$work/http.err" | head -1)
        [[ -n $port ]] && break
        sleep 0.1
      done
      [[ -n $port ]] && curl -s -o /dev/null "http://127.0.0.1:$port/" || true
      sleep 0.5
      kill -TERM "$pid"
      wait "$pid"
      cat "$work/http.err" >&2
      ;;
  esac
}

settings() {  # mode, scan
  echo HEAPCHECK="$1" HEAP_CHECK_MAX_LEAKS=1 HEAP_CHECK_AT_SIGNAL=TERM HEAP_CHECK_REPORT_CLEAN=true \
    PERFTOOLS_VERBOSE=1 HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS="$2" HEAP_CHECK_DUMP_DIRECTORY="$work" \
    HEAP_CHECK_REPORT_PATH="$work/report" PYTHONUNBUFFERED=1
}

heapkit() {  # case, scan (true|false), mode (normal: before global destructors; strict: after,
             # as valgrind looks)
  rm -f "$work"/report.*
  run_case "$1" env LD_PRELOAD="$lib" $(settings "$3" "$2") 2>/dev/null
  # The program's own report is the last written: its children (gdb's iconv) exit before it.
  cp "$(ls -t "$work"/report.* | head -1)" "$work/hk"
  local total scanned
  total=$(sed -nE 's/^Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects$/\1 B in \2 objects/p' "$work/hk" | tail -1)
  grep -q '^No leaks found for check "_main_"' "$work/hk" && total="0 B (no leaks found)"
  scanned=$(sed -nE 's/.*: ([0-9]+) bytes of anonymous memory scanned as roots in ([0-9]+) mappings.*/\1 B of anonymous memory in \2 mappings scanned/p' "$work/hk" | tail -1)
  stop=$(sed -nE 's/.*threads stopped .* for ([0-9]+) us; the check took.*/stopped \1 us/p' "$work/hk" | tail -1)
  printf '%-8s heapkit %-6s (scan anonymous %-5s) %s%s; %s\n' "$1" "$3" "$2" "${total:-?}" "${scanned:+; $scanned}" "${stop:-?}"
}

valgrind_case() {
  run_case "$1" env $(settings strict true) valgrind --leak-check=full --log-file="$work/vg" 2>/dev/null
  num() { sed -nE "s/^==[0-9]+== +$1: ([0-9,]+) bytes in ([0-9,]+) blocks$/\\1 \\2/p" "$work/vg" | tr -d , | tail -1; }
  read -r d db < <(num 'definitely lost')
  read -r i ib < <(num 'indirectly lost')
  read -r p pb < <(num 'possibly lost')
  printf '%-8s valgrind  definitely %s B in %s, indirectly %s B in %s (sum %s B), possibly %s B in %s\n' \
    "$1" "${d:-0}" "${db:-0}" "${i:-0}" "${ib:-0}" $(( ${d:-0} + ${i:-0} )) "${p:-0}" "${pb:-0}"
}

for c in ${CASES:-python http gdb cc1plus}; do
  heapkit "$c" true normal
  heapkit "$c" false normal
  heapkit "$c" true strict
  heapkit "$c" false strict
  [[ $use_valgrind == 1 ]] && command -v valgrind >/dev/null && valgrind_case "$c"
done
