// The report pipeline: Profile (summed, base subtracted) -> StackSamples.
//   1. choose the value (--inuse_space ...) from each sample's un-sampled values;
//   2. symbolize every distinct PC once (return addresses minus 1, the leaf as is);
//   3. map source frames to nodes of the chosen granularity;
//      names are simplified (no template arguments, parameters or return type) unless
//      full_names; equal names are one node;
//   4. drop the allocation path from the leaf end (symbolize/allocation_frames.h) and the
//      frames matching --drop_frames, then the program's allocation wrappers
//      (allocation_wrappers.h);
//   5. --focus / --ignore (whole samples), --show_from (callers above the root-most match),
//      then --hide / --show (frames);
//   6. merge identical stacks, drop zero values.
// Steps 2-4 are frame_lookup.h's, 5 stack_filters.h's, 6 stack_merge.h's.
// With a diff base (Profile::diff_base_begin), the total that percentages refer to is the
// base's (sum of |value| of its samples that pass --focus/--ignore), as go pprof's --diff_base.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/stack_samples.h"
#include "pprof-tool/report/sample_type.h"
#include "pprof-tool/report/view_options.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct PipelineOptions {
  // The value, granularity, filters and names (the graph's limits are not the pipeline's).
  ViewOptions view;
  // Fill NodeInfo::full_name (pictures' hover texts, profile.proto's Function.system_name).
  bool record_full_names = false;
  // Keep samples whose chosen value is 0 when another of their values is not (one run then
  // serves all four value types through StackSample::values: the profile.proto writer).
  bool all_values = false;
  // One folding per profile: the stacks the allocation wrappers are decided from, when they
  // are not the profile's own (a dump series: every dump's, so all its views fold alike).
  // Null: Profile::wrapper_stacks, else the profile's samples.
  const std::vector<std::vector<uint64_t>>* wrapper_stacks = nullptr;
};

// Returns false and sets *error (one line) on a bad option (e.g. invalid regex).
bool BuildStackSamples(const Profile& profile, Symbolizer& symbolizer,
                       const PipelineOptions& options, StackSamples* out, std::string* error);

// Each stack's leaf node (leaf first pcs) once the allocation path, the allocation wrappers
// BuildStackSamples folds for `profile` and `options` (the same set), and --drop_frames are
// dropped; "(unknown stack)" if no frame is left. Focus-like filters are not applied.
std::vector<std::string> FoldedLeafNames(const Profile& profile,
                                         const std::vector<const std::vector<uint64_t>*>& stacks,
                                         Symbolizer& symbolizer, const PipelineOptions& options);

}  // namespace heapkit::pprof
