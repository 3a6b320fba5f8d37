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

#define HEAPKIT_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEAPKIT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HEAPKIT_NOINLINE __attribute__((noinline))
#define HEAPKIT_ALWAYS_INLINE inline __attribute__((always_inline))
// Profiler and checker code that every process runs, whatever is enabled (start-up, exit, the
// heap-growth record and its stack capture), and the allocator's start-up setters: placed in
// .text.startup, which the linker puts before all other text, where the entry points and the
// allocator's hot objects follow (link order, alloc/CMakeLists.txt). The code a program executes
// when it neither profiles nor checks leaks is then contiguous, and the kernel's fault-around
// (64 KiB windows, at a phase that depends on the load address) maps as little of the rest of
// the profiler and checker as possible (alloc/README.md, "Memory of small processes").
#define HEAPKIT_ALWAYS_RUN_CODE __attribute__((section(".text.startup")))
// Variables every process writes whatever is enabled, at start-up (the hooks the profiler
// installs, once-flags, the real main) or at its first allocations (the metadata arena's
// cursor, the heap-growth records, the allocator-frame ranges): kept in .data, whose pages the
// dynamic linker has already written (relocations, the zeroed start of .bss), instead of
// zero-initialised .bss, where each would make its own page resident. For zero-initialised
// variables only.
#define HEAPKIT_ALWAYS_WRITTEN_DATA __attribute__((section(".data")))

namespace heapkit::alloc {

inline constexpr size_t kPageShift = 13;
inline constexpr size_t kPageSize = size_t{1} << kPageShift;
inline constexpr uintptr_t kPageMask = kPageSize - 1;
inline constexpr size_t kMaxSize = 256 * 1024;      // largest small object
inline constexpr size_t kMaxSmallLookup = 1024;     // sizes using the fine (8 B) class index
inline constexpr int kNumClassesMax = 128;          // class byte: 7 bits (+ sampled bit)
inline constexpr int kAddressBits = 48;
inline constexpr size_t kMaxAllocSize = size_t{1} << 46;  // larger requests fail with ENOMEM

using PageId = uintptr_t;
using Length = uintptr_t;  // in pages

inline constexpr Length PagesFor(size_t bytes) { return (bytes + kPageSize - 1) >> kPageShift; }

}  // namespace heapkit::alloc
