// A growable array backed directly by mmap/mremap, for checker data that must never come from
// the public heap (snapshots, work stacks, leak records).
//
// Invariants: memory comes only from the system memory layer (alloc/internal/system_memory.h),
// so it is never a heap object and never a scanned root (its mappings are noted as the
// runtime's own, which the anonymous-memory roots leave out: roots.h). T must be trivially
// copyable: elements are moved by mremap. Not thread-safe.
#pragma once

#include <sys/mman.h>

#include "alloc/internal/system_memory.h"

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace heapkit::check {

template <typename T>
class MmapArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  constexpr MmapArray() = default;
  MmapArray(const MmapArray&) = delete;
  MmapArray& operator=(const MmapArray&) = delete;
  ~MmapArray() { Release(); }

  // Ensures room for n elements; false if the system refused the memory.
  bool Reserve(size_t n) {
    if (n <= capacity_) return true;
    size_t want = capacity_ == 0 ? 4096 / sizeof(T) + 1 : capacity_ * 2;
    if (want < n) want = n;
    size_t bytes = RoundToPage(want * sizeof(T));
    void* p = data_ == nullptr
                  ? internal::SystemAlloc(bytes, 0)
                  : internal::SystemResize(data_, RoundToPage(capacity_ * sizeof(T)), bytes);
    if (p == nullptr) return false;
    data_ = static_cast<T*>(p);
    capacity_ = bytes / sizeof(T);
    return true;
  }
  // Reserve(n), then asks the kernel to fault the pages in with one call (cheaper than a trap
  // per page on first touch). Best effort: false only if Reserve failed.
  bool ReservePopulated(size_t n) {
    if (!Reserve(n)) return false;
#ifdef MADV_POPULATE_WRITE
    madvise(data_, RoundToPage(capacity_ * sizeof(T)), MADV_POPULATE_WRITE);
#endif
    return true;
  }
  // Sets the size to n; new elements are zero (fresh pages) or keep old contents.
  bool Resize(size_t n) {
    if (!Reserve(n)) return false;
    size_ = n;
    return true;
  }
  bool PushBack(const T& value) {
    if (size_ == capacity_ && !Reserve(size_ + 1)) return false;
    data_[size_++] = value;
    return true;
  }
  void Clear() { size_ = 0; }
  // Clear(), and gives the pages back (the reservation stays): a fork copies no page-table
  // entry for them.
  void ClearAndDepopulate() {
    size_ = 0;
    if (data_ != nullptr) internal::SystemRelease(data_, RoundToPage(capacity_ * sizeof(T)));
  }
  void Release() {
    if (data_ != nullptr) internal::SystemFree(data_, RoundToPage(capacity_ * sizeof(T)));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  static size_t RoundToPage(size_t bytes) { return (bytes + 4095) & ~static_cast<size_t>(4095); }

  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace heapkit::check
