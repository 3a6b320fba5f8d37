// The memory timeline: in-use memory over several heap dumps of one process, as a stacked-area
// chart (x = seconds since the first dump when every dump carries its time — heapkit's
// "# heapkit: dump time:" line — else the dumps in the order given, labelled with their file
// numbers; y = the chosen value, ticks at round values). Bands take distinct colours in order
// (a categorical palette), so two stacks are never drawn alike. One band per function of the
// top `bands` by their largest value in any dump (memory charged where pprof-tool charges it:
// the leaf frame after the allocation path is dropped), the rest summed as "other".
//
// The SVG is self-contained and readable without script: every band and every dump column
// carries a <title> (the dump's file, the profiler's reason for writing it, its header line's
// totals and each band's value), so hovering works in any viewer. The reason is the dump's
// "# heapkit: dump reason: ..." comment line (profiler/format/legacy_writer.h), the very words the
// profiler logged ("1026 MB allocated cumulatively, 5 MB currently in use"); dumps of other
// profilers have none and say so. The web UI wraps the columns in links to /ui/top?dump=N and adds
// a little script that shows the same text beside the chart.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/value_format.h"
#include "pprof-tool/report/pipeline.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct TimelineBand {
  std::string name;            // function, or "other"
  std::vector<double> values;  // one per dump
};

// A line drawn over the bands, in their scale (a runtime timeline's exact in-use and RSS).
struct TimelineCurve {
  std::string name;
  std::string color;
  bool dashed = false;
  std::vector<double> values;  // one per column
};

// The chart's columns are dumps, or a runtime timeline's rows (runtime_timeline_chart.h: then
// `since_start` is set, dump_times are the rows' seconds after profiling start and the x axis
// starts at 0, and the column_* fields describe the rows).
struct TimelineChart {
  std::vector<std::string> dump_labels;   // per dump: "<file>: heap profile: N objects, B bytes"
  std::vector<int> dump_numbers;          // per dump: its number (model/dump_series.h)
  std::vector<double> dump_times;         // per dump: unix seconds; empty unless every dump has one
  std::vector<std::string> dump_reasons;  // per dump: the profiler's reason; "" if not recorded
  std::vector<double> totals;             // per dump: the sum over all bands
  // Per dump: the sampling variance of its total (model/estimate.h); empty or all 0 for exact
  // profiles. Drawn as a band of ± 2 standard errors around the top of the stack.
  std::vector<double> total_variances;
  std::vector<TimelineBand> bands;  // largest first, "other" last (if any)
  ValueUnit unit = ValueUnit::kBytes;
  std::string sample_type;
  bool since_start = false;
  std::vector<std::string> column_texts;  // per column, its hover text's head ("": a dump's)
  std::vector<std::string> column_keys;   // per column, what its link appends ("": dump number)
  std::vector<TimelineCurve> curves;      // drawn over the bands, listed in the legend first
  // What the chart's bytes count: a runtime timeline's line ("In use: ..."), drawn under the
  // title; a dump series' "requested bytes", in the title (its dump numbers sit under it).
  std::string in_use_meaning;
  int peak = -1;  // the column marked as the peak (-1: none)
  // A window shaded, in the x axis's seconds, and its peak column (-1: none).
  double window_from = -1, window_to = -1;
  int window_peak = -1;
};

inline constexpr int kTimelineBands = 10;

// Runs the pipeline on each dump. Returns false with one line in *error (e.g. a bad regex).
bool BuildTimeline(const std::vector<Profile>& dumps, Symbolizer& symbolizer,
                   const PipelineOptions& options, int bands, TimelineChart* chart,
                   std::string* error);

struct TimelineStyle {
  std::string title = "Memory timeline";
  bool show_bytes = false;
  // Non-empty: each column links to "<link_prefix><dump number>" (the web UI), or to
  // "<link_prefix><column key>" when the chart has column keys.
  std::string link_prefix;
};

std::string TimelineSvg(const TimelineChart& chart, const TimelineStyle& style);

}  // namespace heapkit::pprof
