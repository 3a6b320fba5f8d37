// Per-object side slots (object_slots.h): the slot arrays, their radix map by span start page,
// the per-class free lists of retired arrays and the span cache.
#include "alloc/object_slots.h"

#include <cstddef>

#include "alloc/global_state.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/atomic_list.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::alloc {
namespace {

// Header of one span's slot array; the slots follow it.
struct SlotArray {
  std::atomic<uint64_t> key;  // (start page << 8) | size class
  // Non-zero, unique to this install, while the array is installed in the radix map (set
  // before it is published, zeroed once it is retired or lost its install race, before it goes
  // to a free list): validates the Span's cached pointer (see "Span cache" below).
  std::atomic<uint64_t> stamp;
  SlotArray* next_free;  // on a free list
  SlotArray* next_made;  // every array ever made (ForEachObjectSlot); immutable once published
  // Words from a slot to its object's birth word (ObjectsPerSpan(class): the birth words follow
  // the slots), or 0: the array has no birth words. Fixed for the array's life.
  uint64_t births;
  std::atomic<uint64_t> slots[1];  // really [ObjectsPerSpan(class)], then the birth words
};
static_assert(offsetof(SlotArray, slots) == kSlotArrayHeaderBytes);
static_assert(offsetof(SlotArray, births) == kSlotArrayBirthsOffset);
// The slot radix tree, by span start page: 2^18 entries (2 MiB) per leaf.
constexpr int kSlotLeafBits = 18;
constexpr size_t kSlotLeafLength = size_t{1} << kSlotLeafBits;
constexpr size_t kSlotRootLength = size_t{1} << (kAddressBits - kPageShift - kSlotLeafBits);
using SlotLeaf = std::atomic<SlotArray*>;  // [kSlotLeafLength]

constinit std::atomic<std::atomic<SlotLeaf*>*> g_slot_root{nullptr};  // [kSlotRootLength]
// Free arrays per kind (without, with birth words) and size class: a Treiber stack whose head
// carries a 16-bit ABA tag in the top bits (arena addresses are below 2^47).
constinit std::atomic<uint64_t> g_free_arrays[2][kNumClassesMax] = {};
// Every array ever made, newest first (arrays are never unmapped): the walk of
// ForEachObjectSlot visits these instead of the radix map's 2^18 entries per leaf.
constinit std::atomic<SlotArray*> g_made_arrays{nullptr};
// New arrays get birth words (SetSlotBirths).
constinit std::atomic<bool> g_slot_births{false};
// Install stamps (SlotArray::stamp): 1, 2, ...
constinit std::atomic<uint64_t> g_next_stamp{0};

constexpr uint64_t kPtrMask = (uint64_t{1} << 48) - 1;

size_t SlotArrayBytes(uint32_t cls, bool births) {
  return offsetof(SlotArray, slots) +
         sizeof(uint64_t) * g_state.sizemap.ObjectsPerSpan(cls) * (births ? 2 : 1);
}

uint64_t SlotKey(PageId start, uint32_t cls) { return (static_cast<uint64_t>(start) << 8) | cls; }

void PushFreeArray(uint32_t cls, SlotArray* a) {
  std::atomic<uint64_t>& head = g_free_arrays[a->births != 0][cls];
  uint64_t h = head.load(std::memory_order_relaxed);
  do {
    a->next_free = reinterpret_cast<SlotArray*>(h & kPtrMask);
  } while (!head.compare_exchange_weak(
      h, ((h & ~kPtrMask) + (uint64_t{1} << 48)) | reinterpret_cast<uintptr_t>(a),
      std::memory_order_release, std::memory_order_relaxed));
}

SlotArray* PopFreeArray(uint32_t cls, bool births) {
  std::atomic<uint64_t>& head = g_free_arrays[births][cls];
  uint64_t h = head.load(std::memory_order_acquire);
  for (;;) {
    auto* a = reinterpret_cast<SlotArray*>(h & kPtrMask);
    if (a == nullptr) return nullptr;
    // a stays mapped even if another thread pops it first (arena memory is never unmapped);
    // the tag makes the CAS fail then.
    SlotArray* next = a->next_free;
    if (head.compare_exchange_weak(
            h, ((h & ~kPtrMask) + (uint64_t{1} << 48)) | reinterpret_cast<uintptr_t>(next),
            std::memory_order_acquire, std::memory_order_acquire))
      return a;
  }
}

// The radix entry for a span start page (creating the root/leaf when `create`).
SlotLeaf* SlotEntry(PageId start, bool create) {
  std::atomic<SlotLeaf*>* root = g_slot_root.load(std::memory_order_acquire);
  if (root == nullptr) {
    if (!create) return nullptr;
    auto* fresh = static_cast<std::atomic<SlotLeaf*>*>(
        internal::SystemAlloc(sizeof(std::atomic<SlotLeaf*>) * kSlotRootLength, 4096));
    if (fresh == nullptr) return nullptr;
    if (g_slot_root.compare_exchange_strong(root, fresh, std::memory_order_acq_rel)) {
      root = fresh;
    } else {
      internal::SystemFree(fresh, sizeof(std::atomic<SlotLeaf*>) * kSlotRootLength);
    }
  }
  const size_t r = start >> kSlotLeafBits;
  if (r >= kSlotRootLength) return nullptr;
  SlotLeaf* leaf = root[r].load(std::memory_order_acquire);
  if (leaf == nullptr) {
    if (!create) return nullptr;
    auto* fresh =
        static_cast<SlotLeaf*>(internal::SystemAlloc(sizeof(SlotLeaf) * kSlotLeafLength, 4096));
    if (fresh == nullptr) return nullptr;
    if (root[r].compare_exchange_strong(leaf, fresh, std::memory_order_acq_rel)) {
      leaf = fresh;
    } else {
      internal::SystemFree(fresh, sizeof(SlotLeaf) * kSlotLeafLength);
    }
  }
  return &leaf[start & (kSlotLeafLength - 1)];
}

// The slot of object `index` (SizeMap::ObjectIndexOf) in the array of a span of class cls;
// nullptr past the span's last object.
inline std::atomic<uint64_t>* SlotAt(SlotArray* array, uint32_t cls, uint64_t index) {
  if (index >= g_state.sizemap.ObjectsPerSpan(cls)) return nullptr;  // span tail
  return &array->slots[index];
}

// The slot of object a in `array` (whose key matched span's start and class).
inline std::atomic<uint64_t>* SlotIn(SlotArray* array, const Span* span, uintptr_t a) {
  const uint32_t cls = span->sizeclass_;
  return SlotAt(array, cls, g_state.sizemap.ObjectIndexOf(cls, a - span->StartAddress()));
}

// Span of a small object start, or nullptr.
inline const Span* SmallSpan(uintptr_t a) {
  if (!g_initialized.load(std::memory_order_relaxed)) return nullptr;
  const Span* span = g_state.pagemap.GetSpan(a >> kPageShift);
  if (span == nullptr || span->sizeclass_ == 0 || span->location_ != Span::kInUse) return nullptr;
  return span;
}

// ---- Span cache ----
// The radix lookup (root, leaf, entry, key check) is skipped when the span's cached pointer
// (Span::slot_array_, Span::slot_stamp_; written here only) still holds: the array's stamp equals
// the cached one and its key is the span's (start, class). Why that is enough:
//  - A cache is written only with an array just found installed for the span, and its stamp
//    of that install. An array's stamp changes (to 0, then to a fresh value at its next
//    install) whenever it leaves the radix map, and stamps are never reused. So an array whose
//    stamp still equals a cached stamp has stayed installed since: a torn read of the two cache
//    words, or a cache left in a Span struct from an earlier span (the page heap does not reset
//    these fields), can only fail the check, never pass it wrongly.
//  - An installed array is retired only when a span of another class starts at its page, which
//    cannot happen while the caller's span is in use (it owns one of its objects); and
//    InstallSlotArray finishes the retirement (stamp zeroed) before the allocation that caused
//    it returns, so before the page can pass to a later span.
// Racy readers (lookups of objects the caller does not own) may see a stale array, as with the
// radix map: arrays are never unmapped, so they never fault.
// Owners need less (OwnedCachedArray below, and the allocator's inline OwnedCachedSlot,
// object_slots.h): the page heap resets slot_array_ to nullptr whenever a span comes into use
// (PageHeap::Carve) and when it is freed, so while the span is in use the cache is nullptr or
// an array cached during this life (hence installed for this span's start and class) that
// cannot be retired before the span is freed (second point above). Only a reader whose span
// may be reused under it (FindObjectSlot) needs the stamp and key checks.
inline SlotArray* CachedArray(const Span* span) {
  auto* a = static_cast<SlotArray*>(__atomic_load_n(&span->slot_array_, __ATOMIC_RELAXED));
  const uint64_t stamp = __atomic_load_n(&span->slot_stamp_, __ATOMIC_RELAXED);
  if (a == nullptr || stamp == 0 || a->stamp.load(std::memory_order_acquire) != stamp ||
      a->key.load(std::memory_order_relaxed) != SlotKey(span->start_, span->sizeclass_))
    return nullptr;
  return a;
}

// The cache read by a caller that owns an object of the in-use span (SlotOfNewObject,
// TakeObjectSlot): the pointer alone (see "Span cache" above; object_slots.h's inline
// OwnedCachedArray).
inline SlotArray* OwnedArray(const Span* span) {
  return static_cast<SlotArray*>(OwnedCachedArray(span));
}

inline void CacheArray(const Span* span, SlotArray* a) {
  Span* s = const_cast<Span*>(span);
  __atomic_store_n(&s->slot_stamp_, a->stamp.load(std::memory_order_relaxed), __ATOMIC_RELAXED);
  __atomic_store_n(&s->slot_array_, static_cast<void*>(a), __ATOMIC_RELAXED);
}

// The slot array installed for span's start page if it belongs to span (start and class).
inline SlotArray* ArrayOf(const Span* span) {
  std::atomic<SlotLeaf*>* root = g_slot_root.load(std::memory_order_acquire);
  if (HEAPKIT_UNLIKELY(root == nullptr)) return nullptr;
  const PageId start = span->start_;
  SlotLeaf* leaf =
      root[(start >> kSlotLeafBits) & (kSlotRootLength - 1)].load(std::memory_order_acquire);
  if (HEAPKIT_UNLIKELY(leaf == nullptr)) return nullptr;
  SlotArray* a = leaf[start & (kSlotLeafLength - 1)].load(std::memory_order_acquire);
  if (a == nullptr || a->key.load(std::memory_order_relaxed) != SlotKey(start, span->sizeclass_))
    return nullptr;
  return a;
}

// A free array of the kind SetSlotBirths asks for, else a new one (nullptr: arena exhausted).
SlotArray* NewOrFreeArray(uint32_t cls) {
  const bool births = g_slot_births.load(std::memory_order_relaxed);
  if (SlotArray* a = PopFreeArray(cls, births)) return a;
  auto* a = static_cast<SlotArray*>(internal::ArenaAlloc(SlotArrayBytes(cls, births), 64));
  if (a == nullptr) return nullptr;
  a->births = births ? g_state.sizemap.ObjectsPerSpan(cls) : 0;
  internal::PushFront(&g_made_arrays, a, &SlotArray::next_made);
  return a;
}

// First recorded object of this span (or a span of another class now starts at its page):
// installs a fresh array, retiring the previous one.
__attribute__((noinline)) std::atomic<uint64_t>* InstallSlotArray(const Span* span, uintptr_t a,
                                                                  StaleSlotVisitor stale,
                                                                  void* context) {
  const uint32_t cls = span->sizeclass_;
  if (g_state.sizemap.ObjectsPerSpan(cls) > kMaxSlotsPerSpan) return nullptr;
  SlotLeaf* e = SlotEntry(span->start_, true);
  if (e == nullptr) return nullptr;
  const uint64_t key = SlotKey(span->start_, cls);
  SlotArray* cur = e->load(std::memory_order_acquire);
  if (cur != nullptr && cur->key.load(std::memory_order_relaxed) == key) {
    CacheArray(span, cur);
    return SlotIn(cur, span, a);
  }
  SlotArray* fresh = NewOrFreeArray(cls);
  if (fresh == nullptr) return nullptr;
  fresh->key.store(key, std::memory_order_relaxed);
  fresh->stamp.store(g_next_stamp.fetch_add(1, std::memory_order_relaxed) + 1,
                     std::memory_order_relaxed);
  for (;;) {
    if (e->compare_exchange_strong(cur, fresh, std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
      if (cur != nullptr) {                              // retire the previous span's array
        cur->stamp.store(0, std::memory_order_release);  // invalidates cached pointers to it
        const uint32_t old_cls = static_cast<uint32_t>(cur->key.load() & 0xff);
        const uint32_t n = g_state.sizemap.ObjectsPerSpan(old_cls);
        for (uint32_t i = 0; i < n; ++i) {
          const uint64_t v = cur->slots[i].load(std::memory_order_relaxed);
          if (v != 0) {
            if (stale != nullptr) stale(context, v);
            cur->slots[i].store(0, std::memory_order_relaxed);
          }
        }
        PushFreeArray(old_cls, cur);
      }
      CacheArray(span, fresh);
      return SlotIn(fresh, span, a);
    }
    // Another thread installed an array meanwhile: use it if it is for this span.
    if (cur != nullptr && cur->key.load(std::memory_order_relaxed) == key) {
      fresh->stamp.store(0, std::memory_order_relaxed);
      fresh->key.store(0, std::memory_order_relaxed);
      PushFreeArray(cls, fresh);
      CacheArray(span, cur);
      return SlotIn(cur, span, a);
    }
  }
}

// The span's cached array missed: the array of (start page, class) from the radix map, cached
// in the span for next time, or a new one.
std::atomic<uint64_t>* SlotAfterCacheMiss(const Span* span, uintptr_t a, StaleSlotVisitor stale,
                                          void* context) {
  if (SlotArray* array = ArrayOf(span); array != nullptr) {
    CacheArray(span, array);
    return SlotIn(array, span, a);
  }
  return InstallSlotArray(span, a, stale, context);
}
}  // namespace

std::atomic<uint64_t>* SlotOfNewObject(const Span* span, const void* object) {
  if (span->sizeclass_ == 0) return nullptr;
  const uintptr_t a = reinterpret_cast<uintptr_t>(object);
  SlotArray* array = OwnedArray(span);
  if (HEAPKIT_LIKELY(array != nullptr)) return SlotIn(array, span, a);
  return SlotAfterCacheMiss(span, a, nullptr, nullptr);
}

std::atomic<uint64_t>* ObjectSlotForAlloc(const void* object, StaleSlotVisitor stale,
                                          void* context) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(object);
  const Span* span = SmallSpan(a);
  if (span == nullptr) return nullptr;
  SlotArray* array = CachedArray(span);
  if (HEAPKIT_LIKELY(array != nullptr)) return SlotIn(array, span, a);
  return SlotAfterCacheMiss(span, a, stale, context);
}

