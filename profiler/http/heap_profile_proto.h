// The profiler's legacy heap profile (GetHeapSample's text) as profile.proto, laid out exactly as
// Go's runtime/pprof writes heap profiles, so that scrapers made for Go programs (Parca, Grafana
// Alloy's pyroscope.scrape, `go tool pprof`) take it unmodified:
//   - sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
//     inuse_space/bytes in this order; period_type space/bytes with the sampling period;
//   - values un-sampled as the pprofs un-sample heap_v2 lines (sample_weight.h), a numeric label
//     `bytes` with the line's average object size;
//   - string_table[0] "", every ID numbered from 1, time_nanos now, duration_nanos 0 (N s for a
//   delta);
//   - mappings of the executable segments of /proc/self/maps with their hex build IDs; every
//     location symbolized here (functions, file:line, inline frames) from local files only, and
//     its mapping marked has_functions/has_filenames/has_line_numbers/has_inline_frames — except
//     a location nothing here names (a stripped binary's), which keeps its address alone, its
//     mapping marked unsymbolized (all four false), so that a reader with the binary or its
//     debug file (pprof-tool, Google's pprof, a fleet server) names it by build ID.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace heapkit::prof::http {

// Only the default sample type differs: inuse_space for the heap, leaks and growth (whose
// "in use" is what the leaked objects hold / what the heap took from the OS), alloc_space for
// allocs and delta_heap.
enum class HeapView { kHeap, kAllocs, kDeltaHeap, kLeaks, kGrowth };

// What a baseline is subtracted from: every value (Go's seconds=N), or the alloc_* values
// only with inuse_* absolute (godeltaprof's delta_heap).
enum class DeltaMode { kAll, kAllocOnly };

struct HeapTotals {
  double inuse_objects = 0, inuse_bytes = 0, alloc_objects = 0, alloc_bytes = 0;
  int64_t sample_period = 0;
  size_t stacks = 0;
};

// Parses `legacy` (profiler/format/legacy_writer.h's format) and encodes it; *totals gets the
// un-sampled sums. With a non-empty `baseline` (the same format, taken earlier) the samples are
// the differences per stack, legacy − baseline, as Go's `seconds=N` answers. false with one line
// in *error when a text is not a heap profile.
bool HeapProfileToProto(std::string_view legacy, std::string_view baseline, HeapView view,
                        int64_t time_nanos, int64_t duration_nanos, std::string* proto,
                        HeapTotals* totals, std::string* error, DeltaMode delta = DeltaMode::kAll);

// Only the totals (for /metrics): no symbolization.
bool HeapProfileTotals(std::string_view legacy, HeapTotals* totals, std::string* error);

}  // namespace heapkit::prof::http
