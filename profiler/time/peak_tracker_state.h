// The peak tracker's state (peak_tracker.h: the mechanism and its invariants), in a header of
// its own so that the inline fast paths of peak_tracker.h (exact mode's every allocation and
// free) can reach the words they test. Only peak_tracker.cc and those fast paths touch it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/internal/spin_lock.h"
#include "alloc/internal/thread_annotations.h"

namespace heapkit::prof {

// One bucket's cell: a cache line.
struct PeakCell {
  int64_t count, bytes;                    // current raw in-use
  int64_t interval_count, interval_bytes;  // raw in-use at the interval's peak
  int64_t start_count, start_bytes;        // raw in-use at the peak since start
  uint64_t epoch;                          // the epoch of the last fold
  uint64_t id;                             // its bucket id once PeakCellFor handed it out
};
static_assert(sizeof(PeakCell) == 64);

namespace peak_internal {

inline constexpr int kChunkBits = 12;
inline constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;
inline constexpr uint32_t kChunks = 16384;  // 64 Mi ids: as many as the stack table has

struct ScopePeak {
  int64_t peak = 0;        // estimated bytes
  int64_t peak_ticks = 0;  // tick count of the peak (peak_tracker.cc, Ticks)
  int64_t from_ns = 0;     // the scope's start
  bool rising = false;
};

// What free_epoch holds while the interval's peak is rising: no cell has that epoch.
inline constexpr uint64_t kRising = ~uint64_t{0};

// Everything below is guarded by lock (the chunk pointers are written once).
struct Tracker {
  internal::SpinLock lock;
  int64_t inuse = 0;         // estimated bytes
  uint64_t epoch = 1;        // E; cells start at 0: older than every epoch
  uint64_t start_epoch = 1;  // F_S, <= epoch
  ScopePeak start, interval;
  // What a free's fast path compares a cell's epoch with: `epoch`, or kRising while the
  // interval's peak is rising (no cell has that epoch, so the free takes the slow path and
  // freezes): the free's fast path tests one word instead of two.
  uint64_t free_epoch = kRising;
  int64_t start_ns = 0, start_ticks = 0;  // BeginPeakTracking (ticks-to-time conversion)
  uint32_t ids_end = 0;  // no cell of an id >= ids_end was ever looked up (the tick's bound)
  PeakCell* chunks[kChunks] = {};
};
extern constinit Tracker g_tracker;

// The allocation's less common cases, for the fast paths' tail calls (each returns true): the
// lock is taken (AllocWaiting) or held, and released.
bool AllocWaiting(uint32_t id, size_t size, int64_t estimate);
bool AllocLocked(uint32_t id, size_t size, int64_t estimate) HEAPKIT_RELEASE(g_tracker.lock);
bool NewMaximumAndUnlock() HEAPKIT_RELEASE(g_tracker.lock);

// The cell of bucket `id` if a fast path may update it (lock held): it exists and its epoch is
// `epoch` (g_tracker.epoch: it needs no fold; free_epoch: nor does the peak need a freeze). Id 0
// (no bucket) is never ready: its cell is never folded, so its epoch stays 0.
inline __attribute__((always_inline)) PeakCell* ReadyCell(uint32_t id, uint64_t epoch) {
  PeakCell* chunk = g_tracker.chunks[(id >> kChunkBits) & (kChunks - 1)];
  if (__builtin_expect(chunk == nullptr, 0)) return nullptr;
  PeakCell* c = &chunk[id & (kChunkSize - 1)];
  return __builtin_expect(c->epoch == epoch, 1) ? c : nullptr;
}

// The allocation in a ready cell (lock held), then the lock released, through NewMaximumAndUnlock
// when the in-use total passed the interval's peak; true.
inline __attribute__((always_inline)) bool AddAllocAndUnlock(
    PeakCell* c, size_t size, int64_t estimate) HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  c->count += 1;
  // Two adds to memory; without the barrier GCC's vectorizer makes them loads, shuffles and a
  // store.
  asm volatile("" ::: "memory");
  c->bytes += static_cast<int64_t>(size);
  g_tracker.inuse += estimate;
  if (__builtin_expect(g_tracker.inuse > g_tracker.interval.peak, 0)) return NewMaximumAndUnlock();
  g_tracker.lock.Unlock();
  return true;
}

}  // namespace peak_internal
}  // namespace heapkit::prof
