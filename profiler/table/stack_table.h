// The sampled-allocation table: per-stack buckets, and the records of live sampled objects —
// in the allocator's side slots (exact mode) or in the live-object map (live_object_map.h).
//
// Buckets. One per (stack, size key), interned by the bucket index (bucket_index.h: buckets by
// id, lock-free lookup, never freed). A bucket names its stack by a node of the trace tree
// (trace_tree.h: shared callers stored once; ReadStack rebuilds the frames into the caller's
// buffer), so a bucket's size does not grow with its depth. Counters are relaxed atomics (see
// Bucket and "Object slots" for what each counts).
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
// Sampling variance. An estimate's error bars need, per bucket, the Horvitz-Thompson sum over
// its sampled records of w^2 (1 - p) for bytes and (1 - p) / p^2 for objects
// (alloc::SampleVarianceOf), for the allocated totals and for the live records. Records of a
// sampling period R > 1 are hash-map records (slots hold exact mode's only), so the sums live in
// MapCounts, added when a record is made and, for the in-use sums, subtracted when it is freed:
// a few floating adds (compare-and-swap loops) on the path that already takes a stripe lock and
// inserts a node. The caller passes the record's period (`rate`) to RecordAlloc* and to
// RecordFree, the period of record in both cases (profiler/sample_recorder.cc), so that a free
// subtracts what its allocation added; exact mode (rate 1) adds nothing: its sigma is 0.
//
// Stopped-world reads (the leak checker): Lookup() answers with the stack's StackRef, for
// records of either form, from the slot or from the map (LiveObjectMap::Find: safe while the
// world is stopped). Reading a stack takes no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/table/bucket_index.h"
#include "profiler/table/live_object_map.h"
#include "profiler/table/slot_layout.h"
#include "profiler/table/trace_tree.h"

namespace heapkit::prof {

// The part of a bucket's allocations recorded in the hash map, and the frees of those; with
// the sampling variance of its estimates ("Sampling variance" above).
struct MapCounts {
  std::atomic<int64_t> alloc_count;
  std::atomic<int64_t> alloc_bytes;
  std::atomic<int64_t> free_count;
  std::atomic<int64_t> free_bytes;
  // Sums of alloc::SampleVarianceOf over the sampled records: every one (the allocated
  // estimates') and the live ones (the in-use estimates': subtracted at the free).
  std::atomic<double> alloc_variance_objects;
  std::atomic<double> alloc_variance_bytes;
  std::atomic<double> inuse_variance_objects;
  std::atomic<double> inuse_variance_bytes;
};

// The sampling variances of a bucket's four estimates (objects^2, bytes^2), each >= 0.
struct BucketVariance {
  double inuse_objects, inuse_bytes, alloc_objects, alloc_bytes;
};

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

class StackTable : public SlotLayout {
 public:
  // Bucket field limits (bucket_index.h).
  static constexpr int kMaxBucketDepth = BucketIndex::kMaxBucketDepth;
  static constexpr uint32_t kMaxSizeKey = BucketIndex::kMaxSizeKey;

  // Must be called once before use (allocates the hash arrays from the arena). False on OOM.
  bool Init();
  bool initialised() const { return buckets_.initialised(); }

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
  Bucket* BucketForStack(uint32_t stack, int depth, uint32_t size_key) {
    return buckets_.BucketForStack(stack, depth, size_key);
  }
  // Both steps: the bucket for (pcs[0..depth), size_key). nullptr only on arena OOM.
  Bucket* FindOrCreateBucket(void* const* pcs, int depth, uint32_t size_key) {
    const uint32_t stack = InsertStack(pcs, depth);
    return stack == kNoStack ? nullptr : BucketForStack(stack, depth, size_key);
  }

