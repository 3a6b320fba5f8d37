// glibc bench-malloc-thread's workload, and how many live objects of different threads share a
// 64-byte cache line (false sharing in the user's data, which no fast path can fix):
//   mthread      <threads> <ms>: each thread keeps 1024 slots; each step frees a random slot and
//                allocates a new block of 4 B .. 32 KiB (inverse-square distribution: mostly
//                small), writing every byte. Reports wall ns per iteration of all threads
//                together (glibc's score, iterations in a fixed time, inverted: lower is better).
//   linesharing  <threads> <ms>: the same run; at its end, with every thread paused and its
//                blocks still live, the number of objects (per 1024) that share a cache line
//                with a live object of another thread.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "bench.h"

namespace heapkit::bench {
namespace {

constexpr int kSlots = 1024;
constexpr double kMinSize = 4, kMaxSize = 32768;
constexpr uintptr_t kLine = 64;

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
};

// Density proportional to 1/s^2 on [kMinSize, kMaxSize], by inverting its distribution function.
size_t InverseSquareSize(Rng& rng) {
  double u = double((rng.Next() >> 11) + 1) * 0x1.0p-53;
  return size_t(1.0 / (1.0 / kMinSize - u * (1.0 / kMinSize - 1.0 / kMaxSize)));
}

struct Run {
  std::vector<std::vector<Block>> blocks;
  long iterations = 0;
};

// Runs the workload for `ms`; the blocks stay allocated (the caller inspects and frees them).
Run RunWorkload(int nthreads, long ms) {
  Run run;
  run.blocks.assign(nthreads, std::vector<Block>(kSlots));
  std::atomic<bool> stop{false};
  std::vector<long> iterations(nthreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t) {
    threads.emplace_back([&, t] {
      Rng rng(uint64_t(t) + 101);
      Block* slots = run.blocks[t].data();
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 64; ++k, ++n) {
          Block& b = slots[rng.Below(kSlots)];
          free(b.ptr);
          b.size = InverseSquareSize(rng);
          b.ptr = static_cast<char*>(malloc(b.size));
          memset(b.ptr, int(n), b.size);
        }
      }
      iterations[t] = n;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  stop.store(true);
  for (auto& th : threads) th.join();
  for (long n : iterations) run.iterations += n;
  return run;
}

void FreeAll(Run& run) {
  for (auto& v : run.blocks)
    for (Block& b : v) free(b.ptr);
}

// Objects (per kSlots, averaged over threads) with a cache line that also holds part of a live
// object of another thread.
double SharedPer1024(const Run& run) {
  std::vector<std::pair<uintptr_t, int>>
      line_owner;  // (line, thread), one per line an object covers
  for (int t = 0; t < int(run.blocks.size()); ++t)
    for (const Block& b : run.blocks[t]) {
      if (b.ptr == nullptr) continue;
      uintptr_t first = uintptr_t(b.ptr) / kLine, last = (uintptr_t(b.ptr) + b.size - 1) / kLine;
      line_owner.emplace_back(first, t);
      if (last != first) line_owner.emplace_back(last, t);  // inner lines are the object's alone
    }
  std::sort(line_owner.begin(), line_owner.end());
  std::vector<uintptr_t> shared_lines;
  for (size_t i = 1; i < line_owner.size(); ++i)
    if (line_owner[i].first == line_owner[i - 1].first &&
        line_owner[i].second != line_owner[i - 1].second &&
        (shared_lines.empty() || shared_lines.back() != line_owner[i].first))
      shared_lines.push_back(line_owner[i].first);
  long shared = 0;
  for (const auto& v : run.blocks)
    for (const Block& b : v) {
      if (b.ptr == nullptr) continue;
      uintptr_t first = uintptr_t(b.ptr) / kLine, last = (uintptr_t(b.ptr) + b.size - 1) / kLine;
      if (std::binary_search(shared_lines.begin(), shared_lines.end(), first) ||
          std::binary_search(shared_lines.begin(), shared_lines.end(), last))
        ++shared;
    }
  return double(shared) / double(run.blocks.size());
}

}  // namespace

BENCH_WORKLOAD(mthread, "<threads> <ms>: bench-malloc-thread, wall ns per iteration") {
  const long ms = ArgLong(argc, argv, 2, 1000);
  const double t0 = NowSeconds();
  Run run = RunWorkload(int(ArgLong(argc, argv, 1, 2)), ms);
  const double secs = NowSeconds() - t0;
  FreeAll(run);
  Report("ns_per_iter", secs * 1e9 / double(run.iterations));
  Report("iterations", double(run.iterations));
  return 0;
}

BENCH_WORKLOAD(linesharing,
               "<threads> <ms>: objects per 1024 sharing a line with another thread's") {
  Run run = RunWorkload(int(ArgLong(argc, argv, 1, 2)), ArgLong(argc, argv, 2, 1000));
  double shared = SharedPer1024(run);
  FreeAll(run);
  Report("shared_per_1024", shared);
  return 0;
}

}  // namespace heapkit::bench
