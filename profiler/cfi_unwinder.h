// The cached .eh_frame (DWARF CFI) unwinder used by CaptureStack (stack_capture.h); x86-64 only
// (HEAPKIT_CFI_UNWINDER). Rules, caching, the per-thread walk memo and when a walk gives up
// (returns -1 so that the caller falls back to libunwind): cfi_unwinder.cc.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#define HEAPKIT_CFI_UNWINDER 1

namespace heapkit::prof {

// ---- register state at a call site ----

struct CallerRegs {
  uintptr_t pc;   // a return address
  uintptr_t sp;   // the stack pointer once that return has happened
  uintptr_t rbp;
};

// Fills *regs with the state of its caller right after the call returns. Written in assembly
// so that no prologue can disturb rbp or the stack.
extern "C" void heapkit_caller_regs(CallerRegs* regs);

// Walks the frames above `regs`: return address i (i = 0 is regs.pc) goes to out[i - drop]
// for drop <= i < drop + max. Returns the number stored, or -1 if some frame needs libunwind.
// Malloc-free; takes the dynamic loader's lock only on a rule-cache miss.
int CfiBacktrace(const CallerRegs& regs, int drop, void** out, int max);

}  // namespace heapkit::prof

#endif  // __x86_64__
