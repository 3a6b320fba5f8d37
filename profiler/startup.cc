// Profiler start-up. The full runtime's entry-point object references heapkit_profiler_anchor,
// so linking the static libheapkit.a pulls this object (and with it the whole profiler) in.
#include "profiler/heap_profiler.h"

extern "C" {
__attribute__((visibility("default"))) int heapkit_profiler_anchor = 0;
}

namespace {

// High priority: HEAPPROFILE starts before ordinary constructors allocate, so their
// allocations are profiled. (101 is the first priority available to programs.)
__attribute__((constructor(101))) void HeapkitProfilerInit() { heapkit::prof::ProfilerStartup(); }

}  // namespace
