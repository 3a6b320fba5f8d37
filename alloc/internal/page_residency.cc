#include "alloc/internal/page_residency.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc/internal/system_memory.h"

namespace heapkit::internal {
namespace {

constexpr size_t kSmallWindowPages = 16;  // a small range reads its neighbours' entries too
constexpr uint64_t kPresentBit = uint64_t{1} << 63;
constexpr uint64_t kSwappedBit = uint64_t{1} << 62;
constexpr uint64_t kExclusiveBit = uint64_t{1} << 56;
constexpr uint64_t kPfnMask = (uint64_t{1} << 55) - 1;

// Bytes of [start, end) on OS page `page_start`.
size_t Overlap(uintptr_t start, uintptr_t end, uintptr_t page_start, size_t page) {
  const uintptr_t lo = start > page_start ? start : page_start;
  const uintptr_t hi = end < page_start + page ? end : page_start + page;
  return hi > lo ? hi - lo : 0;
}

}  // namespace

ResidencyReader::ResidencyReader() {
  const int saved_errno = errno;
  fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd_ >= 0) zero_pfn_ = ZeroPagePfn();
  errno = saved_errno;
}

// Reading an untouched anonymous page maps the shared zero page, which pagemap reports present
// although it is in no process's RSS. A privileged reader sees frame numbers: the zero page's is
// learnt from a page read but never written. Otherwise frame numbers read as 0 (returns 0) and
// Add falls back to the exclusively-mapped bit.
uint64_t ResidencyReader::ZeroPagePfn() {
  const size_t page = SystemPageSize();
  void* probe = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return 0;
  const volatile char* byte = static_cast<const volatile char*>(probe);
  (void)*byte;  // maps the zero page
  uint64_t entry = 0;
  const off_t offset = static_cast<off_t>(reinterpret_cast<uintptr_t>(probe) / page * 8);
  const bool read_ok = pread(fd_, &entry, sizeof(entry), offset) == sizeof(entry);
  munmap(probe, page);
  return read_ok && (entry & kPresentBit) ? entry & kPfnMask : 0;
}

ResidencyReader::~ResidencyReader() {
  if (fd_ >= 0) close(fd_);
}

void ResidencyReader::Add(uintptr_t start, size_t length, PageResidency* out) {
  if (length == 0) return;
  if (fd_ < 0) return AddFromMincore(start, length, out);
  const size_t page = SystemPageSize();
  const uintptr_t end = start + length;
  uintptr_t first = start & ~(page - 1);
  const int saved_errno = errno;
  while (first < end) {
    // Entries come from the window of the last read when it covers `first` (many small
    // objects share a window), else a new window of up to kBatchPages pages is read.
    if (cached_pages_ == 0 || first < cached_first_ ||
        first >= cached_first_ + cached_pages_ * page) {
      size_t pages = (end - first + page - 1) / page;
      if (pages > kBatchPages) pages = kBatchPages;
      if (pages < kSmallWindowPages) pages = kSmallWindowPages;
      const off_t offset = static_cast<off_t>(first / page * sizeof(uint64_t));
      const ssize_t got = pread(fd_, cached_, pages * sizeof(uint64_t), offset);
      if (got < 0 && errno == EINTR) continue;
      cached_pages_ = 0;
      if (got <= 0) break;  // beyond the address space, or the kernel refused: count no more
      cached_first_ = first;
      cached_pages_ = static_cast<size_t>(got) / sizeof(uint64_t);
    }
    const size_t skip = (first - cached_first_) / page;
    size_t n = cached_pages_ - skip;
    if (n > (end - first + page - 1) / page) n = (end - first + page - 1) / page;
    for (size_t i = 0; i < n; ++i) {
      const uintptr_t p = first + i * page;
      const uint64_t e = cached_[skip + i];
      if (e & kPresentBit) {
        // The zero page is in no RSS. Without frame numbers it is told by not being mapped
        // exclusively, which also leaves out pages shared with a fork parent or child.
        const bool zero_page =
            zero_pfn_ != 0 ? (e & kPfnMask) == zero_pfn_ : (e & kExclusiveBit) == 0;
        if (!zero_page) out->resident += Overlap(start, end, p, page);
      } else if (e & kSwappedBit) {
        out->swapped += Overlap(start, end, p, page);
      }
    }
    first += n * page;
  }
  errno = saved_errno;
}

void ResidencyReader::AddFromMincore(uintptr_t start, size_t length, PageResidency* out) {
  const size_t page = SystemPageSize();
  const uintptr_t end = start + length;
  uintptr_t first = start & ~(page - 1);
  const int saved_errno = errno;
  unsigned char vec[kBatchPages];
  while (first < end) {
    size_t pages = (end - first + page - 1) / page;
    if (pages > kBatchPages) pages = kBatchPages;
    // ENOMEM: part of the range is not mapped; count it as not resident.
    if (mincore(reinterpret_cast<void*>(first), pages * page, vec) == 0) {
      for (size_t i = 0; i < pages; ++i) {
        if (vec[i] & 1) out->resident += Overlap(start, end, first + i * page, page);
      }
    }
    first += pages * page;
  }
  errno = saved_errno;
}

}  // namespace heapkit::internal
