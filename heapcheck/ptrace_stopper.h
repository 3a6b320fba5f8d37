// Stops the threads that keep the suspend signal blocked, from a helper task that traces them
// (LeakSanitizer stops every thread this way; here only the few the signal cannot reach).
//
// Design: the helper is a task cloned with CLONE_VM (it shares our memory, so it writes the
// saved registers straight into the stopper's slots) but not CLONE_THREAD (ptrace refuses a
// tracer of the same thread group), on a stack of its own, with every asynchronous signal
// blocked, exit signal 0 (no SIGCHLD reaches the program; only a __WALL wait sees it) and
// CLONE_UNTRACED (a strace -f of the program does not follow it). It shares our thread pointer,
// so it calls no libc function (errno, locks, lazy binding): raw system calls only. For each
// thread: PTRACE_SEIZE + PTRACE_INTERRUPT (no SIGSTOP is queued, so nothing is left pending if
// the helper dies), waitpid(__WALL) until the thread is in a ptrace stop, PTRACE_GETREGSET for
// its general registers (SP, thread pointer) and vector registers. A signal the thread received
// meanwhile stops it too: it is handed back at PTRACE_DETACH. The helper then sleeps until the
// controller releases it, detaches every thread and exits.
//
// Nothing stays stopped or traced when anything fails: the helper sets PR_SET_PDEATHSIG
// (SIGKILL) so it dies with the thread that started it; its fault signals are SIG_DFL and its
// core limit 0 (a crash kills only the helper); the controller waits for each answer only until
// the check's stop deadline, then kills the helper — the kernel detaches a dead tracer's
// tracees, and the helper's exit is seen through CLONE_CHILD_CLEARTID and reaped with waitpid.
//
// Permission: Yama's ptrace_scope 1 needs PR_SET_PTRACER naming the helper (set for as long as
// it lives; it replaces an exception the program set itself); 2 needs CAP_SYS_PTRACE and 3
// forbids ptrace; a seccomp filter or a container may forbid it; a thread already traced (gdb,
// strace) cannot be traced twice; a process that made itself non-dumpable is not made dumpable
// again (that would let other processes of the user attach). A privileged (AT_SECURE) process
// never uses the helper. Each refusal is explained in one line by the caller (Explain()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "heapcheck/stopped_thread.h"

namespace heapkit::check {

enum class TraceOutcome : uint32_t {
  kPending = 0,
  kStopped,  // in a ptrace stop, registers saved
  kGone,     // exited meanwhile: no roots, no message
  kRefused,  // attach failed (error)
  kFailed,   // helper could not be started, died or did not answer in time (error)
};

// Errors of kFailed besides the errno of a failed clone.
constexpr int kHelperDied = -1;
constexpr int kHelperTimedOut = -2;

class PtraceStopper {
 public:
  // Why this process never traces its threads (nullptr: it may): AT_SECURE, or switched off
  // with HEAP_CHECK_PTRACE=false.
  static const char* Unavailable();

  // Queues a thread; false when the queue is full (it is then not stopped).
  bool Add(pid_t tid, StoppedThread* out);
  // Stops every thread queued since the last call (starting the helper on first use); returns
  // when each has an outcome, or at deadline_ms (CLOCK_MONOTONIC): then the helper is killed
  // and every thread it traced runs again (their outcomes become kFailed).
  void StopQueued(int64_t deadline_ms);
  size_t queued() const { return count_; }
  pid_t tid(size_t i) const;
  TraceOutcome outcome(size_t i) const;
  // A sentence saying why thread i was not stopped (kRefused, kFailed), for the log line.
  const char* Explain(size_t i, pid_t tracer_of_thread, char* buf, size_t size) const;

  // Detaches every thread and reaps the helper; the queue is empty afterwards.
  void ResumeAll();

 private:
  bool StartHelper();
  void HelperGone(int error);

  size_t count_ = 0;
  size_t posted_ = 0;
  pid_t helper_ = 0;  // 0: not started
  int start_error_ = 0;
};

}  // namespace heapkit::check
