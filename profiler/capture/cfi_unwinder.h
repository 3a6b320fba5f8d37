// The cached .eh_frame (DWARF CFI) unwinder used by CaptureStack (stack_capture.h); x86-64 only
// (HEAPKIT_CFI_UNWINDER). Rules, caching and when a walk gives up (returns -1 so that the
// caller falls back to libunwind): cfi_unwinder.cc. The per-thread walk memo: below.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#define HEAPKIT_CFI_UNWINDER 1

namespace heapkit::prof {

// ---- register state at a call site ----

struct CallerRegs {
  uintptr_t pc;  // a return address
  uintptr_t sp;  // the stack pointer once that return has happened
  uintptr_t rbp;
};

// Fills *regs with the state of its caller right after the call returns. Written in assembly
// so that no prologue can disturb rbp or the stack.
extern "C" void heapkit_caller_regs(CallerRegs* regs);

// ---- the per-thread walk memo ----

// The frames of the thread's last complete walk and the stack words they depend on. Unwinding
// is a function of the start registers and of the words it reads (rules are per return
// address), so a walk that starts from the same (pc, sp) while each of those words still holds
// the value read then gives the same frames: checking that costs a load and a compare per frame
// instead of a rule lookup and the CFA arithmetic. This is the common case of an allocation
// from the same call site and stack depth as the previous one.
//
// What the frames depend on: each step's return-address word, and rbp only where a CFA is
// rbp-based. The rbp such a CFA uses is either the start rbp (check_rbp0: no frame below
// reloaded it) or the word some lower frame restored it from (one more WordCheck). In code
// built without frame pointers rbp is an ordinary register whose value at the capture, and
// whose saved copies, differ from call to call; comparing them when no CFA uses them would make
// the memo miss for nothing.
//
// Walk ids: the memo's id changes whenever the memo is rewritten (a per-thread counter), so two
// captures on one thread that return the same id returned the same frames; a caller that still
// holds the frames of that id need not have them copied again (CfiBacktrace's walk_id).
//
// The outer frames: a walk that the memo does not answer whole (another call site, another
// depth) usually reaches, after a few frames, a frame of the memo's walk — the same pc and sp,
// and the same rbp if the walk from there uses it. The rest of the walk is then the memo's
// from that frame on if the words the memo's walk read from there on still hold their values:
// the walk reads the stack only above that frame's sp, and only the check that pinned the
// frame's incoming rbp (rbp_dep) lies below it. So a miss steps only the frames below that
// junction and checks the words above it instead of stepping those frames (cfi_unwinder.cc,
// "Reusing the outer frames"); per frame the memo keeps what that needs.
constexpr int kMemoFrames = 64;
struct WordCheck {
  const uintptr_t* at;  // a stack word the walk read
  uintptr_t value;      // and what it held
};
// The check list is padded to a whole number of groups of kCheckGroup, at least one, with
// checks of kMemoPadWord (which always holds 0), so that MemoStillValid tests a group with one
// branch and needs no test before the first.
constexpr int kCheckGroup = 4;  // MemoStillValid's group is written out for 4
inline const uintptr_t kMemoPadWord = 0;
struct WalkMemo {
  uintptr_t pc0 = 0, sp0 = 0, rbp0 = 0;  // pc0 == 0: no memo
  bool check_rbp0 = false;               // some CFA uses the start rbp
  int frames = 0;                        // return addresses in pcs
  int checks = 0;                        // entries of check (a multiple of kCheckGroup)
  int groups = 0;                        // checks / kCheckGroup (at least 1 in a memo)
  uint64_t id = 0;                       // see "Walk ids"
  uint64_t next_id = 0;
  uintptr_t pcs[kMemoFrames] = {};
  // Every step's return-address word (pcs[i + 1], or the final 0) and the saved rbp words that
  // a later CFA used, in walk order: at most two per step; then the padding.
  WordCheck check[2 * kMemoFrames + kCheckGroup] = {};
  // Per frame i < frames, for a later walk that reaches it ("The outer frames"):
  // Check positions are kept as distances from the end of the walk's checks (walk_checks -
  // index), which do not change when the frames from i on move behind another walk's.
  int walk_checks = 0;                     // entries of check before the padding
  uintptr_t sps[kMemoFrames] = {};         // frame i's sp (sps[0] = sp0)
  uint16_t tail_checks[kMemoFrames] = {};  // the checks of the walk from frame i: the last ones
  // The check that pins frame i's incoming rbp (a saved rbp word below sps[i], or a pad word
  // when it is the start rbp), by its distance from the end, if the walk from frame i uses that
  // rbp, else 0; and the rbp itself then (a frame pointer), else 0 (in code without frame
  // pointers rbp may hold a heap pointer, and the leak checker scans this TLS).
  uint16_t rbp_dep[kMemoFrames] = {};
  uintptr_t rbp_in[kMemoFrames] = {};
  uint64_t outer_reuses = 0;  // walks completed from the outer frames of the one before
};
extern __thread WalkMemo tls_cfi_memo __attribute__((tls_model("initial-exec")));
// A second memo, for the captures at frees (HEAP_PROFILE_FREE_STACKS, CaptureFreeStack): a
// thread that alternates allocations and frees would otherwise rewrite the one memo at every
// capture, and every walk of both would be a full one. Its ids are its own (callers compare
// ids of one memo only).
extern __thread WalkMemo tls_cfi_free_memo __attribute__((tls_model("initial-exec")));

// While set on a thread, rule-cache misses compute the frame's rule without storing it. The
// cache is 512 KiB of .bss indexed by the return address's low bits, so the few frames of a
// rare capture (a heap-growth stack, at least 2 MiB of growth apart) would each write a
// different page: a program that never samples keeps the whole cache untouched this way.
extern __thread bool tls_cfi_no_cache_fill __attribute__((tls_model("initial-exec")));
class CfiNoCacheFillScope {
 public:
  CfiNoCacheFillScope() : saved_(tls_cfi_no_cache_fill) { tls_cfi_no_cache_fill = true; }
  ~CfiNoCacheFillScope() { tls_cfi_no_cache_fill = saved_; }
  CfiNoCacheFillScope(const CfiNoCacheFillScope&) = delete;
  CfiNoCacheFillScope& operator=(const CfiNoCacheFillScope&) = delete;

