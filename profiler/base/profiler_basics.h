// The few helpers every part of the profiler shares: the clock, the quiet setting, errno names
// and the MiB unit. Nothing here knows the profiler's state or settings, so any file of the
// profiler can use it.
#pragma once

#include <cstdint>

namespace heapkit::prof {

inline constexpr int64_t kMiB = 1 << 20;

// PERFTOOLS_VERBOSE < 0: no "Starting…"/"Dumping…" lines.
bool Quiet();
// CLOCK_MONOTONIC in nanoseconds.
int64_t NowNs();
// "ENOENT" for ENOENT; never nullptr.
const char* ErrName(int err);

}  // namespace heapkit::prof
