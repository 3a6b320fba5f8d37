// The heap's spans as address ranges (in use, free and backed, released to the OS), for
// MallocExtension::Ranges and the residency measurement (memory_residency.h).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::alloc {

// One range of the heap for MallocExtension::Ranges: a span in use (fraction = share of its
// objects handed out), free and backed, or released to the OS.
struct HeapRange {
  uintptr_t address;
  size_t length;
  enum Type { kInUse, kFree, kUnmapped } type;
  double fraction;
};
// Calls fn(ctx, range) for every span, with no allocator lock held (a snapshot is taken first,
// in memory from the OS, so fn may allocate).
void ForEachHeapRange(void (*fn)(void* ctx, const HeapRange& range), void* ctx);

}  // namespace heapkit::alloc
