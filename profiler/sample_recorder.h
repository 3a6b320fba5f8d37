// Recording of sampled allocations into the stack table: the allocator's sampling observer
// (alloc/observer_hooks.h) and exact recorder, and the frees they are told about.
//
// Invariants:
//  * The callbacks run on the allocating/freeing thread, outside allocator locks, with nested
//    allocations not sampled. They touch only the stack table (its own striped locks) and a
//    few atomics; while HEAPPROFILE is on they add to the estimated totals of the profiler
//    state (profiler_state.h) and check the dump triggers (dump_triggers.h).
//  * Recording, once enabled (EnableSampleRecording), stays on for the life of the process:
//    the table also serves GetHeapSample and heapcheck.
//  * A thread whose recording switch is off (thread_recording.h) has its sampled allocations
//    dropped; frees of recorded objects are still accounted.
#pragma once

#include <atomic>
#include <cstdint>

// Part of recording's API (heapcheck/ turns a thread's recording off through it).
#include "profiler/base/thread_recording.h"

namespace heapkit::prof {

// Makes sure sampled allocations are recorded in the table: registers the profiler's sampling
// observer if HEAPPROFILE / TCMALLOC_SAMPLE_PARAMETER did not already. Idempotent and
// thread-safe; does not change the sample parameter (heapcheck sets it to 1 itself).
// Call it before the allocations you want stacks for (e.g. from the checker's start-up).
void EnableSampleRecording();

// True once EnableSampleRecording has registered the observer.
bool SampleRecordingOn();

// The slot-free hook set while profiling: exact-mode slot records are freed by the allocator
// itself (alloc::TakeObjectSlot); this counts their bytes for the deallocation and in-use
// triggers, and the lifetimes of records with a birth word (slot_births.h).
void OnSlotFree(const void* object, uint64_t value, std::atomic<uint64_t>* birth,
                const uintptr_t* frame);

}  // namespace heapkit::prof
