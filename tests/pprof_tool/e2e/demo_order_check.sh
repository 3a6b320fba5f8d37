#!/bin/sh
# The demo's step "the leak checker finds the two bugs" (tests/demo/run_demo.sh) read through a
# pipe, as `run_demo.sh | less` or a CI log reads it: the program's own lines come first, then
# the leak report the checker writes to stderr at exit.
# Usage: demo_order_check.sh <libheapkit.so> <demo program> <work dir>
set -eu
lib=$1 demo=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
status=0
(HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$lib" "$demo" 2>&1 || echo "exit $?") |
  cat >"$work/out.txt"
last_output=$(grep -n '^cache holds [0-9]* requests$' "$work/out.txt" | cut -d: -f1)
report=$(grep -n 'Leak check _main_ detected leaks' "$work/out.txt" | head -n 1 | cut -d: -f1)
if [ -z "$last_output" ] || [ -z "$report" ]; then
  echo "FAIL: the program's last line or the leak report is missing:"
  cat "$work/out.txt"
  exit 1
fi
if [ "$last_output" -gt "$report" ]; then
  echo "FAIL: the program's output (line $last_output) follows the leak report (line $report):"
  cat "$work/out.txt"
  status=1
else
  echo "PASS: the program's output (to line $last_output), then the leak report (line $report)"
fi
exit $status
