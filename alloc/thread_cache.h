// Thread cache: the lock-free front end. One per thread (see allocator.cc for TLS handling).
//
// Each size class has a singly linked, nullptr-terminated free list with:
//   length      stored as `room` = max_length - length (signed), so that the free fast path
//               does one decrement and a sign branch (room < 0 -> overflow slow path) and the
//               malloc fast path one increment; `list.length` still reads as the length;
//   max_length  0 after Init (the first free of a class takes the slow path); slow start: grows
//               per fetch and per overflow by one up to 8, then doubles up to the batch size;
//               then by a batch per fetch (up to kMaxDynamicLength); shrinks by a batch after
//               kMaxOverages overflows; every growth is subject to the capacity bound below;
//   lowater     low-water estimate for GC, maintained off the fast path: the length at the last
//               GC, lowered by every slow-path event that saw the list shorter, 0 after a
//               refill from the central tier (the list ran empty). It is an upper bound of the
//               true minimum length since the last GC (malloc's pop does not track it).
//   active      a slow-path event (refill or overflow) hit the list since the last GC.
//
// Capacity model: capacity_ = sum over lists of max_length * object size, and a list's
// max_length only grows (Grow, slow paths) while capacity_ stays <= max_size_. A list never
// holds more than max_length objects (the free fast path's room check; an overflow releases a
// batch at once), so the bytes cached are <= capacity_ <= max_size_ without any byte accounting
// on the fast paths. When a growth does not fit, GC (Scavenge) runs: it returns lowater/2
// objects of each list to the central tier, gives back the slack of lists with no slow-path
// event since the last GC (max_length := length) and shrinks long lists by a batch; then the
// cache asks the registry for kStealAmount more max_size_, taken from the unclaimed budget
// (TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES minus all caches' max_size_) or stolen from another
// cache (round robin) above kMinSize. While the registry has unclaimed budget, a growth takes
// kStealAmount steps from it without GC (capacity runs ahead of the bytes really cached, so
// GC-first would trim hot lists far more often than the byte budget did). A growth that still
// does not fit is not made (the list keeps moving batches to and from the central tier).
// max_size_ starts at kMinSize.
//
// Only the owning thread touches the lists. Other threads may read the lists' counters (size(),
// statistics) and write sample_left_ (sampling_period.h, its setters) with relaxed atomics, and the
// registry adjusts max_size_ of victims under its lock (a relaxed atomic store the owner reads
// without the lock: the victim sees it at its next growth, whose GC then shrinks it toward the new
// limit).
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/central_free_list.h"
#include "alloc/common.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/sampler.h"
#include "alloc/size_classes.h"
#include "alloc/span_affinity.h"

namespace heapkit::alloc {

class ThreadCacheRegistry;
class ThreadCache;
// The cache of threads that have none (not created yet, being created, exiting): every list
// is empty with max_length 0 and room kEmptyRoom, so the fast paths fall into their slow paths
// and need no separate null check. Never registered; the only writes to it are the free fast
// path's room decrements (FreeOverflow stores kEmptyRoom back), which can never make room >= 0.
extern ThreadCache g_empty_cache;

class ThreadCache {
 public:
  // Length and max_length of a list, stored as room = max - length.
  struct Fill {
    int32_t room = 0;
    uint32_t max = 0;
    // The list length (so that `list.length` reads as a number).
    operator uint32_t() const {
      return static_cast<uint32_t>(__atomic_load_n(&max, __ATOMIC_RELAXED) -
                                   static_cast<uint32_t>(__atomic_load_n(&room, __ATOMIC_RELAXED)));
    }
  };
  struct FreeList {
    void* head = nullptr;
    Fill length;               // length; length.max is max_length (0 after Init)
    uint32_t lowater = 0;      // GC estimate, see above
    uint32_t object_size = 0;  // copy of the class size, to keep the fast path in one line
    uint32_t overages = 0;
    uint32_t active = 0;  // refill or overflow since the last GC
    uint32_t max_length() const { return length.max; }
  };

 private:
  // First member: the free fast path addresses lists as tc + info, with no extra offset.
  FreeList lists_[kNumClassesMax];

 public:
  static constexpr uint32_t kMaxDynamicLength = 8192;
  static constexpr uint32_t kMaxOverages = 3;
  static constexpr size_t kMinSize = 512 * 1024;
  static constexpr size_t kStealAmount = 64 * 1024;
  // room of every list of the empty cache: frees decrement it (racily, by at most one per
  // thread before the slow path stores it again), it never gets near 0.
  static constexpr int32_t kEmptyRoom = -(int32_t{1} << 30);
  // list_off_[size] = SizeClass(size) * kListStride / 8 for every size ≤ kMaxSmallLookup: the
  // malloc fast path loads this byte with the size as index and addresses the list as
  // this + byte * 8 (an x86 scaled index), so it needs no (size + 7) >> 3 arithmetic.
  static constexpr size_t kListOffScale = 8;
  static constexpr size_t kListOffLength = kMaxSmallLookup + 1;

