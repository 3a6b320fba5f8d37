#!/usr/bin/env bash
# Runs repro/environ_overwrite.c under HEAPCHECK=normal with HEAP_CHECK_DUMP_DIRECTORY=<dir> and
# HEAPCHECK_SUPPRESSIONS=<file>: the leak must be reported, its profile written into <dir>, and
# the suppressions file (which suppresses nothing) read without complaint.
#   run_environ_overwrite.sh <repro_environ_overwrite> <libheapkit.so>
set -uo pipefail
work=$(mktemp -d /tmp/heapkit-repro-env.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/dump"
echo 'leak:no_such_function_anywhere' >"$work/supp"
timeout 60 env LD_PRELOAD="$(realpath "$2")" HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work/dump" \
  HEAPCHECK_SUPPRESSIONS="$work/supp" "$1" >"$work/out" 2>"$work/err"
rc=$?
status=0
[[ $rc == 1 ]] || { echo "FAIL: exit status $rc, want 1 (a leak)"; status=1; }
grep -q '^Leak check _main_ detected leaks of 77 bytes in 1 objects' "$work/err" ||
  { echo "FAIL: the 77-byte leak was not reported"; status=1; }
ls "$work"/dump/*._main_-end.heap >/dev/null 2>&1 ||
  { echo "FAIL: no leak profile in HEAP_CHECK_DUMP_DIRECTORY"; status=1; }
if grep -q 'heapkit:' "$work/err"; then
  echo "FAIL: $(grep -m2 'heapkit:' "$work/err" | tr -s ' ' | tr '\n' ' ')"; status=1
fi
[[ $status == 0 ]] && echo PASS
exit $status
