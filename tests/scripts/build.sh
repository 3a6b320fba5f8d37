#!/usr/bin/env bash
# Configures and builds heapkit into ${HEAPKIT_BUILD_DIR:-build}. Warnings are errors in CI.
# Extra arguments go to the configure step (e.g. -DHEAPKIT_BUILD_TESTS=OFF).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HEAPKIT_BUILD_DIR:-$root/build}
werror=OFF
[[ "${CI:-}" == "true" ]] && werror=ON
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DHEAPKIT_WERROR="$werror" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
