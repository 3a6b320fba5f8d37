// Lifetimes of freed sampled objects (lifetime_recorder.h).
#include "profiler/lifetime_recorder.h"

#include "profiler/allocator_frame_filter.h"
#include "profiler/lifetime_table.h"
#include "profiler/profiler_basics.h"
#include "profiler/profiler_state.h"
#include "profiler/stack_capture.h"
#include "profiler/stack_table.h"

namespace heapkit::prof {
namespace {

// This thread's last free stack: a capture whose walk id (stack_capture.h; the free memo's,
// CaptureFreeStack) is still this one gave the same frames, so the common repeat free from one call
// site costs the walk memo's check and no allocator-frame scan or trace-tree lookup.
struct LastFreeStack {
  uint64_t walk_id = 0;
  uint32_t node = kNoFreeStack;
};
__thread LastFreeStack tls_last_free_stack __attribute__((tls_model("initial-exec")));

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

void CountLifetimeWithFreeStack(uint32_t bucket_id, uint32_t (*node_of)(uint32_t), int bin,
                                LifetimeEnd end, size_t size, int64_t estimated_bytes,
                                const uintptr_t* frame) {
  CountLifetimeOfBucket(bucket_id, node_of, FreeStackNode(frame), bin, end, size, estimated_bytes);
}

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
