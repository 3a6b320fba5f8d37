#include "alloc/memory_residency.h"

#include <cstdint>

#include "alloc/global_state.h"
#include "alloc/heap_ranges.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/page_residency.h"
#include "alloc/internal/system_memory.h"
#include "alloc/span.h"

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

// The never-carved objects and the tail of a small-object span: [uncarved, tail) and
// [tail, end).
struct SmallSpanParts {
  uintptr_t uncarved;
  uintptr_t tail;
  uintptr_t end;
};

// Snapshots the parts under the page-heap lock (carved_ changes under the class's central lock;
// a racy read is one object off at most), then reads their pages with no lock held. Uncarved
// objects are not always untouched: a prefaulted span, or pages a span had before (the page
// heap reuses backed pages), hold memory there.
void MeasureSmallSpanParts(internal::ResidencyReader* reader, MemoryResidency* out) {
  size_t count = 0;
  g_state.pageheap.ForEachSpan([&](const Span&) { ++count; });
  const size_t capacity = count + 64;
  const size_t bytes = (capacity * sizeof(SmallSpanParts) + 4095) & ~size_t{4095};
  auto* parts = static_cast<SmallSpanParts*>(internal::SystemAlloc(bytes, 4096));
  if (parts == nullptr) return;
  size_t n = 0;
  const SizeMap& sizes = g_state.sizemap;
  g_state.pageheap.ForEachSpan([&](const Span& span) {
    if (n == capacity || span.location_ != Span::kInUse || span.sizeclass_ == 0) return;
    const uint32_t carved = __atomic_load_n(&span.carved_, __ATOMIC_RELAXED);
    const uint32_t objects = sizes.ObjectsPerSpan(span.sizeclass_);
    const size_t size = sizes.ClassSize(span.sizeclass_);
    const uintptr_t start = span.StartAddress();
    parts[n++] = {start + (carved < objects ? carved : objects) * size, start + objects * size,
                  start + span.Bytes()};
  });
  for (size_t i = 0; i < n; ++i) {
    AddMapping(reader, &out->uncarved, parts[i].uncarved, parts[i].tail - parts[i].uncarved);
    AddMapping(reader, &out->span_tails, parts[i].tail, parts[i].end - parts[i].tail);
  }
  internal::SystemFree(parts, bytes);
}

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
  g_state.pagemap.ForEachLeafMapping(
      [&](uintptr_t leaf, size_t bytes) { AddMapping(&reader, &out->page_map, leaf, bytes); });
  ArenaContext arena{&reader, &out->arena};
  internal::ForEachArenaMapping(
      [](void* ctx, uintptr_t start, size_t bytes) {
        auto* a = static_cast<ArenaContext*>(ctx);
        AddMapping(a->reader, a->metadata, start, bytes);
      },
      &arena);
  MeasureSmallSpanParts(&reader, out);
}

}  // namespace heapkit::alloc
