// The heap profiler's state: one object, like the allocator's GlobalState (alloc/global_state.h).
// Everything the control files (heap_profiler, dump_triggers, sample_recorder, profiler_thread,
// profiler_signals, profiler_fork, startup) share is a field of g_profiler; the functions that
// work on it are declared next to their definitions.
//
// Invariants:
//  * lock (a spin lock) guards the dump files (prefix, numbering), the baselines and the writes
//    of the thresholds and of config. It is held for the whole of a dump; nothing that
//    allocates from the public heap runs under it. Fork handlers (profiler_fork.h) hold it
//    across fork().
//  * config is written under lock at each profiling start (profiler_config.h); afterwards it is
//    only read, except that InstallDumpSignal (profiler_signals.h) clears dump_signal when the
//    signal cannot be used, before the helper thread starts.
//  * The sampling callbacks (any thread) check the thresholds with relaxed loads
//  (MaybeDumpAfterAlloc, MaybeDumpAfterFree,
//    dump_triggers.h) and, when one fires, try-lock the state lock and dump on the allocating
//    thread; a thread that finds the lock taken skips the dump.
//  * The estimated (un-sampled) totals est_alloc / est_free are kept only while profiling (so
//    exact mode without HEAPPROFILE — the leak checker — skips two shared atomic adds per
//    allocation and free); each profiling start re-bases them on the table's estimate of what
//    is in use (BeginProfilingLocked).
//  * The thresholds are relaxed atomics written under lock after each dump and at each start.
//  * After the exit dump (exiting) no other dump is written.
//
// clang's -Wthread-safety checks what the compiler can: files and baselines are GUARDED_BY the
// lock, and the functions that work on them under it say so (HEAPKIT_REQUIRES, dump_triggers.h).
// config is not annotated: it is written under the lock but read without it (the sampling path
// reads stack_depth), which the analysis cannot express; the atomics need no lock.
#pragma once

#include <limits.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/internal/spin_lock.h"
#include "profiler/profiler_config.h"

namespace heapkit::prof {

// Where dumps go: <prefix>.NNNN.heap. Guarded by the state lock.
class DumpFiles {
 public:
  // A profiling start: `prefix` (shorter than PATH_MAX) is the base of every name; numbering
  // continues across Stop/Start.
  void Begin(const char* prefix);
  // Forked child: <base>_<pid>.NNNN.heap, numbered from .0001.
  void RenameForChild(int pid);
  // The next dump's file name into out[0..size).
  void NextName(char* out, size_t size);
  // The peak profile's name (peak_profile.h): <prefix>.peak.heap.
  void PeakName(char* out, size_t size) const;
  // The peak profile of the interval the last dump closed: <prefix>.peak.NNNN.heap, NNNN the
  // number of the last name NextName gave.
  void IntervalPeakName(char* out, size_t size) const;
  // The timeline's name (timeline.h): <prefix>.timeline.heap.
  void TimelineName(char* out, size_t size) const;

  static constexpr size_t kMaxName = PATH_MAX + 32 + 16;

 private:
  char base_prefix_[PATH_MAX] = {};
  char prefix_[PATH_MAX + 32] = {};
  int count_ = 0;
};

// The byte totals at the last dump (and the in-use high-water mark): what the allocation,
// deallocation and in-use triggers count from. Guarded by the state lock.
struct DumpBaselines {
  int64_t alloc = 0;
  int64_t freed = 0;
  int64_t high_water = 0;
};

// The totals at which the next dump fires, and the time of the last one (relaxed atomics,
// written under the state lock, read by the sampling callbacks and the helper thread).
struct DumpThresholds {
  std::atomic<int64_t> next_alloc{INT64_MAX};
  std::atomic<int64_t> next_free{INT64_MAX};
  std::atomic<int64_t> next_inuse{INT64_MAX};
  std::atomic<int64_t> last_dump_time_ns{0};
};

struct ProfilerState {
  internal::SpinLock lock;
  ProfilerConfig config;
  std::atomic<bool> profiling{false};
  std::atomic<bool> exiting{false};
  std::atomic<int64_t> est_alloc{0};  // estimated bytes allocated while profiling
  std::atomic<int64_t> est_free{0};   // and freed
  // The largest estimated in-use total seen since profiling started (named by the exit line).
  std::atomic<int64_t> peak_inuse{0};
  DumpThresholds thresholds;
  DumpBaselines baselines HEAPKIT_GUARDED_BY(lock);
  DumpFiles files HEAPKIT_GUARDED_BY(lock);
  // Forked child: restart the helper thread at the next sampled allocation (profiler_thread.h).
  std::atomic<bool> helper_restart{false};
};

extern constinit ProfilerState g_profiler;

}  // namespace heapkit::prof
