#!/usr/bin/env bash
# What the check's stop spends reading /proc/self/maps (maps_read.cc), for a few process sizes.
#
#   tests/bench/heapcheck/maps_read.sh [build-dir] [extra mappings...]
#
# The build directory (default: build) holds libheapkit.a. Default sizes: 0 1000 10000 30000.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
shift || true
sizes=("${@:-0 1000 10000 30000}")
work=$(mktemp -d /tmp/heapcheck-maps.XXXXXX)
trap 'rm -rf "$work"' EXIT
g++ -O2 -std=c++17 -I"$root" -o "$work/maps_read" "$here/maps_read.cc" "$build/libheapkit.a" \
  -lpthread -ldl -lz -lunwind -ldw -lelf
for n in ${sizes[*]}; do "$work/maps_read" "$n"; done
