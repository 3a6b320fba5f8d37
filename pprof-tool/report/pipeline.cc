#include "pprof-tool/report/pipeline.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "pprof-tool/report/allocation_wrappers.h"
#include "pprof-tool/report/frame_lookup.h"
#include "pprof-tool/report/stack_filters.h"
#include "pprof-tool/report/stack_merge.h"

namespace heapkit::pprof {
namespace {

// Allocation wrappers (allocation_wrappers.h), found over every stack whatever the value type,
// so that all views of a profile fold the same functions.
std::unordered_set<uint32_t> FindWrappers(const Profile& profile, const ViewOptions& view,
                                          FrameLookup& lookup) {
  if (view.keep_allocator_frames) return {};
  AllocationWrapperFinder finder;
  std::vector<uint32_t> functions;
  for (const RawSample& s : profile.samples) {
    if (!HasAnyValue(s.value)) continue;
    size_t first = 0;
    const std::vector<LookupFrame>& stack = lookup.Stack(s, &first);
    functions.clear();
    for (size_t i = first; i < stack.size(); ++i) functions.push_back(stack[i].function);
    finder.AddStack(functions);
  }
  return finder.Wrappers();
}

}  // namespace

bool BuildStackSamples(const Profile& profile, Symbolizer& symbolizer,
                       const PipelineOptions& options, StackSamples* out, std::string* error) {
  *out = StackSamples();
  const ViewOptions& view = options.view;
  out->sample_type = SampleTypeName(view.sample_type);
  out->unit = SampleTypeUnit(view.sample_type);
  out->granularity = view.granularity;
  StackFilters filters;
  if (!filters.Compile(view, error)) return false;
  FrameLookup lookup(symbolizer, view, options.record_full_names, filters, &out->nodes);
  const std::unordered_set<uint32_t> wrappers = FindWrappers(profile, view, lookup);
  std::unordered_set<uint32_t> folded;
  StackMerger merger(options.all_values);
  std::vector<StackFrame> frames, kept;
  double total = 0, base_total = 0;
  for (size_t index = 0; index < profile.samples.size(); ++index) {
    const RawSample& s = profile.samples[index];
    const double v = SampleValue(s, view.sample_type);
    if (v == 0 && !(options.all_values && HasAnyValue(s.value))) continue;
    size_t first = 0;
    const std::vector<LookupFrame>& stack = lookup.Stack(s, &first);
    while (first + 1 < stack.size() && wrappers.count(stack[first].function) != 0) {
      folded.insert(stack[first].function);
      ++first;
    }
    frames.clear();
    for (size_t i = first; i < stack.size(); ++i)
      frames.push_back({stack[i].node, stack[i].inlined});
    if (!filters.Apply(frames, out->nodes, &kept)) continue;
    total += v;
    if (index >= profile.diff_base_begin) base_total += std::fabs(v);
    merger.Add(kept, v, s.value);
  }
  merger.Finish(out);
  for (uint32_t f : folded) out->folded_wrappers.push_back(lookup.FunctionName(f));
  std::sort(out->folded_wrappers.begin(), out->folded_wrappers.end());
  out->total = profile.diff_base_begin < profile.samples.size() ? base_total : total;
  return true;
}

}  // namespace heapkit::pprof
