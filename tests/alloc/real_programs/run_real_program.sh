#!/usr/bin/env bash
# Runs one real program under glibc and under LD_PRELOAD=<library>; stdout and exit status must
# be identical, and nothing may print a "heapkit:" line.
#   run_real_program.sh <python3|perl|git|gcc> <library.so> [baseline-dir]
#   run_real_program.sh --baseline <program> <baseline-dir>    (glibc run only, kept for reuse)
# With a baseline dir holding <program>.{stdout,rc} the glibc run is not repeated (ctest runs
# the baselines once as fixtures). Each run is bounded by `timeout`; work happens under /tmp.
set -uo pipefail
mode=compare
if [[ ${1:-} == --baseline ]]; then mode=baseline; shift; fi
prog=$1
if [[ $mode == baseline ]]; then lib=""; basedir=$2; else lib=$2; basedir=${3:-}; fi
here=$(cd "$(dirname "$0")" && pwd)
limit=${HEAPKIT_REAL_TIMEOUT:-60}
work=$(mktemp -d /tmp/heapkit-real-$prog.XXXXXX)
trap 'rm -rf "$work"' EXIT

[[ $mode == baseline || -f "$lib" ]] || { echo "FAIL: library $lib does not exist"; exit 1; }

python=/usr/bin/python3
[[ -x $python ]] || python=$(command -v python3)

# Each workload writes its comparable result to stdout; $1 is a private scratch directory.
workload_python3() { "$python" "$here/workload.py"; }
workload_perl() { perl "$here/workload.pl"; }
workload_git() {
  local d=$1/repo
  export HOME=$1 GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=heapkit GIT_AUTHOR_EMAIL=t@example.com \
         GIT_COMMITTER_NAME=heapkit GIT_COMMITTER_EMAIL=t@example.com
  git init -q -b main "$d" && cd "$d" || return 1
  git config gc.auto 0 && git config pack.threads 1 || return 1
  mkdir dir0 dir1 dir2 dir3 dir4 dir5 dir6 || return 1
  local c f i
  for c in 1 2 3 4 5 6; do
    for ((f = 1; f <= 60; f++)); do  # shell builtins only: process start-up is slow here
      {
        echo "file $f commit $c"
        for ((i = f * c; i <= f * c + 40 + f; i++)); do echo "$i"; done
      } >"dir$((f % 7))/f$f.txt"
    done
    git rm -q --cached -r --ignore-unmatch "dir3/f$c.txt" >/dev/null
    git add -A && GIT_AUTHOR_DATE="2024-01-0$c 12:00:00 +0000" \
      GIT_COMMITTER_DATE="2024-01-0$c 12:00:00 +0000" git commit -q -m "commit $c" || return 1
  done
  git log --stat --format='%H %s' | head -400
  git gc -q 2>&1 || return 1
  git fsck --full --strict 2>&1 || return 1
  git count-objects -v | grep -E '^(in-pack|packs|count):'
  git rev-list --all --objects | wc -l
  git diff HEAD~3 HEAD --stat | tail -1
}
workload_gcc() {
  cd "$1" || return 1
  g++ -O2 -std=c++17 -c "$here/sample_program.cc" -o sample.o || return 1
  g++ sample.o -o sample || return 1
  objdump -d --no-show-raw-insn sample.o | tail -n +3 | sha256sum
  ./sample
}

run() {  # run <out-prefix> [preload]
  local out=$1 preload=${2:-}
  mkdir -p "$work/$out.d"
  ( cd "$work/$out.d" && export PYTHONHASHSEED=0 && \
    if [[ -n $preload ]]; then export LD_PRELOAD=$preload; fi && \
    timeout "$limit" bash -c "$(declare -f workload_$prog); python=$python; here=$here; \
      workload_$prog '$work/$out.d'" ) >"$work/$out.stdout" 2>"$work/$out.stderr"
  echo $? >"$work/$out.rc"
}

if [[ $mode == baseline ]]; then
  mkdir -p "$basedir"
  run base
  cp "$work/base.stdout" "$basedir/$prog.stdout"
  cp "$work/base.rc" "$basedir/$prog.rc"
  if [[ $(cat "$work/base.rc") != 0 ]]; then
    echo "FAIL: $prog under glibc exited $(cat "$work/base.rc") (test environment problem)"
    head -20 "$work/base.stderr"
    exit 1
  fi
  echo "baseline: $prog, $(wc -l <"$work/base.stdout") lines"
  exit 0
fi
start=$(date +%s.%N)
if [[ -n $basedir && -f $basedir/$prog.stdout && -f $basedir/$prog.rc ]]; then
  cp "$basedir/$prog.stdout" "$work/base.stdout"
  cp "$basedir/$prog.rc" "$work/base.rc"
else
  run base
fi
mid=$(date +%s.%N)
run lib "$lib"
end=$(date +%s.%N)
printf '%s: glibc %.2fs%s, %s %.2fs\n' "$prog" "$(echo "$mid - $start" | bc)" \
  "${basedir:+ (cached)}" "$(basename "$lib")" "$(echo "$end - $mid" | bc)"

status=0
if [[ $(cat "$work/base.rc") != 0 ]]; then
  echo "FAIL: $prog under glibc exited $(cat "$work/base.rc") (test environment problem)"
  head -20 "$work/base.stderr"
  exit 1
fi
if [[ $(cat "$work/lib.rc") != $(cat "$work/base.rc") ]]; then
  echo "FAIL: $prog exit status $(cat "$work/lib.rc") under $lib, $(cat "$work/base.rc") under glibc"
  head -20 "$work/lib.stderr"
  status=1
fi
if ! diff -u "$work/base.stdout" "$work/lib.stdout" >"$work/diff"; then
  echo "FAIL: $prog output differs under $lib:"
  head -40 "$work/diff"
  status=1
fi
if grep -q 'heapkit:' "$work/lib.stderr"; then
  echo "FAIL: $prog printed heapkit lines under $lib:"
  grep 'heapkit:' "$work/lib.stderr" | head -5
  status=1
fi
[[ $status == 0 ]] && echo "PASS: $prog, $(wc -l <"$work/base.stdout") identical lines of output"
exit $status
