#!/usr/bin/env bash
# The README's main command: installs what is missing, builds heapkit, and shows it at work on
# tests/demo/demo.cc — the allocator, the leak checker, the heap profiler and pprof-tool.
# Output files go to ${HEAPKIT_DEMO_DIR:-/tmp/heapkit-demo}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
# Its own build directory, without the test suite: the demo needs neither the tests nor their
# tools (Chromium, Go, python's test package), and does not disturb a test build.
build=${HEAPKIT_DEMO_BUILD_DIR:-$root/build-demo}
out=${HEAPKIT_DEMO_DIR:-/tmp/heapkit-demo}

printf '==> Installing what the demo needs (if missing)\n'
"$root/tests/scripts/install_deps.sh" --demo
printf '==> Building heapkit without its tests in %s\n' "$build"
HEAPKIT_BUILD_DIR="$build" "$root/tests/scripts/build.sh" -DHEAPKIT_BUILD_TESTS=OFF
rm -rf "$out" && mkdir -p "$out"
demo="$out/demo"
pprof="$build/pprof-tool/pprof-tool"
g++ -std=c++20 -O2 -g -fno-omit-frame-pointer -o "$demo" "$root/tests/demo/demo.cc"

step() { printf '\n\033[1m==> %s\033[0m\n$ %s\n' "$1" "$2"; }

step "1. The allocator alone (libheapkit_minimal.so) against glibc: 20 million malloc/free pairs" \
     "LD_PRELOAD=libheapkit_minimal.so $demo churn"
TIMEFORMAT='   %R s wall, %U s user'
echo "glibc:";   time "$demo" churn >/dev/null
echo "heapkit:"; time LD_PRELOAD="$build/libheapkit_minimal.so" "$demo" churn >/dev/null

step "2. The leak checker finds the two bugs (exit status 1 means: leaks found)" \
     "HEAPCHECK=normal LD_PRELOAD=libheapkit.so $demo"
status=0
HEAPCHECK=normal HEAP_CHECK_DUMP_DIRECTORY="$out" LD_PRELOAD="$build/libheapkit.so" "$demo" \
  || status=$?
echo "(exit status $status)"

step "3. The heap profiler: who holds memory (exact mode, every allocation recorded)" \
     "HEAPPROFILE=$out/prof TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD=libheapkit.so $demo"
HEAPPROFILE="$out/prof" TCMALLOC_SAMPLE_PARAMETER=1 LD_PRELOAD="$build/libheapkit.so" "$demo" \
  >/dev/null
last=$(ls "$out"/prof.*.heap | sort | tail -n 1)

step "4. pprof-tool: top holders of in-use memory" "pprof-tool --text $demo $last"
"$pprof" --text "$demo" "$last"

step "5. pprof-tool: who allocated the most over the run" \
     "pprof-tool --top=5 --alloc_space $demo $last"
"$pprof" --top=5 --alloc_space "$demo" "$last"

step "6. Pictures" "pprof-tool --svg / --flamegraph"
"$pprof" --svg --output="$out/inuse.svg" "$demo" "$last"
"$pprof" --flamegraph="$out/flame.svg" "$demo" "$last"
leakfile=$(ls "$out"/demo.*._main_-end.heap 2>/dev/null | head -n 1 || true)
if [[ -n "$leakfile" ]]; then
  "$pprof" --svg --heapcheck --inuse_objects --output="$out/leaks.svg" "$demo" "$leakfile"
fi
echo "call graph:  $out/inuse.svg"
echo "flame graph: $out/flame.svg"
[[ -n "$leakfile" ]] && echo "leak graph:  $out/leaks.svg"
echo
echo "Demo finished."
