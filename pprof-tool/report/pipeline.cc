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

// Allocation wrappers (allocation_wrappers.h), found over every stack of the profile (or of
// its dump series) whatever the value type and the view, so that all views fold the same
// functions.
std::unordered_set<uint32_t> FindWrappers(const Profile& profile, const PipelineOptions& options,
                                          FrameLookup& lookup) {
  if (options.view.keep_allocator_frames) return {};
  AllocationWrapperFinder finder;
  std::vector<uint32_t> functions;
  auto add = [&](const RawSample& s) {
    size_t first = 0;
    const std::vector<LookupFrame>& stack = lookup.Stack(s, &first);
    functions.clear();
    for (size_t i = first; i < stack.size(); ++i) functions.push_back(stack[i].function);
    finder.AddStack(functions);
  };
  const std::vector<std::vector<uint64_t>>* stacks =
      options.wrapper_stacks != nullptr ? options.wrapper_stacks : &profile.wrapper_stacks;
  if (!stacks->empty()) {
    RawSample s;
    for (const std::vector<uint64_t>& pcs : *stacks) {
      s.pcs = pcs;
      add(s);
    }
  } else {
    for (const RawSample& s : profile.samples) {
      if (HasAnyValue(s.value)) add(s);
    }
  }
  return finder.Wrappers();
}

// A sample's frames, leaf first, with the profile's allocation wrappers folded into their
// callers (the leaf frame is kept if the whole stack is wrappers).
void FoldedFrames(FrameLookup& lookup, const RawSample& s,
                  const std::unordered_set<uint32_t>& wrappers, std::vector<StackFrame>* frames) {
  size_t first = 0;
  const std::vector<LookupFrame>& stack = lookup.Stack(s, &first);
  while (first + 1 < stack.size() && wrappers.count(stack[first].function) != 0) ++first;
  frames->clear();
  for (size_t i = first; i < stack.size(); ++i)
    frames->push_back({stack[i].node, stack[i].inlined});
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
  const std::unordered_set<uint32_t> wrappers = FindWrappers(profile, options, lookup);
  StackMerger merger(options.all_values);
  std::vector<StackFrame> frames, kept;
  double total = 0, base_total = 0, total_variance = 0;
  const double rate = UnsamplingRate(profile);
  for (size_t index = 0; index < profile.samples.size(); ++index) {
    const RawSample& s = profile.samples[index];
    const double v = SampleValue(s, view.sample_type);
    if (v == 0 && !(options.all_values && HasAnyValue(s.value))) continue;
    FoldedFrames(lookup, s, wrappers, &frames);
    if (!filters.Apply(frames, out->nodes, &kept)) continue;
    const SampleValues variances = SampleVarianceOf(s, rate);
    const double variance = SelectValue(variances, view.sample_type);
    total += v;
    total_variance += variance;
    if (index >= profile.diff_base_begin) base_total += std::fabs(v);
    merger.Add(kept, v, s.value, variance, variances);
  }
  merger.Finish(out);
  // The whole set, whether or not this view's stacks reach them: every view names the same.
  for (uint32_t f : wrappers) out->folded_wrappers.push_back(lookup.FunctionName(f));
  std::sort(out->folded_wrappers.begin(), out->folded_wrappers.end());
  out->total_variance = total_variance;
  out->variance_source = VarianceSourceOf(profile);
  out->total = profile.diff_base_begin < profile.samples.size() ? base_total : total;
  return true;
}

std::vector<std::string> FoldedLeafNames(const Profile& profile,
                                         const std::vector<const std::vector<uint64_t>*>& stacks,
                                         Symbolizer& symbolizer, const PipelineOptions& options) {
  ViewOptions view = options.view;
  view.focus = view.ignore = view.hide = view.show = view.show_from = "";
  std::vector<std::string> names;
  StackFilters filters;
  std::string error;
  if (!filters.Compile(view, &error))
    return std::vector<std::string>(stacks.size(), "(unknown stack)");
  std::vector<NodeInfo> nodes;
  FrameLookup lookup(symbolizer, view, options.record_full_names, filters, &nodes);
  const std::unordered_set<uint32_t> wrappers = FindWrappers(profile, options, lookup);
  std::vector<StackFrame> frames, kept;
  RawSample s;
  for (const std::vector<uint64_t>* pcs : stacks) {
    s.pcs = *pcs;
    FoldedFrames(lookup, s, wrappers, &frames);
    if (filters.Apply(frames, nodes, &kept) && !kept.empty()) {
      names.push_back(nodes[kept[0].node].name);
    } else {
      names.push_back("(unknown stack)");
    }
  }
  return names;
}

}  // namespace heapkit::pprof
