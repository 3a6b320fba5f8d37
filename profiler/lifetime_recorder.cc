// Lifetimes of freed sampled objects (lifetime_recorder.h).
#include "profiler/lifetime_recorder.h"

#include "profiler/allocator_frame_filter.h"
#include "profiler/lifetime_table.h"
#include "profiler/profiler_config.h"
#include "profiler/profiler_state.h"
#include "profiler/stack_capture.h"
#include "profiler/stack_table.h"

namespace heapkit::prof {
namespace {

// The free's stack as a trace-tree node (kNoFreeStack if it cannot be had).
uint32_t FreeStackNode() {
  void* pcs[kMaxCaptureDepth];
  const int depth = CaptureStack(pcs, kMaxCaptureDepth, 0);
  if (depth <= 0) return kNoFreeStack;
  const int skip = CountAllocatorFrames(pcs, depth);
  int keep = depth - skip;
  if (keep > g_profiler.config.stack_depth) keep = g_profiler.config.stack_depth;
  const uint32_t node = GlobalStackTable().InsertStack(pcs + skip, keep);
  return node == StackTable::kNoStack ? kNoFreeStack : node;
}

}  // namespace

void CountFreedObject(const Bucket* bucket, size_t size, const ObjectBirth& birth,
                      int64_t estimated_bytes) {
  if (bucket == nullptr || birth.time_ns == 0 ||
      !g_object_times.lifetimes.load(std::memory_order_relaxed))
    return;
  const int64_t now = NowNs();
  const LifetimeEnd end =
      birth.thread == ThisThreadNumber() ? LifetimeEnd::kSameThread : LifetimeEnd::kOtherThread;
  const uint32_t free_node = g_object_times.free_stacks.load(std::memory_order_relaxed)
                                 ? FreeStackNode()
                                 : kNoFreeStack;
  CountLifetime(bucket->stack, free_node, LifetimeBin(now - birth.time_ns), end, size,
                estimated_bytes);
}

}  // namespace heapkit::prof
