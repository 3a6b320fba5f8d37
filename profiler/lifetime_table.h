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

// The bin of a lifetime (negative lifetimes, from a clock read on another CPU a little earlier,
// count as 0).
int LifetimeBin(int64_t ns);

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

// Visits every cell (a snapshot of its counters; cells added meanwhile may be missed).
void ForEachLifetimeCell(void (*visit)(void* ctx, const LifetimeCell& cell), void* ctx);

// Fork: every stripe lock taken / released.
void LifetimeForkPrepare();
void LifetimeForkDone();

}  // namespace heapkit::prof
