#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole suite (ctest).
#   bash tests/run_tests.sh            everything (what CI runs)
#   bash tests/run_tests.sh --quick    unit and fast end-to-end tests only (labels: tests/README.md)
# Other arguments go to ctest (e.g. -R heapcheck, -L security).
# Environment: HEAPKIT_BUILD_DIR (default build/), HEAPKIT_CMAKE_ARGS (extra configure
# arguments, split on spaces, e.g. "-DHEAPKIT_DEBUG=ON": tests/scripts/debug_build.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ctest_args=()
for a in "$@"; do
  if [[ $a == --quick ]]; then
    ctest_args+=(-LE 'slow|fuzz|bench|install|real_programs')
  else
    ctest_args+=("$a")
  fi
done
"$root/tests/scripts/install_deps.sh"
read -r -a cmake_args <<< "${HEAPKIT_CMAKE_ARGS:-}"
"$root/tests/scripts/build.sh" "${cmake_args[@]}"
build=${HEAPKIT_BUILD_DIR:-$root/build}
cd "$build"
# ctest, then one line per skipped test saying why (tests/scripts/run_ctest.sh).
"$root/tests/scripts/run_ctest.sh" --output-on-failure -j"$(nproc)" --timeout 600 "${ctest_args[@]}"
