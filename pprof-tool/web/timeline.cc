// The timeline chart's data over a series of dumps (timeline.h: BuildTimeline); drawn by
// timeline_svg.cc.
#include "pprof-tool/web/timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "pprof-tool/model/dump_series.h"
#include "profiler/symbolize/file_name.h"

namespace heapkit::pprof {
namespace {

std::string DumpLabel(const Profile& p) {
  char buf[160];
  snprintf(buf, sizeof buf, ": heap profile: %.0f objects, %.0f bytes in use (%s)",
           p.header_totals.inuse_objects, p.header_totals.inuse_bytes, ProfileKindName(p.kind));
  return Basename(p.file) + buf;
}

}  // namespace

bool BuildTimeline(const std::vector<Profile>& dumps, Symbolizer& symbolizer,
                   const PipelineOptions& options, int bands, TimelineChart* chart,
                   std::string* error) {
  std::map<std::string, std::vector<double>> by_function;
  std::vector<double> unattributed(dumps.size(), 0.0);
  for (size_t d = 0; d < dumps.size(); ++d) {
    StackSamples samples;
    if (!BuildStackSamples(dumps[d], symbolizer, options, &samples, error)) return false;
    chart->unit = samples.unit;
    chart->sample_type = samples.sample_type;
    // A heap profile's bytes are the sizes the program asked for (every pprof's, heapkit's too).
    if (samples.unit == ValueUnit::kBytes) chart->in_use_meaning = "requested bytes";
    chart->dump_labels.push_back(DumpLabel(dumps[d]));
    chart->dump_reasons.push_back(dumps[d].dump_reason);
    chart->total_variances.push_back(samples.total_variance);
    for (const StackSample& s : samples.samples) {
      if (s.frames.empty()) {
        unattributed[d] += s.value;
        continue;
      }
      std::vector<double>& v = by_function[samples.nodes[s.frames[0].node].name];
      v.resize(dumps.size(), 0.0);
      v[d] += s.value;
    }
  }
  std::vector<TimelineBand> all;
  for (auto& [name, values] : by_function) all.push_back({name, std::move(values)});
  auto peak = [](const TimelineBand& b) {
    return *std::max_element(b.values.begin(), b.values.end());
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const TimelineBand& a, const TimelineBand& b) { return peak(a) > peak(b); });
  TimelineBand other{"other", unattributed};
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < size_t(bands)) {
      chart->bands.push_back(std::move(all[i]));
    } else {
      for (size_t d = 0; d < dumps.size(); ++d) other.values[d] += all[i].values[d];
    }
  }
  if (std::any_of(other.values.begin(), other.values.end(), [](double v) { return v != 0; })) {
    chart->bands.push_back(std::move(other));
  }
  chart->dump_numbers = ClassifyDumps(dumps).numbers;
  bool timed = !dumps.empty();
  for (const Profile& p : dumps) timed = timed && p.dump_time > 0;
  for (size_t d = 1; d < dumps.size() && timed; ++d)
    timed = dumps[d].dump_time >= dumps[d - 1].dump_time;
  if (timed) {
    for (const Profile& p : dumps) chart->dump_times.push_back(p.dump_time);
  }
  chart->totals.assign(dumps.size(), 0.0);
  for (const TimelineBand& b : chart->bands) {
    for (size_t d = 0; d < dumps.size(); ++d) chart->totals[d] += b.values[d];
  }
  return true;
}

}  // namespace heapkit::pprof
