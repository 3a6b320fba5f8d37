#!/bin/sh
# A plugin dlclose()d before the dump: the heap profile's MAPPED_LIBRARIES keeps its mapping
# (after a marker line), so pprof-tool names the plugin's function; the leak checker's report
# too. Without the runtime's dlclose bookkeeping the top frame is a raw address.
# Usage: unload_check.sh <pprof-tool> <libheapkit.so> <program> <plugin.so> <work dir>
set -eu
pprof=$1 lib=$2 prog=$3 plugin=$4 work=$5
rm -rf "$work" && mkdir -p "$work"
status=0
name=plugin_site::AllocateInPlugin

HEAPPROFILE="$work/p" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$prog" "$plugin"
profile=$(ls "$work"/p.*.heap | sort | tail -n 1)
if ! grep -q "^# heapkit: unloaded modules" "$profile" || ! grep -q " $plugin\$" "$profile"; then
  echo "FAIL: the dump does not keep the unloaded plugin's mapping"; status=1
fi
"$pprof" --text "$profile" > "$work/text.txt" 2>&1
if ! grep -q "$name\$" "$work/text.txt"; then
  echo "FAIL: pprof-tool does not name $name"; cat "$work/text.txt"; status=1
fi
if grep -q "warning" "$work/text.txt"; then
  echo "FAIL: pprof-tool warns"; cat "$work/text.txt"; status=1
fi
# gperftools' pprof reads the same file (the marker line is not a mapping to it).
if command -v google-pprof >/dev/null 2>&1; then
  google-pprof --text "$prog" "$profile" > "$work/google.txt" 2>/dev/null || true
  if ! grep -q "AllocateInPlugin" "$work/google.txt"; then
    echo "FAIL: google-pprof does not name $name"; cat "$work/google.txt"; status=1
  fi
fi

HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$lib" "$prog" "$plugin" \
  2> "$work/leaks.txt" || true
if ! grep -q "@ [0-9a-f]* $name " "$work/leaks.txt"; then
  echo "FAIL: the leak report does not name $name"; cat "$work/leaks.txt"; status=1
fi
[ $status -eq 0 ] && echo "PASS: $name named after dlclose"
exit $status
