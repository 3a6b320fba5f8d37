#include "heapcheck/bounded_exit.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

namespace heapkit::check {
namespace {

volatile sig_atomic_t g_exit_status = 1;

void ExitAtDeadline(int) { _exit(g_exit_status); }

// The deadline: SIGALRM to this thread only, once. false if it could not be armed (then the
// flush is not bounded, as before).
bool ArmDeadline() {
  struct sigaction action {};
  action.sa_handler = &ExitAtDeadline;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGALRM, &action, nullptr) != 0) return false;
  sigset_t alarm;
  sigemptyset(&alarm);
  sigaddset(&alarm, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alarm, nullptr);
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGALRM;
  event.sigev_notify_thread_id = static_cast<pid_t>(syscall(SYS_gettid));
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) return false;
  itimerspec when{};
  when.it_value.tv_sec = kExitFlushDeadlineMs / 1000;
  when.it_value.tv_nsec = (kExitFlushDeadlineMs % 1000) * 1000000L;
  return timer_settime(timer, 0, &when, nullptr) == 0;
}

}  // namespace

void FlushStdioAndExit(int status) {
  g_exit_status = status;
  ArmDeadline();
  fflush(nullptr);
  _exit(status);
}

}  // namespace heapkit::check
