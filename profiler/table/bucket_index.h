// The bucket index of the sampled-allocation table (stack_table.h): one Bucket per (stack
// node, size key), interned, so that every record of one call site counts in one place.
//
// Buckets are never freed while the process runs (profiles stay consistent and lock-free
// readers never see freed memory). They are stored by id in arena chunks (BucketById: no
// pointer map); a bucket is published by the release store of its id, after its fields.
// Lookup is lock-free: 1 Mi hash chains of bucket ids keyed by (stack node, size key), links
// written once before the chain head's release store; insertion takes the chain's lock (one of
// 64 striped spin locks, by chain index) and re-checks the chain. An insert lock is a leaf: it
// is never held with a stripe lock of the live-object map. Memory: the internal metadata arena
// (alloc/internal/arena.h), never the public malloc.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

// 32 bytes: one per distinct stack (and size key), the table's main per-stack cost.
struct Bucket {
  uint32_t next_in_chain;    // id of the next bucket in its hash chain (0: end); immutable
  uint32_t stack;            // trace-tree node of the stack (StackTable::ReadStack)
  uint16_t size_key;         // SizeKey (sample_estimate.h: < 256)
  uint16_t depth;            // frames of the stack (<= kMaxStackDepth)
  std::atomic<uint32_t> id;  // 1, 2, ...: slot values; 0 until the bucket is published
  // Every recorded allocation (cumulative).
  std::atomic<int64_t> alloc_count;
  std::atomic<int64_t> alloc_bytes;
  // The counts of its hash-map records (MapCounts) and the reader-side counts (ReaderCounts)
  // are kept by the table by bucket id, not here: most buckets of exact mode have no hash-map
  // record, and reader-only words need not be paid per bucket (StackTable::InUseCount).
};
static_assert(sizeof(Bucket) == 32, "a bucket is paid per distinct stack");

class BucketIndex {
 public:
  // Bucket field limits: larger depths and size keys are clamped (never reached: stacks are
  // captured up to kMaxStackDepth frames and SizeKey stays below 256).
  static constexpr int kMaxBucketDepth = UINT16_MAX;
  static constexpr uint32_t kMaxSizeKey = UINT16_MAX;
  // Buckets by id: kIdChunks chunks of kIdChunkSize, allocated on first use (64 Mi buckets).
  static constexpr int kIdChunkBits = 14;
  static constexpr uint32_t kIdChunkSize = uint32_t{1} << kIdChunkBits;
  static constexpr uint32_t kIdChunks = 4096;

  // Allocates the chain heads from the arena (once). False on OOM.
  bool Init();
  bool initialised() const { return bucket_heads_ != nullptr; }

  // Finds or creates the bucket of (stack, size_key); `depth` is the stack's frame count.
  // nullptr only on arena OOM.
  Bucket* BucketForStack(uint32_t stack, int depth, uint32_t size_key);
  // The bucket of (stack, size_key) if it exists (size_key as stored: clamped).
  Bucket* FindBucket(uint32_t stack, uint32_t size_key) const {
    return FindInChain(
        bucket_heads_[BucketChainIndex(stack, size_key)].load(std::memory_order_acquire), stack,
        size_key);
  }
  // Bucket with the given id (slot values), nullptr if none.
  Bucket* BucketById(uint32_t id) const {
    Bucket* chunk =
        id_chunks_[(id >> kIdChunkBits) & (kIdChunks - 1)].load(std::memory_order_acquire);
    if (chunk == nullptr || id == 0) return nullptr;
    Bucket* b = &chunk[id & (kIdChunkSize - 1)];
    return b->id.load(std::memory_order_acquire) == id ? b : nullptr;
  }
  // Visits every bucket (newest first). Safe concurrently with inserts.
  template <class F>
  void ForEachBucket(F&& f) const {
    for (uint32_t id = next_id_.load(std::memory_order_acquire); id != 0; --id)
      if (Bucket* b = BucketById(id)) f(*b);
  }
  // The highest id handed out (0: none).
  uint32_t last_id() const { return next_id_.load(std::memory_order_acquire); }
  size_t num_buckets() const { return num_buckets_.load(std::memory_order_relaxed); }

  // Fork: every insert lock (StackTable::ForkPrepare's order), and their release.
  void LockAll();
  void UnlockAll();

  // The chain of (stack, size key): the stack's node id plus a hash of the size key, so that
  // new stacks (consecutive node ids) land in neighbouring heads (see TraceTree::ChainIndex).
  static uint32_t BucketChainIndex(uint32_t stack, uint32_t size_key) {
    uint64_t h = (static_cast<uint64_t>(size_key) + 1) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    return (stack + static_cast<uint32_t>(h >> (64 - kBucketHashBits))) &
           ((1u << kBucketHashBits) - 1);
  }

 private:
  static constexpr int kBucketHashBits = 20;
  static constexpr int kInsertLocks = 64;

  Bucket* NewBucket(uint32_t id);
  Bucket* FindInChain(uint32_t first, uint32_t stack, uint32_t size_key) const;

  std::atomic<uint32_t>* bucket_heads_ = nullptr;  // bucket ids
  std::atomic<uint32_t> next_id_{0};
  std::atomic<Bucket*> id_chunks_[kIdChunks] = {};  // buckets stored by id
  std::atomic<size_t> num_buckets_{0};
  struct alignas(64) PaddedLock {
    std::atomic<bool> lock{false};
  };
  PaddedLock insert_locks_[kInsertLocks];
};

}  // namespace heapkit::prof
