#include "profiler/table/bucket_index.h"

#include "alloc/internal/arena.h"
#include "alloc/internal/dcheck.h"
#include "profiler/table/live_object_map.h"  // LockFlag, UnlockFlag

// The bucket index (bucket_index.h).
namespace heapkit::prof {

bool BucketIndex::Init() {
  if (bucket_heads_ != nullptr) return true;
  void* heads = internal::ArenaAlloc(sizeof(std::atomic<uint32_t>) << kBucketHashBits, 4096);
  if (heads == nullptr) return false;
  bucket_heads_ = static_cast<std::atomic<uint32_t>*>(heads);  // zeroed by the arena
  return true;
}

Bucket* BucketIndex::FindInChain(uint32_t first, uint32_t stack, uint32_t size_key) const {
  for (uint32_t id = first; id != 0;) {
    Bucket* b = BucketById(id);
    if (b == nullptr) return nullptr;
    if (b->stack == stack && b->size_key == size_key) return b;
    id = b->next_in_chain;
  }
  return nullptr;
}

Bucket* BucketIndex::BucketForStack(uint32_t stack, int depth, uint32_t size_key) {
  if (depth < 0) depth = 0;
  if (depth > kMaxBucketDepth) depth = kMaxBucketDepth;
  if (size_key > kMaxSizeKey) size_key = kMaxSizeKey;
  const uint32_t index = BucketChainIndex(stack, size_key);
  std::atomic<uint32_t>& head = bucket_heads_[index];
  if (Bucket* b = FindInChain(head.load(std::memory_order_acquire), stack, size_key)) return b;
  std::atomic<bool>* lock = &insert_locks_[index % kInsertLocks].lock;  // the chain's lock
  LockFlag(lock);
  const uint32_t first = head.load(std::memory_order_acquire);
  Bucket* b = FindInChain(first, stack, size_key);
  if (b != nullptr) {
    UnlockFlag(lock);
    return b;
  }
  uint32_t id = next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  b = NewBucket(id);
  if (b == nullptr) {
    UnlockFlag(lock);
    return nullptr;
  }
  b->stack = stack;
  b->size_key = static_cast<uint16_t>(size_key);
  b->depth = static_cast<uint16_t>(depth);
  b->next_in_chain = first;
  b->id.store(id, std::memory_order_release);             // published for BucketById/ForEachBucket
  HEAPKIT_DCHECK(lock->load(std::memory_order_relaxed));  // chains change under their lock
  head.store(id, std::memory_order_release);
  UnlockFlag(lock);
  num_buckets_.fetch_add(1, std::memory_order_relaxed);
  return b;
}

Bucket* BucketIndex::NewBucket(uint32_t id) {
  if (id >= kIdChunks * kIdChunkSize) return nullptr;
  std::atomic<Bucket*>& slot = id_chunks_[id >> kIdChunkBits];
  Bucket* chunk = slot.load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto* fresh = static_cast<Bucket*>(internal::ArenaAlloc(sizeof(Bucket) * kIdChunkSize, 4096));
    if (fresh == nullptr) return nullptr;
    // A loser's chunk stays in the arena unused (untouched pages: no resident cost).
    if (slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) chunk = fresh;
  }
  return &chunk[id & (kIdChunkSize - 1)];
}

void BucketIndex::LockAll() {
  for (PaddedLock& l : insert_locks_) LockFlag(&l.lock);
}

void BucketIndex::UnlockAll() {
  for (PaddedLock& l : insert_locks_) UnlockFlag(&l.lock);
}

}  // namespace heapkit::prof
