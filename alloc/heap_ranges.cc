#include "alloc/heap_ranges.h"

#include "alloc/global_state.h"
#include "alloc/internal/system_memory.h"
#include "alloc/span.h"

namespace heapkit::alloc {

void ForEachHeapRange(void (*fn)(void* ctx, const HeapRange& range), void* ctx) {
  if (!g_initialized.load(std::memory_order_acquire)) return;
  // Snapshot first (bounded by the spans counted, plus room for spans created meanwhile).
  size_t count = 0;
  g_state.pageheap.ForEachSpan([&](const Span&) { ++count; });
  const size_t capacity = count + 64;
  const size_t bytes = (capacity * sizeof(HeapRange) + 4095) & ~size_t{4095};
  auto* ranges = static_cast<HeapRange*>(internal::SystemAlloc(bytes, 4096));
  if (ranges == nullptr) return;
  size_t n = 0;
  const SizeMap& sizes = g_state.sizemap;
  g_state.pageheap.ForEachSpan([&](const Span& span) {
    if (n == capacity) return;
    HeapRange& r = ranges[n++];
    r.address = span.StartAddress();
    r.length = span.Bytes();
    if (span.location_ == Span::kInUse) {
      r.type = HeapRange::kInUse;
      const uint32_t objects = span.sizeclass_ != 0 ? sizes.ObjectsPerSpan(span.sizeclass_) : 1;
      const uint32_t allocated =
          span.sizeclass_ != 0 ? __atomic_load_n(&span.allocated_, __ATOMIC_RELAXED) : 1;
      r.fraction = objects != 0 ? static_cast<double>(allocated) / objects : 0;
    } else {
      r.type =
          span.location_ == Span::kOnReturnedFreelist ? HeapRange::kUnmapped : HeapRange::kFree;
      r.fraction = 0;
    }
  });
  for (size_t i = 0; i < n; ++i) fn(ctx, ranges[i]);
  internal::SystemFree(ranges, bytes);
}

}  // namespace heapkit::alloc
