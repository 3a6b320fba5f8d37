#include "profiler/growth_stacks.h"

#include <cstdint>
#include <cstring>

#include "alloc/common.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "profiler/allocator_frame_filter.h"
#include "profiler/cfi_unwinder.h"
#include "profiler/legacy_writer.h"
#include "profiler/stack_capture.h"

namespace heapkit::prof {
namespace {

struct GrowthRecord {
  GrowthRecord* next;
  int64_t count;
  int64_t bytes;
  int depth;
  void* pcs[kMaxCaptureDepth];
};

HEAPKIT_ALWAYS_WRITTEN_DATA constinit internal::SpinLock g_lock;
HEAPKIT_ALWAYS_WRITTEN_DATA GrowthRecord* g_records = nullptr;  // newest first; guarded by g_lock

bool SameStack(const GrowthRecord& r, void* const* pcs, int depth) {
  return r.depth == depth && std::memcmp(r.pcs, pcs, sizeof(void*) * depth) == 0;
}

void GrowthSource(void*, RecordVisitor visit, void* visit_ctx) {
  internal::SpinLockHolder h(&g_lock);
  for (const GrowthRecord* r = g_records; r != nullptr; r = r->next) {
    RecordCounts c{r->count, r->bytes, r->count, r->bytes};
    visit(visit_ctx, c, r->pcs, r->depth);
  }
}

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE void OnHeapGrowth(size_t bytes) {
  // Both idempotent and malloc-free; growth may come before any sampling has started.
  InitStackCapture();
  InitAllocatorFrames();
  void* pcs[kMaxCaptureDepth];
  int depth;
  {
    // Rare captures: rules computed, not cached (the cache's pages stay untouched).
    CfiNoCacheFillScope no_fill;
    depth = CaptureStack(pcs, kMaxCaptureDepth, 0);
  }
  const int skip = CountAllocatorFrames(pcs, depth);
  void* const* user = pcs + skip;
  const int keep = depth - skip < kMaxStackDepth ? depth - skip : kMaxStackDepth;
  internal::SpinLockHolder h(&g_lock);
  for (GrowthRecord* r = g_records; r != nullptr; r = r->next) {
    if (SameStack(*r, user, keep)) {
      ++r->count;
      r->bytes += static_cast<int64_t>(bytes);
      return;
    }
  }
  // The arena takes its own lock only (never the allocator's), so allocating here is safe.
  auto* r = static_cast<GrowthRecord*>(internal::ArenaAlloc(sizeof(GrowthRecord)));
  if (r == nullptr) return;  // metadata memory exhausted: this growth goes unrecorded
  r->count = 1;
  r->bytes = static_cast<int64_t>(bytes);
  r->depth = keep;
  std::memcpy(r->pcs, user, sizeof(void*) * keep);
  r->next = g_records;
  g_records = r;
}

bool WriteGrowthStacks(OutputSink* sink) {
  LegacyProfile p;
  p.kind = ProfileKind::kGrowth;
  p.source = &GrowthSource;
  return WriteLegacyProfile(sink, p);
}

}  // namespace heapkit::prof