  // The empty cache: every list empty, room kEmptyRoom, every size on list 0.
  constexpr ThreadCache() {
    for (FreeList& l : lists_) l.length.room = kEmptyRoom;
    // A recycled cache's tag word may still be read by another thread through a stale
    // SpanAffinity (span_affinity.h): clear it with an atomic store, as Destroy does.
    if (__builtin_is_constant_evaluated()) {
      affinity_tag_ = 0;
    } else {
      __atomic_store_n(&affinity_tag_, 0, __ATOMIC_RELAXED);
    }
  }

  void Init(CentralFreeList* central, const SizeMap* sizemap, ThreadCacheRegistry* registry,
            size_t max_size, uint64_t seed);

  // nullptr (errno = ENOMEM) only when the central tier is out of memory.
  HEAPKIT_ALWAYS_INLINE void* Allocate(uint32_t cls) {
    void* p = Pop(cls);
    if (HEAPKIT_UNLIKELY(p == nullptr)) return FetchFromCentral(cls);
    return p;
  }

  // Pops the head of list cls, nullptr when it is empty (always so in the empty cache).
  HEAPKIT_ALWAYS_INLINE void* Pop(uint32_t cls) { return PopFrom(lists_[cls]); }
  static HEAPKIT_ALWAYS_INLINE void* PopFrom(FreeList& list) {
    void* head = list.head;
    if (HEAPKIT_UNLIKELY(head == nullptr)) return nullptr;
    list.head = *static_cast<void**>(head);
    ++list.length.room;
    return head;
  }
  // The list of SizeClass(size) for size ≤ kMaxSmallLookup: one byte load from a per-cache
  // table indexed by the size itself (lists_ is the first member, at offset 0).
  HEAPKIT_ALWAYS_INLINE size_t SmallListOffset(size_t size) const { return list_off_[size]; }
  HEAPKIT_ALWAYS_INLINE FreeList& ListAtOffset(size_t off) {
    return *reinterpret_cast<FreeList*>(reinterpret_cast<char*>(this) + off * kListOffScale);
  }
  HEAPKIT_ALWAYS_INLINE FreeList& SmallList(size_t size) {
    return ListAtOffset(SmallListOffset(size));
  }
  // The list of the class whose page-map info word is `info` (class << 5, sampled bit clear).
  HEAPKIT_ALWAYS_INLINE FreeList& ListAt(uint32_t info) {
    return *reinterpret_cast<FreeList*>(reinterpret_cast<char*>(lists_) + info);
  }

  // The free fast path (allocator.h) pushes through these: it checks head (double free) and
  // decrements room (negative in the empty cache) before writing anything else.
  FreeList& mutable_list(uint32_t cls) { return lists_[cls]; }
  // A free found room < 0 in the empty cache: store kEmptyRoom again.
  void RepairEmpty(uint32_t cls) { lists_[cls].length.room = kEmptyRoom; }

  HEAPKIT_ALWAYS_INLINE void Deallocate(void* p, uint32_t cls) {
    FreeList& list = lists_[cls];
    *static_cast<void**>(p) = list.head;
    list.head = p;
    if (HEAPKIT_UNLIKELY(--list.length.room < 0)) return DeallocateSlow(cls);
  }
  // The free fast path decremented room below 0: push p, then release a batch.
  void PushOverflow(void* p, uint32_t cls) noexcept;

  // Returns every cached object to the central tier.
  void ReleaseAll();
  // GC: return lowater/2 of each list, give back unused capacity; then try to grow max_size_.
  void Scavenge();

  // Bytes cached (sum over lists of length * size); callable from other threads.
  size_t size() const;
  size_t max_size() const { return max_size_; }
  // Sum of max_length * object size over the lists (bounds size(); <= max_size() after growth).
  size_t capacity() const { return capacity_; }
  const FreeList& list(uint32_t cls) const { return lists_[cls]; }
  void* head(uint32_t cls) const { return lists_[cls].head; }

  // Sampling state (owned by sampling.cc).
  int64_t sample_left_ = 0;
  // While MallocHook hooks are installed sample_left_ stays below zero (every allocation takes
  // the slow path) and the sampler's counter waits here (observer_hooks.h, MallocHook).
  int64_t hooked_sample_left_ = 0;
  uint64_t sample_epoch_ = 0;
  Sampler sampler_;
  bool in_callback_ = false;

