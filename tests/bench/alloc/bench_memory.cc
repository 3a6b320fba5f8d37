// Large blocks, memory footprint and release to the OS:
//   large      repeated 5-25 MiB blocks, every page touched (reports user+sys CPU seconds)
//   footprint  RSS per live object for N objects of one size, then RSS after freeing them all
//   startup    RSS of a trivial program (one small malloc)
//   release    RSS after allocating and freeing 512 MiB of mixed blocks, then after 1 s of
//              light allocator activity, then after <churn> MiB of 1 MiB malloc/free pairs
//              (how fast freed memory goes back to the OS)
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "bench.h"

namespace heapkit::bench {

BENCH_WORKLOAD(large, "<iterations>: malloc 5-25 MiB, touch every page, free") {
  const long iters = ArgLong(argc, argv, 1, 300);
  Rng rng(5);
  const double cpu0 = CpuSeconds();
  void* keep = nullptr;
  for (long i = 0; i < iters; ++i) {
    const size_t n = (5u << 20) + rng.Below(20u << 20);
    char* p = static_cast<char*>(malloc(n));
    for (size_t off = 0; off < n; off += 4096) p[off] = char(off);
    Escape(p);
    if (i % 4 == 0) {  // keep one block around now and then, as a real program would
      free(keep);
      keep = p;
    } else {
      free(p);
    }
  }
  free(keep);
  Report("cpu_seconds", CpuSeconds() - cpu0);
  return 0;
}

BENCH_WORKLOAD(footprint, "<size> <count>: RSS per live object, then RSS after free") {
  const size_t size = size_t(ArgLong(argc, argv, 1, 16));
  const long count = ArgLong(argc, argv, 2, 10000000);
  void** ptrs = static_cast<void**>(malloc(sizeof(void*) * size_t(count)));
  memset(ptrs, 0, sizeof(void*) * size_t(count));  // resident before the baseline
  const size_t base = RssBytes();
  for (long i = 0; i < count; ++i) {
    ptrs[i] = malloc(size);
    memset(ptrs[i], 1, size < 16 ? size : 16);
  }
  const size_t full = RssBytes();
  for (long i = 0; i < count; ++i) free(ptrs[i]);
  const size_t after = RssBytes();
  Report("bytes_per_object", double(full - base) / double(count));
  Report("overhead_ratio", double(full - base) / double(count) / double(size));
  Report("rss_after_free_mib", double(after > base ? after - base : 0) / 1048576.0);
  free(ptrs);
  return 0;
}

BENCH_WORKLOAD(startup, ": RSS of a trivial program after one malloc") {
  void* p = malloc(10);
  Escape(p);
  free(p);
  Report("rss_mib", double(RssBytes()) / 1048576.0);
  return 0;
}

BENCH_WORKLOAD(release,
               "<mib> [ms] [churn_mib]: RSS after free, after ms of activity, after churn") {
  const long mib = ArgLong(argc, argv, 1, 512);
  const double activity = double(ArgLong(argc, argv, 2, 1000)) / 1000.0;
  const size_t base = RssBytes();
  const long n = mib * 16;  // 64 KiB average
  void** ptrs = static_cast<void**>(calloc(size_t(n), sizeof(void*)));
  Rng rng(3);
  for (long i = 0; i < n; ++i) {
    const size_t s = 1024 + rng.Below(127 * 1024);
    ptrs[i] = malloc(s);
    memset(ptrs[i], 1, s);
  }
  const size_t full = RssBytes();
  for (long i = 0; i < n; ++i) free(ptrs[i]);
  const size_t freed = RssBytes();
  // Light activity for 1 s: small allocations and an occasional page-level one.
  const double t0 = NowSeconds();
  void* ring[64] = {};
  long step = 0;
  while (NowSeconds() - t0 < activity) {
    for (int i = 0; i < 1000; ++i, ++step) {
      free(ring[step % 64]);
      ring[step % 64] = malloc(step % 100 == 0 ? 300000 : 64);
    }
    usleep(1000);
  }
  const size_t later = RssBytes();
  // Page-heap traffic: allocate and free `churn` MiB in 1 MiB blocks (what drives release in a
  // tcmalloc-style page heap, where TCMALLOC_RELEASE_RATE is pages released per page freed).
  const long churn = ArgLong(argc, argv, 3, 0);
  for (long i = 0; i < churn; ++i) {
    char* b = static_cast<char*>(malloc(1u << 20));
    b[0] = 1;
    free(b);
  }
  const size_t churned = RssBytes();
  for (void* p : ring) free(p);
  free(ptrs);
  auto mb = [&](size_t v) { return double(v > base ? v - base : 0) / 1048576.0; };
  Report("peak_mib", mb(full));
  Report("after_free_mib", mb(freed));
  Report("after_1s_mib", mb(later));
  Report("after_churn_mib", mb(churned));
  return 0;
}

}  // namespace heapkit::bench
