// Radix page map: PageId -> (Span*, info) over the 48-bit address space.
//
// Two levels: a root of 2^15 leaf pointers (256 KiB of zero-initialised .bss, touched only where
// used) and leaves of 2^20 pages (= 8 GiB of address space each; 16 MiB of address space,
// touched 16 bytes per heap page), mmapped on demand and never freed. Each leaf holds, per page,
// the Span* and one 64-bit `entry` that lets the free fast path validate and classify a pointer
// without touching the span:
//   info   12 bits: bit 4 kSampledBit (the span holds a live sampled object -> frees take the
//          slow path), bits 5..11 the size class (0: not a small object / not in use). info is
//          the byte offset of the class's entry in SizeMap's free-magic table and of its list
//          in a thread cache (class * 32), so the fast path uses it unscaled;
//   entry  = info << 52 | ((phase - page address) mod 2^52), where phase = (page index within
//          span * kPageSize) mod object size. info = entry >> 52, and for an address a in the
//          page x = a + entry has (a & kPageMask) + phase, the offset in the span's object grid,
//          in its low 52 bits (a carry may reach bit 52); the free-magic value has its low 12
//          bits clear, so x * magic drops bits 52..63 and tests divisibility (size_classes.h).
// The hot leaf: the first leaf created (the one the heap starts in; the heap grows from there
// and rarely leaves an 8 GiB leaf). Its root index and biased root entry are set once, before
// any pointer into it can be freed, and never change, so the free fast path reads both without
// synchronisation and looks up a pointer of the hot leaf with one load (the entry), no root
// load in the dependency chain from the pointer to its list; other pointers take one more jump.
// Each leaf records the range of page indexes ever passed to Ensure, so that ForEachEntry scans
// what was used, not the whole leaf.
// Root entries are stored biased (leaf address - first page of the leaf * 8), so that the entry
// of page p is at root + p * 8 without masking p (0 = no leaf).
// Writers hold the page heap lock (or a sampled_spans stripe lock for kSampledBit); readers are
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
  static constexpr int kLeafBits = 20;
  static constexpr int kRootBits = kAddressBits - static_cast<int>(kPageShift) - kLeafBits;
  static constexpr size_t kLeafLength = size_t{1} << kLeafBits;
  static constexpr size_t kRootLength = size_t{1} << kRootBits;
  static constexpr uint32_t kSampledBit = 0x10;
  static constexpr int kClassShift = 5;  // info = class << kClassShift | sampled bit

  static constexpr int kInfoShift = 52;

  struct Leaf {
    uint64_t entry[kLeafLength];  // first: the biased root entry addresses entry[]
    Span* span[kLeafLength];
    uint32_t used_begin;  // [used_begin, used_end): the indexes Ensure() covered so far
    uint32_t used_end;
  };

  static constexpr uint32_t InfoForClass(uint32_t cls) { return cls << kClassShift; }
  static constexpr uint32_t ClassOf(uint32_t info) { return (info >> kClassShift) & 0x7f; }

  constexpr PageMap() = default;

  // The hot leaf (see above). InHotLeaf(p): p is a page of the hot leaf (false before the
  // first leaf exists); then hot_root() is the leaf's biased root entry. Plain loads, like
  // RootOf's: a thread can only hold a valid pointer into the leaf after the leaf was created
  // and published under the page-heap lock (rule 4 in allocator.h covers stale reads for
  // pointers the caller does not own).
  HEAPKIT_ALWAYS_INLINE bool InHotLeaf(uintptr_t page) const {
    return (page >> kLeafBits) + 1 == hot_tag_;
  }
  HEAPKIT_ALWAYS_INLINE uintptr_t hot_root() const { return hot_root_; }

  // Fast-path lookup: the biased root entry of page (0 if no leaf). Addresses at or above
  // 2^48 alias into the table (one AND instead of a compare and branch); such pointers are
  // never heap pointers on x86-64/aarch64 user space, and a caller freeing one faults on the
  // first write to it.
  HEAPKIT_ALWAYS_INLINE uintptr_t RootOf(uintptr_t page) const {
    return root_[(page >> kLeafBits) & (kRootLength - 1)];
  }
  static HEAPKIT_ALWAYS_INLINE uint64_t EntryAt(uintptr_t root, uintptr_t page) {
    return *reinterpret_cast<const uint64_t*>(root + page * sizeof(uint64_t));
  }

  HEAPKIT_ALWAYS_INLINE uint32_t Info(uintptr_t address) const {
    const Leaf* leaf = LeafOf(address >> kPageShift);
    if (HEAPKIT_UNLIKELY(leaf == nullptr)) return 0;
    return static_cast<uint32_t>(
        __atomic_load_n(&leaf->entry[(address >> kPageShift) & (kLeafLength - 1)],
                        __ATOMIC_RELAXED) >>
        kInfoShift);
  }
  Span* GetSpan(PageId page) const {
    if ((page >> kLeafBits) >= kRootLength) return nullptr;
    const Leaf* leaf = LeafOf(page);
    if (leaf == nullptr) return nullptr;
    return __atomic_load_n(&leaf->span[page & (kLeafLength - 1)], __ATOMIC_RELAXED);
  }
  // GetSpan for a page of an in-use span whose object the caller holds (it just allocated it):
  // the page is in range and its leaf exists, so no checks.
  HEAPKIT_ALWAYS_INLINE Span* SpanOfOwnedPage(PageId page) const {
    const uintptr_t r = (page >> kLeafBits) & (kRootLength - 1);
    const auto* leaf = reinterpret_cast<const Leaf*>(__atomic_load_n(&root_[r], __ATOMIC_ACQUIRE) +
                                                     (r << kLeafBits) * sizeof(uint64_t));
    return __atomic_load_n(&leaf->span[page & (kLeafLength - 1)], __ATOMIC_RELAXED);
  }
  uint32_t GetInfo(PageId page) const { return Info(page << kPageShift); }

  // Makes sure leaves exist for [page, page + n). False if out of range or out of memory.
  bool Ensure(PageId page, Length n) {
    for (PageId r = page >> kLeafBits; r <= (page + n - 1) >> kLeafBits; ++r) {
      if (r >= kRootLength) return false;
      if (root_[r] == 0 && !CreateLeaf(r)) return false;
      const PageId first = r << kLeafBits;
      const PageId end = page + n < first + kLeafLength ? page + n : first + kLeafLength;
      Leaf* leaf = LeafOf(first);
      const auto used_begin = static_cast<uint32_t>((page > first ? page : first) - first);
      const auto used_end = static_cast<uint32_t>(end - first);
      if (leaf->used_begin == leaf->used_end || used_begin < leaf->used_begin)
        leaf->used_begin = used_begin;
      if (used_end > leaf->used_end) leaf->used_end = used_end;
    }
    return true;
  }
  // Sets the span and the info word of a page (phase 0). Precondition: Ensure() covered it.
  void Set(PageId page, Span* span, uint32_t info) {
    Leaf* leaf = LeafOf(page);
    const size_t i = page & (kLeafLength - 1);
    __atomic_store_n(&leaf->span[i], span, __ATOMIC_RELAXED);
    __atomic_store_n(&leaf->entry[i], MakeEntry(page, info, 0), __ATOMIC_RELAXED);
  }
  // Changes the info word only (the phase stays).
  void SetInfo(PageId page, uint32_t info) {
    uint64_t* e = &LeafOf(page)->entry[page & (kLeafLength - 1)];
    const uint64_t low = __atomic_load_n(e, __ATOMIC_RELAXED) & kLowMask;
    __atomic_store_n(e, (uint64_t{info} << kInfoShift) | low, __ATOMIC_RELAXED);
  }
  // Page `index` of in-use span `span` now holds objects of class cls (size object_size).
  void SetSmall(PageId page, Span* span, uint32_t cls, size_t object_size, Length index) {
    const uint64_t phase = (index << kPageShift) % object_size;
    Leaf* leaf = LeafOf(page);
    const size_t i = page & (kLeafLength - 1);
    __atomic_store_n(&leaf->span[i], span, __ATOMIC_RELAXED);
    __atomic_store_n(&leaf->entry[i], MakeEntry(page, InfoForClass(cls), phase), __ATOMIC_RELAXED);
  }
  static constexpr uint64_t kLowMask = (uint64_t{1} << kInfoShift) - 1;
  static constexpr uint64_t MakeEntry(PageId page, uint32_t info, uint64_t phase) {
    return (uint64_t{info} << kInfoShift) | ((phase - (page << kPageShift)) & kLowMask);
  }

  // Calls fn(page, span) for every page whose entry has a span, in address order.
  template <class Fn>
  void ForEachEntry(Fn&& fn) const {
    for (size_t r = 0; r < kRootLength; ++r) {
      const Leaf* leaf = LeafOf(PageId{r} << kLeafBits);
      if (leaf == nullptr) continue;
      for (size_t i = leaf->used_begin; i < leaf->used_end; ++i) {
        if (leaf->span[i] != nullptr) fn((PageId{r} << kLeafBits) | i, leaf->span[i]);
      }
    }
  }

  size_t metadata_bytes() const { return bytes_; }
  // Calls fn(leaf address, bytes reserved) for every leaf (statistics measure what is touched).
  template <class Fn>
  void ForEachLeafMapping(Fn&& fn) const {
    for (size_t r = 0; r < kRootLength; ++r) {
      const Leaf* leaf = LeafOf(PageId{r} << kLeafBits);
      if (leaf != nullptr) fn(reinterpret_cast<uintptr_t>(leaf), sizeof(Leaf));
    }
  }

 private:
  bool CreateLeaf(uintptr_t r) {
    uintptr_t biased = 0;
    while (biased == 0) {  // a leaf whose biased address is 0 would read as missing
      void* leaf = internal::SystemAlloc(sizeof(Leaf), 4096);
      if (leaf == nullptr) return false;
      bytes_ += sizeof(Leaf);
      biased = reinterpret_cast<uintptr_t>(leaf) - (r << kLeafBits) * sizeof(uint64_t);
    }
    __atomic_store_n(&root_[r], biased, __ATOMIC_RELEASE);
    if (hot_tag_ == 0) {
      hot_root_ = biased;
      __atomic_store_n(&hot_tag_, r + 1, __ATOMIC_RELEASE);  // publishes hot_root_
    }
    return true;
  }

  // The leaf covering page (nullptr if none). Precondition: page >> kLeafBits < kRootLength.
  Leaf* LeafOf(PageId page) const {
    const uintptr_t r = (page >> kLeafBits) & (kRootLength - 1);
    const uintptr_t biased = __atomic_load_n(&root_[r], __ATOMIC_ACQUIRE);
    if (biased == 0) return nullptr;
    return reinterpret_cast<Leaf*>(biased + (r << kLeafBits) * sizeof(uint64_t));
  }

  uintptr_t hot_tag_ = 0;   // the hot leaf's root index + 1; 0: none yet (all members are
  uintptr_t hot_root_ = 0;  // zero-initialised, so that the global instance lives in .bss)
  uintptr_t root_[kRootLength] = {};
  size_t bytes_ = 0;
};

}  // namespace heapkit::alloc
