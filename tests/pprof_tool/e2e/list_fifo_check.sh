#!/bin/sh
# pprof-tool --list reads the source files the debug info names. One that is not a regular file
# (here a FIFO that nobody writes, which used to block the report forever) is skipped with one
# line naming the cause, and the report still finishes.
# Usage: list_fifo_check.sh <pprof-tool> <libheapkit.so> <c++ compiler> <work dir>
set -eu
pprof=$1 lib=$2 cxx=$3 work=$4
rm -rf "$work" && mkdir -p "$work/src"
cat > "$work/src/fifo_prog.cc" <<'PROG'
#include <cstdlib>
#include <cstring>
void* volatile keep;
__attribute__((noinline)) void FifoListAlloc() {
  keep = std::malloc(1 << 20);
  std::memset(keep, 1, 1 << 20);
}
int main() { FifoListAlloc(); }
PROG
"$cxx" -O0 -g -fno-omit-frame-pointer "$work/src/fifo_prog.cc" -o "$work/fifo_prog"
HEAPPROFILE="$work/prof" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$work/fifo_prog"
profile=$(ls "$work"/prof.*.heap | sort | tail -n 1)
status=0

# The source as a regular file: its lines are listed.
timeout 60 "$pprof" --list=FifoListAlloc "$work/fifo_prog" "$profile" > "$work/regular.txt" 2>&1 || true
if ! grep -q 'keep = std::malloc' "$work/regular.txt"; then
  echo "FAIL: --list with the source in place does not show it"
  cat "$work/regular.txt"
  status=1
fi

# The source replaced by a FIFO.
rm "$work/src/fifo_prog.cc"
mkfifo "$work/src/fifo_prog.cc"
rc=0
timeout 20 "$pprof" --list=FifoListAlloc "$work/fifo_prog" "$profile" > "$work/fifo.txt" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  echo "FAIL: --list with a FIFO as source exited $rc (124: hung)"
  status=1
fi
if ! grep -q 'ROUTINE .*FifoListAlloc' "$work/fifo.txt" ||
   ! grep -q '(source not available: not a regular file)' "$work/fifo.txt"; then
  echo "FAIL: --list with a FIFO as source: no routine, or no line naming the cause"
  status=1
fi
cat "$work/fifo.txt"
[ $status -eq 0 ] && echo "PASS"
exit $status
