// The sampled-allocation table: per-stack buckets, and the records of live sampled objects —
// in the allocator's side slots (exact mode) or in the live-object map (live_object_map.h).
//
// Buckets. One per (stack, size key); never freed while the process runs (profiles stay
// consistent and lock-free readers never see freed memory). A bucket names its stack by a node
// of the trace tree (trace_tree.h: shared callers stored once; ReadStack rebuilds the frames
// into the caller's buffer), so a bucket's size does not grow with its depth. Buckets are
// stored by id in arena chunks (BucketById: no pointer map); a bucket is published by the
// release store of its id, after its fields. Lookup is lock-free: 1 Mi hash chains of bucket
// ids keyed by (stack node, size key), links written once before the chain head's release
// store; insertion takes the chain's lock (one of 64 striped spin locks, by chain index) and
// re-checks the chain.
// Counters are relaxed atomics (see Bucket and "Object slots" for what each counts). A chain
// is guarded by one lock (the lock index follows the chain index).
//
// Live objects (hash map: sampled mode, large objects, tests): address -> (bucket, requested
// size) in a LiveObjectMap (live_object_map.h: striped locks, negative filter, stopped-world
// reads); the table keeps the map's per-bucket counts (MapCounts).
//
// Object slots (exact mode). With every allocation recorded, a locked hash insert and erase
// per malloc/free dominated (and 1M hash nodes cost 40 bytes each). When RecordAlloc is asked
// to (use_slot) and a SlotProvider is set, a small object's record goes into the allocator's
// per-object side slot instead (alloc/object_slots.h: one 64-bit word per object, found
// through the page map, written only by the object's owner, no lock). Frees and lookups try
// the slot first (only once any slot was used), then the hash map. (The allocator itself
// empties the slot of a freed object whose span routes frees to it, with
// alloc::TakeObjectSlot, and then does not call the observer: RecordFree sees only the other
// frees.) A slot value has one of two forms, the requested size always in the low 19 bits
// (slots hold small objects only, below kMaxSlotSize = 512 KiB: the allocator's small sizes
// end at 256 KiB), so that SlotSize, on every free of a recorded object, is one mask:
//  - bucket id << 32 | size (RecordAllocIn): the allocation is counted in its bucket's totals
//    (while a profile is being collected: the profiler's choice, sample_recorder.cc); bits
//    19..31 hold the object's dump interval + 1 when ages are recorded (0: none; SlotInterval),
//    bit 62 says that the object's birth word is set (kSlotBirthFlag; slot_births.h);
//  - stack form (RecordStackIn): kStackSlotTag | leaf << 47 | node << 19 | size. The record
//    names only its stack (a StackRef: the trace-tree node of its callers and, apart, the
//    dictionary index of its leaf frame; leaf 0: the node is the whole stack, used when the
//    leaf's index or the node's id does not fit). No bucket exists for it until a reader
//    counts: the leak checker alone needs stacks, not per-stack counters, and the leaf — the
//    frame that differs most between stacks — costs no node. A program with a million distinct
//    stacks then pays its callers' nodes, 12 bytes each, and no leaf node, no 32-byte bucket,
//    no chain head. ForEachBucketWithCounts resolves such records to the bucket of (the whole
//    stack's node, size key 0) — exact mode's only size key — creating both then, and counts
//    them as allocated and in use. Node ids are below 2^28 (TraceTree's limit).
// Either way a used slot is never 0 (bucket ids start at 1; the tag is set); SlotSize decodes
// the size of both.
// A slot record's free only clears its slot: no bucket counter is touched (locked adds were
// half the cost of exact mode). A bucket's in-use count is therefore its live hash-map records
// (MapCounts: alloc - free) plus its live slot records, counted by one pass over the slots
// when a reader asks (ForEachBucketWithCounts: dumps, GetHeapSample) into a reader-side array
// indexed by bucket id (ReaderCounts), so that buckets carry no reader-only words.
// StackTable::AllocCount/AllocBytes count the allocations of bucket form: slot-mode ones are
// batched per thread (PendingAllocs) and added by readers; live stack-form records are added
// by readers too (their allocations were not counted when they happened; freed ones are lost
// to the totals, which therefore cover the time a profile was being collected).
//
// Memory: everything comes from the internal metadata arena (alloc/internal/arena.h), never
// from the public malloc, so the profiler's own memory never appears in a profile. Per distinct
// stack: the trace-tree nodes of the frames it does not share, plus one bucket per size key
// once its allocations are counted (see "Object slots").
//
// Locking rules: no lock of this file or of the map is held while calling anything that can
// allocate, unwind, or take another runtime lock, except the arena's lock (leaf). A stripe
// lock and a bucket-insert lock are never held together (a trace-tree lock is held with no
// other lock of this file); the readers' count lock (ForEachBucketWithCounts) is taken by readers
// only, never on the allocation or free path. Fork: ForkPrepare() takes every lock, the trace
// tree's included (called from a pthread_atfork prepare handler), ForkParent()/ForkChild()
// release them.
//
// Stopped-world reads (the leak checker): Lookup() answers with the stack's StackRef, for
// records of either form, from the slot or from the map (LiveObjectMap::Find: safe while the
// world is stopped). Reading a stack takes no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/table/live_object_map.h"
#include "profiler/table/trace_tree.h"

