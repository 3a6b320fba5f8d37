// The live-object map of the sampled-allocation table (stack_table.h): address -> (bucket,
// requested size) of the live records kept outside the allocator's side slots (sampled mode,
// large objects, tests), with its negative filter.
//
// Split into 64 stripes by a hash of the address; each stripe has its own spin lock, chained
// hash table (grown by doubling at load factor 1; old head arrays are retired, never unmapped)
// and node free list. So many threads sampling at TCMALLOC_SAMPLE_PARAMETER=1 contend only when
// they hit the same stripe.
//
// Negative filter. The allocator calls the table's RecordFree for every free in a span that
// holds a live recorded object — in exact mode, nearly every free. A counting filter (1 Mi
// 32-bit counters indexed by the address hash; incremented when an object is recorded,
// decremented when removed) answers "certainly not here" with one load and no lock
// (MayHold). The increment is made before the sampled allocation returns, so a free of that
// object (which happens after, in every thread's view) always sees it.
//
// Stopped-world reads (the leak checker): Find() try-locks the stripe; if a stopped thread
// holds it, it reads without the lock. Nodes and head arrays are never unmapped and chains stay
// acyclic during a rehash, so such a read terminates and never faults; at worst it misses the
// one object that thread was inserting or removing.
//
// Memory: nodes (48 bytes: address, link, bucket, size and the object's birth, object_birth.h)
// and head arrays from the metadata arena (alloc/internal/arena.h).
// Locks: a stripe lock is a leaf but for the arena's lock (a new node slab, a larger head
// array); the map never calls out while holding one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/table/object_birth.h"

namespace heapkit::prof {

struct Bucket;

// The table's spin locks (stack_table.h, this file): a flag taken by exchange, spinning with
// pause and then sched_yield.
void LockFlag(std::atomic<bool>* l);
inline void UnlockFlag(std::atomic<bool>* l) { l->store(false, std::memory_order_release); }
inline bool TryLockFlag(std::atomic<bool>* l) {
  return !l->exchange(true, std::memory_order_acquire);
}

class LiveObjectMap {
 public:
  static constexpr int kFilterBits = 20;
  static uint64_t HashAddress(uintptr_t a) {
    uint64_t h = (a >> 4) * 0x9e3779b97f4a7c15ULL;  // Fibonacci hashing; fold high bits down
    return h ^ (h >> 29);
  }

  // Allocates the filter and the stripes' first head arrays from the arena. False on OOM.
  bool Init();

  // False: `h` (HashAddress of the object) is certainly not in the map. One load, no lock.
  bool MayHold(uint64_t h) const {
    return filter_ != nullptr && FilterSlot(h).load(std::memory_order_relaxed) != 0;
  }

  enum class InsertResult { kInserted, kReplaced, kNoMemory };
  // Records `object`. kReplaced: it was there already (a free never reported), and *old_bucket
  // / *old_size say what it held; kNoMemory: arena exhausted, not recorded.
  InsertResult Insert(const void* object, Bucket* bucket, size_t size, const ObjectBirth& birth,
                      Bucket** old_bucket, size_t* old_size);
  // Removes `object` (h: its HashAddress); false if it is not there. *birth: when, where and in
  // which dump interval it was allocated (zero when births were not recorded).
  bool Remove(const void* object, uint64_t h, Bucket** bucket, size_t* size, ObjectBirth* birth);
  // Stopped-world-safe lookup (see the header comment).
  bool Find(const void* object, Bucket** bucket, size_t* size);
  // Visits every record, stripe by stripe under each stripe's lock, slab by slab (the cost is
  // the nodes ever made, not the heads). The visitor must not allocate or sample.
  using Visitor = void (*)(void* ctx, const void* object, Bucket* bucket, size_t size,
                           const ObjectBirth& birth);
  void ForEach(Visitor visit, void* ctx);
  // Records in the map (racy while the world runs).
  size_t size() const;

  // Fork: every stripe lock taken / released.
  void LockAll();
  void UnlockAll();

 private:
  struct Node {
    uintptr_t address;
    Node* next;
    Bucket* bucket;
    size_t size;
    ObjectBirth birth;
  };
  // Nodes come by slabs, each stripe's on a list; a node on the free list has address 0.
  static constexpr size_t kSlabNodes = 127;
  struct Slab {
    Slab* next;
    uintptr_t reserved;
    Node nodes[kSlabNodes];
  };
  struct alignas(64) Stripe {
    std::atomic<bool> lock{false};
    std::atomic<Node**> heads{nullptr};
    size_t mask = 0;
    size_t count = 0;
    Node* free_nodes = nullptr;
    Slab* slabs = nullptr;
  };
  static constexpr int kStripes = 64;
  static constexpr size_t kInitialStripeHeads = 1024;

  Stripe& StripeFor(uint64_t h) { return stripes_[h >> 58]; }
  Node* NewNode(Stripe& s);
  void Grow(Stripe& s);
  std::atomic<uint32_t>& FilterSlot(uint64_t h) const {
    return filter_[h & ((size_t{1} << kFilterBits) - 1)];
  }

  std::atomic<uint32_t>* filter_ = nullptr;
  Stripe stripes_[kStripes];
};

}  // namespace heapkit::prof
