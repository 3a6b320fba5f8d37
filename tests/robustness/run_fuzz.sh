#!/usr/bin/env bash
# Long-suite fuzzing of pprof-tool's profile parser + offline pipeline (tests/pprof_tool/fuzz,
# libFuzzer with ASan+UBSan), for a bounded time. ctest runs the same target for 20 s; this is
# the long run recorded in tests/robustness/RESULTS.md.
#
#   tests/robustness/run_fuzz.sh [build dir] [seconds]      (defaults: build, 600)
#
# Starts from the seed corpus tests/pprof_tool/fuzz/corpus (plus what earlier runs found, kept
# in <build>/fuzz-long/corpus), writes crashers to <build>/fuzz-long/artifacts/ and exits 1
# if there is one: minimise it (parser_fuzzer -minimize_crash=1 <file>), fix the bug, and add
# the input to tests/pprof_tool/fuzz/corpus/ so the ctest run replays it forever.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
seconds=${2:-600}
fuzzer=$build/tests/pprof_tool/fuzz/parser_fuzzer
if [[ ! -x $fuzzer ]]; then
  echo "run_fuzz.sh: $fuzzer not built (needs clang++; ninja -C $build pprof_parser_fuzz)" >&2
  exit 2
fi
work=$build/fuzz-long
mkdir -p "$work/corpus" "$work/artifacts"
cp -n "$root"/tests/pprof_tool/fuzz/corpus/* "$work/corpus/"
log=$work/fuzz.log
echo "fuzzing $fuzzer for $seconds s; log $log"
set +e
ASAN_OPTIONS=detect_leaks=1 "$fuzzer" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/corpus" \
  >"$log" 2>&1
status=$?
set -e
grep -E '^#[0-9]+.*(DONE|pulse)' "$log" | tail -2
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb|new_units_added)' "$log"
echo "corpus: $(ls "$work/corpus" | wc -l) inputs; crashers: $(ls "$work/artifacts" | wc -l)"
if [[ $status -ne 0 ]] || [[ -n $(ls "$work/artifacts") ]]; then
  echo "run_fuzz.sh: the fuzzer failed (status $status); see $log and $work/artifacts" >&2
  exit 1
fi
