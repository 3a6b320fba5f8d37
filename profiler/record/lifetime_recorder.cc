// Lifetimes of freed sampled objects (lifetime_recorder.h).
#include "profiler/record/lifetime_recorder.h"

#include "profiler/capture/allocator_frame_filter.h"
#include "profiler/time/lifetime_table.h"
#include "profiler/base/profiler_basics.h"
#include "profiler/profiler_state.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"

namespace heapkit::prof {

__thread LastFreeStack tls_last_free_stack __attribute__((tls_model("initial-exec")));

namespace {

// The free's stack as a trace-tree node (kNoFreeStack if it cannot be had). Inline into its
// two callers: a frame less for the walk memo to check at every free.
// frame: where to start the walk (alloc/observer_hooks.h SlotFreeHook), or nullptr: here.
inline __attribute__((always_inline)) uint32_t FreeStackNode(const uintptr_t* frame = nullptr) {
  LastFreeStack& last = tls_last_free_stack;
  void* pcs[kMaxCaptureDepth];
  uint64_t walk = last.walk_id;
  int depth = -1;
  if (frame != nullptr)
    depth = CaptureStackFrom(frame[1], reinterpret_cast<uintptr_t>(frame + 2), frame[0], pcs,
                             kMaxCaptureDepth, &walk, /*free_memo=*/true);
  if (depth < 0) {
    walk = last.walk_id;
    depth = CaptureFreeStack(pcs, kMaxCaptureDepth, 0, &walk);
  }
  if (walk != 0 && walk == last.walk_id) return last.node;  // pcs was not written
  if (depth <= 0) return kNoFreeStack;
  const int skip = CountAllocatorFrames(pcs, depth);
  int keep = depth - skip;
  if (keep > g_profiler.config.stack_depth) keep = g_profiler.config.stack_depth;
  const uint32_t node = GlobalStackTable().InsertStack(pcs + skip, keep);
  last = {walk, node == StackTable::kNoStack ? kNoFreeStack : node};
  return last.node;
}

}  // namespace

uint32_t CaptureFreeStackNode(const uintptr_t* frame) { return FreeStackNode(frame); }

void CountFreedObject(const Bucket* bucket, size_t size, const ObjectBirth& birth,
                      int64_t estimated_bytes) {
  if (bucket == nullptr || birth.time_ns == 0 ||
      !g_object_times.lifetimes.load(std::memory_order_relaxed))
    return;
  const int64_t now = NowNs();
  const LifetimeEnd end =
      birth.thread == ThisThreadNumber() ? LifetimeEnd::kSameThread : LifetimeEnd::kOtherThread;
  const uint32_t free_node =
      g_object_times.free_stacks.load(std::memory_order_relaxed) ? FreeStackNode() : kNoFreeStack;
  CountLifetime(bucket->stack, free_node, LifetimeBin(now - birth.time_ns), end, size,
                estimated_bytes);
}

}  // namespace heapkit::prof
