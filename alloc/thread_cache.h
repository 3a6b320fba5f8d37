// Thread cache: the lock-free front end. One per thread (see allocator.cc for TLS handling).
//
// Each size class has a singly linked, nullptr-terminated free list with:
//   length      stored as `room` = max_length - length (signed), so that the free fast path
//               does one decrement and a sign branch (room < 0 -> overflow slow path) and the
//               malloc fast path one increment; `list.length` still reads as the length;
//   max_length  slow start: grows per fetch and per overflow by one up to 8, then doubles up to
//               the batch size; then by a batch per fetch (up to kMaxDynamicLength); shrinks
//               by a batch after kMaxOverages overflows;
//   lowater     low-water estimate for GC, maintained off the fast path: the length at the last
//               GC, lowered by every slow-path event that saw the list shorter, 0 after a
//               refill from the central tier (the list ran empty). It is an upper bound of the
//               true minimum length since the last GC (malloc's pop does not track it).
// GC (Scavenge, run when the cache exceeds max_size_) returns lowater/2 objects of each list to
// the central tier.
//
// Budget: budget_ is a lower bound of max_size_ - size (bytes cached). Frees subtract the object
// size; pops do not add it back (one instruction less on malloc), refills subtract what they
// bring, releases add what they return. When it goes negative the slow path recomputes the exact
// size from the lists (SyncBudget) and runs GC only if the cache really is over max_size_.
// max_size_ starts at kMinSize; after a GC the cache asks the registry for kStealAmount more,
// taken from the unclaimed budget (TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES minus all caches'
// max_size_) or stolen from another cache (round robin) above kMinSize.
//
// Only the owning thread touches the lists. Other threads may read the lists' counters (size(),
// statistics) and write sample_left_ (SetSampleParameter) with relaxed atomics, and the registry
// adjusts max_size_ of victims under its lock (a racy but harmless budget transfer: the victim
// sees it at its next budget sync).
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/central_free_list.h"
#include "alloc/common.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/sampler.h"
#include "alloc/size_classes.h"

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
    Fill length;               // length; length.max is max_length (1 after Init, 0 when empty)
    uint32_t lowater = 0;      // GC estimate, see above
    uint32_t object_size = 0;  // copy of the class size, to keep the fast path in one line
    uint32_t overages = 0;
    uint32_t unused_ = 0;
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
  static constexpr size_t kDirLength = (kMaxSmallLookup >> 3) + 1;

  // The empty cache: every list empty, room kEmptyRoom, every direct entry on list 0.
  constexpr ThreadCache() {
    for (FreeList& l : lists_) l.length.room = kEmptyRoom;
    for (FreeList*& d : dir_) d = &lists_[0];
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
  // The list of SizeClass(size) for size ≤ kMaxSmallLookup: one load from a per-cache table.
  HEAPKIT_ALWAYS_INLINE FreeList& SmallList(size_t size) { return *dir_[(size + 7) >> 3]; }
  // The list of the class whose page-map info word is `info` (class << 5, sampled bit clear).
  HEAPKIT_ALWAYS_INLINE FreeList& ListAt(uint32_t info) {
    return *reinterpret_cast<FreeList*>(reinterpret_cast<char*>(lists_) + info);
  }

  // The free fast path (allocator.h) pushes through these: it checks head (double free) and
  // decrements room (negative in the empty cache) before writing anything else.
  FreeList& mutable_list(uint32_t cls) { return lists_[cls]; }
  // After a push that left budget_ negative: sync the budget, GC if really over max_size_.
  void Overflow() noexcept;
  // A free found room < 0 in the empty cache: store kEmptyRoom again.
  void RepairEmpty(uint32_t cls) { lists_[cls].length.room = kEmptyRoom; }

  HEAPKIT_ALWAYS_INLINE void Deallocate(void* p, uint32_t cls) {
    FreeList& list = lists_[cls];
    *static_cast<void**>(p) = list.head;
    list.head = p;
    budget_ -= list.object_size;
    if (HEAPKIT_UNLIKELY(--list.length.room < 0 || budget_ < 0)) return DeallocateSlow(cls);
  }
  // The free fast path decremented room below 0: push p, then release a batch.
  void PushOverflow(void* p, uint32_t cls) noexcept;

  // Returns every cached object to the central tier.
  void ReleaseAll();
  // GC: return lowater/2 of each list; then try to grow max_size_.
  void Scavenge();

  // Bytes cached (sum over lists of length * size); callable from other threads.
  size_t size() const;
  size_t max_size() const { return max_size_; }
  const FreeList& list(uint32_t cls) const { return lists_[cls]; }
  void* head(uint32_t cls) const { return lists_[cls].head; }

  // Sampling state (owned by allocator.cc).
  int64_t sample_left_ = 0;
  // Lower bound of max_size_ - size() (see above); written by the owner only.
  int64_t budget_ = 0;
  uint64_t sample_epoch_ = 0;
  Sampler sampler_;
  bool in_callback_ = false;

 private:
  friend class ThreadCacheRegistry;
  void* FetchFromCentral(uint32_t cls) noexcept;
  void DeallocateSlow(uint32_t cls) noexcept;
  void ReleaseToCentral(uint32_t cls, uint32_t n);
  static void SetMaxLength(FreeList& list, uint32_t max) {
    list.length.room += static_cast<int32_t>(max) - static_cast<int32_t>(list.length.max);
    list.length.max = max;
  }
  // budget_ = max_size_ - size(); true if the cache is over max_size_.
  bool SyncBudget();

  size_t max_size_ = kMinSize;
  CentralFreeList* central_ = nullptr;
  const SizeMap* sizemap_ = nullptr;
  ThreadCacheRegistry* registry_ = nullptr;
  ThreadCache* next_ = nullptr;
  ThreadCache* prev_ = nullptr;
  FreeList* dir_[kDirLength] = {};  // dir_[(size + 7) >> 3] = &lists_[SizeClass(size)]
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
