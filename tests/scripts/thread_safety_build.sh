#!/usr/bin/env bash
# The runtime (alloc/, profiler/, heapcheck/: the code built with heapkit_runtime_flags) compiled
# by clang with its thread-safety analysis as errors (-DHEAPKIT_THREAD_SAFETY_ANALYSIS=ON:
# -Wthread-safety -Werror; the annotations are alloc/internal/thread_annotations.h), in
# ${HEAPKIT_TSA_BUILD_DIR:-build-thread-safety}. First proves the analysis is on: a guarded
# variable read without its lock must not compile, nor the profiler state's dump files read
# without the state lock. Then builds the runtime's object libraries only (no linking, no tests,
# no pprof-tool), at -O0. Exit status 0 when both hold, 77 without clang++
# (tests/scripts/install_deps.sh installs it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HEAPKIT_TSA_BUILD_DIR:-$root/build-thread-safety}
command -v clang++ >/dev/null || { echo "SKIP: clang++ is not installed"; exit 77; }
mkdir -p "$build"
cat >"$build/violation.cc" <<'CC'
#include "alloc/internal/spin_lock.h"
heapkit::internal::SpinLock lock;
int value HEAPKIT_GUARDED_BY(lock) = 0;
int ReadWithoutTheLock() { return value; }
CC
if out=$(clang++ -std=c++20 -I"$root" -fsyntax-only -Wthread-safety -Werror \
           "$build/violation.cc" 2>&1); then
  echo "FAIL: a guarded read without its lock compiled: the annotations are not seen"; exit 1
fi
grep -q "requires holding mutex 'lock'" <<<"$out" ||
  { echo "FAIL: unexpected compiler output:"; echo "$out"; exit 1; }
# The profiler state's annotations (profiler/profiler_state.h): its dump files read without the
# state lock must not compile either.
cat >"$build/profiler_violation.cc" <<'CC'
#include "profiler/profiler_state.h"
void NameWithoutTheLock(char* out) { heapkit::prof::g_profiler.files.NextName(out, 16); }
CC
if out=$(clang++ -std=c++20 -I"$root" -fsyntax-only -Wthread-safety -Werror \
           "$build/profiler_violation.cc" 2>&1); then
  echo "FAIL: the profiler's dump files were read without the state lock and it compiled"; exit 1
fi
grep -q "requires holding mutex 'g_profiler.lock'" <<<"$out" ||
  { echo "FAIL: unexpected compiler output:"; echo "$out"; exit 1; }
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DHEAPKIT_THREAD_SAFETY_ANALYSIS=ON \
  -DHEAPKIT_BUILD_PPROF_TOOL=OFF -DHEAPKIT_BUILD_TESTS=OFF -DHEAPKIT_BUILD_BENCHMARKS=OFF \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target heapkit_alloc_entry_minimal heapkit_alloc_entry_full \
  heapkit_alloc_objs heapkit_profiler_top heapkit_profiler_control heapkit_profiler_output \
  heapkit_profiler_record heapkit_profiler_time heapkit_profiler_format heapkit_profiler_table \
  heapkit_profiler_capture heapkit_profiler_base heapkit_heapcheck_objs heapkit_dlclose_interposer \
  heapkit_on_demand_dlopen heapkit_on_demand_linked heapkit_symbolizer_on_demand
echo "thread-safety analysis: a violation is refused, the runtime builds clean"