namespace heapkit::prof {

// The part of a bucket's allocations recorded in the hash map, and the frees of those.
struct MapCounts {
  std::atomic<int64_t> alloc_count;
  std::atomic<int64_t> alloc_bytes;
  std::atomic<int64_t> free_count;
  std::atomic<int64_t> free_bytes;
};

// A stack as the table hands it out: a trace-tree node and, for stack-form slot records, a
// leaf frame kept outside the tree (see "Object slots"): the stack is then the leaf's pc
// followed by the node's frames. leaf == 0: the node is the whole stack.
struct StackRef {
  uint32_t node;
  uint32_t leaf;  // pc-dictionary index (TraceTree::PcIndex), or 0
  bool operator==(const StackRef&) const = default;
};

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

// Per-object side slots (alloc/object_slots.h), injected so that this file stays free of
// allocator dependencies (unit tests use fakes). See "Object slots" above.
struct SlotProvider {
  // Slot for a newly allocated object (nullptr: keep it in the hash map). `stale` (may be
  // nullptr) gets values of objects whose free was never reported when a slot array is
  // recycled.
  std::atomic<uint64_t>* (*slot_for_alloc)(const void* object,
                                           void (*stale)(void* ctx, uint64_t value), void* ctx);
  // Existing slot of an object, or nullptr.
  std::atomic<uint64_t>* (*find_slot)(const void* object);
  // Visits every non-zero slot.
  void (*for_each_slot)(void (*visit)(void* ctx, const void* object, uint64_t value), void* ctx);
};

// A thread's batch of slot-mode allocation counts for one bucket (its current call site), so
// that the common "same call site again" allocation updates two thread-owned words instead of
// two shared atomics (locked adds were a large part of exact mode). Written only by its thread
// under a sequence counter; readers (ForEachBucketWithCounts) add every batch to its bucket.
// One per thread and table, from the arena, never freed (a thread's batch stays readable after
// it exits), on a lock-free list.
struct alignas(64) PendingAllocs {
  std::atomic<uint32_t> seq{0};  // odd while the owner writes
  std::atomic<Bucket*> bucket{nullptr};
  std::atomic<int64_t> count{0};
  std::atomic<int64_t> bytes{0};
  const void* table = nullptr;
  PendingAllocs* next = nullptr;  // immutable once published
};

// This thread's batch (nullptr until its first slot-mode allocation).
extern __thread PendingAllocs* tls_pending_allocs __attribute__((tls_model("initial-exec")));

class StackTable {
  // Slot layout (see "Object slots"): the size in the low 19 bits of both forms; stack form:
  // tag, leaf index (16 bits), node (28).
  static constexpr uint64_t kStackSlotTag = uint64_t{1} << 63;
  static constexpr int kStackSizeBits = 19;
  static constexpr int kStackLeafShift = 47;
  static constexpr uint32_t kStackNodeMask =
      (uint32_t{1} << (kStackLeafShift - kStackSizeBits)) - 1;
  static constexpr uint32_t kStackLeafMask = (uint32_t{1} << (63 - kStackLeafShift)) - 1;
  static_assert(TraceTree::kMaxNodes - 1 <= kStackNodeMask, "every node id fits a slot");
  static StackRef StackFormRef(uint64_t value) {
    return {static_cast<uint32_t>(value >> kStackSizeBits) & kStackNodeMask,
            static_cast<uint32_t>(value >> kStackLeafShift) & kStackLeafMask};
  }

