// What the CLI hands to the web UI and the timeline: the profiles, loaded and with their
// symbolizer, plus the command line's choices that every view starts from. Loaded once; each
// request re-runs only the pipeline (report/pipeline.h), whose symbol lookups the Symbolizer
// caches per PC, so nothing is read or symbolized twice. The profiles and the symbolizer are
// the caller's (the symbolizer refers to the profile) and outlive the server.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/runtime_timeline.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/report/source_files.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct WebInput {
  const Profile* profile = nullptr;             // the given profiles summed, --base subtracted
  const std::vector<Profile>* dumps = nullptr;  // each given profile alone (timeline points)
  // Dumps of one process are shown one at a time (the latest first), profiles of different
  // processes summed; the URL's dump= and base= pick others (view_query.h).
  DumpSeries series;
  const Profile* base = nullptr;     // --base/--diff_base summed, subtracted from a shown dump
  bool diff_base = false;            // it was --diff_base (percentages of the base)
  int first_dump = -1;               // --dump=N's index: shown first
  bool merge = false;                // --merge: the sum is shown first
  Symbolizer* symbolizer = nullptr;  // for `profile` and every dump (one process)
  // The command line's pipeline options; a view's query overrides their view options (the
  // value type and the filters; the graph's limits and show_bytes stay the command line's).
  PipelineOptions pipeline;
  bool heapcheck = false;  // leak-checker dumps: the views speak of leaks
  bool diff = false;       // --base / --diff_base: the views show the difference
  std::string title;       // program (or first profile) base name
  SourceAccess sources;    // the files the source view may read (source_files.h)
  // The one profile given is a runtime timeline (model/runtime_timeline.h): the timeline view
  // draws it, and window=T0:T1 shows the stacks at a window's peak in every view.
  const RuntimeTimeline* runtime_timeline = nullptr;
  std::string first_window;  // --window's T0:T1, shown first ("": the file's profile)
};

}  // namespace heapkit::pprof
