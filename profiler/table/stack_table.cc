#include "profiler/table/stack_table.h"

#include <sched.h>

#include <cstring>
#include <new>

#include "alloc/internal/arena.h"
#include "alloc/internal/atomic_list.h"
#include "alloc/internal/dcheck.h"
#include "alloc/sample_weight.h"

// The sampled-allocation table (stack_table.h); its live-object map: live_object_map.cc.
namespace heapkit::prof {

constinit StackTable g_stack_table;

bool StackTable::Init() {
  if (initialised()) return true;
  if (!tree_.Init()) return false;
  if (!map_.Init()) return false;
  return buckets_.Init();  // last: initialised() says that all three are
}

uint32_t StackTable::InsertStack(void* const* pcs, int depth) {
  if (depth < 0) depth = 0;
  if (depth > kMaxBucketDepth) depth = kMaxBucketDepth;
  return tree_.Insert(pcs, depth);
}

StackRef StackTable::InsertCallers(void* const* pcs, int depth) {
  if (depth <= 0) return {TraceTree::kRoot, 0};
  const uint32_t leaf = tree_.PcIndex(reinterpret_cast<uintptr_t>(pcs[0]));
  const uint32_t callers = InsertStack(pcs + 1, depth - 1);
  if (leaf == TraceTree::kNone || callers == kNoStack) return {kNoStack, 0};
  return {callers, leaf};
}

MapCounts* StackTable::MapCountsFor(const Bucket* b) {
  const uint32_t id = b->id.load(std::memory_order_relaxed);
  std::atomic<MapCounts*>& slot = map_chunks_[id >> BucketIndex::kIdChunkBits];
  MapCounts* chunk = slot.load(std::memory_order_acquire);
  if (__builtin_expect(chunk == nullptr, 0)) {
    auto* fresh = static_cast<MapCounts*>(
        internal::ArenaAlloc(sizeof(MapCounts) * BucketIndex::kIdChunkSize, 4096));
    if (fresh == nullptr) return nullptr;
    // A loser's chunk stays in the arena unused (untouched pages: no resident cost).
    if (slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) chunk = fresh;
  }
  return &chunk[id & (BucketIndex::kIdChunkSize - 1)];
}

void StackTable::AccountFree(Bucket* b, size_t size, int64_t rate) {
  // The chunk exists: the object's record was counted in it.
  MapCounts* m = MapCountsFor(b);
  if (m == nullptr) return;
  m->free_count.fetch_add(1, std::memory_order_relaxed);
  m->free_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  if (rate > 1) {  // what its allocation added to the in-use variance
    const alloc::SampleVariance v =
        alloc::SampleVarianceOf(static_cast<double>(size), static_cast<double>(rate));
    m->inuse_variance_objects.fetch_sub(v.objects, std::memory_order_relaxed);
    m->inuse_variance_bytes.fetch_sub(v.bytes, std::memory_order_relaxed);
  }
}

// Readers count stack-form slot records in the bucket of (the whole stack's node, 0): made
// here, with the leaf's node, before the reader-side array is sized, so that every such
// record finds its bucket in the counting pass.
void StackTable::CreateBucketsOfStackSlots() {
  struct Last {
    StackTable* table;
    StackRef stack;
  } last{this, {kNoStack, 0}};
  slots_->for_each_slot(
      [](void* p, const void*, uint64_t value) {
        auto* last = static_cast<Last*>(p);
        if (!(value & kStackSlotTag)) return;
        const StackRef stack = StackFormRef(value);
        if (stack == last->stack) return;  // neighbours often share a call site
        last->stack = stack;
        StackTable& t = *last->table;
        const uint32_t node = t.NodeOf(stack);
        if (node != kNoStack && t.buckets_.FindBucket(node, 0) == nullptr)
          t.BucketForStack(node, t.tree_.Depth(node), 0);
      },
      &last);
}

// The bucket a stack-form record is counted in (nullptr: none yet).
const Bucket* StackTable::StackFormBucket(uint64_t value) {
  const uint32_t node = NodeOf(StackFormRef(value));  // found: CreateBucketsOfStackSlots made it
  return node != kNoStack ? buckets_.FindBucket(node, 0) : nullptr;
}

void StackTable::RefreshSlotCounts() {
  HEAPKIT_DCHECK(count_lock_.lock.load(std::memory_order_relaxed));  // the one writer below
  if (!slots_used_.load(std::memory_order_acquire)) return;
  if (stack_slots_used_.load(std::memory_order_acquire)) CreateBucketsOfStackSlots();
  if (!ReserveReaderCounts()) return;
  ReaderCounts* counts = reader_counts_.load(std::memory_order_relaxed);
  for (uint32_t i = 0, n = reader_capacity_.load(std::memory_order_relaxed); i < n; ++i) {
    for (int64_t* f : {&counts[i].slot_live_count, &counts[i].slot_live_bytes,
                       &counts[i].uncounted_alloc_count, &counts[i].uncounted_alloc_bytes})
      __atomic_store_n(f, 0, __ATOMIC_RELAXED);
  }
  // Threads' batches (sequence-counter reads; a batch whose owner stopped mid-write — a
  // thread that did not survive fork — is read as it is after a bounded number of retries).
  for (PendingAllocs* p = pending_.load(std::memory_order_acquire); p != nullptr; p = p->next) {
    Bucket* b = nullptr;
    int64_t count = 0, bytes = 0;
    for (int tries = 0; tries < 1000; ++tries) {
      const uint32_t s1 = p->seq.load(std::memory_order_acquire);
      b = p->bucket.load(std::memory_order_relaxed);
      count = p->count.load(std::memory_order_relaxed);
      bytes = p->bytes.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((s1 & 1) == 0 && p->seq.load(std::memory_order_relaxed) == s1) break;
      sched_yield();
    }
    const uint32_t id = b != nullptr ? b->id.load(std::memory_order_relaxed) : 0;
    if (id == 0 || id >= reader_capacity_.load(std::memory_order_relaxed)) continue;
    ReaderCounts& c = counts[id];
    Add(&c.uncounted_alloc_count, count);
    Add(&c.uncounted_alloc_bytes, bytes);
  }
  slots_->for_each_slot(
      [](void* table, const void*, uint64_t value) {
        auto* t = static_cast<StackTable*>(table);
        const bool stack_form = (value & kStackSlotTag) != 0;
        const Bucket* b = __builtin_expect(stack_form, 0) ? t->StackFormBucket(value)
                                                          : t->BucketById(SlotIdOf(value));
        if (b == nullptr) return;  // a record made after CreateBucketsOfStackSlots
        const auto size = static_cast<int64_t>(SlotSize(value));
        // Only this pass (under count_lock_) writes these: no locked add needed.
        const uint32_t id = b->id.load(std::memory_order_relaxed);
        if (id >= t->reader_capacity_.load(std::memory_order_relaxed)) return;  // newer bucket
        ReaderCounts& c = t->reader_counts_.load(std::memory_order_relaxed)[id];
        Add(&c.slot_live_count, 1);
        Add(&c.slot_live_bytes, size);
        if (stack_form) {  // never counted as allocated: it is, as long as it lives
          Add(&c.uncounted_alloc_count, 1);
          Add(&c.uncounted_alloc_bytes, size);
        }
      },
      this);
}

bool StackTable::ReserveReaderCounts() {
  const uint32_t need = buckets_.last_id() + 1;
  if (need <= reader_capacity_.load(std::memory_order_relaxed)) return true;
  uint32_t capacity = 1024;
  while (capacity < need) capacity *= 2;
  void* mem = internal::ArenaAlloc(sizeof(ReaderCounts) * capacity, 64);
  if (mem == nullptr) return false;
  reader_counts_.store(static_cast<ReaderCounts*>(mem), std::memory_order_release);
  reader_capacity_.store(capacity, std::memory_order_release);
  return true;
}

__thread PendingAllocs* tls_pending_allocs __attribute__((tls_model("initial-exec"))) = nullptr;

PendingAllocs* StackTable::NewPending() {
  void* mem = internal::ArenaAlloc(sizeof(PendingAllocs), alignof(PendingAllocs));
  if (mem == nullptr) return nullptr;
  auto* p = new (mem) PendingAllocs();
  p->table = this;
  internal::PushFront(&pending_, p, &PendingAllocs::next);
  return p;
}

void StackTable::CountSlotAlloc(Bucket* b, size_t size) {
  PendingAllocs* p = tls_pending_allocs;
  if (__builtin_expect(p == nullptr || p->table != this, 0)) {
    // First slot-mode allocation of this thread (or it switched tables, which only tests do:
    // the old batch stays on its table's list, still counted there).
    p = NewPending();
    if (p == nullptr) {
      b->alloc_count.fetch_add(1, std::memory_order_relaxed);
      b->alloc_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
      return;
    }
    tls_pending_allocs = p;
  }
  const uint32_t seq = p->seq.load(std::memory_order_relaxed);
  p->seq.store(seq + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  Bucket* cur = p->bucket.load(std::memory_order_relaxed);
  if (cur == b) {
    p->count.store(p->count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    p->bytes.store(p->bytes.load(std::memory_order_relaxed) + static_cast<int64_t>(size),
                   std::memory_order_relaxed);
  } else {  // another call site: flush the batch into its bucket and start one for b
    if (cur != nullptr) {
      cur->alloc_count.fetch_add(p->count.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
      cur->alloc_bytes.fetch_add(p->bytes.load(std::memory_order_relaxed),
                                 std::memory_order_relaxed);
    }
    p->bucket.store(b, std::memory_order_relaxed);
    p->count.store(1, std::memory_order_relaxed);
    p->bytes.store(static_cast<int64_t>(size), std::memory_order_relaxed);
  }
  p->seq.store(seq + 2, std::memory_order_release);
}

void StackTable::RecordAllocInMap(const void* object, Bucket* bucket, size_t size,
                                  const ObjectBirth& birth, int64_t rate) {
  bucket->alloc_count.fetch_add(1, std::memory_order_relaxed);
  bucket->alloc_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  MapCounts* m = MapCountsFor(bucket);
  if (m == nullptr) return;  // arena exhausted: the object is not recorded
  m->alloc_count.fetch_add(1, std::memory_order_relaxed);
  m->alloc_bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  if (rate > 1) {  // "Sampling variance" (stack_table.h)
    const alloc::SampleVariance v =
        alloc::SampleVarianceOf(static_cast<double>(size), static_cast<double>(rate));
    m->alloc_variance_objects.fetch_add(v.objects, std::memory_order_relaxed);
    m->alloc_variance_bytes.fetch_add(v.bytes, std::memory_order_relaxed);
    m->inuse_variance_objects.fetch_add(v.objects, std::memory_order_relaxed);
    m->inuse_variance_bytes.fetch_add(v.bytes, std::memory_order_relaxed);
  }
  Bucket* old_bucket;
  size_t old_size;
  switch (map_.Insert(object, bucket, size, birth, &old_bucket, &old_size)) {
    case LiveObjectMap::InsertResult::kInserted: return;
    case LiveObjectMap::InsertResult::kReplaced:  // stale entry: its free was never reported
      AccountFree(old_bucket, old_size, rate);
      return;
    case LiveObjectMap::InsertResult::kNoMemory:  // arena exhausted: count it freed at once
      AccountFree(bucket, size, rate);
      return;
  }
}

bool StackTable::RecordFreeFromSlot(const void* object, size_t* size, const Bucket** bucket) {
  std::atomic<uint64_t>* slot = slots_->find_slot(object);
  if (slot == nullptr) return false;
  const uint64_t v = slot->load(std::memory_order_acquire);
  if (v == 0) return false;
  if (size != nullptr) *size = SlotSize(v);
  if (bucket != nullptr) *bucket = SlotBucket(v);
  slot->store(0, std::memory_order_relaxed);  // the free's only accounting (see header)
  return true;
}

bool StackTable::RecordFreeSlow(const void* object, uint64_t h, size_t* size, const Bucket** bucket,
                                ObjectBirth* birth, int64_t rate) {
  Bucket* b;
  size_t sz;
  ObjectBirth born;
  if (!map_.Remove(object, h, &b, &sz, &born)) return false;
  AccountFree(b, sz, rate);
  if (size != nullptr) *size = sz;
  if (bucket != nullptr) *bucket = b;
  if (birth != nullptr) *birth = born;
  return true;
}

bool StackTable::Lookup(const void* object, StackRef* stack, size_t* size) {
  if (!initialised()) return false;
  if (slots_used_.load(std::memory_order_relaxed)) {
    std::atomic<uint64_t>* slot = slots_->find_slot(object);
    if (slot != nullptr && DecodeSlot(slot->load(std::memory_order_acquire), stack, size))
      return true;
  }
  Bucket* b;
  if (!map_.Find(object, &b, size)) return false;
  *stack = {b->stack, 0};
  return true;
}

void StackTable::ForEachLiveObject(void (*visit)(void* ctx, const void* object, StackRef stack,
                                                 size_t size),
                                   void* ctx) {
  if (!initialised()) return;
  struct MapCtx {
    void (*visit)(void*, const void*, StackRef, size_t);
    void* ctx;
  } m{visit, ctx};
  map_.ForEach(
      [](void* p, const void* object, Bucket* bucket, size_t size, const ObjectBirth&) {
        auto* m = static_cast<MapCtx*>(p);
        m->visit(m->ctx, object, {bucket->stack, 0}, size);
      },
      &m);
  if (slots_used_.load(std::memory_order_relaxed)) {
    struct Ctx {
      StackTable* table;
      void (*visit)(void*, const void*, StackRef, size_t);
      void* ctx;
    } c{this, visit, ctx};
    slots_->for_each_slot(
        [](void* p, const void* object, uint64_t value) {
          auto* c = static_cast<Ctx*>(p);
          StackRef stack;
          size_t size;
          if (c->table->DecodeSlot(value, &stack, &size)) c->visit(c->ctx, object, stack, size);
        },
        &c);
  }
}

void StackTable::ForEachSlotAge(void (*visit)(void*, const Bucket*, size_t, uint32_t), void* ctx) {
  if (!slots_used_.load(std::memory_order_relaxed)) return;
  struct Ctx {
    StackTable* table;
    void (*visit)(void*, const Bucket*, size_t, uint32_t);
    void* ctx;
  } c{this, visit, ctx};
  slots_->for_each_slot(
      [](void* p, const void*, uint64_t value) {
        auto* c = static_cast<Ctx*>(p);
        if (value & kStackSlotTag) return;
        const uint32_t age = static_cast<uint32_t>(value >> kStackSizeBits) &
                             ((uint32_t{1} << kSlotIntervalBits) - 1);
        if (age == 0) return;
        if (const Bucket* b = c->table->BucketById(SlotIdOf(value)))
          c->visit(c->ctx, b, SlotSize(value), age - 1);
      },
      &c);
}

size_t StackTable::num_live_objects() const {
  size_t total = map_.size();
  if (slots_used_.load(std::memory_order_relaxed)) {
    slots_->for_each_slot([](void* p, const void*, uint64_t) { ++*static_cast<size_t*>(p); },
                          &total);
  }
  return total;
}

void StackTable::ForkPrepare() {
  Lock(&count_lock_.lock);
  tree_.ForkPrepare();
  buckets_.LockAll();
  map_.LockAll();
}

void StackTable::ForkParent() {
  map_.UnlockAll();
  buckets_.UnlockAll();
  tree_.ForkParent();
  Unlock(&count_lock_.lock);
}

void StackTable::ForkChild() { ForkParent(); }

}  // namespace heapkit::prof
