#!/bin/sh
# The demo's step "who allocated the most" (tests/demo/run_demo.sh: --top=5 --alloc_space)
# answers with demo::ChurnStrings, the function whose std::string churn is 88 % of the bytes.
# Usage: demo_top_check.sh <pprof-tool> <libheapkit.so> <demo program> <work dir>
set -eu
pprof=$1 lib=$2 demo=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
HEAPPROFILE="$work/prof" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$lib" "$demo" > /dev/null
last=$(ls "$work"/prof.*.heap | sort | tail -n 1)
"$pprof" --top=5 --alloc_space "$demo" "$last" > "$work/top.txt"
first=$(awk '/ name$/ {getline; print $NF; exit}' "$work/top.txt")
if [ "$first" != "demo::ChurnStrings" ]; then
  echo "FAIL: the first row is '$first', want demo::ChurnStrings"
  cat "$work/top.txt"
  exit 1
fi
echo "PASS: demo::ChurnStrings first"