 private:
  friend class ThreadCacheRegistry;
  void* FetchFromCentral(uint32_t cls) noexcept;
  void DeallocateSlow(uint32_t cls) noexcept;
  void ReleaseToCentral(uint32_t cls, uint32_t n);
  // Sets max_length and keeps capacity_ in step (shrinking is always allowed).
  void SetMaxLength(FreeList& list, uint32_t max) {
    capacity_ += (size_t{max} - list.length.max) * list.object_size;  // wraps when shrinking
    list.length.room += static_cast<int32_t>(max) - static_cast<int32_t>(list.length.max);
    list.length.max = max;
  }
  // Raises max_length to max if the capacity allows it, after a GC if needed; false if not.
  bool Grow(FreeList& list, uint32_t max) {
    const size_t need = (size_t{max} - list.length.max) * list.object_size;
    if (HEAPKIT_UNLIKELY(capacity_ + need > __atomic_load_n(&max_size_, __ATOMIC_RELAXED))) {
      return GrowSlow(list, max, need);
    }
    SetMaxLength(list, max);
    return true;
  }
  bool GrowSlow(FreeList& list, uint32_t max, size_t need);

  // This cache as the owner of central spans (span_affinity.h): a fresh tag from Init, cleared
  // by Destroy (the thread's spans and batches then belong to nobody).
  SpanAffinity affinity() const { return SpanAffinity{&affinity_tag_, affinity_tag_}; }

  size_t max_size_ = kMinSize;
  size_t capacity_ = 0;  // sum of max_length * object_size (see the capacity model above)
  CentralFreeList* central_ = nullptr;
  const SizeMap* sizemap_ = nullptr;
  ThreadCacheRegistry* registry_ = nullptr;
  ThreadCache* next_ = nullptr;
  ThreadCache* prev_ = nullptr;
  uint8_t list_off_[kListOffLength] = {};  // see kListOffScale; all 0 (list 0) when empty
  uint64_t
      affinity_tag_;  // see affinity(); read by other threads (relaxed); set by the constructor
};

static_assert(sizeof(ThreadCache::FreeList) == SizeMap::kListStride);

// All thread caches of one allocator instance and their shared size budget.
class ThreadCacheRegistry {
 public:
  static constexpr size_t kDefaultMaxTotal = 32 << 20;

  constexpr ThreadCacheRegistry() = default;
  void Init(CentralFreeList* central, const SizeMap* sizemap, size_t max_total);

  // New cache (from the arena) or nullptr when metadata memory is exhausted.
  ThreadCache* Create(uint64_t seed);
  // Returns its objects to the central tier and frees it.
  void Destroy(ThreadCache* cache);

  // Grows cache->max_size_ by kStealAmount from the unclaimed budget or another cache.
  void IncreaseCacheLimit(ThreadCache* cache);
  // Grows cache->max_size_ by kStealAmount from the unclaimed budget only; false if too little.
  bool ClaimUnclaimed(ThreadCache* cache);

  // Every cache but `self` stops owning its spans and batches (span_affinity.h): after fork(),
  // in the child, where their threads do not exist.
  void OrphanAllBut(const ThreadCache* self);

  void SetMaxTotal(size_t bytes);
  size_t max_total() const { return max_total_; }
  int64_t unclaimed() const { return unclaimed_; }
  size_t TotalCachedBytes();
  size_t NumCaches();

  // Calls fn(cache) for each cache under the lock.
  template <class Fn>
  void ForEach(Fn&& fn) {
    internal::SpinLockHolder h(&lock_);
    for (ThreadCache* c = head_; c != nullptr; c = c->next_) fn(c);
  }
  // Without the lock (world stopped).
  template <class Fn>
  void ForEachUnlocked(Fn&& fn) {
    for (ThreadCache* c = head_; c != nullptr; c = c->next_) fn(c);
  }

  internal::SpinLock lock_;

 private:
  CentralFreeList* central_ = nullptr;
  const SizeMap* sizemap_ = nullptr;
  ThreadCache* head_ = nullptr;
  ThreadCache* steal_cursor_ = nullptr;
  size_t max_total_ = 0;  // set by Init
  int64_t unclaimed_ = 0;
  // Caches start on a cache line: each 32-byte list then sits in one line (at 16-byte
  // alignment a cache could start mid-line, and every other list straddled two lines).
  internal::ArenaFreeList<ThreadCache, 64> alloc_;
};

}  // namespace heapkit::alloc
