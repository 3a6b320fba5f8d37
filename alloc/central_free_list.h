// Central free list of one size class: spans with free objects plus a transfer cache of full
// batches (num_to_move objects linked through their first word).
//
// Transfer cache: up to max_slots_ parked chains; a thread cache that returns exactly one
// batch parks it here and a thread cache takes it back in O(1) (which one: thread affinity
// below). Parked chains end with a null link (written by InsertRange before it takes the lock),
// so RemoveRange hands a whole chain out without touching any object under the lock. A smaller
// request (slow start) takes the front of the newest chain it may take (walking only what it
// takes), so parked memory is reused before spans are carved; a chain split that way stays
// parked with fewer objects. Other returns go to the spans: objects are carved lazily (objects
// [carved_, objects_per_span) are free and untouched), a span whose objects all came back
// returns to the page heap.
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
// Thread affinity (span_affinity.h; alloc/README.md, "Thread-affine spans"). Invariant: in the
// common case the objects of one span are live in one thread at a time, so two threads' live
// objects never share a cache line. Every span records the thread cache it last handed objects
// to, and every parked batch the owner of its first object's span (a thread cache's list holds
// objects of its own spans unless the program passes objects between threads). A refill takes,
// in this order: a parked batch it may take (its own, unowned or orphaned, newest first); when
// the transfer cache is at least 3/4 full, the newest batch of anyone (a thread that frees what
// another allocated, and one that stopped allocating, must not block parking); objects of spans
// it may take (the first kAffinityScan spans with free objects are looked at); a fresh span
// from the page heap. Classes above kAffinityMaxObject hand anything to anyone, as without
// affinity. Only when the page heap is out of memory does a refill take other threads' batches
// or spans. A span whose objects all came back goes to the page heap and loses its owner, so
// memory moves between threads by whole spans. Remote frees end ownership: objects returned by
// a thread other than their span's owner (InsertRange's `who`) were live in two threads
// already, so a full batch of them is parked as nobody's and a span that gets one back loses
// its owner (the next taker owns it); they return to circulation at once instead of waiting
// for an owner that may not need them. A scan that passes another live thread's span moves it
// to the back, so later scans reach the spans behind the first kAffinityScan. Cost: each thread
// keeps its own partly used spans per class (as mimalloc's per-thread pages).
//
// Locking: lock_ guards everything here; it is taken before the page heap lock, never after.
// Each list starts on its own cache line (alignas), so threads working on neighbouring classes
// do not bounce one line between one class's lock and the previous class's counters.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/page_heap.h"
#include "alloc/size_classes.h"
#include "alloc/span.h"
#include "alloc/span_affinity.h"

namespace heapkit::alloc {

class alignas(64) CentralFreeList {
 public:
  static constexpr int kMaxSlots = 64;
  static constexpr size_t kTransferBytesPerClass = 512 * 1024;
  // Spans with free objects looked at for one of the requester's own (then a fresh span).
  static constexpr int kAffinityScan = 16;
  // Largest object size with thread affinity: larger objects cover 16 lines or more, of which
  // only the two end lines can be shared, and their spans hold few objects, so carving fresh
  // spans for them (prefaulted from 4 KiB) costs more than the rare shared line.
  static constexpr size_t kAffinityMaxObject = 1024;

  constexpr CentralFreeList() = default;
  void Init(uint32_t cls, const SizeMap* sizemap, PageHeap* heap);
  // Lazy initialisation: the allocator's lists start zero (in .bss) and each runs Init on its
  // first refill, so the lists of classes a program never allocates are never written. Ready
  // returns this list, initialised as the list of class cls with the size map and page heap
  // given to SetLazyInit (once, by the allocator's InitSlow; private instances, as in unit
  // tests, call Init directly). Every refill goes through Ready; objects of a class exist only
  // after its list was ready, so InsertRange needs no check.
  static void SetLazyInit(const SizeMap* sizemap, PageHeap* heap);
  HEAPKIT_ALWAYS_INLINE CentralFreeList& Ready(uint32_t cls) {
    if (HEAPKIT_UNLIKELY(!ready_.load(std::memory_order_acquire))) InitOnFirstUse(cls);
    return *this;
  }

