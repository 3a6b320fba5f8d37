#!/usr/bin/env bash
# CPython keeps its small objects in pymalloc arenas (anonymous mmaps) and their pointers to
# larger (malloc'd) objects there: with anonymous memory as roots a script that leaks nothing
# gets "No leaks found" (valgrind: 0 bytes definitely or indirectly lost); with
# HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=false (LeakSanitizer's roots) the same run reports what
# only the arenas hold.
#   python_arenas.sh <libheapkit.so>
# Skips (exit 77) without /usr/bin/python3 or when it does not use pymalloc arenas.
set -uo pipefail
lib=$1
python=${PYTHON:-/usr/bin/python3}
if [[ ! -x $python ]]; then echo "SKIP: no $python"; exit 77; fi
work=$(mktemp -d /tmp/heapcheck-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
script='import json, collections
d = collections.OrderedDict((str(i), {"v": [i] * 8, "s": "x" * (i % 300)}) for i in range(5000))
print(len(json.dumps(d)))'
run() {  # scan
  env -u PYTHONMALLOC LD_PRELOAD="$lib" HEAPCHECK=normal HEAP_CHECK_REPORT_CLEAN=true \
    HEAP_CHECK_DUMP_DIRECTORY="$work" HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS="$1" \
    "$python" -c "$script" >/dev/null 2>"$work/err.$1"
}
run false
without=$?
if ! grep -q '^Leak check _main_ detected leaks' "$work/err.false"; then
  echo "SKIP: $python reports no leak without anonymous roots (no pymalloc arenas?)"
  exit 77
fi
run true
with=$?
grep '^Leak check _main_ detected\|^No leaks found\|^Roots included' "$work/err.true" "$work/err.false"
if [[ $with != 0 ]] || ! grep -q '^No leaks found for check "_main_"' "$work/err.true"; then
  echo "FAIL: with anonymous roots: exit $with"
  cat "$work/err.true"
  exit 1
fi
[[ $without == 1 ]] || { echo "FAIL: without anonymous roots: exit $without, want 1"; exit 1; }
echo PASS
