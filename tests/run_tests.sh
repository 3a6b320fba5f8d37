#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs the whole suite (ctest).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tests/scripts/install_deps.sh"
"$root/tests/scripts/build.sh"
build=${HEAPKIT_BUILD_DIR:-$root/build}
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 600 "$@"
