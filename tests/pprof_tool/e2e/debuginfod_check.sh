#!/bin/sh
# Debug info fetched from a debuginfod server, and only when DEBUGINFOD_URLS says so: a real
# `debuginfod` on 127.0.0.1 (random free port) indexes the unstripped program; the copy that
# runs is stripped; pprof-tool names its functions (--text) and lines (--lines) with
# DEBUGINFOD_URLS set to that server, and does not without it; the same for the leak checker's
# in-process report (the program leaks what it keeps). Exit 77 when no debuginfod.
# Usage: debuginfod_check.sh <pprof-tool> <libheapkit.so> <program> <prog source> <work dir>
set -eu
pprof=$1 lib=$2 prog=$3 source=$4 work=$5
if ! command -v debuginfod >/dev/null 2>&1; then
  echo "SKIP: debuginfod (the server) is not installed: apt-get install debuginfod"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/server" "$work/run" "$work/cache"
server_pid=
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

cp "$prog" "$work/server/remote_prog"               # the debug copy lives only on the server
cp "$prog" "$work/run/remote_prog" && strip --strip-all "$work/run/remote_prog"
build_id=$(readelf -n "$prog" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
debuginfod -p "$port" -F "$work/server" -d "$work/server.sqlite" -t 0 -g 0 \
  > "$work/server.log" 2>&1 &
server_pid=$!
# Ready when it serves the program's debug info (it scans the directory at start-up).
i=0
until curl -sf --noproxy '*' -o /dev/null "$url/buildid/$build_id/debuginfo"; do
  i=$((i + 1))
  if [ $i -gt 200 ] || ! kill -0 "$server_pid" 2>/dev/null; then
    echo "FAIL: debuginfod on $url did not serve build-id $build_id"; tail -5 "$work/server.log"
    exit 1
  fi
  sleep 0.1
done

HEAPPROFILE="$work/run/p" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$work/run/remote_prog"
profile=$(ls "$work"/run/p.*.heap | sort | tail -n 1)
line=$(grep -n LARGE_BLOCK_LINE "$source" | cut -d: -f1)
status=0
export DEBUGINFOD_CACHE_PATH="$work/cache" no_proxy='*' NO_PROXY='*'
unset PPROF_BINARY_PATH

env -u DEBUGINFOD_URLS "$pprof" --text "$profile" > "$work/offline.txt" 2>&1
if grep -q 'remote_site::KeepLargeBlock' "$work/offline.txt"; then
  echo "FAIL: without DEBUGINFOD_URLS the stripped program's functions are named"
  cat "$work/offline.txt"; status=1
fi
if [ -n "$(ls -A "$work/cache")" ]; then
  echo "FAIL: without DEBUGINFOD_URLS the debuginfod cache was written"; status=1
fi
DEBUGINFOD_URLS=$url "$pprof" --text "$profile" > "$work/text.txt" 2>&1
if ! grep -q 'remote_site::KeepLargeBlock$' "$work/text.txt"; then
  echo "FAIL: DEBUGINFOD_URLS=$url: remote_site::KeepLargeBlock not named"
  cat "$work/text.txt"; status=1
fi
DEBUGINFOD_URLS=$url "$pprof" --text --lines "$profile" > "$work/lines.txt" 2>&1
if ! grep -q "remote_site::KeepLargeBlock symbol_path_prog.cc:$line\$" "$work/lines.txt"; then
  echo "FAIL: DEBUGINFOD_URLS=$url --lines: no symbol_path_prog.cc:$line"
  cat "$work/lines.txt"; status=1
fi

# The leak checker's report, in the stripped program's own process, with a fresh cache.
for urls in "" "$url"; do
  rm -rf "$work/cache" && mkdir -p "$work/cache"
  DEBUGINFOD_URLS=$urls HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work/run" \
    LD_PRELOAD="$lib" "$work/run/remote_prog" 2> "$work/leaks.txt" || true
  grep -q '^Leak of' "$work/leaks.txt" || { echo "FAIL: no leak report"; cat "$work/leaks.txt"; status=1; }
  if grep -q "remote_site::KeepLargeBlock" "$work/leaks.txt"; then named=yes; else named=no; fi
  want=yes; [ -z "$urls" ] && want=no
  if [ $named != $want ]; then
    echo "FAIL: leak report with DEBUGINFOD_URLS='$urls': KeepLargeBlock named: $named, want $want"
    cat "$work/leaks.txt"; status=1
  fi
done
[ $status -eq 0 ] && echo "PASS: names and lines from $url"
exit $status
