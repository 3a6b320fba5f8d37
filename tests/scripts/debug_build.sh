#!/usr/bin/env bash
# The debug build: -O0 (CMAKE_BUILD_TYPE=Debug) and the runtime's invariant checks
# (HEAPKIT_DCHECK, alloc/internal/dcheck.h) on. tests/run_tests.sh with the build in
# ${HEAPKIT_DEBUG_BUILD_DIR:-build-debug} configured with -DCMAKE_BUILD_TYPE=Debug
# -DHEAPKIT_DEBUG=ON: installs what is missing, builds, runs the whole ctest suite there,
# including the test that proves a failed check stops the program (alloc_unit_test's
# DcheckTest.*).
#   bash tests/scripts/debug_build.sh            the whole suite
#   bash tests/scripts/debug_build.sh --quick    unit and fast end-to-end tests only
# Other arguments go to ctest (e.g. -R heapcheck, -L alloc).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export HEAPKIT_BUILD_DIR=${HEAPKIT_DEBUG_BUILD_DIR:-$root/build-debug}
export HEAPKIT_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Debug -DHEAPKIT_DEBUG=ON"
exec "$root/tests/run_tests.sh" "$@"
