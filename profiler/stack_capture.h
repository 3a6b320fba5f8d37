// Stack capture for the runtime (profiler, leak checker, large-allocation reports).
//
// DWARF CFI from .eh_frame (a cached unwinder of our own, falling back to libunwind with
// UNW_LOCAL_ONLY for unusual frames) so that code built without frame pointers unwinds right.
// A thread-local recursion guard makes nested captures (libunwind itself may allocate or take
// the dynamic loader's lock) return 0 instead of recursing. Never calls the public malloc.
// Async-signal-safe once InitStackCapture() has run (libunwind's per-thread cache only).
// Design notes, loader-lock reasoning and costs: stack_capture.cc and profiler/README.md.
#pragma once

#include <cstddef>

namespace heapkit::prof {

constexpr int kMaxStackDepth = 64;
// CaptureStack accepts up to this many, so callers can keep kMaxStackDepth frames after
// dropping a few allocator frames of their own.
constexpr int kMaxCaptureDepth = kMaxStackDepth + 16;

// Fills pcs[0..max_depth) with return addresses, innermost first, after skipping `skip` frames.
// skip=0: pcs[0] is the return address of CaptureStack's caller (a site inside the caller's
// caller), pcs[1] the next one out, and so on. max_depth is clamped to kMaxCaptureDepth.
// Returns the number stored; 0 if re-entered on this thread (recursion guard).
int CaptureStack(void** pcs, int max_depth, int skip);

// The same through the cached CFI unwinder only: -1 if some frame needs libunwind (or on
// architectures without it). For tests and comparisons.
int CaptureStackWithCfi(void** pcs, int max_depth, int skip);
// The same through libunwind's unw_backtrace only (the fallback CaptureStack uses for frames its
// cached CFI unwinder does not handle). For tests and comparisons.
int CaptureStackWithLibunwind(void** pcs, int max_depth, int skip);

// Idempotent one-time set-up (libunwind per-thread caching). Called by the profiler's start-up;
// other users may call it too. CaptureStack works without it, just with libunwind's defaults.
void InitStackCapture();

// True while this thread is inside CaptureStack (for hooks that must not recurse).
bool InStackCapture();

}  // namespace heapkit::prof
