// HEAPPROFILE: starting, stopping and dumping profiles — the API behind
// <gperftools/heap-profiler.h>. See README.md for the environment variables.
//
// Where the rest lives, each file stating its own invariants: the state object, its lock and
// fields (profiler_state.h), the dumps and their triggers (dump_triggers.h), the settings
// (profiler_config.h), recording sampled allocations (sample_recorder.h), the helper thread
// (profiler_thread.h), the dump signal (profiler_signals.h), fork (profiler_fork.h), start-up
// (startup.cc).
#pragma once

#include <cstdint>

namespace heapkit::prof {

bool StartHeapProfiling(const char* prefix);
void StopHeapProfiling();
bool HeapProfilingOn();
// Dumps now (API HeapProfilerDump). False if profiling is off or the dump failed.
bool DumpHeapProfileNow(const char* reason);

// main() is starting (heapcheck/startup.cc's main wrapper, every process): a profile started
// before main gets its exit dump registered now, so it runs at exit() before the destructors of
// globals built before main, which would otherwise have freed what the program held.
void OnMainStart();

// Bucket size key (sampled mode): log2 with two fraction bits, so objects in one bucket differ
// in size by < 19% and the per-line un-sampling is accurate. 0 when every allocation is kept.
inline uint32_t SizeKey(uint64_t size, int64_t rate) {
  if (rate <= 1) return 0;
  if (size < 8) return static_cast<uint32_t>(size);
  int log = 63 - __builtin_clzll(size);
  return static_cast<uint32_t>(8 + (log - 3) * 4 + ((size >> (log - 2)) & 3));
}

}  // namespace heapkit::prof
