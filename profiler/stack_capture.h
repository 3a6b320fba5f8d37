// Stack capture for the runtime (profiler, leak checker, large-allocation reports).
//
// libunwind (UNW_LOCAL_ONLY) so that code built without frame pointers unwinds correctly.
// A thread-local recursion guard makes nested captures (libunwind itself may allocate or take
// the dynamic loader's lock) return 0 instead of recursing. Never calls the public malloc.
#pragma once

#include <cstddef>

namespace heapkit::prof {

constexpr int kMaxStackDepth = 64;

// Fills pcs[0..max_depth) with return addresses, innermost first, after skipping `skip` frames
// above the caller of CaptureStack (skip=0: the first entry is CaptureStack's caller's return
// address... i.e. the caller's caller-site). Returns the number stored; 0 if re-entered.
int CaptureStack(void** pcs, int max_depth, int skip);

}  // namespace heapkit::prof
