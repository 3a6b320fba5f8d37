#!/usr/bin/env bash
# What the leak report loads into the checked program, before/after: a C program whose leaked
# object was allocated inside a stripped library (zlib's deflateInit; no -dbg package), run
# under HEAPCHECK=normal with two libheapkit.so builds, interleaved.
# Usage: report_load.sh <libheapkit.so A> <libheapkit.so B> [rounds=11]
set -euo pipefail
a=$1 b=$2 rounds=${3:-11}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cat >"$work/zleak.c" <<'C'
#include <stdlib.h>
#include <zlib.h>
int main(void) { z_stream* volatile z = calloc(1, sizeof(z_stream)); deflateInit(z, 6); z = 0; return 0; }
C
cc -g -O0 -o "$work/zleak" "$work/zleak.c" -lz
run() { env HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$1" "$work/zleak" "${@:2}"; }
for lib in "$a" "$b"; do
  n=$(LD_DEBUG=files run "$lib" 2>&1 >/dev/null |
      sed -n '/heapkit_ondemand.so \[0\];  dynamically/,$p' | grep -c 'calling init' || true)
  echo "$lib: shared objects initialised by the report: $n"
done
for ((i = 0; i < rounds; ++i)); do
  for lib in "$a" "$b"; do
    /usr/bin/time -f "$lib %e %U %S" -a -o "$work/times" env HEAPCHECK=normal \
      HEAP_CHECK_DUMP_DIRECTORY="$work" LD_PRELOAD="$lib" "$work/zleak" >/dev/null 2>&1 || true
  done
done
median() { sort -g | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]}'; }
for lib in "$a" "$b"; do
  wall=$(grep "^$lib " "$work/times" | awk '{print $2}' | median)
  cpu=$(grep "^$lib " "$work/times" | awk '{print $3 + $4}' | median)
  echo "$lib: median wall $wall s, CPU $cpu s ($rounds runs)"
done
