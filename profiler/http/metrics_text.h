// /metrics: the allocator's MallocExtension figures, the process's RSS by what holds it, the
// profiler's estimated allocation totals and what the runtime is, in Prometheus' text
// exposition format (version 0.0.4): one `# HELP` and one `# TYPE` line per metric, base units
// in the names, `_total` for counters, `_info` for the 1-valued build gauge.
//
// RSS is partitioned as `pprof-tool --memory` partitions a dump's
// (profiler/output/memory_breakdown.h, the same figures): heapkit_resident_memory_bytes{part="..."}
// adds up to process_resident_memory_bytes but for what no part explains (the kernel's view of the
// same moment, read a few microseconds apart). The endpoint's own heap (ServerHooks' caller counts
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
