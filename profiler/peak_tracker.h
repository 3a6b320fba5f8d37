// The peak of the sampled heap (HEAP_PROFILE_PEAK): the live set of sampled objects at the
// moment of the highest estimated in-use bytes since profiling started, kept without ever
// copying the live set (lazy rebase).
//
// Mechanism. Globally: the estimated in-use bytes (the same estimate as the dumps' totals,
// exact in exact mode), the highest value seen (peak), its time, an epoch number E, and
// `rising` (the peak is the present moment: a new maximum was reached and nothing was freed
// since). Per bucket (a PeakCell, by bucket id): its current raw in-use (count, bytes), its
// raw in-use at the peak, and the epoch its peak values belong to.
//  - A sampled allocation updates its bucket, then the in-use total; a total above the peak
//    makes it the new peak (time taken now) and sets `rising`.
//  - The first free after a new maximum freezes the peak: E += 1, `rising` cleared. The
//    freeze copies nothing: every bucket's value at the freeze is its current value until the
//    bucket is next touched.
//  - Touching a bucket whose epoch is older than E first folds: at_peak = current,
//    epoch = E (it was not touched since the freeze, so its current value is its value then).
//  - A bucket's value at the peak: its current value while `rising` or if its epoch is older
//    than E; its at_peak otherwise.
// O(1) per sampled event. Every update happens under one leaf spin lock, so that a bucket's
// fold and the freeze are ordered: the profile is the exact live set at one moment (exact
// mode: the exact per-stack peak). The lock is taken only when HEAP_PROFILE_PEAK is on, once
// per sampled allocation and sampled free (one per ~512 KiB allocated at the default rate).
//
// Memory: one 40-byte cell per bucket id, in chunks of the arena (alloc/internal/arena.h)
// allocated on the first event of one of their buckets; a bucket without events costs nothing.
//
// What is tracked: the objects allocated while profiling, plus the table's live records at
// the start (BeginPeakTracking seeds the cells with them). Frees of records kept in stack form
// (exact mode's leak-checker records made before profiling started) are not seen.
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/stack_table.h"

namespace heapkit::prof {

// Whether the tracker records (set by BeginPeakTracking / StopPeakTracking). Relaxed load on the
// sampling paths.
bool PeakTrackingOn();

// A sampled allocation of `size` bytes in `bucket`, estimated at `estimate` bytes. Call only
// while PeakTrackingOn().
void PeakOnAlloc(const Bucket* bucket, size_t size, int64_t estimate);
// A sampled free (bucket nullptr: a record without bucket; only the total moves).
void PeakOnFree(const Bucket* bucket, size_t size, int64_t estimate);

// Starts (or restarts) tracking from the table's live records (estimated at `inuse_estimate`
// bytes in all), the present moment being the first peak.
void BeginPeakTracking(int64_t inuse_estimate);
void StopPeakTracking();

// The peak's summary as a reader sees it. Reading freezes a rising peak (the present moment
// is the peak: the snapshot stays put while the program goes on).
struct PeakSnapshot {
  uint64_t epoch;
  int64_t bytes;         // estimated in-use bytes at the peak
  int64_t time_ns;       // CLOCK_MONOTONIC of the peak
  int64_t start_ns;      // CLOCK_MONOTONIC of BeginPeakTracking
};
PeakSnapshot TakePeakSnapshot();
// The raw in-use (count, bytes) of `bucket` at the peak of `snapshot`; false if the peak
// moved since the snapshot was taken (then take a new one).
bool PeakCounts(const PeakSnapshot& snapshot, const Bucket& bucket, int64_t* count,
                int64_t* bytes);
// Whether the values of `snapshot` are still readable (no freeze since).
bool PeakUnchanged(const PeakSnapshot& snapshot);

// Fork handlers (profiler_fork.cc): the tracker's lock across fork().
void PeakForkPrepare();
void PeakForkDone();

}  // namespace heapkit::prof
