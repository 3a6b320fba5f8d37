// Where a sampled allocation entered the allocator: the register state of the frame that
// called FinishSample (allocator.cc; its NotifySample is reached by a tail call, so it sees
// the same caller), as it is right after that call returns. Set by NotifySample on its thread
// for the duration of the observer's on_sampled_alloc call; pc and rbp are 0 otherwise (the
// leak checker scans thread-local storage: a heap pointer left here would keep its object
// reachable).
//
// Exact mode's recorder (sampling_hook.h, ExactRecorder) gets the same three values as
// arguments instead: no thread-local stores at all on that path.
//
// Why: the observer (profiler/heap_profiler.cc) captures the allocation's stack. Starting the
// walk here instead of at its own frame skips the allocator's own frames (FinishSample, the
// observer, the capture: a third of the words the unwinder's memo check compares), which the
// profiler would strip anyway (allocator_frames.h). Taking it costs two loads and three
// thread-local stores (and two to clear them): with frame pointers (the runtime is built with
// -fno-omit-frame-pointer, and __builtin_frame_address forces one), the frame holds the
// caller's rbp at [fp] and the return address at [fp + 8], and the caller's stack pointer after
// the return is fp + 16. The caller is whatever called FinishSample (MallocRefill, MallocSlow,
// or, through MallocSampled's tail call, the allocation's own caller; exact mode's RecordExact
// is reached from MallocSampled and FinishSample by tail calls too): every frame from there
// on is one a full walk would give too.
#pragma once

#include <cstdint>

namespace heapkit::alloc {

struct SampleOrigin {
  uintptr_t pc;   // return address (0: no sampled allocation in progress on this thread)
  uintptr_t sp;   // stack pointer once that return has happened
  uintptr_t rbp;  // rbp then
};

extern __thread SampleOrigin tls_sample_origin __attribute__((tls_model("initial-exec")));

}  // namespace heapkit::alloc
