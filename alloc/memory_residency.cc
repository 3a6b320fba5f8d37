#include "alloc/memory_residency.h"

#include <cstdint>

#include "alloc/allocator.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/page_residency.h"
#include "alloc/span.h"
#include "alloc/stats.h"

namespace heapkit::alloc {
namespace {

// Adjacent heap ranges of one type are read as one run (one pagemap read per 2 MiB).
struct RunMeasurer {
  internal::ResidencyReader* reader;
  MemoryResidency* out;
  uintptr_t start = 0;
  size_t length = 0;
  HeapRange::Type type = HeapRange::kInUse;

  Residency* Bucket(HeapRange::Type t) const {
    switch (t) {
      case HeapRange::kInUse: return &out->heap_in_use;
      case HeapRange::kFree: return &out->heap_free;
      case HeapRange::kUnmapped: break;
    }
    return &out->heap_returned;
  }
  void Flush() {
    if (length == 0) return;
    Residency* r = Bucket(type);
    internal::PageResidency pages;
    reader->Add(start, length, &pages);
    r->mapped += length;
    r->resident += pages.resident;
    r->swapped += pages.swapped;
    length = 0;
  }
  void Take(const HeapRange& range) {
    if (length != 0 && (range.type != type || range.address != start + length)) Flush();
    if (length == 0) {
      start = range.address;
      type = range.type;
    }
    length += range.length;
  }
};

void AddMapping(internal::ResidencyReader* reader, Residency* r, uintptr_t start, size_t bytes) {
  internal::PageResidency pages;
  reader->Add(start, bytes, &pages);
  r->mapped += bytes;
  r->resident += pages.resident;
  r->swapped += pages.swapped;
}

struct ArenaContext {
  internal::ResidencyReader* reader;
  Residency* metadata;
};

}  // namespace

void MeasureMemoryResidency(MemoryResidency* out) {
  *out = MemoryResidency{};
  internal::ResidencyReader reader;
  out->knows_swap = reader.knows_swap();
  if (!g_initialized.load(std::memory_order_acquire)) return;
  RunMeasurer runs{&reader, out};
  ForEachHeapRange(
      [](void* ctx, const HeapRange& range) { static_cast<RunMeasurer*>(ctx)->Take(range); },
      &runs);
  runs.Flush();
  g_state.pagemap.ForEachLeafMapping([&](uintptr_t leaf, size_t bytes) {
    AddMapping(&reader, &out->page_map, leaf, bytes);
  });
  ArenaContext arena{&reader, &out->arena};
  internal::ForEachArenaMapping(
      [](void* ctx, uintptr_t start, size_t bytes) {
        auto* a = static_cast<ArenaContext*>(ctx);
        AddMapping(a->reader, a->metadata, start, bytes);
      },
      &arena);
  // carved_ changes under the class's central lock; a racy read is one object off at most.
  const SizeMap& sizes = g_state.sizemap;
  g_state.pageheap.ForEachSpan([&](const Span& span) {
    if (span.location_ != Span::kInUse || span.sizeclass_ == 0) return;
    const uint32_t carved = __atomic_load_n(&span.carved_, __ATOMIC_RELAXED);
    const uint32_t objects = sizes.ObjectsPerSpan(span.sizeclass_);
    if (carved < objects) out->uncarved_bytes += (objects - carved) * sizes.ClassSize(span.sizeclass_);
  });
}

}  // namespace heapkit::alloc
