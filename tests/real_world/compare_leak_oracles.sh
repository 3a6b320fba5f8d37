#!/usr/bin/env bash
# Compares heapkit's leak report with LeakSanitizer's and valgrind memcheck's on known_leaks.c.
#   compare_leak_oracles.sh <known_leaks> <known_leaks_lsan|-> <libheapkit.so> [--no-valgrind]
# Asserts: heapkit's total (direct + indirect) = LSan's SUMMARY total = valgrind's
# "definitely lost" + "indirectly lost", in bytes and objects (2152 B in 33 objects by
# construction); heapkit's direct bytes = valgrind's "definitely lost" bytes; the 300 B block held
# through an interior pointer is not a leak for heapkit (valgrind: "possibly lost").
# Prints one line per oracle and "PASS"/"FAIL: ...".
set -uo pipefail
prog=$(realpath "$1") lsan_prog=$2 lib=$(realpath "$3") use_valgrind=1
[[ ${4:-} == --no-valgrind ]] && use_valgrind=0
work=$(mktemp -d /tmp/heapkit-oracles.XXXXXX)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
want_bytes=2152 want_objects=33

timeout 60 env LD_PRELOAD="$lib" HEAPCHECK=normal HEAP_CHECK_MAX_LEAKS=0 \
  HEAP_CHECK_DUMP_DIRECTORY="$work" "$prog" 2>"$work/hk"
hk_rc=$?
read -r hk_bytes hk_objects < <(sed -nE 's/^Leak check _main_ detected leaks of ([0-9]+) bytes in ([0-9]+) objects$/\1 \2/p' "$work/hk")
hk_direct=$(awk '/^Leak of .*\(direct leak\)$/ { s += $3 } END { print s + 0 }' "$work/hk")
hk_indirect=$(awk '/^Leak of .*\(indirect leak\)$/ { s += $3 } END { print s + 0 }' "$work/hk")
echo "heapkit:  exit $hk_rc, ${hk_bytes:-?} B in ${hk_objects:-?} objects (direct $hk_direct B, indirect $hk_indirect B)"
[[ $hk_rc == 1 ]] || fail "heapkit exit status $hk_rc, want 1 (leaks)"
[[ ${hk_bytes:-} == "$want_bytes" && ${hk_objects:-} == "$want_objects" ]] ||
  fail "heapkit total ${hk_bytes:-?} B in ${hk_objects:-?} objects, want $want_bytes in $want_objects"
(( hk_direct + hk_indirect == want_bytes )) || fail "heapkit direct + indirect = $((hk_direct + hk_indirect))"
# Run with HEAP_CHECK_FORK_SNAPSHOT=all and PERFTOOLS_VERBOSE=1 (the .fork_snapshot test): the
# same totals from a check that flooded in a forked snapshot.
if [[ ${HEAP_CHECK_FORK_SNAPSHOT:-} == all ]]; then
  grep -q '(flood in a forked snapshot, the fork ' "$work/hk" ||
    fail "the check did not flood in a forked snapshot"
fi

if [[ $lsan_prog != - ]]; then
  timeout 60 env LSAN_OPTIONS=exitcode=23 "$lsan_prog" 2>"$work/lsan"
  lsan_rc=$?
  read -r ls_bytes ls_objects < <(sed -nE 's/^SUMMARY: LeakSanitizer: ([0-9]+) byte\(s\) leaked in ([0-9]+) allocation\(s\)\.$/\1 \2/p' "$work/lsan")
  ls_direct=$(awk '/^Direct leak/ { s += $4 } END { print s + 0 }' "$work/lsan")
  echo "LSan:     exit $lsan_rc, ${ls_bytes:-?} B in ${ls_objects:-?} objects (direct $ls_direct B)"
  [[ ${ls_bytes:-} == "${hk_bytes:-}" && ${ls_objects:-} == "${hk_objects:-}" ]] ||
    fail "LSan total ${ls_bytes:-?} B in ${ls_objects:-?} differs from heapkit's"
fi

if [[ $use_valgrind == 1 ]] && command -v valgrind >/dev/null; then
  timeout 120 valgrind --leak-check=full "$prog" 2>"$work/vg" >/dev/null
  num() { sed -nE "s/^==[0-9]+== +$1: ([0-9,]+) bytes in ([0-9,]+) blocks$/\\1 \\2/p" "$work/vg" | tr -d ,; }
  read -r vd_bytes vd_blocks < <(num 'definitely lost')
  read -r vi_bytes vi_blocks < <(num 'indirectly lost')
  read -r vp_bytes vp_blocks < <(num 'possibly lost')
  echo "valgrind: definitely ${vd_bytes:-?} B in ${vd_blocks:-?}, indirectly ${vi_bytes:-?} B in ${vi_blocks:-?}, possibly ${vp_bytes:-?} B in ${vp_blocks:-?}"
  (( ${vd_bytes:-0} + ${vi_bytes:-0} == ${hk_bytes:-0} && ${vd_blocks:-0} + ${vi_blocks:-0} == ${hk_objects:-0} )) ||
    fail "valgrind definitely + indirectly differs from heapkit's total"
  [[ ${vd_bytes:-} == "$hk_direct" ]] || fail "valgrind definitely lost ${vd_bytes:-?} B, heapkit direct $hk_direct B"
  [[ ${vp_bytes:-} == 300 ]] || fail "valgrind possibly lost ${vp_bytes:-?} B, want the 300 B interior-pointer block"
fi
[[ $status == 0 ]] && echo PASS
exit $status
