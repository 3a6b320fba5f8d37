#!/bin/sh
# profile.proto benchmarks of pprof-tool (medians of RUNS, the two commands of a row
# interleaved run by run, so machine noise hits both alike):
#   convert: `--proto` vs `--text` on the 12,000-stack benchmark profile (run.sh's big case)
#   read:    `pprof-tool --text` vs `go tool pprof -top` on a ~150,000-stack profile.proto
#            (the synthetic legacy profile converted once with --proto: go pprof's home format)
# Usage: tests/bench/pprof/proto_bench.sh [BUILD_DIR]   (env: RUNS=5 STACKS=12000 BIG=150000)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-/tmp/build-pprof}
PPROF_TOOL=${PPROF_TOOL:-$BUILD/pprof-tool/pprof-tool}
RUNS=${RUNS:-5}
STACKS=${STACKS:-12000}
BIG=${BIG:-150000}
W=${WORK:-/tmp/heapkit-pprof-bench}
mkdir -p "$W"
unset DEBUGINFOD_URLS || true
export GOCACHE="$W/gocache" HOME="$W" PPROF_TMPDIR="$W"

if [ ! -x "$W/bigprog" ]; then
  python3 "$HERE/gen_program.py" "$W/src" "${FILES:-40}" "${PER:-100}"
  ls "$W"/src/*.cc | xargs -P2 -I{} sh -c 'g++ -O2 -g -fno-pie -c {} -o {}.o'
  g++ -no-pie -o "$W/bigprog" "$W"/src/*.o
fi
[ -f "$W/big.heap" ] || python3 "$HERE/gen_profile.py" "$W/bigprog" "$STACKS" "$W/big.heap" >&2
[ -f "$W/big$BIG.heap" ] || python3 "$HERE/gen_profile.py" "$W/bigprog" "$BIG" "$W/big$BIG.heap" 7 >&2
"$PPROF_TOOL" --proto -o "$W/big$BIG.pb.gz" "$W/bigprog" "$W/big$BIG.heap"

# pair <label> <cmd A> -- <cmd B>: RUNS interleaved runs; prints "A: median s, B: median s".
pair() {
  label=$1; shift
  a=""; b=""
  while [ "$1" != "--" ]; do a="$a '$1'"; shift; done
  shift
  for arg in "$@"; do b="$b '$arg'"; done
  : > "$W/$label.a"; : > "$W/$label.b"
  i=0
  while [ $i -lt "$RUNS" ]; do
    /usr/bin/time -f "%e %M" -o "$W/t" sh -c "$a > /dev/null 2>&1"; tail -1 "$W/t" >> "$W/$label.a"
    /usr/bin/time -f "%e %M" -o "$W/t" sh -c "$b > /dev/null 2>&1"; tail -1 "$W/t" >> "$W/$label.b"
    i=$((i + 1))
  done
  ma=$(sort -n "$W/$label.a" | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)] " s, " m[int((NR+1)/2)] " KB"}')
  mb=$(sort -n "$W/$label.b" | awk '{a[NR]=$1; m[NR]=$2} END {print a[int((NR+1)/2)] " s, " m[int((NR+1)/2)] " KB"}')
  ra=$(sort -n "$W/$label.a" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  rb=$(sort -n "$W/$label.b" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "| $label | $ma | $mb | $(awk -v a="$ra" -v b="$rb" 'BEGIN {printf "%.2f", a / b}') |"
}

echo "| case | A (median s, max RSS) | B (median s, max RSS) | A / B |"
echo "|---|---|---|---|"
pair "convert $STACKS stacks: A = --proto, B = --text" \
  "$PPROF_TOOL" --proto -o "$W/big.pb.gz" "$W/bigprog" "$W/big.heap" -- \
  "$PPROF_TOOL" --text "$W/bigprog" "$W/big.heap"
pair "read $BIG-stack proto: A = pprof-tool --text, B = go tool pprof -top" \
  "$PPROF_TOOL" --text "$W/big$BIG.pb.gz" -- \
  go tool pprof -top "$W/big$BIG.pb.gz"
ls -l "$W/big.pb.gz" "$W/big$BIG.pb.gz" | awk '{print "size: " $5 " " $9}'
# Same totals from both readers of the 150k proto.
"$PPROF_TOOL" --text --show_bytes "$W/big$BIG.pb.gz" | grep -m1 "total"
go tool pprof -top -unit=B "$W/big$BIG.pb.gz" 2>/dev/null | grep -m1 "total"
