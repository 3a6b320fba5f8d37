// HEAPPROFILE's dump state: the estimated byte totals, the allocation/deallocation/in-use
// triggers, the file names and numbering, and the dump itself.
//
// Invariants:
//  * The state lock (g_state_lock, a spin lock) guards the file-name prefix, the dump counter
//    and the trigger baselines. It is held for the whole of a dump; nothing that allocates from
//    the public heap runs under it. Fork handlers (profiler_fork.h) hold it across fork().
//  * The sampling callbacks (any thread) check the triggers with relaxed loads (MaybeDump) and,
//    when one fires, try-lock the state lock and dump on the allocating thread; a thread that
//    finds the lock taken skips the dump (someone else is dumping, starting or stopping).
//  * The estimated (un-sampled) totals g_est_alloc / g_est_free are kept only while profiling
//    (so exact mode without HEAPPROFILE — the leak checker — skips two shared atomic adds per
//    allocation and free); each profiling start re-bases them on the table's estimate of what
//    is in use (BeginProfilingLocked).
//  * The thresholds are relaxed atomics written under the state lock (UpdateThresholdsLocked)
//    after each dump and at each start.
//  * After the exit dump (g_exiting) no other dump is written.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/internal/spin_lock.h"
#include "profiler/sample_weight.h"

namespace heapkit::prof {

extern internal::SpinLock g_state_lock;
extern std::atomic<bool> g_profiling;
extern std::atomic<bool> g_exiting;
extern std::atomic<int64_t> g_est_alloc;
extern std::atomic<int64_t> g_est_free;
extern std::atomic<int64_t> g_next_alloc_dump;
extern std::atomic<int64_t> g_next_free_dump;
extern std::atomic<int64_t> g_next_inuse_dump;
extern std::atomic<int64_t> g_last_dump_time_ns;
// The largest estimated in-use total seen since profiling started (named by the exit line).
extern std::atomic<int64_t> g_peak_inuse;

// The estimated bytes behind one recorded object of `size` bytes at sampling rate `rate`.
inline int64_t EstimateBytes(size_t size, int64_t rate) {
  if (rate <= 1) return static_cast<int64_t>(size);
  return static_cast<int64_t>(SampleBytesEstimate(static_cast<double>(size),
                                                  static_cast<double>(rate)));
}

// Out-of-line half of MaybeDump: a threshold was crossed.
void DumpIfTriggered(int64_t alloc, int64_t freed);

// Evaluates the allocation/deallocation/in-use triggers; dumps on this thread if one fired.
// Called by the sampling callbacks while profiling, after they updated the totals.
inline void MaybeDump() {
  const int64_t alloc = g_est_alloc.load(std::memory_order_relaxed);
  const int64_t freed = g_est_free.load(std::memory_order_relaxed);
  if (alloc - freed > g_peak_inuse.load(std::memory_order_relaxed))  // racy: an estimate anyway
    g_peak_inuse.store(alloc - freed, std::memory_order_relaxed);
  if (alloc < g_next_alloc_dump.load(std::memory_order_relaxed) &&
      freed < g_next_free_dump.load(std::memory_order_relaxed) &&
      alloc - freed <= g_next_inuse_dump.load(std::memory_order_relaxed))
    return;
  DumpIfTriggered(alloc, freed);
}

// Caller holds g_state_lock and g_profiling is true. Writes <prefix>.NNNN.heap, logs `reason`,
// moves the baselines and thresholds on. False if the file could not be written.
bool DumpLocked(const char* reason);

// Caller holds g_state_lock. Sets the prefix (`prefix` fits PATH_MAX), re-bases the totals on
// the table and sets the baselines and thresholds. Dump numbering continues across Stop/Start.
void BeginProfilingLocked(const char* prefix);

// The final dump, once: at exit() before global destructors (registered when main() starts,
// heapcheck/startup.cc; the atexit handler registered at profiling start is the fallback when
// main() was not seen), "Exiting, N MB in use (peak M MB)".
void ExitDump();

// Forked child, state lock held: dumps go to <prefix>_<pid>.NNNN.heap, numbered from .0001.
void RenameDumpsForChildLocked();

}  // namespace heapkit::prof
