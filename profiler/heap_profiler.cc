// Starting, stopping and dumping HEAPPROFILE profiles (heap_profiler.h). The state and its
// lock: profiler_state.h; the dumps: dump_triggers.h; the helper thread: profiler_thread.h;
// recording: sample_recorder.h.
#include "profiler/heap_profiler.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "alloc/observer_hooks.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/time/peak_tracker.h"
#include "alloc/sampling_period.h"
#include "profiler/profiler_config.h"
#include "profiler/control/profiler_signals.h"
#include "profiler/profiler_state.h"
#include "profiler/control/profiler_thread.h"
#include "profiler/sample_recorder.h"

namespace heapkit::prof {
namespace {

// The prefix is usable: not empty, not too long, and its directory exists and is writable (or
// every dump would fail). Says why in one line if not.
bool UsablePrefix(const char* prefix) {
  if (prefix == nullptr || prefix[0] == '\0') {
    internal::Log("HeapProfilerStart: empty file-name prefix; heap profiling is off");
    return false;
  }
  if (strlen(prefix) >= PATH_MAX) {
    internal::Log("HEAPPROFILE prefix is too long (%zu bytes); heap profiling is off",
                  strlen(prefix));
    return false;
  }
  char dir[PATH_MAX];
  const char* slash = strrchr(prefix, '/');
  // So must the longest file name a dump uses: <base>_<pid>.NNNN.heap.tmp.XXXXXXXX.
  const size_t base_len = strlen(slash == nullptr ? prefix : slash + 1);
  constexpr size_t kLongestSuffix = sizeof("_4294967295.0001.heap.tmp.XXXXXXXX") - 1;
  if (base_len + kLongestSuffix > NAME_MAX) {
    internal::Log(
        "HEAPPROFILE=%s: file name too long (dump file names would exceed %d bytes); "
        "heap profiling is off",
        prefix, NAME_MAX);
    return false;
  }
  if (slash == nullptr) {
    dir[0] = '.';
    dir[1] = '\0';
  } else if (slash == prefix) {
    dir[0] = '/';
    dir[1] = '\0';
  } else {
    size_t n = static_cast<size_t>(slash - prefix);
    memcpy(dir, prefix, n);
    dir[n] = '\0';
  }
  if (access(dir, W_OK | X_OK) != 0) {
    internal::Log("HEAPPROFILE=%s: cannot write to directory %s (%s); heap profiling is off",
                  prefix, dir, ErrName(errno));
    return false;
  }
  return true;
}

}  // namespace

bool StartHeapProfiling(const char* prefix) {
  if (!UsablePrefix(prefix)) return false;
  {
    internal::SpinLockHolder h(&g_profiler.lock);
    if (g_profiler.profiling.load()) return true;
    g_profiler.config = ReadProfilerConfig();
    alloc::SetSamplingPeriodUnlessChosen(kDefaultSampleParameter);
    FitSamplingToIntervals(g_profiler.config);
    BeginProfilingLocked(prefix);
  }
  EnableSampleRecording();
  if (!SampleRecordingOn()) return false;
  InstallDumpSignal();
  if (!Quiet()) internal::LogRaw("Starting tracking the heap");
  if (internal::Verbose())
    internal::Log("heap profiler: prefix %s, sample parameter %lld, stack depth %d", prefix,
                  static_cast<long long>(alloc::SamplingPeriod()), g_profiler.config.stack_depth);
  alloc::SetSlotFreeHook(&OnSlotFree);
  g_profiler.profiling.store(true);
  static std::atomic<bool> exit_registered{false};
  // The final dump, like gperftools; OnMainStart registers an earlier one (before destructors).
  if (!exit_registered.exchange(true)) atexit(&ExitDump);
  StartHelperThread();
  return true;
}

void StopHeapProfiling() {
  internal::SpinLockHolder h(&g_profiler.lock);
  g_profiler.profiling.store(false);
  StopPeakTracking();
  alloc::SetSlotFreeHook(nullptr);
}

HEAPKIT_ALWAYS_RUN_CODE void OnMainStart() {
  if (g_profiler.profiling.load(std::memory_order_relaxed)) atexit(&ExitDump);
}

bool HeapProfilingOn() { return g_profiler.profiling.load(); }

bool DumpHeapProfileNow(const char* reason) {
  internal::SpinLockHolder h(&g_profiler.lock);
  if (!g_profiler.profiling.load() || g_profiler.exiting.load()) return false;
  return DumpLocked(reason != nullptr ? reason : "");
}

}  // namespace heapkit::prof
