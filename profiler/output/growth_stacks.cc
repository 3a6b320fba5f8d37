#include "profiler/output/growth_stacks.h"

#include <cstdint>
#include <cstring>

#include "alloc/common.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/fork_handlers.h"
#include "alloc/internal/spin_lock.h"
#include "profiler/capture/allocator_frame_filter.h"
#include "profiler/capture/cfi_unwinder.h"
#include "profiler/format/legacy_writer.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/base/thread_recording.h"

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
// Newest first.
HEAPKIT_ALWAYS_WRITTEN_DATA GrowthRecord* g_records HEAPKIT_GUARDED_BY(g_lock) = nullptr;

bool SameStack(const GrowthRecord& r, void* const* pcs, int depth) {
  return r.depth == depth && std::memcmp(r.pcs, pcs, sizeof(void*) * depth) == 0;
}

// Counts a growth in the record of this stack, if there is one.
bool AddToRecord(void* const* pcs, int depth, size_t bytes) HEAPKIT_REQUIRES(g_lock) {
  for (GrowthRecord* r = g_records; r != nullptr; r = r->next) {
    if (SameStack(*r, pcs, depth)) {
      ++r->count;
      r->bytes += static_cast<int64_t>(bytes);
      return true;
    }
  }
  return false;
}

void GrowthSource(void*, RecordVisitor visit, void* visit_ctx) {
  internal::SpinLockHolder h(&g_lock);
  for (const GrowthRecord* r = g_records; r != nullptr; r = r->next) {
    RecordCounts c{r->count, r->bytes, r->count, r->bytes};
    visit(visit_ctx, c, r->pcs, r->depth);
  }
}

}  // namespace

// The records' lock across fork, so that a child whose allocations grow the heap never waits on
// a lock that another thread of the parent held at the fork (a leaf: nothing is taken while it
// is held).
HEAPKIT_ALWAYS_RUN_CODE void RegisterGrowthForkHandlers() {
  HEAPKIT_ALWAYS_WRITTEN_DATA static bool registered = false;
  if (registered) return;
  registered = true;
  internal::HoldAcrossFork<g_lock>();
}

HEAPKIT_ALWAYS_RUN_CODE void OnHeapGrowth(size_t bytes) {
  // A thread that keeps its allocations out of the profiles (thread_recording.h) keeps its
  // growths out too: the HTTP endpoint's server thread, whose symbolizer grows the heap.
  if (tls_recording_disabled) return;
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
  {
    internal::SpinLockHolder h(&g_lock);
    if (AddToRecord(user, keep, bytes)) return;
  }
  // A new stack: its record is made with the lock released, so that the lock stays a leaf (the
  // fork handlers hold it across fork, in any order with the allocator's locks).
  auto* r = static_cast<GrowthRecord*>(internal::ArenaAlloc(sizeof(GrowthRecord)));
  if (r == nullptr) return;  // metadata memory exhausted: this growth goes unrecorded
  r->count = 1;
  r->bytes = static_cast<int64_t>(bytes);
  r->depth = keep;
  std::memcpy(r->pcs, user, sizeof(void*) * keep);
  internal::SpinLockHolder h(&g_lock);
  // Another thread's growth from the same new stack got in first: the record made here stays
  // unused (arena memory is never freed; the race costs one record).
  if (AddToRecord(user, keep, bytes)) return;
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
