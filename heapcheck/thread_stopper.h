// Stop-the-world without ptrace (works in containers where ptrace is denied).
//
// Design: the controller lists /proc/self/task with getdents64 (no opendir: it mallocs), sends
// each other thread a real-time signal with tgkill, and waits (futex, bounded by a timeout) until
// each handler has stored its registers, stack pointer and thread pointer into its slot. Handlers
// then sleep on a futex until released. The listing is repeated until it contains no new thread,
// so threads created while stopping are caught too. Threads that exited are gone from /proc and
// are never roots. A thread that does not answer in time (signal blocked, stuck in the kernel)
// gets one clear line and is left out: its stack is not scanned.
//
// Signal: SIGRTMAX-5 (59 on Linux/glibc) by default — glibc reserves SIGRTMIN..+2, and common
// users of real-time signals (timers, AIO, Boehm GC, JVM) pick SIGRTMIN+n or SIGRTMAX. Override
// with HEAP_CHECK_SUSPEND_SIGNAL=<number>. The previous disposition is restored after each check.
//
// Rules while stopped: the controller never mallocs and takes no allocator lock; slots live in
// an mmap'd array; handlers only use async-signal-safe calls. Resume() waits until every handler
// has left its slot so the slots can be reused by the next check.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace heapkit::check {

constexpr int kSavedRegisterWords = 23 + 32;  // general registers + xmm0..15 (2 words each)

struct StoppedThread {
  pid_t tid;
  uintptr_t sp;
  uintptr_t thread_pointer;  // %fs base: TCB / struct pthread
  uintptr_t registers[kSavedRegisterWords];
  int register_count;
};

class ThreadStopper {
 public:
  // Stops all other threads. Returns false only if stopping is impossible (no /proc); then
  // nothing is stopped. Threads that do not answer within timeout_ms are reported and skipped.
  bool StopAll(int timeout_ms);
  void ResumeAll();

  size_t stopped_count() const { return stopped_count_; }
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
  void NoteUnstopped(pid_t tid, int timeout_ms, int sig);
  void NoteBlocking(pid_t tid, int sig);
  void ListUnstopped(pid_t tid);

  size_t stopped_count_ = 0;
  size_t slot_count_ = 0;
  size_t unstopped_count_ = 0;
  pid_t unstopped_[kMaxUnstoppedListed] = {};
};

// The real-time signal used for suspension.
int SuspendSignal();

}  // namespace heapkit::check
