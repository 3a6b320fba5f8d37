// --timeline of a runtime timeline file (runtime_timeline.h).
#include "pprof-tool/cli/runtime_timeline.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {
namespace {

constexpr size_t kColumns = 6;

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

std::string RuntimeTimelineText(const RuntimeTimeline& t,
                                const std::map<uint32_t, std::string>& names, bool show_bytes) {
  // The columns: the stacks with the highest un-sampled in-use in any row.
  std::map<uint32_t, double> most;
  for (const auto& row : t.rows)
    for (const auto& e : row.top)
      most[e.id] = std::max(most[e.id], RuntimeTimelineUnsampled(e.count, e.bytes, t.rate));
  std::vector<std::pair<double, uint32_t>> order;
  for (const auto& [id, v] : most) order.push_back({v, id});
  std::sort(order.rbegin(), order.rend());
  if (order.size() > kColumns) order.resize(kColumns);
  auto fmt = [&](double v) { return FormatValue(v, ValueUnit::kBytes, show_bytes); };
  std::ostringstream out;
  out << "Timeline: " << t.rows.size() << " rows of " << t.period_ms << " ms (" << t.ticks
      << " ticks), sampling every " << t.rate << " bytes\n";
  out << RuntimeTimelineInUseMeaning(t) << "\n";
  out << "Columns: exact = the exact in-use ("
      << (t.exact_requested ? "the profile's exact total" : "the allocator's count") << ", "
      << RuntimeTimelineExactUnit(t)
      << "), rss = the process's RSS, estimate = the sampled in-use estimate; S<n> = a stack's "
         "sampled in-use (un-sampled):\n";
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = names.find(order[i].second);
    out << "  S" << i + 1 << " " << (it == names.end() ? "?" : it->second) << "\n";
  }
  out << Pad("time_s", 9) << Pad("exact", 11) << Pad("rss", 11) << Pad("estimate", 11);
  for (size_t i = 0; i < order.size(); ++i) out << Pad("S" + std::to_string(i + 1), 11);
  out << "\n";
  const RuntimeTimeline::Row* peak = nullptr;
  for (const auto& row : t.rows) {
    if (peak == nullptr || row.exact > peak->exact) peak = &row;
    char time[32];
    snprintf(time, sizeof(time), "%.3f", row.t_ms / 1000.0);
    out << Pad(time, 9) << Pad(fmt(row.exact), 11) << Pad(fmt(row.rss), 11)
        << Pad(fmt(row.est), 11);
    for (const auto& [v, id] : order) {
      double value = 0;
      for (const auto& e : row.top)
        if (e.id == id) value = RuntimeTimelineUnsampled(e.count, e.bytes, t.rate);
      out << Pad(fmt(value), 11);
    }
    out << "\n";
  }
  if (peak != nullptr) {
    char time[32];
    snprintf(time, sizeof(time), "%.3f", peak->t_ms / 1000.0);
    out << "Peak of the exact in-use: " << fmt(peak->exact) << " " << RuntimeTimelineExactUnit(t)
        << " at " << time
        << " s (--window=T0:T1 shows the stacks at the peak of a window; --timeline=FILE.svg draws "
           "it)\n";
  }
  return out.str();
}

}  // namespace heapkit::pprof
