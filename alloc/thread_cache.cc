#include "alloc/thread_cache.h"

#include <atomic>
#include <cerrno>
#include <cstring>

#include "alloc/internal/log.h"

namespace heapkit::alloc {

using internal::SpinLockHolder;

constinit ThreadCache g_empty_cache;

namespace {
std::atomic<uint64_t> last_affinity_tag{0};
}  // namespace

void ThreadCache::Init(CentralFreeList* central, const SizeMap* sizemap,
                       ThreadCacheRegistry* registry, size_t max_size, uint64_t seed) {
  central_ = central;
  sizemap_ = sizemap;
  registry_ = registry;
  max_size_ = max_size;
  capacity_ = 0;
  for (int c = 0; c < kNumClassesMax; ++c) {
    lists_[c] = FreeList{};  // max_length 0, room 0: the first free of a class overflows
    lists_[c].object_size =
        c < sizemap->num_classes() ? static_cast<uint32_t>(sizemap->ClassSize(c)) : 0;
  }
  if (static_cast<void*>(lists_) != static_cast<void*>(this)) internal::Fatal("lists_ not first");
  static_assert(kListOffScale == 8 && kListOffLength == kMaxSmallLookup + 1);
  memcpy(list_off_, sizemap->list_offsets(), kListOffLength);
  sampler_.Seed(seed);
  __atomic_store_n(&affinity_tag_, last_affinity_tag.fetch_add(1, std::memory_order_relaxed) + 1,
                   __ATOMIC_RELAXED);
}

size_t ThreadCache::size() const {
  if (sizemap_ == nullptr) return 0;  // the empty cache
  size_t total = 0;
  for (int c = 1; c < sizemap_->num_classes(); ++c) {
    total += size_t{static_cast<uint32_t>(lists_[c].length)} * lists_[c].object_size;
  }
  return total;
}

namespace {
// Slow start of max_length below the batch size (on every refill and every overflow): one more
// while the list is short (a thread that touches a class a few times caches a few objects), then
// doubling, so that a new thread's busy lists reach whole batches -- which the central tier moves
// in O(1) through its transfer cache -- after ~log2(batch) central round trips instead of
// ~batch (with linear growth a larson thread would spend its whole life in slow start: partial
// batches, every object through the central spans under a contended lock).
constexpr uint32_t kSlowStartLinear = 8;
uint32_t SlowStartNext(uint32_t max, uint32_t batch) {
  const uint32_t next = max < kSlowStartLinear ? max + 1 : max * 2;
  return next < batch ? next : batch;
}
}  // namespace

bool ThreadCache::GrowSlow(FreeList& list, uint32_t max, size_t need) {
  // First from the unclaimed total budget (no GC while the registry has budget to give, like a
  // byte-budgeted cache that is still under its limit), then by GC: it frees unused capacity and
  // asks the registry for more max_size_ (stealing from another cache if need be).
  while (capacity_ + need > __atomic_load_n(&max_size_, __ATOMIC_RELAXED)) {
    if (registry_ != nullptr && registry_->ClaimUnclaimed(this)) continue;
    Scavenge();
    if (capacity_ + need > __atomic_load_n(&max_size_, __ATOMIC_RELAXED)) return false;
    break;
  }
  SetMaxLength(list, max);
  return true;
}

void* ThreadCache::FetchFromCentral(uint32_t cls) noexcept {
  FreeList& list = lists_[cls];
  const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
  const uint32_t max = list.length.max;
  const uint32_t want = max == 0 ? 1 : (max < batch ? max : batch);
  void* head;
  void* tail;
  int got = central_[cls].Ready(cls).RemoveRange(&head, &tail, static_cast<int>(want), affinity());
  if (got == 0) {
    errno = ENOMEM;
    return nullptr;
  }
  list.lowater = 0;  // the list ran empty since the last GC
  list.active = 1;
  void* result = head;
  if (got > 1) {
    // The list is empty here: the fetched objects after the first become the list (the
    // central tier's chains end with nullptr; got - 1 < want <= max_length).
    list.head = *static_cast<void**>(head);
    list.length.room -= got - 1;
  }
  // Slow start. After the objects are in the list: a GC in Grow may release some of them.
  if (max < batch) {
    Grow(list, SlowStartNext(max, batch));
  } else {
    uint32_t grown = max + batch;
    if (grown > kMaxDynamicLength) grown = kMaxDynamicLength;
    grown -= grown % batch;
    if (grown > max) Grow(list, grown);
  }
  return result;
}

namespace {
[[noreturn]] __attribute__((noinline, cold)) void ListCorrupt(const void* newest) {
  internal::Fatal(
      "attempt to free invalid pointer %p (double free: a thread-cache list is "
      "shorter than its count)",
      newest);
}
}  // namespace

// Gives back the n oldest objects of the list -- its far end, the coldest in this CPU's cache --
// and keeps the newest. Only the kept prefix and the cut points between batches are walked:
// the common overflow (length = batch + 1, release one batch) walks nothing, and the released
// part already ends with the list's null link, which is what the central tier needs (tail
// nullptr). The walked part is checked for a list shorter than its count (a double free).
void ThreadCache::ReleaseToCentral(uint32_t cls, uint32_t n) {
  FreeList& list = lists_[cls];
  uint32_t length = list.length;
  if (n > length) n = length;
  if (n > 0) {
    const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
    void* const newest = list.head;  // the last object freed to this list
    auto next = [newest](void* p) {
      // A list shorter than its count means an object was pushed twice (a double free that was
      // not at the head, which made the list a cycle): stop before following the null link.
      if (HEAPKIT_UNLIKELY(p == nullptr)) ListCorrupt(newest);
      return *static_cast<void**>(p);
    };
    const uint32_t keep = length - n;
    void* chain = list.head;
    if (keep > 0) {
      void* last = list.head;
      for (uint32_t i = 1; i < keep; ++i) last = next(last);
      chain = next(last);
      if (HEAPKIT_UNLIKELY(chain == nullptr)) ListCorrupt(newest);
      *static_cast<void**>(last) = nullptr;
    } else {
      list.head = nullptr;
    }
    list.length.room += static_cast<int32_t>(n);
    length = keep;
    while (n > 0) {
      const uint32_t k = n < batch ? n : batch;
      void* head = chain;
      void* tail = nullptr;  // the last piece ends with the list's null link
      if (k < n) {
        tail = head;
        for (uint32_t i = 1; i < k; ++i) tail = next(tail);
        chain = next(tail);
        if (HEAPKIT_UNLIKELY(chain == nullptr)) ListCorrupt(newest);
      }
      central_[cls].InsertRange(head, tail, static_cast<int>(k), affinity());
      n -= k;
    }
  }
  if (list.lowater > length) list.lowater = length;
}

void ThreadCache::DeallocateSlow(uint32_t cls) noexcept {
  // The list holds max_length + 1 objects.
  FreeList& list = lists_[cls];
  list.active = 1;
  const uint32_t max = list.length.max;
  // The first free into an empty-capacity list keeps the object if it may.
  if (max == 0 && Grow(list, 1)) return;
  const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
  ReleaseToCentral(cls, batch);
  if (max == 0) return;  // no capacity for this class now
  if (max < batch) {
    Grow(list, SlowStartNext(max, batch));
  } else if (max > batch) {
    if (++list.overages > kMaxOverages) {
      SetMaxLength(list, max - batch);
      list.overages = 0;
    }
  }
}

void ThreadCache::PushOverflow(void* p, uint32_t cls) noexcept {
  FreeList& list = lists_[cls];
  *static_cast<void**>(p) = list.head;
  list.head = p;
  DeallocateSlow(cls);
}

void ThreadCache::Scavenge() {
  for (int cls = 1; cls < sizemap_->num_classes(); ++cls) {
    FreeList& list = lists_[cls];
    const uint32_t length = list.length;
    const uint32_t lowater = list.lowater < length ? list.lowater : length;
    if (lowater > 0) {
      uint32_t drop = lowater > 1 ? lowater / 2 : 1;
      ReleaseToCentral(static_cast<uint32_t>(cls), drop);
      const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
      const uint32_t max = list.length.max;
      if (max > batch) SetMaxLength(list, max - batch > batch ? max - batch : batch);
    }
    // No refill or overflow since the last GC: give back the unused capacity (the list grows
    // again through slow start if it is used).
    const uint32_t now = list.length;
    if (!list.active && now < list.length.max) SetMaxLength(list, now);
    list.active = 0;
    list.lowater = now;
  }
  if (registry_ != nullptr) registry_->IncreaseCacheLimit(this);
}

void ThreadCache::ReleaseAll() {
  for (int cls = 1; cls < sizemap_->num_classes(); ++cls) {
    ReleaseToCentral(static_cast<uint32_t>(cls), lists_[cls].length);
    SetMaxLength(lists_[cls], 0);
    lists_[cls].lowater = 0;
    lists_[cls].overages = 0;
    lists_[cls].active = 0;
  }
}

void ThreadCacheRegistry::Init(CentralFreeList* central, const SizeMap* sizemap, size_t max_total) {
  central_ = central;
  sizemap_ = sizemap;
  max_total_ = max_total;
  unclaimed_ = static_cast<int64_t>(max_total);
}

ThreadCache* ThreadCacheRegistry::Create(uint64_t seed) {
  SpinLockHolder h(&lock_);
  ThreadCache* cache = alloc_.New();
  if (cache == nullptr) return nullptr;
  // New caches get kMinSize if the budget allows, else what is left (at least a steal unit).
  int64_t size = static_cast<int64_t>(ThreadCache::kMinSize);
  if (unclaimed_ < size)
    size = unclaimed_ > static_cast<int64_t>(ThreadCache::kStealAmount)
               ? unclaimed_
               : static_cast<int64_t>(ThreadCache::kStealAmount);
  unclaimed_ -= size;
  cache->Init(central_, sizemap_, this, static_cast<size_t>(size), seed);
  cache->next_ = head_;
  cache->prev_ = nullptr;
  if (head_ != nullptr) head_->prev_ = cache;
  head_ = cache;
  return cache;
}

void ThreadCacheRegistry::Destroy(ThreadCache* cache) {
  // First, so that what it gives back (and its spans) can go to any thread at once.
  __atomic_store_n(&cache->affinity_tag_, 0, __ATOMIC_RELAXED);
  cache->ReleaseAll();
  SpinLockHolder h(&lock_);
  if (steal_cursor_ == cache) steal_cursor_ = cache->next_;
  if (cache->prev_ != nullptr)
    cache->prev_->next_ = cache->next_;
  else
    head_ = cache->next_;
  if (cache->next_ != nullptr) cache->next_->prev_ = cache->prev_;
  unclaimed_ += static_cast<int64_t>(cache->max_size_);
  alloc_.Delete(cache);
}

void ThreadCacheRegistry::OrphanAllBut(const ThreadCache* self) {
  SpinLockHolder h(&lock_);
  for (ThreadCache* c = head_; c != nullptr; c = c->next_) {
    if (c != self) __atomic_store_n(&c->affinity_tag_, 0, __ATOMIC_RELAXED);
  }
}

bool ThreadCacheRegistry::ClaimUnclaimed(ThreadCache* cache) {
  SpinLockHolder h(&lock_);
  const int64_t amount = static_cast<int64_t>(ThreadCache::kStealAmount);
  if (unclaimed_ < amount) return false;
  unclaimed_ -= amount;
  cache->max_size_ += ThreadCache::kStealAmount;
  return true;
}

void ThreadCacheRegistry::IncreaseCacheLimit(ThreadCache* cache) {
  SpinLockHolder h(&lock_);
  const int64_t amount = static_cast<int64_t>(ThreadCache::kStealAmount);
  if (unclaimed_ >= amount) {
    unclaimed_ -= amount;
    cache->max_size_ += ThreadCache::kStealAmount;
    return;
  }
  if (unclaimed_ < 0 && cache->max_size_ > ThreadCache::kMinSize) {
    // The budget was lowered: give back instead of growing.
    cache->max_size_ -= ThreadCache::kStealAmount;
    unclaimed_ += amount;
    return;
  }
  for (int tries = 0; tries < 10; ++tries) {
    if (steal_cursor_ == nullptr) steal_cursor_ = head_;
    ThreadCache* victim = steal_cursor_;
    if (victim == nullptr) return;
    steal_cursor_ = victim->next_;
    if (victim == cache) continue;
    if (victim->max_size_ > ThreadCache::kMinSize) {
      // A relaxed atomic store: the victim's owner reads max_size_ without the lock (Grow).
      __atomic_store_n(&victim->max_size_, victim->max_size_ - ThreadCache::kStealAmount,
                       __ATOMIC_RELAXED);
      cache->max_size_ += ThreadCache::kStealAmount;
      return;
    }
  }
}

void ThreadCacheRegistry::SetMaxTotal(size_t bytes) {
  SpinLockHolder h(&lock_);
  unclaimed_ += static_cast<int64_t>(bytes) - static_cast<int64_t>(max_total_);
  max_total_ = bytes;
}

size_t ThreadCacheRegistry::TotalCachedBytes() {
  SpinLockHolder h(&lock_);
  size_t total = 0;
  for (ThreadCache* c = head_; c != nullptr; c = c->next_) total += c->size();
  return total;
}

size_t ThreadCacheRegistry::NumCaches() {
  SpinLockHolder h(&lock_);
  size_t n = 0;
  for (ThreadCache* c = head_; c != nullptr; c = c->next_) ++n;
  return n;
}

}  // namespace heapkit::alloc
