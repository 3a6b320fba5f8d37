// Where a sampled allocation entered the allocator: the register state of the frame that
// called FinishSample (allocator.cc), as it is right after that call returns. Set by
// FinishSample on its thread for the duration of the observer's on_sampled_alloc call; pc,
// rbp and object are 0 otherwise (the leak checker scans thread-local storage: a heap pointer
// left here would keep its object reachable).
//
// The same period it also names the object and its span (ObjectSlotForAlloc's shortcut).
//
// Why: the observer (profiler/heap_profiler.cc) captures the allocation's stack. Starting the
// walk here instead of at its own frame skips the allocator's own frames (FinishSample, the
// observer, the capture: a third of the words the unwinder's memo check compares), which the
// profiler would strip anyway (allocator_frames.h). Taking it costs FinishSample two loads and
// five thread-local stores (and three to clear them): with frame pointers (the runtime is built with
// -fno-omit-frame-pointer, and __builtin_frame_address forces one), the frame holds the
// caller's rbp at [fp] and the return address at [fp + 8], and the caller's stack pointer after
// the return is fp + 16. The caller is whatever called FinishSample (MallocRefill, MallocSlow,
// or, through MallocSampled's tail call, the allocation's own caller): every frame from there
// on is one a full walk would give too.
#pragma once

#include <cstdint>

namespace heapkit::alloc {

struct Span;

struct SampleOrigin {
  uintptr_t pc;   // return address (0: no sampled allocation in progress on this thread)
  uintptr_t sp;   // stack pointer once that return has happened
  uintptr_t rbp;  // rbp then
  // The sampled object and its span (in use), so that ObjectSlotForAlloc (live_objects.h) need
  // not look the span up in the page map again. Valid only while pc != 0.
  const void* object;
  const Span* span;
};

extern __thread SampleOrigin tls_sample_origin __attribute__((tls_model("initial-exec")));

}  // namespace heapkit::alloc
