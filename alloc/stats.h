// Allocator statistics and control, shared by MallocExtension, mallinfo and tests.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::alloc {

struct AllocatorStats {
  size_t system_bytes = 0;             // heap memory mapped from the OS (excl. metadata)
  size_t pageheap_free_bytes = 0;      // free, backed pages in the page heap
  size_t pageheap_unmapped_bytes = 0;  // free pages released to the OS
  size_t central_free_bytes = 0;       // free objects in spans of central lists (incl. uncarved)
  size_t transfer_free_bytes = 0;      // objects parked in transfer caches
  size_t thread_cache_free_bytes = 0;  // objects in thread caches
  size_t span_tail_bytes = 0;          // unusable ends of small-object spans
  size_t metadata_bytes = 0;           // arena + page map
  size_t in_use_bytes = 0;             // handed to the application (usable sizes), exact
  size_t large_in_use_bytes = 0;       // of which large (page-level) objects
  size_t num_thread_caches = 0;
  size_t max_total_thread_cache_bytes = 0;
  size_t spans_in_use = 0;
  size_t heap_grows = 0;
  // Central lists, summed over classes (CentralFreeList::Counters): lock acquisitions by
  // refills and releases, how many found the lock held, batches handed to a thread other than
  // their live owner (span_affinity.h).
  uint64_t central_lock_acquisitions = 0;
  uint64_t central_lock_contended = 0;
  uint64_t central_foreign_batches = 0;
};

// Takes each tier's lock in turn; exact when no other thread allocates meanwhile.
void GetAllocatorStats(AllocatorStats* stats);
// gperftools-style human-readable text (MallocExtension::GetStats). Returns the length needed
// (the output is truncated to `size` - 1 and NUL-terminated).
size_t FormatStats(char* buffer, size_t size);

// Returns the calling thread's cached objects and, for ReleaseFreeMemory, every free page.
void ReleaseFreeMemory();
// Releases free page-heap spans, oldest first, until at least `bytes` were released; returns
// the bytes released (0: no free span left).
size_t ReleaseToSystem(size_t bytes);
void SetReleaseRate(double rate);
double GetReleaseRate();
void SetMaxTotalThreadCacheBytes(size_t bytes);
void SetAggressiveDecommit(bool on);
bool GetAggressiveDecommit();
// Bytes held by the calling thread's cache (0 for a thread without one).
size_t CurrentThreadCacheBytes();
// Returns the calling thread's cache to the central tier (MallocExtension::MarkThreadIdle).
void MarkThreadIdle();
// Returns the transfer caches' parked batches to their spans (the HTTP endpoint, after it
// freed its symbolizer: what its thread cache parked there would stay resident). The program's
// next refills of those classes take objects from the spans.
void ReleaseTransferCaches();

}  // namespace heapkit::alloc
