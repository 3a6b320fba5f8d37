// The benchmarks' clock: CLOCK_MONOTONIC in microseconds.
#pragma once

#include <time.h>

inline double NowUs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
