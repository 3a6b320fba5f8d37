#include "heapcheck/thread_stopper.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "alloc/internal/monotonic_clock.h"
#include "alloc/internal/system_memory.h"
#include "alloc/internal/log.h"
#include "heapcheck/task_status.h"
#include "heapcheck/checker_settings.h"

namespace heapkit::check {
namespace {

// A slot's life: kSignalled -> (handler) kClaimed -> kStopped -> (released) kResumed; or
// kTracing (blocks the signal) -> kTraced (stopped by the ptrace helper); or kAbandoned (gone,
// or not stopped). The handler claims a slot with a compare-and-swap, so the controller's own
// swap out of kSignalled (giving up, or handing the thread to ptrace) never races it.
enum SlotState : uint32_t {
  kSignalled = 1,
  kStopped = 2,
  kResumed = 3,
  kAbandoned = 4,
  kClaimed = 5,
  kTracing = 6,
  kTraced = 7,
};

struct Slot {
  std::atomic<uint32_t> state;
  pid_t tracer;          // TracerPid when listed (explains a refused attach)
  uint32_t trace_index;  // its PtraceStopper request (kTracing)
  int64_t left_ns;       // CLOCK_MONOTONIC when its handler left (kResumed)
  StoppedThread data;
};

constexpr size_t kMaxThreads = 1 << 15;
Slot* g_slots = nullptr;  // mmap'd kMaxThreads slots, reused by every check
std::atomic<size_t> g_slot_count{0};
std::atomic<uint32_t> g_release{0};

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

pid_t Gettid() { return static_cast<pid_t>(syscall(SYS_gettid)); }

void SuspendHandler(int, siginfo_t* info, void* context) {
  int saved_errno = errno;
  if (info->si_code != SI_TKILL || info->si_pid != getpid() || g_slots == nullptr) {
    errno = saved_errno;
    return;
  }
  pid_t tid = Gettid();
  size_t n = g_slot_count.load(std::memory_order_acquire);
  Slot* slot = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (g_slots[i].data.tid == tid) {
      slot = &g_slots[i];
      break;
    }
  }
  uint32_t expected = kSignalled;
  if (slot == nullptr || !slot->state.compare_exchange_strong(expected, kClaimed)) {
    errno = saved_errno;
    return;
  }
  auto* uc = static_cast<ucontext_t*>(context);
  StoppedThread& d = slot->data;
  int r = 0;
#if defined(__x86_64__)
  for (int i = 0; i < NGREG && r < kSavedRegisterWords; ++i)
    d.registers[r++] = static_cast<uintptr_t>(uc->uc_mcontext.gregs[i]);
  if (uc->uc_mcontext.fpregs != nullptr) {
    for (int i = 0; i < 16 && r + 2 <= kSavedRegisterWords; ++i) {
      std::memcpy(&d.registers[r], &uc->uc_mcontext.fpregs->_xmm[i], 16);
      r += 2;
    }
  }
  d.sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
  uintptr_t tp;
  asm volatile("mov %%fs:0, %0" : "=r"(tp));
  d.thread_pointer = tp;
#elif defined(__aarch64__)
  for (int i = 0; i < 31 && r < kSavedRegisterWords; ++i)
    d.registers[r++] = static_cast<uintptr_t>(uc->uc_mcontext.regs[i]);
  d.sp = static_cast<uintptr_t>(uc->uc_mcontext.sp);
  d.thread_pointer = reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
#else
#error "heapcheck: unsupported architecture"
#endif
  d.register_count = r;
  uint32_t release = g_release.load(std::memory_order_acquire);
  slot->state.store(kStopped, std::memory_order_release);
  Futex(&slot->state, FUTEX_WAKE_PRIVATE, 1, nullptr);
  while (g_release.load(std::memory_order_acquire) == release) {
    Futex(&g_release, FUTEX_WAIT_PRIVATE, release, nullptr);
  }
  // Wakes the handlers still asleep: the controller's wake may be preempted by the first thread
  // it wakes, and whichever released thread runs first finishes the release.
  Futex(&g_release, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
  // Every handler of this stop has been woken by now (none waits again in this stop).
  slot->left_ns = internal::MonotonicNanos();  // clock_gettime: async-signal-safe
  slot->state.store(kResumed, std::memory_order_release);
  Futex(&slot->state, FUTEX_WAKE_PRIVATE, 1, nullptr);
  errno = saved_errno;
}

struct KernelDirent {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// Calls f(tid) for each thread of this process. False if /proc/self/task is unreadable.
template <typename F>
bool ForEachTask(F&& f) {
  int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(8) char buf[4096];
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<KernelDirent*>(buf + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (name[0] < '0' || name[0] > '9') continue;
      long tid = 0;
      for (const char* c = name; *c >= '0' && *c <= '9'; ++c) tid = tid * 10 + (*c - '0');
      f(static_cast<pid_t>(tid));
    }
  }
  close(fd);
  return true;
}

struct sigaction g_old_action;

// Whether thread `tid` blocks `sig` now (its status unreadable: no).
bool BlocksSignal(pid_t tid, int sig) {
  TaskStatus status;
  return ReadTaskStatus(tid, &status) && MaskHas(status.blocked, sig);
}

}  // namespace

int SuspendSignal() {
  // Read on first use; racing first readers parse the same value (an atomic, not a guarded
  // static: libheapkit.so needs no C++ runtime). 0 is no signal number, so it means "not read".
  static std::atomic<int> sig{0};
  int value = sig.load(std::memory_order_acquire);
  if (value == 0) {
    value = static_cast<int>(internal::SettingInt64Within(
        CheckerSetting("HEAP_CHECK_SUSPEND_SIGNAL"), SIGRTMAX - 5, SIGRTMIN + 3, SIGRTMAX));
    sig.store(value, std::memory_order_release);
  }
  return value;
}

const StoppedThread* ThreadStopper::thread(size_t i) const {
  if (i >= slot_count_) return nullptr;
  const uint32_t state = g_slots[i].state.load(std::memory_order_acquire);
  return state == kStopped || state == kTraced ? &g_slots[i].data : nullptr;
}

namespace {

// The slots' mapping (once) and the suspend handler. False if either is refused.
bool PrepareSuspension(int sig) {
  if (g_slots == nullptr) {
    // The runtime's own mapping: registers saved by a past check are not roots of the next.
    void* p = internal::SystemAlloc(kMaxThreads * sizeof(Slot), 0);
    if (p == nullptr) return false;
    g_slots = static_cast<Slot*>(p);
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_sigaction = SuspendHandler;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (sigaction(sig, &action, &g_old_action) != 0) return false;
  // glibc copies the kernel's 8-byte mask into the 128-byte sigset_t through a buffer whose
  // other bytes were never written: stale stack data. In a static link this variable is part of
  // the program's .bss, a root, where a stale pointer would keep a leaked object alive. Linux
  // has 64 signals, so those bytes mean nothing: clear them.
  constexpr size_t kKernelMaskBytes = 8;
  std::memset(reinterpret_cast<char*>(&g_old_action.sa_mask) + kKernelMaskBytes, 0,
              sizeof(g_old_action.sa_mask) - kKernelMaskBytes);
  return true;
}

// Outcome of waiting for one signalled thread.
enum class Wait { kStopped, kGone, kBlocking, kTimedOut };

// Waits until the thread of `s` has stopped, has exited, or the deadline passed (then its slot
// is abandoned; the handler of a late signal finds it so and returns at once). A thread seen
// blocking the signal (it blocked it after its status was read) is handed to ptrace at once
// (state kTracing): the pending signal runs the handler only once it unblocks, after the check,
// and finds the slot no longer kSignalled.
Wait AwaitStop(Slot& s, int64_t deadline, int sig) {
  char path[64];
  internal::FormatTo(path, sizeof(path), "/proc/self/task/%d", s.data.tid);
  for (int polls = 1;; ++polls) {
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (state == kStopped) return Wait::kStopped;
    if (state == kClaimed) {  // the handler is saving its registers: a moment
      Futex(&s.state, FUTEX_WAIT_PRIVATE, kClaimed, nullptr);
      continue;
    }
    // A thread that exited after the listing (or is exiting with signals blocked) vanishes
    // from /proc: stop waiting for it without a message.
    const bool timed_out = deadline - internal::MonotonicMillis() <= 0;
    const bool blocking = polls % 4 == 0 && BlocksSignal(s.data.tid, sig);
    if (timed_out || blocking || polls % 8 == 0) {
      const bool gone = access(path, F_OK) != 0 && errno == ENOENT;
      if (gone || timed_out || blocking) {
        const uint32_t next = gone || timed_out ? kAbandoned : kTracing;
        uint32_t expected = kSignalled;
        if (!s.state.compare_exchange_strong(expected, next)) continue;  // claimed meanwhile
        return gone ? Wait::kGone : timed_out ? Wait::kTimedOut : Wait::kBlocking;
      }
    }
    timespec ts{0, 2000000};  // re-check at least every 2 ms
    Futex(&s.state, FUTEX_WAIT_PRIVATE, kSignalled, &ts);
  }
}

}  // namespace

void ThreadStopper::ListUnstopped(pid_t tid) {
  if (unstopped_count_ < kMaxUnstoppedListed) unstopped_[unstopped_count_] = tid;
  ++unstopped_count_;
}

void ThreadStopper::NoteUnstopped(pid_t tid, int timeout_ms, int sig) {
  internal::Log(
      "leak check: thread %d did not stop within %d ms (signal %d consumed?); "
      "its stack and registers are not scanned",
      tid, timeout_ms, sig);
  ListUnstopped(tid);
}

void ThreadStopper::NoteUntraced(pid_t tid, int sig, const char* why) {
  internal::Log(
      "leak check: thread %d blocks signal %d (HEAP_CHECK_SUSPEND_SIGNAL) and could "
      "not be stopped with ptrace: %s. It kept running during the check, and objects "
      "only its stack or registers point to may be reported as leaks",
      tid, sig, why);
  ListUnstopped(tid);
}

// Stops the threads of slots [from, slot_count_) that block the signal (kTracing) with the
// ptrace helper; those it cannot stop are named.
void ThreadStopper::TraceBlocking(size_t from, int64_t deadline, int sig) {
  const char* unavailable = PtraceStopper::Unavailable();
  const size_t first_request = ptrace_.queued();
  for (size_t i = from; i < slot_count_; ++i) {
    Slot& s = g_slots[i];
    if (s.state.load(std::memory_order_acquire) != kTracing) continue;
    s.trace_index = static_cast<uint32_t>(ptrace_.queued());
    const char* why = unavailable;
    if (why == nullptr && !ptrace_.Add(s.data.tid, &s.data))
      why = "too many threads block the signal";
    if (why != nullptr) {
      s.state.store(kAbandoned, std::memory_order_release);
      NoteUntraced(s.data.tid, sig, why);
    }
  }
  if (ptrace_.queued() == first_request) return;
  ptrace_.StopQueued(deadline);
  // Earlier rounds' threads too: if the helper died or was killed now, the kernel let every
  // thread it had stopped run again (their outcomes became kFailed).
  for (size_t i = 0; i < slot_count_; ++i) {
    Slot& s = g_slots[i];
    const uint32_t state = s.state.load(std::memory_order_acquire);
    if (state != kTracing && state != kTraced) continue;
    const TraceOutcome outcome = ptrace_.outcome(s.trace_index);
    if (outcome == TraceOutcome::kStopped) {
      s.state.store(kTraced, std::memory_order_release);
      continue;
    }
    s.state.store(kAbandoned, std::memory_order_release);
    if (outcome == TraceOutcome::kGone) continue;
    char why[200];
    NoteUntraced(s.data.tid, sig, ptrace_.Explain(s.trace_index, s.tracer, why, sizeof(why)));
  }
}

// Gives every task not seen yet a slot: reads its status, then signals it, or marks it for
// ptrace (kTracing) if it blocks the signal. False if /proc/self/task cannot be read.
bool ThreadStopper::SignalNewTasks(pid_t self, pid_t pid, int sig) {
  return ForEachTask([&](pid_t tid) {
    if (tid == self) return;
    for (size_t i = 0; i < slot_count_; ++i)
      if (g_slots[i].data.tid == tid) return;
    if (slot_count_ >= kMaxThreads) return;
    TaskStatus status;
    const bool known = ReadTaskStatus(tid, &status);
    Slot& s = g_slots[slot_count_];
    s.data.tid = tid;
    s.data.register_count = 0;
    s.tracer = known ? status.tracer : 0;
    // Gone or a zombie (a main thread that called pthread_exit): no stack to scan, nothing to
    // stop. Unreadable: signalled (the wait tells an exited thread from a slow one).
    uint32_t state = kSignalled;
    if (known && status.exited)
      state = kAbandoned;
    else if (known && MaskHas(status.blocked, sig))
      state = kTracing;
    s.state.store(state, std::memory_order_relaxed);
    ++slot_count_;
    g_slot_count.store(slot_count_, std::memory_order_release);
    if (state == kSignalled && syscall(SYS_tgkill, pid, tid, sig) != 0) {
      s.state.store(kAbandoned, std::memory_order_relaxed);  // exited meanwhile
    }
  });
}

bool ThreadStopper::StopAll(int timeout_ms) {
  AwaitResumed();  // the slots of a stop released but not awaited are not free yet
  stopped_count_ = traced_count_ = slot_count_ = unstopped_count_ = 0;
  const int sig = SuspendSignal();
  if (!PrepareSuspension(sig)) return false;
  const pid_t self = Gettid();
  const pid_t pid = getpid();
  const int64_t deadline = internal::MonotonicMillis() + timeout_ms;
  bool listed = true;
  // Threads may start threads while we list: list again until a round finds no new one.
  for (int round = 0; round < 1000; ++round) {
    const size_t before = slot_count_;
    listed = SignalNewTasks(self, pid, sig);
    if (!listed) break;
    for (size_t i = before; i < slot_count_; ++i) {
      if (g_slots[i].state.load(std::memory_order_acquire) != kSignalled) continue;
      const Wait w = AwaitStop(g_slots[i], deadline, sig);
      if (w == Wait::kTimedOut) NoteUnstopped(g_slots[i].data.tid, timeout_ms, sig);
    }
    TraceBlocking(before, deadline, sig);
    if (slot_count_ == before) break;
  }
  for (size_t i = 0; i < slot_count_; ++i) {
    const uint32_t state = g_slots[i].state.load(std::memory_order_acquire);
    if (state == kStopped || state == kTraced) ++stopped_count_;
    if (state == kTraced) ++traced_count_;
  }
  if (!listed && slot_count_ == 0) {
    sigaction(sig, &g_old_action, nullptr);
    return false;
  }
  return true;
}

void ThreadStopper::Release() {
  if (released_) return;
  release_start_ns_ = internal::MonotonicNanos();
  ptrace_.ResumeAll();  // detaches every traced thread and reaps the helper
  detached_ns_ = internal::MonotonicNanos();
  g_release.fetch_add(1, std::memory_order_acq_rel);
  Futex(&g_release, FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr);
  woken_ns_ = internal::MonotonicNanos();
  released_ = true;
}

size_t ThreadStopper::handlers_not_left() const {
  if (!released_) return 0;
  size_t n = 0;
  for (size_t i = 0; i < slot_count_; ++i)
    n += g_slots[i].state.load(std::memory_order_acquire) == kStopped;
  return n;
}

void ThreadStopper::AwaitResumed() {
  if (!released_) return;
  const int64_t deadline = internal::MonotonicMillis() + 2000;
  int64_t first_left = INT64_MAX, last_left = 0;  // no signalled thread: none to wait for
  for (size_t i = 0; i < slot_count_; ++i) {
    Slot& s = g_slots[i];
    uint32_t state;
    while ((state = s.state.load(std::memory_order_acquire)) == kStopped &&
           internal::MonotonicMillis() < deadline) {
      timespec ts{0, 1000000};
      Futex(&s.state, FUTEX_WAIT_PRIVATE, kStopped, &ts);
    }
    if (state == kResumed) {
      if (s.left_ns > last_left) last_left = s.left_ns;
      if (s.left_ns < first_left) first_left = s.left_ns;
    }
    if (state == kStopped) last_left = internal::MonotonicNanos();  // not left in 2 s: now
  }
  // Every thread was released once the controller's wake returned, or earlier: once the traced
  // ones were detached and the first handler to run had woken all the others.
  const int64_t all_woken = first_left > detached_ns_ ? first_left : detached_ns_;
  released_ns_ = all_woken < woken_ns_ ? all_woken : woken_ns_;
  running_ns_ = last_left > released_ns_ ? last_left : released_ns_;
  // Late handlers of abandoned slots see state != kSignalled and return at once.
  g_slot_count.store(0, std::memory_order_release);
  sigaction(SuspendSignal(), &g_old_action, nullptr);
  slot_count_ = 0;
  released_ = false;
}

}  // namespace heapkit::check
