// alloc_bench: allocator benchmarks run under LD_PRELOAD by run.sh (one process per measurement,
// so each allocator starts cold and identical). Every workload prints one result line
//   <metric> <value>
// to stdout; run.sh collects medians across repetitions and allocators.
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "../../common/xorshift_rng.h"

namespace heapkit::bench {

// Keeps the compiler from eliding or merging allocations.
inline void Escape(void* p) { asm volatile("" : : "r"(p) : "memory"); }

inline double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Cheap deterministic per-thread random numbers (no allocation).
using Rng = heapkit::testing::XorshiftRng;

size_t RssBytes();    // current resident set (statm)
double CpuSeconds();  // user + system time of the process so far
void Report(const char* metric, double value);
// A MallocExtension numeric property of the preloaded allocator (gperftools and heapkit export
// MallocExtension_GetNumericProperty); false when it has none or does not know `name`.
bool AllocatorProperty(const char* name, size_t* value);

using Workload = int (*)(int argc, char** argv);  // argv[0] is the workload name
struct WorkloadRegistrar {
  WorkloadRegistrar(const char* name, const char* usage, Workload fn);
};
#define BENCH_WORKLOAD(name, usage)                                                        \
  static int BenchWorkload_##name(int argc, char** argv);                                  \
  static ::heapkit::bench::WorkloadRegistrar bench_registrar_##name(#name, usage,          \
                                                                    BenchWorkload_##name); \
  static int BenchWorkload_##name([[maybe_unused]] int argc, [[maybe_unused]] char** argv)

// argv[i] as a number with a default.
long ArgLong(int argc, char** argv, int i, long def);

}  // namespace heapkit::bench
