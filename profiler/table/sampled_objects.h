// Query side of the profiler's table of live sampled objects, for heapcheck/.
//
// With HEAPCHECK on, the sample parameter is 1, so every live object allocated after start-up
// is in the table and has the stack it was allocated from.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

struct AllocationStack {
  // The stack in the table (frames: ReadAllocationStack): a trace-tree node, and the index of
  // a leaf frame kept apart from it (0: the node is the whole stack; see stack_table.h).
  uint32_t node = 0;
  uint32_t leaf_index = 0;
  const void* leaf = nullptr;  // innermost return address (allocator frames skipped), or nullptr
};

// Writes the frames of `stack`, leaf first, into out[0..max); returns how many. Lock-free: safe
// while the world is stopped.
int ReadAllocationStack(const AllocationStack& stack, void** out, int max);

// Returns false if `object` (an object start) is not a live sampled object.
// Safe while the world is stopped (lock-free read or caller holds the table lock).
// The pcs pointer stays valid for the life of the process (stacks are never freed).
bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size);

// Same for an object's side-slot value (alloc::ForEachLiveObjectWithSlot, exact mode): no table
// lookup. False for 0 or a value that names no bucket.
bool DecodeAllocationSlot(uint64_t slot, AllocationStack* stack, size_t* requested_size);

// Number of recorded live objects (hash-map records plus used side slots; racy while the world
// runs; no per-bucket counts are built). For sizing snapshots.
size_t RecordedLiveObjects();

// Recording itself: EnableSampleRecording (sample_recorder.h), SetThreadRecordingDisabled
// (thread_recording.h).

}  // namespace heapkit::prof
