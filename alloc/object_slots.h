// Per-object side slots for the profiler's exact mode.
//
// One 64-bit word per small object, in an array per span (an "object slot array"), found from
// the object's address through the page map (span start page + size class) and the span's
// cached array pointer (validated by the array's install stamp; object_slots.cc "Span cache"),
// else a radix map keyed by the span's start page. 0 means "empty"; the owner
// (profiler/table/stack_table) defines the other values. This replaces a locked hash insert/erase
// per allocation and free with two radix lookups and a plain store, costs 8 bytes per object of a
// span that holds a recorded object, and lets the stopped-world enumeration hand out each object's
// word in bulk.
//
// Concurrency: a slot is written only by the thread that owns its object (the allocating thread
// when it records it, the freeing thread when it clears it); the program's own synchronisation
// orders the two. Arrays are created lock-free (CAS into the radix leaf) and are never unmapped
// (freed arrays go to the metadata arena's free lists), so a racing reader never faults. An
// array belongs to (start page, size class): when a span with another class starts at the same
// page, a new array replaces it; words still set in the old array (objects whose free was
// never reported) are handed to `stale` first.
// Large objects (size class 0) and classes with more than kMaxSlotsPerSpan objects have no
// slots (nullptr): callers keep those elsewhere.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/observer_hooks.h"
#include "alloc/span.h"

namespace heapkit::alloc {

inline constexpr uint32_t kMaxSlotsPerSpan = 8192;
using StaleSlotVisitor = void (*)(void* context, uint64_t value);
std::atomic<uint64_t>* ObjectSlotForAlloc(const void* object, StaleSlotVisitor stale,
                                          void* context);
// The same for the object FinishSample is recording (sampling.cc, exact recorder), with its
// in-use span already in hand: no page-map lookup; no `stale` visitor (the exact-mode owner
// counts slot records from the slots themselves). nullptr for large objects.
std::atomic<uint64_t>* SlotOfNewObject(const Span* span, const void* object);
// The slot of a small object if its span has a slot array, else nullptr. Lock-free.
std::atomic<uint64_t>* FindObjectSlot(const void* object);
// The allocator's free path for a span routed to FreeSlow (allocator.cc, NotifyMaybeSampledFree):
// empties the slot of `object` (an object start of the in-use span `span`, owned by the
// caller) and returns its value; 0 if it has no slot or the slot was empty. A non-zero value
// means the observer recorded the object in its slot: the free is then complete without
// calling the observer's on_maybe_sampled_free (for slot records the owner counts live objects
// from the slots themselves, see profiler/table/stack_table.h "Object slots"), except for the
// optional SlotFreeHook, which TakeObjectSlot calls. This skips four call levels and a second
// page-map lookup per free.
// `index`: the object's index in the span (SizeMap::ObjectIndexOf; anything for a large span).
// frame: passed on to the SlotFreeHook (observer_hooks.h; nullptr: none).
uint64_t TakeObjectSlot(const Span* span, const void* object, uint64_t index,
                        const uintptr_t* frame = nullptr);
// TakeObjectSlot and TakeSlot call the SlotFreeHook (observer_hooks.h) with each value taken
// and the object's birth word (nullptr if its array has none).

// Inline fast paths of SlotOfNewObject and TakeObjectSlot for the allocator (allocator.cc),
// which owns the object and has its span and index in hand: the span's cached array as is
// (object_slots.cc "Span cache" says why an owner may trust it). Arrays start with a header
// of kSlotArrayHeaderBytes (object_slots.cc, SlotArray). nullptr: no array cached, call the
// out-of-line function. `index` must be below the class's ObjectsPerSpan.
inline constexpr size_t kSlotArrayHeaderBytes = 40;
inline constexpr size_t kSlotArrayBirthsOffset = 32;  // SlotArray::births
// The span's cached array (its header), or nullptr.
inline void* OwnedCachedArray(const Span* span) {
  return __atomic_load_n(&span->slot_array_, __ATOMIC_RELAXED);
}
inline std::atomic<uint64_t>* SlotOfArray(void* array, uint64_t index) {
  return reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(array) +
                                                  kSlotArrayHeaderBytes) +
         index;
}
inline std::atomic<uint64_t>* OwnedCachedSlot(const Span* span, uint64_t index) {
  void* a = OwnedCachedArray(span);
  return a != nullptr ? SlotOfArray(a, index) : nullptr;
}
// The birth word beside `slot` of `array` ("Birth words" below), or nullptr if it has none.
inline std::atomic<uint64_t>* BirthOfSlot(const void* array, std::atomic<uint64_t>* slot) {
  const uint64_t births =
      *reinterpret_cast<const uint64_t*>(static_cast<const char*>(array) + kSlotArrayBirthsOffset);
  return births != 0 ? slot + births : nullptr;
}
// Empties a found slot of `array`: TakeObjectSlot's work after the lookup. frame: for the
// SlotFreeHook (observer_hooks.h), or nullptr.
inline uint64_t TakeSlot(std::atomic<uint64_t>* slot, const void* object, const void* array,
                         const uintptr_t* frame) {
  const uint64_t v = slot->load(std::memory_order_acquire);
  if (v == 0) return 0;
  slot->store(0, std::memory_order_relaxed);  // the owner's only accounting
  if (const SlotFreeHook hook = g_slot_free_hook.load(std::memory_order_acquire); hook != nullptr)
    hook(object, v, BirthOfSlot(array, slot), frame);
  return v;
}
// Visits every non-zero slot as (object start, value). Racy but safe while the world runs
// (values read with relaxed loads); exact while it is stopped.
using SlotVisitor = void (*)(void* context, const void* object, uint64_t value);
void ForEachObjectSlot(SlotVisitor visitor, void* context);

// ---- Birth words ----
// While SetSlotBirths(true), new slot arrays carry a second word per object after their slots
// (16 bytes per object instead of 8), its "birth word", which the owner of the slots writes
// and reads beside the slot (the profiler's lifetimes: profiler/record/slot_births.h). Arrays made
// before keep having none, arrays made after keep theirs (free lists are per kind). The
// allocator never reads a birth word; a retired array's are left as they are (the owner
// marks in the slot value whether its birth word is set).
void SetSlotBirths(bool on);
// The birth word of a small object whose slot array has birth words, else nullptr. For the
// object's owner (its allocating thread while it records it, its freeing thread in the
// SlotFreeHook): page-map lookup, the span's cached array, the object's index.
std::atomic<uint64_t>* OwnedObjectBirth(const void* object);
// ForEachObjectSlot with each object's birth word (0 if its array has none).
using SlotBirthVisitor = void (*)(void* context, const void* object, uint64_t value,
                                  uint64_t birth);
void ForEachObjectSlotWithBirth(SlotBirthVisitor visitor, void* context);

// The slots of the array installed for `span` (its start page and class), or nullptr: radix
// lookup, no cache. For the live-object walk (live_objects.cc), world stopped.
const std::atomic<uint64_t>* InstalledSlotsOf(const Span* span);

}  // namespace heapkit::alloc
