// Stack capture: the cached CFI unwinder (cfi_unwinder.h), with libunwind as the fallback.
// Design notes (see README.md "Stack capture"; the CFI unwinder's own in cfi_unwinder.cc):
//
// * libunwind is reached through the on-demand library (on_demand_library.h), which the
//   profiler and the leak checker load when sampling starts. Before that (a large-allocation
//   report or a heap-growth stack with nothing enabled) a stack the CFI unwinder cannot walk
//   comes back empty: capture never loads anything itself, it runs inside allocations.
// * unw_backtrace() (fallback) walks the stack with libunwind's per-thread trace cache (x86-64
//   tdep_trace): after the first walk through a given return address, each frame costs a cache
//   probe, so no frame-pointer fast path is needed (and none would be right for -O2 code built
//   without frame pointers, which is what Debian's libraries are).
// * The library sets the caching policy to UNW_CACHE_PER_THREAD once: the global cache takes a lock
//   with signals blocked (two sigprocmask calls per miss) and is not async-signal-safe.
// * Recursion guard: a thread-local (initial-exec, so reading it never allocates) flag. A
//   nested capture (a signal handler allocating while we unwind, or libunwind calling back into
//   the allocator) returns 0 frames instead of recursing or deadlocking.
// * Dynamic-loader locks: on a cache miss libunwind calls dl_iterate_phdr, which takes the
//   loader's (recursive) dl_load_write_lock. A capture is never started while the caller holds
//   a profiler lock, and the profiler never waits for a loader lock while holding its own, so
//   no lock-order cycle with a thread that is inside dlopen (and allocates) can form. The same
//   thread re-entering is fine because glibc's loader locks are recursive.
// * Fork: no locks of ours are involved; libunwind's per-thread caches are copied with the
//   calling thread and are valid in the child.
#include "profiler/capture/stack_capture.h"

#include "alloc/common.h"
#include "profiler/capture/cfi_unwinder.h"
#include "profiler/on_demand/on_demand_library.h"

#include <cstdint>
#include <cstring>

namespace heapkit::prof {

__thread bool tls_in_stack_capture __attribute__((tls_model("initial-exec"))) = false;

namespace {

constexpr int kRawSlack = 8;  // frames of CaptureStack's own callees (unw_backtrace, ...)

// The libunwind path: raw return addresses from unw_backtrace, then drop the frames up to and
// including CaptureStack's own return address (self_return).
int LibunwindCapture(void** pcs, int max_depth, int skip, void* self_return) {
  void* raw[kMaxCaptureDepth + kRawSlack + 32];
  int want = max_depth + skip + kRawSlack;
  if (want > static_cast<int>(sizeof(raw) / sizeof(raw[0])))
    want = static_cast<int>(sizeof(raw) / sizeof(raw[0]));
  const OnDemandApi* api = OnDemandLibraryIfLoaded();
  if (api == nullptr) return 0;
  int n = api->backtrace(raw, want);
  // Find our own return address: it and everything before it belong to CaptureStack, its
  // caller's frame (the entry after it is the caller's return address) and libunwind.
  int first = -1;
  for (int i = 0; i < n && i < kRawSlack; ++i) {
    if (raw[i] == self_return) {
      first = i;
      break;
    }
  }
  int stored = 0;
  if (first >= 0) {
    for (int i = first + 1 + skip; i < n && stored < max_depth; ++i) pcs[stored++] = raw[i];
  }
  return stored;
}

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE void InitStackCapture() { OnDemandLibraryIfLoaded(); }

namespace {
// The body of both CaptureStack overloads, inlined into each (always_inline) so that
// heapkit_caller_regs reads the exported function's own frame: skip counts frames from that
// function's caller. self_return is the exported function's __builtin_return_address(0).
// walk_id: nullptr when the caller does not want it, else as for CfiBacktrace (its value on
// entry matters); free_memo: CfiBacktrace's.
__attribute__((always_inline)) inline int CaptureFromHere(void** pcs, int max_depth, int skip,
                                                          uint64_t* walk_id, void* self_return,
                                                          bool free_memo = false) {
  if (tls_in_stack_capture || max_depth <= 0) {
    if (walk_id != nullptr) *walk_id = 0;
    return 0;
  }
  tls_in_stack_capture = true;
  if (skip < 0) skip = 0;
  if (max_depth > kMaxCaptureDepth) max_depth = kMaxCaptureDepth;
  int stored = -1;
#ifdef HEAPKIT_CFI_UNWINDER
  {
    CallerRegs regs;
    heapkit_caller_regs(&regs);
    // Return address 0 is inside the exported function, 1 its return address (in its caller),
    // 2 the caller's return address = pcs[0] for skip 0.
    stored = CfiBacktrace(regs, 2 + skip, pcs, max_depth, walk_id, free_memo);
  }
#endif
  if (stored < 0) {
    if (walk_id != nullptr) *walk_id = 0;
    stored = LibunwindCapture(pcs, max_depth, skip, self_return);
  }
  tls_in_stack_capture = false;
  return stored;
}
}  // namespace

__attribute__((noinline)) int CaptureStack(void** pcs, int max_depth, int skip, uint64_t* walk_id) {
  return CaptureFromHere(pcs, max_depth, skip, walk_id, __builtin_return_address(0));
}

__attribute__((noinline)) int CaptureFreeStack(void** pcs, int max_depth, int skip,
                                               uint64_t* walk_id) {
  return CaptureFromHere(pcs, max_depth, skip, walk_id, __builtin_return_address(0), true);
}

HEAPKIT_ALWAYS_RUN_CODE __attribute__((noinline)) int CaptureStack(void** pcs, int max_depth,
                                                                   int skip) {
  return CaptureFromHere(pcs, max_depth, skip, nullptr, __builtin_return_address(0));
}

__attribute__((noinline)) int CaptureStackWithCfi(void** pcs, int max_depth, int skip) {
#ifdef HEAPKIT_CFI_UNWINDER
  if (tls_in_stack_capture || max_depth <= 0) return 0;
  tls_in_stack_capture = true;
  if (skip < 0) skip = 0;
  if (max_depth > kMaxCaptureDepth) max_depth = kMaxCaptureDepth;
  CallerRegs regs;
  heapkit_caller_regs(&regs);
  int stored = CfiBacktrace(regs, 2 + skip, pcs, max_depth);
  tls_in_stack_capture = false;
  return stored;
#else
  (void)pcs;
  (void)max_depth;
  (void)skip;
  return -1;
#endif
}

__attribute__((noinline)) int CaptureStackWithLibunwind(void** pcs, int max_depth, int skip) {
  if (tls_in_stack_capture || max_depth <= 0) return 0;
  tls_in_stack_capture = true;
  if (skip < 0) skip = 0;
  if (max_depth > kMaxCaptureDepth) max_depth = kMaxCaptureDepth;
  int stored = LibunwindCapture(pcs, max_depth, skip, __builtin_return_address(0));
  tls_in_stack_capture = false;
  return stored;
}

bool InStackCapture() { return tls_in_stack_capture; }

}  // namespace heapkit::prof
