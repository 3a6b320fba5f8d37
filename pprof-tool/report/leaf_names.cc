// A stack's leaf function, named by the pipeline (leaf_names.h).
#include "pprof-tool/report/leaf_names.h"

namespace heapkit::pprof {
namespace {

// Each stack's name; the maps are copied once, each stack then runs the pipeline alone.
std::vector<std::string> LeafFunctionNames(const std::vector<const std::vector<uint64_t>*>& stacks,
                                           const Profile& maps_from, Symbolizer& symbolizer,
                                           const PipelineOptions& options) {
  Profile one = maps_from;
  one.samples.clear();
  PipelineOptions p = options;
  p.view.focus = p.view.ignore = p.view.hide = p.view.show = p.view.show_from = "";
  std::vector<std::string> names;
  for (const std::vector<uint64_t>* pcs : stacks) {
    RawSample s;
    s.pcs = *pcs;
    s.value.inuse_bytes = s.value.alloc_bytes = s.value.inuse_objects = s.value.alloc_objects = 1;
    s.raw = s.value;
    one.samples.assign(1, s);
    StackSamples named;
    std::string error;
    if (BuildStackSamples(one, symbolizer, p, &named, &error) && !named.samples.empty() &&
        !named.samples[0].frames.empty()) {
      names.push_back(named.nodes[named.samples[0].frames[0].node].name);
    } else {
      names.push_back("(unknown stack)");
    }
  }
  return names;
}

}  // namespace

std::string LeafFunctionName(const std::vector<uint64_t>& pcs, const Profile& maps_from,
                             Symbolizer& symbolizer, const PipelineOptions& options) {
  return LeafFunctionNames({&pcs}, maps_from, symbolizer, options)[0];
}

std::map<uint32_t, std::string> RuntimeTimelineStackNames(const RuntimeTimeline& timeline,
                                                          const Profile& maps_from,
                                                          Symbolizer& symbolizer,
                                                          const PipelineOptions& options) {
  PipelineOptions functions = options;
  functions.view.granularity = Granularity::kFunctions;
  std::vector<const std::vector<uint64_t>*> stacks;
  for (const auto& entry : timeline.stacks) stacks.push_back(&entry.second);
  const std::vector<std::string> names =
      LeafFunctionNames(stacks, maps_from, symbolizer, functions);
  std::map<uint32_t, std::string> by_id;
  size_t i = 0;
  for (const auto& entry : timeline.stacks) by_id[entry.first] = names[i++];
  return by_id;
}

}  // namespace heapkit::pprof
