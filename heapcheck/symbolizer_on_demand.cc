// The symbolizer's entry points the leak checker's report calls (profiler/symbolize/
// symbolizer.h, allocation_frames.h), for the shared libheapkit.so: they load
// libheapkit_ondemand.so, which holds the symbolizer and libdw
// (profiler/on_demand/on_demand_library.h), and forward to it. The report runs after the world is
// restarted with recording off, where loading is allowed; it uses ForMappings only. Without the
// library: no symbolizer (the report prints bare addresses) and every frame is the caller's.
// The static libheapkit.a links the symbolizer itself instead.
#include "profiler/symbolize/allocation_frames.h"
#include "profiler/symbolize/symbolizer.h"
#include "profiler/on_demand/on_demand_library.h"

namespace heapkit::pprof {

std::unique_ptr<Symbolizer> Symbolizer::ForMappings(std::span<const MapsLine> mappings,
                                                    const SymbolSearch& search,
                                                    std::vector<std::string>* warnings) {
  const prof::OnDemandApi* api = prof::LoadOnDemandLibrary();
  if (api == nullptr) return nullptr;
  return api->symbolizer_for_mappings(mappings, search, warnings);
}

FrameRole ClassifyFrame(std::string_view function, std::string_view module) {
  const prof::OnDemandApi* api = prof::LoadOnDemandLibrary();
  return api != nullptr ? api->classify_frame(function, module) : FrameRole::kCaller;
}

}  // namespace heapkit::pprof
