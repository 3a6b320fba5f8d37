#include "heapcheck/snapshot_fork.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"
#include "heapcheck/leak_check.h"

namespace heapkit::check {
namespace {

// What the copy sends: this header, the leak records, the pcs, kWireEnd. The two markers
// ("hcksnap1", "hcksend1" in memory order) tell a whole result from one cut short.
constexpr uint64_t kWireMagic = 0x3170616e736b6368;
constexpr uint64_t kWireEnd = 0x31646e65736b6368;
struct WireHeader {
  uint64_t magic;
  uint64_t analysed;  // 1: a result follows; 0: the analysis failed (the copy said why)
  uint64_t leak_count;
  uint64_t pc_count;
  uint64_t leaked_bytes;
  uint64_t reachable_objects;
  uint64_t reachable_bytes;
  uint64_t live_objects;
  uint64_t unrecorded_objects;
  uint64_t unreadable_ranges_skipped;
  uint64_t unreadable_bytes_skipped;
  UnscannedThreads stack_not_mapped;
  AnonymousRootsStats anonymous;
  OtherPointerRule other_rule;
};

std::atomic<bool> g_refused_before{false};

// Why a fork was refused, for the one line.
const char* RefusalCause(int error) {
  switch (error) {
    case EAGAIN:
      return "the process limit (RLIMIT_NPROC, a pids cgroup or kernel.pid_max) is reached";
    case ENOMEM: return "no memory to commit the copy (vm.overcommit_memory=2 with a large heap?)";
    case EPERM:
    case EACCES: return "a seccomp filter or security policy refuses it";
    case ENOSYS: return "the system call is not available";
    default: return "the kernel refused it";
  }
}

// The kernel's struct sigaction for rt_sigaction (not glibc's, whose layout differs).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

// The copy's first steps, before it runs any check code (snapshot_fork.h: signals, core,
// parent death, OOM score). System calls only.
void EnterCopy(pid_t parent) {
  const uint64_t all = ~uint64_t{0};
  syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, nullptr, sizeof(all));
  // A blocked fault signal raised by a fault is delivered anyway, to its handler: the program's
  // crash handler (which may malloc, lock or write a report) must not run in the copy.
  static constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS, SIGABRT};
  KernelSigaction dfl{SIG_DFL, 0, nullptr, 0};
  for (int sig : kFaults) syscall(SYS_rt_sigaction, sig, &dfl, nullptr, sizeof(uint64_t));
  rlimit no_core{0, 0};
  syscall(SYS_prlimit64, 0, RLIMIT_CORE, &no_core, nullptr);
  syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (syscall(SYS_getppid) != parent) syscall(SYS_exit_group, 0);  // the checker died already
  syscall(SYS_prctl, PR_SET_NAME, "heapkit-snapshot", 0, 0, 0);
  const int fd = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC));
  if (fd >= 0) {
    syscall(SYS_write, fd, "1000", 4);
    syscall(SYS_close, fd);
  }
}

// The copy's signal to start its analysis: sent by Finish once the program's threads run
// again. The copy is born with every signal blocked (Start), so it stays pending until taken
// here; a SIGCONT from elsewhere (job control) only starts it early.
constexpr int kGoSignal = SIGCONT;

// A copy that flooded at once would take a core from the threads being resumed, and the pause
// would last until the scheduler let the last of them run (tens of ms on a loaded machine).
void WaitUntilTheProgramRuns() {
  const uint64_t go = uint64_t{1} << (kGoSignal - 1);
  while (syscall(SYS_rt_sigtimedwait, &go, nullptr, nullptr, sizeof(go)) != kGoSignal) {
  }
}

