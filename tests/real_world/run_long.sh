#!/usr/bin/env bash
# The long real-world run: every program x {plain, heapprofile, heapcheck} with the --long
# workloads, the leak-oracle comparisons (LeakSanitizer, valgrind memcheck), and a table of the
# results written to tests/real_world/RESULTS.md (the measured part, between the markers).
#   tests/real_world/run_long.sh [build-dir]      (default: build/; needs heapkit, pprof-tool,
#                                                  known_leaks, known_leaks_lsan built)
#   tests/real_world/run_long.sh --only <program> [build-dir]
#       reruns one program's three rows and replaces just those rows in RESULTS.md (with a
#       note saying when), leaving the rest of the recorded run as it was.
# Takes 10-20 minutes on 2 cores. Exit status 1 if any run failed.
set -uo pipefail
only=""
if [[ ${1:-} == --only ]]; then only=$2; shift 2; fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(realpath "${1:-$root/build}")
lib=$build/libheapkit.so pprof=$build/pprof-tool/pprof-tool
for f in "$lib" "$pprof" "$build/tests/real_world/known_leaks"; do
  [[ -e $f ]] || { echo "run_long.sh: $f is missing; build it first" >&2; exit 2; }
done
work=$(mktemp -d /tmp/heapkit-rw-long.XXXXXX)
trap 'rm -rf "$work"' EXIT
out=$work/results.md
status=0
export HEAPKIT_RW_TIMEOUT=${HEAPKIT_RW_TIMEOUT:-1200}

{
  echo "Command: \`tests/real_world/run_long.sh $1\`, $(date -u '+%Y-%m-%d %H:%M UTC'), tree $(git -C "$root" describe --always --dirty),"
  echo "$(nproc) cores, load average at start $(cut -d' ' -f1-3 /proc/loadavg) (shared machine: walls are noisy)."
  echo
  echo "| program | config | exit status | stdout vs glibc | wall s (glibc) | leak summary | heap files written, read OK |"
  echo "|---|---|---|---|---|---|---|"
} >"$out"

