#!/usr/bin/env bash
# Runs heapkit_stress in one configuration and checks what that configuration promises.
#   run_stress.sh <glibc|minimal|sampled|heapcheck|api> <heapkit_stress> <libheapkit_minimal.so>
#                 <libheapkit.so> <pprof-tool> [seconds] [heapkit_stress_api]
# glibc      no preload (control)
# minimal    LD_PRELOAD=libheapkit_minimal.so
# sampled    LD_PRELOAD=libheapkit.so TCMALLOC_SAMPLE_PARAMETER=1 HEAPPROFILE=<tmp>/s, a dump
#            every 64 MiB allocated: heap files must be written, with a valid header, and
#            pprof-tool --text must read the first (mid-run) and the last (at exit) one
# heapcheck  LD_PRELOAD=libheapkit.so HEAPCHECK=normal: the program frees everything, so
#            "No leaks found" is required and exit status 0
# api        heapkit_stress_api: heapkit's allocator through its internal API, malloc stays
#            glibc's (the build ThreadSanitizer checks)
# Always: exit 0, the "stress: OK" line, no "heapkit:" warning line. Bounded by timeout.
set -uo pipefail
config=$1 seconds=${6:-3}
prog=$(realpath "$2") minimal=$(realpath "$3") full=$(realpath "$4") pprof=$(realpath "$5")
work=$(mktemp -d /tmp/heapkit-stress-$config.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=$(( ${seconds%.*} * 4 + 60 ))
env=()
case $config in
  glibc) ;;
  minimal) env=(LD_PRELOAD="$minimal") ;;
  sampled) env=(LD_PRELOAD="$full" TCMALLOC_SAMPLE_PARAMETER=1 HEAPPROFILE="$work/s"
                HEAP_PROFILE_ALLOCATION_INTERVAL=64m) ;;
  heapcheck) env=(LD_PRELOAD="$full" HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work"
                  HEAP_CHECK_REPORT_CLEAN=true) ;;
  api) prog=$(realpath "$7") ;;
  *) echo "FAIL: unknown configuration $config"; exit 2 ;;
esac
start=$(date +%s.%N)
timeout -k 5 "$limit" env "${env[@]}" "$prog" --seconds "$seconds" >"$work/out" 2>"$work/err"
rc=$?
end=$(date +%s.%N)
cat "$work/out"
printf 'stress.%s: exit %d, wall %.1f s\n' "$config" "$rc" "$(echo "$end - $start" | bc)"
status=0
fail() { echo "FAIL: $*"; status=1; }
[[ $rc == 0 ]] || fail "exit status $rc (124 = timeout)"
grep -q '^stress: OK' "$work/out" || fail "no 'stress: OK' line"
grep -q 'heapkit:' "$work/err" && fail "heapkit warnings on stderr"
grep -q 'cannot be preloaded' "$work/err" && fail "the library was not preloaded"
case $config in
  sampled)
    n=$(ls "$work"/s.*.heap 2>/dev/null | wc -l)
    ((n > 0)) || fail "no heap profile written"
    for last in $(ls "$work"/s.*.heap 2>/dev/null | sed -n '1p;$p' | uniq); do
      head -1 "$last" | grep -Eq '^heap profile: +[0-9]+: +[0-9]+ \[ *[0-9]+: +[0-9]+\] @ (heap_v2/1|heapprofile)$' ||
        fail "bad header in $last: $(head -1 "$last")"
      if ! "$pprof" --text "$prog" "$last" >"$work/text" 2>"$work/text.err"; then
        fail "pprof-tool could not read $last: $(head -3 "$work/text.err")"
      else
        grep -q 'total' "$work/text" || fail "pprof-tool --text printed no total line"
        echo "$n heap files; pprof-tool on $(basename "$last"): $(grep -m1 total "$work/text")"
      fi
    done ;;
  api)
    grep -q 'allocation calls: heapkit-api' "$work/out" || fail "heapkit's allocator API not used" ;;
  heapcheck)
    grep -q '^No leaks found for check "_main_"' "$work/err" || fail "no 'No leaks found' line"
    grep 'Leak check\|No leaks found' "$work/err" | head -3 ;;
esac
if [[ $status != 0 ]]; then echo "--- stderr (head)"; head -30 "$work/err"; fi
[[ $status == 0 ]] && echo "PASS: stress.$config"
exit $status