[[noreturn]] void RunCopy(pid_t parent, int fd, SnapshotAnalysis analysis, void* ctx,
                          CheckResult* out) {
  EnterCopy(parent);
  WaitUntilTheProgramRuns();
  const bool analysed = analysis(ctx, out);
  WireHeader h{};
  h.magic = kWireMagic;
  h.analysed = analysed ? 1 : 0;
  h.leak_count = out->leaks.size();
  h.pc_count = out->pcs.size();
  h.leaked_bytes = out->leaked_bytes;
  h.reachable_objects = out->reachable_objects;
  h.reachable_bytes = out->reachable_bytes;
  h.live_objects = out->live_objects;
  h.unrecorded_objects = out->unrecorded_objects;
  h.unreadable_ranges_skipped = out->unreadable_ranges_skipped;
  h.unreadable_bytes_skipped = out->unreadable_bytes_skipped;
  h.stack_not_mapped = out->stack_not_mapped;
  h.anonymous = out->anonymous;
  h.other_rule = out->other_rule;
  bool sent = internal::WriteAll(fd, &h, sizeof h);
  if (sent && analysed) {
    sent = internal::WriteAll(fd, out->leaks.data(), out->leaks.size() * sizeof(LeakRecord)) &&
           internal::WriteAll(fd, out->pcs.data(), out->pcs.size() * sizeof(uintptr_t)) &&
           internal::WriteAll(fd, &kWireEnd, sizeof kWireEnd);
  }
  syscall(SYS_exit_group, sent ? 0 : 1);
  __builtin_unreachable();
}

// Reads exactly n bytes before the deadline (CLOCK_MONOTONIC ns). False on EOF, error or
// timeout (*timed_out).
bool ReadBefore(int fd, void* buf, size_t n, int64_t deadline, bool* timed_out) {
  char* p = static_cast<char*>(buf);
  while (n > 0) {
    const int64_t left = deadline - internal::MonotonicNanos();
    if (left <= 0) {
      *timed_out = true;
      return false;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>((left + 999999) / 1000000));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t got = read(fd, p, n);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

// Waits for pid to exit until the deadline; false (status untouched) if it has not.
bool ReapBefore(pid_t pid, int64_t deadline, int* status) {
  for (;;) {
    const pid_t r = waitpid(pid, status, __WALL | WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) {
      *status = -1;  // not ours to wait for any more (ECHILD: someone reaped it)
      return true;
    }
    if (internal::MonotonicNanos() >= deadline) return false;
    timespec nap{0, 1000000};
    nanosleep(&nap, nullptr);
  }
}

}  // namespace

bool ForkedSnapshot::RefusedBefore() { return g_refused_before.load(std::memory_order_relaxed); }

bool ForkedSnapshot::Start(SnapshotAnalysis analysis, void* ctx, CheckResult* out) {
  // Made with the other threads stopped, so no thread of the program can fork (and keep the
  // write end open) before the parent's copy of it is closed.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    internal::Log(
        "leak check: cannot make a pipe for the snapshot (%s); checking with the "
        "threads stopped",
        errno == EMFILE || errno == ENFILE ? "too many open files" : "refused");
    return false;
  }
  const pid_t parent = getpid();
  // The copy is born with every signal blocked: none reaches a handler of the program in it,
  // and kGoSignal waits for it (WaitUntilTheProgramRuns).
  sigset_t all, mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &mask);
  const double t0 = internal::MonotonicSeconds();
  // Exit signal 0, no CLONE_VM: a process with a copy of the address space (snapshot_fork.h).
  const long pid = syscall(SYS_clone, CLONE_UNTRACED, nullptr, nullptr, nullptr, nullptr);
  if (pid == 0) {
    close(fds[0]);
    RunCopy(parent, fds[1], analysis, ctx, out);
  }
  const int error = errno;
  seconds_forking_ = internal::MonotonicSeconds() - t0;
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    if (!g_refused_before.exchange(true, std::memory_order_relaxed)) {
      internal::Log(
          "leak check: cannot fork a snapshot of the process: %s (errno %d); checks stop the "
          "threads for the whole check instead (said once)",
          RefusalCause(error), error);
    }
    return false;
  }
  pid_ = static_cast<pid_t>(pid);
  read_fd_ = fds[0];
  released_ns_ = -1;
  return true;
}

