// Where the pages of a range of this process's own memory are: in RAM, in swap, or nowhere
// (never touched, or given back with MADV_DONTNEED).
//
// Read from /proc/self/pagemap (one 64-bit entry per OS page: bit 63 present, bit 62 swapped;
// a process may read its own entries without privileges, only the frame numbers are hidden).
// Pages mapped to the shared zero page (read, never written) are present but in no RSS: they are
// recognised by frame number when the process may see frame numbers, else by not being mapped
// exclusively (which also leaves out pages shared with a fork parent or child until written).
// Where pagemap cannot be opened (no /proc), mincore() answers "in RAM or not" (zero page
// included) and nothing is counted as swapped. Malloc-free and lock-free; used at statistics and
// dump time only, never on an allocation path. Ranges need not be page-aligned: a range counts the
// bytes of it that lie on resident (or swapped) pages. Ranges read in address order share the last
// read (a window of pagemap entries), so many small objects of one page cost one read.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::internal {

struct PageResidency {
  size_t resident = 0;  // bytes on pages present in RAM
  size_t swapped = 0;   // bytes on pages in swap
};

class ResidencyReader {
 public:
  ResidencyReader();
  ~ResidencyReader();
  ResidencyReader(const ResidencyReader&) = delete;
  ResidencyReader& operator=(const ResidencyReader&) = delete;

  // Adds the resident and swapped bytes of [start, start + length) to *out. Unmapped parts
  // count as neither.
  void Add(uintptr_t start, size_t length, PageResidency* out);
  // True when the answers come from pagemap (swap known), false under the mincore fallback.
  bool knows_swap() const { return fd_ >= 0; }

 private:
  void AddFromMincore(uintptr_t start, size_t length, PageResidency* out);
  uint64_t ZeroPagePfn();
  static constexpr size_t kBatchPages = 512;  // entries per read (4 KiB)
  int fd_;
  uintptr_t cached_first_ = 0;  // the last read's window: entries of cached_pages_ OS pages
  size_t cached_pages_ = 0;     // from cached_first_
  uint64_t cached_[kBatchPages];
  uint64_t zero_pfn_ = 0;  // frame number of the shared zero page; 0: frame numbers hidden
};

}  // namespace heapkit::internal
