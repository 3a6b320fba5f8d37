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
  // Precondition: size <= kMaxSmallLookup.
  HEAPKIT_ALWAYS_INLINE uint32_t SmallSizeClass(size_t size) const {
    return class_array_[(size + 7) >> 3];
  }
  // Byte offset of the thread-cache list of SmallSizeClass(size) (class * kListStride): the
  // malloc fast path indexes the list with it directly, without scaling the class.
  static constexpr uint32_t kListStride = 32;  // sizeof(ThreadCache::FreeList), asserted there
  HEAPKIT_ALWAYS_INLINE uint32_t SmallListOffset(size_t size) const {
    return small_offset_[(size + 7) >> 3];
  }
  HEAPKIT_ALWAYS_INLINE size_t ClassSize(uint32_t cls) const { return class_size_[cls]; }
  Length ClassPages(uint32_t cls) const { return class_pages_[cls]; }
  int NumToMove(uint32_t cls) const { return num_to_move_[cls]; }
  uint32_t ObjectsPerSpan(uint32_t cls) const { return objects_per_span_[cls]; }
  // Lemire's divisibility magic: off is a multiple of ClassSize(cls) iff
  // uint64(off * DivMagic(cls)) <= DivMagic(cls) - 1 (for off < 2^32).
  HEAPKIT_ALWAYS_INLINE uint64_t DivMagic(uint32_t cls) const { return div_magic_[cls]; }
  // DivMagic indexed by the low byte of a page-map info word (class | sampled bit): 0 for class
  // 0 (not a small object) and for every value with the sampled bit, so that the free fast path
  // needs no separate range check: off * 0 >= 0 always sends those frees to the slow path.
  HEAPKIT_ALWAYS_INLINE uint64_t FreeMagic(uint32_t info_byte) const {
    return div_magic_[info_byte];
  }
  // Index of the object containing byte `offset` of its span.
  uint32_t ObjectIndex(uint32_t cls, size_t offset) const {
    return static_cast<uint32_t>(offset / class_size_[cls]);
  }
  int num_classes() const { return num_classes_; }  // classes are 1..num_classes()-1

 private:
  int num_classes_ = 0;
  uint8_t class_array_[kClassArraySize] = {};
  uint32_t small_offset_[(kMaxSmallLookup >> 3) + 1] = {};  // 32-bit: loads zero-extend
  uint32_t class_size_[kNumClassesMax] = {};
  uint32_t class_pages_[kNumClassesMax] = {};
  int32_t num_to_move_[kNumClassesMax] = {};
  uint32_t objects_per_span_[kNumClassesMax] = {};
  uint64_t div_magic_[256] = {};  // [kNumClassesMax, 256) stay 0 (FreeMagic)
};

}  // namespace heapkit::alloc
