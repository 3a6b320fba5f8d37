#include "alloc/size_classes.h"

#include "alloc/internal/log.h"

namespace heapkit::alloc {

void SizeMap::Init(int transfer_num_obj) {
  if (transfer_num_obj < 2) transfer_num_obj = 2;
  int c = 1;
  auto add = [&](size_t size) {
    if (c >= kNumClassesMax) internal::Fatal("too many size classes");
    class_size_[c] = static_cast<uint32_t>(size);
    // Pages: enough for min_objects, then grow until the tail waste is at most 1/8.
    size_t min_objects = size <= 4096 ? 1 : (size <= 32 * 1024 ? 4 : 2);
    Length pages = PagesFor(size * min_objects);
    // Small classes get 32 KiB spans: span metadata (~80 B) + page map (16 B/page) stay ~0.45%
    // of the payload; lazy carving means untouched objects cost no RSS.
    if (size <= 1024 && pages < 4) pages = 4;
    while ((pages * kPageSize) % size > (pages * kPageSize) / 8) ++pages;
    class_pages_[c] = static_cast<uint32_t>(pages);
    objects_per_span_[c] = static_cast<uint32_t>(pages * kPageSize / size);
    size_t move = (64 * 1024) / size;
    if (move < 2) move = 2;
    if (move > static_cast<size_t>(transfer_num_obj)) move = static_cast<size_t>(transfer_num_obj);
    num_to_move_[c] = static_cast<int32_t>(move);
    const uint64_t magic = ((((uint64_t{1} << 52) - 1) / size) + 1) << 12;
    free_magic_[c * (kListStride / 8)] = magic;
    free_magic_[c * (kListStride / 8) + kDivMagicSlot] = magic;
    ++c;
  };
  add(8);
  for (size_t s = 16; s <= 128; s += 16) add(s);
  for (size_t pow2 = 128; pow2 < kMaxSize; pow2 *= 2) {
    size_t step = pow2 / 8;
    for (size_t s = pow2 + step; s <= pow2 * 2; s += step) add(s);
  }
  num_classes_ = c;
  // Fill the lookup array: each index maps to the smallest class that holds its largest size.
  int cls = 1;
  for (size_t idx = 0; idx < kClassArraySize; ++idx) {
    size_t max_size_for_idx = idx <= (kMaxSmallLookup >> 3) ? idx * 8 : (idx << 7) - (120 << 7);
    if (max_size_for_idx > kMaxSize) max_size_for_idx = kMaxSize;
    while (cls < c - 1 && class_size_[cls] < max_size_for_idx) ++cls;
    class_array_[idx] = static_cast<uint8_t>(cls);
  }
  for (size_t size = 0; size <= kMaxSmallLookup; ++size) {
    const size_t off = SmallSizeClass(size) * size_t{kListStride} / 8;
    if (off > UINT8_MAX) internal::Fatal("size class of %zu bytes beyond the list table", size);
    list_offsets_[size] = static_cast<uint8_t>(off);
  }
}

void SizeMap::RouteAllFreesToSlowPath(bool all) {
  for (int c = 1; c < num_classes_; ++c) {
    const uint64_t magic = all ? 0 : DivMagic(static_cast<uint32_t>(c));
    __atomic_store_n(&free_magic_[c * (kListStride / 8)], magic, __ATOMIC_RELAXED);
  }
}

}  // namespace heapkit::alloc
