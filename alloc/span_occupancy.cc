#include "alloc/span_occupancy.h"

#include "alloc/allocator.h"
#include "alloc/span.h"

namespace heapkit::alloc {

size_t GetClassOccupancy(ClassOccupancy* out, size_t max_classes) {
  EnsureInit();
  const SizeMap& sizes = g_state.sizemap;
  const size_t classes = static_cast<size_t>(sizes.num_classes());
  const size_t n = classes < max_classes ? classes : max_classes;
  for (size_t c = 0; c < n; ++c) out[c] = ClassOccupancy{};
  g_state.pageheap.ForEachSpan([&](const Span& span) {
    if (span.location_ != Span::kInUse || span.sizeclass_ == 0 || span.sizeclass_ >= n) return;
    ClassOccupancy& o = out[span.sizeclass_];
    const size_t objects = sizes.ObjectsPerSpan(span.sizeclass_);
    const size_t allocated = __atomic_load_n(&span.allocated_, __ATOMIC_RELAXED);
    ++o.spans;
    o.objects_out += allocated;
    o.free_objects += allocated < objects ? objects - allocated : 0;
    if (allocated * 8 <= objects) ++o.mostly_empty_spans;
  });
  for (size_t c = 1; c < n; ++c) {
    const auto cls = static_cast<uint32_t>(c);
    out[c].object_size = sizes.ClassSize(cls);
    out[c].objects_per_span = sizes.ObjectsPerSpan(cls);
    if (out[c].spans != 0) out[c].transfer_objects = g_state.central[c].TransferObjects();
  }
  return n;
}

bool SpanOfObject(const void* object, ObjectSpan* out) {
  if (!g_initialized.load(std::memory_order_acquire)) return false;
  const Span* span = g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(object) >> kPageShift);
  if (span == nullptr) return false;
  const uint32_t cls = __atomic_load_n(&span->sizeclass_, __ATOMIC_RELAXED);
  if (cls == 0 || cls >= static_cast<uint32_t>(g_state.sizemap.num_classes())) return false;
  out->object_size = g_state.sizemap.ClassSize(cls);
  out->objects_per_span = g_state.sizemap.ObjectsPerSpan(cls);
  out->objects_out = __atomic_load_n(&span->allocated_, __ATOMIC_RELAXED);
  return true;
}

}  // namespace heapkit::alloc
