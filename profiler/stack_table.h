// The sampled-allocation table: per-stack buckets plus the map of live sampled objects.
//
// Buckets. One per (stack, size key); never freed while the process runs (profiles stay
// consistent and lock-free readers never see freed memory). Lookup is lock-free: 64 Ki hash
// chains whose links are written once, before the bucket is published with a release store;
// insertion takes one of 64 striped spin locks (by hash) and re-checks the chain. Counters are
// relaxed atomics: alloc count/bytes and free count/bytes; in-use = alloc - free.
//
// Live objects. address -> (bucket, requested size), split into 64 stripes by a hash of the
// address; each stripe has its own spin lock, chained hash table (grown by doubling at load
// factor 1; old head arrays are retired, never unmapped) and node free list. So many threads
// sampling at TCMALLOC_SAMPLE_PARAMETER=1 contend only when they hit the same stripe.
//
// Negative filter. With sampling on, the allocator calls RecordFree for *every* free in a
// span that has ever held a sampled object — for hot spans, nearly every free. A counting
// filter (1 Mi 32-bit counters indexed by the address hash; incremented when an object is
// recorded, decremented when removed) answers "certainly not sampled" with one load and no
// lock. The increment is made before the sampled allocation returns, so a free of that object
// (which happens after, in every thread's view) always sees it.
//
// Memory: everything comes from the internal metadata arena (alloc/internal/arena.h), never
// from the public malloc, so the profiler's own memory never appears in a profile.
//
// Locking rules: no lock of this file is held while calling anything that can allocate,
// unwind, or take another runtime lock, except the arena's lock (leaf). A stripe lock and a
// bucket-insert lock are never held together. Fork: ForkPrepare() takes every lock (called
// from a pthread_atfork prepare handler), ForkParent()/ForkChild() release them.
//
// Stopped-world reads (the leak checker): Lookup() try-locks the stripe; if a stopped thread
// holds it, it reads without the lock. Nodes and head arrays are never unmapped and chains
// stay acyclic during a rehash, so such a read terminates and never faults; at worst it misses
// the one object that thread was inserting or removing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

struct Bucket {
  Bucket* next_in_chain;   // immutable once published
  Bucket* next_in_list;    // list of all buckets (immutable once published)
  uint64_t hash;
  uint32_t size_key;
  int32_t depth;
  std::atomic<int64_t> alloc_count;
  std::atomic<int64_t> alloc_bytes;
  std::atomic<int64_t> free_count;
  std::atomic<int64_t> free_bytes;
  void* pcs[1];  // really [depth] (at least 1 slot allocated)

  int64_t InUseCount() const {
    int64_t v = alloc_count.load(std::memory_order_relaxed) -
                free_count.load(std::memory_order_relaxed);
    return v > 0 ? v : 0;
  }
  int64_t InUseBytes() const {
    int64_t v = alloc_bytes.load(std::memory_order_relaxed) -
                free_bytes.load(std::memory_order_relaxed);
    return v > 0 ? v : 0;
  }
};

class StackTable {
 public:
  // Must be called once before use (allocates the hash arrays from the arena). False on OOM.
  bool Init();
  bool initialised() const { return bucket_heads_ != nullptr; }

  // Finds or creates the bucket for (pcs[0..depth), size_key). nullptr only on arena OOM.
  Bucket* FindOrCreateBucket(void* const* pcs, int depth, uint32_t size_key);

  // Records a live sampled object. If `object` was already recorded (a free we never saw),
  // the old entry is first accounted as freed.
  void RecordAlloc(const void* object, Bucket* bucket, size_t size);

  // If `object` is a recorded live object: removes it, accounts the free in its bucket, stores
  // its size and returns true. Unknown addresses: false, nothing changes. The common "not
  // sampled" answer is inline: one multiply-hash and one load, no lock, no call.
  bool RecordFree(const void* object, size_t* size = nullptr) {
    uint64_t h = HashAddress(reinterpret_cast<uintptr_t>(object));
    if (filter_ == nullptr || FilterSlot(h).load(std::memory_order_relaxed) == 0) return false;
    return RecordFreeSlow(object, h, size);
  }

  // Stopped-world-safe lookup (see header comment).
  bool Lookup(const void* object, Bucket** bucket, size_t* size);

  // Visits every bucket (newest first). Safe concurrently with inserts.
  template <class F>
  void ForEachBucket(F&& f) const {
    for (Bucket* b = all_buckets_.load(std::memory_order_acquire); b != nullptr;
         b = b->next_in_list)
      f(*b);
  }

  // Visits live objects stripe by stripe under each stripe's lock. The visitor must not
  // allocate or sample.
  void ForEachLiveObject(void (*visit)(void* ctx, const void* object, const Bucket* bucket,
                                       size_t size),
                         void* ctx);

  size_t num_buckets() const { return num_buckets_.load(std::memory_order_relaxed); }
  size_t num_live_objects() const;

  void ForkPrepare();
  void ForkParent();
  void ForkChild();

  static uint64_t HashStack(void* const* pcs, int depth, uint32_t size_key);
  static uint64_t HashAddress(uintptr_t a) {
    uint64_t h = (a >> 4) * 0x9e3779b97f4a7c15ULL;  // Fibonacci hashing; fold high bits down
    return h ^ (h >> 29);
  }
  static constexpr int kFilterBits = 20;

 private:
  struct Node {
    uintptr_t address;
    Node* next;
    Bucket* bucket;
    size_t size;
  };
  struct alignas(64) Stripe {
    std::atomic<bool> lock{false};
    std::atomic<Node**> heads{nullptr};
    size_t mask = 0;
    size_t count = 0;
    Node* free_nodes = nullptr;
  };
  static constexpr int kBucketHashBits = 16;
  static constexpr int kInsertLocks = 64;
  static constexpr int kStripes = 64;
  static constexpr size_t kInitialStripeHeads = 1024;

  static void Lock(std::atomic<bool>* l);
  static void Unlock(std::atomic<bool>* l) { l->store(false, std::memory_order_release); }
  static bool TryLock(std::atomic<bool>* l) {
    return !l->exchange(true, std::memory_order_acquire);
  }
  bool RecordFreeSlow(const void* object, uint64_t h, size_t* size);
  Stripe& StripeFor(uint64_t h) { return stripes_[h >> 58]; }
  Node* NewNode(Stripe& s);
  void Grow(Stripe& s);
  static void AccountFree(Bucket* b, size_t size);

  std::atomic<uint32_t>& FilterSlot(uint64_t h) {
    return filter_[h & ((size_t{1} << kFilterBits) - 1)];
  }

  std::atomic<Bucket*>* bucket_heads_ = nullptr;
  std::atomic<uint32_t>* filter_ = nullptr;
  std::atomic<Bucket*> all_buckets_{nullptr};
  std::atomic<size_t> num_buckets_{0};
  struct alignas(64) PaddedLock {
    std::atomic<bool> lock{false};
  };
  PaddedLock insert_locks_[kInsertLocks];
  Stripe stripes_[kStripes];
};

// The process-wide table (constant-initialised, usable after Init()).
extern StackTable g_stack_table;
inline StackTable& GlobalStackTable() { return g_stack_table; }

}  // namespace heapkit::prof
