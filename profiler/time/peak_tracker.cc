// The peak tracker (peak_tracker.h: the mechanism and its invariants).
#include "profiler/time/peak_tracker.h"

#include <time.h>

#include <atomic>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "profiler/time/peak_tracker_state.h"

namespace heapkit::prof {
namespace {

// CLOCK_MONOTONIC in nanoseconds (the tracker is built without the profiler's control files,
// for its unit test; the same clock as profiler_basics.h's NowNs).
int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The tick count of a new maximum (header: "Time").
inline int64_t Ticks() {
#if defined(__x86_64__)
  return static_cast<int64_t>(__rdtsc());
#else
  return MonotonicNs();
#endif
}

}  // namespace

constinit peak_internal::Tracker peak_internal::g_tracker;

namespace {

using peak_internal::g_tracker;
using peak_internal::kChunkBits;
using peak_internal::kChunks;
using peak_internal::kChunkSize;
using peak_internal::kRising;
using peak_internal::ScopePeak;

// A new chunk of cells for `chunk` (nullptr on arena exhaustion). Lock held.
__attribute__((noinline)) PeakCell* NewChunk(PeakCell*& chunk) {
  chunk = static_cast<PeakCell*>(internal::ArenaAlloc(sizeof(PeakCell) * kChunkSize, 4096));
  return chunk;  // zeroed by the arena
}

// The cell of bucket `id`, nullptr on arena exhaustion (the bucket is then not tracked). Lock
// held. Inline: the sampling paths (every allocation in exact mode) pay a few instructions.
// Every cell's first event comes here (a new cell's epoch 0 is never the fast paths'), so
// ids_end bounds the ids that ever had a cell.
inline __attribute__((always_inline)) PeakCell* CellOf(uint32_t id) {
  if (__builtin_expect(id >= g_tracker.ids_end, 0)) g_tracker.ids_end = id + 1;
  PeakCell*& slot = g_tracker.chunks[(id >> kChunkBits) & (kChunks - 1)];
  PeakCell* chunk = slot;
  if (__builtin_expect(chunk == nullptr, 0) && (chunk = NewChunk(slot)) == nullptr) return nullptr;
  return &chunk[id & (kChunkSize - 1)];
}

// The cell of `b` if it exists (readers create nothing). Lock held.
const PeakCell* FindCell(const Bucket& b) HEAPKIT_REQUIRES(g_tracker.lock) {
  const uint32_t id = b.id.load(std::memory_order_relaxed);
  const PeakCell* chunk = g_tracker.chunks[(id >> kChunkBits) & (kChunks - 1)];
  return chunk != nullptr ? &chunk[id & (kChunkSize - 1)] : nullptr;
}

// The first touch of `c` since a freeze (lock held): its current values are its values then.
__attribute__((noinline)) void Fold(PeakCell* c) {
  c->interval_count = c->count;
  c->interval_bytes = c->bytes;
  if (c->epoch < g_tracker.start_epoch) {
    c->start_count = c->count;
    c->start_bytes = c->bytes;
  }
  c->epoch = g_tracker.epoch;
}

// Lock held: the fold, then the change.
inline __attribute__((always_inline)) void Touch(uint32_t id, int64_t count, int64_t bytes) {
  if (id == 0) return;
  PeakCell* c = CellOf(id);
  if (__builtin_expect(c == nullptr, 0)) return;
  if (__builtin_expect(c->epoch != g_tracker.epoch, 0)) Fold(c);
  c->count += count;
  c->bytes += bytes;
}

// The moment before this was the peak of every rising scope. Lock held.
__attribute__((noinline)) void Freeze() {
  ++g_tracker.epoch;
  if (g_tracker.start.rising) g_tracker.start_epoch = g_tracker.epoch;
  g_tracker.start.rising = false;
  g_tracker.interval.rising = false;
  g_tracker.free_epoch = g_tracker.epoch;
}

// The in-use total is above the interval's peak (and so maybe above the one since start).
__attribute__((noinline)) void NewMaximum() {
  const int64_t now = Ticks();
  ScopePeak& i = g_tracker.interval;
  i.peak = g_tracker.inuse;
  i.peak_ticks = now;
  i.rising = true;
  g_tracker.free_epoch = kRising;
  ScopePeak& s = g_tracker.start;
  if (g_tracker.inuse > s.peak) {
    s.peak = g_tracker.inuse;
    s.peak_ticks = now;
    s.rising = true;
  }
}

// CLOCK_MONOTONIC of `ticks`, from the start's and the present's ticks and times.
int64_t TicksToNs(int64_t ticks) {
  const int64_t now_ns = MonotonicNs(), now_ticks = Ticks();
  const int64_t span_ticks = now_ticks - g_tracker.start_ticks;
  const int64_t span_ns = now_ns - g_tracker.start_ns;
  if (span_ticks <= 0 || span_ns <= 0) return now_ns;
  const long double ns_per_tick = static_cast<long double>(span_ns) / span_ticks;
  const int64_t ns = now_ns - static_cast<int64_t>((now_ticks - ticks) * ns_per_tick);
  return ns < g_tracker.start_ns ? g_tracker.start_ns : ns > now_ns ? now_ns : ns;
}

// The fast paths (peak_tracker.h's inline ones, every allocation and free in exact mode, and
// PeakOnAlloc / PeakOnFree below) take the lock with one exchange and leave every less common
// case — a contended lock, a cell to fold or to create, a new maximum, a freeze — to
// out-of-line functions they tail-call, so that they save no registers. Events that arrive
// while tracking is off (a race with StopPeakTracking) only move cells that the next
// BeginPeakTracking re-seeds.

__attribute__((noinline)) void FreeLocked(uint32_t id, size_t size, int64_t estimate)
    HEAPKIT_RELEASE(g_tracker.lock) {
  if (g_tracker.interval.rising) Freeze();  // the moment before this free was the peak
  Touch(id, -1, -static_cast<int64_t>(size));
  g_tracker.inuse -= estimate;
  g_tracker.lock.Unlock();
}

__attribute__((noinline)) void FreeWaiting(uint32_t id, size_t size, int64_t estimate) {
  g_tracker.lock.Lock();
  FreeLocked(id, size, estimate);
}

}  // namespace

namespace peak_internal {

bool AllocLocked(uint32_t id, size_t size, int64_t estimate) {
  Touch(id, 1, static_cast<int64_t>(size));
  g_tracker.inuse += estimate;
  if (g_tracker.inuse > g_tracker.interval.peak) NewMaximum();
  g_tracker.lock.Unlock();
  return true;
}

bool NewMaximumAndUnlock() {
  NewMaximum();
  g_tracker.lock.Unlock();
  return true;
}

bool AllocWaiting(uint32_t id, size_t size, int64_t estimate) {
  g_tracker.lock.Lock();
  return AllocLocked(id, size, estimate);
}

}  // namespace peak_internal

constinit std::atomic<bool> g_peak_tracking_on{false};

// The by-id paths: leaves (no frame pointer: nothing unwinds through them; gcc's optimize
// attribute, clang has none). The tail calls release the lock in the callee, which the
// thread-safety analysis cannot follow.
#if defined(__clang__)
#define HEAPKIT_PEAK_FAST_PATH HEAPKIT_NO_THREAD_SAFETY_ANALYSIS
#else
#define HEAPKIT_PEAK_FAST_PATH __attribute__((optimize("omit-frame-pointer")))
#endif

HEAPKIT_PEAK_FAST_PATH void PeakOnAlloc(uint32_t bucket_id, size_t size, int64_t estimate) {
  using namespace peak_internal;
  if (__builtin_expect(!g_tracker.lock.TryLock(), 0))
    return (void)AllocWaiting(bucket_id, size, estimate);
  PeakCell* c = ReadyCell(bucket_id, g_tracker.epoch);
  if (__builtin_expect(c == nullptr, 0)) return (void)AllocLocked(bucket_id, size, estimate);
  AddAllocAndUnlock(c, size, estimate);
}

PeakCell* PeakCellFor(uint32_t bucket_id) {
  if (bucket_id == 0) return nullptr;
  internal::SpinLockHolder h(&g_tracker.lock);
  PeakCell* c = CellOf(bucket_id);
  // Written once, under the lock that every caller took before it reads the id (the slow
  // paths of PeakOnAllocAt read it before taking the lock).
  if (c != nullptr && c->id == 0) c->id = bucket_id;
  return c;
}

HEAPKIT_PEAK_FAST_PATH void PeakOnFree(uint32_t bucket_id, size_t size, int64_t estimate) {
  if (__builtin_expect(!PeakOnFreeIfReady(bucket_id, size, estimate), 0))
    FreeWaiting(bucket_id, size, estimate);
}

void BeginPeakTracking(int64_t inuse_estimate) {
  StackTable& table = GlobalStackTable();
  internal::SpinLockHolder h(&g_tracker.lock);
  // Every cell of an earlier run is older than the new epoch, then re-seeded.
  ++g_tracker.epoch;
  g_tracker.start_epoch = g_tracker.epoch;
  // The lambda runs under the lock held here (the analysis does not follow it into the table).
  table.ForEachBucketWithCounts([&](const Bucket& b) HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
    const int64_t n = table.InUseCount(b);
    const int64_t bytes = table.InUseBytes(b);
    PeakCell* c =
        n > 0 ? CellOf(b.id.load(std::memory_order_relaxed)) : const_cast<PeakCell*>(FindCell(b));
    if (c == nullptr) return;
    // Not the id: PeakOnAllocAt reads it without the lock (written once, below).
    c->count = c->interval_count = c->start_count = n;
    c->bytes = c->interval_bytes = c->start_bytes = bytes;
    c->epoch = g_tracker.epoch;
  });
  g_tracker.inuse = inuse_estimate;
  g_tracker.start_ns = MonotonicNs();
  g_tracker.start_ticks = Ticks();
  for (ScopePeak* s : {&g_tracker.start, &g_tracker.interval})
    *s = ScopePeak{inuse_estimate, g_tracker.start_ticks, g_tracker.start_ns, true};
  g_tracker.free_epoch = kRising;
  g_peak_tracking_on.store(true, std::memory_order_relaxed);
}

