// The helper thread behind HEAP_PROFILE_TIME_INTERVAL, HEAPPROFILESIGNAL and
// HEAP_PROFILE_RSS_LIMIT (rss_limit.h: a check every kRssLimitPollMs).
//
// Invariants:
//  * It exists only when one of the three is set. It sleeps in poll() on a pipe: the signal
//    handler writes one byte to the pipe (the only thing it does; WakeHelperFromSignal), and
//    the poll timeout implements the time interval, so idle processes dump too.
//  * It dumps under the state lock (profiler_state.h) like every other dump, and never after
//    the exit dump.
//  * It does not survive fork(): the child closes the shared pipe, opens its own and restarts
//    the thread at its next sampled allocation (MaybeRestartHelperThread), not in the fork
//    handler, where creating a thread is not allowed.
//  * It never takes the program's signals and its own allocations are not recorded.
#pragma once

#include <atomic>

#include "profiler/profiler_state.h"

namespace heapkit::prof {

// Starts the thread if the settings ask for one and it is not running. Idempotent.
void StartHelperThread();

// Async-signal-safe: asks the helper thread for a "signal" dump.
void WakeHelperFromSignal();

// Forked child, from the fork handler: the parent's thread is gone; arranges the restart.
void HelperThreadForkChild();

// The child's restart, on the sampling path while profiling: one relaxed load when idle.
inline void MaybeRestartHelperThread() {
  std::atomic<bool>& restart = g_profiler.helper_restart;
  if (__builtin_expect(restart.load(std::memory_order_relaxed), false) && restart.exchange(false))
    StartHelperThread();
}

}  // namespace heapkit::prof
