// The operating-system memory layer: every mmap/munmap/madvise of the runtime goes through here.
// What it maps is noted as the runtime's own (runtime_mappings.h) until it is unmapped: the leak
// checker scans every other anonymous mapping for pointers.
//
// All functions are malloc-free, lock-free and thread-safe (system calls and the table of
// runtime_mappings.h).
#pragma once

#include <cstddef>

namespace heapkit::internal {

// Maps `bytes` (rounded up to the OS page) of zeroed read/write memory aligned to `alignment`
// (a power of two; values below the OS page mean the OS page). nullptr on failure.
void* SystemAlloc(size_t bytes, size_t alignment);

// Unmaps memory obtained from SystemAlloc (any page-aligned sub-range).
void SystemFree(void* start, size_t bytes);

// Moves memory obtained from SystemAlloc to a mapping of new_bytes (mremap: the pages move, the
// contents stay; new pages read as zero) and returns its start, or nullptr (the old mapping
// intact) on failure.
void* SystemResize(void* start, size_t old_bytes, size_t new_bytes);

// Gives the physical pages back (madvise MADV_DONTNEED); the range stays mapped and reads as
// zero afterwards. Returns false if the kernel refused.
bool SystemRelease(void* start, size_t bytes);

// Backs [start, start + bytes) (page-aligned, mapped read/write) with private pages now, as
// first writes would, without changing its content: one madvise(MADV_POPULATE_WRITE) (Linux >=
// 5.14), or an atomic add of zero to one byte of each OS page where that is not supported.
// Best effort: pages the kernel cannot back now are faulted in on first use as usual.
void SystemPrefault(void* start, size_t bytes);

// Asks for [start, start + bytes) (mapped by SystemAlloc) to be backed by transparent huge
// pages (madvise MADV_HUGEPAGE; takes effect where THP is `madvise` or `always`): each aligned
// 2 MiB of it is then one page-table entry, which a fork copies at once instead of 512. Returns
// false if the kernel refused (no THP support): the range stays usable with small pages.
bool SystemAdviseHugePages(void* start, size_t bytes);

// The transparent huge page size that SystemAdviseHugePages aligns for (2 MiB on x86-64).
inline constexpr size_t kSystemHugePageSize = size_t{2} << 20;

// The OS page size (4096 on x86-64 Linux).
size_t SystemPageSize();

}  // namespace heapkit::internal
