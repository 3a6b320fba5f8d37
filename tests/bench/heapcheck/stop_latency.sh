#!/usr/bin/env bash
# Stop-the-world latency alone (stop_latency.cc), two source trees side by side: each tree's
# thread stopper (its headers and its build/libheapkit.a), threads taking the suspend signal
# and threads blocking every signal, the runs interleaved.
#
#   tests/bench/heapcheck/stop_latency.sh <before-tree> <after-tree> [threads...]
#
# A tree is a checkout whose build/ holds libheapkit.a. Default thread counts: 20 200 1000.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
before=$(cd "$1" && pwd)
after=$(cd "$2" && pwd)
shift 2
counts=("${@:-20 200 1000}")
work=$(mktemp -d /tmp/heapcheck-latency.XXXXXX)
trap 'rm -rf "$work"' EXIT
for t in before after; do
  tree=${!t}
  g++ -O2 -I"$tree" -o "$work/$t" "$here/stop_latency.cc" "$tree/build/libheapkit.a" \
    -lpthread -ldl -lz -lunwind -ldw -lelf
done
for n in ${counts[*]}; do
  for mode in signal blocking; do
    for t in before after; do
      printf '%-7s ' "$t"
      "$work/$t" "$n" "$mode" 21 2>/dev/null | tail -n 1
    done
  done
done
