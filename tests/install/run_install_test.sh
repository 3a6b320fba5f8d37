#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, checks the installed layout, then builds the
# consumer against it both ways (CMake find_package; pkg-config and plain -l flags, shared and
# static) and runs every variant: each must really use heapkit's malloc.
#   run_install_test.sh <build-dir> <cmake> <consumer-source-dir>
set -euo pipefail
build=$1
cmake=$2
consumer=$3
work=$(mktemp -d /tmp/heapkit-install.XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(ls -d "$prefix"/lib* | head -1)
for f in "$libdir"/libheapkit.so "$libdir"/libheapkit_ondemand.so "$libdir"/libheapkit.a \
         "$libdir"/libheapkit_minimal.so \
         "$libdir"/libheapkit_minimal.a "$libdir"/pkgconfig/heapkit.pc \
         "$libdir"/pkgconfig/heapkit_minimal.pc "$libdir"/cmake/heapkit/heapkitConfig.cmake \
         "$libdir"/cmake/heapkit/heapkitConfigVersion.cmake \
         "$prefix"/include/gperftools/malloc_extension.h \
         "$prefix"/include/gperftools/malloc_extension_c.h \
         "$prefix"/include/gperftools/malloc_hook.h "$prefix"/include/gperftools/malloc_hook_c.h; do
  [[ -e $f ]] || fail "not installed: ${f#$prefix/}"
done
for h in heap-profiler.h heap-checker.h; do
  [[ -e $prefix/include/gperftools/$h ]] || echo "note: include/gperftools/$h not installed (yet)"
done
[[ -x $prefix/bin/pprof-tool ]] || echo "note: bin/pprof-tool not installed (no such target yet)"
if ldd "$libdir/libheapkit_minimal.so" | grep -Eq 'libunwind|libdw'; then
  fail "libheapkit_minimal.so depends on libunwind/libdw"
fi
# libheapkit.so loads libunwind/libdw only through libheapkit_ondemand.so, found beside it.
if ldd "$libdir/libheapkit.so" | grep -Eq 'libunwind|libdw|libstdc'; then
  fail "libheapkit.so depends on libunwind/libdw/libstdc++"
fi
HEAPPROFILE="$work/prof" LD_PRELOAD="$libdir/libheapkit.so" LD_DEBUG=files /bin/true \
  2>"$work/preload.log" || fail "HEAPPROFILE with the installed libheapkit.so"
grep -q "calling init: $libdir/libheapkit_ondemand.so" "$work/preload.log" ||
  fail "HEAPPROFILE did not load $libdir/libheapkit_ondemand.so:" \
       "$(grep 'calling init' "$work/preload.log")"
ls "$work"/prof.*.heap >/dev/null 2>&1 ||
  fail "HEAPPROFILE wrote no profile from the installed tree"
echo "installed: $(cd "$prefix" && find . -type f | sort | tr '\n' ' ')"

# 1. CMake package.
"$cmake" -S "$consumer" -B "$work/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "configure consumer (find_package)"; }
"$cmake" --build "$work/cmake-build" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "build consumer (find_package)"; }
"$work/cmake-build/consumer_heapkit" shared
"$work/cmake-build/consumer_minimal" shared
"$work/cmake-build/consumer_heapkit_static" static
"$work/cmake-build/consumer_minimal_static" static

# 2. pkg-config and plain flags.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cxx=${CXX:-g++}
src=$consumer/consumer.cc
for pc in heapkit heapkit_minimal; do
  # shared: exactly what the .pc says, plus an rpath to find the library at run time
  $cxx -O1 "$src" -o "$work/pc_$pc" $(pkg-config --cflags --libs $pc) -ldl -Wl,-rpath,"$libdir" ||
    fail "pkg-config shared build ($pc)"
  "$work/pc_$pc" shared
  # static: the archive for heapkit itself, the private dependencies from --static
  static_libs=$(pkg-config --static --libs $pc | sed "s/-l$pc\\b/-Wl,-Bstatic -l$pc -Wl,-Bdynamic/")
  $cxx -O1 "$src" -o "$work/pc_${pc}_static" $(pkg-config --cflags $pc) $static_libs -ldl ||
    fail "pkg-config static build ($pc): $static_libs"
  ldd "$work/pc_${pc}_static" | grep -q libheapkit && fail "static consumer ($pc) needs libheapkit.so"
  "$work/pc_${pc}_static" static
done
# plain flags, no pkg-config: -I -L -lheapkit_minimal
$cxx -O1 "$src" -o "$work/plain" -I"$prefix/include" -L"$libdir" -lheapkit_minimal -ldl \
  -Wl,-rpath,"$libdir" || fail "plain -lheapkit_minimal build"
"$work/plain" shared
echo "PASS: installed tree usable through find_package, pkg-config and plain -l, shared and static"