std::atomic<uint64_t>* FindObjectSlot(const void* object) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(object);
  const Span* span = SmallSpan(a);
  if (span == nullptr) return nullptr;
  SlotArray* array = CachedArray(span);
  if (HEAPKIT_LIKELY(array != nullptr)) return SlotIn(array, span, a);
  array = ArrayOf(span);
  return array != nullptr ? SlotIn(array, span, a) : nullptr;
}

constinit std::atomic<SlotFreeHook> g_slot_free_hook{nullptr};

uint64_t TakeObjectSlot(const Span* span, const void* object, uint64_t index,
                        const uintptr_t* frame) {
  const uint32_t cls = span->sizeclass_;
  if (cls == 0) return 0;
  SlotArray* array = OwnedArray(span);
  if (HEAPKIT_UNLIKELY(array == nullptr)) {
    array = ArrayOf(span);
    if (array == nullptr) return 0;
  }
  std::atomic<uint64_t>* slot = SlotAt(array, cls, index);
  return slot != nullptr ? TakeSlot(slot, object, array, frame) : 0;
}

void SetSlotFreeHook(SlotFreeHook hook) { g_slot_free_hook.store(hook, std::memory_order_release); }

namespace {

// Visits every non-zero slot of the installed arrays as (object start, slot value, birth word:
// 0 if the array has none). An array that is not installed (stamp 0: on a free list, or
// retired) has only empty slots.
template <class Visit>
void ForEachSlotOfMadeArrays(const Visit& visit) {
  for (SlotArray* array = g_made_arrays.load(std::memory_order_acquire); array != nullptr;
       array = array->next_made) {
    if (array->stamp.load(std::memory_order_acquire) == 0) continue;
    const uint64_t key = array->key.load(std::memory_order_relaxed);
    const uint32_t cls = static_cast<uint32_t>(key & 0xff);
    if (cls == 0) continue;
    const uintptr_t start = static_cast<uintptr_t>(key >> 8) << kPageShift;
    const size_t size = g_state.sizemap.ClassSize(cls);
    const uint32_t n = g_state.sizemap.ObjectsPerSpan(cls);
    for (uint32_t k = 0; k < n; ++k) {
      const uint64_t v = array->slots[k].load(std::memory_order_relaxed);
      if (v == 0) continue;
      const uint64_t birth =
          array->births != 0 ? array->slots[array->births + k].load(std::memory_order_relaxed) : 0;
      visit(reinterpret_cast<const void*>(start + k * size), v, birth);
    }
  }
}

}  // namespace

