// A heap-sampling simulator that knows the truth: workloads of allocation stacks with their
// objects, sampled the way the allocator samples (alloc/sampler.h: exponential byte gaps of
// mean R over the stream of allocated bytes, an object sampled when a sampling point falls in
// it), and written as the rows of a heap profile: heapkit's (one row per stack and size key,
// profiler/table/sample_estimate.h) or gperftools'/Go's (one row per stack, sizes mixed).
// Used by the estimate and calibration tests (estimate_test.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "profiler/table/sample_estimate.h"  // SizeKey: header-only

namespace heapkit::pprof::simulation {

struct Workload {
  std::string name;
  // objects[stack] = the sizes of the objects that stack holds (the truth).
  std::vector<std::vector<uint32_t>> objects;

  double TrueBytes(size_t stack) const {
    double b = 0;
    for (uint32_t s : objects[stack]) b += s;
    return b;
  }
  double TotalBytes() const {
    double b = 0;
    for (size_t i = 0; i < objects.size(); ++i) b += TrueBytes(i);
    return b;
  }
};

// A compiler-like tree builder: many stacks (AST/IR node kinds) of small nodes of a few fixed
// sizes each, a Zipf-like spread of how many each makes, plus a few arrays of growing vectors.
inline Workload CompilerLikeTree(uint32_t seed) {
  std::mt19937_64 rng(seed);
  Workload w{"compiler-like tree builder", {}};
  const uint32_t node_sizes[] = {24, 32, 40, 48, 64, 72, 96, 128};
  for (int k = 0; k < 120; ++k) {
    std::vector<uint32_t> stack;
    const uint32_t size = node_sizes[rng() % 8];
    const size_t n = size_t(30000.0 / (k + 1)) + 50;
    for (size_t i = 0; i < n; ++i) stack.push_back(size + (rng() % 3 == 0 ? 8 : 0));
    w.objects.push_back(std::move(stack));
  }
  for (int k = 0; k < 10; ++k) {  // growing operand vectors: doubling capacities
    std::vector<uint32_t> stack;
    for (int i = 0; i < 400; ++i) stack.push_back(16u << (rng() % 8));
    w.objects.push_back(std::move(stack));
  }
  return w;
}

// A cache with churn: values of widely spread sizes (log-uniform 64 B - 64 KiB) per stack.
inline Workload CacheWithChurn(uint32_t seed) {
  std::mt19937_64 rng(seed);
  Workload w{"cache with churn", {}};
  std::uniform_real_distribution<double> log_size(std::log(64.0), std::log(65536.0));
  for (int k = 0; k < 40; ++k) {
    std::vector<uint32_t> stack;
    const size_t n = 200 + rng() % 3000;
    for (size_t i = 0; i < n; ++i) stack.push_back(uint32_t(std::exp(log_size(rng))));
    w.objects.push_back(std::move(stack));
  }
  return w;
}

// A multi-threaded service: per-thread request buffers (4-16 KiB), connection state (a few
// hundred bytes), and a few large arenas (1-4 MiB) on their own stacks.
inline Workload MultiThreadedService(uint32_t seed) {
  std::mt19937_64 rng(seed);
  Workload w{"multi-threaded service", {}};
  for (int thread = 0; thread < 16; ++thread) {
    std::vector<uint32_t> buffers, state;
    for (int i = 0; i < 300; ++i) buffers.push_back(4096u * uint32_t(1 + rng() % 4));
    for (int i = 0; i < 3000; ++i) state.push_back(200 + uint32_t(rng() % 300));
    w.objects.push_back(std::move(buffers));
    w.objects.push_back(std::move(state));
  }
  for (int k = 0; k < 4; ++k) {
    std::vector<uint32_t> arenas;
    for (int i = 0; i < 6; ++i) arenas.push_back(uint32_t(1 + rng() % 4) << 20);
    w.objects.push_back(std::move(arenas));
  }
  return w;
}

// One row of a profile: sampled objects and their bytes (as a legacy file writes them).
struct Row {
  size_t stack = 0;
  double count = 0;
  double bytes = 0;
};

enum class RowKeys { kStackAndSizeKey, kStack };

// Samples the workload (its objects allocated in a shuffled order) at mean gap `rate` and
// returns the profile's rows. rate <= 1: every object.
inline std::vector<Row> Sample(const Workload& w, double rate, uint64_t seed, RowKeys keys) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<size_t, uint32_t>> order;
  for (size_t k = 0; k < w.objects.size(); ++k)
    for (uint32_t s : w.objects[k]) order.push_back({k, s});
  std::shuffle(order.begin(), order.end(), rng);
  std::exponential_distribution<double> gap(rate > 1 ? 1.0 / rate : 1.0);
  double next = rate > 1 ? gap(rng) : 0;  // bytes until the next sampling point
  std::map<std::pair<size_t, uint32_t>, Row> rows;
  for (const auto& [stack, size] : order) {
    bool sampled = rate <= 1;
    if (!sampled) {
      if (next < size) {
        sampled = true;
        double rest = size - next;  // further points inside the object: one sample still
        next = gap(rng);
        while (next < rest) {
          rest -= next;
          next = gap(rng);
        }
        next -= rest;
      } else {
        next -= size;
      }
    }
    if (!sampled) continue;
    const uint32_t key =
        keys == RowKeys::kStack ? 0 : prof::SizeKey(size, static_cast<int64_t>(rate));
    Row& r = rows[{stack, key}];
    r.stack = stack;
    r.count += 1;
    r.bytes += size;
  }
  std::vector<Row> out;
  for (auto& [key, r] : rows) out.push_back(r);
  return out;
}

}  // namespace heapkit::pprof::simulation
