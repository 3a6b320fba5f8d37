// /metrics: the allocator's MallocExtension figures, the process's RSS by what holds it, the
// profiler's estimated allocation totals and what the runtime is, in Prometheus' text
// exposition format (version 0.0.4): one `# HELP` and one `# TYPE` line per metric, base units
// in the names, `_total` for counters, `_info` for the 1-valued build gauge.
//
// RSS is partitioned as `pprof-tool --memory` partitions a dump's (profiler/memory_breakdown.h,
// the same figures): heapkit_resident_memory_bytes{part="..."} adds up to
// process_resident_memory_bytes but for what no part explains (the kernel's view of the same
// moment, read a few microseconds apart). The endpoint's own heap (ServerHooks' caller counts
// it) is its own part and its own gauge, and is left out of heapkit_heap_inuse_bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "profiler/http/heap_profile_proto.h"

namespace heapkit::prof::http {

using NumericProperty = int (*)(const char* name, size_t* value);

struct MetricsInput {
  NumericProperty property = nullptr;  // MallocExtension_GetNumericProperty
  // From the heap sample; nullptr: the sampled counters are left out.
  const HeapTotals* totals = nullptr;
  // "# heapkit: memory <key> <bytes>" lines (memory_breakdown.h); "": the resident parts and
  // the resident metadata are left out.
  std::string_view memory_figures;
  // Heap bytes the endpoint itself holds while it answers (its caches and baselines).
  size_t endpoint_heap_bytes = 0;
};

std::string MetricsText(const MetricsInput& input);

// The value of `key` in memory_breakdown.h's lines; false if the text has no such line.
bool MemoryFigure(std::string_view figures, std::string_view key, uint64_t* bytes);

// The last /debug/pprof/leaks check (present once one has run).
struct LeakMetrics {
  uint64_t checks;
  uint64_t bytes;
  uint64_t objects;
  double seconds;
};
std::string LeakMetricsText(const LeakMetrics& leaks);

}  // namespace heapkit::prof::http
