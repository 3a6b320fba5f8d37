// The program's anonymous memory as roots: private anonymous read-write mappings that are not
// the runtime's own (other allocators' arenas — CPython's pymalloc, GCC's GC heap, a program's
// own pool — and direct mmaps hold pointers into our heap). valgrind scans them; LeakSanitizer
// does not, and reports what only they point to as leaked
// (HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=false gives its behaviour).
//
// Scanned: every maps line that is private, readable and writable, and anonymous (no path,
// "[heap]", or an "[anon:name]" the program gave it), minus
//  - the runtime's own mappings (alloc/internal/runtime_mappings.h: page heap, metadata arena,
//    page map, profiler tables, the checker's arrays and stacks), copied in the stopped world
//    right after the maps are read, so both describe the same moment, and again once the
//    candidate regions are known (what the check itself mapped since);
//  - every loaded object's PT_LOAD segments (the bss past a segment's file part is an
//    anonymous line: the program's are roots already, the runtime's never are);
//  - thread stacks: a thread's own stack (never its dead part below SP), the part of a coroutine
//    stack or sigaltstack scanned from SP, and
//    any line whose top holds a glibc thread control block (tcb == self == its address): the
//    stacks glibc caches for threads that exited, whose stale frames would hide leaks;
//  - pages not resident (neither in memory nor swapped: /proc/self/pagemap, or mincore where
//    pagemap cannot be read) — they read as zero, and a large reservation costs nothing;
//  - PROT_NONE and guard regions (not readable).
// Not scanned at all when a thread kept running (it may unmap its memory under the scan), or
// when the runtime's mappings could not all be copied (the report says which).
//
// Everything after PrepareAnonymousRoots runs in the stopped world: system calls and mmap'd
// memory only, buffers sized before the stop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/mmap_array.h"
#include "heapcheck/proc_maps.h"
#include "heapcheck/roots.h"

namespace heapkit::check {

// Why anonymous memory was not scanned in a check (kScanned: it was).
enum class AnonymousRootsOutcome : uint8_t {
  kScanned,
  kOff,             // HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=false (or no global roots)
  kThreadsRunning,  // a thread could not be stopped
  kRuntimeUnknown,  // the runtime's mappings could not all be copied
  kOutOfMemory,
};

struct AnonymousRootsStats {
  AnonymousRootsOutcome outcome = AnonymousRootsOutcome::kOff;
  size_t mappings = 0;         // maps lines with at least one scanned page
  uint64_t bytes = 0;          // resident bytes scanned
  uint64_t skipped_bytes = 0;  // bytes of those lines not resident, not scanned
};

struct AnonymousRoots {
  // The runtime's mappings (copied in the stopped world), then thread stacks AddThreadRegions
  // scanned (its `stacks` output) and the modules' segments; sorted and merged before use.
  MmapArray<Region> excluded;
  MmapArray<Region> runtime_now;  // the runtime's mappings again, once the candidates are known
  MmapArray<uint64_t> residency;
  bool runtime_complete = false;
};

// World running: buffers sized (the runtime's mappings' count plus slack).
bool PrepareAnonymousRoots(AnonymousRoots* a);

// Stopped, right after the maps were read: the runtime's own mappings.
void CopyRuntimeMappingsStopped(AnonymousRoots* a);

// Appends the scanned parts (see above) to out.
bool AddAnonymousRegions(const ProcMaps& maps, const LoadedModules& modules, AnonymousRoots* a,
                         MmapArray<Region>* out, AnonymousRootsStats* stats);

}  // namespace heapkit::check
