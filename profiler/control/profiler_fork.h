// fork() handling for the profiler.
//
// Invariant (lock order): the prepare handler takes the state lock (profiler_state.h), then all
// stack-table locks, then the dlclose()d-modules lock; the parent and child handlers release
// them in reverse order. So a child never inherits a lock held by a thread that did not
// survive the fork. The child renames its dumps <prefix>_<pid>.NNNN.heap (numbered from .0001)
// and restarts the helper thread later (profiler_thread.h).
#pragma once

namespace heapkit::prof {

// Registers the handlers with pthread_atfork once. Called under the recording-enable lock.
void RegisterProfilerForkHandlers();

}  // namespace heapkit::prof
