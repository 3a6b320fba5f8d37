// The gperftools C API (<gperftools/heap-profiler.h>) over heap_profiler.h (GetHeapProfile:
// dump_triggers.h).
#include <gperftools/heap-profiler.h>

#include <stdlib.h>
#include <string.h>

#include "profiler/output/dump_triggers.h"
#include "profiler/heap_profiler.h"
#include "profiler/format/output_sink.h"

#define HEAPKIT_EXPORT extern "C" __attribute__((visibility("default")))

HEAPKIT_EXPORT void HeapProfilerStart(const char* prefix) {
  heapkit::prof::StartHeapProfiling(prefix);
}

HEAPKIT_EXPORT int IsHeapProfilerRunning() { return heapkit::prof::HeapProfilingOn() ? 1 : 0; }

HEAPKIT_EXPORT void HeapProfilerStop() { heapkit::prof::StopHeapProfiling(); }

HEAPKIT_EXPORT void HeapProfilerDump(const char* reason) {
  heapkit::prof::DumpHeapProfileNow(reason);
}

// The profile of the sampled table (empty string if nothing is being recorded). The caller
// frees it with free(): this is the one place the profiler calls the public malloc, on the
// caller's behalf and with no lock held.
HEAPKIT_EXPORT char* GetHeapProfile() {
  heapkit::prof::MemorySink sink;
  bool ok = heapkit::prof::HeapProfilingOn() && heapkit::prof::WriteTableProfile(&sink);
  size_t n = ok ? sink.size() : 0;
  char* out = static_cast<char*>(malloc(n + 1));
  if (out == nullptr) return nullptr;
  if (n > 0) memcpy(out, sink.data(), n);
  out[n] = '\0';
  return out;
}
