// Fast path: malloc+free pairs of one size. Three shapes:
//   pairs      free(malloc(n)) in a loop (the object is reused immediately); with a third
//              argument k, k objects of the size are allocated first and stay live meanwhile
//   live       1024 same-size objects stay live; each step frees one and allocates one
//   batch      allocate 100, free the 100 (in allocation order)
// Reports, after a warm-up:
//   ns_per_pair      wall time (as every other workload)
//   cpu_ns_per_pair  this thread's CPU time, median of kSegments equal segments of the run: on a
//                    shared machine the time the thread waits for a CPU is not in it, and a
//                    segment that a preemption filled with cache misses does not move the median
//   cycles_per_pair  core cycles, median over the same segments: from the CPU's cycle counter
//                    when perf_event_open gives one (cycles_source 1), else cpu_ns_per_pair times
//                    the core clock measured in this process by a chain of dependent adds, one
//                    cycle each on every x86-64 core (cycles_source 0)
//   pairs_timed      the pairs in the segments (n rounded down to kSegments whole batches)
// Run under callgrind at N and 2N to get instructions/pair exactly (fastpath.sh, run.sh): every
// set-up cost is the same in both runs and cancels.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "bench.h"

namespace heapkit::bench {
namespace {

constexpr int kLive = 1024;
constexpr int kBatch = 100;
constexpr int kSegments = 15;
constexpr long kWarmUpPairs = 300000;  // whole batches

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

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// The CPU's user-mode cycle counter for this thread, or -1 when the machine gives none (a VM
// without a virtual PMU, perf_event_paranoid).
int OpenCycleCounter() {
  perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

double ReadCycles(int fd) {
  uint64_t v = 0;
  return read(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v) ? double(v) : 0.0;
}

// Core cycles per CPU-second: a chain of dependent adds (1 cycle each), best of a few tries.
double CyclesPerCpuSecond() {
  constexpr long kAdds = 8 * 500000;
  double best = 1e30;
  for (int t = 0; t < 5; ++t) {
    long x = 0;
    const double t0 = ThreadCpuSeconds();
    for (long i = 0; i < kAdds / 8; ++i) {
      asm volatile(
          "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\t"
          "add $1,%0\n\tadd $1,%0\n\tadd $1,%0\n\tadd $1,%0"
          : "+r"(x));
    }
    best = std::min(best, ThreadCpuSeconds() - t0);
  }
  return double(kAdds) / best;
}

void RunShape(const char* shape, void** slots, size_t size, long n) {
  if (strcmp(shape, "pairs") == 0) {
    Pairs(size, n);
  } else if (strcmp(shape, "live") == 0) {
    Live(slots, size, n);
  } else {
    Batch(slots, size, n);
  }
}

double Median(double* v, int n) {
  std::sort(v, v + n);
  return v[n / 2];
}

int Run(const char* shape, int argc, char** argv) {
  const size_t size = size_t(ArgLong(argc, argv, 1, 64));
  const long n = ArgLong(argc, argv, 2, 20000000);
  static void* slots[kLive];
  // Warm-up: the allocator initialises and the thread cache fills before timing. pairs keeps
  // `held` of these objects live (none unless asked), live keeps all of them.
  const long held = strcmp(shape, "pairs") == 0
                        ? std::clamp<long>(ArgLong(argc, argv, 3, 0), 0, kLive)
                    : strcmp(shape, "live") == 0 ? kLive
                                                 : 0;
  for (int i = 0; i < kLive; ++i) slots[i] = malloc(size);
  for (int i = int(held); i < kLive; ++i) free(slots[i]);
  // A fixed count (not a share of n), so that callgrind's (Ir(2N) - Ir(N)) / N counts the
  // timed pairs alone.
  RunShape(shape, slots, size, kWarmUpPairs);
  const int fd = OpenCycleCounter();
  // Segments of whole batches, so that every shape runs the same code in each.
  const long seg = std::max<long>(kBatch, n / kSegments / kBatch * kBatch);
  double cpu[kSegments], cycles[kSegments];
  const double wall0 = NowSeconds();
  for (int s = 0; s < kSegments; ++s) {
    const double c0 = fd >= 0 ? ReadCycles(fd) : 0.0;
    const double t0 = ThreadCpuSeconds();
    RunShape(shape, slots, size, seg);
    cpu[s] = (ThreadCpuSeconds() - t0) * 1e9 / double(seg);
    cycles[s] = fd >= 0 ? (ReadCycles(fd) - c0) / double(seg) : 0.0;
  }
  const double wall = (NowSeconds() - wall0) * 1e9 / double(seg * kSegments);
  Report("ns_per_pair", wall);
  Report("pairs_timed", double(seg * kSegments));
  Report("cpu_ns_per_pair", Median(cpu, kSegments));
  if (fd >= 0) {
    Report("cycles_per_pair", Median(cycles, kSegments));
    Report("cycles_source", 1);
  } else {
    Report("cycles_per_pair", Median(cpu, kSegments) * 1e-9 * CyclesPerCpuSecond());
    Report("cycles_source", 0);
  }
  return 0;
}

}  // namespace

BENCH_WORKLOAD(pairs, "<size> <n> [<k>]: free(malloc(size)) n times (k objects live meanwhile)") {
  return Run("pairs", argc, argv);
}
BENCH_WORKLOAD(live, "<size> <n>: replace one of 1024 live objects n times") {
  return Run("live", argc, argv);
}
BENCH_WORKLOAD(batch, "<size> <n>: malloc 100 then free 100, n pairs in all") {
  return Run("batch", argc, argv);
}

}  // namespace heapkit::bench
