// The lifetime cells (lifetime_table.h).
#include "profiler/time/lifetime_table.h"

#include "alloc/internal/arena.h"
#include "profiler/table/live_object_map.h"

namespace heapkit::prof {
namespace {

struct Cell {
  std::atomic<Cell*> next;  // immutable once published
  Cell* next_made;          // the list of every cell, newest first (readers walk it)
  uint32_t alloc_node;
  uint32_t free_node;
  uint8_t bin;
  LifetimeEnd end;
  LifetimeCounters counters;
};

constexpr int kHeadBits = 16;
constexpr int kStripes = 64;
constexpr size_t kSlab = 128;

struct alignas(64) Stripe {
  std::atomic<bool> lock{false};
  Cell* slab = nullptr;  // cells left in the current slab
  size_t slab_left = 0;
};

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

__thread LifetimeCellCache tls_last_cells[kLifetimeBins] __attribute__((tls_model("initial-exec")));

void CountLifetime(uint32_t alloc_node, uint32_t free_node, int bin, LifetimeEnd end, size_t size,
                   int64_t estimated_bytes) {
  LifetimeCellCache& last = tls_last_cells[static_cast<unsigned>(bin) % kLifetimeBins];
  if (__builtin_expect(last.cell == nullptr || last.alloc_node != alloc_node ||
                           last.free_node != free_node || last.end != end,
                       0)) {
    Cell* c = FindOrMakeCell(alloc_node, free_node, bin, end);
    if (c == nullptr) return;
    last = {&c->counters, alloc_node, free_node, end, 0};
  }
  AddToLifetimeCounters(last.cell, size, estimated_bytes);
}

void CountLifetimeOfBucketSlow(uint64_t bucket_key, uint32_t (*node_of)(uint32_t), int bin,
                               size_t size) {
  const uint32_t bucket_id = BucketIdOfKey(bucket_key);
  const uint32_t free_node = FreeNodeOfKey(bucket_key);
  const LifetimeEnd end = EndOfKey(bucket_key);
  const uint32_t alloc_node = bucket_id != 0 ? node_of(bucket_id) : kNoAllocNode;
  if (alloc_node == kNoAllocNode) return;
  Cell* c = FindOrMakeCell(alloc_node, free_node, bin, end);
  if (c == nullptr) return;
  tls_last_cells[static_cast<unsigned>(bin) % kLifetimeBins] = {&c->counters, alloc_node, free_node,
                                                                end, bucket_key};
  AddExactToLifetimeCounters(&c->counters, size);
}

void ForEachLifetimeCell(void (*visit)(void* ctx, const LifetimeCell& cell), void* ctx) {
  for (Cell* c = g_made.load(std::memory_order_acquire); c != nullptr; c = c->next_made) {
    const int64_t bytes = c->counters.bytes.load(std::memory_order_relaxed);
    visit(ctx, {c->alloc_node, c->free_node, c->bin, c->end,
                c->counters.count.load(std::memory_order_relaxed), bytes,
                bytes + c->counters.estimate_excess.load(std::memory_order_relaxed)});
  }
}

void LifetimeForkPrepare() {
  for (Stripe& s : g_stripes) LockFlag(&s.lock);
}

void LifetimeForkDone() {
  for (Stripe& s : g_stripes) UnlockFlag(&s.lock);
}

}  // namespace heapkit::prof
