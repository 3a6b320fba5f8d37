// /proc/self/maps read without malloc (the text goes into an mmap'd buffer) and parsed into
// address-sorted, disjoint entries (the shared line parser, profiler/symbolize/maps_line.h; each
// entry's path points into the buffer). Used to clamp root regions to readable memory, to find the
// mapping that holds a thread's stack, and as the MAPPED_LIBRARIES section of the .heap file.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/mmap_array.h"
#include "profiler/symbolize/maps_line.h"

namespace heapkit::check {

class ProcMaps {
 public:
  // Reads and parses the current maps. False (and nothing usable) if /proc is unavailable.
  // The file is read whole into a buffer sized before the read (a larger one means reading it
  // again from the start), so the reader never changes the address space it is reading; a read
  // another thread tore (entries out of order or overlapping) is read again. Call it with the
  // world stopped: then no thread can start, exit or map memory between this read and the scan.
  bool Read();

  const char* text() const { return text_.data(); }
  size_t text_size() const { return text_size_; }
  size_t size() const { return entries_.size(); }
  const MapsLine& operator[](size_t i) const { return entries_[i]; }

  // The entry containing address, or nullptr.
  const MapsLine* Find(uintptr_t address) const;

  // Fills out with the address ranges that must not be read: the gaps between mappings and the
  // mappings without read permission (sorted, non-overlapping, up to the top of the address
  // space). A program may mprotect(PROT_NONE) or munmap part of a large heap block.
  bool CollectUnreadable(MmapArray<Region>* out) const;

  // Appends to out the parts of [start, end) that lie in readable mappings.
  bool AddReadable(uintptr_t start, uintptr_t end, MmapArray<Region>* out) const;

 private:
  bool ParseText();             // text_ into entries_; false on out-of-memory
  bool InAddressOrder() const;  // every entry starts at or after the end of the one before
  void PutInAddressOrder();     // sorts, and trims overlaps away (a torn read, kept at last)

  MmapArray<char> text_;
  size_t text_size_ = 0;
  MmapArray<MapsLine> entries_;
};

}  // namespace heapkit::check
