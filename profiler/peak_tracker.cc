// The peak tracker (peak_tracker.h: the mechanism and its invariants).
#include "profiler/peak_tracker.h"

#include <time.h>

#include <atomic>

#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"

namespace heapkit::prof {
namespace {

// CLOCK_MONOTONIC in nanoseconds (the tracker is built without the profiler's control files,
// for its unit test; the same clock as profiler_config.h's NowNs).
int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct PeakCell {
  int64_t count, bytes;        // current raw in-use
  int64_t at_count, at_bytes;  // raw in-use at the peak of `epoch`
  uint64_t epoch;
};

constexpr int kChunkBits = 14;
constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;
constexpr uint32_t kChunks = 4096;  // as many ids as the stack table has

// Everything below is guarded by lock, except `on` (relaxed reads on the sampling paths) and
// the chunk pointers (written once, under lock; read under lock).
struct Tracker {
  internal::SpinLock lock;
  std::atomic<bool> on{false};
  int64_t inuse HEAPKIT_GUARDED_BY(lock) = 0;  // estimated bytes
  int64_t peak HEAPKIT_GUARDED_BY(lock) = 0;
  int64_t peak_ns HEAPKIT_GUARDED_BY(lock) = 0;
  int64_t start_ns HEAPKIT_GUARDED_BY(lock) = 0;
  uint64_t epoch HEAPKIT_GUARDED_BY(lock) = 1;  // cells start at 0: older than every epoch
  bool rising HEAPKIT_GUARDED_BY(lock) = false;
  PeakCell* chunks[kChunks] HEAPKIT_GUARDED_BY(lock) = {};
};
constinit Tracker g_tracker;

// A new chunk of cells for `chunk` (nullptr on arena exhaustion). Lock held.
__attribute__((noinline)) PeakCell* NewChunk(PeakCell*& chunk) {
  chunk = static_cast<PeakCell*>(internal::ArenaAlloc(sizeof(PeakCell) * kChunkSize, 4096));
  return chunk;  // zeroed by the arena
}

// The cell of `b`, nullptr on arena exhaustion (the bucket is then not tracked). Lock held.
// Inline: the sampling paths (every allocation in exact mode) pay a few instructions.
inline __attribute__((always_inline)) PeakCell* CellOf(const Bucket& b)
    HEAPKIT_REQUIRES(g_tracker.lock) {
  const uint32_t id = b.id.load(std::memory_order_relaxed);
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

// Lock held: the fold, then the change.
inline __attribute__((always_inline)) void Touch(const Bucket& b, int64_t count, int64_t bytes)
    HEAPKIT_REQUIRES(g_tracker.lock) {
  PeakCell* c = CellOf(b);
  if (c == nullptr) return;
  if (c->epoch < g_tracker.epoch) {
    c->at_count = c->count;
    c->at_bytes = c->bytes;
    c->epoch = g_tracker.epoch;
  }
  c->count += count;
  c->bytes += bytes;
}

void Freeze() HEAPKIT_REQUIRES(g_tracker.lock) {
  ++g_tracker.epoch;
  g_tracker.rising = false;
}

void NewMaximumIfAbove() HEAPKIT_REQUIRES(g_tracker.lock) {
  if (g_tracker.inuse > g_tracker.peak) {
    g_tracker.peak = g_tracker.inuse;
    g_tracker.peak_ns = MonotonicNs();
    g_tracker.rising = true;
  }
}

}  // namespace

bool PeakTrackingOn() { return g_tracker.on.load(std::memory_order_relaxed); }

void PeakOnAlloc(const Bucket* bucket, size_t size, int64_t estimate) {
  internal::SpinLockHolder h(&g_tracker.lock);
  if (!g_tracker.on.load(std::memory_order_relaxed)) return;
  if (bucket != nullptr) Touch(*bucket, 1, static_cast<int64_t>(size));
  g_tracker.inuse += estimate;
  NewMaximumIfAbove();
}

void PeakOnFree(const Bucket* bucket, size_t size, int64_t estimate) {
  internal::SpinLockHolder h(&g_tracker.lock);
  if (!g_tracker.on.load(std::memory_order_relaxed)) return;
  if (g_tracker.rising) Freeze();  // the moment before this free was the peak
  if (bucket != nullptr) Touch(*bucket, -1, -static_cast<int64_t>(size));
  g_tracker.inuse -= estimate;
}

void BeginPeakTracking(int64_t inuse_estimate) {
  StackTable& table = GlobalStackTable();
  internal::SpinLockHolder h(&g_tracker.lock);
  Freeze();  // every cell of an earlier run is older than the new epoch, then re-seeded
  // The lambda runs under the lock held here (the analysis does not follow it into the table).
  table.ForEachBucketWithCounts([&](const Bucket& b) HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
    const int64_t n = table.InUseCount(b);
    const int64_t bytes = table.InUseBytes(b);
    PeakCell* c = n > 0 ? CellOf(b) : const_cast<PeakCell*>(FindCell(b));
    if (c == nullptr) return;
    *c = PeakCell{n, bytes, n, bytes, g_tracker.epoch};
  });
  g_tracker.inuse = inuse_estimate;
  g_tracker.peak = inuse_estimate;
  g_tracker.start_ns = g_tracker.peak_ns = MonotonicNs();
  g_tracker.rising = true;
  g_tracker.on.store(true, std::memory_order_relaxed);
}

void StopPeakTracking() {
  internal::SpinLockHolder h(&g_tracker.lock);
  g_tracker.on.store(false, std::memory_order_relaxed);
}

PeakSnapshot TakePeakSnapshot() {
  internal::SpinLockHolder h(&g_tracker.lock);
  if (g_tracker.rising) Freeze();
  return {g_tracker.epoch, g_tracker.peak, g_tracker.peak_ns, g_tracker.start_ns};
}

bool PeakCounts(const PeakSnapshot& snapshot, const Bucket& bucket, int64_t* count,
                int64_t* bytes) {
  internal::SpinLockHolder h(&g_tracker.lock);
  if (g_tracker.epoch != snapshot.epoch) return false;
  const PeakCell* c = FindCell(bucket);
  int64_t n = 0, b = 0;
  if (c != nullptr) {
    // A newer maximum (rising again) does not matter: cells keep the snapshot's peak until
    // the next freeze, which changes the epoch.
    const bool current = c->epoch < g_tracker.epoch;
    n = current ? c->count : c->at_count;
    b = current ? c->bytes : c->at_bytes;
  }
  // Negative: frees of objects recorded before tracking began and not seeded (a start race).
  *count = n > 0 ? n : 0;
  *bytes = b > 0 ? b : 0;
  return true;
}

bool PeakUnchanged(const PeakSnapshot& snapshot) {
  internal::SpinLockHolder h(&g_tracker.lock);
  return g_tracker.epoch == snapshot.epoch;
}

// Held across fork (analysis off: taken and released in two handlers).
void PeakForkPrepare() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { g_tracker.lock.Lock(); }
void PeakForkDone() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { g_tracker.lock.Unlock(); }

}  // namespace heapkit::prof
