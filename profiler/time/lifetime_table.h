// Lifetimes of sampled objects (HEAP_PROFILE_LIFETIMES): for every recorded object that is
// freed, its lifetime (free time - birth time, object_birth.h) is counted in one cell of
// (allocation stack, free stack, lifetime bin, freed by the allocating thread or not).
// Objects still live are counted at each dump from the live records instead (censored: their
// age so far; object_times_dump.h), so nothing here is per object.
//
// Bins are decades from 1 us: [0, 1 us), [1 us, 10 us), ..., [100 s, 1000 s), [1000 s, 1 h),
// [1 h, inf) — 12 bins; bin i > 0 starts at kLifetimeBinLowerNs[i].
// A cell counts raw sampled objects and bytes and their un-sampled estimate (the sum of each
// object's own weight, sample_weight.h), so that a histogram of estimated bytes is unbiased
// whatever the mix of sizes in a cell.
//
// Memory and locks: cells (56 bytes) from the metadata arena, never freed, in 64 Ki hash
// chains published by release stores, and on one list of every cell that readers walk (so a
// dump costs the cells, not the heads); readers take no lock. Counters take relaxed atomic
// adds; a new cell is made under one of 64 striped spin locks (leaf locks; nothing is called
// while one is held but the arena). Only sampled frees reach it: a thread's last cell per bin
// is remembered, so a free from the same call sites as before costs a compare and the adds
// (exact mode: every free), anything else a lookup in its chain.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

inline constexpr int kLifetimeBins = 12;
inline constexpr int64_t kLifetimeBinLowerNs[kLifetimeBins] = {
    0,         1000,       10000,       100000,       1000000,       10000000,
    100000000, 1000000000, 10000000000, 100000000000, 1000000000000, 3600000000000};

// The bin of 2^b for each b: a lifetime in [2^b, 2^(b+1)) is in that bin or the next (a
// factor of 2 spans at most one decade's lower bound), so a bin is one bit scan, one table
// load and one compare instead of a walk up the decades.
struct LifetimeBinOfBit {
  int8_t bin[64];
  constexpr LifetimeBinOfBit() : bin() {
    for (int b = 0; b < 64; ++b) {
      const int64_t low = b == 63 ? INT64_MAX : int64_t{1} << b;
      int i = 0;
      while (i + 1 < kLifetimeBins && low >= kLifetimeBinLowerNs[i + 1]) ++i;
      bin[b] = static_cast<int8_t>(i);
    }
  }
};
inline constexpr LifetimeBinOfBit kLifetimeBinOfBit;

// The bin of a lifetime (negative lifetimes, from a clock read on another CPU a little earlier,
// count as 0).
inline int LifetimeBin(int64_t ns) {
  if (ns <= 0) return 0;
  const int bin = kLifetimeBinOfBit.bin[63 - __builtin_clzll(static_cast<uint64_t>(ns))];
  return bin + 1 < kLifetimeBins && ns >= kLifetimeBinLowerNs[bin + 1] ? bin + 1 : bin;
}

// How a counted object ended: freed on its allocating thread, freed on another, or still live
// at the dump (censored; counted by the dump, never stored here).
enum class LifetimeEnd : uint8_t { kSameThread = 0, kOtherThread = 1, kLive = 2 };

struct LifetimeCell {
  uint32_t alloc_node;  // trace-tree node of the allocation stack
  uint32_t free_node;   // of the free stack; kNoFreeStack when not captured
  uint8_t bin;
  LifetimeEnd end;
  int64_t count;
  int64_t bytes;            // raw (sampled) bytes
  int64_t estimated_bytes;  // un-sampled
};

inline constexpr uint32_t kNoFreeStack = ~0u;

// Counts a freed object of `size` raw bytes standing for `estimated_bytes`.
void CountLifetime(uint32_t alloc_node, uint32_t free_node, int bin, LifetimeEnd end, size_t size,
                   int64_t estimated_bytes);

