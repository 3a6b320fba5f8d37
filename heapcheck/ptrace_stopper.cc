#include "heapcheck/ptrace_stopper.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__aarch64__)
#include <asm/ptrace.h>
#endif

#include <cerrno>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"
#include "alloc/internal/system_memory.h"
#include "heapcheck/checker_settings.h"

namespace heapkit::check {
namespace {

struct Request {
  pid_t tid;
  StoppedThread* out;
  std::atomic<uint32_t> outcome;
  int error;
  int pending_signal;  // caught by the stop; handed back at detach
  bool attached;
};

// Threads that block the suspend signal are few (a pool's workers, an allocator's background
// thread); more than this are not stopped (each gets the usual line).
constexpr size_t kMaxTraced = 4096;
Request* g_requests = nullptr;  // mmap'd once

// What the controller and the helper share (the helper runs in our memory).
struct Shared {
  std::atomic<uint32_t> go;        // 1: PR_SET_PTRACER is in place, the helper may attach
  std::atomic<uint32_t> command;   // bumped with each post and with the release
  std::atomic<uint32_t> posted;    // requests [0, posted) handed to the helper
  std::atomic<uint32_t> answered;  // requests [0, answered) have their outcome
  std::atomic<uint32_t> release;   // 1: detach every thread and exit
  pid_t parent;                    // our pid: the helper exits at once if its parent differs
  // CLONE_CHILD_CLEARTID: the kernel writes 0 here and wakes (a shared futex) when the
  // helper's memory is released, i.e. when it exits or is killed.
  std::atomic<int32_t> alive;
};
Shared g_shared;

constexpr size_t kHelperStackSize = 64 << 10;
char* g_helper_stack = nullptr;  // mmap'd once, a guard page below

// ---- the helper: raw system calls only (it shares our thread pointer, so no errno) ----

#if defined(__x86_64__)
inline long Sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long ret;
  register long r10 asm("r10") = d;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
}
#elif defined(__aarch64__)
inline long Sys(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  register long x8 asm("x8") = n;
  register long x0 asm("x0") = a;
  register long x1 asm("x1") = b;
  register long x2 asm("x2") = c;
  register long x3 asm("x3") = d;
  asm volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
}
#else
#error "heapcheck: unsupported architecture"
#endif

long Addr(const void* p) { return reinterpret_cast<long>(p); }

void HelperWait(std::atomic<uint32_t>* word, uint32_t value) {
  Sys(SYS_futex, Addr(word), FUTEX_WAIT_PRIVATE, value, 0);
}

void HelperWake(std::atomic<uint32_t>* word) {
  Sys(SYS_futex, Addr(word), FUTEX_WAKE_PRIVATE, INT32_MAX);
}

// Registers of the stopped thread of r into its StoppedThread (volatile stores: a loop the
// compiler turned into a memcpy call would leave the helper's raw-syscall world). False if
// the thread vanished.
bool SaveRegisters(Request& r) {
  StoppedThread& d = *r.out;
  volatile uintptr_t* dst = d.registers;
  int n = 0;
#if defined(__x86_64__)
  user_regs_struct regs;
  iovec io{&regs, sizeof(regs)};
  if (Sys(SYS_ptrace, PTRACE_GETREGSET, r.tid, NT_PRSTATUS, Addr(&io)) < 0) return false;
  const auto* words = reinterpret_cast<const uintptr_t*>(&regs);
  for (size_t i = 0; i < sizeof(regs) / sizeof(uintptr_t) && n < kSavedRegisterWords; ++i)
    dst[n++] = words[i];
  // xmm0..15: compilers keep pointers in vector registers too.
  user_fpregs_struct fp;
  iovec fio{&fp, sizeof(fp)};
  if (Sys(SYS_ptrace, PTRACE_GETREGSET, r.tid, NT_PRFPREG, Addr(&fio)) == 0) {
    const auto* xmm = reinterpret_cast<const uintptr_t*>(fp.xmm_space);
    for (int i = 0; i < 32 && n < kSavedRegisterWords; ++i) dst[n++] = xmm[i];
  }
  d.sp = regs.rsp;
  d.thread_pointer = regs.fs_base;
#elif defined(__aarch64__)
  user_pt_regs regs;
  iovec io{&regs, sizeof(regs)};
  if (Sys(SYS_ptrace, PTRACE_GETREGSET, r.tid, NT_PRSTATUS, Addr(&io)) < 0) return false;
  for (int i = 0; i < 31 && n < kSavedRegisterWords; ++i) dst[n++] = regs.regs[i];
  uint64_t tls = 0;
  iovec tio{&tls, sizeof(tls)};
  Sys(SYS_ptrace, PTRACE_GETREGSET, r.tid, 0x401 /* NT_ARM_TLS */, Addr(&tio));
  d.sp = regs.sp;
  d.thread_pointer = tls;
#endif
  d.register_count = n;
  return true;
}

// Stops requests [from, to): attaches to all first (they stop in parallel), then waits for each.
void StopRange(uint32_t from, uint32_t to) {
  for (uint32_t i = from; i < to; ++i) {
    Request& r = g_requests[i];
    const long e = Sys(SYS_ptrace, PTRACE_SEIZE, r.tid, 0, 0);
    if (e < 0) {
      r.error = static_cast<int>(-e);
      r.outcome.store(
          static_cast<uint32_t>(e == -ESRCH ? TraceOutcome::kGone : TraceOutcome::kRefused),
          std::memory_order_release);
      continue;
    }
    r.attached = true;
    // Fails only for a thread that is exiting: the wait below sees its exit.
    Sys(SYS_ptrace, PTRACE_INTERRUPT, r.tid, 0, 0);
  }
  for (uint32_t i = from; i < to; ++i) {
    Request& r = g_requests[i];
    if (!r.attached) continue;
    TraceOutcome outcome = TraceOutcome::kFailed;
    for (;;) {
      int status = 0;
      const long w = Sys(SYS_wait4, r.tid, Addr(&status), __WALL, 0);
      if (w == -EINTR) continue;
      if (w < 0) {
        r.error = static_cast<int>(-w);
        break;
      }
      if (WIFEXITED(status) || WIFSIGNALED(status)) {
        r.attached = false;  // reaped: nothing to detach
        outcome = TraceOutcome::kGone;
        break;
      }
      if (!WIFSTOPPED(status)) continue;
      // A signal-delivery stop (no event in the high bits) stopped it before our interrupt:
      // the signal is handed back at detach, as if no one had looked.
      if ((status >> 16) == 0) r.pending_signal = WSTOPSIG(status);
      outcome = SaveRegisters(r) ? TraceOutcome::kStopped : TraceOutcome::kGone;
      break;
    }
    r.outcome.store(static_cast<uint32_t>(outcome), std::memory_order_release);
  }
}

int HelperMain(void*) {
  // Dies with the thread that started it; gone at once if that thread already is.
  Sys(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
  if (Sys(SYS_getppid) != g_shared.parent) return 0;
  // A fault kills the helper alone (its own thread group), without a core file, instead of
  // running the program's handler on the controller's thread pointer. The kernel then detaches
  // every thread it traced.
  struct {
    uint64_t cur, max;
  } no_core{0, 0};
  Sys(SYS_prlimit64, 0, RLIMIT_CORE, Addr(&no_core), 0);
  struct {
    unsigned long handler, flags, restorer;
    uint64_t mask;
  } default_action{0 /* SIG_DFL */, 0, 0, 0};
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS})
    Sys(SYS_rt_sigaction, sig, Addr(&default_action), 0, 8);
  while (g_shared.go.load(std::memory_order_acquire) == 0) HelperWait(&g_shared.go, 0);
  uint32_t done = 0;
  for (;;) {
    const uint32_t command = g_shared.command.load(std::memory_order_acquire);
    const uint32_t posted = g_shared.posted.load(std::memory_order_acquire);
    if (done < posted) {
      StopRange(done, posted);
      done = posted;
      g_shared.answered.store(done, std::memory_order_release);
      HelperWake(&g_shared.answered);
      continue;
    }
    if (g_shared.release.load(std::memory_order_acquire) != 0) break;
    HelperWait(&g_shared.command, command);
  }
  for (uint32_t i = 0; i < done; ++i) {
    Request& r = g_requests[i];
    if (r.attached) Sys(SYS_ptrace, PTRACE_DETACH, r.tid, 0, r.pending_signal);
  }
  return 0;
}

