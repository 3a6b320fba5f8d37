// The time views of the runtime's files, applied to what the load stage read and before the
// pipeline runs: --peak's header line (peak_choice.h), a runtime timeline file under --timeline
// or --http, and --window (model/runtime_timeline.h), --lifetime and --since
// (report/object_time_views.h).
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/cli/options.h"
#include "pprof-tool/cli/runtime_timeline.h"
#include "pprof-tool/load/loaded_profiles.h"
#include "pprof-tool/report/object_time_views.h"
#include "pprof-tool/report/pipeline.h"

namespace heapkit::pprof {

struct TimeViews {
  std::string peak_description;    // a header line after the dump's ("": none)
  std::vector<std::string> notes;  // header lines after the value type (--lifetime, --since)
  std::vector<AgeHint> age_hints;  // --since: one header line each, once named
  RuntimeTimeline runtime_timeline;
  bool is_runtime_timeline = false;  // --timeline or --http of one runtime timeline file
  bool timeline_rows = false;        // --timeline without --window or an .svg: the rows as text
  bool timeline_svg = false;         // --timeline=<file>.svg (or -o): the chart
  RuntimeTimelineWindow window;      // --window, checked (text "": none)

  // The report's extra header lines: the peak after the dump's line (at `at`), the notes and
  // age hints at the end (named through the pipeline, each hint's leaf frame).
  void Describe(const Profile& profile, Symbolizer& symbolizer, const PipelineOptions& po,
                size_t at, std::vector<std::string>* lines) const;
};

// `files` are the profiles as read (fetched, or the peak files). May replace in->profile's
// samples (--window, --lifetime, --since). False with one line in *error.
bool ApplyTimeViews(const CliOptions& o, const std::vector<std::string>& files, LoadedProfiles* in,
                    TimeViews* views, std::string* error);

}  // namespace heapkit::pprof