 public:
  // Slot records hold objects below this size (both forms; see "Object slots").
  static constexpr size_t kMaxSlotSize = size_t{1} << kStackSizeBits;
  // Bucket field limits: larger depths and size keys are clamped (never reached: stacks are
  // captured up to kMaxStackDepth frames and SizeKey stays below 256).
  static constexpr int kMaxBucketDepth = UINT16_MAX;
  static constexpr uint32_t kMaxSizeKey = UINT16_MAX;

  // Must be called once before use (allocates the hash arrays from the arena). False on OOM.
  bool Init();
  bool initialised() const { return bucket_heads_ != nullptr; }

  // Trace-tree node of pcs[0..depth) (leaf first; depth clamped to kMaxBucketDepth), created
  // as needed. kNoStack only on arena OOM.
  static constexpr uint32_t kNoStack = TraceTree::kNone;
  uint32_t InsertStack(void* const* pcs, int depth);
  // The same stack as a StackRef with its leaf frame kept apart: the callers' node and the
  // leaf's pc index ({root, 0} for an empty stack). node == kNoStack only on arena OOM.
  StackRef InsertCallers(void* const* pcs, int depth);
  // The node of the whole stack (the leaf's node is created if needed). kNoStack on OOM.
  uint32_t NodeOf(StackRef stack) {
    if (stack.leaf == 0) return stack.node;
    return tree_.Child(stack.node, tree_.PcOf(stack.leaf));
  }
  // Finds or creates the bucket of (stack, size_key); `depth` is the stack's frame count.
  // nullptr only on arena OOM.
  Bucket* BucketForStack(uint32_t stack, int depth, uint32_t size_key);
  // Both steps: the bucket for (pcs[0..depth), size_key). nullptr only on arena OOM.
  Bucket* FindOrCreateBucket(void* const* pcs, int depth, uint32_t size_key) {
    const uint32_t stack = InsertStack(pcs, depth);
    return stack == kNoStack ? nullptr : BucketForStack(stack, depth, size_key);
  }

