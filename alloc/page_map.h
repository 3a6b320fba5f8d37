// Radix page map: PageId -> (Span*, info) over the 48-bit address space.
//
// Two levels: a root of 2^17 leaf pointers (1 MiB of zero-initialised .bss, touched only where
// used) and leaves of 2^18 pages (= 2 GiB of address space each), mmapped on demand and never
// freed. Each leaf holds the Span* of every page and a 32-bit `info` word used by the free fast
// path so that it need not touch the span:
//   bits 0..6  size class (0: not a small object / not in use)
//   bit  7     the span holds (or held) a sampled object -> frees take the slow path
//   bits 8..31 phase: (page index within span * kPageSize) mod object size, so that an address
//              a is an object start iff ((a & kPageMask) + phase) % size == 0.
// Writers hold the page heap lock (or the central lock for the sampled bit); readers are
// lock-free (plain aligned loads; stale values only happen for pages that the reader does not
// own, i.e. for invalid frees).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::alloc {

struct Span;

class PageMap {
 public:
  static constexpr int kLeafBits = 18;
  static constexpr int kRootBits = kAddressBits - static_cast<int>(kPageShift) - kLeafBits;
  static constexpr size_t kLeafLength = size_t{1} << kLeafBits;
  static constexpr size_t kRootLength = size_t{1} << kRootBits;
  static constexpr uint32_t kSampledBit = 0x80;
  static constexpr uint32_t kClassMask = 0x7f;

  struct Leaf {
    uint32_t info[kLeafLength];
    Span* span[kLeafLength];
  };

  constexpr PageMap() = default;

  // Addresses at or above 2^48 alias into the table (one AND instead of a compare and branch);
  // such pointers are never heap pointers on x86-64/aarch64 user space, and a caller freeing
  // one faults on the first write instead of corrupting anything.
  HEAPKIT_ALWAYS_INLINE uint32_t Info(uintptr_t address) const {
    uintptr_t root = (address >> (kPageShift + kLeafBits)) & (kRootLength - 1);
    const Leaf* leaf = root_[root];
    if (HEAPKIT_UNLIKELY(leaf == nullptr)) return 0;
    return leaf->info[(address >> kPageShift) & (kLeafLength - 1)];
  }
  // The info array of the leaf covering address (nullptr if none) and the index in it: lets
  // the free fast path branch to its slow path directly on a missing leaf.
  HEAPKIT_ALWAYS_INLINE const uint32_t* InfoLeaf(uintptr_t address) const {
    const Leaf* leaf = root_[(address >> (kPageShift + kLeafBits)) & (kRootLength - 1)];
    return leaf == nullptr ? nullptr : leaf->info;
  }
  static HEAPKIT_ALWAYS_INLINE size_t LeafIndex(uintptr_t address) {
    return (address >> kPageShift) & (kLeafLength - 1);
  }
  Span* GetSpan(PageId page) const {
    uintptr_t root = page >> kLeafBits;
    if (root >= kRootLength) return nullptr;
    const Leaf* leaf = root_[root];
    if (leaf == nullptr) return nullptr;
    return __atomic_load_n(&leaf->span[page & (kLeafLength - 1)], __ATOMIC_RELAXED);
  }
  uint32_t GetInfo(PageId page) const { return Info(page << kPageShift); }

  // Makes sure leaves exist for [page, page + n). False if out of range or out of memory.
  bool Ensure(PageId page, Length n) {
    for (PageId p = page >> kLeafBits; p <= (page + n - 1) >> kLeafBits; ++p) {
      if (p >= kRootLength) return false;
      if (root_[p] == nullptr) {
        void* leaf = internal::SystemAlloc(sizeof(Leaf), 4096);
        if (leaf == nullptr) return false;
        bytes_ += sizeof(Leaf);
        __atomic_store_n(&root_[p], static_cast<Leaf*>(leaf), __ATOMIC_RELEASE);
      }
    }
    return true;
  }
  // Precondition: Ensure() covered the page.
  void Set(PageId page, Span* span, uint32_t info) {
    Leaf* leaf = root_[page >> kLeafBits];
    __atomic_store_n(&leaf->span[page & (kLeafLength - 1)], span, __ATOMIC_RELAXED);
    __atomic_store_n(&leaf->info[page & (kLeafLength - 1)], info, __ATOMIC_RELAXED);
  }
  void SetInfo(PageId page, uint32_t info) {
    Leaf* leaf = root_[page >> kLeafBits];
    __atomic_store_n(&leaf->info[page & (kLeafLength - 1)], info, __ATOMIC_RELAXED);
  }

  // Calls fn(page, span) for every page whose entry has a span, in address order.
  template <class Fn>
  void ForEachEntry(Fn&& fn) const {
    for (size_t r = 0; r < kRootLength; ++r) {
      const Leaf* leaf = root_[r];
      if (leaf == nullptr) continue;
      for (size_t i = 0; i < kLeafLength; ++i) {
        if (leaf->span[i] != nullptr) fn((PageId{r} << kLeafBits) | i, leaf->span[i]);
      }
    }
  }

  size_t metadata_bytes() const { return bytes_; }

 private:
  Leaf* root_[kRootLength] = {};
  size_t bytes_ = 0;
};

}  // namespace heapkit::alloc
