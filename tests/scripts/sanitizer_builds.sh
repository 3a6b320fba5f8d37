#!/usr/bin/env bash
# Sanitizer builds (tests/README.md, "Sanitizer builds"): configures build-asan, build-ubsan and
# build-tsan with -DHEAPKIT_SANITIZE=<kind> (tests/sanitize/sanitize.cmake says what is
# instrumented and why), builds the targets the selected tests need and runs those tests.
#   tests/scripts/sanitizer_builds.sh [address|undefined|thread|all]   (default: all)
# Exit status: 0 when every selected test passed in every build, 1 otherwise, 2 on bad usage.
# Environment: HEAPKIT_SANITIZE_BUILD_ROOT (default: the source tree) holds the build-* dirs;
# CMAKE_*_COMPILER_LAUNCHER etc. are honoured as for any CMake build.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out_root=${HEAPKIT_SANITIZE_BUILD_ROOT:-$root}
jobs=${HEAPKIT_JOBS:-2}

# kind -> build directory, label of the tests that run under it (set in tests/*/CMakeLists.txt),
# targets those tests need.
pprof_targets="pprof-tool pprof_tool_unit_test pprof_proto_unit_test pprof_render_test
  profiler_symbolize_test"
golden_targets="pprof_golden_pie pprof_golden_nopie pprof_golden_lib heapkit"
runtime_targets="alloc_unit_test profiler_capture_test profiler_table_test profiler_format_test
  profiler_time_test profiler_http_test heapcheck_flood_test heapcheck_unit_test heapkit_stress_api"
configure_build_test() {
  local kind=$1 dir label targets
  case $kind in
    address) dir=build-asan label=asan targets=$pprof_targets ;;
    undefined) dir=build-ubsan label=ubsan targets="$pprof_targets $golden_targets $runtime_targets" ;;
    thread) dir=build-tsan label=tsan targets="alloc_unit_test heapkit_stress_api" ;;
  esac
  local build=$out_root/$dir
  echo "== $kind: $build"
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DHEAPKIT_SANITIZE="$kind" -DHEAPKIT_BUILD_BENCHMARKS=OFF >"$build/configure.log" 2>&1 ||
    { echo "FAIL: $kind: configure failed (see $build/configure.log)"; return 1; }
  # shellcheck disable=SC2086
  nice cmake --build "$build" -j"$jobs" --target $targets ||
    { echo "FAIL: $kind: build failed"; return 1; }
  (cd "$build" && ctest -j"$jobs" --output-on-failure --timeout 600 -L "^$label\$" --no-tests=error) ||
    { echo "FAIL: $kind: tests failed"; return 1; }
  echo "PASS: $kind"
}

case ${1:-all} in
  address|undefined|thread) kinds=("$1") ;;
  all) kinds=(address undefined thread) ;;
  *) echo "usage: $0 [address|undefined|thread|all]" >&2; exit 2 ;;
esac
status=0
for kind in "${kinds[@]}"; do
  configure_build_test "$kind" || status=1
done
exit $status
