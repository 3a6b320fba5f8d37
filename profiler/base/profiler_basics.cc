// The profiler's shared helpers (profiler_basics.h).
#include "profiler/base/profiler_basics.h"

#include <string.h>
#include <time.h>

#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"

namespace heapkit::prof {

bool Quiet() { return internal::VerboseLevel() < 0; }

int64_t NowNs() { return internal::MonotonicNanos(); }

const char* ErrName(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "unknown error";
}

}  // namespace heapkit::prof
