// Central free list of one size class: spans with free objects plus a transfer cache of full
// batches (num_to_move objects linked through their first word).
//
// Transfer cache: up to max_slots_ parked chains; a thread cache that returns exactly one
// batch parks it here and another thread takes it back in O(1). Parked chains end with a null
// link (written by InsertRange before it takes the lock), so RemoveRange hands a whole chain out
// without touching any object under the lock. A smaller request (slow start) takes the front of
// the newest chain (walking only what it takes), so parked memory is reused before spans are
// carved; a chain split that way stays parked with fewer objects. Other returns go to the
// spans: objects are carved lazily (objects [carved_, objects_per_span) are free and
// untouched), a span whose objects all came back returns to the page heap.
//
// Prefault: a span for objects of kPrefaultMinObject bytes or more, at most kPrefaultMaxSpan
// long, is backed (SystemPrefault) when the list takes it from the page heap. Such objects cover
// several OS pages and programs often read parts they never wrote (realloc copies the whole old
// block): a read of an untouched page maps the shared zero page, and the first write then
// replaces it, which in a multi-threaded process flushes the TLB of every CPU running the
// process (an IPI per page, expensive in VMs). Prefaulting takes the page faults the objects
// would mostly take anyway, costs at most the span's untouched pages of RSS, and saves those
// flushes: t-test1 <= 32 KiB with 2 threads went from ~4 500 TLB shootdowns per run to under 250
// (alloc/README.md, "Prefaulting spans of multi-page objects").
// Locking: lock_ guards everything here; it is taken before the page heap lock, never after.
// Each list starts on its own cache line (alignas), so threads working on neighbouring classes
// do not bounce one line between one class's lock and the previous class's counters.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/page_heap.h"
#include "alloc/size_classes.h"
#include "alloc/span.h"

namespace heapkit::alloc {

class alignas(64) CentralFreeList {
 public:
  static constexpr int kMaxSlots = 64;
  static constexpr size_t kTransferBytesPerClass = 512 * 1024;

  constexpr CentralFreeList() = default;
  void Init(uint32_t cls, const SizeMap* sizemap, PageHeap* heap);

  // Takes up to n objects (n ≤ NumToMove); returns how many (0: out of memory; fewer than n
  // when a parked chain holds fewer). The chain ends with a null link; *tail is its last
  // object, or nullptr for a parked batch that was inserted without its tail.
  int RemoveRange(void** head, void** tail, int n);
  // Returns n objects linked from head. tail is the n-th object (its link is ignored), or
  // nullptr when the chain already ends with a null link after n objects (a thread cache giving
  // back the far end of its list does not walk it to find the tail).
  void InsertRange(void* head, void* tail, int n);

  // Statistics (take the lock).
  size_t FreeObjectsInSpans();     // including never-carved objects
  size_t TransferObjects();
  size_t SpanTailBytes();          // unusable ends of this class's spans
  size_t NumSpans();

  // For live-object enumeration (world stopped, no locks): visit each free object in the
  // transfer cache and the span free lists; spans are visited through the page map.
  template <class Fn>
  void ForEachFreeObjectUnlocked(Fn&& fn) const {
    for (int i = 0; i < used_slots_; ++i) {
      void* p = slots_[i].head;
      for (int k = 0; k < slots_[i].count; ++k) {
        void* next = *static_cast<void**>(p);
        fn(p);
        p = next;
      }
    }
  }

  uint32_t size_class() const { return cls_; }
  internal::SpinLock lock_;

 private:
  struct Batch {
    void* head;  // null-terminated chain of count objects
    void* tail;  // its last object, nullptr if not known
    int count;   // num_to_move_ when parked; less after a smaller request took its front
  };
  int FetchFromSpans(void** head, void** tail, int n);
  void ReleaseToSpans(void* object);
  bool Populate();

  uint32_t cls_ = 0;
  static constexpr size_t kPrefaultMinObject = 4096;
  static constexpr size_t kPrefaultMaxSpan = 128 * 1024;
  size_t object_size_ = 0;
  uint32_t objects_per_span_ = 0;
  bool prefault_ = false;  // object_size_ and span size within the prefault bounds
  int num_to_move_ = 0;
  const SizeMap* sizemap_ = nullptr;
  PageHeap* heap_ = nullptr;
  Span nonempty_;  // in-use spans with at least one free object
  Span empty_;     // in-use spans whose objects are all handed out
  Batch slots_[kMaxSlots] = {};
  int used_slots_ = 0;
  int max_slots_ = 0;
  size_t free_in_spans_ = 0;
  size_t num_spans_ = 0;
};

}  // namespace heapkit::alloc
