// The allocator's global state: the tiers' one instance each, whether they are initialised,
// and the calling thread's cache. Statistics, live-object walks and side slots read it without
// the allocator's paths (allocator.h); the synchronisation rules are at the top of allocator.h.
#pragma once

#include <atomic>

#include "alloc/central_free_list.h"
#include "alloc/common.h"
#include "alloc/page_heap.h"
#include "alloc/page_map.h"
#include "alloc/size_classes.h"
#include "alloc/thread_cache.h"

namespace heapkit::alloc {

struct GlobalState {
  SizeMap sizemap;
  PageMap pagemap;
  PageHeap pageheap;
  CentralFreeList central[kNumClassesMax];
  ThreadCacheRegistry registry;
};

extern GlobalState g_state;
extern std::atomic<bool> g_initialized;
extern __thread ThreadCache* tls_cache __attribute__((tls_model("initial-exec")));

// Initialisation (allocator.cc): once, under its lock, malloc-free (rule 5 of allocator.h).
void InitSlow();
inline void EnsureInit() {
  if (HEAPKIT_UNLIKELY(!g_initialized.load(std::memory_order_acquire))) InitSlow();
}

}  // namespace heapkit::alloc
