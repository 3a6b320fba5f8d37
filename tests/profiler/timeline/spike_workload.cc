// The timeline's ring when full (run_timeline_ring.py): an idle program with one spike —
// spike() holds 64 MiB (written) for 60 ms at 20 s — that runs 45 s, so that at 10 ms ticks the
// 4096-row ring fills and halves. Prints the spike's CLOCK_MONOTONIC start and end in ns.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace {

long long Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void SleepUntil(long long ns) {
  for (long long now = Now(); now < ns; now = Now())
    usleep(static_cast<useconds_t>((ns - now) / 1000));
}

__attribute__((noinline)) void* spike() {
  void* p = malloc(64 << 20);
  memset(p, 1, 64 << 20);
  return p;
}

}  // namespace

int main() {
  const long long start = Now();
  SleepUntil(start + 20000000000LL);
  const long long from = Now();
  void* p = spike();
  usleep(60000);
  free(p);
  const long long to = Now();
  printf("spike %lld %lld\n", from, to);
  fflush(stdout);
  SleepUntil(start + 45000000000LL);
  return 0;
}
