// --timeline of a runtime timeline file (<prefix>.timeline.heap, HEAP_PROFILE_TIMELINE;
// profiler/timeline.h has the format): the rows as text, and --window=T0:T1 the stacks at
// the peak of that window as a profile every report shows.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct RuntimeTimeline {
  int64_t period_ms = 0, ticks = 0, start_ns = 0, rate = 0;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // bucket id -> pcs, leaf first
  struct Entry {
    uint32_t id;
    int64_t count, bytes;  // raw sampled in-use
  };
  struct Row {
    int64_t t_ms = 0, exact = 0, rss = 0, est = 0;
    std::vector<Entry> top;
  };
  std::vector<Row> rows;
};

// False with *error empty if `path` is not a runtime timeline; false with *error (one line)
// if it is one but malformed.
bool ReadRuntimeTimeline(const std::string& path, RuntimeTimeline* timeline, std::string* error);

// The rows: time, exact in-use, RSS, sampled estimate, and the un-sampled in-use of the
// stacks that reach the most (named by their leaf function), then the row of the peak.
std::string RuntimeTimelineText(const RuntimeTimeline& timeline, Symbolizer& symbolizer,
                                bool show_bytes);

// --window=T0:T1 (seconds after profiling start): `file_profile` (the file as a profile, for
// its maps) with its samples replaced by the stacks at the window's row of highest exact
// in-use; *description says which row. False with *error (one line) for a bad window.
bool RuntimeTimelineWindow(const RuntimeTimeline& timeline, const Profile& file_profile,
                           const std::string& window, Profile* out, std::string* description,
                           std::string* error);

}  // namespace heapkit::pprof
