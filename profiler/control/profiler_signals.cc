#include "profiler/control/profiler_signals.h"

#include <signal.h>
#include <string.h>

#include "alloc/internal/log.h"
#include "profiler/profiler_config.h"
#include "profiler/profiler_state.h"
#include "profiler/control/profiler_thread.h"

namespace heapkit::prof {
namespace {

void SignalHandler(int) { WakeHelperFromSignal(); }

}  // namespace

void InstallDumpSignal() {
  int& configured = g_profiler.config.dump_signal;
  const int sig = configured;
  if (sig <= 0) return;
  struct sigaction old;
  if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, nullptr, &old) != 0) {
    internal::Log("HEAPPROFILESIGNAL=%d is not a signal that can be caught; signal dumps are off",
                  sig);
    configured = 0;
    return;
  }
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = &SignalHandler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
    if (!Quiet()) internal::LogRaw("Using signal %d as heap profiling switch", sig);
  } else {
    internal::Log(
        "HEAPPROFILESIGNAL=%d: signal %d already has a handler; not replacing it, "
        "signal dumps are off",
        sig, sig);
    configured = 0;
  }
}

}  // namespace heapkit::prof