 private:
  bool saved_;
};

// Copies the memo's frames from `drop` on (out of line: the repeat capture needs no copy).
int CfiCopyFrames(const WalkMemo& m, int drop, void** out, int max);
// The full walk behind a memo miss (cfi_unwinder.cc): rewrites the memo `m`.
int CfiFullWalk(const CallerRegs& regs, int drop, void** out, int max, uint64_t* walk_id,
                WalkMemo& m);

// The number of frames CfiCopyFrames would store.
inline int FrameCount(const WalkMemo& m, int drop, int max) {
  const int n = m.frames - drop;
  return n <= 0 ? 0 : (n < max ? n : max);
}

// The id callers see: the memo's id with the (drop, max) that select its frames.
inline uint64_t WalkId(const WalkMemo& m, int drop, int max) {
  if (static_cast<unsigned>(drop | max) > 255) return 0;
  return (m.id << 16) | (static_cast<uint64_t>(drop) << 8) | static_cast<uint64_t>(max);
}

// Whether some word of the kCheckGroup checks from c on no longer holds its value.
inline bool GroupDiffers(const WordCheck* c) {
  return ((*c[0].at ^ c[0].value) | (*c[1].at ^ c[1].value) | (*c[2].at ^ c[2].value) |
          (*c[3].at ^ c[3].value)) != 0;
}

inline bool MemoStillValid(const WalkMemo& m, const CallerRegs& regs) {
  // A start pc is never 0, so pc0 == 0 (no memo) never matches.
  if (regs.pc != m.pc0 || regs.sp != m.sp0) return false;
  if (m.check_rbp0 && regs.rbp != m.rbp0) return false;
  // A group of checks at a time, in walk order (upwards from sp0, which is the current sp: the
  // words read are all above it on this stack), one branch per group.
  // The first group by its fixed place (the memo is thread-local: its fields are read relative
  // to the thread pointer, with no address to form), the others in a loop.
  if (GroupDiffers(m.check)) return false;
  const int groups = m.groups;
  for (int g = 1; g < groups; ++g)
    if (GroupDiffers(m.check + g * kCheckGroup)) return false;
  return true;
}

// ---- the walk ----

// Walks the frames above `regs`: return address i (i = 0 is regs.pc) goes to out[i - drop]
// for drop <= i < drop + max. Returns the number stored, or -1 if some frame needs libunwind.
// Malloc-free; takes the dynamic loader's lock only on a rule-cache miss.
// walk_id (optional): on return, an id of the frames (0: none). Two calls on one thread that
// return the same non-zero id return the same frames. If *walk_id already held that id on
// entry, out is left untouched (the caller still has those frames) and the count is returned.
// Inline: a memo hit is the common case of the profiler's exact mode.
// free_memo: use tls_cfi_free_memo instead of tls_cfi_memo.
inline __attribute__((always_inline)) int CfiBacktrace(const CallerRegs& regs, int drop, void** out,
                                                       int max, uint64_t* walk_id = nullptr,
                                                       bool free_memo = false) {
  WalkMemo& m = free_memo ? tls_cfi_free_memo : tls_cfi_memo;
  if (__builtin_expect(!MemoStillValid(m, regs), 0))
    return CfiFullWalk(regs, drop, out, max, walk_id, m);
  if (walk_id != nullptr) {
    const uint64_t id = WalkId(m, drop, max);
    const bool known = id != 0 && *walk_id == id;
    *walk_id = id;
    if (known) return FrameCount(m, drop, max);
  }
  return CfiCopyFrames(m, drop, out, max);
}

}  // namespace heapkit::prof

#endif  // __x86_64__
