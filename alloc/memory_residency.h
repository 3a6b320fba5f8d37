// How much of the allocator's address space is really memory: the heap's spans and the
// metadata (arena mappings, page-map leaves) measured page by page (internal/page_residency.h).
//
// The allocator reserves more address space than it touches: a page-map leaf is 16 MiB of
// address space of which a heap of N pages touches 16 × N bytes, arena chunks are 1 MiB each,
// a span is backed only where its objects were carved and a large object only where the
// program wrote it. The counters of AllocatorStats describe address space; this measures what
// of it is resident (in RAM), swapped, or neither (never touched, or released). It costs a
// pagemap read per contiguous run of spans (8 bytes per 4 KiB page), so it runs for GetStats and
// heap dumps only, never for the cheap numeric properties.
#pragma once

#include <cstddef>

namespace heapkit::alloc {

struct Residency {
  size_t mapped = 0;    // address space of the ranges measured
  size_t resident = 0;  // bytes on pages in RAM
  size_t swapped = 0;   // bytes on pages in swap
  size_t untouched() const { return mapped > resident + swapped ? mapped - resident - swapped : 0; }
};

struct MemoryResidency {
  Residency heap_in_use;    // spans in use (objects, free objects of small spans, span tails)
  Residency heap_free;      // free page-heap spans still backed (not yet returned to the OS)
  Residency heap_returned;  // free spans given back (MADV_DONTNEED): resident only if reused
  Residency page_map;       // page-map leaves
  Residency arena;          // metadata arena: spans, thread caches, profiler/checker tables
  // Parts of in-use small spans: objects never carved (free, counted in the central free list's
  // bytes; resident only where the span was prefaulted or its pages were used before) and the
  // unusable tails.
  Residency uncarved;
  Residency span_tails;
  bool knows_swap = false;  // false: /proc/self/pagemap unreadable, swapped is always 0
  Residency Metadata() const {
    return {page_map.mapped + arena.mapped, page_map.resident + arena.resident,
            page_map.swapped + arena.swapped};
  }
  Residency Heap() const {
    return {heap_in_use.mapped + heap_free.mapped + heap_returned.mapped,
            heap_in_use.resident + heap_free.resident + heap_returned.resident,
            heap_in_use.swapped + heap_free.swapped + heap_returned.swapped};
  }
};

// Measures with no allocator lock held during the page reads (spans are snapshotted first, as
// for MallocExtension::Ranges). Malloc-free.
void MeasureMemoryResidency(MemoryResidency* out);

}  // namespace heapkit::alloc
