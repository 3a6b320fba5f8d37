#include "alloc/thread_cache.h"

#include <cerrno>

#include "alloc/internal/log.h"

namespace heapkit::alloc {

using internal::SpinLockHolder;

constinit ThreadCache g_empty_cache;

void ThreadCache::Init(CentralFreeList* central, const SizeMap* sizemap,
                       ThreadCacheRegistry* registry, size_t max_size, uint64_t seed) {
  central_ = central;
  sizemap_ = sizemap;
  registry_ = registry;
  max_size_ = max_size;
  size_ = 0;
  for (int c = 0; c < kNumClassesMax; ++c) {
    lists_[c] = FreeList{};
    lists_[c].max_length = 1;
    lists_[c].object_size = c < sizemap->num_classes() ? static_cast<uint32_t>(sizemap->ClassSize(c)) : 0;
  }
  sampler_.Seed(seed);
}

void* ThreadCache::FetchFromCentral(uint32_t cls) noexcept {
  FreeList& list = lists_[cls];
  const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
  const uint32_t want = list.max_length < batch ? list.max_length : batch;
  void* head;
  void* tail;
  int got = central_[cls].RemoveRange(&head, &tail, static_cast<int>(want));
  if (got == 0) {
    errno = ENOMEM;
    return nullptr;
  }
  if (list.max_length < batch) {
    ++list.max_length;
  } else {
    uint32_t grown = list.max_length + batch;
    if (grown > kMaxDynamicLength) grown = kMaxDynamicLength;
    grown -= grown % batch;
    list.max_length = grown;
  }
  void* result = head;
  if (got > 1) {
    // The list is empty here: the fetched objects after the first become the list.
    list.head = *static_cast<void**>(head);
    list.length = static_cast<uint32_t>(got - 1);
    size_ += sizemap_->ClassSize(cls) * static_cast<size_t>(got - 1);
  }
  list.lowater = 0;
  return result;
}

void ThreadCache::ReleaseToCentral(uint32_t cls, uint32_t n) {
  FreeList& list = lists_[cls];
  if (n > list.length) n = list.length;
  const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
  while (n > 0) {
    uint32_t k = n < batch ? n : batch;
    void* head = list.head;
    void* tail = head;
    for (uint32_t i = 1; i < k; ++i) tail = *static_cast<void**>(tail);
    list.head = *static_cast<void**>(tail);
    list.length -= k;
    size_ -= sizemap_->ClassSize(cls) * k;
    central_[cls].InsertRange(head, tail, static_cast<int>(k));
    n -= k;
  }
  if (list.lowater > list.length) list.lowater = list.length;
}

void ThreadCache::DeallocateSlow(uint32_t cls) noexcept {
  FreeList& list = lists_[cls];
  if (list.length > list.max_length) {
    const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
    ReleaseToCentral(cls, batch);
    if (list.max_length < batch) {
      ++list.max_length;
    } else if (list.max_length > batch) {
      if (++list.overages > kMaxOverages) {
        list.max_length -= batch;
        list.overages = 0;
      }
    }
  }
  if (size_ > max_size_) Scavenge();
}

void ThreadCache::Overflow() noexcept {
  if (size_ > max_size_) Scavenge();
}

void ThreadCache::Scavenge() {
  for (int cls = 1; cls < sizemap_->num_classes(); ++cls) {
    FreeList& list = lists_[cls];
    if (list.lowater > 0) {
      uint32_t drop = list.lowater > 1 ? list.lowater / 2 : 1;
      ReleaseToCentral(static_cast<uint32_t>(cls), drop);
      const uint32_t batch = static_cast<uint32_t>(sizemap_->NumToMove(cls));
      if (list.max_length > batch) {
        list.max_length = list.max_length - batch > batch ? list.max_length - batch : batch;
      }
    }
    list.lowater = list.length;
  }
  if (registry_ != nullptr) registry_->IncreaseCacheLimit(this);
}

void ThreadCache::ReleaseAll() {
  for (int cls = 1; cls < sizemap_->num_classes(); ++cls) {
    ReleaseToCentral(static_cast<uint32_t>(cls), lists_[cls].length);
    lists_[cls].max_length = 1;
    lists_[cls].lowater = 0;
    lists_[cls].overages = 0;
  }
}

void ThreadCacheRegistry::Init(CentralFreeList* central, const SizeMap* sizemap,
                               size_t max_total) {
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
  if (unclaimed_ < size) size = unclaimed_ > static_cast<int64_t>(ThreadCache::kStealAmount)
                                    ? unclaimed_ : static_cast<int64_t>(ThreadCache::kStealAmount);
  unclaimed_ -= size;
  cache->Init(central_, sizemap_, this, static_cast<size_t>(size), seed);
  cache->next_ = head_;
  cache->prev_ = nullptr;
  if (head_ != nullptr) head_->prev_ = cache;
  head_ = cache;
  return cache;
}

void ThreadCacheRegistry::Destroy(ThreadCache* cache) {
  cache->ReleaseAll();
  SpinLockHolder h(&lock_);
  if (steal_cursor_ == cache) steal_cursor_ = cache->next_;
  if (cache->prev_ != nullptr) cache->prev_->next_ = cache->next_;
  else head_ = cache->next_;
  if (cache->next_ != nullptr) cache->next_->prev_ = cache->prev_;
  unclaimed_ += static_cast<int64_t>(cache->max_size_);
  alloc_.Delete(cache);
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
      victim->max_size_ -= ThreadCache::kStealAmount;
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
