// --timeline of a runtime timeline file (runtime_timeline.h).
#include "pprof-tool/cli/runtime_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {
namespace {

constexpr const char* kHead = "# heapkit: timeline period_ms ";
constexpr const char* kStack = "# heapkit: timeline stack ";
constexpr const char* kRow = "# heapkit: timeline row ";
constexpr size_t kColumns = 6;

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The un-sampled in-use bytes of a raw (count, bytes), as the pprofs un-sample heap_v2 lines.
double Unsampled(int64_t count, int64_t bytes, int64_t rate) {
  if (count <= 0 || bytes <= 0) return 0;
  if (rate <= 1) return static_cast<double>(bytes);
  const double mean = static_cast<double>(bytes) / static_cast<double>(count);
  return static_cast<double>(bytes) / (1.0 - std::exp(-mean / static_cast<double>(rate)));
}

std::string LeafName(const std::vector<uint64_t>& pcs, Symbolizer& symbolizer) {
  if (pcs.empty()) return "?";
  const std::vector<SourceFrame>& frames = symbolizer.Symbolize(pcs[0]);
  return frames.empty() ? "?" : frames.front().function;
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

}  // namespace

bool ReadRuntimeTimeline(const std::string& path, RuntimeTimeline* t, std::string* error) {
  error->clear();
  std::ifstream in(path);
  std::string line;
  bool head = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '#') {
      if (!head && StartsWith(line, "MAPPED_LIBRARIES:")) return false;
      continue;
    }
    std::istringstream fields;
    if (StartsWith(line, kHead)) {
      fields.str(line.substr(strlen(kHead)));
      std::string ticks, start_unix, start_ns, rate, unix_value;
      if (!(fields >> t->period_ms >> ticks >> t->ticks >> start_unix >> unix_value >> start_ns >>
            t->start_ns >> rate >> t->rate) || t->period_ms <= 0) {
        *error = path + ": malformed timeline header line";
        return false;
      }
      head = true;
    } else if (StartsWith(line, kStack)) {
      fields.str(line.substr(strlen(kStack)));
      uint32_t id;
      std::string at, pc;
      if (!(fields >> id >> at) || at != "@") {
        *error = path + ": malformed timeline stack line";
        return false;
      }
      std::vector<uint64_t>& pcs = t->stacks[id];
      while (fields >> pc) pcs.push_back(std::stoull(pc, nullptr, 16));
    } else if (StartsWith(line, kRow)) {
      fields.str(line.substr(strlen(kRow)));
      RuntimeTimeline::Row row;
      std::string exact, rss, est, item;
      if (!(fields >> row.t_ms >> exact >> row.exact >> rss >> row.rss >> est >> row.est)) {
        *error = path + ": malformed timeline row line";
        return false;
      }
      while (fields >> item) {
        RuntimeTimeline::Entry e{};
        long long count, bytes;
        unsigned id;
        if (sscanf(item.c_str(), "%u:%lld:%lld", &id, &count, &bytes) != 3) {
          *error = path + ": malformed timeline row entry '" + item + "'";
          return false;
        }
        e.id = id;
        e.count = count;
        e.bytes = bytes;
        row.top.push_back(e);
      }
      t->rows.push_back(std::move(row));
    }
  }
  if (head && t->rows.empty()) {
    *error = path + ": a timeline without rows (the run was shorter than one tick)";
    return false;
  }
  return head;
}

std::string RuntimeTimelineText(const RuntimeTimeline& t, Symbolizer& symbolizer,
                                bool show_bytes) {
  // The columns: the stacks with the highest un-sampled in-use in any row.
  std::map<uint32_t, double> most;
  for (const auto& row : t.rows)
    for (const auto& e : row.top) most[e.id] = std::max(most[e.id], Unsampled(e.count, e.bytes, t.rate));
  std::vector<std::pair<double, uint32_t>> order;
  for (const auto& [id, v] : most) order.push_back({v, id});
  std::sort(order.rbegin(), order.rend());
  if (order.size() > kColumns) order.resize(kColumns);
  auto fmt = [&](double v) { return FormatValue(v, ValueUnit::kBytes, show_bytes); };
  std::ostringstream out;
  out << "Timeline: " << t.rows.size() << " rows of " << t.period_ms << " ms (" << t.ticks
      << " ticks), sampling every " << t.rate << " bytes\n";
  out << "Columns: exact = the allocator's in-use bytes, rss = the process's RSS, estimate = the "
         "sampled in-use estimate; S<n> = a stack's sampled in-use (un-sampled):\n";
  for (size_t i = 0; i < order.size(); ++i) {
    auto it = t.stacks.find(order[i].second);
    out << "  S" << i + 1 << " "
        << (it == t.stacks.end() ? "?" : LeafName(it->second, symbolizer)) << "\n";
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
        if (e.id == id) value = Unsampled(e.count, e.bytes, t.rate);
      out << Pad(fmt(value), 11);
    }
    out << "\n";
  }
  if (peak != nullptr) {
    char time[32];
    snprintf(time, sizeof(time), "%.3f", peak->t_ms / 1000.0);
    out << "Peak of the exact in-use: " << fmt(peak->exact) << " at " << time
        << " s (--window=T0:T1 shows the stacks at the peak of a window)\n";
  }
  return out.str();
}

bool RuntimeTimelineWindow(const RuntimeTimeline& t, const Profile& file_profile,
                           const std::string& window, Profile* out, std::string* description,
                           std::string* error) {
  double t0 = 0, t1 = 0;
  char rest = 0;
  if (sscanf(window.c_str(), "%lf:%lf%c", &t0, &t1, &rest) != 2 || !(t0 <= t1) || t0 < 0) {
    *error = "--window: expected T0:T1, seconds after profiling start with T0 <= T1 (e.g. 1.5:3)";
    return false;
  }
  const RuntimeTimeline::Row* peak = nullptr;
  for (const auto& row : t.rows) {
    const double s = row.t_ms / 1000.0;
    if (s >= t0 && s <= t1 && (peak == nullptr || row.exact > peak->exact)) peak = &row;
  }
  if (peak == nullptr) {
    char msg[160];
    snprintf(msg, sizeof(msg), "--window=%s: no timeline row in it (rows from %.3f s to %.3f s)",
             window.c_str(), t.rows.front().t_ms / 1000.0, t.rows.back().t_ms / 1000.0);
    *error = msg;
    return false;
  }
  *out = file_profile;
  out->samples.clear();
  for (const auto& e : peak->top) {
    auto it = t.stacks.find(e.id);
    if (it == t.stacks.end()) continue;
    RawSample s;
    s.pcs = it->second;
    s.raw.inuse_objects = static_cast<double>(e.count);
    s.raw.inuse_bytes = static_cast<double>(e.bytes);
    const double scale = e.bytes > 0 ? Unsampled(e.count, e.bytes, t.rate) / e.bytes : 0;
    s.value = s.raw;
    s.value.inuse_objects *= scale;
    s.value.inuse_bytes *= scale;
    out->samples.push_back(std::move(s));
  }
  char line[200];
  snprintf(line, sizeof(line),
           "Timeline window %s s: the top stacks at its peak, %.3f s (exact in-use %lld bytes)",
           window.c_str(), peak->t_ms / 1000.0, static_cast<long long>(peak->exact));
  *description = line;
  return true;
}

}  // namespace heapkit::pprof