// A cell's counters (relaxed adds: any writer adds to a published cell without its chain's
// lock, which orders insertions only; readers see whole values). The estimate is kept as its
// excess over the raw bytes, so that an object that stands for itself alone (exact mode: every
// slot record) costs two adds, not three.
struct LifetimeCounters {
  std::atomic<int64_t> count;
  std::atomic<int64_t> bytes;
  std::atomic<int64_t> estimate_excess;  // sum of (estimated bytes - raw bytes)
};
// An object of `size` raw bytes that stands for itself alone (its estimate is its size).
inline void AddExactToLifetimeCounters(LifetimeCounters* c, size_t size) {
  c->count.fetch_add(1, std::memory_order_relaxed);
  c->bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
}
inline void AddToLifetimeCounters(LifetimeCounters* c, size_t size, int64_t estimated_bytes) {
  AddExactToLifetimeCounters(c, size);
  if (const int64_t excess = estimated_bytes - static_cast<int64_t>(size); excess != 0)
    c->estimate_excess.fetch_add(excess, std::memory_order_relaxed);
}

// This thread's last cell per bin (a thread frees mostly from a few call sites, so the key of
// its next free usually differs from an earlier one by the bin alone): a hit costs a compare
// and the adds, no hash, chain walk or lock. Cells are never freed, so an entry stays valid for
// the life of the process (and in a forked child).
struct LifetimeCellCache {
  LifetimeCounters* cell = nullptr;
  uint32_t alloc_node = 0, free_node = 0;
  LifetimeEnd end = LifetimeEnd::kSameThread;
  // LifetimeBucketKey of the cell when it was found by bucket (CountLifetimeOfBucket), else 0.
  uint64_t bucket_key = 0;
};
// (bucket id, free node, end) in one word: bucket ids are below 2^30 (stack_table.h), never 0.
inline uint64_t LifetimeBucketKey(uint32_t bucket_id, uint32_t free_node, LifetimeEnd end) {
  return (uint64_t{free_node} << 32) | (uint64_t(end) << 30) | bucket_id;
}
inline uint32_t BucketIdOfKey(uint64_t key) {
  return static_cast<uint32_t>(key) & ((1u << 30) - 1);
}
inline uint32_t FreeNodeOfKey(uint64_t key) { return static_cast<uint32_t>(key >> 32); }
inline LifetimeEnd EndOfKey(uint64_t key) { return static_cast<LifetimeEnd>((key >> 30) & 3); }
extern __thread LifetimeCellCache tls_last_cells[kLifetimeBins]
    __attribute__((tls_model("initial-exec")));

// CountLifetime for an allocation known by its bucket id that stands for itself alone (exact
// mode's slot records: estimated at their size): the thread's remembered cell of the bin serves
// when the bucket id, free node and end match; otherwise node_of(bucket_id) names the
// allocation stack (kNoAllocNode: not counted).
inline constexpr uint32_t kNoAllocNode = ~0u;
// The slow path takes the cell's key (LifetimeBucketKey) whole, so that the inline part
// reaches it by a tail call.
void CountLifetimeOfBucketSlow(uint64_t bucket_key, uint32_t (*node_of)(uint32_t bucket_id),
                               int bin, size_t size);
inline void CountLifetimeOfBucket(uint32_t bucket_id, uint32_t (*node_of)(uint32_t bucket_id),
                                  uint32_t free_node, int bin, LifetimeEnd end, size_t size) {
  const LifetimeCellCache& last = tls_last_cells[bin];  // LifetimeBin: below kLifetimeBins
  const uint64_t key = LifetimeBucketKey(bucket_id, free_node, end);
  if (__builtin_expect(last.bucket_key == key, 1))
    return AddExactToLifetimeCounters(last.cell, size);
  CountLifetimeOfBucketSlow(key, node_of, bin, size);
}

// Visits every cell (a snapshot of its counters; cells added meanwhile may be missed).
void ForEachLifetimeCell(void (*visit)(void* ctx, const LifetimeCell& cell), void* ctx);

// Fork: every stripe lock taken / released.
void LifetimeForkPrepare();
void LifetimeForkDone();

}  // namespace heapkit::prof
