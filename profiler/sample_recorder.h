// Recording of sampled allocations into the stack table: the allocator's sampling observer
// (alloc/observer_hooks.h) and exact recorder, and the frees they are told about.
//
// Invariants:
//  * The callbacks run on the allocating/freeing thread, outside allocator locks, with nested
//    allocations not sampled. They touch only the stack table (its own striped locks) and a
//    few atomics; while HEAPPROFILE is on they add to the estimated totals and check the dump
//    triggers (dump_triggers.h).
//  * Recording, once enabled (EnableSampleRecording, sampled_objects.h), stays on for the life
//    of the process: the table also serves GetHeapSample and heapcheck.
//  * tls_recording_disabled (initial-exec TLS: reading it never allocates) drops this thread's
//    sampled allocations; frees of recorded objects are still accounted.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapkit::prof {

extern __thread bool tls_recording_disabled __attribute__((tls_model("initial-exec")));

// True once EnableSampleRecording has registered the observer.
bool SampleRecordingOn();

// The slot-free hook set while profiling: exact-mode slot records are freed by the allocator
// itself (alloc::TakeObjectSlot); this counts their bytes for the deallocation and in-use
// triggers.
void OnSlotFree(const void* object, uint64_t value);

}  // namespace heapkit::prof
