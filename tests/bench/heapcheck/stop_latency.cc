// Stop-the-world latency alone: N sleeping threads (taking the suspend signal, or blocking every
// signal), `cycles` ThreadStopper::StopAll + ResumeAll rounds, the median and minimum round in
// microseconds. Built against a tree's headers and its libheapkit.a (stop_latency.sh), so two
// trees compare side by side.
//   stop_latency <threads> signal|blocking [cycles]
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench_clock.h"
#include "heapcheck/thread_stopper.h"

namespace {

std::atomic<int> g_started{0};
bool g_blocking = false;

void* Worker(void*) {
  if (g_blocking) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, nullptr);
  }
  g_started.fetch_add(1);
  for (;;) pause();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 200;
  g_blocking = argc > 2 && strcmp(argv[2], "blocking") == 0;
  const int cycles = argc > 3 ? atoi(argv[3]) : 21;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 << 10);
  for (int i = 0; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, &attr, Worker, nullptr) != 0) return 2;
  }
  while (g_started.load() < n) usleep(1000);
  std::vector<double> rounds;
  size_t stopped = 0;
  for (int c = 0; c < cycles; ++c) {
    heapkit::check::ThreadStopper stopper;
    const double t0 = NowUs();
    stopper.StopAll(2000);
    stopped = stopper.stopped_count();
    stopper.ResumeAll();
    rounds.push_back(NowUs() - t0);
  }
  std::sort(rounds.begin(), rounds.end());
  std::printf("%d %s threads: %zu stopped, stop+resume median %.0f us, min %.0f us\n", n,
              g_blocking ? "blocking" : "signal", stopped, rounds[rounds.size() / 2], rounds[0]);
  return 0;
}
