// Thread cache: the lock-free front end. One per thread (see allocator.cc for TLS handling).
//
// Each size class has a singly linked free list with:
//   max_length  slow start: grows by one per fetch until the batch size, then by batches
//               (up to kMaxDynamicLength); shrinks by a batch after kMaxOverages overflows;
//   lowater     the minimum length since the last GC. GC (Scavenge, run when the cache exceeds
//               max_size_) returns lowater/2 objects of each list to the central tier.
// max_size_ starts at kMinSize; after a GC the cache asks the registry for kStealAmount more,
// taken from the unclaimed budget (TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES minus all caches'
// max_size_) or stolen from another cache (round robin) above kMinSize.
//
// Only the owning thread touches the lists. Other threads may read size_ (statistics) and
// write sample_left_ (SetSampleParameter) with relaxed atomics, and the registry adjusts
// max_size_ of victims under its lock (a racy but harmless budget transfer).
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
// is empty with max_length 0, so the fast paths fall into their slow paths without writing
// to it and need no separate null check. Never registered, never written.
extern ThreadCache g_empty_cache;

class ThreadCache {
 public:
  static constexpr uint32_t kMaxDynamicLength = 8192;
  static constexpr uint32_t kMaxOverages = 3;
  static constexpr size_t kMinSize = 512 * 1024;
  static constexpr size_t kStealAmount = 64 * 1024;

  struct FreeList {
    void* head = nullptr;
    uint32_t length = 0;
    uint32_t lowater = 0;
    uint32_t max_length = 0;  // Init sets 1; 0 only in the empty cache (every free overflows)
    uint32_t object_size = 0;  // copy of the class size, to keep the fast path in one line
    uint32_t overages = 0;
  };

  void Init(CentralFreeList* central, const SizeMap* sizemap, ThreadCacheRegistry* registry,
            size_t max_size, uint64_t seed);

  // nullptr (errno = ENOMEM) only when the central tier is out of memory.
  HEAPKIT_ALWAYS_INLINE void* Allocate(uint32_t cls) {
    void* p = Pop(cls);
    if (HEAPKIT_UNLIKELY(p == nullptr)) return FetchFromCentral(cls);
    return p;
  }

  // Pops the head of list cls, nullptr when it is empty (always so in the empty cache).
  HEAPKIT_ALWAYS_INLINE void* Pop(uint32_t cls) { return PopAt(cls * SizeMap::kListStride); }
  // Same, with the list given by its byte offset (SizeMap::SmallListOffset).
  HEAPKIT_ALWAYS_INLINE void* PopAt(uint32_t offset) {
    FreeList& list = *reinterpret_cast<FreeList*>(reinterpret_cast<char*>(lists_) + offset);
    void* head = list.head;
    if (HEAPKIT_UNLIKELY(head == nullptr)) return nullptr;
    list.head = *static_cast<void**>(head);
    if (--list.length < list.lowater) list.lowater = list.length;
    size_ -= list.object_size;
    return head;
  }

  // The free fast path (allocator.h) pushes through these: it checks head (double free) and
  // length < max_length (false in the empty cache) before writing anything.
  FreeList& mutable_list(uint32_t cls) { return lists_[cls]; }
  // Adds bytes to the cached size; true if the cache is now over its budget (-> Overflow).
  HEAPKIT_ALWAYS_INLINE bool AddSize(size_t bytes) {
    size_ += bytes;
    return size_ > max_size_;
  }
  // After a push (length still ≤ max_length) that left the cache over budget: GC.
  void Overflow() noexcept;

  HEAPKIT_ALWAYS_INLINE void Deallocate(void* p, uint32_t cls) {
    FreeList& list = lists_[cls];
    *static_cast<void**>(p) = list.head;
    list.head = p;
    size_ += list.object_size;
    if (HEAPKIT_UNLIKELY(++list.length > list.max_length || size_ > max_size_)) {
      return DeallocateSlow(cls);
    }
  }

  // Returns every cached object to the central tier.
  void ReleaseAll();
  // GC: return lowater/2 of each list; then try to grow max_size_.
  void Scavenge();

  size_t size() const { return __atomic_load_n(&size_, __ATOMIC_RELAXED); }
  size_t max_size() const { return max_size_; }
  const FreeList& list(uint32_t cls) const { return lists_[cls]; }
  void* head(uint32_t cls) const { return lists_[cls].head; }

  // Sampling state (owned by allocator.cc).
  int64_t sample_left_ = 0;
  uint64_t sample_epoch_ = 0;
  Sampler sampler_;
  bool in_callback_ = false;

 private:
  friend class ThreadCacheRegistry;
  void* FetchFromCentral(uint32_t cls) noexcept;
  void DeallocateSlow(uint32_t cls) noexcept;
  void ReleaseToCentral(uint32_t cls, uint32_t n);

  size_t size_ = 0;
  size_t max_size_ = kMinSize;
  CentralFreeList* central_ = nullptr;
  const SizeMap* sizemap_ = nullptr;
  ThreadCacheRegistry* registry_ = nullptr;
  ThreadCache* next_ = nullptr;
  ThreadCache* prev_ = nullptr;
  FreeList lists_[kNumClassesMax];
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
  internal::ArenaFreeList<ThreadCache> alloc_;
};

}  // namespace heapkit::alloc
