// The peaks of the sampled heap (HEAP_PROFILE_PEAK): the live set of sampled objects at the
// moment of the highest estimated in-use bytes since profiling started, and the same for the
// interval since the previous dump, kept without ever copying the live set (lazy rebase).
//
// Mechanism. Globally: the estimated in-use bytes (the same estimate as the dumps' totals,
// exact in exact mode), an epoch number E, and two scopes — since start (S) and the interval
// since the previous dump (I) — each with its highest value seen (peak), its time and `rising`
// (the peak is the present moment: a new maximum was reached and nothing was freed since).
// Per bucket (a PeakCell, by bucket id): its current raw in-use (count, bytes), its raw in-use
// at each scope's peak, and the epoch it was last folded at.
//  - A sampled allocation updates its bucket, then the in-use total; a total above a scope's
//    peak makes it that scope's new peak (time taken now) and sets its `rising`. A new maximum
//    since start is also one of the interval (the interval's peak is never above it).
//  - The first free after a new maximum freezes: E += 1; the interval's peak belongs to epoch
//    E, and if S was rising too, F_S (the epoch of S's peak) = E. Every freeze is one of the
//    interval, so the interval's epoch is always E, and F_S <= E. The freeze copies nothing:
//    every bucket's value at the freeze is its current value until the bucket is next touched.
//  - Touching a bucket whose epoch is older than E first folds: at_interval = current, and if
//    its epoch is older than F_S also at_start = current; then epoch = E (it was not touched
//    since the freeze, so its current value is its value then). One compare on the fast path.
//  - A bucket's value at the interval's peak (after a freeze): current if its epoch is older
//    than E, else at_interval; at the peak since start: current if older than F_S, else
//    at_start.
//  - After each dump the interval restarts (ResetIntervalPeak): its peak is the present moment
//    (rising), so the next free freezes it.
// O(1) per sampled event. Every update happens under one leaf spin lock, so that a bucket's
// fold and the freeze are ordered: a profile is the exact live set at one moment (exact mode:
// the exact per-stack peak). The lock is taken only when HEAP_PROFILE_PEAK is on, once per
// sampled allocation and sampled free (one per ~512 KiB allocated at the default rate; every
// allocation in exact mode, where the fast paths are a few dozen instructions and the slow
// parts — the fold, a new maximum, the freeze — are out of line).
//
// Time: a new maximum stores a tick count (the TSC on x86-64: in exact mode a growing heap
// makes a new maximum at every allocation, and clock_gettime would be most of the cost),
// turned into CLOCK_MONOTONIC nanoseconds when a snapshot is taken, from the ticks and
// nanoseconds at the start and at the snapshot (constant-rate TSC; elsewhere the ticks are
// CLOCK_MONOTONIC nanoseconds).
//
// Memory: one 64-byte cell (a cache line) per bucket id, in chunks of the arena
// (alloc/internal/arena.h) allocated on the first event of one of their buckets; a bucket without
// events costs nothing.
//
// What is tracked: the objects allocated while profiling, plus the table's live records at
// the start (BeginPeakTracking seeds the cells with them). Frees of records kept in stack form
// (exact mode's leak-checker records made before profiling started) are not seen.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/internal/thread_annotations.h"
#include "profiler/time/peak_tracker_state.h"
#include "profiler/table/stack_table.h"

