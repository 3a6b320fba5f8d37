// Stop-the-world: signals for the threads that take them, ptrace for those that block them.
//
// Design: the controller lists /proc/self/task with getdents64 (no opendir: it mallocs) and,
// for each other thread, first reads its blocked mask from /proc/self/task/<tid>/status
// (task_status.h). A thread that does not block the suspend signal is sent it with tgkill; the
// controller waits (futex, bounded by a timeout) until its handler has stored its registers,
// stack pointer and thread pointer into its slot; handlers then sleep on a futex until
// released. A thread that blocks it (every signal blocked, like xz's -T workers or jemalloc's
// background thread, or waiting for it in sigwaitinfo) is not signalled: it is stopped by the
// ptrace helper (ptrace_stopper.h), which saves the same state into the same slot, so its stack
// and registers are roots like any other's. A thread found blocking it only while being waited
// for goes the same way. The listing is repeated until it contains no new thread, so threads
// created while stopping are caught too. Threads that exited are gone from /proc and are never
// roots. A thread that cannot be stopped either way (ptrace refused, or no answer in time)
// gets one clear line naming it and why, and is left out: its stack is not scanned.
//
// Signal: SIGRTMAX-5 (59 on Linux/glibc) by default — glibc reserves SIGRTMIN..+2, and common
// users of real-time signals (timers, AIO, Boehm GC, JVM) pick SIGRTMIN+n or SIGRTMAX. Override
// with HEAP_CHECK_SUSPEND_SIGNAL=<number>. The previous disposition is restored after each check.
//
// Rules while stopped: the controller never mallocs and takes no allocator lock; slots live in
// an mmap'd array; handlers only use async-signal-safe calls.
//
// Resuming has two steps. Release() ends the pause: the ptrace helper detaches every thread it
// traced and exits, and one futex wake frees every handler; from then on every stopped thread
// may run, and when it does is the scheduler's business (with more busy threads than cores, the
// last one may wait a time slice or more). The first thread woken may preempt the controller
// before its wake has reached the others: so every handler, as it leaves, wakes the ones still
// asleep too, and whichever released thread runs first finishes the release. AwaitResumed() then
// waits, bounded, until every released handler has left its slot. Invariant: no slot is reused (no
// StopAll, no new slot count) before AwaitResumed has returned — a handler still in its slot writes
// kResumed into it on its way out — so StopAll and the destructor call AwaitResumed for a caller
// that did not. ResumeAll() does both steps.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "heapcheck/ptrace_stopper.h"
#include "heapcheck/stopped_thread.h"

namespace heapkit::check {

class ThreadStopper {
 public:
  // Stops all other threads. Returns false only if stopping is impossible (no /proc); then
  // nothing is stopped. Threads that cannot be stopped (ptrace refused) or do not answer within
  // timeout_ms are reported and skipped.
  bool StopAll(int timeout_ms);
  // The end of the pause: every stopped thread may run again (traced ones detached, handlers
  // woken). The slots stay in use until AwaitResumed.
  void Release();
  // After Release: waits until every released handler has left its slot (at most 2 s), then
  // restores the signal's previous disposition. The slots are free for the next stop after it.
  void AwaitResumed();
  void ResumeAll() {
    Release();
    AwaitResumed();
  }
  ~ThreadStopper() { AwaitResumed(); }
  // Released handlers that have not left their slot yet (0 once AwaitResumed returned).
  size_t handlers_not_left() const;
  // After AwaitResumed (CLOCK_MONOTONIC ns): when Release began; when every stopped thread had
  // been released (the end of the pause); when the last of them had left its handler.
  int64_t release_start_ns() const { return release_start_ns_; }
  int64_t released_ns() const { return released_ns_; }
  int64_t running_ns() const { return running_ns_; }

  size_t stopped_count() const { return stopped_count_; }  // by either means
  size_t traced_count() const { return traced_count_; }    // of which by ptrace
  // Threads still alive that did not answer in time (their roots are not scanned): how many,
  // and the first kMaxUnstoppedListed of their tids.
  static constexpr size_t kMaxUnstoppedListed = 16;
  size_t unstopped_count() const { return unstopped_count_; }
  const pid_t* unstopped_tids() const { return unstopped_; }
  // Slots 0..slot_count(): thread(i) is the saved state of a stopped thread, or nullptr for a
  // thread that exited or did not answer.
  size_t slot_count() const { return slot_count_; }
  const StoppedThread* thread(size_t i) const;

 private:
  bool SignalNewTasks(pid_t self, pid_t pid, int sig);
  void TraceBlocking(size_t from, int64_t deadline, int sig);
  void NoteUnstopped(pid_t tid, int timeout_ms, int sig);
  void NoteUntraced(pid_t tid, int sig, const char* why);
  void ListUnstopped(pid_t tid);

  PtraceStopper ptrace_;
  size_t stopped_count_ = 0;
  size_t traced_count_ = 0;
  size_t slot_count_ = 0;
  size_t unstopped_count_ = 0;
  pid_t unstopped_[kMaxUnstoppedListed] = {};
  bool released_ = false;  // Release done, AwaitResumed not yet
  int64_t release_start_ns_ = 0;
  int64_t detached_ns_ = 0;  // the traced threads detached
  int64_t woken_ns_ = 0;     // the controller's futex wake returned
  int64_t released_ns_ = 0;
  int64_t running_ns_ = 0;
};

// The real-time signal used for suspension.
int SuspendSignal();

}  // namespace heapkit::check
