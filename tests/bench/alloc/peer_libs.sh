# Sourced by the start-up and small-program RSS benchmarks (exec_startup.sh, small_rss.sh).
#   peer_libs <build dir> [name=lib.so ...]  sets names[] and libs[]: glibc (no preload), the two
#       heapkit libraries of <build dir>, mimalloc, jemalloc, tcmalloc_minimal (Debian's), then
#       the extra rows given (e.g. an older build's library for a before/after pair)
#   median  prints the median of the whitespace-separated numbers on stdin
peer_libs() {
  local build=$1 lib=/usr/lib/x86_64-linux-gnu extra
  shift
  names=(glibc heapkit_minimal heapkit mimalloc jemalloc tcmalloc_minimal)
  libs=("" "$build/libheapkit_minimal.so" "$build/libheapkit.so" "$lib/libmimalloc.so.2"
        "$lib/libjemalloc.so.2" "$lib/libtcmalloc_minimal.so.4")
  for extra in "$@"; do names+=("${extra%%=*}"); libs+=("${extra#*=}"); done
}
median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