void StopPeakTracking() {
  internal::SpinLockHolder h(&g_tracker.lock);
  g_peak_tracking_on.store(false, std::memory_order_relaxed);
}

void ResetIntervalPeak() {
  internal::SpinLockHolder h(&g_tracker.lock);
  ScopePeak& i = g_tracker.interval;
  i.peak = g_tracker.inuse;
  i.peak_ticks = Ticks();
  i.from_ns = MonotonicNs();
  i.rising = true;
  g_tracker.free_epoch = kRising;
}

PeakSnapshot TakePeakSnapshot(PeakScope scope) {
  internal::SpinLockHolder h(&g_tracker.lock);
  const bool since_start = scope == PeakScope::kSinceStart;
  const ScopePeak& s = since_start ? g_tracker.start : g_tracker.interval;
  if (s.rising) Freeze();
  return {scope,
          since_start ? g_tracker.start_epoch : g_tracker.epoch,
          s.peak,
          TicksToNs(s.peak_ticks),
          g_tracker.start_ns,
          s.from_ns};
}

bool PeakCounts(const PeakSnapshot& snapshot, const Bucket& bucket, int64_t* count,
                int64_t* bytes) {
  internal::SpinLockHolder h(&g_tracker.lock);
  const bool since_start = snapshot.scope == PeakScope::kSinceStart;
  const uint64_t epoch = since_start ? g_tracker.start_epoch : g_tracker.epoch;
  if (epoch != snapshot.epoch) return false;
  const PeakCell* c = FindCell(bucket);
  int64_t n = 0, b = 0;
  if (c != nullptr) {
    // A newer maximum (rising again) does not matter: cells keep the snapshot's peak until
    // the next freeze, which changes the epoch.
    const bool current = c->epoch < epoch;
    n = current ? c->count : since_start ? c->start_count : c->interval_count;
    b = current ? c->bytes : since_start ? c->start_bytes : c->interval_bytes;
  }
  // Negative: frees of objects recorded before tracking began and not seeded (a start race).
  *count = n > 0 ? n : 0;
  *bytes = b > 0 ? b : 0;
  return true;
}

