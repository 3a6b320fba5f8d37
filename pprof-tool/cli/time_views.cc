#include "pprof-tool/cli/time_views.h"

#include <unistd.h>

#include <cstdio>

#include "pprof-tool/cli/peak_choice.h"
#include "pprof-tool/load/profile_file.h"
#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/model/value_format.h"
#include "pprof-tool/report/leaf_names.h"

namespace heapkit::pprof {
namespace {

// --lifetime / --since: the chosen dump's samples become the view's.
bool ApplyObjectTimeView(const CliOptions& o, LoadedProfiles* in, TimeViews* views,
                         std::string* error) {
  if (!o.lifetime.empty()) {
    LifetimeFilter filter;
    return ParseLifetimeFilter(o.lifetime, &filter, error) &&
           ApplyLifetimeView(filter, &in->profile, &views->notes, error);
  }
  if (o.since < 0) return true;
  // Dump N: among the profiles given, else <prefix>.NNNN.heap beside the chosen one.
  Profile loaded;
  const Profile* dump_n = nullptr;
  const int index = in->series.one_process ? in->series.IndexOf(o.since) : -1;
  if (index >= 0 && static_cast<size_t>(index) < in->dumps.size()) {
    dump_n = &in->dumps[index];
  } else {
    std::string prefix;
    if (DumpFileNumber(in->profile.file, &prefix) >= 0) {
      char name[32];
      snprintf(name, sizeof name, ".%04d.heap%s", o.since,
               ProtoFileSuffix(in->profile.file).c_str());
      ParseError pe;
      if (access((prefix + name).c_str(), R_OK) == 0 &&
          LoadProfileFile(prefix + name, &loaded, &pe))
        dump_n = &loaded;
    }
  }
  return ApplySinceView(o.since, dump_n, &in->profile, &views->notes, &views->age_hints, error);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --timeline or --http of one runtime timeline file: its rows as text, its chart (an .svg
// output), or --window's peak as a text report (the web UI applies the window itself).
bool ApplyRuntimeTimeline(const CliOptions& o, const std::vector<std::string>& files,
                          LoadedProfiles* in, TimeViews* views, std::string* error) {
  const bool timeline = o.report == ReportKind::kTimeline;
  views->is_runtime_timeline = (timeline || o.report == ReportKind::kHttp) && files.size() == 1 &&
                               ReadRuntimeTimeline(files[0], &views->runtime_timeline, error);
  if (!error->empty()) return false;
  if (!o.timeline_window.empty() && !views->is_runtime_timeline) {
    *error =
        "--window applies to --timeline or --http of a runtime timeline (<prefix>.timeline.heap)";
    return false;
  }
  if (!views->is_runtime_timeline) return true;
  // Every stack of the timeline decides the allocation wrappers of every view of the file (its
  // reports, the web UI's, the window's, the legend's names: RuntimeTimelineStackNames).
  in->profile.wrapper_stacks.clear();
  for (const auto& entry : views->runtime_timeline.stacks)
    in->profile.wrapper_stacks.push_back(entry.second);
  views->timeline_svg = timeline && EndsWith(o.output, ".svg");
  views->timeline_rows = timeline && !views->timeline_svg && o.timeline_window.empty();
  if (o.timeline_window.empty()) return true;
  if (!ParseRuntimeTimelineWindow(views->runtime_timeline, o.timeline_window, &views->window,
                                  error)) {
    *error = "--window=" + *error;
    return false;
  }
  if (!timeline || views->timeline_svg) return true;
  in->profile = RuntimeTimelineRowProfile(views->runtime_timeline, in->profile, views->window,
                                          &views->peak_description);
  return true;
}

}  // namespace

bool ApplyTimeViews(const CliOptions& o, const std::vector<std::string>& files, LoadedProfiles* in,
                    TimeViews* views, std::string* error) {
  if (o.peak && !PeakDescription(in->profile, &views->peak_description, error)) return false;
  return ApplyRuntimeTimeline(o, files, in, views, error) &&
         ApplyObjectTimeView(o, in, views, error);
}

void TimeViews::Describe(const Profile& profile, Symbolizer& symbolizer, const PipelineOptions& po,
                         size_t at, std::vector<std::string>* lines) const {
  if (!peak_description.empty()) lines->insert(lines->begin() + at, peak_description);
  for (const std::string& note : notes) lines->push_back(note);
  for (const AgeHint& h : age_hints) {
    const std::string site = LeafFunctionName(h.pcs, profile, symbolizer, po);
    lines->push_back("Age hint: " + site + ": " + FormatValue(h.growth, ValueUnit::kBytes) +
                     " growth, " + h.text);
  }
}

}  // namespace heapkit::pprof