  // Records a live sampled object. If `object` was already recorded (a free we never saw),
  // the old entry is first accounted as freed. use_slot: keep it in its side slot if the
  // provider has one (exact mode: see "Object slots").
  // rate: the sampling period the record was taken at ("Sampling variance"; 1: exact).
  void RecordAlloc(const void* object, Bucket* bucket, size_t size, bool use_slot = false,
                   int64_t rate = 1) {
    RecordAllocIn(use_slot && size < kMaxSlotSize ? SlotForAlloc(object) : nullptr, object, bucket,
                  size, {}, rate);
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
  // rate: as RecordAlloc's (a slot record's is 1).
  void RecordAllocIn(std::atomic<uint64_t>* slot, const void* object, Bucket* bucket, size_t size,
                     const ObjectBirth& birth = {}, int64_t rate = 1) {
    if (slot == nullptr) return RecordAllocInMap(object, bucket, size, birth, rate);
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
  // The sampling variances of b's estimates ("Sampling variance"); all 0 for a bucket of exact
  // records. The in-use sums are clamped at 0 (rounding of the adds and subtractions).
  BucketVariance Variance(const Bucket& b) const {
    const MapCounts* m = MapCountsOf(b.id.load(std::memory_order_relaxed));
    if (m == nullptr) return {0, 0, 0, 0};
    auto at_least_0 = [](double v) { return v > 0 ? v : 0; };
    return {at_least_0(m->inuse_variance_objects.load(std::memory_order_relaxed)),
            at_least_0(m->inuse_variance_bytes.load(std::memory_order_relaxed)),
            m->alloc_variance_objects.load(std::memory_order_relaxed),
            m->alloc_variance_bytes.load(std::memory_order_relaxed)};
  }
  // The hash-map counts of bucket `id` (nullptr: it never had a hash-map record). Chunks of
  // kIdChunkSize buckets' counts are allocated on the first record of one of them.
  const MapCounts* MapCountsOf(uint32_t id) const {
    MapCounts* chunk =
        map_chunks_[(id >> BucketIndex::kIdChunkBits) & (BucketIndex::kIdChunks - 1)].load(
            std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[id & (BucketIndex::kIdChunkSize - 1)];
  }

  // Sets the side-slot provider (once, before recording; nullptr: hash map only).
  void SetSlotProvider(const SlotProvider* provider) { slots_ = provider; }

  // Bucket with the given id (slot values), nullptr if none.
  Bucket* BucketById(uint32_t id) const { return buckets_.BucketById(id); }
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
  // rate: the period the record was made at, as given to RecordAlloc* ("Sampling variance").
  bool RecordFree(const void* object, size_t* size = nullptr, const Bucket** bucket = nullptr,
                  ObjectBirth* birth = nullptr, int64_t rate = 1) {
    if (slots_used_.load(std::memory_order_relaxed) && RecordFreeFromSlot(object, size, bucket))
      return true;
    const uint64_t h = LiveObjectMap::HashAddress(reinterpret_cast<uintptr_t>(object));
    if (!map_.MayHold(h)) return false;
    return RecordFreeSlow(object, h, size, bucket, birth, rate);
  }
  // The bucket a slot value of bucket form names (nullptr: stack form, or no such bucket).
  const Bucket* SlotBucket(uint64_t value) const {
    return value & kStackSlotTag ? nullptr : BucketById(SlotIdOf(value));
  }

  // Stopped-world-safe lookup of a live record: its stack and requested size (see header
  // comment).
  bool Lookup(const void* object, StackRef* stack, size_t* size);

  // Visits every bucket (newest first). Safe concurrently with inserts. In-use counts of
  // side-slot records are those of the last ForEachBucketWithCounts.
  template <class F>
  void ForEachBucket(F&& f) const {
    buckets_.ForEachBucket(f);
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
    if (initialised()) map_.ForEach(visit, ctx);
  }

  size_t num_buckets() const { return buckets_.num_buckets(); }
  size_t num_live_objects() const;

  void ForkPrepare();
  void ForkParent();
  void ForkChild();

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
  static void Lock(std::atomic<bool>* l) { LockFlag(l); }
  static void Unlock(std::atomic<bool>* l) { UnlockFlag(l); }
  bool RecordFreeSlow(const void* object, uint64_t h, size_t* size, const Bucket** bucket,
                      ObjectBirth* birth, int64_t rate);
  void RecordAllocInMap(const void* object, Bucket* bucket, size_t size, const ObjectBirth& birth,
                        int64_t rate);
  bool RecordFreeFromSlot(const void* object, size_t* size, const Bucket** bucket);
  void CreateBucketsOfStackSlots();
  const Bucket* StackFormBucket(uint64_t value);
  void RefreshSlotCounts();
  void CountSlotAlloc(Bucket* b, size_t size);
  PendingAllocs* NewPending();
  void AccountFree(Bucket* b, size_t size, int64_t rate);
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

  static_assert(uint64_t{BucketIndex::kIdChunks} * BucketIndex::kIdChunkSize <= (uint64_t{1} << 30),
                "bucket ids leave kSlotBirthFlag's bit free");

  const SlotProvider* slots_ = nullptr;
  std::atomic<bool> slots_used_{false};
  std::atomic<bool> stack_slots_used_{false};  // some slot was written in stack form
  BucketIndex buckets_;
  std::atomic<MapCounts*> map_chunks_[BucketIndex::kIdChunks] = {};  // hash-map counts, by id
  TraceTree tree_;
  std::atomic<ReaderCounts*> reader_counts_{nullptr};
  std::atomic<uint32_t> reader_capacity_{0};
  std::atomic<PendingAllocs*> pending_{nullptr};
  struct alignas(64) PaddedLock {
    std::atomic<bool> lock{false};
  };
  PaddedLock count_lock_;
  LiveObjectMap map_;
};

// The process-wide table (constant-initialised, usable after Init()).
extern StackTable g_stack_table;
inline StackTable& GlobalStackTable() { return g_stack_table; }

}  // namespace heapkit::prof
