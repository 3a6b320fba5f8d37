// Enumeration of every live heap object from the allocator's own metadata (for heapcheck/).
// The profiler's per-object side slots are in object_slots.h.
//
// "Live" = handed to the user and not freed: objects sitting in thread caches, transfer caches,
// central free lists or span free lists are not live. Large (page-level) allocations are one
// object each. Objects of the runtime's own metadata arena are never reported.
//
// Precondition: every other thread is stopped (or otherwise known not to be inside the
// allocator), so the walk takes no locks that a stopped thread might hold. The visitor must not
// allocate from the public heap.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::alloc {

using LiveObjectVisitor = void (*)(void* context, void* object, size_t size);

// Visits each live object once, in no particular order. `size` is the usable size (size-class
// size or page-rounded large size), not the requested size.
void ForEachLiveObject(LiveObjectVisitor visitor, void* context);

// If `address` lies inside a live-or-free heap object, returns its start and usable size.
// Cheap (one page-map lookup); does not say whether the object is live.
bool FindHeapObject(uintptr_t address, uintptr_t* object_start, size_t* object_size);

// Like ForEachLiveObject, also giving each object's slot value (0: no slot or empty slot).
// Same precondition (world stopped).
using LiveObjectSlotVisitor = void (*)(void* context, void* object, size_t size, uint64_t slot);
void ForEachLiveObjectWithSlot(LiveObjectSlotVisitor visitor, void* context);

}  // namespace heapkit::alloc
