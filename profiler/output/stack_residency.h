// Residency per stack (HEAP_PROFILE_RESIDENCY=1): at dump time, each live sampled object's
// pages are looked up in /proc/self/pagemap (alloc/internal/page_residency.h), and every stack
// gets the bytes of its objects found resident and swapped:
//
//   # heapkit: residency <resident bytes> <swapped bytes> <stranded bytes> @ 0x<pc> 0x<pc> ...
//
// Stranded bytes: each small object is charged its share of the free objects stranded in its
// span (alloc/span_occupancy.h: the span's free bytes / its objects out), so the stacks whose
// live objects keep mostly empty spans from going back to the page heap rank first.
// One comment line per stack with live objects, in the comment block after the header (both
// pprofs skip it; pprof-tool turns the three numbers into the sample types resident_space and
// swapped_space (tcmalloc's names) and stranded_space, pprof-tool/model/stack_residency.h).
// Resident and swapped bytes are raw, over the recorded objects' requested sizes, like the
// record lines' in-use bytes; stranded bytes are raw too (the readers scale all three by the
// stack's un-sampling factor). An object counts the bytes of it that lie on resident
// pages, so a 1 GiB block with 10 MiB written counts ~10 MiB.
//
// Cost: nothing on the allocation path; at dump time one pass over the live records (under each
// stripe's lock in turn) with one pagemap read per window of 16..512 pages not already read,
// and a table of (stack, bytes) from the metadata arena, two entries per bucket.
#pragma once

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

// HEAP_PROFILE_RESIDENCY (boolean, default off), read once.
bool StackResidencyEnabled();

void AppendStackResidency(OutputSink* sink);

}  // namespace heapkit::prof
