// Heap growth stacks: MallocExtension::GetHeapGrowthStacks.
//
// The allocator calls OnHeapGrowth (via alloc::SetHeapGrowthHook) on the thread whose
// allocation made the page heap take more memory from the OS, with no allocator lock held.
// We capture that stack and add the growth to the record of that stack: growth events are
// rare (at least 2 MiB each), so every one is recorded — nothing sampled, nothing dropped
// short of metadata memory running out — except on a thread whose recording is disabled
// (thread_recording.h: the HTTP endpoint's server thread, a HeapLeakChecker::Disabler scope),
// whose growths stay out of these stacks as its allocations stay out of the heap profile.
// Records live in the metadata arena (never freed); a spin lock guards the list, and nothing is
// allocated from the heap.
//
// WriteGrowthStacks emits the legacy format with "@ growthz" (gperftools' tag), one line per
// distinct stack: count = growth events, bytes = bytes obtained from the OS.
#pragma once

#include <cstddef>

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

void OnHeapGrowth(size_t bytes);
// Once, before the hook is set (ProfilerStartup): the fork handlers that keep the records'
// lock consistent in a child (growth_stacks.cc).
void RegisterGrowthForkHandlers();
bool WriteGrowthStacks(OutputSink* sink);

}  // namespace heapkit::prof
