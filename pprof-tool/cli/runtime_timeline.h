// --timeline of a runtime timeline file (<prefix>.timeline.heap, HEAP_PROFILE_TIMELINE; read
// by model/runtime_timeline.h) as text: the rows. (--timeline=file.svg draws it:
// web/runtime_timeline_chart.h; --window=T0:T1 shows the stacks at the window's peak.)
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pprof-tool/model/runtime_timeline.h"

namespace heapkit::pprof {

// The rows: time, exact in-use, RSS, sampled estimate, and the un-sampled in-use of the
// stacks that reach the most (named by `names`: report/leaf_names.h), then the row of the peak.
std::string RuntimeTimelineText(const RuntimeTimeline& timeline,
                                const std::map<uint32_t, std::string>& names, bool show_bytes);

}  // namespace heapkit::pprof
