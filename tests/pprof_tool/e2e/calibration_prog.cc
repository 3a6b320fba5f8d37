// Workloads for the calibration of pprof-tool's intervals against exact mode
// (calibration_check.py): deterministic for a given seed, so an exact run
// (TCMALLOC_SAMPLE_PARAMETER=1) gives the truth for each sampled run. Everything allocated stays
// live until the exit dump; each allocation site is a function of its own (the rows).
//   calibration_prog tree <seed>     compiler-like tree builder: many node kinds of small fixed
//                                    sizes, Zipf-like counts, operand vectors that grow
//   calibration_prog cache <seed>    cache with churn: values of spread sizes inserted by a few
//                                    producers, older ones evicted (freed) as the cache turns over
//   calibration_prog service <seed>  multi-threaded service: 8 threads serving requests with
//                                    buffers and session state, some kept, most freed
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

volatile uintptr_t sink;

template <int Kind>
__attribute__((noinline)) void* NewNode(size_t size) {
  void* p = malloc(size);
  memset(p, Kind, size);
  sink = reinterpret_cast<uintptr_t>(p);
  return p;
}

using NodeMaker = void* (*)(size_t);
constexpr NodeMaker kMakers[] = {NewNode<1>,  NewNode<2>,  NewNode<3>,  NewNode<4>,
                                 NewNode<5>,  NewNode<6>,  NewNode<7>,  NewNode<8>,
                                 NewNode<9>,  NewNode<10>, NewNode<11>, NewNode<12>,
                                 NewNode<13>, NewNode<14>, NewNode<15>, NewNode<16>};
constexpr size_t kNodeSizes[] = {24, 32,  40,  48,  56,  64,  72,  80,
                                 96, 112, 128, 144, 160, 192, 224, 256};

__attribute__((noinline)) void GrowOperands(std::vector<void*>* keep, std::mt19937_64& rng) {
  std::vector<uint64_t>* v = new std::vector<uint64_t>;
  const size_t n = 1 + rng() % 2000;
  for (size_t i = 0; i < n; ++i) v->push_back(i);  // capacities double: mixed sizes, one stack
  keep->push_back(v);
}

void Tree(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<void*> keep;
  for (int round = 0; round < 400000; ++round) {
    // Kind k with weight ~ 1/(k+1): the first kinds dominate, the last are rare.
    size_t k = 0;
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    double acc = 0, norm = 0;
    for (size_t i = 0; i < 16; ++i) norm += 1.0 / double(i + 1);
    for (; k < 15; ++k) {
      acc += 1.0 / double(k + 1) / norm;
      if (u < acc) break;
    }
    keep.push_back(kMakers[k](kNodeSizes[k] + (rng() % 4 == 0 ? 8 : 0)));
    if (round % 200 == 0) GrowOperands(&keep, rng);
  }
  sink = keep.size();
}

template <int Producer>
__attribute__((noinline)) char* MakeValue(size_t size) {
  char* p = static_cast<char*>(malloc(size));
  memset(p, Producer, size);
  return p;
}

void Cache(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(std::log(64.0), std::log(65536.0));
  std::deque<char*> cache;
  const size_t capacity = 6000;
  for (int i = 0; i < 60000; ++i) {
    const size_t size = size_t(std::exp(log_size(rng)));
    char* v = nullptr;
    switch (rng() % 4) {
      case 0: v = MakeValue<1>(size); break;
      case 1: v = MakeValue<2>(size / 4 + 16); break;
      case 2: v = MakeValue<3>(size); break;
      default: v = MakeValue<4>(64 + rng() % 256); break;
    }
    cache.push_back(v);
    if (cache.size() > capacity) {  // evict one of the oldest (churn)
      const size_t victim = rng() % 64;
      free(cache[victim]);
      cache.erase(cache.begin() + long(victim));
    }
  }
  sink = cache.size();
}

template <int Handler>
__attribute__((noinline)) char* RequestBuffer(size_t size) {
  char* p = static_cast<char*>(malloc(size));
  memset(p, Handler, 64);
  return p;
}

template <int Handler>
__attribute__((noinline)) char* SessionState(size_t size) {
  char* p = static_cast<char*>(malloc(size));
  memset(p, Handler, size);
  return p;
}

__attribute__((noinline)) char* Arena(size_t size) {
  char* p = static_cast<char*>(malloc(size));
  memset(p, 7, 4096);
  return p;
}

void Serve(uint64_t seed, int thread, std::vector<char*>* kept) {
  std::mt19937_64 rng(seed * 1000 + uint64_t(thread));
  for (int r = 0; r < 20000; ++r) {
    char* buffer = thread % 2 == 0 ? RequestBuffer<0>(4096 * (1 + rng() % 4))
                                   : RequestBuffer<1>(4096 * (1 + rng() % 4));
    char* state =
        thread % 2 == 0 ? SessionState<0>(200 + rng() % 300) : SessionState<1>(200 + rng() % 300);
    if (rng() % 10 == 0) {
      kept->push_back(buffer);
    } else {
      free(buffer);
    }
    if (rng() % 3 == 0) {
      kept->push_back(state);
    } else {
      free(state);
    }
  }
  if (thread < 4) kept->push_back(Arena(size_t(1 + rng() % 3) << 20));
}

void Service(uint64_t seed) {
  std::vector<std::vector<char*>> kept(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) threads.emplace_back(Serve, seed, t, &kept[size_t(t)]);
  for (std::thread& t : threads) t.join();
  size_t n = 0;
  for (const auto& k : kept) n += k.size();
  sink = n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s tree|cache|service <seed>\n", argv[0]);
    return 2;
  }
  const std::string what = argv[1];
  const uint64_t seed = strtoull(argv[2], nullptr, 10);
  if (what == "tree") {
    Tree(seed);
  } else if (what == "cache") {
    Cache(seed);
  } else if (what == "service") {
    Service(seed);
  } else {
    fprintf(stderr, "unknown workload %s\n", argv[1]);
    return 2;
  }
  return 0;
}
