// A stack's leaf function, named by the pipeline (leaf_names.h).
#include "pprof-tool/report/leaf_names.h"

namespace heapkit::pprof {

std::string LeafFunctionName(const std::vector<uint64_t>& pcs, const Profile& maps_from,
                             Symbolizer& symbolizer, const PipelineOptions& options) {
  return FoldedLeafNames(maps_from, {&pcs}, symbolizer, options)[0];
}

std::map<uint32_t, std::string> RuntimeTimelineStackNames(const RuntimeTimeline& timeline,
                                                          const Profile& maps_from,
                                                          Symbolizer& symbolizer,
                                                          const PipelineOptions& options) {
  PipelineOptions functions = options;
  functions.view.granularity = Granularity::kFunctions;
  functions.wrapper_stacks = nullptr;  // the timeline's own stacks, below
  // Every stack of the timeline decides the allocation wrappers, as for the window's report
  // (RuntimeTimelineRowProfile): the legend names what the reports fold to.
  Profile all = maps_from;
  all.samples.clear();
  all.wrapper_stacks.clear();
  std::vector<const std::vector<uint64_t>*> stacks;
  for (const auto& entry : timeline.stacks) {
    stacks.push_back(&entry.second);
    all.wrapper_stacks.push_back(entry.second);
  }
  const std::vector<std::string> names = FoldedLeafNames(all, stacks, symbolizer, functions);
  std::map<uint32_t, std::string> by_id;
  size_t i = 0;
  for (const auto& entry : timeline.stacks) by_id[entry.first] = names[i++];
  return by_id;
}

}  // namespace heapkit::pprof
