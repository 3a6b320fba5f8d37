// Which leading frames of a sampled allocation's stack belong to the allocator (and are dropped
// before the stack is stored, so profiles start at the user's allocating function).
//
// Three sources, all filled once at start-up and read lock-free afterwards:
//  1. Code ranges: when heapkit is a shared object (LD_PRELOAD / -lheapkit shared), every
//     executable segment of that object. A leading frame inside it is allocator/profiler code.
//  2. Runtime symbol ranges: for static linking (-lheapkit from libheapkit.a), the address
//     ranges of the runtime's functions, found by name in the executable's .symtab/.dynsym
//     (runtime_symbols.h). Covers every path through the allocator (fast, slow, page-level).
//  3. Calibrated return addresses: the fallback for a stripped static binary (no .symtab;
//     .dynsym names only the exported entry points). At start-up the profiler makes sampled
//     allocations through each entry point (malloc, calloc, realloc, new, new[], aligned
//     variants) from known probe functions and records the return addresses seen between the
//     sampling callback and the probe. Those exact addresses are allocator call sites; paths the
//     probes did not take (e.g. a slow path hit later) are missed, hence only a fallback.
// Skipping stops at the first frame matching none, so user code is never dropped.
#pragma once

namespace heapkit::prof {

// Finds our own shared object's text (if any), or, when the runtime is in the executable, loads
// its symbol ranges from /proc/self/exe. Idempotent; malloc-free (dl_iterate_phdr, open, mmap).
void InitAllocatorFrames();

// Records one allocator return address (calibration). Thread-compatible: start-up only.
void AddAllocatorReturnAddress(const void* pc);

// True if pc is allocator code by either rule.
bool IsAllocatorFrame(const void* pc);

// Number of leading entries of pcs[0..n) that are allocator frames.
inline int CountAllocatorFrames(void* const* pcs, int n) {
  int i = 0;
  while (i < n && IsAllocatorFrame(pcs[i])) ++i;
  return i;
}

// True if heapkit's code lives in a shared object (found by InitAllocatorFrames).
bool RuntimeIsSharedObject();

}  // namespace heapkit::prof
