#include "heapcheck/signal_check.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "alloc/internal/log.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/process_tree.h"
#include "heapcheck/thread_stopper.h"

namespace heapkit::check {
namespace {

constexpr int kMaxSignals = 8;
int g_signals[kMaxSignals];
int g_signal_count = 0;
int g_pipe[2] = {-1, -1};
pid_t g_pid = 0;
SignalCheck g_check = nullptr;

struct NamedSignal {
  const char* name;
  int number;
};
constexpr NamedSignal kNames[] = {{"TERM", SIGTERM}, {"INT", SIGINT},   {"HUP", SIGHUP},
                                  {"QUIT", SIGQUIT}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};

// "TERM", "SIGTERM" or a number in [1, 31]; 0 if none of these.
int ParseSignal(const char* begin, size_t length) {
  if (length > 3 && std::strncmp(begin, "SIG", 3) == 0) {
    begin += 3;
    length -= 3;
  }
  for (const NamedSignal& n : kNames)
    if (std::strlen(n.name) == length && std::strncmp(begin, n.name, length) == 0) return n.number;
  int value = 0;
  for (size_t i = 0; i < length; ++i) {
    if (begin[i] < '0' || begin[i] > '9' || value > 31) return 0;
    value = value * 10 + (begin[i] - '0');
  }
  return length > 0 && value >= 1 && value <= 31 ? value : 0;
}

void DieBy(int sig) {
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
}

void Handler(int sig) {
  const int saved_errno = errno;
  if (getpid() != g_pid || g_pipe[1] < 0) {
    // A forked child: no watcher of its own. Named in the tree's later reports (not a vfork
    // child's: its parent's memory).
    if (InOwnMemory()) NoteEndedUnchecked(getpid(), sig);
    DieBy(sig);
  } else {
    ssize_t n;
    while ((n = write(g_pipe[1], &sig, sizeof(sig))) < 0 && errno == EINTR) {
    }
  }
  errno = saved_errno;
}

__attribute__((noinline)) void CheckThenDie(int sig) {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  g_check(sp, regs, 6);
  DieBy(sig);
}

void* Watcher(void*) {
  for (;;) {
    int sig = 0;
    const ssize_t n = read(g_pipe[0], &sig, sizeof(sig));
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof(sig)) return nullptr;
    CheckThenDie(sig);
  }
}

}  // namespace

void InstallSignalCheck(const char* spec, SignalCheck check) {
  if (spec == nullptr || spec[0] == '\0') return;
  g_check = check;
  for (const char* p = spec; *p != '\0';) {
    const char* end = std::strchr(p, ',');
    const size_t length = end != nullptr ? static_cast<size_t>(end - p) : std::strlen(p);
    const int sig = ParseSignal(p, length);
    if (sig == 0 || sig == SIGKILL || sig == SIGSTOP) {
      internal::Log(
          "ignoring an entry of HEAP_CHECK_AT_SIGNAL='%s': signals are TERM, INT, HUP, "
          "QUIT, USR1, USR2 or numbers, separated by commas",
          spec);
    } else if (g_signal_count < kMaxSignals) {
      g_signals[g_signal_count++] = sig;
    }
    if (end == nullptr) break;
    p = end + 1;
  }
}

void StartSignalCheckWatcher() {
  if (g_signal_count == 0 || pipe2(g_pipe, O_CLOEXEC) != 0) return;
  g_pid = getpid();
  // The watcher takes no signal but the checker's own (a named check stops it like any thread).
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, SuspendSignal());
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const int error = pthread_create(&thread, &attr, Watcher, nullptr);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (error != 0) {
    internal::Log(
        "HEAP_CHECK_AT_SIGNAL: cannot start the watcher thread (%s); no check at "
        "signals",
        strerror(error));
    return;
  }
  // Only now, with a watcher to read the pipe: a handler without one would swallow the signal.
  for (int i = 0; i < g_signal_count; ++i) {
    struct sigaction current;
    if (sigaction(g_signals[i], nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO) != 0)
      continue;  // the program's (or an earlier library's) disposition stays
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_handler = Handler;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(g_signals[i], &action, nullptr);
  }
}

}  // namespace heapkit::check
