// Births of exact mode's slot records (slot_births.h).
#include "profiler/slot_births.h"

#include "alloc/object_slots.h"
#include "profiler/lifetime_recorder.h"
#include "profiler/lifetime_table.h"
#include "profiler/stack_table.h"

namespace heapkit::prof {
namespace {

// The age of a birth word's object now, in ns.
inline int64_t AgeNs(uint64_t word) {
  return BirthTicksToNs(static_cast<int64_t>(BirthTicks() - (word >> kBirthThreadBits)));
}

uint32_t NodeOfBucket(uint32_t id) {
  const Bucket* b = GlobalStackTable().BucketById(id);
  return b != nullptr ? b->stack : kNoAllocNode;
}

}  // namespace

void SetSlotBirths(bool lifetimes) {
  if (lifetimes) CalibrateBirthClock();
  alloc::SetSlotBirths(lifetimes);
}

std::atomic<uint64_t>* OwnedBirthWord(const void* object) {
  return alloc::OwnedObjectBirth(object);
}

namespace {

// A slot free's lifetime (CountFreedSlotObject), with the free's stack or without: two copies,
// so that the common one keeps nothing live across the clock read but what it counts.
template <bool kFreeStack>
inline __attribute__((always_inline)) void CountSlotLifetime(uint64_t value, uint64_t word,
                                                             int64_t estimated_bytes,
                                                             const uintptr_t* frame) {
  const int bin =
      LifetimeBinOfTicks(static_cast<int64_t>(BirthTicks() - (word >> kBirthThreadBits)));
  const uint32_t thread = static_cast<uint32_t>(word & ((uint64_t{1} << kBirthThreadBits) - 1));
  // A thread with no number yet (0) recorded nothing: it is not the allocating one.
  const LifetimeEnd end =
      thread == tls_thread_number ? LifetimeEnd::kSameThread : LifetimeEnd::kOtherThread;
  const uint32_t bucket_id = StackTable::SlotIdOf(value);  // SlotHasBirth: bucket form
  const size_t size = StackTable::SlotSize(value);
  if constexpr (kFreeStack) {
    CountLifetimeWithFreeStack(bucket_id, &NodeOfBucket, bin, end, size, estimated_bytes, frame);
  } else {
    CountLifetimeOfBucket(bucket_id, &NodeOfBucket, kNoFreeStack, bin, end, size, estimated_bytes);
  }
}

__attribute__((noinline)) void CountFreedSlotObjectWithStack(uint64_t value, uint64_t word,
                                                             int64_t estimated_bytes,
                                                             const uintptr_t* frame) {
  CountSlotLifetime<true>(value, word, estimated_bytes, frame);
}

}  // namespace

void CountFreedSlotObject(uint64_t value, uint64_t word, int64_t estimated_bytes,
                          const uintptr_t* frame) {
  if (!g_object_times.lifetimes.load(std::memory_order_relaxed)) return;
  if (g_object_times.free_stacks.load(std::memory_order_relaxed))
    return CountFreedSlotObjectWithStack(value, word, estimated_bytes, frame);
  CountSlotLifetime<false>(value, word, estimated_bytes, nullptr);
}

void ForEachSlotAgeNs(StackTable& table,
                      void (*visit)(void* ctx, const Bucket* bucket, size_t size, int64_t age_ns),
                      void* ctx) {
  struct Ctx {
    StackTable* table;
    void (*visit)(void*, const Bucket*, size_t, int64_t);
    void* ctx;
  } c{&table, visit, ctx};
  alloc::ForEachObjectSlotWithBirth(
      [](void* p, const void*, uint64_t value, uint64_t birth) {
        if (!StackTable::SlotHasBirth(value) || birth == 0) return;
        auto* c = static_cast<Ctx*>(p);
        if (const Bucket* b = c->table->SlotBucket(value))
          c->visit(c->ctx, b, StackTable::SlotSize(value), AgeNs(birth));
      },
      &c);
}

}  // namespace heapkit::prof
