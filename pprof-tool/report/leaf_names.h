// The name every report gives a stack: its leaf node (a function at the default granularity)
// once the allocation path, the allocation wrappers the reports of the same profile fold (one
// set per profile: report/pipeline.h, FoldedLeafNames) and --drop_frames are dropped, under the
// view's naming (simplified or full names), whatever the focus-like filters. Used where a stack
// is named outside a report: --since's age hints and a runtime timeline's stacks (its text,
// its chart).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/runtime_timeline.h"
#include "pprof-tool/report/pipeline.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// `pcs` leaf first, as a profile's samples hold them; `maps_from` gives the mappings and
// embedded symbols. "(unknown stack)" if no frame is left.
std::string LeafFunctionName(const std::vector<uint64_t>& pcs, const Profile& maps_from,
                             Symbolizer& symbolizer, const PipelineOptions& options);

// Each stack of a runtime timeline, named so (at the granularity of functions), with the
// wrappers found over all of the timeline's stacks, as every view of the file folds them.
std::map<uint32_t, std::string> RuntimeTimelineStackNames(const RuntimeTimeline& timeline,
                                                          const Profile& maps_from,
                                                          Symbolizer& symbolizer,
                                                          const PipelineOptions& options);

}  // namespace heapkit::pprof
