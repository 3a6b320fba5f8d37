#include "alloc/internal/runtime_mappings.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>

namespace heapkit::internal {
namespace {

constexpr unsigned kPageShift = 12;
constexpr unsigned kFirstPageBits = 36;  // user addresses below 2^48
constexpr uint64_t kFirstPageMask = (uint64_t{1} << kFirstPageBits) - 1;
constexpr uint64_t kMostPagesPerSlot = (uint64_t{1} << (64 - kFirstPageBits)) - 1;
constexpr size_t kSlotsPerChunk = 4096;  // 32 KiB
constexpr size_t kMaxChunks = 256;       // a million ranges
constexpr size_t kChunkBytes = kSlotsPerChunk * sizeof(uint64_t);

using Slot = std::atomic<uint64_t>;

constinit std::atomic<Slot*> g_chunks[kMaxChunks] = {};
constinit std::atomic<size_t> g_chunk_count{0};  // chunks [0, count) are mapped
constinit std::atomic<size_t> g_free_hint{0};    // a slot index where a free slot may be
constinit std::atomic<size_t> g_slots_used{0};   // no slot at or above this index was claimed
constinit std::atomic<size_t> g_noted{0};
constinit std::atomic<size_t> g_not_noted{0};

uint64_t Encode(uintptr_t first_page, uint64_t pages) {
  return (pages << kFirstPageBits) | first_page;
}
uintptr_t StartOf(uint64_t word) { return (word & kFirstPageMask) << kPageShift; }
uintptr_t EndOf(uint64_t word) { return StartOf(word) + ((word >> kFirstPageBits) << kPageShift); }

// Chunk c, mapped (and noted) on first use; nullptr when the system refuses.
Slot* Chunk(size_t c) {
  Slot* chunk = g_chunks[c].load(std::memory_order_acquire);
  if (chunk != nullptr) return chunk;
  const int saved_errno = errno;
  void* p = mmap(nullptr, kChunkBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  errno = saved_errno;
  if (p == MAP_FAILED) return nullptr;
  Slot* expected = nullptr;
  if (!g_chunks[c].compare_exchange_strong(expected, static_cast<Slot*>(p),
                                           std::memory_order_acq_rel)) {
    munmap(p, kChunkBytes);  // another thread mapped it first
    return expected;
  }
  size_t count = g_chunk_count.load(std::memory_order_relaxed);
  while (count < c + 1 &&
         !g_chunk_count.compare_exchange_weak(count, c + 1, std::memory_order_release)) {
  }
  NoteRuntimeMapping(reinterpret_cast<uintptr_t>(p), kChunkBytes);
  return static_cast<Slot*>(p);
}

Slot* SlotAt(size_t index) {
  Slot* chunk = g_chunks[index / kSlotsPerChunk].load(std::memory_order_acquire);
  return chunk == nullptr ? nullptr : &chunk[index % kSlotsPerChunk];
}

bool TryClaim(size_t index, uint64_t word) {
  Slot* slot = SlotAt(index);
  uint64_t expected = 0;
  if (slot == nullptr || slot->load(std::memory_order_relaxed) != 0 ||
      !slot->compare_exchange_strong(expected, word, std::memory_order_release)) {
    return false;
  }
  g_free_hint.store(index + 1, std::memory_order_relaxed);
  g_noted.fetch_add(1, std::memory_order_relaxed);
  size_t used = g_slots_used.load(std::memory_order_relaxed);
  while (used < index + 1 &&
         !g_slots_used.compare_exchange_weak(used, index + 1, std::memory_order_release)) {
  }
  return true;
}

// One slot for `word`: from the hint on, then from the start, then in a new chunk.
bool Claim(uint64_t word) {
  const size_t in_use = g_chunk_count.load(std::memory_order_acquire) * kSlotsPerChunk;
  size_t hint = g_free_hint.load(std::memory_order_relaxed);
  if (hint > in_use) hint = 0;
  for (size_t i = hint; i < in_use; ++i)
    if (TryClaim(i, word)) return true;
  for (size_t i = 0; i < hint; ++i)
    if (TryClaim(i, word)) return true;
  for (size_t c = in_use / kSlotsPerChunk; c < kMaxChunks; ++c) {
    if (Chunk(c) == nullptr) return false;
    for (size_t i = c * kSlotsPerChunk; i < (c + 1) * kSlotsPerChunk; ++i)
      if (TryClaim(i, word)) return true;
  }
  return false;
}

// Slot `index` was emptied.
void Released(size_t index) {
  g_noted.fetch_sub(1, std::memory_order_relaxed);
  size_t hint = g_free_hint.load(std::memory_order_relaxed);
  while (index < hint &&
         !g_free_hint.compare_exchange_weak(hint, index, std::memory_order_relaxed)) {
  }
}

}  // namespace

void NoteRuntimeMapping(uintptr_t start, size_t bytes) {
  uintptr_t page = start >> kPageShift;
  uint64_t pages = (bytes + (uintptr_t{1} << kPageShift) - 1) >> kPageShift;
  while (pages > 0) {
    const uint64_t n = pages < kMostPagesPerSlot ? pages : kMostPagesPerSlot;
    if (!Claim(Encode(page, n))) g_not_noted.fetch_add(1, std::memory_order_relaxed);
    page += n;
    pages -= n;
  }
}

void ForgetRuntimeMapping(uintptr_t start, size_t bytes) {
  const uintptr_t end =
      start + ((bytes + (uintptr_t{1} << kPageShift) - 1) & ~((uintptr_t{1} << kPageShift) - 1));
  // Every slot ever claimed (a slot claimed meanwhile holds another range).
  const size_t in_use = g_slots_used.load(std::memory_order_acquire);
  for (size_t i = 0; i < in_use; ++i) {
    Slot* slot = SlotAt(i);
    if (slot == nullptr) continue;
    uint64_t word = slot->load(std::memory_order_acquire);
    bool upper_noted = false;
    for (;;) {
      if (word == 0) break;
      const uintptr_t s = StartOf(word), e = EndOf(word);
      if (e <= start || s >= end) break;  // no overlap
      uint64_t kept = 0;                  // what stays in this slot
      if (s < start) kept = Encode(s >> kPageShift, (start - s) >> kPageShift);
      if (e > end) {
        if (kept == 0) {
          kept = Encode(end >> kPageShift, (e - end) >> kPageShift);
        } else if (!upper_noted) {
          NoteRuntimeMapping(end, e - end);  // the part above the hole, before the slot shrinks
          upper_noted = true;
        }
      }
      if (slot->compare_exchange_weak(word, kept, std::memory_order_acq_rel)) {
        if (kept == 0) Released(i);
        break;
      }
    }
  }
}

size_t CopyRuntimeMappings(RuntimeMapping* out, size_t capacity) {
  size_t n = 0;
  const size_t chunks = g_chunk_count.load(std::memory_order_acquire);
  for (size_t c = 0; c < chunks; ++c) {
    const Slot* chunk = g_chunks[c].load(std::memory_order_acquire);
    if (chunk == nullptr) continue;
    for (size_t i = 0; i < kSlotsPerChunk; ++i) {
      const uint64_t word = chunk[i].load(std::memory_order_acquire);
      if (word == 0) continue;
      if (n < capacity) out[n] = RuntimeMapping{StartOf(word), EndOf(word)};
      ++n;
    }
  }
  return n;
}

size_t RuntimeMappingCount() { return g_noted.load(std::memory_order_relaxed); }

size_t RuntimeMappingsNotNoted() { return g_not_noted.load(std::memory_order_relaxed); }

}  // namespace heapkit::internal
