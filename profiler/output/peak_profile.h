// The peak profile files (HEAP_PROFILE_PEAK=1), written with each dump (the exit dump
// included) from the peak tracker (peak_tracker.h):
//  - <prefix>.peak.NNNN.heap: the peak of the interval dump NNNN closes (since the previous
//    dump, or since profiling started for the first);
//  - <prefix>.peak.heap: the peak since profiling started, replaced at each dump.
//
// Format: a legacy heap profile (legacy_writer.h), readable by every pprof: the in-use columns
// are the sampled live set at the peak (raw sampled counts for heap_v2, exact counts in exact
// mode), the allocation columns are zero (allocations are not kept per peak). The dump-reason
// comment after the header names it and carries the peak's time and total:
//   # heapkit: dump reason: peak profile: <N> MB in use at <s.mmm> s after profiling start
//     (estimated <bytes> bytes; CLOCK_MONOTONIC <ns> ns; unix time <s.mmm>)
// (one line; an interval's file says "peak profile of the interval from <s.mmm> s: ...",
// the interval's start in seconds after profiling start). Same safe-file rules as the dumps.
#pragma once

#include "profiler/profiler_config.h"  // ProfileFormat

namespace heapkit::prof {

// Caller holds the state lock, profiling is on with HEAP_PROFILE_PEAK, the dump's name was just
// taken. Writes both peak profiles — `interval_file` (<prefix>.peak.NNNN.heap) and `file`
// (<prefix>.peak.heap), named by the caller (profiler_state.h, DumpFiles) — and starts the next
// interval; logs a failure. They are written in `format` (HEAP_PROFILE_FORMAT,
// proto_profile_file.h). True if they were written or peak tracking is off.
bool WritePeakProfileLocked(const char* interval_file, const char* file, ProfileFormat format);

}  // namespace heapkit::prof
