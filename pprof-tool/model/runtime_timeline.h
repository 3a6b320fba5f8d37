// A runtime timeline file (<prefix>.timeline.heap, HEAP_PROFILE_TIMELINE; profiler/time/timeline.h
// has the format): its rows read from the comment lines, a window [T0, T1] of it and the row of
// its peak, and that row's stacks as a profile. The text report (cli/runtime_timeline.h), the
// SVG and the web UI's timeline view (web/runtime_timeline_chart.h) all read it through here,
// and name its stacks the same way (report/leaf_names.h: RuntimeTimelineStackNames).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

struct RuntimeTimeline {
  int64_t period_ms = 0, ticks = 0, start_ns = 0, rate = 0;
  // What a row's exact in-use counts: the bytes the program requested (exact mode: the same
  // bytes as the estimate, the stacks and the peak profiles), or the allocator's usable
  // (size-class) bytes (a sampled run; files without the header's `exact` field).
  bool exact_requested = false;
  std::map<uint32_t, std::vector<uint64_t>> stacks;  // bucket id -> pcs, leaf first
  struct Entry {
    uint32_t id;
    int64_t count, bytes;  // raw sampled in-use
  };
  struct Row {
    int64_t t_ms = 0, exact = 0, rss = 0, est = 0;  // t_ms: after profiling start
    std::vector<Entry> top;
  };
  std::vector<Row> rows;
};

// False with *error empty if `path` is not a runtime timeline; false with *error (one line)
// if it is one but malformed or cut short.
bool ReadRuntimeTimeline(const std::string& path, RuntimeTimeline* timeline, std::string* error);

// The un-sampled in-use bytes of a raw sampled (count, bytes), as the pprofs un-sample heap_v2
// lines (rate <= 1: exact mode, the bytes themselves).
double RuntimeTimelineUnsampled(int64_t count, int64_t bytes, int64_t rate);

// "requested bytes" or "usable bytes": what the rows' exact in-use counts.
const char* RuntimeTimelineExactUnit(const RuntimeTimeline& timeline);
// One line naming what "in use" counts on every figure of the timeline (the text report's
// header, the chart's title, the window report's header).
std::string RuntimeTimelineInUseMeaning(const RuntimeTimeline& timeline);

// The index of the row with the highest exact in-use (the first of equals), -1 if none.
int RuntimeTimelinePeakRow(const RuntimeTimeline& timeline);

// A window [t0, t1] of seconds after profiling start, and the row of its highest exact in-use.
struct RuntimeTimelineWindow {
  std::string text;  // as given: "T0:T1"
  double t0 = 0, t1 = 0;
  int peak_row = -1;
};

// Parses "T0:T1" (--window, the web UI's window=) and finds its peak row. False with one line
// in *error, starting with the text (the caller puts "--window=" or "window=" before it), for
// a bad window or one without rows.
bool ParseRuntimeTimelineWindow(const RuntimeTimeline& timeline, const std::string& text,
                                RuntimeTimelineWindow* window, std::string* error);

// `file_profile` (the file as a profile, for its maps) with its samples replaced by the stacks
// of `row` (un-sampled like a dump's), and the header line saying which row of which window.
Profile RuntimeTimelineRowProfile(const RuntimeTimeline& timeline, const Profile& file_profile,
                                  const RuntimeTimelineWindow& window, std::string* description);

}  // namespace heapkit::pprof