void ForEachObjectSlot(SlotVisitor visitor, void* context) {
  ForEachSlotOfMadeArrays(
      [&](const void* object, uint64_t value, uint64_t) { visitor(context, object, value); });
}

void ForEachObjectSlotWithBirth(SlotBirthVisitor visitor, void* context) {
  ForEachSlotOfMadeArrays([&](const void* object, uint64_t value, uint64_t birth) {
    visitor(context, object, value, birth);
  });
}

void SetSlotBirths(bool on) { g_slot_births.store(on, std::memory_order_relaxed); }

std::atomic<uint64_t>* OwnedObjectBirth(const void* object) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(object);
  const Span* span = g_state.pagemap.SpanOfOwnedPage(a >> kPageShift);
  const uint32_t cls = span->sizeclass_;
  if (cls == 0) return nullptr;
  SlotArray* array = OwnedArray(span);
  if (HEAPKIT_UNLIKELY(array == nullptr)) {
    array = ArrayOf(span);
    if (array == nullptr) return nullptr;
  }
  if (array->births == 0) return nullptr;
  const uint64_t index = g_state.sizemap.ObjectIndexOf(cls, a - span->StartAddress());
  if (index >= array->births) return nullptr;  // span tail
  return &array->slots[array->births + index];
}

const std::atomic<uint64_t>* InstalledSlotsOf(const Span* span) {
  SlotLeaf* e = SlotEntry(span->start_, false);
  SlotArray* a = e != nullptr ? e->load(std::memory_order_acquire) : nullptr;
  if (a == nullptr ||
      a->key.load(std::memory_order_relaxed) != SlotKey(span->start_, span->sizeclass_))
    return nullptr;
  return a->slots;
}

}  // namespace heapkit::alloc
