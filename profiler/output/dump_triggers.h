// HEAPPROFILE's dumps: the allocation/deallocation/in-use triggers, the dump itself and the exit
// dump, on the profiler state (profiler_state.h, whose invariants these functions keep: the
// state lock, relaxed thresholds, totals kept only while profiling, nothing after the exit
// dump).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/format/output_sink.h"
#include "profiler/profiler_state.h"

namespace heapkit::prof {

// Out-of-line half of MaybeDumpAfterAlloc and MaybeDumpAfterFree: a threshold was crossed.
void DumpIfTriggered(int64_t alloc, int64_t freed);

// The check of MaybeDumpAfterAlloc (below) with the totals in hand (alloc, freed): keeps the peak
// estimate and says whether DumpIfTriggered(alloc, freed) is due. Makes no call.
inline bool AllocCrossedDumpTrigger(int64_t alloc, int64_t freed) {
  const ProfilerState& s = g_profiler;
  if (alloc - freed > g_profiler.peak_inuse.load(std::memory_order_relaxed))  // racy: an estimate
    g_profiler.peak_inuse.store(alloc - freed, std::memory_order_relaxed);
  return !(alloc < s.thresholds.next_alloc.load(std::memory_order_relaxed) &&
           freed < s.thresholds.next_free.load(std::memory_order_relaxed) &&
           alloc - freed <= s.thresholds.next_inuse.load(std::memory_order_relaxed));
}

// Evaluates the allocation/deallocation/in-use triggers; dumps on this thread if one fired.
// Called by the sampling callbacks while profiling, after an allocation updated the totals.
inline void MaybeDumpAfterAlloc() {
  const int64_t alloc = g_profiler.est_alloc.load(std::memory_order_relaxed);
  const int64_t freed = g_profiler.est_free.load(std::memory_order_relaxed);
  if (__builtin_expect(AllocCrossedDumpTrigger(alloc, freed), 0)) DumpIfTriggered(alloc, freed);
}

// The check of MaybeDumpAfterFree (below) with the freed total in hand: in use only falls and
// the allocated total stays, so only the deallocation trigger can newly fire on a free (the
// others are the allocations' to see).
inline bool FreeCrossedDumpTrigger(int64_t freed) {
  return freed >= g_profiler.thresholds.next_free.load(std::memory_order_relaxed);
}

// The same as MaybeDumpAfterAlloc after a free.
inline void MaybeDumpAfterFree() {
  const int64_t freed = g_profiler.est_free.load(std::memory_order_relaxed);
  if (__builtin_expect(FreeCrossedDumpTrigger(freed), 0))
    DumpIfTriggered(g_profiler.est_alloc.load(std::memory_order_relaxed), freed);
}

// Caller holds the state lock and profiling is on. Writes the next dump file (DumpFiles),
// logs `reason`, moves the baselines and thresholds on. False if the file could not be written.
bool DumpLocked(const char* reason) HEAPKIT_REQUIRES(g_profiler.lock);

// Caller holds the state lock. Sets the prefix (`prefix` fits PATH_MAX), re-bases the totals on
// the table and sets the baselines and thresholds. Dump numbering continues across Stop/Start.
void BeginProfilingLocked(const char* prefix) HEAPKIT_REQUIRES(g_profiler.lock);

// The final dump, once: at exit() before global destructors (registered when main() starts,
// heapcheck/startup.cc; the atexit handler registered at profiling start is the fallback when
// main() was not seen), "Exiting, N MB in use (peak M MB)".
void ExitDump() HEAPKIT_EXCLUDES(g_profiler.lock);

// Forked child, state lock held: dumps go to <prefix>_<pid>.NNNN.heap, numbered from .0001.
void RenameDumpsForChildLocked() HEAPKIT_REQUIRES(g_profiler.lock);

// Writes the table as a legacy profile (heapprofile or heap_v2/<rate> per the current rate):
// the dumps, and MallocExtension::GetHeapSample (startup.cc).
bool WriteTableProfile(OutputSink* sink);

}  // namespace heapkit::prof
