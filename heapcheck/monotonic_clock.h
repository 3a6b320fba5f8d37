// The checker's clock: CLOCK_MONOTONIC (a vDSO call, malloc-free, async-signal-safe), for
// timings and deadlines.
#pragma once

#include <time.h>

#include <cstdint>

namespace heapkit::check {

inline int64_t MonotonicNanos() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

inline double MonotonicSeconds() { return static_cast<double>(MonotonicNanos()) * 1e-9; }

}  // namespace heapkit::check
