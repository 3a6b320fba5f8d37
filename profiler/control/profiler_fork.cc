#include "profiler/control/profiler_fork.h"

#include "alloc/internal/fork_handlers.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/time/lifetime_table.h"
#include "profiler/time/peak_tracker.h"
#include "profiler/profiler_state.h"
#include "profiler/control/profiler_thread.h"
#include "profiler/table/stack_table.h"

namespace heapkit::prof {
namespace {

bool g_atfork_registered = false;

// The profiler's locks are held from ForkPrepare to ForkParent/ForkChild (analysis off).
void ForkPrepare() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  g_profiler.lock.Lock();
  GlobalStackTable().ForkPrepare();
  PeakForkPrepare();
  LifetimeForkPrepare();
}

void ForkParent() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  LifetimeForkDone();
  PeakForkDone();
  GlobalStackTable().ForkParent();
  g_profiler.lock.Unlock();
}

void ForkChild() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  LifetimeForkDone();
  PeakForkDone();
  GlobalStackTable().ForkChild();
  if (g_profiler.profiling.load(std::memory_order_relaxed)) RenameDumpsForChildLocked();
  HelperThreadForkChild();
  g_profiler.lock.Unlock();
}

}  // namespace

void RegisterProfilerForkHandlers() {
  if (g_atfork_registered) return;
  g_atfork_registered = true;
  internal::RegisterForkHandlers(&ForkPrepare, &ForkParent, &ForkChild);
}

}  // namespace heapkit::prof
