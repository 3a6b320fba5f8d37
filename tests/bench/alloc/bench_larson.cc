// Larson & Krishnan's server simulation, in the shape mimalloc-bench runs it ("larson" and
// "larson-sized"): the main thread allocates every chain's blocks (so the first frees of each
// chain are of memory another thread allocated); each chain of threads owns a set of blocks of
// <min>..<max> bytes, and each thread of a chain replaces random blocks of the set <ops> times,
// then starts its successor on the same set and exits, so the successor frees what the
// predecessor allocated while the predecessor is still exiting. Chains run side by side.
//   larsonx <chains> <generations> <blocks> <ops_per_thread> <min> <max> [sized]
// sized = 1 frees through sized operator delete (C++14 `delete(p, n)`), as larson-sized does.
// Reports wall ns per replacement (all threads together); max RSS is printed by the driver.
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "bench.h"

namespace heapkit::bench {
namespace {

struct Chain {
  std::vector<void*> blocks;
  std::vector<size_t> sizes;
  Rng rng{1};
  long ops = 0;
  int generations_left = 0;
  size_t min_size = 8, span = 1;
  bool sized = false;
  std::atomic<bool>* done = nullptr;
};

void* Allocate(const Chain& c, size_t n) { return c.sized ? ::operator new(n) : malloc(n); }
void Release(const Chain& c, void* p, size_t n) {
  if (c.sized) {
    ::operator delete(p, n);
  } else {
    free(p);
  }
}

void* RunGeneration(void* arg) {
  Chain& c = *static_cast<Chain*>(arg);
  const size_t nblocks = c.blocks.size();
  for (long i = 0; i < c.ops; ++i) {
    const size_t k = c.rng.Below(nblocks);
    Release(c, c.blocks[k], c.sizes[k]);
    const size_t n = c.min_size + c.rng.Below(c.span);
    char* p = static_cast<char*>(Allocate(c, n));
    p[0] = 1;
    p[n - 1] = 1;
    c.blocks[k] = p;
    c.sizes[k] = n;
  }
  if (--c.generations_left > 0) {
    // The successor starts before this thread has exited (pthread_create returns first).
    pthread_t next;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&next, &attr, RunGeneration, &c) != 0) abort();
    pthread_attr_destroy(&attr);
  } else {
    c.done->store(true, std::memory_order_release);
  }
  return nullptr;
}

}  // namespace

BENCH_WORKLOAD(larsonx, "<chains> <generations> <blocks> <ops_per_thread> <min> <max> [sized]") {
  const int nchains = int(ArgLong(argc, argv, 1, 2));
  const int generations = int(ArgLong(argc, argv, 2, 40));
  const size_t blocks = size_t(ArgLong(argc, argv, 3, 5000));
  const long ops = ArgLong(argc, argv, 4, 100000);
  const size_t min_size = size_t(ArgLong(argc, argv, 5, 8));
  const size_t max_size = size_t(ArgLong(argc, argv, 6, 1000));
  const bool sized = ArgLong(argc, argv, 7, 0) != 0;
  std::vector<Chain> chains(static_cast<size_t>(nchains));
  std::vector<std::atomic<bool>> done(static_cast<size_t>(nchains));
  for (int id = 0; id < nchains; ++id) {
    Chain& c = chains[size_t(id)];
    c.rng = Rng(uint64_t(id) * 4141 + 17);
    c.ops = ops;
    c.generations_left = generations;
    c.min_size = min_size;
    c.span = max_size > min_size ? max_size - min_size + 1 : 1;
    c.sized = sized;
    c.done = &done[size_t(id)];
    c.blocks.resize(blocks);
    c.sizes.resize(blocks);
    for (size_t k = 0; k < blocks; ++k) {  // warm-up in the main thread
      c.sizes[k] = min_size + c.rng.Below(c.span);
      c.blocks[k] = Allocate(c, c.sizes[k]);
      static_cast<char*>(c.blocks[k])[0] = 1;
    }
  }
  const double t0 = NowSeconds();
  for (Chain& c : chains) {
    pthread_t t;
    if (pthread_create(&t, nullptr, RunGeneration, &c) != 0) abort();
    pthread_detach(t);
  }
  for (auto& d : done) {
    while (!d.load(std::memory_order_acquire)) {
      timespec ts{0, 200000};
      nanosleep(&ts, nullptr);
    }
  }
  const double secs = NowSeconds() - t0;
  for (Chain& c : chains)
    for (size_t k = 0; k < blocks; ++k) Release(c, c.blocks[k], c.sizes[k]);
  Report("ns_per_op", secs * 1e9 / (double(ops) * generations * nchains));
  return 0;
}

}  // namespace heapkit::bench
