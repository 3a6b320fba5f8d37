// The endpoint's heap profiles as profile.proto, laid out exactly as Go's runtime/pprof writes
// heap profiles, so that scrapers made for Go programs (Parca, Grafana Alloy's
// pyroscope.scrape, `go tool pprof`) take them unmodified. The encoding is the runtime's own
// (profiler/format/heap_profile_encoder.h, through ServerHooks::heap_profile_proto), the one the
// profile files use, with what only the endpoint adds:
//   - Go's four sample types alone (no lifetime samples, no comments), time_nanos now,
//     duration_nanos 0 (N s for a delta), the default sample type of the view;
//   - every location symbolized here (functions, file:line, inline frames) from local files
//     only (process_symbolizer.h), its mapping marked has_functions/has_filenames/
//     has_line_numbers/has_inline_frames — except a location nothing here names (a stripped
//     binary's), which keeps its address alone, its mapping marked unsymbolized (all four
//     false), so that a reader with the binary or its debug file (pprof-tool, Google's pprof,
//     a fleet server) names it by build ID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/http/server_hooks.h"  // and HeapTotals (profiler/format/heap_profile_encoder.h)

namespace heapkit::prof::http {

using prof::HeapTotals;

// Only the default sample type differs: inuse_space for the heap, leaks and growth (whose
// "in use" is what the leaked objects hold / what the heap took from the OS), alloc_space for
// allocs and delta_heap.
enum class HeapView { kHeap, kAllocs, kDeltaHeap, kLeaks, kGrowth };

// What a baseline is subtracted from: every value (Go's seconds=N), or the alloc_* values
// only with inuse_* absolute (godeltaprof's delta_heap).
enum class DeltaMode { kAll, kAllocOnly };

// Encodes `legacy` (profiler/format/legacy_writer.h's format); *totals gets the un-sampled sums.
// With a non-empty `baseline` (the same format, taken earlier) the samples are the differences per
// stack, legacy − baseline, as Go's `seconds=N` answers. false with one line in *error when a
// text is not a heap profile or memory ran out.
bool HeapProfileToProto(const ServerHooks& hooks, std::string_view legacy,
                        std::string_view baseline, HeapView view, int64_t time_nanos,
                        int64_t duration_nanos, std::string* proto, HeapTotals* totals,
                        std::string* error, DeltaMode delta = DeltaMode::kAll);

// Only the totals (for /metrics): no symbolization.
bool HeapProfileTotals(const ServerHooks& hooks, std::string_view legacy, HeapTotals* totals,
                       std::string* error);

}  // namespace heapkit::prof::http
