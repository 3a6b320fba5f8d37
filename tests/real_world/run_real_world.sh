#!/usr/bin/env bash
# Runs one real program's workload under glibc (baseline) or under LD_PRELOAD=libheapkit.so in
# one configuration, and checks what heapkit promises there. See README.md here.
#
#   run_real_world.sh [--long] <program> <config> <libheapkit.so> <pprof-tool> [baseline-dir]
#   run_real_world.sh [--long] --baseline <program> <baseline-dir>
#
# program: python3 perl git sqlite3 gcc cmake
# config:  plain        LD_PRELOAD only
#          heapprofile  + HEAPPROFILE=<work>/hp/p (default sampling) + PERFTOOLS_VERBOSE=-1
#          heapcheck    + HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY=<work>/dump
# Checks: stdout identical to glibc's after the documented normalisation; every real-program
# command exits as under glibc (heapcheck: a single-process program may exit
# HEAP_CHECK_ERROR_EXIT_CODE=1 instead of 0 when, and only when, its leak report says so; for
# programs whose children's exit status steers the parent -- git, gcc, cmake -- the runs use
# HEAP_CHECK_ERROR_EXIT_CODE=0 so a leaking child does not change the parent's control flow);
# no crash (no signal exit), no "heapkit:" line on stderr; heap files written and read by
# pprof-tool; leak reports well-formed (check_leak_reports.py).
# Last line: "RESULT <program> <config> exit=<ok|DIFF> output=<same|DIFF> wall=<s> leaks=<...>
# heapfiles=<...>" (collected by run_long.sh into RESULTS.md).
set -uo pipefail
orig_args=("$@")
long=0
if [[ ${1:-} == --long ]]; then long=1; shift; fi
mode=compare
if [[ ${1:-} == --baseline ]]; then mode=baseline; shift; fi
prog=$1
if [[ $mode == baseline ]]; then
  config=glibc basedir=$2 lib="" pprof=""
else
  config=$2 lib=$(realpath "$3") pprof=$(realpath "$4") basedir=${5:-}
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
limit=${HEAPKIT_RW_TIMEOUT:-$((long ? 900 : 120))}
if [[ -n ${HEAPKIT_RW_WORK:-} ]]; then
  work=$HEAPKIT_RW_WORK  # inner mode (see below): the outer run owns the directory
else
  work=$(mktemp -d "/tmp/heapkit-rw-$prog-$config.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
variant=$prog$([[ $long == 1 ]] && echo .long)
python=/usr/bin/python3  # Debian's interpreter: its test suite is libpython3.11-testsuite

case $prog in python3|perl|git|sqlite3|gcc|cmake) ;; *) echo "FAIL: unknown program $prog"; exit 2 ;; esac
case $config in glibc|plain|heapprofile|heapcheck) ;; *) echo "FAIL: unknown config $config"; exit 2 ;; esac
if [[ $prog == python3 ]] && ! "$python" -c 'import test.test_re' 2>/dev/null; then
  echo "FAIL: python3's regression suite is missing (apt-get install libpython3.11-testsuite)"
  exit 1
fi
multi_process=0
case $prog in git|gcc|cmake) multi_process=1 ;; esac

# --- the environment of every real-program command in this configuration ---
cfg_env=(PYTHONHASHSEED=0 PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 LC_ALL=C.UTF-8)
# PYTHONMALLOC=malloc in every configuration (glibc too, so outputs compare): pymalloc keeps
# small objects in its own mmap'd arenas, which no malloc-level checker scans (valgrind and
# LSan need the same setting), so pointers held there would look like leaks.
cfg_env+=(PYTHONMALLOC=malloc)
case $config in
  plain) cfg_env+=(LD_PRELOAD="$lib") ;;
  heapprofile) mkdir -p "$work/hp"
    # PERFTOOLS_VERBOSE=-1: the profiler's "Starting tracking"/"Dumping" lines on stderr would
    # fail the python tests that require a child interpreter's stderr to be empty.
    cfg_env+=(LD_PRELOAD="$lib" HEAPPROFILE="$work/hp/p" PERFTOOLS_VERBOSE=-1) ;;
  heapcheck) mkdir -p "$work/dump"
    cfg_env+=(LD_PRELOAD="$lib" HEAPCHECK=normal HEAPKIT_RW_UNSET_IN_CHILDREN=HEAPCHECK)
    # perl overwrites its original environment strings in place (like setproctitle); heapkit
    # copies the paths it needs at start-up (regression test: repro/environ_overwrite.c).
    cfg_env+=(HEAP_CHECK_DUMP_DIRECTORY="$work/dump")
    # Every process's result on stderr, clean ones too (check_leak_reports.py counts them).
    cfg_env+=(HEAP_CHECK_REPORT_CLEAN=true)
    if [[ $multi_process == 1 ]]; then cfg_env+=(HEAP_CHECK_ERROR_EXIT_CODE=0); fi ;;
