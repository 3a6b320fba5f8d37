#include "pprof-tool/cli/time_views.h"

#include <unistd.h>

#include <cstdio>

#include "pprof-tool/cli/peak_choice.h"
#include "pprof-tool/load/profile_file.h"
#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/model/value_format.h"

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

// --timeline of one runtime timeline file: its rows, or --window's peak as a text report.
bool ApplyRuntimeTimeline(const CliOptions& o, const std::vector<std::string>& files,
                          LoadedProfiles* in, TimeViews* views, std::string* error) {
  views->is_runtime_timeline = o.report == ReportKind::kTimeline && files.size() == 1 &&
                               ReadRuntimeTimeline(files[0], &views->runtime_timeline, error);
  if (!error->empty()) return false;
  if (!o.timeline_window.empty() && !views->is_runtime_timeline) {
    *error = "--window applies to --timeline of a runtime timeline (<prefix>.timeline.heap)";
    return false;
  }
  views->timeline_rows = views->is_runtime_timeline && o.timeline_window.empty();
  if (!views->is_runtime_timeline || o.timeline_window.empty()) return true;
  Profile window;
  if (!RuntimeTimelineWindow(views->runtime_timeline, in->profile, o.timeline_window, &window,
                             &views->peak_description, error))
    return false;
  in->profile = std::move(window);
  return true;
}

}  // namespace

bool ApplyTimeViews(const CliOptions& o, const std::vector<std::string>& files,
                    LoadedProfiles* in, TimeViews* views, std::string* error) {
  if (o.peak && !PeakDescription(in->profile, &views->peak_description, error)) return false;
  return ApplyRuntimeTimeline(o, files, in, views, error) &&
         ApplyObjectTimeView(o, in, views, error);
}

void TimeViews::Describe(const Profile& profile, Symbolizer& symbolizer,
                         const PipelineOptions& po, size_t at,
                         std::vector<std::string>* lines) const {
  if (!peak_description.empty()) lines->insert(lines->begin() + at, peak_description);
  for (const std::string& note : notes) lines->push_back(note);
  for (const AgeHint& h : age_hints) {
    Profile one = profile;
    one.samples.clear();
    RawSample s;
    s.pcs = h.pcs;
    s.value.inuse_bytes = s.value.alloc_bytes = s.value.inuse_objects = s.value.alloc_objects = 1;
    s.raw = s.value;
    one.samples.push_back(s);
    PipelineOptions p = po;
    p.view.focus = p.view.ignore = p.view.hide = p.view.show = "";
    StackSamples named;
    std::string error;
    std::string site = "(unknown stack)";
    if (BuildStackSamples(one, symbolizer, p, &named, &error) && !named.samples.empty() &&
        !named.samples[0].frames.empty())
      site = named.nodes[named.samples[0].frames[0].node].name;
    lines->push_back("Age hint: " + site + ": " + FormatValue(h.growth, ValueUnit::kBytes) +
                     " growth, " + h.text);
  }
}

}  // namespace heapkit::pprof
