// "Where is the process's memory": the comment block of memory figures written into every heap
// dump, so that `pprof-tool --memory` can account for the process's RSS at the moment of the
// dump.
//
//   # heapkit: memory <key> <bytes>
//
// one line per key, after the dump-reason line; both pprofs skip '#' lines between the header
// and MAPPED_LIBRARIES (legacy_writer.h). Keys (bytes):
//   rss                     the process's resident set (the sum of /proc/self/smaps' Rss lines,
//                           what smaps_rollup and VmRSS report)
//   live_heap               usable bytes of live objects, exact (generic.current_allocated_bytes)
//   live_heap_resident      the resident part of in-use spans that the free lines below do not
//                           take: live objects as far as the program touched them
//   thread_cache_free       free objects in thread caches        (resident: each was written
//   transfer_cache_free     free objects in transfer caches       when it was freed, its link)
//   central_free            free objects in central lists' spans: the carved ones, and the
//                           resident bytes of the never-carved ones (measured)
//   span_tails              unusable ends of small-object spans, resident bytes (measured)
//   pageheap_free_resident  free page-heap spans held, resident (not yet returned to the OS)
//   pageheap_free           the same spans' address space
//   pageheap_returned       free spans returned to the OS (MADV_DONTNEED): address space only
//   heap_untouched          in-use and free spans' address space never touched (no memory)
//   metadata_page_map       page map, resident (metadata_page_map_reserved: its address space)
//   metadata_arena          metadata arena, resident: spans, thread caches, profiler and
//                           checker tables (metadata_arena_reserved: its address space)
//   thread_stacks           [stack] and glibc thread stacks (writable anonymous mappings right
//                           above a PROT_NONE guard), resident
//   code_and_ro_data        file-backed mappings without write permission, and [vdso]/[vvar]
//   file_data               writable file-backed mappings (data segments, shared files)
//   anonymous               all other anonymous mappings' Rss (the allocator's included)
//   other_anonymous         anonymous minus the allocator's resident pages: direct mmaps, brk,
//                           other allocators
//   swap                    the process's swapped bytes (not part of rss)
//   heapkit_endpoint        heap bytes the HTTP endpoint keeps between answers (the names of the
//                           profiles' PCs, build IDs, the delta_heap baseline; by their sizes):
//                           part of live_heap_resident, as the endpoint last said
//   recorded_requested      requested and usable bytes of the live objects, estimated from the
//   recorded_usable         profiler's records (exact in exact mode): the rounding share
// A reader computes the unexplained rest as rss minus the resident lines.
// Then one line per size class in use (alloc/span_occupancy.h):
//   # heapkit: size_class size=<bytes> spans=<n> objects_per_span=<n> out=<n> transfer=<n>
//     free=<n> mostly_empty=<n>
// out: objects handed out of the class's spans (live, or cached in thread/transfer caches),
// transfer: of which in the transfer cache, free: free objects stranded in the spans,
// mostly_empty: spans with at most 1/8 of their objects out.
//
// Cost: one pagemap read per window of up to 512 OS pages of the heap and the metadata, and one
// pass over /proc/self/smaps, in which the kernel walks every page table of the process (about
// half of a dump's cost on a large heap; tests/bench/profiler/RESULTS.md). Malloc-free; runs with
// no allocator lock held except for short snapshots.
#pragma once

#include <cstdint>

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

void AppendMemoryBreakdown(OutputSink* sink);

// What the HTTP endpoint tells after its answers (ServerHooks::endpoint_heap_bytes).
void SetEndpointHeapBytes(uint64_t bytes);

// A HEAPPROFILE dump's comment block: the memory figures, then the residency per stack when
// HEAP_PROFILE_RESIDENCY is on (stack_residency.h).
void AppendDumpComments(OutputSink* sink);

}  // namespace heapkit::prof