  // Records a live sampled object. If `object` was already recorded (a free we never saw),
  // the old entry is first accounted as freed. use_slot: keep it in its side slot if the
  // provider has one (exact mode: see "Object slots").
  void RecordAlloc(const void* object, Bucket* bucket, size_t size, bool use_slot = false) {
    RecordAllocIn(use_slot && size < kMaxSlotSize ? SlotForAlloc(object) : nullptr, object, bucket,
                  size);
  }
  // RecordAlloc in two steps, for exact mode: first the object's side slot (nullptr: none, or
  // no provider), then the record. The profiler looks the slot up before it captures the stack,
  // so that the cache misses of the slot's lookup and line overlap the capture.
  std::atomic<uint64_t>* SlotForAlloc(const void* object) {
    return slots_ != nullptr ? slots_->slot_for_alloc(object, nullptr, nullptr) : nullptr;
  }
  // slot: from SlotForAlloc for this object (size < kMaxSlotSize), or nullptr (hash map).
  // Inline: the slot record of the common case (same bucket as this thread's batch) is a
  // handful of stores.
  // birth: kept with a hash-map record (object_birth.h); a slot record keeps its interval and,
  // if it has a time, kSlotBirthFlag (the caller wrote the object's birth word).
  void RecordAllocIn(std::atomic<uint64_t>* slot, const void* object, Bucket* bucket, size_t size,
                     const ObjectBirth& birth = {}) {
    if (slot == nullptr) return RecordAllocInMap(object, bucket, size, birth);
    RecordAllocInSlot(slot, bucket, size, SlotInterval(birth));
  }
  // The slot record of RecordAllocIn: `extra`, SlotInterval's bits, goes into the value.
  void RecordAllocInSlot(std::atomic<uint64_t>* slot, Bucket* bucket, size_t size, uint64_t extra) {
    if (__builtin_expect(BatchCounts(bucket), 1)) {
      AddToBatch(size);
    } else {
      CountSlotAlloc(bucket, size);
    }
    if (__builtin_expect(!slots_used_.load(std::memory_order_relaxed), 0))
      slots_used_.store(true, std::memory_order_release);
    StoreSlot(slot, bucket, size, extra);
  }
  // True when RecordAllocInSlot(slot, bucket, ...) would be a few stores and no call
  // (RecordBatchedSlot): this thread's batch (tls_pending_allocs) counts `bucket` and the table
  // knows that slots are in use.
  bool SlotBatchTakes(const Bucket* bucket) const {
    return BatchCounts(bucket) && slots_used_.load(std::memory_order_relaxed);
  }
  // RecordAllocInSlot when SlotBatchTakes(bucket).
  void RecordBatchedSlot(std::atomic<uint64_t>* slot, Bucket* bucket, size_t size, uint64_t extra) {
    AddToBatch(size);
    StoreSlot(slot, bucket, size, extra);
  }
  // A bucket-form slot value whose object's birth word (alloc/object_slots.h "Birth words";
  // profiler/record/slot_births.h) was written before the value: RecordAllocIn sets it when the
  // birth has a time (its caller wrote the word). Bucket ids stay below 2^30 (kIdChunks).
  static constexpr uint64_t kSlotBirthFlag = uint64_t{1} << 62;
  static bool SlotHasBirth(uint64_t value) {
    return (value & (kStackSlotTag | kSlotBirthFlag)) == kSlotBirthFlag;
  }
  // A bucket-form slot value keeps its object's dump interval + 1 (0: none) in the bits between
  // the size and the bucket id, saturated (HEAP_PROFILE_AGES in exact mode: object_birth.h).
  static constexpr int kSlotIntervalBits = 32 - kStackSizeBits;
  static constexpr uint32_t kMaxSlotInterval = (uint32_t{1} << kSlotIntervalBits) - 2;
  // With kSlotBirthFlag when the birth has a time (see kSlotBirthFlag).
  static uint64_t SlotInterval(const ObjectBirth& birth) {
    if (birth.thread == 0) return 0;  // no birth recorded
    const uint32_t i = birth.interval < kMaxSlotInterval ? birth.interval : kMaxSlotInterval;
    return (uint64_t{i + 1} << kStackSizeBits) | (birth.time_ns != 0 ? kSlotBirthFlag : 0);
  }
  // Visits the live bucket-form slot records that carry a dump interval. The visitor must not
  // allocate or sample.
  void ForEachSlotAge(void (*visit)(void* ctx, const Bucket* bucket, size_t size,
                                    uint32_t interval),
                      void* ctx);
  // Records an object in its slot (from SlotForAlloc, non-null) by its stack alone, with no
  // bucket and no count: the stack form of "Object slots". size < kMaxSlotSize. False
  // only on arena OOM (a leaf that does not fit the slot needs its node).
  bool RecordStackIn(std::atomic<uint64_t>* slot, StackRef stack, size_t size) {
    if (__builtin_expect(stack.leaf > kStackLeafMask, 0)) {
      stack = {NodeOf(stack), 0};
      if (stack.node == kNoStack) return false;
    }
    if (__builtin_expect(!stack_slots_used_.load(std::memory_order_relaxed), 0)) {
      stack_slots_used_.store(true, std::memory_order_relaxed);
      slots_used_.store(true, std::memory_order_release);
    }
    StoreStackSlot(slot, stack, size);
    return true;
  }
  // True when RecordStackIn(slot, stack, ...) would be one store and no call (StoreStackSlot):
  // the leaf fits the slot and the table knows that stack-form slots are in use.
  bool StackSlotTakes(StackRef stack) const {
    return stack.leaf <= kStackLeafMask && stack_slots_used_.load(std::memory_order_relaxed);
  }
  // RecordStackIn when StackSlotTakes(stack).
  static void StoreStackSlot(std::atomic<uint64_t>* slot, StackRef stack, size_t size) {
    slot->store(kStackSlotTag | (uint64_t{stack.leaf} << kStackLeafShift) |
                    (uint64_t{stack.node} << kStackSizeBits) | size,
                std::memory_order_release);
  }
  // The requested size a slot value of either form holds.
  static size_t SlotSize(uint64_t value) { return value & (kMaxSlotSize - 1); }

