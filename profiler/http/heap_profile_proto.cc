#include "profiler/http/heap_profile_proto.h"

#include <vector>

#include "profiler/http/process_symbolizer.h"
#include "profiler/http/server_hooks.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::prof::http {
namespace {

// The LocationNamer over this process's symbolizer: a location's frames, innermost first.
int NameLocation(void* ctx, uint64_t address, ProfileFrame* out, int max) {
  auto* symbolizer = static_cast<pprof::Symbolizer*>(ctx);
  const std::vector<pprof::SourceFrame>& frames = symbolizer->Symbolize(address);
  if (frames.size() == 1 && frames[0].placeholder) return 0;  // nothing here names it
  int n = 0;
  for (const pprof::SourceFrame& f : frames) {
    if (n == max) break;
    out[n++] =
        ProfileFrame{f.function.c_str(), f.linkage_name, f.file.c_str(), f.line, f.start_line};
  }
  return n;
}

bool Encode(const ServerHooks& hooks, std::string_view legacy, const HeapProtoOptions& options,
            std::string* proto, HeapTotals* totals, std::string* error) {
  if (hooks.heap_profile_proto == nullptr) {
    *error = "this runtime does not encode profiles";
    return false;
  }
  TextSink sink = nullptr;
  if (proto != nullptr) {
    sink = [](void* ctx, const char* data, size_t length) {
      static_cast<std::string*>(ctx)->append(data, length);
    };
  }
  const HeapProtoStatus status =
      hooks.heap_profile_proto(legacy.data(), legacy.size(), options, sink, proto, totals);
  switch (status) {
    case HeapProtoStatus::kOk: return true;
    case HeapProtoStatus::kNotAHeapProfile:
      *error = "the profiler's sample is not a heap profile";
      return false;
    case HeapProtoStatus::kOutOfMemory: break;
  }
  *error = "out of memory encoding the profile";
  return false;
}

}  // namespace

bool HeapProfileTotals(const ServerHooks& hooks, std::string_view legacy, HeapTotals* totals,
                       std::string* error) {
  return Encode(hooks, legacy, HeapProtoOptions{}, nullptr, totals, error);
}

bool HeapProfileToProto(const ServerHooks& hooks, std::string_view legacy,
                        std::string_view baseline, HeapView view, int64_t time_nanos,
                        int64_t duration_nanos, std::string* proto, HeapTotals* totals,
                        std::string* error, DeltaMode delta) {
  constexpr std::string_view kMaps = "\nMAPPED_LIBRARIES:\n";
  const size_t maps_at = legacy.find(kMaps);
  const std::string_view maps = maps_at == std::string_view::npos
                                    ? std::string_view()
                                    : legacy.substr(maps_at + kMaps.size());
  HeapProtoOptions options;
  if (!baseline.empty()) {
    options.baseline = baseline.data();
    options.baseline_size = baseline.size();
  }
  options.delta_alloc_only = delta == DeltaMode::kAllocOnly;
  options.default_sample_type =
      view == HeapView::kAllocs || view == HeapView::kDeltaHeap ? "alloc_space" : "inuse_space";
  options.time_nanos = time_nanos;
  options.duration_nanos = duration_nanos;
  options.namer = LocationNamer{&NameLocation, SymbolizerFor(maps, ExecutableMappings(maps))};
  proto->clear();
  return Encode(hooks, legacy, options, proto, totals, error);
}

}  // namespace heapkit::prof::http