void ForkedSnapshot::Release() {
  if (pid_ <= 0 || released_ns_ >= 0) return;
  kill(pid_, kGoSignal);  // the copy starts its analysis (not reaped yet: the pid is its own)
  released_ns_ = internal::MonotonicNanos();
}

ForkedSnapshot::Outcome ForkedSnapshot::Finish(int timeout_ms, CheckResult* out) {
  Release();
  const int64_t deadline = released_ns_ + static_cast<int64_t>(timeout_ms) * 1000000;
  bool timed_out = false;
  WireHeader h{};
  bool whole = ReadBefore(read_fd_, &h, sizeof h, deadline, &timed_out) && h.magic == kWireMagic;
  bool memory = true;
  if (whole && h.analysed == 1) {
    memory = out->leaks.Resize(h.leak_count) && out->pcs.Resize(h.pc_count);
    whole =
        memory &&
        ReadBefore(read_fd_, out->leaks.data(), h.leak_count * sizeof(LeakRecord), deadline,
                   &timed_out) &&
        ReadBefore(read_fd_, out->pcs.data(), h.pc_count * sizeof(uintptr_t), deadline, &timed_out);
    uint64_t end = 0;
    whole =
        whole && ReadBefore(read_fd_, &end, sizeof end, deadline, &timed_out) && end == kWireEnd;
    for (size_t i = 0; whole && i < out->leaks.size(); ++i) {
      const LeakRecord& r = out->leaks[i];
      whole = static_cast<uint64_t>(r.pc_offset) + r.depth <= h.pc_count;
    }
  }
  close(read_fd_);
  read_fd_ = -1;
  // A whole result: the copy is exiting. Cut short: it is dying (its pipe closes before it
  // can be reaped) or hung (timed out: killed now).
  const int64_t now = internal::MonotonicNanos();
  const int64_t reap_by = timed_out ? now : whole ? deadline : now + 2000000000;
  int status = 0;
  const pid_t pid = pid_;
  if (!ReapBefore(pid_, reap_by, &status)) {
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, __WALL) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
  // status -1: another waiter of the program reaped it (a __WALL wait); the result decides.
  const bool clean_exit = status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (!memory) {
    internal::Log("leak check: out of memory (mmap refused) for the snapshot's result; no result");
    return Outcome::kNoResult;
  }
  if (!whole || !clean_exit) {
    if (timed_out) {
      internal::Log(
          "leak check: the snapshot process %d did not answer within %d ms "
          "(HEAP_CHECK_SNAPSHOT_TIMEOUT_MS) and was killed; checking with the threads stopped",
          static_cast<int>(pid), timeout_ms);
    } else if (status != -1 && WIFSIGNALED(status)) {
      internal::Log(
          "leak check: the snapshot process %d died by signal %d before sending its result; "
          "checking with the threads stopped",
          static_cast<int>(pid), WTERMSIG(status));
    } else {
      internal::Log(
          "leak check: the snapshot process %d sent no whole result (exit status %d); "
          "checking with the threads stopped",
          static_cast<int>(pid), status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return Outcome::kLost;
  }
  if (h.analysed != 1) return Outcome::kNoResult;
  out->leaked_bytes = h.leaked_bytes;
  out->reachable_objects = h.reachable_objects;
  out->reachable_bytes = h.reachable_bytes;
  out->live_objects = h.live_objects;
  out->unrecorded_objects = h.unrecorded_objects;
  out->unreadable_ranges_skipped = h.unreadable_ranges_skipped;
  out->unreadable_bytes_skipped = h.unreadable_bytes_skipped;
  out->stack_not_mapped = h.stack_not_mapped;
  out->anonymous = h.anonymous;
  out->other_rule = h.other_rule;
  return Outcome::kResult;
}

void ForkedSnapshot::KillAndReap() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status;
  while (waitpid(pid_, &status, __WALL) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

ForkedSnapshot::~ForkedSnapshot() {
  if (read_fd_ >= 0) close(read_fd_);
  KillAndReap();
}

}  // namespace heapkit::check