programs=(python3 perl git sqlite3 gcc cmake)
[[ -n $only ]] && programs=("$only")
for prog in "${programs[@]}"; do
  "$here/run_real_world.sh" --long --baseline "$prog" "$work/base" >"$work/$prog.base.log" 2>&1 ||
    { echo "baseline $prog failed:"; cat "$work/$prog.base.log"; status=1; continue; }
  for config in plain heapprofile heapcheck; do
    log=$work/$prog.$config.log
    "$here/run_real_world.sh" --long "$prog" "$config" "$lib" "$pprof" "$work/base" >"$log" 2>&1 || status=1
    line=$(grep '^RESULT ' "$log" | tail -1)
    echo "${line:-no RESULT line for $prog $config}"
    grep '^FAIL' "$log" | head -5
    if [[ $line =~ ^RESULT\ ([^ ]+)\ ([^ ]+)\ exit=([^ ]+)\ output=([^ ]+)\ wall=([^ ]+)\ glibc_wall=([^ ]+)\ leaks=\"([^\"]*)\"\ heapfiles=([^ ]+)$ ]]; then
      echo "| ${BASH_REMATCH[1]} | ${BASH_REMATCH[2]} | ${BASH_REMATCH[3]} | ${BASH_REMATCH[4]} | ${BASH_REMATCH[5]} (${BASH_REMATCH[6]}) | ${BASH_REMATCH[7]} | ${BASH_REMATCH[8]} |" >>"$out"
    else
      echo "| $prog.long | $config | FAILED (see log) | | | | |" >>"$out"
    fi
  done
done

if [[ -n $only ]]; then
  results=$here/RESULTS.md
  note="| $only.long | (rows below rerun: $(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)) | | | | | |"
  grep "^| $only.long |" "$out" >"$work/rows"
  awk -v f="$work/rows" -v note="$note" -v p="| $only.long |" '
    index($0, p) == 1 { if (!done) { print note; while ((getline l < f) > 0) print l; done = 1 } next }
    { print }' "$results" >"$work/new" && cp "$work/new" "$results"
  echo "run_long.sh: $only rows replaced in $results (status $status)"
  exit $status
fi

# --- Leak oracles ---
{
  echo
  echo "### Leak totals against LeakSanitizer and valgrind memcheck"
  echo
  echo "known_leaks.c (2152 B in 33 objects leaked by construction), \`compare_leak_oracles.sh\`:"
  echo '```'
} >>"$out"
lsan_bin=$build/tests/real_world/known_leaks_lsan
[[ -x $lsan_bin ]] || lsan_bin=-
"$here/compare_leak_oracles.sh" "$build/tests/real_world/known_leaks" "$lsan_bin" "$lib" >>"$out" 2>&1 || status=1
echo '```' >>"$out"

hk_sum() {  # heapkit report on stdin -> "<total line>; direct X B, indirect Y B" per process
  awk '/^Leak check _main_/ { t = $7 " B in " $10 " objects" }
       /^Leak of .*\(direct leak\)$/ { d += $3 } /^Leak of .*\(indirect leak\)$/ { i += $3 }
       /^(\/[^ ]*\/)?pprof-tool / { n = split($2, a, "/"); printf "%s: %s (direct %d B, indirect %d B)\n", a[n], t, d, i; d = 0; i = 0 }
       /^No leaks found/ { print "no leaks" }'
}
vg_sum() {  # valgrind log -> one line
  local f=$1
  printf '%s: definitely %s, indirectly %s, possibly %s\n' \
    "$(basename "$(sed -nE 's/^==[0-9]+== Command: ([^ ]+).*/\1/p' "$f")")" \
    "$(sed -nE 's/^==[0-9]+== +definitely lost: (.*)/\1/p' "$f")" \
    "$(sed -nE 's/^==[0-9]+== +indirectly lost: (.*)/\1/p' "$f")" \
    "$(sed -nE 's/^==[0-9]+== +possibly lost: (.*)/\1/p' "$f")"
}
privlib=$(perl -MConfig -e 'print $Config{privlib}')
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0
mkdir -p "$work/o" && cd "$work/o" || exit 1
{
  echo
  echo "perl /usr/bin/pod2text Pod/Man.pm (PERL_HASH_SEED=0):"
  echo '```'
  valgrind --leak-check=full --log-file="$work/o/vg.perl" perl /usr/bin/pod2text "$privlib/Pod/Man.pm" >/dev/null
  echo "valgrind  $(vg_sum "$work/o/vg.perl")"
  for off in 1024 -1; do
    echo "heapkit (HEAP_CHECK_MAX_POINTER_OFFSET=$off)  $(LD_PRELOAD=$lib HEAPCHECK=normal HEAP_CHECK_REPORT_CLEAN=true HEAP_CHECK_MAX_LEAKS=0 \
      HEAP_CHECK_MAX_POINTER_OFFSET=$off perl /usr/bin/pod2text "$privlib/Pod/Man.pm" 2>&1 >/dev/null | hk_sum)"
  done
  echo '```'
  echo
  echo "g++ -O2 -c heapcheck/flood.cc (each tool wraps every process the driver runs):"
  echo '```'
  g++ -O2 -std=c++20 -I"$root" -c "$root/heapcheck/flood.cc" -o f.o \
    -wrapper valgrind,--leak-check=full,--log-file="$work/o/vg.gcc.%p" >/dev/null 2>&1
  for f in "$work"/o/vg.gcc.*; do echo "valgrind  $(vg_sum "$f")"; done
  liblsan=$(gcc -print-file-name=liblsan.so)
  if [[ -e $liblsan ]]; then
    LSAN_OPTIONS=log_path=$work/o/lsan.gcc g++ -O2 -std=c++20 -I"$root" -c "$root/heapcheck/flood.cc" \
      -o f.o -wrapper env,LD_PRELOAD="$(realpath "$liblsan")" >/dev/null 2>&1
    for f in "$work"/o/lsan.gcc.*; do
      [[ -e $f ]] || continue
      echo "LSan      $(grep -m1 -oE 'in [^ ]+ \(/[^+)]+' "$f" | sed -E 's/.*\(//; s#.*/##'): $(grep SUMMARY "$f" | sed 's/SUMMARY: LeakSanitizer: //') (direct $(awk '/^Direct leak/ { s += $4 } END { print s + 0 }' "$f") B)"
    done
  fi
  for off in 1024 -1; do
    echo "heapkit (HEAP_CHECK_MAX_POINTER_OFFSET=$off):"
    LD_PRELOAD=$lib HEAPCHECK=normal HEAP_CHECK_REPORT_CLEAN=true HEAP_CHECK_MAX_LEAKS=0 HEAP_CHECK_ERROR_EXIT_CODE=0 \
      HEAP_CHECK_DUMP_DIRECTORY="$work/o" HEAP_CHECK_MAX_POINTER_OFFSET=$off \
      g++ -O2 -std=c++20 -I"$root" -c "$root/heapcheck/flood.cc" -o f.o 2>&1 >/dev/null | hk_sum | sed 's/^/  /'
  done
  echo '```'
} >>"$out" 2>&1

# Put the measured block into RESULTS.md between its markers (the prose around them stays).
results=$here/RESULTS.md
if grep -q '^<!-- run_long begin -->' "$results" 2>/dev/null; then
  awk -v f="$out" '/^<!-- run_long begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
                   /^<!-- run_long end -->/ { skip = 0 } !skip' "$results" >"$work/new" && cp "$work/new" "$results"
else
  { echo "<!-- run_long begin -->"; cat "$out"; echo "<!-- run_long end -->"; } >>"$results"
fi
echo "run_long.sh: results in $results (status $status)"
exit $status
