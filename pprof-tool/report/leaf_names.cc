// A stack's leaf function, named by the pipeline (leaf_names.h).
#include "pprof-tool/report/leaf_names.h"

namespace heapkit::pprof {

std::string LeafFunctionName(const std::vector<uint64_t>& pcs, const Profile& maps_from,
                             Symbolizer& symbolizer, const PipelineOptions& options) {
  Profile one = maps_from;
  one.samples.clear();
  RawSample s;
  s.pcs = pcs;
  s.value.inuse_bytes = s.value.alloc_bytes = s.value.inuse_objects = s.value.alloc_objects = 1;
  s.raw = s.value;
  one.samples.push_back(s);
  PipelineOptions p = options;
  p.view.focus = p.view.ignore = p.view.hide = p.view.show = p.view.show_from = "";
  StackSamples named;
  std::string error;
  if (BuildStackSamples(one, symbolizer, p, &named, &error) && !named.samples.empty() &&
      !named.samples[0].frames.empty())
    return named.nodes[named.samples[0].frames[0].node].name;
  return "(unknown stack)";
}

std::map<uint32_t, std::string> RuntimeTimelineStackNames(const RuntimeTimeline& timeline,
                                                          const Profile& maps_from,
                                                          Symbolizer& symbolizer,
                                                          const PipelineOptions& options) {
  PipelineOptions functions = options;
  functions.view.granularity = Granularity::kFunctions;
  std::map<uint32_t, std::string> names;
  for (const auto& [id, pcs] : timeline.stacks) {
    names[id] = LeafFunctionName(pcs, maps_from, symbolizer, functions);
  }
  return names;
}

}  // namespace heapkit::pprof