  // All recorded allocations of `b`; exact inside ForEachBucketWithCounts.
  int64_t AllocCount(const Bucket& b) const {
    return b.alloc_count.load(std::memory_order_relaxed) + Counts(b).uncounted_alloc_count;
  }
  int64_t AllocBytes(const Bucket& b) const {
    return b.alloc_bytes.load(std::memory_order_relaxed) + Counts(b).uncounted_alloc_bytes;
  }
  // In use = live hash-map records + live slot records. Exact for slot records only inside
  // ForEachBucketWithCounts.
  int64_t InUseCount(const Bucket& b) const {
    const MapCounts* m = MapCountsOf(b.id.load(std::memory_order_relaxed));
    int64_t v = m == nullptr ? 0
                             : m->alloc_count.load(std::memory_order_relaxed) -
                                   m->free_count.load(std::memory_order_relaxed);
    return (v > 0 ? v : 0) + Counts(b).slot_live_count;
  }
  int64_t InUseBytes(const Bucket& b) const {
    const MapCounts* m = MapCountsOf(b.id.load(std::memory_order_relaxed));
    int64_t v = m == nullptr ? 0
                             : m->alloc_bytes.load(std::memory_order_relaxed) -
                                   m->free_bytes.load(std::memory_order_relaxed);
    return (v > 0 ? v : 0) + Counts(b).slot_live_bytes;
  }
  // The hash-map counts of bucket `id` (nullptr: it never had a hash-map record). Chunks of
  // kIdChunkSize buckets' counts are allocated on the first record of one of them.
  const MapCounts* MapCountsOf(uint32_t id) const {
    MapCounts* chunk =
        map_chunks_[(id >> kIdChunkBits) & (kIdChunks - 1)].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[id & (kIdChunkSize - 1)];
  }

  // Sets the side-slot provider (once, before recording; nullptr: hash map only).
  void SetSlotProvider(const SlotProvider* provider) { slots_ = provider; }

  // Bucket with the given id (slot values), nullptr if none.
  Bucket* BucketById(uint32_t id) const {
    Bucket* chunk =
        id_chunks_[(id >> kIdChunkBits) & (kIdChunks - 1)].load(std::memory_order_acquire);
    if (chunk == nullptr || id == 0) return nullptr;
    Bucket* b = &chunk[id & (kIdChunkSize - 1)];
    return b->id.load(std::memory_order_acquire) == id ? b : nullptr;
  }
  // Writes the frames of a stack, leaf first, into out[0..max); returns the number of frames.
  // Lock-free (safe in a stopped world).
  int ReadStack(StackRef stack, void** out, int max) const {
    if (stack.leaf == 0 || max <= 0) return tree_.Read(stack.node, out, max);
    out[0] = reinterpret_cast<void*>(tree_.PcOf(stack.leaf));
    return 1 + tree_.Read(stack.node, out + 1, max - 1);
  }
  int ReadStack(const Bucket& b, void** out, int max) const {
    return tree_.Read(b.stack, out, max);
  }
  // The leaf frame of a stack (nullptr if empty).
  void* LeafFrame(StackRef stack) const {
    return stack.leaf != 0 ? reinterpret_cast<void*>(tree_.PcOf(stack.leaf))
                           : tree_.Leaf(stack.node);
  }
  size_t num_stack_nodes() const { return tree_.num_nodes(); }
  // The stack and requested size of a non-zero slot value of either form; false for 0 or a
  // bucket id that names no bucket.
  bool DecodeSlot(uint64_t value, StackRef* stack, size_t* size) const {
    if (value == 0) return false;
    if (value & kStackSlotTag) {
      *stack = StackFormRef(value);
    } else {
      const Bucket* b = BucketById(SlotIdOf(value));
      if (b == nullptr) return false;
      *stack = {b->stack, 0};
    }
    *size = SlotSize(value);
    return true;
  }

  // If `object` is a recorded live object: removes it, accounts the free in its bucket, stores
  // its size (and, if asked, its bucket: nullptr for a stack-form record) and returns true.
  // Unknown addresses: false, nothing changes. The common "not sampled" answer is inline: one
  // multiply-hash and one load, no lock, no call.
  // *birth (if asked): the record's birth; zero for a slot record.
  bool RecordFree(const void* object, size_t* size = nullptr, const Bucket** bucket = nullptr,
                  ObjectBirth* birth = nullptr) {
    if (slots_used_.load(std::memory_order_relaxed) && RecordFreeFromSlot(object, size, bucket))
      return true;
    const uint64_t h = LiveObjectMap::HashAddress(reinterpret_cast<uintptr_t>(object));
    if (!map_.MayHold(h)) return false;
    return RecordFreeSlow(object, h, size, bucket, birth);
  }
  // The bucket id of a slot value (0: stack form, no bucket).
  static uint32_t SlotBucketId(uint64_t value) {
    return value & kStackSlotTag ? 0 : SlotIdOf(value);
  }
  // The bucket a slot value of bucket form names (nullptr: stack form, or no such bucket).
  const Bucket* SlotBucket(uint64_t value) const {
    return value & kStackSlotTag ? nullptr : BucketById(SlotIdOf(value));
  }
  // The bucket id field of a bucket-form slot value (without kSlotBirthFlag).
  static uint32_t SlotIdOf(uint64_t value) {
    return static_cast<uint32_t>(value >> 32) & ((uint32_t{1} << 30) - 1);
  }

