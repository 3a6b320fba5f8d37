// Heap growth reporting: who made the page heap ask the OS for more memory.
//
// PageHeap::GrowHeap runs under the page-heap lock, where capturing a stack is not allowed
// (libunwind may take the dynamic loader's lock, and a thread inside dlopen may be waiting for
// our lock). So the growth is only noted in a thread-local counter there, and the slow
// allocation paths report it once they hold no allocator lock: ReportPendingGrowth() calls the
// registered hook (hooks.h, SetHeapGrowthHook) on the thread that grew the heap, whose stack is
// then the allocation that caused the growth.
#pragma once

#include <cstddef>

#include "alloc/common.h"

namespace heapkit::alloc {

extern __thread size_t tls_pending_growth_bytes __attribute__((tls_model("initial-exec")));

// Under the page-heap lock: `bytes` were just obtained from the OS for this thread.
inline void NoteHeapGrowth(size_t bytes) { tls_pending_growth_bytes += bytes; }

void ReportPendingGrowthSlow() noexcept;
// With no allocator lock held.
HEAPKIT_ALWAYS_INLINE void ReportPendingGrowth() {
  if (HEAPKIT_UNLIKELY(tls_pending_growth_bytes != 0)) ReportPendingGrowthSlow();
}

}  // namespace heapkit::alloc