esac

# R <cmd...>: runs one real-program command in the configuration's environment and records
# "<cmd> <exit status>" in $rcs. Glue (sha256sum, sed, head) runs without the preload.
R() {
  env "${cfg_env[@]}" "$@"
  local rc=$?
  echo "$(basename "$1") $rc" >>"$rcs"
  return $rc
}

perl_privlib=$(perl -MConfig -e 'print $Config{privlib}')

workload_python3() {
  local mods="test_re test_collections"
  if [[ $long == 1 ]]; then
    mods+=" test_json test_threading test_struct test_dict test_set test_pickle test_datetime test_decimal"
    mods+=" test_queue test_weakref test_itertools test_functools test_csv test_zlib"
  fi
  R "$python" "$here/regrtest_main.py" $mods
  if [[ $long == 1 ]]; then
    R "$python" "$here/regrtest_main.py" test_multiprocessing_forkserver \
      -m WithProcessesTestQueue -m WithProcessesTestLock -m WithThreadsTestQueue
  fi
}
workload_perl() {
  R perl /usr/bin/pod2text "$perl_privlib/pod/perldiag.pod" | sha256sum
  R perl /usr/bin/pod2man --date=2024-01-01 "$perl_privlib/Pod/Man.pm" | sha256sum
  if [[ $long == 1 ]]; then
    local f
    for f in "$perl_privlib"/Pod/*.pm "$perl_privlib"/pod/*.pod; do
      # Files pod2text rejects under plain perl too (e.g. Pod/Simple.pm) are left out.
      perl /usr/bin/pod2text "$f" >/dev/null 2>&1 || continue
      echo "$(basename "$f") $(R perl /usr/bin/pod2text "$f" | sha256sum)"
    done
    R perl "$root/tests/alloc/real_programs/workload.pl"
  fi
}
workload_git() {
  export HOME=$1 GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=heapkit GIT_AUTHOR_EMAIL=t@example.com \
         GIT_COMMITTER_NAME=heapkit GIT_COMMITTER_EMAIL=t@example.com
  local commits=4 files=40 c f i
  if [[ $long == 1 ]]; then commits=12 files=120; fi
  R git init -q -b main "$1/origin" && cd "$1/origin" || return 1
  R git config gc.auto 0
  mkdir -p d0 d1 d2 d3 d4
  for ((c = 1; c <= commits; c++)); do
    for ((f = 1; f <= files; f++)); do  # shell builtins only: process start-up is slow here
      { echo "file $f commit $c"; for ((i = f * c; i <= f * c + 30 + f; i++)); do echo "$i"; done; } \
        >"d$((f % 5))/f$f.txt"
    done
    R git add -A
    GIT_AUTHOR_DATE="2024-01-$((10 + c)) 12:00:00 +0000" \
      GIT_COMMITTER_DATE="2024-01-$((10 + c)) 12:00:00 +0000" R git commit -q -m "commit $c"
  done
  cd "$1" || return 1
  # --no-local: a real clone over the pack protocol (upload-pack, pack-objects, index-pack).
  R git clone -q --no-local "file://$1/origin" "$1/clone"
  cd "$1/clone" || return 1
  R git log --stat --format='%H %an %s' | sed -n 1,500p
  R git gc -q
  R git fsck --full --strict
  R git count-objects -v | grep -E '^(in-pack|packs|count):'
  R git rev-list --all --objects | sha256sum
  R git diff HEAD~2 HEAD --stat | tail -1
  R git blame -s d1/f6.txt | sha256sum
}
workload_sqlite3() {
  local n=20000
  if [[ $long == 1 ]]; then n=300000; fi
  R sqlite3 "$1/db.sqlite" <<EOF
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, amount REAL, note TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $n / 20)
  INSERT INTO customer SELECT x, 'customer-' || x, 'city-' || (x * 7919 % 97) FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < $n)
  INSERT INTO orders SELECT x, 1 + (x * 104729 % ($n / 20)), (x * 7 % 1000) / 10.0,
                            printf('%.*c', x % 200, 'n') FROM c;
CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX customer_city ON customer(city);
EOF
  R sqlite3 "$1/db.sqlite" <<'EOF'
.mode list
SELECT count(*), sum(amount), avg(length(note)) FROM orders;
SELECT c.city, count(*), round(sum(o.amount), 2) FROM orders o JOIN customer c ON c.id = o.customer
  GROUP BY c.city ORDER BY 3 DESC LIMIT 10;
SELECT id, amount, rank() OVER (PARTITION BY customer ORDER BY amount DESC) FROM orders
  WHERE customer < 4 ORDER BY customer, 3, id LIMIT 20;
SELECT group_concat(name, ',') FROM (SELECT name FROM customer WHERE city = 'city-5' ORDER BY id);
DELETE FROM orders WHERE id % 3 = 0;
UPDATE orders SET note = upper(note) || 'x' WHERE id % 5 = 0;
PRAGMA integrity_check;
VACUUM;
SELECT count(*), sum(length(note)) FROM orders;
EOF
  R sqlite3 "$1/db.sqlite" .dump | sha256sum
}
workload_gcc() {
  cd "$1" || return 1
  # A source file of this directory's sibling (tests/stress), so another component's
  # half-finished edit cannot break the baseline.
  R g++ -O2 -std=c++20 -c "$root/tests/stress/workloads.cc" -o workloads.o
  objdump -d --no-show-raw-insn workloads.o | tail -n +3 | sha256sum
  if [[ $long == 1 ]]; then
    R g++ -O2 -std=c++20 -I"$root" -c "$root/heapcheck/flood.cc" -o flood.o
    objdump -d --no-show-raw-insn flood.o | tail -n +3 | sha256sum
    R g++ -O2 -g -std=c++20 -c "$root/tests/stress/workloads.cc" -o workloads.o
    R g++ -O2 -g -std=c++20 -c "$root/tests/stress/stress_state.cc" -o stress_state.o
    R g++ -O2 -g -std=c++20 -c "$root/tests/stress/stress.cc" -o stress.o
    R g++ -O2 -g -std=c++20 -c "$root/tests/stress/allocation_calls_process.cc" -o calls.o
    R g++ workloads.o stress_state.o stress.o calls.o -o stress -pthread
    objdump -d --no-show-raw-insn workloads.o | tail -n +3 | sha256sum
    ./stress --seconds 1 --no-fork | grep -c '^stress: OK'
  fi
}
workload_cmake() {
  mkdir -p "$1/proj" && cd "$1" || return 1
  cat >proj/CMakeLists.txt <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(rwdemo C CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Threads REQUIRED)
include(CheckIncludeFile)
include(CheckCXXSourceCompiles)
include(CheckFunctionExists)
check_include_file(malloc.h HAVE_MALLOC_H)
check_function_exists(posix_memalign HAVE_POSIX_MEMALIGN)
check_cxx_source_compiles("#include <optional>\nint main() { return std::optional<int>(0).value(); }" HAVE_OPTIONAL)
configure_file(config.h.in config.h)
add_library(util STATIC util.cc)
add_executable(demo main.cc)
target_include_directories(demo PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
target_link_libraries(demo PRIVATE util Threads::Threads)
EOF
  printf '#cmakedefine HAVE_MALLOC_H 1\n#cmakedefine HAVE_POSIX_MEMALIGN 1\n#cmakedefine HAVE_OPTIONAL 1\n' \
    >proj/config.h.in
  printf 'int twice(int x) { return 2 * x; }\n' >proj/util.cc
  printf '#include "config.h"\n#include <cstdio>\n#include <thread>\nint twice(int);\nint main() { int r = 0; std::thread t([&] { r = twice(21); }); t.join(); std::printf("demo %%d %%d\\n", r, HAVE_OPTIONAL); }\n' \
    >proj/main.cc
  R cmake -S proj -B build -G Ninja
  R cmake --build build -j1  # one job: ninja's output order is then fixed
  ./build/demo
  grep -E '^HAVE_' build/CMakeCache.txt
}

# Normalisation of stdout, per program; each rule is documented in README.md.
normalise() {  # normalise <scratch-dir> <reports-file>
  # heapcheck: a parent that captures its children's stderr (ninja, git's sideband) shows their
  # leak reports in its own stdout; those blocks move to <reports-file> and are checked there.
  awk -v rep="$2" '
    /^(remote: )?Leak check _main_ detected/ { inrep = 1 }
    inrep || /No leaks found for check "_main_"/ {
      print > rep; if ($0 ~ /Exiting with error code/) inrep = 0; next }
    { print }' |
  sed -e "s#$1#<WORK>#g" | case $prog in
    python3) sed -E -e 's/^[0-9]+:[0-9]{2}:[0-9]{2} (load avg: [0-9.]+ )?//' \
                   -e '/^Total duration: /d' -e '/^Using random seed/d' \
                   -e 's/ -- [a-z0-9_.]+ passed in [0-9. minsec]+$//' ;;
    *) cat ;;
  esac
}

# Inner mode: this script re-invoked under `timeout` runs only the workload.
if [[ -n ${HEAPKIT_RW_INNER:-} ]]; then
  rcs=$HEAPKIT_RW_RCS
  cd "$HEAPKIT_RW_INNER" && workload_$prog "$HEAPKIT_RW_INNER"
  exit $?
fi

run() {  # run <out-name>: runs the workload, leaves <out>.stdout/.stderr/.rc/.rcs in $work
  local out=$1 d=$work/$1.d start end
  mkdir -p "$d"
  : >"$work/$out.rcs"
  start=$(date +%s.%N)
  HEAPKIT_RW_WORK=$work HEAPKIT_RW_INNER=$d HEAPKIT_RW_RCS=$work/$out.rcs timeout -k 10 "$limit" \
    bash "$0" "${orig_args[@]}" >"$work/$out.raw" 2>"$work/$out.stderr"
  echo $? >"$work/$out.rc"
  end=$(date +%s.%N)
  echo "$end - $start" | bc >"$work/$out.wall"
  : >"$work/$out.reports"
  normalise "$d" "$work/$out.reports" <"$work/$out.raw" >"$work/$out.stdout"
  cat "$work/$out.stderr" >>"$work/$out.reports"
}

if [[ $mode == baseline ]]; then
  mkdir -p "$basedir"
  run base
  if [[ $(cat "$work/base.rc") != 0 ]] || grep -qv ' 0$' "$work/base.rcs"; then
    echo "FAIL: $prog under glibc failed (test environment problem): exit $(cat "$work/base.rc")"
    grep -v ' 0$' "$work/base.rcs" | head -5
    head -20 "$work/base.stderr"
    exit 1
  fi
  for f in stdout rcs wall; do cp "$work/base.$f" "$basedir/$variant.$f"; done
  printf 'baseline: %s, %d lines, %d commands, %.1f s\n' "$variant" "$(wc -l <"$work/base.stdout")" \
    "$(wc -l <"$work/base.rcs")" "$(cat "$work/base.wall")"
  exit 0
fi

[[ -f $lib ]] || { echo "FAIL: library $lib does not exist"; exit 1; }
if [[ -n $basedir && -f $basedir/$variant.stdout ]]; then
  for f in stdout rcs wall; do cp "$basedir/$variant.$f" "$work/base.$f"; done
else
  run base
fi
run lib
status=0
fail() { echo "FAIL: $prog/$config: $*"; status=1; }

# 1. Exit statuses, command by command.
lrc=$(cat "$work/lib.rc")
exit_ok=ok
if [[ $lrc == 124 || $lrc == 137 ]]; then fail "timed out after ${limit}s"; exit_ok=TIMEOUT; fi
leak_reports=$(grep -c 'Leak check _main_ detected leaks' "$work/lib.reports")
if ! cmp -s <(cut -d' ' -f1 "$work/base.rcs") <(cut -d' ' -f1 "$work/lib.rcs"); then
  fail "different commands ran: $(diff <(cut -d' ' -f1 "$work/base.rcs") <(cut -d' ' -f1 "$work/lib.rcs") | head -5 | tr '\n' ' ')"
  exit_ok=DIFF
else
  leak_exits=0
  while read -r cmd brc lrc_; do
    [[ $brc == "$lrc_" ]] && continue
    if ((lrc_ >= 128)); then fail "$cmd died with signal $((lrc_ - 128)) (glibc: exit $brc)"; exit_ok=CRASH; continue; fi
    if [[ $config == heapcheck && $multi_process == 0 && $brc == 0 && $lrc_ == 1 ]]; then
      leak_exits=$((leak_exits + 1)); continue
    fi
    fail "$cmd exited $lrc_, under glibc $brc"; exit_ok=DIFF
  done < <(paste -d' ' "$work/base.rcs" <(cut -d' ' -f2 "$work/lib.rcs"))
  if ((leak_exits > leak_reports)); then
    fail "$leak_exits commands exited 1 but only $leak_reports leak reports were printed"; exit_ok=DIFF
  fi
  ((leak_exits > 0)) && [[ $exit_ok == ok ]] && exit_ok="ok,${leak_exits}_leak_exits"
fi

# 2. Output.
output=same
if ! diff -u "$work/base.stdout" "$work/lib.stdout" >"$work/diff"; then
  fail "stdout differs from glibc's:"; head -30 "$work/diff"; output=DIFF
fi

# 3. No heapkit warnings (a crash would show here too).
if grep -q 'heapkit:' "$work/lib.stderr"; then
  fail "heapkit printed: $(grep -m3 'heapkit:' "$work/lib.stderr" | cut -c1-200 | tr '\n' '|')"
fi

# 4. Heap profiles: written, well-formed headers, readable by pprof-tool.
heapfiles=-
main_binary() {
  case $prog in
    python3) realpath "$python" ;; perl) realpath "$(command -v perl)" ;;
    git) realpath "$(command -v git)" ;; sqlite3) realpath "$(command -v sqlite3)" ;;
    gcc) realpath "$(command -v g++)" ;; cmake) realpath "$(command -v cmake)" ;;
  esac
}
if [[ $config == heapprofile ]]; then
  mapfile -t files < <(ls "$work"/hp/*.heap 2>/dev/null)
  if ((${#files[@]} == 0)); then fail "no heap profile written"; heapfiles=NONE; else
    # Fast mode reads the first three and last three files; --long reads them all.
    if [[ $long == 0 && ${#files[@]} -gt 6 ]]; then
      check=("${files[@]:0:3}" "${files[@]: -3}")
    else
      check=("${files[@]}")
    fi
    bad=0
    for f in "${check[@]}"; do
      hdr=$(head -1 "$f")
      if ! [[ $hdr =~ ^heap\ profile:\ +([0-9]+):\ +([0-9]+)\ \[\ *([0-9]+):\ +([0-9]+)\]\ @\ heap(_v2/[0-9]+|profile)$ ]]; then
        fail "$(basename "$f"): bad header '$hdr'"; bad=$((bad + 1)); continue
      fi
      inuse=${BASH_REMATCH[2]} alloc=${BASH_REMATCH[4]}
      ((alloc >= inuse)) || { fail "$(basename "$f"): alloc bytes $alloc < in-use bytes $inuse"; bad=$((bad + 1)); }
      grep -q '^MAPPED_LIBRARIES:' "$f" || { fail "$(basename "$f"): no MAPPED_LIBRARIES"; bad=$((bad + 1)); }
      args=(--text)
      [[ $(basename "$f") == p.[0-9]*.heap ]] && args+=("$(main_binary)")
      for space in "" --alloc_space; do
        if ! timeout 60 "$pprof" "${args[@]}" $space "$f" >"$work/text" 2>"$work/text.err"; then
          fail "pprof-tool ${args[*]} $space $(basename "$f") failed: $(grep -v warning "$work/text.err" | head -2)"
          bad=$((bad + 1)); continue
        fi
        total=$(grep -o 'of [0-9.]*[kMG]*B total' "$work/text" | head -1)
        want=$inuse; [[ -n $space ]] && want=$alloc
        if ((want > 0)) && [[ -z $total || $total == "of 0B total" ]]; then
          fail "pprof-tool ${args[*]} $space $(basename "$f"): no total for $want bytes: $(head -3 "$work/text" | tr '\n' '|')"
          bad=$((bad + 1))
        fi
      done
    done
    heapfiles="${#files[@]}written,$((${#check[@]} - bad))/${#check[@]}read"
  fi
fi

# 5. Leak reports: well-formed, .heap files match and are readable.
leaks=-
if [[ $config == heapcheck ]]; then
  if ! "$python" "$here/check_leak_reports.py" "$work/lib.reports" "$pprof" >"$work/leaks"; then
    fail "leak reports malformed:"; sed 's/^/  /' "$work/leaks" | head -20
  fi
  leaks=$(tail -1 "$work/leaks")
  grep -q '^checked 0 processes' "$work/leaks" && fail "no process printed a leak check result"
fi

printf 'RESULT %s %s exit=%s output=%s wall=%.1f glibc_wall=%.1f leaks="%s" heapfiles=%s\n' \
  "$variant" "$config" "$exit_ok" "$output" "$(cat "$work/lib.wall")" "$(cat "$work/base.wall" 2>/dev/null || echo 0)" \
  "$leaks" "$heapfiles"
if [[ $status != 0 ]]; then
  echo "--- stderr (last 20 lines)"; tail -20 "$work/lib.stderr" | cut -c1-300
  if [[ -n ${HEAPKIT_RW_KEEP:-} ]]; then cp -r "$work" "$HEAPKIT_RW_KEEP"; echo "kept in $HEAPKIT_RW_KEEP"; fi
else
  echo "PASS: $variant $config"
fi
exit $status
