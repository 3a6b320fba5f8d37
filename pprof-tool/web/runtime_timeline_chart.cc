// A runtime timeline as a timeline chart (runtime_timeline_chart.h).
#include "pprof-tool/web/runtime_timeline_chart.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {
namespace {

std::string Seconds3(int64_t t_ms) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.3f", t_ms / 1000.0);
  return buf;
}

// Per leaf function, its un-sampled in-use per row; the top `bands` by their highest value
// (largest first), then "other": the rest of each row's sampled estimate.
std::vector<TimelineBand> StackBands(const RuntimeTimeline& t,
                                     const std::map<uint32_t, std::string>& names, size_t bands) {
  const size_t n = t.rows.size();
  std::map<std::string, std::vector<double>> by_name;
  for (size_t r = 0; r < n; ++r) {
    for (const RuntimeTimeline::Entry& e : t.rows[r].top) {
      auto it = names.find(e.id);
      std::vector<double>& v = by_name[it == names.end() ? "?" : it->second];
      v.resize(n, 0.0);
      v[r] += RuntimeTimelineUnsampled(e.count, e.bytes, t.rate);
    }
  }
  std::vector<TimelineBand> all;
  for (auto& [name, values] : by_name) all.push_back({name, std::move(values)});
  auto peak = [](const TimelineBand& b) {
    return *std::max_element(b.values.begin(), b.values.end());
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const TimelineBand& a, const TimelineBand& b) { return peak(a) > peak(b); });
  if (all.size() > bands) all.resize(bands);
  TimelineBand other{"other", std::vector<double>(n, 0.0)};
  for (size_t r = 0; r < n; ++r) {
    double shown = 0;
    for (const TimelineBand& b : all) shown += b.values[r];
    other.values[r] = std::max(0.0, static_cast<double>(t.rows[r].est) - shown);
  }
  if (std::any_of(other.values.begin(), other.values.end(), [](double v) { return v > 0; })) {
    all.push_back(std::move(other));
  }
  return all;
}

}  // namespace

void BuildRuntimeTimelineChart(const RuntimeTimeline& t,
                               const std::map<uint32_t, std::string>& names,
                               const RuntimeTimelineWindow* window, bool show_bytes,
                               TimelineChart* chart) {
  *chart = TimelineChart();
  const size_t n = t.rows.size();
  chart->since_start = true;
  chart->unit = ValueUnit::kBytes;
  chart->sample_type = "inuse_space";
  chart->bands = StackBands(t, names, kTimelineBands);
  chart->in_use_meaning = RuntimeTimelineInUseMeaning(t);
  TimelineCurve exact{
      std::string("exact in-use (") + RuntimeTimelineExactUnit(t) + ")", "#000000", false, {}};
  TimelineCurve rss{"RSS", "#d62728", true, {}};
  auto fmt = [&](double v) { return FormatValue(v, ValueUnit::kBytes, show_bytes); };
  for (size_t r = 0; r < n; ++r) {
    const RuntimeTimeline::Row& row = t.rows[r];
    chart->dump_labels.push_back(Seconds3(row.t_ms) + " s");
    chart->dump_numbers.push_back(int(r) + 1);
    chart->dump_times.push_back(row.t_ms / 1000.0);
    chart->dump_reasons.push_back("");
    exact.values.push_back(static_cast<double>(row.exact));
    rss.values.push_back(static_cast<double>(row.rss));
    chart->column_texts.push_back("row at " + Seconds3(row.t_ms) +
                                  " s after profiling start\nexact in-use " + fmt(row.exact) + " " +
                                  RuntimeTimelineExactUnit(t) + "\nRSS " + fmt(row.rss) +
                                  "\nsampled estimate " + fmt(row.est) + " requested bytes");
    // A column's link: the window of this row alone (the web UI's top table of its stacks).
    chart->column_keys.push_back(Seconds3(row.t_ms) + ":" + Seconds3(row.t_ms));
  }
  chart->totals.assign(n, 0.0);
  for (const TimelineBand& b : chart->bands) {
    for (size_t r = 0; r < n; ++r) chart->totals[r] += b.values[r];
  }
  chart->curves = {std::move(exact), std::move(rss)};
  chart->peak = RuntimeTimelinePeakRow(t);
  if (window != nullptr) {
    chart->window_from = window->t0;
    chart->window_to = window->t1;
    chart->window_peak = window->peak_row;
  }
}

}  // namespace heapkit::pprof