  // Stopped-world-safe lookup of a live record: its stack and requested size (see header
  // comment).
  bool Lookup(const void* object, StackRef* stack, size_t* size);

  // Visits every bucket (newest first). Safe concurrently with inserts. In-use counts of
  // side-slot records are those of the last ForEachBucketWithCounts.
  template <class F>
  void ForEachBucket(F&& f) const {
    for (uint32_t id = next_id_.load(std::memory_order_acquire); id != 0; --id)
      if (Bucket* b = BucketById(id)) f(*b);
  }
  // Same, with every bucket's in-use counts brought up to date first (one pass over the side
  // slots when any are used). Readers are serialised by a leaf lock held across the visit
  // (the visitor may write files; it must not call back into this function).
  template <class F>
  void ForEachBucketWithCounts(F&& f) {
    Lock(&count_lock_.lock);
    RefreshSlotCounts();
    ForEachBucket(f);
    Unlock(&count_lock_.lock);
  }

  // Visits live records (hash map stripe by stripe under each stripe's lock, then the slots)
  // with their stacks. The visitor must not allocate or sample.
  void ForEachLiveObject(void (*visit)(void* ctx, const void* object, StackRef stack, size_t size),
                         void* ctx);

  // Visits the live hash-map records with their buckets and births (stripe by stripe under
  // each stripe's lock; slot records, which carry no birth, are not visited). The visitor must
  // not allocate or sample.
  void ForEachLiveMapRecord(LiveObjectMap::Visitor visit, void* ctx) {
    if (bucket_heads_ != nullptr) map_.ForEach(visit, ctx);
  }

  size_t num_buckets() const { return num_buckets_.load(std::memory_order_relaxed); }
  size_t num_live_objects() const;

  void ForkPrepare();
  void ForkParent();
  void ForkChild();

  // The chain of (stack, size key): the stack's node id plus a hash of the size key, so that
  // new stacks (consecutive node ids) land in neighbouring heads (see TraceTree::ChainIndex).
  static uint32_t BucketChainIndex(uint32_t stack, uint32_t size_key) {
    uint64_t h = (static_cast<uint64_t>(size_key) + 1) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    return (stack + static_cast<uint32_t>(h >> (64 - kBucketHashBits))) &
           ((1u << kBucketHashBits) - 1);
  }

