// The floor under the fast-path figures (fastpath.sh): cycles per pair of the benchmark's
// immediate-free loop (p = allocate(32); escape p; release(p)) when the two functions, called
// through a shared library's PLT as alloc_bench calls malloc and free, do nothing (`empty`) or
// only pop and push a thread-local free list (`list`). An allocator's pair cannot cost fewer
// cycles than `empty` in that loop, and one that costs what `list` costs has nothing left to cut
// inside its fast path. Run it on the machine whose fastpath.sh figures you read (RESULTS.md).
//
//   call_floor [pairs=100000000] [repetitions=5]
//
// Cycles are thread CPU time times the core clock measured by a chain of dependent register
// adds (one cycle each on every x86-64 core), as bench_fastpath.cc does without perf counters;
// each figure is the median of 15 equal segments of the run.
#define _POSIX_C_SOURCE 199309L  // clock_gettime, CLOCK_THREAD_CPUTIME_ID

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void* floor_empty_allocate(size_t size);
void floor_empty_release(void* p);
void* floor_list_allocate(size_t size);
void floor_list_release(void* p);

enum { kSegments = 15 };

static double ThreadCpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#if defined(__x86_64__)
static double CoreHz(void) {
  const long n = 100000000;
  long x = 0;
  const double t0 = ThreadCpuSeconds();
  for (long i = 0; i < n / 4; ++i) {
    __asm__ volatile("add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0" : "+r"(x));
  }
  return (double)(n / 4 * 4) / (ThreadCpuSeconds() - t0);
}
#else
static double CoreHz(void) { return 0; }  // cycles are printed as 0 where the chain is not known
#endif

typedef void* (*Allocate)(size_t);
typedef void (*Release)(void*);

// The loop of bench_fastpath.cc's Pairs, with the calls spelled out so that they go through the
// PLT (a function pointer would be an indirect call instead).
#define DEFINE_PAIRS(name, allocate, release)          \
  __attribute__((noinline)) static void name(long n) { \
    for (long i = 0; i < n; ++i) {                     \
      void* p = allocate(32);                          \
      __asm__ volatile("" : : "r"(p) : "memory");      \
      release(p);                                      \
    }                                                  \
  }
DEFINE_PAIRS(EmptyPairs, floor_empty_allocate, floor_empty_release)
DEFINE_PAIRS(ListPairs, floor_list_allocate, floor_list_release)

static int CompareDoubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

// Median seconds per pair over kSegments segments of n / kSegments pairs.
static double SecondsPerPair(void (*pairs)(long), long n) {
  const long seg = n / kSegments;
  double t[kSegments];
  pairs(seg);  // warm-up
  for (int s = 0; s < kSegments; ++s) {
    const double t0 = ThreadCpuSeconds();
    pairs(seg);
    t[s] = (ThreadCpuSeconds() - t0) / (double)seg;
  }
  qsort(t, kSegments, sizeof t[0], CompareDoubles);
  return t[kSegments / 2];
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 100000000;
  const int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (n < kSegments || reps < 1) {
    fprintf(stderr, "usage: call_floor [pairs >= %d] [repetitions >= 1]\n", kSegments);
    return 2;
  }
  printf("repetition empty_cycles list_cycles empty_ns list_ns core_ghz\n");
  for (int r = 0; r < reps; ++r) {
    const double hz0 = CoreHz();
    const double empty = SecondsPerPair(EmptyPairs, n);
    const double list = SecondsPerPair(ListPairs, n);
    const double hz = (hz0 + CoreHz()) / 2;
    printf("%d %.2f %.2f %.3f %.3f %.2f\n", r + 1, empty * hz, list * hz, empty * 1e9, list * 1e9,
           hz * 1e-9);
  }
  return 0;
}
