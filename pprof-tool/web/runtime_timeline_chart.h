// A runtime timeline (model/runtime_timeline.h: HEAP_PROFILE_TIMELINE's <prefix>.timeline.heap)
// as a timeline chart, drawn by the dumps' chart code (timeline.h: TimelineSvg): one column per
// row at its time after profiling start; the allocator's exact in-use and the RSS as curves;
// one band per leaf function (`names`, report/leaf_names.h, as the text names a stack) among the
// kTimelineBands reaching the most, stacked, and the rest of the sampled estimate as "other", so
// the bands' top is the estimate; the row of the highest exact in-use marked as the peak; a window,
// if given, shaded and its peak ringed. A stack's value in a row is its un-sampled in-use where it
// is among the row's top stacks, else 0 (the file has nothing more).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pprof-tool/model/runtime_timeline.h"
#include "pprof-tool/web/timeline.h"

namespace heapkit::pprof {

// `window` may be nullptr. `show_bytes`: exact byte counts in the hover texts.
void BuildRuntimeTimelineChart(const RuntimeTimeline& timeline,
                               const std::map<uint32_t, std::string>& names,
                               const RuntimeTimelineWindow* window, bool show_bytes,
                               TimelineChart* chart);

}  // namespace heapkit::pprof
