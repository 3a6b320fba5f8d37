// Births of exact mode's slot records (HEAP_PROFILE_LIFETIMES in exact mode): instead of a
// live-object-map record (a locked insert and remove per object, with their per-bucket
// counters), an object recorded in its side slot (stack_table.h "Object slots") keeps its
// birth in the slot array's birth word (alloc/object_slots.h "Birth words"), and its slot value
// carries StackTable::kSlotBirthFlag. Its free (the allocator's slot-free hook) counts its
// lifetime from the two words the allocator hands over, with no lookup.
//
// A birth word packs the allocation's time in birth-clock ticks (birth_clock.h) above the
// allocating thread's number:
//   ticks << 16 | thread
// An object whose ticks or thread do not fit (after 2^48 ticks, a day or more, of profiling,
// or from the 65536th recording thread on) is kept in the live-object map as before:
// lifetimes stay exact. The dump interval (ages) stays in the slot value.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/time/birth_clock.h"
#include "profiler/table/object_birth.h"

namespace heapkit::prof {

struct Bucket;
class StackTable;

inline constexpr int kBirthThreadBits = 16;

// Called at profiling start (ReadObjectTimeSettings): new slot arrays get birth words while
// lifetimes are on; the clock is calibrated once.
void SetSlotBirths(bool lifetimes);

// The birth word of an allocation at `ticks` on thread number `thread`, or 0 if they do not fit.
inline uint64_t PackBirthWord(uint64_t ticks, uint32_t thread) {
  if (__builtin_expect((ticks >> (64 - kBirthThreadBits)) != 0 || (thread >> kBirthThreadBits) != 0,
                       0))
    return 0;
  return (ticks << kBirthThreadBits) | thread;
}

// The birth word of an allocation now on this thread, or 0 if it does not fit one.
inline uint64_t BirthWordNow() { return PackBirthWord(BirthTicks(), ThisThreadNumber()); }

// BirthWordNow where it makes no call (the counter is the clock and this thread has its
// number), else 0 (the caller then takes the way that can call).
inline uint64_t BirthWordNowWithoutCall() {
  const uint32_t thread = tls_thread_number;
  if (!BirthTicksFromCounter() || thread == 0) return 0;
  return PackBirthWord(CounterBirthTicks(), thread);
}

// The object's birth word (its slot array's), or nullptr if its array has none. For the
// object's owner (the allocating thread), when the allocator did not hand it over.
std::atomic<uint64_t>* OwnedBirthWord(const void* object);

// A slot record (value) with kSlotBirthFlag and birth word `word` was freed (the slot-free
// hook, on the freeing thread, while profiling): its lifetime is counted (lifetime_table.h;
// a slot record is estimated at its size: slot records are made at rate 1 only), with the
// free's stack if HEAP_PROFILE_FREE_STACKS is on, walked from `frame` (the hook's:
// where the free entered the allocator; nullptr: from here).
// Inline, so that the slot-free hook reaches the right one of the two below by one tail call.
inline void CountFreedSlotObject(uint64_t value, uint64_t word, const uintptr_t* frame);
void CountFreedSlotObjectWithStack(uint64_t value, uint64_t word, const uintptr_t* frame);
void CountFreedSlotObjectWithoutStack(uint64_t value, uint64_t word);
inline void CountFreedSlotObject(uint64_t value, uint64_t word, const uintptr_t* frame) {
  if (!g_object_times.lifetimes.load(std::memory_order_relaxed)) return;
  if (g_object_times.free_stacks.load(std::memory_order_relaxed))
    return CountFreedSlotObjectWithStack(value, word, frame);
  CountFreedSlotObjectWithoutStack(value, word);
}

// Visits the live slot records with a birth word: their bucket, size and age (ns). The
// visitor must not allocate or sample.
void ForEachSlotAgeNs(StackTable& table,
                      void (*visit)(void* ctx, const Bucket* bucket, size_t size, int64_t age_ns),
                      void* ctx);

}  // namespace heapkit::prof
