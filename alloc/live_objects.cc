// Live-object enumeration (live_objects.h). Runs with the world stopped and takes no locks.
//
// Method: one pass over the page map collects the in-use spans; each small span gets a range of
// bits in a scratch bitmap (mmapped, unmapped afterwards), one bit per object. Objects in span
// free lists, transfer caches and thread caches, and never-carved objects, are marked free;
// every carved object left unmarked is live. Large spans are one live object each.
#include "alloc/live_objects.h"

#include <cstddef>

#include "alloc/allocator.h"
#include "alloc/object_slots.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::alloc {
namespace {

struct Bitmap {
  uint64_t* words = nullptr;
  size_t bytes = 0;
  void Set(uint64_t bit) { words[bit >> 6] |= uint64_t{1} << (bit & 63); }
  bool Get(uint64_t bit) const { return (words[bit >> 6] >> (bit & 63)) & 1; }
};

// Calls visit(object, size, span, index) for each live object (index: the object's index in a
// small span; 0 for a large span).
template <class Visit>
void ForEachLive(Visit&& visit) {
  if (!g_initialized.load(std::memory_order_acquire)) return;
  PageMap& map = g_state.pagemap;
  const SizeMap& sizes = g_state.sizemap;
  // Pass 1: assign bitmap offsets to small spans (first page entries of in-use spans).
  uint64_t total_bits = 0;
  map.ForEachEntry([&](PageId page, Span* span) {
    if (span->start_ != page || span->location_ != Span::kInUse || span->sizeclass_ == 0) return;
    span->scratch_ = total_bits;
    total_bits += sizes.ObjectsPerSpan(span->sizeclass_);
  });
  Bitmap free_bits;
  free_bits.bytes = ((total_bits + 63) / 64) * 8;
  if (free_bits.bytes > 0) {
    free_bits.words = static_cast<uint64_t*>(internal::SystemAlloc(free_bits.bytes, 4096));
    if (free_bits.words == nullptr) return;
  }
  auto mark = [&](void* object) {
    uintptr_t a = reinterpret_cast<uintptr_t>(object);
    Span* span = map.GetSpan(a >> kPageShift);
    if (span == nullptr || span->location_ != Span::kInUse || span->sizeclass_ == 0) return;
    uint32_t index = sizes.ObjectIndex(span->sizeclass_, a - span->StartAddress());
    free_bits.Set(span->scratch_ + index);
  };
  // Pass 2: mark free objects.
  map.ForEachEntry([&](PageId page, Span* span) {
    if (span->start_ != page || span->location_ != Span::kInUse || span->sizeclass_ == 0) return;
    for (void* p = span->freelist_; p != nullptr; p = *static_cast<void**>(p)) mark(p);
  });
  for (int c = 1; c < sizes.num_classes(); ++c) {
    g_state.central[c].ForEachFreeObjectUnlocked(mark);
  }
  g_state.registry.ForEachUnlocked([&](ThreadCache* tc) {
    for (int c = 1; c < sizes.num_classes(); ++c) {
      const ThreadCache::FreeList& list = tc->list(static_cast<uint32_t>(c));
      void* p = list.head;
      for (uint32_t i = 0; i < list.length && p != nullptr; ++i) {
        void* next = *static_cast<void**>(p);
        mark(p);
        p = next;
      }
    }
  });
  // Pass 3: visit.
  map.ForEachEntry([&](PageId page, Span* span) {
    if (span->start_ != page || span->location_ != Span::kInUse) return;
    if (span->sizeclass_ == 0) {
      visit(reinterpret_cast<void*>(span->StartAddress()), span->Bytes(), span, 0u);
      return;
    }
    const size_t size = sizes.ClassSize(span->sizeclass_);
    for (uint32_t i = 0; i < span->carved_; ++i) {
      if (!free_bits.Get(span->scratch_ + i)) {
        visit(reinterpret_cast<void*>(span->StartAddress() + i * size), size, span, i);
      }
    }
  });
  if (free_bits.words != nullptr) internal::SystemFree(free_bits.words, free_bits.bytes);
}

}  // namespace

void ForEachLiveObject(LiveObjectVisitor visitor, void* context) {
  ForEachLive(
      [&](void* object, size_t size, const Span*, uint32_t) { visitor(context, object, size); });
}

void ForEachLiveObjectWithSlot(LiveObjectSlotVisitor visitor, void* context) {
  const Span* last_span = nullptr;
  const std::atomic<uint64_t>* slots = nullptr;
  ForEachLive([&](void* object, size_t size, const Span* span, uint32_t index) {
    if (span != last_span) {  // objects of a span come together
      last_span = span;
      slots = span->sizeclass_ != 0 ? InstalledSlotsOf(span) : nullptr;
    }
    const uint64_t slot = slots != nullptr ? slots[index].load(std::memory_order_relaxed) : 0;
    visitor(context, object, size, slot);
  });
}

bool FindHeapObject(uintptr_t address, uintptr_t* object_start, size_t* object_size) {
  if (!g_initialized.load(std::memory_order_acquire)) return false;
  Span* span = g_state.pageheap.InUseSpanContaining(address >> kPageShift);
  if (span == nullptr) return false;
  if (span->sizeclass_ == 0) {
    *object_start = span->StartAddress();
    *object_size = span->Bytes();
    return true;
  }
  const size_t size = g_state.sizemap.ClassSize(span->sizeclass_);
  const uint32_t index =
      g_state.sizemap.ObjectIndex(span->sizeclass_, address - span->StartAddress());
  if (index >= g_state.sizemap.ObjectsPerSpan(span->sizeclass_)) return false;  // span tail
  *object_start = span->StartAddress() + index * size;
  *object_size = size;
  return true;
}

}  // namespace heapkit::alloc
