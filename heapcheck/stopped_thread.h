// The saved state of one stopped thread: what makes its stack and registers roots. Filled by
// the suspend signal's handler (thread_stopper.cc) or by the ptrace helper (ptrace_stopper.cc).
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace heapkit::check {

// x86-64: the ptrace general registers (27 words; the signal context has 23) + xmm0..15.
constexpr int kSavedRegisterWords = 27 + 32;

struct StoppedThread {
  pid_t tid;
  uintptr_t sp;
  uintptr_t thread_pointer;  // %fs base: TCB / struct pthread
  uintptr_t registers[kSavedRegisterWords];
  int register_count;
};

}  // namespace heapkit::check
