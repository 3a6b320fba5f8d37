// /metrics: the allocator's MallocExtension figures, the process's RSS and the profiler's
// estimated allocation totals in Prometheus' text exposition format (version 0.0.4): one
// `# HELP` and one `# TYPE` line per metric, base units, `_total` for counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "profiler/http/heap_profile_proto.h"

namespace heapkit::prof::http {

using NumericProperty = int (*)(const char* name, size_t* value);

// `totals` from the heap sample (nullptr: the sampled counters are left out).
std::string MetricsText(NumericProperty property, const HeapTotals* totals);

// /debug/pprof/leaks (present once a check was asked for): checks run and refused, and the
// last check's figures.
struct LeakMetrics {
  uint64_t checks = 0;
  uint64_t refused_busy = 0;      // 503: another check was running
  uint64_t refused_too_soon = 0;  // 429: within the spacing after the last live check
  uint64_t bytes = 0;
  uint64_t objects = 0;
  double seconds = 0;        // the last check, as the endpoint timed it
  double pause_seconds = 0;  // of which the program's threads were stopped
};
std::string LeakMetricsText(const LeakMetrics& leaks);

}  // namespace heapkit::prof::http
