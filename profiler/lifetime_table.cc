// The lifetime cells (lifetime_table.h).
#include "profiler/lifetime_table.h"

#include "alloc/internal/arena.h"
#include "profiler/live_object_map.h"

namespace heapkit::prof {
namespace {

struct Cell {
  std::atomic<Cell*> next;  // immutable once published
  Cell* next_made;          // the list of every cell, newest first (readers walk it)
  uint32_t alloc_node;
  uint32_t free_node;
  uint8_t bin;
  LifetimeEnd end;
  std::atomic<int64_t> count;
  std::atomic<int64_t> bytes;
  std::atomic<int64_t> estimated_bytes;
};

constexpr int kHeadBits = 16;
constexpr int kStripes = 64;
constexpr size_t kSlab = 128;

struct alignas(64) Stripe {
  std::atomic<bool> lock{false};
  Cell* slab = nullptr;  // cells left in the current slab
  size_t slab_left = 0;
};

// This thread's last cell per bin (a thread frees mostly from a few call sites, so the key
// of its next free usually differs from an earlier one by the bin alone): a hit costs a
// compare and the adds, no hash, chain walk or lock. Cells are never freed, so an entry stays
// valid for the life of the process (and in a forked child).
struct CachedCell {
  Cell* cell = nullptr;
  uint32_t alloc_node = 0, free_node = 0;
  LifetimeEnd end = LifetimeEnd::kSameThread;
};
__thread CachedCell tls_last_cells[kLifetimeBins] __attribute__((tls_model("initial-exec")));

std::atomic<std::atomic<Cell*>*> g_heads{nullptr};
std::atomic<Cell*> g_made{nullptr};  // every cell, so that readers do not scan the heads
Stripe g_stripes[kStripes];

uint64_t HashKey(uint32_t alloc_node, uint32_t free_node, int bin, LifetimeEnd end) {
  uint64_t k =
      (uint64_t{alloc_node} << 32) ^ free_node ^ (uint64_t(bin) << 24) ^ (uint64_t(end) << 20);
  k *= 0x9e3779b97f4a7c15ULL;
  return k ^ (k >> 31);
}

std::atomic<Cell*>* Heads() {
  std::atomic<Cell*>* heads = g_heads.load(std::memory_order_acquire);
  if (heads != nullptr) return heads;
  auto* fresh = static_cast<std::atomic<Cell*>*>(
      internal::ArenaAlloc(sizeof(std::atomic<Cell*>) << kHeadBits, 4096));
  if (fresh == nullptr) return nullptr;
  // A loser's array stays in the arena unused (untouched pages: no resident cost).
  if (g_heads.compare_exchange_strong(heads, fresh, std::memory_order_acq_rel)) return fresh;
  return heads;
}

// The bin of 2^b for each b: a lifetime in [2^b, 2^(b+1)) is in that bin or the next (a
// factor of 2 spans at most one decade's lower bound), so a bin is one bit scan, one table
// load and one compare instead of a walk up the decades.
struct BinOfBit {
  int8_t bin[64];
  constexpr BinOfBit() : bin() {
    for (int b = 0; b < 64; ++b) {
      const int64_t low = b == 63 ? INT64_MAX : int64_t{1} << b;
      int i = 0;
      while (i + 1 < kLifetimeBins && low >= kLifetimeBinLowerNs[i + 1]) ++i;
      bin[b] = static_cast<int8_t>(i);
    }
  }
};
constexpr BinOfBit kBinOfBit;

}  // namespace

int LifetimeBin(int64_t ns) {
  if (ns <= 0) return 0;
  const int bin = kBinOfBit.bin[63 - __builtin_clzll(static_cast<uint64_t>(ns))];
  return bin + 1 < kLifetimeBins && ns >= kLifetimeBinLowerNs[bin + 1] ? bin + 1 : bin;
}

namespace {

// Relaxed adds: any writer adds to a published cell without its chain's lock (the lock
// orders insertions only); readers see whole values.
inline void AddTo(Cell* c, size_t size, int64_t estimated_bytes) {
  c->count.fetch_add(1, std::memory_order_relaxed);
  c->bytes.fetch_add(static_cast<int64_t>(size), std::memory_order_relaxed);
  c->estimated_bytes.fetch_add(estimated_bytes, std::memory_order_relaxed);
}

// The cell of the key, found or made under its chain's lock (nullptr: arena exhausted).
__attribute__((noinline)) Cell* FindOrMakeCell(uint32_t alloc_node, uint32_t free_node, int bin,
                                               LifetimeEnd end) {
  std::atomic<Cell*>* heads = Heads();
  if (heads == nullptr) return nullptr;
  const uint64_t h = HashKey(alloc_node, free_node, bin, end);
  const size_t index = h & ((size_t{1} << kHeadBits) - 1);
  Stripe& s = g_stripes[index % kStripes];  // the chain's lock
  LockFlag(&s.lock);
  Cell* c = heads[index].load(std::memory_order_relaxed);
  while (c != nullptr && !(c->alloc_node == alloc_node && c->free_node == free_node &&
                           c->bin == bin && c->end == end))
    c = c->next.load(std::memory_order_relaxed);
  if (c == nullptr) {
    if (s.slab_left == 0) {
      s.slab = static_cast<Cell*>(internal::ArenaAlloc(sizeof(Cell) * kSlab, 64));
      s.slab_left = s.slab != nullptr ? kSlab : 0;
    }
    if (s.slab_left == 0) {  // arena exhausted: not counted
      UnlockFlag(&s.lock);
      return nullptr;
    }
    c = s.slab++;
    --s.slab_left;
    c->alloc_node = alloc_node;
    c->free_node = free_node;
    c->bin = static_cast<uint8_t>(bin);
    c->end = end;
    c->next.store(heads[index].load(std::memory_order_relaxed), std::memory_order_relaxed);
    heads[index].store(c, std::memory_order_release);
    Cell* made = g_made.load(std::memory_order_relaxed);
    do {
      c->next_made = made;
    } while (!g_made.compare_exchange_weak(made, c, std::memory_order_release,
                                           std::memory_order_relaxed));
  }
  UnlockFlag(&s.lock);
  return c;
}

}  // namespace

void CountLifetime(uint32_t alloc_node, uint32_t free_node, int bin, LifetimeEnd end, size_t size,
                   int64_t estimated_bytes) {
  CachedCell& last = tls_last_cells[static_cast<unsigned>(bin) % kLifetimeBins];
  if (__builtin_expect(last.cell == nullptr || last.alloc_node != alloc_node ||
                           last.free_node != free_node || last.end != end,
                       0)) {
    Cell* c = FindOrMakeCell(alloc_node, free_node, bin, end);
    if (c == nullptr) return;
    last = {c, alloc_node, free_node, end};
  }
  AddTo(last.cell, size, estimated_bytes);
}

void ForEachLifetimeCell(void (*visit)(void* ctx, const LifetimeCell& cell), void* ctx) {
  for (Cell* c = g_made.load(std::memory_order_acquire); c != nullptr; c = c->next_made) {
    visit(ctx, {c->alloc_node, c->free_node, c->bin, c->end,
                c->count.load(std::memory_order_relaxed), c->bytes.load(std::memory_order_relaxed),
                c->estimated_bytes.load(std::memory_order_relaxed)});
  }
}

void LifetimeForkPrepare() {
  for (Stripe& s : g_stripes) LockFlag(&s.lock);
}

void LifetimeForkDone() {
  for (Stripe& s : g_stripes) UnlockFlag(&s.lock);
}

}  // namespace heapkit::prof
