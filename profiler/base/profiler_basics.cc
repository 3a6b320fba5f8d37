// The profiler's shared helpers (profiler_basics.h).
#include "profiler/base/profiler_basics.h"

#include <string.h>
#include <time.h>

#include "alloc/internal/log.h"

namespace heapkit::prof {

bool Quiet() { return internal::VerboseLevel() < 0; }

int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* ErrName(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "unknown error";
}

}  // namespace heapkit::prof