bool PeakUnchanged(const PeakSnapshot& snapshot) {
  internal::SpinLockHolder h(&g_tracker.lock);
  const uint64_t epoch =
      snapshot.scope == PeakScope::kSinceStart ? g_tracker.start_epoch : g_tracker.epoch;
  return epoch == snapshot.epoch;
}

int64_t ForEachLiveCell(void (*visit)(void* ctx, uint32_t id, int64_t count, int64_t bytes),
                        void* ctx, int64_t* when_ns) {
  internal::SpinLockHolder h(&g_tracker.lock);
  *when_ns = MonotonicNs();
  // Up to the highest id that ever had a cell, not the whole chunks: a tick costs the
  // buckets the tracker has seen (a cache line each), not 4 Ki cells per chunk.
  const uint32_t end = g_tracker.ids_end;
  for (uint32_t k = 0; (k << kChunkBits) < end; ++k) {
    const PeakCell* chunk = g_tracker.chunks[k];
    if (chunk == nullptr) continue;
    const uint32_t left = end - (k << kChunkBits);
    const uint32_t n = left < kChunkSize ? left : kChunkSize;
    for (uint32_t i = 0; i < n; ++i) {
      if (chunk[i].bytes > 0) visit(ctx, (k << kChunkBits) | i, chunk[i].count, chunk[i].bytes);
    }
  }
  return g_tracker.inuse;
}

// Held across fork (analysis off: taken and released in two handlers).
void PeakForkPrepare() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { g_tracker.lock.Lock(); }
void PeakForkDone() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { g_tracker.lock.Unlock(); }

}  // namespace heapkit::prof
