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

// The last /debug/pprof/leaks check (present once one has run).
struct LeakMetrics {
  uint64_t checks;
  uint64_t bytes;
  uint64_t objects;
  double seconds;
};
std::string LeakMetricsText(const LeakMetrics& leaks);

}  // namespace heapkit::prof::http
