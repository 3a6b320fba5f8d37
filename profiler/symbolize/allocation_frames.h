// Which frames at the leaf end of an allocation stack are the allocation path, not the user's
// code: the rule pprof-tool and the leak checker's report share, so both charge memory to the
// first function the user wrote. The table itself is in allocation_frames.cc (one place).
//
//   kAllocator          the allocator and everything that only carries out a request for
//                       memory: malloc & co., operator new/delete, tcmalloc/heapkit internals,
//                       anything in libtcmalloc*/libheapkit*/libjemalloc*, and the C++
//                       standard library's allocation paths (every frame in std::,
//                       __gnu_cxx:: or libc++'s std::__1:: — allocators, allocator_traits,
//                       container and string constructors, growth helpers,
//                       make_shared/allocate_shared).
//   kCopyingAllocator   libc functions that allocate a copy for their caller (strdup,
//                       asprintf, ...). The frames between one and the allocator (libc's own
//                       helpers, e.g. vasprintf's buffer growth) belong to the path too.
//   kCaller             anything else. A library function that allocates for its own purposes
//                       (fopen, getline's buffer, a third-party library) is a caller: it stays
//                       the leaf.
//
// AllocationPathLength: leaf first, drop kAllocator frames; a kCopyingAllocator frame within
// the next few frames of the same module as the first of them ends the path there too; repeat.
// At least one frame always remains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

enum class FrameRole : uint8_t { kCaller, kAllocator, kCopyingAllocator };

// function: the demangled name as the symbolizer gives it; module: the mapped file's path.
FrameRole ClassifyFrame(std::string_view function, std::string_view module);

// How far a copying allocator may sit above the first non-allocator frame (its libc helpers).
inline constexpr size_t kMaxCopyingHelperFrames = 8;

// Number of frames, from the leaf (index 0), that are the allocation path. role(i) gives the
// role of frame i, same_module(i, j) whether frames i and j come from one mapped file.
template <typename RoleAt, typename SameModule>
size_t AllocationPathLength(size_t n, RoleAt role, SameModule same_module) {
  size_t first = 0;
  for (;;) {
    while (first + 1 < n && role(first) == FrameRole::kAllocator) ++first;
    size_t copying = n;
    for (size_t k = first; k + 1 < n && k <= first + kMaxCopyingHelperFrames; ++k) {
      if (!same_module(first, k)) break;
      if (role(k) == FrameRole::kCopyingAllocator) {
        copying = k;
        break;
      }
    }
    if (copying == n) return first;
    first = copying + 1;
  }
}

// The same for symbolized frames, leaf first (the leak checker's report).
inline size_t AllocationPathLength(const std::vector<const SourceFrame*>& frames) {
  return AllocationPathLength(
      frames.size(),
      [&](size_t i) { return ClassifyFrame(frames[i]->function, frames[i]->module); },
      [&](size_t i, size_t j) { return frames[i]->module == frames[j]->module; });
}

}  // namespace heapkit::pprof