 private:
  // The pieces of RecordAllocInSlot: whether this thread's batch counts `bucket`, the batch's
  // count, and the slot's value.
  bool BatchCounts(const Bucket* bucket) const {
    const PendingAllocs* p = tls_pending_allocs;
    return p != nullptr && p->table == this && p->bucket.load(std::memory_order_relaxed) == bucket;
  }
  static void AddToBatch(size_t size) {
    PendingAllocs* p = tls_pending_allocs;
    const uint32_t seq = p->seq.load(std::memory_order_relaxed);
    p->seq.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    p->count.store(p->count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    p->bytes.store(p->bytes.load(std::memory_order_relaxed) + static_cast<int64_t>(size),
                   std::memory_order_relaxed);
    p->seq.store(seq + 2, std::memory_order_release);
  }
  // The owner of the object is the only writer: a plain store suffices. A value still there
  // belonged to an object whose free was never reported; overwriting drops it. A recycled slot
  // array's leftover values need no accounting: slot records are counted live from the slots
  // themselves (SlotForAlloc passes no `stale` visitor).
  static void StoreSlot(std::atomic<uint64_t>* slot, const Bucket* bucket, size_t size,
                        uint64_t extra) {
    const uint64_t id = bucket->id.load(std::memory_order_relaxed);
    slot->store((id << 32) | extra | size, std::memory_order_release);
  }
  static constexpr int kBucketHashBits = 20;
  static constexpr int kInsertLocks = 64;

  static void Lock(std::atomic<bool>* l) { LockFlag(l); }
  static void Unlock(std::atomic<bool>* l) { UnlockFlag(l); }
  bool RecordFreeSlow(const void* object, uint64_t h, size_t* size, const Bucket** bucket,
                      ObjectBirth* birth);
  void RecordAllocInMap(const void* object, Bucket* bucket, size_t size, const ObjectBirth& birth);
  bool RecordFreeFromSlot(const void* object, size_t* size, const Bucket** bucket);
  Bucket* NewBucket(uint32_t id);
  Bucket* FindInChain(uint32_t first, uint32_t stack, uint32_t size_key) const;
  Bucket* FindBucket(uint32_t stack, uint32_t size_key) const {
    return FindInChain(
        bucket_heads_[BucketChainIndex(stack, size_key)].load(std::memory_order_acquire), stack,
        size_key);
  }
  void CreateBucketsOfStackSlots();
  const Bucket* StackFormBucket(uint64_t value);
  void RefreshSlotCounts();
  void CountSlotAlloc(Bucket* b, size_t size);
  PendingAllocs* NewPending();
  void AccountFree(Bucket* b, size_t size);
  MapCounts* MapCountsFor(const Bucket* b);

  // What the last ForEachBucketWithCounts counted for a bucket: its live slot records and the
  // slot-mode allocations not in its totals (still pending in threads' batches, or live
  // records of stack form). Indexed by bucket id; only readers
  // (under count_lock_) write it, so buckets do not carry these words. Replaced by a larger
  // array when buckets outgrow it (the old one is retired, never unmapped).
  struct ReaderCounts {
    int64_t slot_live_count, slot_live_bytes, uncounted_alloc_count, uncounted_alloc_bytes;
  };
  // Relaxed atomic view of one ReaderCounts (readers outside count_lock_ may see a refresh).
  static ReaderCounts Load(const ReaderCounts& c) {
    return {__atomic_load_n(&c.slot_live_count, __ATOMIC_RELAXED),
            __atomic_load_n(&c.slot_live_bytes, __ATOMIC_RELAXED),
            __atomic_load_n(&c.uncounted_alloc_count, __ATOMIC_RELAXED),
            __atomic_load_n(&c.uncounted_alloc_bytes, __ATOMIC_RELAXED)};
  }
  static void Add(int64_t* field, int64_t v) {  // by the one refreshing reader
    __atomic_store_n(field, __atomic_load_n(field, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
  }
  ReaderCounts Counts(const Bucket& b) const {
    const uint32_t id = b.id.load(std::memory_order_relaxed);
    // Capacity first: a capacity seen implies its array (stored before it) is seen.
    const uint32_t capacity = reader_capacity_.load(std::memory_order_acquire);
    ReaderCounts* c = reader_counts_.load(std::memory_order_acquire);
    return c != nullptr && id < capacity ? Load(c[id]) : ReaderCounts{};
  }
  bool ReserveReaderCounts();

  static constexpr int kIdChunkBits = 14;
  static constexpr uint32_t kIdChunkSize = uint32_t{1} << kIdChunkBits;
  static constexpr uint32_t kIdChunks = 4096;  // 64 Mi buckets
  static_assert(uint64_t{kIdChunks} * kIdChunkSize <= (uint64_t{1} << 30),
                "bucket ids leave kSlotBirthFlag's bit free");

  std::atomic<uint32_t>* bucket_heads_ = nullptr;  // bucket ids
  const SlotProvider* slots_ = nullptr;
  std::atomic<bool> slots_used_{false};
  std::atomic<bool> stack_slots_used_{false};  // some slot was written in stack form
  std::atomic<uint32_t> next_id_{0};
  std::atomic<Bucket*> id_chunks_[kIdChunks] = {};      // buckets stored by id
  std::atomic<MapCounts*> map_chunks_[kIdChunks] = {};  // their hash-map counts, by id
  TraceTree tree_;
  std::atomic<ReaderCounts*> reader_counts_{nullptr};
  std::atomic<uint32_t> reader_capacity_{0};
  std::atomic<PendingAllocs*> pending_{nullptr};
  std::atomic<size_t> num_buckets_{0};
  struct alignas(64) PaddedLock {
    std::atomic<bool> lock{false};
  };
  PaddedLock insert_locks_[kInsertLocks];
  PaddedLock count_lock_;
  LiveObjectMap map_;
};

// The process-wide table (constant-initialised, usable after Init()).
extern StackTable g_stack_table;
inline StackTable& GlobalStackTable() { return g_stack_table; }

}  // namespace heapkit::prof
