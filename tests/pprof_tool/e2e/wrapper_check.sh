#!/bin/sh
# Allocation wrappers are charged to their callers by default (report/allocation_wrappers.h):
# wrapper_prog.cc's my_xmalloc, called from five functions, is not a row of --top; the five
# callers are, with their exact bytes; the header names the folded wrapper; the helper with one
# caller stays; --keep_allocator_frames shows my_xmalloc with all 6,700,000 bytes.
# Usage: wrapper_check.sh <pprof-tool> <libheapkit.so> <wrapper_prog> <work dir>
set -eu
pprof=$1 lib=$2 prog=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
HEAPPROFILE="$work/prof" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$prog" > /dev/null 2>&1
dump="$work/prof.0001.heap"
fail() { echo "FAIL: $1"; cat "$work/top.txt"; exit 1; }
"$pprof" --top --show_bytes --alloc_space "$prog" "$dump" > "$work/top.txt"
grep -q '^Allocation wrappers charged to their callers: .*my_xmalloc.* (--keep_allocator_frames shows them)$' \
  "$work/top.txt" || fail "the header does not name my_xmalloc as folded"
if grep -q ' my_xmalloc$' "$work/top.txt"; then fail "my_xmalloc is still a row"; fi
for row in "3000000 BuildIndex" "2000000 LoadTable" "1000000 ParseConfig" "500000 CacheResult" \
           "200000 LogMessage" "400000 OneCallerHelper"; do
  bytes=${row%% *} name=${row#* }
  awk -v b="$bytes" -v n="$name" '$1 == b && $NF ~ n"$" {found = 1} END {exit !found}' \
    "$work/top.txt" || fail "no row '$bytes ... $name' (flat)"
done
"$pprof" --top --show_bytes --alloc_space --keep_allocator_frames "$prog" "$dump" > "$work/top.txt"
awk '$1 == 6700000 && $NF ~ /my_xmalloc$/ {found = 1} END {exit !found}' "$work/top.txt" ||
  fail "--keep_allocator_frames: no row '6700000 ... my_xmalloc'"
if grep -q '^Allocation wrappers' "$work/top.txt"; then fail "--keep_allocator_frames still folds"; fi
echo "PASS: my_xmalloc charged to its five callers; shown with --keep_allocator_frames"
