// The runtime's own mappings: every range the system memory layer (system_memory.h) maps — the
// page heap, the metadata arena, the page map, the profiler's tables, the leak checker's arrays
// and stacks — noted from the mmap until its munmap. The leak checker scans the program's
// anonymous memory as roots (other allocators' arenas, GC heaps, direct mmaps hold pointers
// into our heap) and must leave the runtime's own out: its metadata holds every object's
// address.
//
// Lock-free and malloc-free: readable at any time, also while the world is stopped with a
// writer stopped anywhere. Each range is one 64-bit word in a table of fixed chunks (mapped on
// first use, never unmapped): its first page number and page count, so the table holds no
// address a conservative scan could take for a pointer (its own chunks are noted in it too).
// A slot is claimed by a CAS from 0; forgetting a range rewrites the slots it overlaps by CAS
// (trimmed, or split with the upper part noted first, or emptied).
//
// What a writer stopped between its system call and its note leaves: a range mapped and not yet
// noted (fresh zero pages: no pointers to miss), or unmapped and not yet forgotten (a stale
// range covers nothing mapped). Moving memory (SystemResize) notes the new range before the
// contents move there, so the runtime's data is never in an unnoted mapping.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::internal {

struct RuntimeMapping {
  uintptr_t start;  // page-aligned
  uintptr_t end;
};

// Notes / forgets [start, start + bytes) (page-aligned; any sub-range of noted ranges may be
// forgotten). A range the table has no room for (more than a million noted ranges) is not
// noted and counted in RuntimeMappingsNotNoted().
void NoteRuntimeMapping(uintptr_t start, size_t bytes);
void ForgetRuntimeMapping(uintptr_t start, size_t bytes);

// Copies up to `capacity` noted ranges (unsorted; neighbours not merged) into out and returns
// how many are noted (more than capacity: the copy is incomplete).
size_t CopyRuntimeMappings(RuntimeMapping* out, size_t capacity);

// How many ranges are noted now (for sizing a copy's buffer).
size_t RuntimeMappingCount();

// Ranges mapped but never noted because the table was full.
size_t RuntimeMappingsNotNoted();

}  // namespace heapkit::internal
