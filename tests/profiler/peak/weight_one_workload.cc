// The allocation patterns of an interpreter's heap (CPython's: buffers grown and shrunk by
// realloc in place, realloc that moves, calloc, aligned allocations, temporaries freed at
// once), every object at least 4 KiB, for run_weight_one.py: at a sampling period of 64 bytes
// such an object is sampled with probability 1 - exp(-64) (1 in double precision) and weighs
// exactly its size, so the sampled path's peak and in-use estimates must equal the truth
// whatever the time settings (HEAP_PROFILE_LIFETIMES, _AGES, _FREE_STACKS) are.
// Deterministic (a fixed linear congruential generator). Phase 1 grows a live set of buffers
// while churning; a dump (HeapProfilerDump, found with dlsym: the runtime is preloaded) marks
// its top; phase 2 frees three quarters and churns again. Prints, at exit (stdout's buffer is
// allocated after the peak), its own account of its live bytes at the dump and of their peak
// (a realloc that moves holds both blocks for a moment: heapkit allocates the new one first).
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

constexpr int kBuffers = 3000;
constexpr size_t kMin = 4096;

struct Buffer {
  void* p = nullptr;
  size_t size = 0;  // requested bytes
};
Buffer buffers[kBuffers];

uint64_t rng_state = 12345;
uint64_t Next(uint64_t n) {  // uniform-ish in [0, n)
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (rng_state >> 33) % n;
}

int64_t live = 0;
int64_t peak = 0;
void Saw(int64_t in_use) {
  if (in_use > peak) peak = in_use;
}

// A new buffer by one of the allocation calls.
__attribute__((noinline)) Buffer Allocate(size_t size) {
  Buffer b;
  b.size = size;
  switch (Next(4)) {
    case 0: b.p = malloc(size); break;
    case 1: b.p = calloc(1, size); break;
    case 2:
      if (posix_memalign(&b.p, 64, size) != 0) b.p = nullptr;
      break;
    default:
      b.size = (size + 4095) & ~size_t{4095};  // aligned_alloc: a multiple of the alignment
      b.p = aligned_alloc(4096, b.size);
  }
  if (b.p == nullptr) abort();
  memset(b.p, 1, 64);
  live += static_cast<int64_t>(b.size);
  Saw(live);
  return b;
}

__attribute__((noinline)) void Release(Buffer* b) {
  free(b->p);
  live -= static_cast<int64_t>(b->size);
  *b = Buffer{};
}

int64_t in_place_reallocs = 0;
int64_t moved_reallocs = 0;

// Resizes b: in place when the new size fits its block and keeps at least half of it (the
// allocator's rule), else by moving. Both are a free and an allocation for the profiler.
__attribute__((noinline)) void Resize(Buffer* b, size_t size) {
  void* q = realloc(b->p, size);
  if (q == nullptr) abort();
  const bool in_place = q == b->p;  // a move allocates before it frees: never the same block
  ++(in_place ? in_place_reallocs : moved_reallocs);
  if (!in_place) Saw(live + static_cast<int64_t>(size));  // both blocks, for a moment
  live += static_cast<int64_t>(size) - static_cast<int64_t>(b->size);
  b->p = q;
  b->size = size;
}

// Temporaries, freed at once.
__attribute__((noinline)) void Churn(int n) {
  for (int i = 0; i < n; ++i) {
    Buffer t = Allocate(kMin + Next(60000));
    Release(&t);
  }
}

// A grow-then-shrink chain on one buffer, mostly in place.
__attribute__((noinline)) void Reshape(Buffer* b) {
  for (int k = 0; k < 6; ++k) {
    const size_t usable = malloc_usable_size(b->p);
    size_t target;
    switch (Next(3)) {
      case 0: target = usable - Next(usable / 2); break;      // in place, within the block
      case 1: target = b->size + kMin + Next(30000); break;   // past the block: moves
      default: target = b->size / 2 + Next(b->size / 2) + 1;  // shrink, in place if >= half
    }
    if (target < kMin) target = kMin;
    Resize(b, target);
  }
}

}  // namespace

int main() {
  auto dump = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "HeapProfilerDump"));
  for (int i = 0; i < kBuffers; ++i) {
    buffers[i] = Allocate(kMin + Next(28000));
    Reshape(&buffers[i]);
    if (i % 4 == 0) Churn(3);
  }
  const int64_t at_dump = live;
  if (dump != nullptr) dump("top of the growth");
  for (int i = 0; i < kBuffers; ++i)
    if (i % 4 != 0) Release(&buffers[i]);
  for (int i = 0; i < kBuffers; i += 4) {
    Reshape(&buffers[i]);
    Churn(2);
  }
  printf(
      "dump_in_use %lld\npeak %lld\nexit_in_use %lld\nin_place_reallocs %lld\n"
      "moved_reallocs %lld\n",
      static_cast<long long>(at_dump), static_cast<long long>(peak), static_cast<long long>(live),
      static_cast<long long>(in_place_reallocs), static_cast<long long>(moved_reallocs));
  return dump == nullptr ? 2 : 0;
}
