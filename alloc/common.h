// Glossary and constants of the allocator (see README.md for the full design).
//
//   page        kPageSize (8 KiB) unit the page heap manages; PageId = address >> kPageShift.
//   span        a run of contiguous pages: free (in the page heap), large (one object), or
//               small (carved into objects of one size class).
//   size class  1..kNumClassesMax-1; class 0 means "not a small object".
//   batch       num_to_move objects of one class moved between tiers at once.
//   thread cache per-thread free lists (front end), no locks.
//   central     per-class free list of spans with free objects + transfer cache of batches.
//   page heap   free spans by length, coalescing, release to the OS; the page map.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/internal/sections.h"

#define HEAPKIT_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEAPKIT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HEAPKIT_NOINLINE __attribute__((noinline))
#define HEAPKIT_ALWAYS_INLINE inline __attribute__((always_inline))
// HEAPKIT_ALWAYS_RUN_CODE, HEAPKIT_ALWAYS_WRITTEN_DATA: placement of what every process runs and
// writes (alloc/internal/sections.h).

namespace heapkit::alloc {

inline constexpr size_t kPageShift = 13;
inline constexpr size_t kPageSize = size_t{1} << kPageShift;
inline constexpr uintptr_t kPageMask = kPageSize - 1;
inline constexpr size_t kMaxSize = 256 * 1024;   // largest small object
inline constexpr size_t kMaxSmallLookup = 1024;  // sizes using the fine (8 B) class index
inline constexpr int kNumClassesMax = 128;       // class byte: 7 bits (+ sampled bit)
inline constexpr int kAddressBits = 48;
inline constexpr size_t kMaxAllocSize = size_t{1} << 46;  // larger requests fail with ENOMEM

using PageId = uintptr_t;
using Length = uintptr_t;  // in pages

inline constexpr Length PagesFor(size_t bytes) { return (bytes + kPageSize - 1) >> kPageShift; }

}  // namespace heapkit::alloc
