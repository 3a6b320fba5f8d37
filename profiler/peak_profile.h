// The peak profile file (HEAP_PROFILE_PEAK=1): <prefix>.peak.heap, written beside each dump
// and at exit from the peak tracker (peak_tracker.h).
//
// Format: a legacy heap profile (legacy_writer.h), readable by every pprof: the in-use columns
// are the sampled live set at the peak (raw sampled counts for heap_v2, exact counts in exact
// mode), the allocation columns are zero (allocations are not kept per peak). The dump-reason
// comment after the header names it and carries the peak's time and total:
//   # heapkit: dump reason: peak profile: <N> MB in use at <s.mmm> s after profiling start
//     (estimated <bytes> bytes; CLOCK_MONOTONIC <ns> ns; unix time <s.mmm>)
// (one line). The file is replaced at each write (same safe-file rules as the dumps).
#pragma once

namespace heapkit::prof {

// Caller holds the state lock, profiling is on. Writes the peak profile if HEAP_PROFILE_PEAK
// is on; logs a failure. True if it was written or is off.
bool WritePeakProfileLocked();

}  // namespace heapkit::prof