// ---- the controller ----

// kernel.yama.ptrace_scope, or -1 without Yama.
int YamaScope() {
  const int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char c = 0;
  const ssize_t n = read(fd, &c, 1);
  close(fd);
  return n == 1 && c >= '0' && c <= '9' ? c - '0' : -1;
}

// Waits (a shared futex: the kernel's wake is one) until the helper's memory is released, at
// most until deadline_ms; true if it was.
bool AwaitHelperExit(int64_t deadline_ms) {
  for (;;) {
    const int32_t alive = g_shared.alive.load(std::memory_order_acquire);
    if (alive == 0) return true;
    if (internal::MonotonicMillis() >= deadline_ms) return false;
    timespec ts{0, 2000000};
    syscall(SYS_futex, reinterpret_cast<int32_t*>(&g_shared.alive), FUTEX_WAIT, alive, &ts, nullptr,
            0);
  }
}

void Reap(pid_t helper) {
  while (waitpid(helper, nullptr, __WALL) < 0 && errno == EINTR) {
  }
}

}  // namespace

const char* PtraceStopper::Unavailable() {
  if (internal::SecureExecution()) return "a privileged (AT_SECURE) process is never traced";
  static std::atomic<int> enabled{-1};  // -1: not read yet
  int value = enabled.load(std::memory_order_acquire);
  if (value < 0) {
    value = internal::SettingBool(CheckerSetting("HEAP_CHECK_PTRACE")) ? 1 : 0;
    enabled.store(value, std::memory_order_release);
  }
  return value == 1 ? nullptr : "HEAP_CHECK_PTRACE=false";
}

