// Return addresses by 32-bit index, so that a trace-tree node (trace_tree.h) stores 4 bytes for
// its pc instead of 8. A process has few distinct return addresses (thousands, at most a few
// hundred thousand) against up to millions of nodes, so the dictionary stays small and hot.
//
// Indices are 1, 2, … in order of first use (0 is never handed out: it ends chains). Entries
// live in fixed-size chunks found by index, never moved or freed. Lookup of a pc is lock-free:
// a fixed array of chain heads (indices), an entry's link written before the entry is
// published by the release store of its head; insertion takes the one lock and re-checks the
// chain. Memory: the internal metadata arena only (heads reserve 256 KiB, resident only where
// touched; 16 bytes per distinct pc). Readers in a stopped world never wait: an index reachable
// from a node or a head names a complete entry. Fork: ForkPrepare() takes the lock,
// ForkParent()/ForkChild() release it.
#pragma once

#include <atomic>
#include <cstdint>

#include "alloc/internal/spin_lock.h"

namespace heapkit::prof {

class PcDictionary {
 public:
  static constexpr uint32_t kNone = ~0u;

  // Allocates the head array from the arena (once). False on OOM.
  bool Init();

  // The index of `pc`, created if missing. kNone on arena OOM.
  uint32_t IndexOf(uintptr_t pc);
  // The pc of an index handed out by IndexOf (0 for an index never handed out).
  uintptr_t PcAt(uint32_t index) const {
    const Entry* e = EntryAt(index);
    return e != nullptr ? e->pc : 0;
  }

  void ForkPrepare() HEAPKIT_ACQUIRE(lock_) { lock_.Lock(); }
  void ForkParent() HEAPKIT_RELEASE(lock_) { lock_.Unlock(); }

 private:
  struct Entry {
    uintptr_t pc;
    uint32_t next;  // next index in the chain (0: end); immutable once published
  };
  static constexpr int kHeadBits = 16;
  static constexpr int kChunkBits = 14;
  static constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;
  static constexpr uint32_t kChunks = 4096;  // 64 Mi distinct pcs

  static uint32_t HeadIndex(uintptr_t pc) {
    uint64_t h = pc * 0x9e3779b97f4a7c15ULL;
    return static_cast<uint32_t>(h >> (64 - kHeadBits));
  }
  const Entry* EntryAt(uint32_t index) const {
    if (index == 0 || index >= kChunks * kChunkSize) return nullptr;
    Entry* chunk = chunks_[index >> kChunkBits].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[index & (kChunkSize - 1)];
  }
  uint32_t Find(uint32_t first, uintptr_t pc) const;

  std::atomic<uint32_t>* heads_ = nullptr;
  uint32_t count_ HEAPKIT_GUARDED_BY(lock_) = 0;  // entries handed out
  std::atomic<Entry*> chunks_[kChunks] = {};
  internal::SpinLock lock_;
};

}  // namespace heapkit::prof
