#!/usr/bin/env bash
# Configures and builds heapkit with HEAPKIT_BUILD_PROFILER, HEAPKIT_BUILD_PPROF_TOOL and
# HEAPKIT_BUILD_TESTS OFF: only libheapkit_minimal is built, and none of the other parts'
# dependencies (libunwind, libdw, graphviz, CLI11, protobuf) is looked for — so a machine
# without them can build the allocator. Usage: run_minimal_only_build.sh <source> <workdir>
set -u
src=$1
work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Release -DHEAPKIT_BUILD_PROFILER=OFF \
      -DHEAPKIT_BUILD_PPROF_TOOL=OFF -DHEAPKIT_BUILD_TESTS=OFF >"$work/configure.log" 2>&1 \
  || fail "configure: $(tail -5 "$work/configure.log")"
for dep in LIBUNWIND_FOUND LIBDW_FOUND LIBGVC_FOUND CLI11_DIR Protobuf_INCLUDE_DIR ZLIB_INCLUDE_DIR; do
  ! grep -q "^$dep" "$work/CMakeCache.txt" || fail "configure looked for $dep"
done
cmake --build "$work" -j"$(nproc)" >"$work/build.log" 2>&1 || fail "build: $(tail -5 "$work/build.log")"
[[ -f "$work/libheapkit_minimal.so" && -f "$work/libheapkit_minimal.a" ]] || fail "no libheapkit_minimal"
[[ ! -e "$work/libheapkit.so" && ! -e "$work/pprof-tool/pprof-tool" ]] || fail "built more than asked"
needed=$(readelf -d "$work/libheapkit_minimal.so" | grep NEEDED)
! grep -qE 'unwind|libdw|libelf|gvc|protobuf' <<<"$needed" || fail "minimal library needs: $needed"
LD_PRELOAD="$work/libheapkit_minimal.so" /bin/true || fail "preloading the minimal library failed"
# The Release build's libraries reference libc alone too (the suite checks its own build type).
"$src/tests/alloc/override/check_runtime_symbols.sh" "$src/alloc/internal/cxx_runtime_weak.h" \
  "$work/libheapkit_minimal.a" "$work/libheapkit_minimal.so" >"$work/symbols.log" 2>&1 ||
  fail "Release library symbols: $(grep FAIL "$work/symbols.log")"
echo "PASS: libheapkit_minimal builds alone, without the profiler's or pprof-tool's dependencies"
