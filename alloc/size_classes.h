// Size classes: computed once at initialisation (SizeMap::Init), read-only afterwards.
//
// Classes: 8, then multiples of 16 up to 128, then 8 classes per power of two (step = 1/8 of
// the power of two) up to kMaxSize. A request of n bytes maps to the smallest class ≥ n, so for
// n > 128 the internal waste is < 1/8 of n; every class ≥ 16 is a multiple of 16 (16-byte
// alignment, like glibc); classes above 1024 are multiples of 128 (coarse index below).
// Pages per span: the fewest pages (at least 4 for sizes ≤ 1 KiB) that hold enough objects with
// a span tail waste ≤ 1/8.
// Batch (num_to_move): 64 KiB / size clamped to [2, TCMALLOC_TRANSFER_NUM_OBJ].
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/dcheck.h"

namespace heapkit::alloc {

class SizeMap {
 public:
  static constexpr size_t kClassArraySize = ((kMaxSize + 127 + (120 << 7)) >> 7) + 1;

  constexpr SizeMap() = default;

  // Computes all tables. transfer_num_obj caps the batch size (≥ 2).
  void Init(int transfer_num_obj);

  static HEAPKIT_ALWAYS_INLINE size_t ClassIndex(size_t s) {
    return s <= kMaxSmallLookup ? (s + 7) >> 3 : (s + 127 + (120 << 7)) >> 7;
  }
  // Precondition: size <= kMaxSize.
  HEAPKIT_ALWAYS_INLINE uint32_t SizeClass(size_t size) const {
    return class_array_[ClassIndex(size)];
  }
  // list_offsets()[size] = SizeClass(size) * kListStride / 8 for size <= kMaxSmallLookup: the
  // thread cache's malloc table (ThreadCache::list_off_, copied from here at cache creation).
  const uint8_t* list_offsets() const { return list_offsets_; }
  // Precondition: kMaxSmallLookup < size <= kMaxSize (the coarse half of ClassIndex).
  HEAPKIT_ALWAYS_INLINE uint32_t MediumSizeClass(size_t size) const {
    return class_array_[(size + 127 + (120 << 7)) >> 7];
  }
  // Precondition: size <= kMaxSmallLookup.
  HEAPKIT_ALWAYS_INLINE uint32_t SmallSizeClass(size_t size) const {
    return class_array_[(size + 7) >> 3];
  }
  // Byte stride of thread-cache lists (sizeof(ThreadCache::FreeList), asserted there) and of
  // the free-magic table: a page-map info word (class << 5 | sampled bit) is a byte offset
  // into both (PageMap::kClassShift).
  static constexpr uint32_t kListStride = 32;
  HEAPKIT_ALWAYS_INLINE size_t ClassSize(uint32_t cls) const { return class_size_[cls]; }
  // Slow-path accessors: cls is a class of this map (1..num_classes()-1; ObjectsPerSpan and
  // ObjectIndex also take 0, the large "class", within the tables' bounds).
  Length ClassPages(uint32_t cls) const {
    HEAPKIT_DCHECK(cls > 0 && cls < static_cast<uint32_t>(num_classes_));
    return class_pages_[cls];
  }
  int NumToMove(uint32_t cls) const {
    HEAPKIT_DCHECK(cls > 0 && cls < static_cast<uint32_t>(num_classes_));
    return num_to_move_[cls];
  }
  uint32_t ObjectsPerSpan(uint32_t cls) const {
    HEAPKIT_DCHECK(cls < kNumClassesMax);
    return objects_per_span_[cls];
  }
  // Lemire's divisibility magic, c = ceil(2^52 / size) shifted left by 12 (so that it
  // annihilates bits 52..63 of its operand, which carry the page-map info): off is a multiple of
  // ClassSize(cls) iff uint64(off * DivMagic(cls)) <= DivMagic(cls) - 1, for off < 2^32
  // (exact for off < 2^(52 - log2(size)); sizes are ≤ 2^18).
  HEAPKIT_ALWAYS_INLINE uint64_t DivMagic(uint32_t cls) const {
    return free_magic_[cls * (kListStride / 8) + kDivMagicSlot];
  }
  // DivMagic looked up by a page-map info word used as a byte offset: 0 for class 0 (not a
  // small object) and for every word with the sampled bit (offset 16 inside a 32-byte entry),
  // so that the free fast path needs no separate range check: off * 0 >= 0 always sends those
  // frees to the slow path. While RouteAllFreesToSlowPath(true) holds, 0 for every word.
  HEAPKIT_ALWAYS_INLINE uint64_t FreeMagic(uint32_t info) const {
    return *reinterpret_cast<const uint64_t*>(reinterpret_cast<const char*>(free_magic_) + info);
  }
  // The same without a division, for offset < 2^32: the high half of offset * DivMagic(cls)
  // (floor(offset * ceil(2^52 / size) / 2^52), exact for these offsets). The low half of the
  // same product is FreeSlow's object-start test, so one multiply gives both.
  HEAPKIT_ALWAYS_INLINE uint64_t ObjectIndexOf(uint32_t cls, uint64_t offset) const {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(offset) * DivMagic(cls)) >> 64);
  }
  // Index of the object containing byte `offset` of its span.
  uint32_t ObjectIndex(uint32_t cls, size_t offset) const {
    HEAPKIT_DCHECK(cls > 0 && cls < kNumClassesMax);
    return static_cast<uint32_t>(offset / class_size_[cls]);
  }
  int num_classes() const { return num_classes_; }  // classes are 1..num_classes()-1

  // Sends every free to the slow path (true) or only those FreeMagic routes there (false), by
  // clearing or restoring the FreeMagic entries (MallocHook's Delete hooks, observer_hooks.h).
  // A free racing with the switch takes the old path once.
  void RouteAllFreesToSlowPath(bool all);

 private:
  int num_classes_ = 0;
  uint8_t class_array_[kClassArraySize] = {};
  uint8_t list_offsets_[kMaxSmallLookup + 1] = {};
  uint32_t class_size_[kNumClassesMax] = {};
  uint32_t class_pages_[kNumClassesMax] = {};
  int32_t num_to_move_[kNumClassesMax] = {};
  uint32_t objects_per_span_[kNumClassesMax] = {};
  // Per class, 32 bytes: [0] what FreeMagic reads for the class (DivMagic(cls), or 0 to route
  // every free to the slow path), [kDivMagicSlot] DivMagic(cls) (a byte offset no info word
  // has: info bits 0..3 are always 0), [2] the sampled-bit slot, always 0, [3] unused.
  static constexpr int kDivMagicSlot = 1;
  uint64_t free_magic_[kNumClassesMax * kListStride / 8] = {};
};

}  // namespace heapkit::alloc
