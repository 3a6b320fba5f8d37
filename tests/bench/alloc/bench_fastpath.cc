// Fast path: malloc+free pairs of one size. Three shapes:
//   pairs      free(malloc(n)) in a loop (the object is reused immediately)
//   live       ~1000 same-size objects stay live; each step frees one and allocates one
//   batch      allocate 100, free the 100 (in allocation order)
// Reports ns/pair. Run under callgrind at N and 2N to get instructions/pair exactly.
#include <cstdlib>
#include <cstring>

#include "bench.h"

namespace heapkit::bench {
namespace {

constexpr int kLive = 1000;
constexpr int kBatch = 100;

__attribute__((noinline)) void Pairs(size_t size, long n) {
  for (long i = 0; i < n; ++i) {
    void* p = malloc(size);
    Escape(p);
    free(p);
  }
}

__attribute__((noinline)) void Live(void** live, size_t size, long n) {
  int k = 0;
  for (long i = 0; i < n; ++i) {
    free(live[k]);
    live[k] = malloc(size);
    Escape(live[k]);
    k = (k + 7) % kLive;  // visit the set in a fixed scrambled order
  }
}

__attribute__((noinline)) void Batch(void** batch, size_t size, long n) {
  for (long done = 0; done < n; done += kBatch) {
    for (int i = 0; i < kBatch; ++i) {
      batch[i] = malloc(size);
      Escape(batch[i]);
    }
    for (int i = 0; i < kBatch; ++i) free(batch[i]);
  }
}

int Run(const char* shape, int argc, char** argv) {
  const size_t size = size_t(ArgLong(argc, argv, 1, 64));
  const long n = ArgLong(argc, argv, 2, 20000000);
  static void* slots[kLive];
  // Warm-up: the allocator initialises and the thread cache fills before timing.
  for (int i = 0; i < kLive; ++i) slots[i] = malloc(size);
  if (strcmp(shape, "batch") == 0) {
    for (int i = 0; i < kLive; ++i) free(slots[i]);
  }
  const long warm = n / 20 + kBatch;
  const double t0 = NowSeconds();
  if (strcmp(shape, "pairs") == 0) {
    Pairs(size, warm);
  } else if (strcmp(shape, "live") == 0) {
    Live(slots, size, warm);
  } else {
    Batch(slots, size, warm);
  }
  const double t1 = NowSeconds();
  if (strcmp(shape, "pairs") == 0) {
    Pairs(size, n);
  } else if (strcmp(shape, "live") == 0) {
    Live(slots, size, n);
  } else {
    Batch(slots, size, n);
  }
  const double t2 = NowSeconds();
  (void)t0;
  (void)t1;
  Report("ns_per_pair", (t2 - t1) * 1e9 / double(n));
  return 0;
}

}  // namespace

BENCH_WORKLOAD(pairs, "<size> <n>: free(malloc(size)) n times") { return Run("pairs", argc, argv); }
BENCH_WORKLOAD(live, "<size> <n>: replace one of 1000 live objects n times") {
  return Run("live", argc, argv);
}
BENCH_WORKLOAD(batch, "<size> <n>: malloc 100 then free 100, n pairs in all") {
  return Run("batch", argc, argv);
}

}  // namespace heapkit::bench
