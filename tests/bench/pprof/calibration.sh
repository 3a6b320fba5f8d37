#!/bin/sh
# The calibration of pprof-tool's 95 % intervals against exact mode, the full grid: the three
# workloads of tests/pprof_tool/e2e/calibration_prog.cc x SEEDS seeds x RATES, with the time
# settings (HEAP_PROFILE_LIFETIMES, _AGES, _PEAK) off, all on, and each alone (SETTINGS; the
# exact run of a seed is shared by all); in-use bytes per function with
# >= 10 expected samples held to coverage 93-97 % and pooled rms z 0.9-1.1, then the spread of
# repeated runs beside the intervals; all written to $WORK/calibration.txt. Figures: RESULTS.md,
# "Sampling error".
# Usage: tests/bench/pprof/calibration.sh [BUILD_DIR]   (env: SEEDS=20 RATES=65536,524288,2097152
#        SETTINGS=off,on,lifetimes,ages,peak WORK=/tmp/heapkit-calibration)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=${1:-$ROOT/build}
W=${WORK:-/tmp/heapkit-calibration}
python3 "$ROOT/tests/pprof_tool/e2e/calibration_check.py" "$BUILD/pprof-tool/pprof-tool" \
  "$BUILD/libheapkit.so" "$BUILD/tests/pprof_tool/e2e/pprof_calibration_prog" "$W" \
  --seeds "${SEEDS:-20}" --rates "${RATES:-65536,524288,2097152}" \
  --time_settings "${SETTINGS:-off,on,lifetimes,ages,peak}" --coverage 0.93:0.97 --rms 0.9:1.1 \
  --results "$W/calibration.txt"
