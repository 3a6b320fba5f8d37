// The free side of HEAP_PROFILE_LIFETIMES: a recorded object's free, with its birth
// (object_birth.h), becomes one count in the lifetime table (lifetime_table.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/lifetime_table.h"
#include "profiler/object_birth.h"

namespace heapkit::prof {

struct Bucket;

// Called by the sampling observer after a recorded object's free, while profiling, on the
// freeing thread with no profiler lock held. `birth` zero (a slot record): nothing counted.
// With HEAP_PROFILE_FREE_STACKS the free's stack is captured here (allocator frames dropped).
void CountFreedObject(const Bucket* bucket, size_t size, const ObjectBirth& birth,
                      int64_t estimated_bytes);
// CountLifetimeOfBucket (lifetime_table.h) with the free's stack (allocator frames dropped),
// for HEAP_PROFILE_FREE_STACKS in exact mode's slot frees: walked from `frame` (where the free
// entered the allocator, alloc/observer_hooks.h SlotFreeHook) when given and the cached CFI
// unwinder can, else from here. A repeat free from the thread's last call site costs the walk
// memo's check, over the frames above the allocator's only when started at `frame`.
void CountLifetimeWithFreeStack(uint32_t bucket_id, uint32_t (*node_of)(uint32_t bucket_id),
                                int bin, LifetimeEnd end, size_t size, int64_t estimated_bytes,
                                const uintptr_t* frame);

}  // namespace heapkit::prof
