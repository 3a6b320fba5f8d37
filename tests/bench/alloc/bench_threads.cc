// Multi-threaded workloads (wall-clock ns per operation, all threads together):
//   ttest1     ptmalloc t-test1 style: each thread owns private bins and randomly allocates,
//              frees and reallocs within them (max size given: 64 B or 32 KiB)
//   ttest2     t-test2 style: one shared pool of slots; threads swap in new blocks and free
//              whatever they took out, so most frees are cross-thread
//   prodcons   producer threads allocate, consumer threads free (via SPSC rings)
//   larson     larson server simulation: each thread replaces random blocks of its set; every
//              round the set is handed to a fresh thread and the old thread exits
//   churn      short-lived threads that exit while still holding memory (freed by the next)
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "bench.h"

namespace heapkit::bench {
namespace {

template <typename F>
double RunThreads(int n, F body) {
  std::vector<std::thread> threads;
  const double t0 = NowSeconds();
  for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
  for (auto& t : threads) t.join();
  return NowSeconds() - t0;
}

}  // namespace

BENCH_WORKLOAD(ttest1, "<threads> <max_size> <ops_per_thread>") {
  const int nthreads = int(ArgLong(argc, argv, 1, 2));
  const size_t max_size = size_t(ArgLong(argc, argv, 2, 64));
  const long ops = ArgLong(argc, argv, 3, 4000000);
  constexpr int kBins = 2000;
  const double secs = RunThreads(nthreads, [&](int id) {
    Rng rng(uint64_t(id) + 11);
    void* bins[kBins] = {};
    size_t sizes[kBins] = {};
    for (long i = 0; i < ops; ++i) {
      const size_t b = rng.Below(kBins);
      const uint64_t action = rng.Next() % 8;
      if (action < 3 && bins[b] != nullptr) {
        free(bins[b]);
        bins[b] = nullptr;
      } else if (action == 3 && bins[b] != nullptr) {
        sizes[b] = 1 + rng.Below(max_size);
        bins[b] = realloc(bins[b], sizes[b]);
        static_cast<char*>(bins[b])[0] = 1;
      } else {
        free(bins[b]);
        sizes[b] = 1 + rng.Below(max_size);
        bins[b] = malloc(sizes[b]);
        static_cast<char*>(bins[b])[sizes[b] - 1] = 1;
      }
    }
    for (void* p : bins) free(p);
  });
  Report("ns_per_op", secs * 1e9 / double(ops * nthreads));
  return 0;
}

BENCH_WORKLOAD(ttest2, "<threads> <max_size> <ops_per_thread>") {
  const int nthreads = int(ArgLong(argc, argv, 1, 2));
  const size_t max_size = size_t(ArgLong(argc, argv, 2, 64));
  const long ops = ArgLong(argc, argv, 3, 4000000);
  constexpr int kSlots = 4096;
  static std::atomic<void*> pool[kSlots];
  const double secs = RunThreads(nthreads, [&](int id) {
    Rng rng(uint64_t(id) + 101);
    for (long i = 0; i < ops; ++i) {
      const size_t s = 1 + rng.Below(max_size);
      void* p = malloc(s);
      static_cast<char*>(p)[0] = 1;
      void* old = pool[rng.Below(kSlots)].exchange(p, std::memory_order_acq_rel);
      free(old);  // usually allocated by another thread
    }
  });
  for (auto& s : pool) free(s.exchange(nullptr));
  Report("ns_per_op", secs * 1e9 / double(ops * nthreads));
  return 0;
}

BENCH_WORKLOAD(prodcons, "<pairs> <size> <objects_per_pair>") {
  const int npairs = int(ArgLong(argc, argv, 1, 1));
  const size_t size = size_t(ArgLong(argc, argv, 2, 64));
  const long objects = ArgLong(argc, argv, 3, 4000000);
  constexpr size_t kRing = 4096;
  struct alignas(64) Ring {
    std::atomic<size_t> head{0};
    alignas(64) std::atomic<size_t> tail{0};
    alignas(64) void* slots[kRing];
  };
  std::vector<Ring> rings(static_cast<size_t>(npairs));
  const double secs = RunThreads(2 * npairs, [&](int id) {
    Ring& r = rings[size_t(id / 2)];
    if (id % 2 == 0) {  // producer
      for (long i = 0; i < objects; ++i) {
        void* p = malloc(size);
        static_cast<char*>(p)[0] = 1;
        size_t h = r.head.load(std::memory_order_relaxed);
        while (h - r.tail.load(std::memory_order_acquire) >= kRing) std::this_thread::yield();
        r.slots[h % kRing] = p;
        r.head.store(h + 1, std::memory_order_release);
      }
    } else {  // consumer
      for (long i = 0; i < objects; ++i) {
        size_t t = r.tail.load(std::memory_order_relaxed);
        while (r.head.load(std::memory_order_acquire) == t) std::this_thread::yield();
        free(r.slots[t % kRing]);
        r.tail.store(t + 1, std::memory_order_release);
      }
    }
  });
  Report("ns_per_object", secs * 1e9 / double(objects * npairs));
  return 0;
}

BENCH_WORKLOAD(larson, "<threads> <rounds> <blocks_per_thread> <ops_per_round>") {
  const int nthreads = int(ArgLong(argc, argv, 1, 2));
  const int rounds = int(ArgLong(argc, argv, 2, 20));
  const int blocks = int(ArgLong(argc, argv, 3, 1000));
  const long ops = ArgLong(argc, argv, 4, 200000);
  std::vector<std::vector<void*>> sets(static_cast<size_t>(nthreads),
                                       std::vector<void*>(static_cast<size_t>(blocks)));
  for (auto& s : sets)
    for (auto& p : s) p = malloc(16 + size_t(rand() % 112));
  const double t0 = NowSeconds();
  for (int round = 0; round < rounds; ++round) {
    // A fresh thread per set per round: it frees blocks its predecessor allocated.
    RunThreads(nthreads, [&](int id) {
      Rng rng(uint64_t(round) * 977 + uint64_t(id));
      std::vector<void*>& set = sets[size_t(id)];
      for (long i = 0; i < ops; ++i) {
        const size_t k = rng.Below(size_t(blocks));
        free(set[k]);
        set[k] = malloc(16 + rng.Below(112));
        static_cast<char*>(set[k])[0] = 1;
      }
    });
  }
  const double secs = NowSeconds() - t0;
  for (auto& s : sets)
    for (void* p : s) free(p);
  Report("ns_per_op", secs * 1e9 / (double(ops) * rounds * nthreads));
  return 0;
}

BENCH_WORKLOAD(churn, "<threads_total> <objects_per_thread>") {
  const int total = int(ArgLong(argc, argv, 1, 4000));
  const int objects = int(ArgLong(argc, argv, 2, 200));
  // Each thread allocates `objects`, frees the previous thread's leftovers, and exits holding
  // half of its own. Two threads run at a time.
  std::vector<void*> left[2];
  const double t0 = NowSeconds();
  for (int t = 0; t < total; t += 2) {
    std::thread a[2];
    for (int k = 0; k < 2; ++k) {
      a[k] = std::thread([&, k, t] {
        Rng rng(uint64_t(t + k));
        for (void* p : left[k]) free(p);
        left[k].clear();
        std::vector<void*> mine;
        mine.reserve(size_t(objects));
        for (int i = 0; i < objects; ++i) {
          mine.push_back(malloc(8 + rng.Below(1024)));
          static_cast<char*>(mine.back())[0] = 1;
        }
        for (int i = 0; i < objects; i += 2) free(mine[size_t(i)]);
        for (int i = 1; i < objects; i += 2) left[k].push_back(mine[size_t(i)]);
      });
    }
    a[0].join();
    a[1].join();
  }
  const double secs = NowSeconds() - t0;
  for (auto& l : left)
    for (void* p : l) free(p);
  Report("us_per_thread", secs * 1e6 / total);
  return 0;
}

}  // namespace heapkit::bench
