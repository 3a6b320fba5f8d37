// CLOCK_MONOTONIC: the one clock of heapkit's durations, deadlines and timeouts, in the unit
// each caller counts in (CLOCK_REALTIME only dates files and profiles). Header-only,
// malloc-free and async-signal-safe (clock_gettime is, through the vDSO).
#pragma once

#include <time.h>

#include <cstdint>

namespace heapkit::internal {

inline int64_t MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline int64_t MonotonicMillis() { return MonotonicNanos() / 1000000; }

inline double MonotonicSeconds() { return static_cast<double>(MonotonicNanos()) * 1e-9; }

}  // namespace heapkit::internal