  // Takes up to n objects (n ≤ NumToMove) for the thread cache `who` (none: any objects);
  // returns how many (0: out of memory; fewer than n when a parked chain holds fewer). The
  // chain ends with a null link; *tail is its last object, or nullptr for a parked batch that
  // was inserted without its tail.
  int RemoveRange(void** head, void** tail, int n, const SpanAffinity& who = SpanAffinity{});
  // Returns n objects linked from head. tail is the n-th object (its link is ignored), or
  // nullptr when the chain already ends with a null link after n objects (a thread cache giving
  // back the far end of its list does not walk it to find the tail).
  // `who` is the thread cache returning them (none: the spans keep their owners; see "Remote
  // frees end ownership" above).
  void InsertRange(void* head, void* tail, int n, const SpanAffinity& who = SpanAffinity{});

  // Returns every parked batch to the spans (a span whose objects all came back goes to the
  // page heap), so that their memory can leave the process: ReleaseTransferCaches.
  void ReleaseTransferCache();

  // Statistics (take the lock).
  size_t FreeObjectsInSpans();  // including never-carved objects
  size_t TransferObjects();
  size_t SpanTailBytes();  // unusable ends of this class's spans
  size_t NumSpans();
  // Central lock acquisitions by RemoveRange/InsertRange, how many found the lock held, and
  // batches handed to a thread other than their owner while it lived (the crowded rule).
  struct Counters {
    uint64_t lock_acquisitions = 0;
    uint64_t lock_contended = 0;
    uint64_t foreign_batches = 0;
  };
  Counters GetCounters();

  // For live-object enumeration (world stopped, no locks): visit each free object in the
  // transfer cache and the span free lists; spans are visited through the page map.
  template <class Fn>
  void ForEachFreeObjectUnlocked(Fn&& fn) const HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
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
  // Next to lock_: written only with it held, so that they share its cache line.
  Counters counters_ HEAPKIT_GUARDED_BY(lock_);
  struct Batch {
    void* head;          // null-terminated chain of count objects
    void* tail;          // its last object, nullptr if not known
    int count;           // num_to_move_ when parked; less after a smaller request took its front
    SpanAffinity owner;  // of the span of its first object when parked
  };
  void InitOnFirstUse(uint32_t cls);
  // slots_ exists (allocated on first use, lock held); false when the arena is out of memory.
  bool HaveSlots() HEAPKIT_REQUIRES(lock_);
  // The newest parked batch `who` may take, -1 if none.
  int FindBatch(const SpanAffinity& who) const HEAPKIT_REQUIRES(lock_);
  // Takes n objects (at most the batch) from parked slot i.
  int TakeFromBatch(int i, void** head, void** tail, int n) HEAPKIT_REQUIRES(lock_);
  Span* FindSpan(const SpanAffinity& who) HEAPKIT_REQUIRES(lock_);
  int FetchFromSpans(void** head, void** tail, int n, const SpanAffinity& who)
      HEAPKIT_REQUIRES(lock_);
  void ReleaseToSpans(void* object, const SpanAffinity& who) HEAPKIT_REQUIRES(lock_);
  bool Populate(const SpanAffinity& who) HEAPKIT_REQUIRES(lock_);

  std::atomic<bool> ready_{false};  // Init has run (release-stored after it)
  uint32_t cls_ = 0;
  static constexpr size_t kPrefaultMinObject = 4096;
  static constexpr size_t kPrefaultMaxSpan = 128 * 1024;
  size_t object_size_ = 0;
  uint32_t objects_per_span_ = 0;
  bool prefault_ = false;  // object_size_ and span size within the prefault bounds
  bool affine_ = false;    // object_size_ <= kAffinityMaxObject
  int num_to_move_ = 0;
  const SizeMap* sizemap_ = nullptr;
  PageHeap* heap_ = nullptr;
  SpanList nonempty_ HEAPKIT_GUARDED_BY(lock_);  // in-use spans with at least one free object
  SpanList empty_ HEAPKIT_GUARDED_BY(lock_);     // in-use spans whose objects are all handed out
  // max_slots_ parked batches, from the metadata arena when the first batch is parked: a list
  // that never parks one (most classes of a small program) owns none, and the lists' Init
  // writes stay on a few pages of .bss.
  Batch* slots_ HEAPKIT_GUARDED_BY(lock_) = nullptr;
  int used_slots_ HEAPKIT_GUARDED_BY(lock_) = 0;
  int max_slots_ = 0;
  size_t free_in_spans_ HEAPKIT_GUARDED_BY(lock_) = 0;
  size_t num_spans_ HEAPKIT_GUARDED_BY(lock_) = 0;
};

// A list's header is written on its first use (Ready) and by fork, which takes every list's
// lock: the parked-batch slots stay outside it (slots_).
static_assert(sizeof(CentralFreeList) <= 512, "central lists' headers grew: keep bulky state out");

}  // namespace heapkit::alloc