namespace heapkit::prof {

// Whether the tracker records (set by BeginPeakTracking / StopPeakTracking). Relaxed load on the
// sampling paths, inline: exact mode reads it at every allocation and free.
extern std::atomic<bool> g_peak_tracking_on;
inline bool PeakTrackingOn() { return g_peak_tracking_on.load(std::memory_order_relaxed); }

// A sampled allocation of `size` bytes in the bucket with id `bucket_id` (0: a record without
// bucket; only the total moves), estimated at `estimate` bytes. Call only while
// PeakTrackingOn().
void PeakOnAlloc(uint32_t bucket_id, size_t size, int64_t estimate);
// A sampled free.
void PeakOnFree(uint32_t bucket_id, size_t size, int64_t estimate);
// PeakOnFree's common case, inline, for a caller with more to do after it (exact mode's free,
// which counts the lifetime next, as a tail call): the tracker's lock is free and the bucket's
// cell needs no fold, nor the peak a freeze. True: the free is counted; false: nothing was
// done, call PeakOnFree. (The lock is taken and released here, which the analysis cannot see
// through the try.)
inline __attribute__((always_inline)) bool PeakOnFreeIfReady(
    uint32_t bucket_id, size_t size, int64_t estimate) HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  using namespace peak_internal;
  if (__builtin_expect(!g_tracker.lock.TryLock(), 0)) return false;
  PeakCell* c = ReadyCell(bucket_id, g_tracker.free_epoch);
  if (__builtin_expect(c == nullptr, 0)) {
    g_tracker.lock.Unlock();
    return false;
  }
  c->count -= 1;
  asm volatile("" ::: "memory");  // two subtractions from memory (AddAllocAndUnlock)
  c->bytes -= static_cast<int64_t>(size);
  g_tracker.inuse -= estimate;
  g_tracker.lock.Unlock();
  return true;
}

// The same allocation with its bucket's cell in hand (PeakCellFor, non-null): a caller that
// keeps the cell per call site skips the lookup by id. Returns true, so that a caller that
// returns true next ends with it (exact mode: every allocation). Inline: the lock taken with
// one exchange, every less common case (a contended lock, a cell to fold, a new maximum) left
// to a tail call, so that the caller keeps nothing across a call for it.
inline __attribute__((always_inline)) bool PeakOnAllocAt(PeakCell* c, size_t size, int64_t estimate)
    HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  using namespace peak_internal;
  if (__builtin_expect(!g_tracker.lock.TryLock(), 0)) return AllocWaiting(c->id, size, estimate);
  if (__builtin_expect(c->epoch != g_tracker.epoch, 0)) return AllocLocked(c->id, size, estimate);
  return AddAllocAndUnlock(c, size, estimate);
}
// The cell of bucket `bucket_id` (created if need be; nullptr: id 0, or the arena is
// exhausted). A cell never moves: a caller may keep the pointer for the life of the process.
PeakCell* PeakCellFor(uint32_t bucket_id);

// Starts (or restarts) tracking from the table's live records (estimated at `inuse_estimate`
// bytes in all), the present moment being the first peak of both scopes.
void BeginPeakTracking(int64_t inuse_estimate);
void StopPeakTracking();
// A new interval starts now (after a dump): its peak is the present moment.
void ResetIntervalPeak();

enum class PeakScope { kSinceStart, kInterval };

// A peak's summary as a reader sees it. Taking it freezes a rising peak (the present moment
// is the peak: the snapshot stays put while the program goes on).
struct PeakSnapshot {
  PeakScope scope;
  uint64_t epoch;    // the epoch of the peak's values
  int64_t bytes;     // estimated in-use bytes at the peak
  int64_t time_ns;   // CLOCK_MONOTONIC of the peak
  int64_t start_ns;  // CLOCK_MONOTONIC of BeginPeakTracking
  int64_t from_ns;   // CLOCK_MONOTONIC of the scope's start (the previous dump, or start)
};
PeakSnapshot TakePeakSnapshot(PeakScope scope);
// The raw in-use (count, bytes) of `bucket` at the peak of `snapshot`; false if the peak
// moved since the snapshot was taken (then take a new one).
bool PeakCounts(const PeakSnapshot& snapshot, const Bucket& bucket, int64_t* count, int64_t* bytes);
// Whether the values of `snapshot` are still readable (no freeze since).
bool PeakUnchanged(const PeakSnapshot& snapshot);

// The present: visits every bucket id whose current raw in-use bytes are above zero, with
// them, under the tracker's lock (the visitor must not allocate or take a lock), and returns
// the estimated in-use total; *when_ns gets the CLOCK_MONOTONIC of that moment (read under the
// lock). For the timeline (timeline.h).
int64_t ForEachLiveCell(void (*visit)(void* ctx, uint32_t id, int64_t count, int64_t bytes),
                        void* ctx, int64_t* when_ns);

// Fork handlers (profiler_fork.cc): the tracker's lock across fork().
void PeakForkPrepare();
void PeakForkDone();

}  // namespace heapkit::prof
