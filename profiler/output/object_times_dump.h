// The lifetimes and ages of sampled objects in each HEAPPROFILE dump, as comment lines in the
// comment block after the header (legacy_writer.h: both pprofs skip '#' lines):
//
//   # heapkit: lifetime <bin ns> <end> <count> <bytes> <estimated bytes> @ <alloc pcs> [| <free
//   pcs>] # heapkit: ages at dump <n> # heapkit: age <interval> <count> <bytes> @ <pcs>
//
// Lifetime lines (HEAP_PROFILE_LIFETIMES=1), one per cell of lifetime_table.h: <bin ns> is the
// lower bound of the lifetime bin in nanoseconds (0, 1000, 10000, ..., 1000000000000,
// 3600000000000), <end> is `same` (freed by the allocating thread), `cross` (freed by another
// thread) or `live` (still live at this dump: censored, binned by its age so far). <count> and
// <bytes> are raw sampled numbers, <estimated bytes> their un-sampled sum (each object by its
// own weight). Freed cells count every free since profiling started; live cells are this
// dump's. `| <free pcs>`: the free's stack (HEAP_PROFILE_FREE_STACKS=1).
//
// Age lines (HEAP_PROFILE_AGES=1): the live sampled objects of each bucket (stack and size key,
// the same grouping as the record lines, so readers un-sample them alike) by the dump interval
// they were allocated in (object_birth.h): interval k = allocated after dump k and before dump
// k + 1; "ages at dump <n>" names the dump they belong to (this file's number).
//
// Cost: at dump time only — one pass over the lifetime cells and one over the live records,
// tallied in tables from the metadata arena.
#pragma once

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

// Appends the lines above for the settings that are on (none: nothing).
void AppendObjectTimes(OutputSink* sink);

}  // namespace heapkit::prof
