// Query side of the profiler's table of live sampled objects, for heapcheck/.
//
// With HEAPCHECK on, the sample parameter is 1, so every live object allocated after start-up
// is in the table and has the stack it was allocated from.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

struct AllocationStack {
  const void* const* pcs;  // return addresses, leaf first (allocator frames already skipped)
  int depth;
};

// Returns false if `object` (an object start) is not a live sampled object.
// Safe while the world is stopped (lock-free read or caller holds the table lock).
bool LookupAllocationStack(const void* object, AllocationStack* stack, size_t* requested_size);

}  // namespace heapkit::prof
