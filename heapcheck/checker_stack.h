// A stack of the checker's own for the check and its report.
//
// The whole-program check runs in an exit handler, on the stack of whichever thread called
// exit(): with `ulimit -s 128`, or a thread created with a 160 KiB stack, the flood, libdwfl
// and the demangler (~150 KiB together) ran off its end. RunOnCheckerStack runs fn on a 4 MiB
// mmap'd stack with a PROT_NONE guard page below it (kept for later checks), then returns to
// the caller's stack. The roots of the calling thread are unaffected: they are taken from the
// entry SP the caller captured before switching, and this stack is not a root.
#pragma once

namespace heapkit::check {

// Runs fn(arg) on the checker's stack; on the caller's own stack if that cannot be mapped.
// Not reentrant: one stack, one saved context; the caller holds the check gate (check_gate.h).
void RunOnCheckerStack(void (*fn)(void*), void* arg);

}  // namespace heapkit::check
