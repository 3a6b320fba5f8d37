// One check at a time: the gate every leak check and every stop-the-world of the checker passes.
//
// What it serializes: the exit check, the signal check, HeapLeakChecker's checks (NoLeaks and
// its family, NoGlobalLeaks), the live check (/debug/pprof/leaks), and the brief snapshots of
// the live objects (a named check's baseline, a Disabler's before/after, minimal mode's list at
// main() start). Each of them stops the other threads and uses state there is one of:
//   - the thread stopper's slots, release word and the suspend signal's disposition;
//   - leak_check.cc's scratch arrays, check_driver's CheckResult, the live check's result;
//   - the checker's stack and its single ucontext (checker_stack.h);
//   - the sampling pause while a report symbolizes (PauseRecording below: a
//     ScopedSamplingPeriod of alloc/sampling_period.h that lives here, not on a caller's stack).
// Two checks at once each tried to stop the other's thread, shared those arrays (mmap refused,
// "no result"), and restored each other's saved sampling parameter (false leaks later).
//
// How callers wait:
//   - kUntilFree (the program's own checks): blocks on a futex until the gate is free. The
//     futex wait is interrupted by the suspend signal (and by ptrace for a thread that blocks
//     it), so a waiting thread is stopped by the running check like any other thread, scanned
//     from its saved SP and registers, and waits on when released. It never spins.
//   - kBriefly (the live check): waits at most kBriefGateWaitMs, then gives up ("busy"): a
//     client never queues behind the program's checks, nor holds a thread of the program.
// The holder is never stopped: only the holder runs a stopper, and a stopper never stops its
// own thread; a forked child has only the forking thread. A thread that asks for the gate again
// while it holds it (a check started from inside a check) is refused with one line, not
// deadlocked.
//
// Loader lock: a waiter inside a library constructor that dlopen runs (a Disabler or a named
// check in a static initializer) waits holding the loader's lock. The holder needs only the
// loader's write lock (dl_iterate_phdr, before the stop), which dlopen does not hold while
// constructors run, so checks go on; a report with leaks, though, names pprof-tool through
// dladdr (follow_up_tool.h), which takes the loader's lock: that report and such a waiter
// would wait for each other. Not handled yet.
//
// Fork: a child forked while another thread held the gate finds it free (that thread does not
// exist in the child), with the sampling pause the holder had begun ended. A child
// forked by the holder itself (a check that forks) keeps it held: the code that returns in the
// child releases it.
#pragma once

namespace heapkit::check {

enum class GateWait {
  kUntilFree,  // exit, signal and API checks, snapshots: wait as long as the running check takes
  kBriefly,    // the live check: at most kBriefGateWaitMs, then busy
};

inline constexpr int kBriefGateWaitMs = 5;

// Scoped holder: takes the gate in its constructor (held() says whether it did) and gives it
// back in its destructor, with recording restored if PauseRecording was called.
class CheckGate {
 public:
  explicit CheckGate(GateWait wait);
  ~CheckGate();
  CheckGate(const CheckGate&) = delete;
  CheckGate& operator=(const CheckGate&) = delete;

  bool held() const { return held_; }

  // Allocation recording off (sampling period 0 in effect; the period of record stays) until the
  // gate is released: the report's symbolizer uses the normal heap. Only with the gate held.
  void PauseRecording();

 private:
  bool held_ = false;
};

// Whether the calling thread holds the gate: the checker's shared state is its to use.
bool CheckGateHeldHere();

// Registers the fork handler that frees, in a child, a gate held by another thread of the
// parent. Called once when a HEAPCHECK mode starts (check_driver.cc).
void InstallCheckGateForkHandler();

}  // namespace heapkit::check
