#!/usr/bin/env bash
# libheapkit.so (allocator + profiler + leak checker) depends on libc alone, and a C program that
# preloads it with nothing enabled loads no other library: libunwind, libdw and the C++ runtime
# are in libheapkit_ondemand.so, loaded only when the profiler or the checker starts
# (profiler/on_demand/on_demand_library.h). Then it is loaded from libheapkit.so's directory and does its
# work (a symbolized leak report, a heap profile); without it, one line and bare addresses.
# Usage: check_full_needs_only_libc.sh <libheapkit.so> <leak_from_c program>
set -euo pipefail
lib=$1 prog=$2
dir=$(cd "$(dirname "$lib")" && pwd)
work=$(mktemp -d /tmp/heapkit-full-needs.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[[ $needed == "libc.so.6 " ]] || fail "$lib needs: $needed(want libc.so.6 only)"
strong=$(nm -D --undefined-only "$lib" | awk '$1 == "U" && $2 !~ /@GLIBC_/ {print $2}' |
         tr '\n' ' ')
[[ -z $strong ]] || fail "$lib has strong references outside libc: $strong"

# loaded <env...>: base names of the objects whose initialisers ran, sorted.
# (The leak makes the checked runs exit 1: their status is checked below, not here.)
loaded() {
  { env "$@" LD_PRELOAD="$lib" LD_DEBUG=libs "$prog" 2>&1 >/dev/null || true; } |
    sed -n 's/.*calling init: //p' | xargs -rn1 basename | sort | tr '\n' ' '
}
plain=$(loaded HEAPKIT_UNUSED=1)
for l in $plain; do
  case $l in libc.so.6|ld-linux-x86-64.so.2|libheapkit.so*) ;;
    *) fail "preloading $lib into a C program with nothing enabled loaded $l" ;;
  esac
done

with_check=$(loaded HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work")
[[ " $with_check " == *" libheapkit_ondemand.so "* ]] ||
  fail "HEAPCHECK=normal did not load libheapkit_ondemand.so (loaded: $with_check)"
# normal: the check before global destructors; draconian: after them, from libheapkit.so's
# destructor, when the on-demand library and the C++ runtime it brought are already finalised.
for mode in normal draconian; do
  status=0
  report=$(HEAPCHECK=$mode HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$lib" "$prog" 2>&1) ||
    status=$?
  [[ $status == 1 ]] || fail "HEAPCHECK=$mode: exit status $status, want 1: $report"
  grep -q "Leak of 4242 bytes in 1 objects" <<<"$report" || fail "$mode: no leak line: $report"
  grep -Eq "@ [0-9a-f]+ main .*leak_from_c\.c:[0-9]+" <<<"$report" ||
    fail "$mode: the report is not symbolized (no 'main leak_from_c.c:N' frame): $report"
done

with_profile=$(loaded HEAPPROFILE="$work/prof")
[[ " $with_profile " == *" libheapkit_ondemand.so "* ]] ||
  fail "HEAPPROFILE did not load libheapkit_ondemand.so (loaded: $with_profile)"
ls "$work"/prof*.heap >/dev/null 2>&1 || fail "HEAPPROFILE wrote no profile"

# libheapkit.so alone, its on-demand library missing: one line, the checker still works.
mkdir "$work/alone"
cp "$dir/$(basename "$(readlink -f "$lib")")" "$work/alone/libheapkit.so"
status=0
report=$(HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$work/alone/libheapkit.so" \
  "$prog" 2>&1) || status=$?
[[ $status == 1 ]] || fail "without libheapkit_ondemand.so: exit status $status, want 1: $report"
[[ $(grep -c "^heapkit: cannot load the on-demand library: $work/alone/libheapkit_ondemand.so" \
    <<<"$report") == 1 ]] ||
  fail "without libheapkit_ondemand.so: want one 'cannot load' line: $report"
grep -q "Leak of 4242 bytes in 1 objects" <<<"$report" ||
  fail "without libheapkit_ondemand.so: no leak line: $report"
echo "ok: needs libc.so.6 only; nothing enabled loads: $plain; HEAPCHECK loads: $with_check"