bool PtraceStopper::Add(pid_t tid, StoppedThread* out) {
  if (g_requests == nullptr) {
    void* p = internal::SystemAlloc(kMaxTraced * sizeof(Request), 0);
    if (p == nullptr) return false;
    g_requests = static_cast<Request*>(p);
  }
  if (count_ >= kMaxTraced) return false;
  Request& r = g_requests[count_++];
  r.tid = tid;
  r.out = out;
  r.error = 0;
  r.pending_signal = 0;
  r.attached = false;
  r.outcome.store(static_cast<uint32_t>(TraceOutcome::kPending), std::memory_order_relaxed);
  return true;
}

pid_t PtraceStopper::tid(size_t i) const { return g_requests[i].tid; }

TraceOutcome PtraceStopper::outcome(size_t i) const {
  return static_cast<TraceOutcome>(g_requests[i].outcome.load(std::memory_order_acquire));
}

bool PtraceStopper::StartHelper() {
  if (g_helper_stack == nullptr) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    // The runtime's own mapping: the helper's frames (registers it read) are never roots.
    void* p = internal::SystemAlloc(kHelperStackSize + page, 0);
    if (p == nullptr) {
      start_error_ = ENOMEM;
      return false;
    }
    mprotect(p, page, PROT_NONE);
    g_helper_stack = static_cast<char*>(p) + page;
  }
  g_shared.go.store(0, std::memory_order_relaxed);
  g_shared.command.store(0, std::memory_order_relaxed);
  g_shared.posted.store(0, std::memory_order_relaxed);
  g_shared.answered.store(0, std::memory_order_relaxed);
  g_shared.release.store(0, std::memory_order_relaxed);
  g_shared.parent = getpid();
  g_shared.alive.store(1, std::memory_order_release);
  // Every signal blocked in the helper but the synchronous ones (raw: glibc's mask call keeps
  // its own two signals open).
  uint64_t block = ~uint64_t{0}, old = 0;
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS})
    block &= ~(uint64_t{1} << (sig - 1));
  syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, &old, sizeof(block));
  const pid_t pid = clone(HelperMain, g_helper_stack + kHelperStackSize,
                          CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED | CLONE_CHILD_CLEARTID,
                          nullptr, nullptr, nullptr, reinterpret_cast<pid_t*>(&g_shared.alive));
  const int error = errno;
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, nullptr, sizeof(old));
  if (pid < 0) {
    start_error_ = error;
    return false;
  }
  helper_ = pid;
  // Yama 1: only ancestors may trace, unless the tracee names its tracer (the exception goes
  // with the helper when it exits).
  if (YamaScope() == 1) prctl(PR_SET_PTRACER, static_cast<unsigned long>(pid), 0, 0, 0);
  g_shared.go.store(1, std::memory_order_release);
  syscall(SYS_futex, &g_shared.go, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  return true;
}

