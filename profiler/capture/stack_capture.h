// Stack capture for the runtime (profiler, leak checker, large-allocation reports).
//
// DWARF CFI from .eh_frame (a cached unwinder of our own, falling back to libunwind with
// UNW_LOCAL_ONLY for unusual frames once the on-demand library is loaded, on_demand_library.h)
// so that code built without frame pointers unwinds right.
// A thread-local recursion guard makes nested captures (libunwind itself may allocate or take
// the dynamic loader's lock) return 0 instead of recursing. Never calls the public malloc.
// Async-signal-safe once InitStackCapture() has run (libunwind's per-thread cache only).
// Design notes, loader-lock reasoning and costs: stack_capture.cc and profiler/README.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "profiler/capture/cfi_unwinder.h"

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

// The same for callers that remember their last stack (the profiler's per-thread LastStack).
// On return *walk_id is an id of the frames (0: none): two captures on one thread with the
// same skip and max_depth that return the same non-zero id returned the same frames. If
// *walk_id held that id on entry, pcs is left untouched (the caller kept those frames) and
// the depth is returned. Ids are per thread; only the cached CFI unwinder's memo hands them out.
int CaptureStack(void** pcs, int max_depth, int skip, uint64_t* walk_id);
// The same through the unwinder's second memo (cfi_unwinder.h, tls_cfi_free_memo): for the
// captures at frees, so that they and the allocations' captures keep a memo each. Its ids are
// comparable only with its own.
int CaptureFreeStack(void** pcs, int max_depth, int skip, uint64_t* walk_id);

// The same from a given start instead of the caller: pcs[0] = pc, then the return addresses
// of the frames above the one whose state (after returning to pc) is sp and rbp. Through the
// cached CFI unwinder only: -1 if some frame needs libunwind or on other architectures (the
// caller then falls back to CaptureStack). 0 if re-entered. Inline (the profiler's exact-mode
// path calls it for every allocation).
// free_memo: through the frees' memo (CaptureFreeStack's) instead of the allocations'.
inline int CaptureStackFrom(uintptr_t pc, uintptr_t sp, uintptr_t rbp, void** pcs, int max_depth,
                            uint64_t* walk_id, bool free_memo = false);

// True if CaptureStackFrom(pc, sp, rbp, pcs, max_depth, &id, free_memo) with id == walk_id on
// entry would leave pcs untouched: the memo still holds, from this start, the walk that walk_id
// names. Checked with no copy, walk, call or guard; false on a memo miss, for walk_id 0, while
// the memo is being rewritten (a capture under way on this thread), and without the cached CFI
// unwinder. Inline: exact mode's allocations and free stacks ask it every time.
inline bool CaptureWouldRepeat(uintptr_t pc, uintptr_t sp, uintptr_t rbp, int max_depth,
                               uint64_t walk_id, bool free_memo);

// The same through the cached CFI unwinder only: -1 if some frame needs libunwind (or on
// architectures without it). For tests and comparisons.
int CaptureStackWithCfi(void** pcs, int max_depth, int skip);
// The same through libunwind's unw_backtrace only (the fallback CaptureStack uses for frames its
// cached CFI unwinder does not handle). For tests and comparisons.
int CaptureStackWithLibunwind(void** pcs, int max_depth, int skip);

// Idempotent one-time set-up of the libunwind fallback (per-thread caching) where it is linked
// in (libheapkit.a); in libheapkit.so the on-demand library does it when loaded, and until then
// there is no fallback (on_demand_library.h). Never loads anything: safe inside allocations.
void InitStackCapture();

// True while this thread is inside CaptureStack (for hooks that must not recurse).
bool InStackCapture();

// The recursion guard (stack_capture.cc).
extern __thread bool tls_in_stack_capture __attribute__((tls_model("initial-exec")));

inline __attribute__((always_inline)) int CaptureStackFrom(uintptr_t pc, uintptr_t sp,
                                                           uintptr_t rbp, void** pcs, int max_depth,
                                                           uint64_t* walk_id, bool free_memo) {
#ifdef HEAPKIT_CFI_UNWINDER
  if (tls_in_stack_capture || max_depth <= 0) {
    *walk_id = 0;
    return 0;
  }
  tls_in_stack_capture = true;
  if (max_depth > kMaxCaptureDepth) max_depth = kMaxCaptureDepth;
  const CallerRegs regs = {pc, sp, rbp};
  const int stored = CfiBacktrace(regs, 0, pcs, max_depth, walk_id, free_memo);
  tls_in_stack_capture = false;
  return stored;
#else
  (void)free_memo;
  (void)pc;
  (void)sp;
  (void)rbp;
  (void)pcs;
  (void)max_depth;
  *walk_id = 0;
  return -1;
#endif
}

inline bool CaptureWouldRepeat(uintptr_t pc, uintptr_t sp, uintptr_t rbp, int max_depth,
                               uint64_t walk_id, bool free_memo) {
#ifdef HEAPKIT_CFI_UNWINDER
  if (walk_id == 0) return false;
  if (max_depth > kMaxCaptureDepth) max_depth = kMaxCaptureDepth;
  // No guard: a capture by a signal handler may rewrite the memo while it is read here, or
  // this may run in a handler that interrupted a rewrite, and the memo's own order answers
  // both. A rewrite first clears pc0 (a memo under rewrite never matches), then takes a fresh
  // id (CfiFullWalk), so that a check that read any word of a rewrite reads an id other than
  // walk_id when it reads the id last (the fence keeps that read last).
  const WalkMemo& m = free_memo ? tls_cfi_free_memo : tls_cfi_memo;
  if (!MemoStillValid(m, CallerRegs{pc, sp, rbp})) return false;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  return WalkId(m, 0, max_depth) == walk_id;
#else
  (void)pc;
  (void)sp;
  (void)rbp;
  (void)max_depth;
  (void)walk_id;
  (void)free_memo;
  return false;
#endif
}

}  // namespace heapkit::prof
