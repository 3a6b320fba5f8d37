// Fragmentation you can act on: how full the spans of each size class are, and how full the
// span of one object is.
//
// A small-object span goes back to the page heap (and can go back to the OS) only when every
// one of its objects is free. Until then its free objects are stranded: memory the program
// freed that no other size and no other process can use. Per class this reports the spans, the
// objects out of them (live, or cached in a thread cache or the transfer cache) and the free
// objects still in them; per object (SpanOfObject) the occupancy of its span, so that the
// profiler can charge each recorded object its share of its span's stranded bytes
// (profiler/output/stack_residency.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::alloc {

struct ClassOccupancy {
  size_t object_size = 0;
  size_t objects_per_span = 0;
  size_t spans = 0;
  size_t objects_out = 0;         // handed out of the spans: live, or in thread/transfer caches
  size_t transfer_objects = 0;    // of which parked in the transfer cache
  size_t free_objects = 0;        // still in the spans (free list or never carved): stranded
  size_t mostly_empty_spans = 0;  // spans with at most 1/8 of their objects out
};

// Fills out[cls] for every class (1 .. count-1; an unused class has spans == 0) and returns the
// number of entries (the class count). One walk over the spans under the page-heap lock, then
// each class's transfer cache under its lock. Malloc-free.
size_t GetClassOccupancy(ClassOccupancy* out, size_t max_classes);

struct ObjectSpan {
  size_t object_size = 0;
  size_t objects_per_span = 0;
  size_t objects_out = 0;
};

// The occupancy of the small-object span holding `object` (false for large objects and
// pointers the allocator does not own). Lock-free: reads the page map and the span's counter
// as they are (off by the objects moving meanwhile).
bool SpanOfObject(const void* object, ObjectSpan* span);

}  // namespace heapkit::alloc