// The helper died or was killed: reaped here; every request not answered, and every thread it
// had stopped (the kernel let them run again), fails with `error`.
void PtraceStopper::HelperGone(int error) {
  AwaitHelperExit(internal::MonotonicMillis() + 2000);
  Reap(helper_);
  helper_ = 0;
  start_error_ = error;
  for (size_t i = 0; i < posted_; ++i) {
    Request& r = g_requests[i];
    const auto o = static_cast<TraceOutcome>(r.outcome.load(std::memory_order_acquire));
    if (o == TraceOutcome::kPending || o == TraceOutcome::kStopped) {
      r.error = error;
      r.attached = false;
      r.outcome.store(static_cast<uint32_t>(TraceOutcome::kFailed), std::memory_order_release);
    }
  }
}

void PtraceStopper::StopQueued(int64_t deadline_ms) {
  if (posted_ == count_) return;
  const size_t from = posted_;
  posted_ = count_;
  if (helper_ == 0 && start_error_ == 0) StartHelper();
  if (helper_ == 0) {
    for (size_t i = from; i < count_; ++i) {
      g_requests[i].error = start_error_;
      g_requests[i].outcome.store(static_cast<uint32_t>(TraceOutcome::kFailed),
                                  std::memory_order_release);
    }
    return;
  }
  g_shared.posted.store(static_cast<uint32_t>(count_), std::memory_order_release);
  g_shared.command.fetch_add(1, std::memory_order_acq_rel);
  syscall(SYS_futex, &g_shared.command, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  for (;;) {
    const uint32_t answered = g_shared.answered.load(std::memory_order_acquire);
    if (answered >= count_) return;
    if (g_shared.alive.load(std::memory_order_acquire) == 0) {
      HelperGone(kHelperDied);
      return;
    }
    if (internal::MonotonicMillis() >= deadline_ms) {
      kill(helper_, SIGKILL);  // the kernel detaches what it traced
      HelperGone(kHelperTimedOut);
      return;
    }
    timespec ts{0, 2000000};
    syscall(SYS_futex, &g_shared.answered, FUTEX_WAIT_PRIVATE, answered, &ts, nullptr, 0);
  }
}

void PtraceStopper::ResumeAll() {
  if (helper_ != 0) {
    g_shared.release.store(1, std::memory_order_release);
    g_shared.command.fetch_add(1, std::memory_order_acq_rel);
    syscall(SYS_futex, &g_shared.command, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
    if (!AwaitHelperExit(internal::MonotonicMillis() + 2000)) {
      kill(helper_, SIGKILL);
      AwaitHelperExit(internal::MonotonicMillis() + 2000);
    }
    Reap(helper_);  // after the reap every thread it traced is detached
    helper_ = 0;
  }
  count_ = posted_ = 0;
  start_error_ = 0;
}

const char* PtraceStopper::Explain(size_t i, pid_t tracer_of_thread, char* buf, size_t size) const {
  const Request& r = g_requests[i];
  const int e = r.error;
  if (outcome(i) == TraceOutcome::kFailed) {
    if (e == kHelperTimedOut)
      internal::FormatTo(buf, size, "it did not stop in time under ptrace");
    else if (e == kHelperDied)
      internal::FormatTo(buf, size,
                         "the ptrace helper died (a seccomp filter may kill "
                         "processes that call ptrace)");
    else
      internal::FormatTo(buf, size, "the ptrace helper could not be started (errno %d)", e);
    return buf;
  }
  if (e == EPERM || e == EACCES) {
    const int yama = YamaScope();
    if (tracer_of_thread != 0)
      internal::FormatTo(buf, size, "it is traced by process %d already (a debugger or strace)",
                         static_cast<int>(tracer_of_thread));
    else if (yama >= 2)
      internal::FormatTo(buf, size, "kernel.yama.ptrace_scope=%d forbids it%s", yama,
                         yama == 2 ? " without CAP_SYS_PTRACE" : "");
    else if (prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
      internal::FormatTo(buf, size, "the process made itself non-dumpable");
    else
      internal::FormatTo(buf, size,
                         "ptrace was refused (%s: a seccomp filter, a security "
                         "module or the container forbids it)",
                         e == EPERM ? "EPERM" : "EACCES");
  } else if (e == ENOSYS) {
    internal::FormatTo(buf, size, "ptrace is not available (ENOSYS)");
  } else {
    internal::FormatTo(buf, size, "PTRACE_SEIZE failed (errno %d)", e);
  }
  return buf;
}

}  // namespace heapkit::check
