// Births of exact mode's slot records (slot_births.h).
#include "profiler/record/slot_births.h"

#include "alloc/object_slots.h"
#include "profiler/record/lifetime_recorder.h"
#include "profiler/time/lifetime_table.h"
#include "profiler/table/stack_table.h"

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

// A slot free's lifetime (CountFreedSlotObject), counted with `free_node` (kNoFreeStack: none);
// now: BirthTicks() at the free.
inline __attribute__((always_inline)) void CountSlotLifetime(uint64_t now, uint64_t value,
                                                             uint64_t word, uint32_t free_node) {
  const int bin = LifetimeBinOfTicks(static_cast<int64_t>(now - (word >> kBirthThreadBits)));
  const uint32_t thread = static_cast<uint32_t>(word & ((uint64_t{1} << kBirthThreadBits) - 1));
  // A thread with no number yet (0) recorded nothing: it is not the allocating one.
  const LifetimeEnd end =
      thread == tls_thread_number ? LifetimeEnd::kSameThread : LifetimeEnd::kOtherThread;
  const uint32_t bucket_id = StackTable::SlotIdOf(value);  // SlotHasBirth: bucket form
  CountLifetimeOfBucket(bucket_id, &NodeOfBucket, free_node, bin, end, StackTable::SlotSize(value));
}

// Without the free's stack, on CLOCK_MONOTONIC (a call).
__attribute__((noinline)) void CountFreedSlotObjectByClockCall(uint64_t value, uint64_t word) {
  CountSlotLifetime(BirthTicks(), value, word, kNoFreeStack);
}

__attribute__((noinline)) void CountFreedSlotObjectWithNewStack(uint64_t value, uint64_t word,
                                                                const uintptr_t* frame) {
  const uint32_t free_node = CaptureFreeStackNode(frame);
  CountSlotLifetime(BirthTicks(), value, word, free_node);
}

}  // namespace

// With the free's stack. Its common case, a repeat free stack and lifetime cell with the counter
// for a clock, makes no call but its tail calls. The stack is checked before the clock is
// read, so that nothing but the free's own words is live across the check.
void CountFreedSlotObjectWithStack(uint64_t value, uint64_t word, const uintptr_t* frame) {
  if (BirthTicksFromCounter() && FreeHasLastStack(frame))
    return CountSlotLifetime(CounterBirthTicks(), value, word, tls_last_free_stack.node);
  CountFreedSlotObjectWithNewStack(value, word, frame);
}

// The common case makes no call but its tail calls, as CountFreedSlotObjectWithStack's.
void CountFreedSlotObjectWithoutStack(uint64_t value, uint64_t word) {
  if (!BirthTicksFromCounter()) return CountFreedSlotObjectByClockCall(value, word);
  CountSlotLifetime(CounterBirthTicks(), value, word, kNoFreeStack);
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
