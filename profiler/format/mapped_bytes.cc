#include "profiler/format/mapped_bytes.h"

#include <string.h>

#include "alloc/internal/system_memory.h"

namespace heapkit::prof {

MappedBytes::~MappedBytes() {
  if (data_ != inline_) internal::SystemFree(data_, capacity_);
}

bool MappedBytes::Reserve(size_t n) {
  if (failed_) return false;
  if (size_ + n <= capacity_) return true;
  size_t cap = capacity_ < 64 * 1024 ? 64 * 1024 : capacity_;
  while (cap < size_ + n) cap *= 2;
  auto* grown = static_cast<char*>(internal::SystemAlloc(cap, 0));
  if (grown == nullptr) {
    failed_ = true;
    return false;
  }
  memcpy(grown, data_, size_);
  if (data_ != inline_) internal::SystemFree(data_, capacity_);
  data_ = grown;
  capacity_ = cap;
  return true;
}

void MappedBytes::append(const char* data, size_t n) {
  if (!Reserve(n)) return;
  memcpy(data_ + size_, data, n);
  size_ += n;
}

MappedArena::~MappedArena() {
  for (int i = 0; i < count_; ++i) internal::SystemFree(blocks_[i].start, blocks_[i].size);
}

void* MappedArena::Allocate(size_t bytes) {
  bytes = (bytes + 15) & ~size_t{15};
  if (count_ == 0 || used_ + bytes > blocks_[count_ - 1].size) {
    if (count_ == kMaxBlocks) return nullptr;
    const size_t size = bytes > (size_t{1} << 20) ? bytes : (size_t{1} << 20);
    auto* start = static_cast<char*>(internal::SystemAlloc(size, 0));
    if (start == nullptr) return nullptr;
    blocks_[count_++] = {start, size};
    used_ = 0;
  }
  void* p = blocks_[count_ - 1].start + used_;
  used_ += bytes;
  return p;
}

}  // namespace heapkit::prof
