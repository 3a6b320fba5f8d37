// rpmalloc's rptest-style cross-thread frees: every thread keeps a working set of blocks of
// 8 B .. 16 000 B (uniform) and replaces a random one per step; the block it takes out is not
// freed by itself but passed (SPSC ring) to the next thread in a ring of threads, which frees it.
// So half of every thread's frees are of memory another thread allocated, and the blocks of one
// thread's spans are freed by its neighbour. Wall ns per step, all threads together.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "bench.h"

namespace heapkit::bench {
namespace {

constexpr size_t kMinBlock = 8, kMaxBlock = 16000;
constexpr size_t kWorkingSet = 256;
constexpr size_t kRing = 4096;  // deep enough that a descheduled receiver rarely stalls the sender

struct alignas(64) Ring {
  std::atomic<size_t> head{0};              // written by the sender
  alignas(64) std::atomic<size_t> tail{0};  // written by the receiver
  alignas(64) void* slots[kRing];
};

// Frees what arrived on `in`; returns how many.
size_t Drain(Ring& in) {
  const size_t h = in.head.load(std::memory_order_acquire);
  size_t t = in.tail.load(std::memory_order_relaxed);
  const size_t n = h - t;
  for (; t != h; ++t) free(in.slots[t % kRing]);
  in.tail.store(t, std::memory_order_release);
  return n;
}

}  // namespace

BENCH_WORKLOAD(xthread, "<threads> <steps_per_thread>: rptest-like cross-thread frees") {
  const int nthreads = int(ArgLong(argc, argv, 1, 2));
  const long steps = ArgLong(argc, argv, 2, 2000000);
  std::vector<Ring> rings(static_cast<size_t>(nthreads));  // ring t: thread t -> thread t + 1
  std::atomic<int> senders_done{0};
  std::vector<std::thread> threads;
  const double t0 = NowSeconds();
  for (int id = 0; id < nthreads; ++id) {
    threads.emplace_back([&, id] {
      Rng rng(uint64_t(id) * 7919 + 3);
      Ring& out = rings[size_t(id)];
      Ring& in = rings[size_t((id + nthreads - 1) % nthreads)];
      void* set[kWorkingSet];
      for (void*& p : set) {
        p = malloc(kMinBlock);
        static_cast<char*>(p)[0] = 1;
      }
      for (long i = 0; i < steps; ++i) {
        const size_t k = rng.Below(kWorkingSet);
        size_t h = out.head.load(std::memory_order_relaxed);
        while (h - out.tail.load(std::memory_order_acquire) >= kRing) {
          if (Drain(in) == 0) std::this_thread::yield();
        }
        out.slots[h % kRing] = set[k];
        out.head.store(h + 1, std::memory_order_release);
        const size_t size = kMinBlock + rng.Below(kMaxBlock - kMinBlock + 1);
        char* p = static_cast<char*>(malloc(size));
        p[0] = 1;
        p[size - 1] = 1;
        set[k] = p;
        Drain(in);
      }
      for (void* p : set) free(p);
      senders_done.fetch_add(1, std::memory_order_acq_rel);
      // Receive until every sender has finished and the ring is empty.
      while (senders_done.load(std::memory_order_acquire) < nthreads) {
        if (Drain(in) == 0) std::this_thread::yield();
      }
      Drain(in);
    });
  }
  for (auto& t : threads) t.join();
  const double secs = NowSeconds() - t0;
  Report("ns_per_step", secs * 1e9 / double(steps * nthreads));
  return 0;
}

}  // namespace heapkit::bench
