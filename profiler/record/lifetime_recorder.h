// The free side of HEAP_PROFILE_LIFETIMES: a recorded object's free, with its birth
// (object_birth.h), becomes one count in the lifetime table (lifetime_table.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/time/lifetime_table.h"
#include "profiler/table/object_birth.h"
#include "profiler/capture/stack_capture.h"

namespace heapkit::prof {

struct Bucket;

// Called by the sampling observer after a recorded object's free, while profiling, on the
// freeing thread with no profiler lock held. `birth` zero (a slot record): nothing counted.
// With HEAP_PROFILE_FREE_STACKS the free's stack is captured here (allocator frames dropped).
void CountFreedObject(const Bucket* bucket, size_t size, const ObjectBirth& birth,
                      int64_t estimated_bytes);
// This thread's last free stack: a capture (the frees' memo, stack_capture.h) whose walk id is
// still this one gave the same frames, so the common repeat free from one call site costs the
// walk memo's check and no allocator-frame scan or trace-tree lookup.
struct LastFreeStack {
  uint64_t walk_id = 0;
  uint32_t node = kNoFreeStack;
};
extern __thread LastFreeStack tls_last_free_stack __attribute__((tls_model("initial-exec")));

// For HEAP_PROFILE_FREE_STACKS in exact mode's slot frees (slot_births.h), whose walk starts
// where the free entered the allocator: `frame` (alloc/observer_hooks.h SlotFreeHook) holds the
// caller's rbp in frame[0] and the return address in frame[1]; frame + 2 is the caller's sp.
//
// True if this free's stack is the thread's last free stack (tls_last_free_stack.node): the
// walk memo's check over the frames above the allocator's and a compare, inline, no call.
inline __attribute__((always_inline)) bool FreeHasLastStack(const uintptr_t* frame) {
  return __builtin_expect(frame != nullptr, 1) &&
         CaptureWouldRepeat(frame[1], reinterpret_cast<uintptr_t>(frame + 2), frame[0],
                            kMaxCaptureDepth, tls_last_free_stack.walk_id, /*free_memo=*/true);
}
// The free's stack as a trace-tree node (allocator frames dropped; kNoFreeStack if it cannot be
// had), kept as the thread's last: walked from `frame` when the cached CFI unwinder can, else
// from here (nullptr: from here).
uint32_t CaptureFreeStackNode(const uintptr_t* frame);

}  // namespace heapkit::prof
