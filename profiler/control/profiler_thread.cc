#include "profiler/control/profiler_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "alloc/internal/log.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/profiler_config.h"
#include "profiler/profiler_state.h"
#include "profiler/time/rss_limit.h"
#include "profiler/time/timeline.h"
#include "profiler/base/thread_recording.h"

namespace heapkit::prof {

namespace {

int g_pipe[2] = {-1, -1};
std::atomic<bool> g_helper_running{false};

// Milliseconds until the next time dump or RSS-limit check is due; -1 (wait for the pipe
// only) without either.
int PollTimeoutMs(int64_t interval_ns) {
  // Stopped or exiting: nothing is due (the deadlines are not moved on), so a 0 timeout would
  // spin; look again every second (a restart resumes).
  if (!g_profiler.profiling.load(std::memory_order_relaxed) ||
      g_profiler.exiting.load(std::memory_order_relaxed))
    return 1000;
  int rss = RssLimitOn() ? kRssLimitPollMs : -1;
  const int tick = TimelinePollMs();
  if (tick >= 0 && (rss < 0 || tick < rss)) rss = tick;
  if (interval_ns <= 0) return rss;
  int64_t due =
      g_profiler.thresholds.last_dump_time_ns.load(std::memory_order_relaxed) + interval_ns;
  int64_t left = due - NowNs();
  const int ms = left <= 0 ? 0 : static_cast<int>((left + 999999) / 1000000);
  return rss >= 0 && rss < ms ? rss : ms;
}

void* HelperMain(void*) {
  pthread_setname_np(pthread_self(), "heapkit-prof");
  for (;;) {
    const int64_t interval_ns = g_profiler.config.time_interval_sec * 1000000000;
    pollfd pfd{g_pipe[0], POLLIN, 0};
    int r = poll(&pfd, 1, PollTimeoutMs(interval_ns));
    if (g_profiler.exiting.load(std::memory_order_relaxed)) continue;
    bool signalled = false;
    if (r > 0 && (pfd.revents & POLLIN)) {
      char buf[64];
      ssize_t n = read(g_pipe[0], buf, sizeof(buf));
      signalled = n > 0;
    }
    internal::SpinLockHolder h(&g_profiler.lock);
    if (!g_profiler.profiling.load(std::memory_order_relaxed) || g_profiler.exiting.load())
      continue;
    if (signalled) DumpLocked("signal");
    if (interval_ns > 0) {
      const std::atomic<int64_t>& last = g_profiler.thresholds.last_dump_time_ns;
      int64_t since = NowNs() - last.load(std::memory_order_relaxed);
      if (since >= interval_ns) {
        char reason[64];
        internal::FormatTo(reason, sizeof(reason), "%lld sec since the last dump",
                           static_cast<long long>(since / 1000000000));
        DumpLocked(reason);
      }
    }
    TimelineTickLocked();
    char rss_reason[160];
    if (CheckRssLimitLocked(rss_reason, sizeof(rss_reason))) DumpLocked(rss_reason);
  }
  return nullptr;
}

}  // namespace

void StartHelperThread() {
  const ProfilerConfig& c = g_profiler.config;
  if (c.time_interval_sec <= 0 && c.dump_signal <= 0 && !RssLimitOn() && c.timeline_period_ms <= 0)
    return;
  if (g_helper_running.exchange(true)) return;
  if (g_pipe[0] < 0 && pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    internal::Log("cannot create the heap-profiler pipe (%s); time and signal dumps are off",
                  ErrName(errno));
    return;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the helper never takes the program's signals
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t tid;
  // pthread_create allocates (thread descriptor bits, TLS) through the public heap on our
  // behalf: keep those allocations out of the profile.
  bool was_disabled = tls_recording_disabled;
  tls_recording_disabled = true;
  int err = pthread_create(&tid, &attr, &HelperMain, nullptr);
  tls_recording_disabled = was_disabled;
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) {
    g_helper_running.store(false);
    internal::Log("cannot start the heap-profiler thread (%s); time and signal dumps are off",
                  ErrName(err));
  }
}

void WakeHelperFromSignal() {
  int saved = errno;
  char c = 'S';
  if (g_pipe[1] >= 0) (void)!write(g_pipe[1], &c, 1);
  errno = saved;
}

void HelperThreadForkChild() {
  // The helper thread did not survive the fork; the pipe is shared with the parent.
  if (g_helper_running.exchange(false)) {
    close(g_pipe[0]);
    close(g_pipe[1]);
    g_pipe[0] = g_pipe[1] = -1;
    if (pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
    g_profiler.helper_restart.store(true);  // restarted at the child's next sampled allocation
  }
}

}  // namespace heapkit::prof
