// A runtime timeline file's rows (runtime_timeline.h).
#include "pprof-tool/model/runtime_timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "alloc/sample_weight.h"
#include "pprof-tool/model/comment_fields.h"

namespace heapkit::pprof {
namespace {

constexpr const char* kHead = "# heapkit: timeline period_ms ";
constexpr const char* kStack = "# heapkit: timeline stack ";
constexpr const char* kRow = "# heapkit: timeline row ";

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool ParseHex(const std::string& text, uint64_t* value) {
  std::string_view rest(text);
  return ReadHexWord(&rest, value) && rest.empty();
}

bool ReadHead(const std::string& line, RuntimeTimeline* t) {
  std::istringstream fields(line.substr(strlen(kHead)));
  std::string ticks, start_unix, start_ns, rate, unix_value, exact, unit;
  if (!(fields >> t->period_ms >> ticks >> t->ticks >> start_unix >> unix_value >> start_ns >>
        t->start_ns >> rate >> t->rate) ||
      ticks != "ticks" || start_ns != "start_ns" || rate != "rate" || t->period_ms <= 0)
    return false;
  if (!(fields >> exact)) return true;  // a file without it: the allocator's usable bytes
  if (exact != "exact" || !(fields >> unit) || (unit != "requested" && unit != "usable"))
    return false;
  t->exact_requested = unit == "requested";
  return true;
}

bool ReadStack(const std::string& line, RuntimeTimeline* t) {
  std::istringstream fields(line.substr(strlen(kStack)));
  uint32_t id;
  std::string at, pc;
  if (!(fields >> id >> at) || at != "@") return false;
  std::vector<uint64_t>& pcs = t->stacks[id];
  while (fields >> pc) {
    uint64_t value;
    if (!ParseHex(pc, &value)) return false;
    pcs.push_back(value);
  }
  return true;
}

// A row line; *bad_entry names an entry that is not <id>:<count>:<bytes>.
bool ReadRow(const std::string& line, RuntimeTimeline::Row* row, std::string* bad_entry) {
  std::istringstream fields(line.substr(strlen(kRow)));
  std::string exact, rss, est, item;
  if (!(fields >> row->t_ms >> exact >> row->exact >> rss >> row->rss >> est >> row->est) ||
      exact != "exact" || rss != "rss" || est != "est" || row->t_ms < 0)
    return false;
  while (fields >> item) {
    unsigned id;
    long long count, bytes;
    int used = 0;
    if (sscanf(item.c_str(), "%u:%lld:%lld%n", &id, &count, &bytes, &used) != 3 ||
        static_cast<size_t>(used) != item.size() || count < 0 || bytes < 0) {
      *bad_entry = item.substr(0, 64);
      return false;
    }
    row->top.push_back({id, count, bytes});
  }
  return true;
}

}  // namespace

bool ReadRuntimeTimeline(const std::string& path, RuntimeTimeline* t, std::string* error) {
  error->clear();
  *t = RuntimeTimeline();
  std::ifstream in(path);
  std::string line;
  bool head = false;
  int number = 0;
  auto fail = [&](const std::string& what) {
    *error = path + ":" + std::to_string(number) + ": " + what;
    return false;
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] != '#') {
      if (!head && StartsWith(line, "MAPPED_LIBRARIES:")) return false;
      continue;
    }
    // A line cut short by a truncated file ends without '\n': getline then hits the end.
    const bool cut = in.eof();
    if (StartsWith(line, kHead)) {
      if (cut || !ReadHead(line, t)) return fail("malformed timeline header line");
      head = true;
    } else if (StartsWith(line, kStack)) {
      if (cut || !ReadStack(line, t)) return fail("malformed timeline stack line");
    } else if (StartsWith(line, kRow)) {
      RuntimeTimeline::Row row;
      std::string bad;
      if (cut || !ReadRow(line, &row, &bad))
        return fail(bad.empty() ? "malformed timeline row line"
                                : "malformed timeline row entry '" + bad + "'");
      if (!t->rows.empty() && row.t_ms < t->rows.back().t_ms)
        return fail("timeline rows out of order (time goes back)");
      t->rows.push_back(std::move(row));
    }
  }
  if (head && t->rows.empty()) {
    *error = path + ": a timeline without rows (the run was shorter than one tick)";
    return false;
  }
  return head;
}

double RuntimeTimelineUnsampled(int64_t count, int64_t bytes, int64_t rate) {
  return alloc::UnsampleLine(count, bytes, static_cast<double>(rate)).bytes;
}

const char* RuntimeTimelineExactUnit(const RuntimeTimeline& t) {
  return t.exact_requested ? "requested bytes" : "usable bytes";
}

std::string RuntimeTimelineInUseMeaning(const RuntimeTimeline& t) {
  if (t.exact_requested)
    return "In use: requested bytes (the sizes the program asked for) everywhere: the exact "
           "in-use, the estimate and the stacks";
  return "In use: requested bytes (the sizes the program asked for) in the estimate and the "
         "stacks; the exact in-use is the allocator's usable bytes (size-class sizes: a sampled "
         "run keeps no exact count of requested bytes)";
}

int RuntimeTimelinePeakRow(const RuntimeTimeline& t) {
  int peak = -1;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    if (peak < 0 || t.rows[i].exact > t.rows[size_t(peak)].exact) peak = int(i);
  }
  return peak;
}

bool ParseRuntimeTimelineWindow(const RuntimeTimeline& t, const std::string& text,
                                RuntimeTimelineWindow* w, std::string* error) {
  char rest = 0;
  w->text = text;
  if (sscanf(text.c_str(), "%lf:%lf%c", &w->t0, &w->t1, &rest) != 2 || !(w->t0 <= w->t1) ||
      w->t0 < 0 || !std::isfinite(w->t1)) {
    *error = text.substr(0, 64) +
             ": expected T0:T1, seconds after profiling start with T0 <= T1 (e.g. 1.5:3)";
    return false;
  }
  w->peak_row = -1;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const double s = t.rows[i].t_ms / 1000.0;
    if (s >= w->t0 && s <= w->t1 &&
        (w->peak_row < 0 || t.rows[i].exact > t.rows[size_t(w->peak_row)].exact))
      w->peak_row = int(i);
  }
  if (w->peak_row < 0) {
    char msg[160];
    snprintf(msg, sizeof(msg), "%s: no timeline row in it (rows from %.3f s to %.3f s)",
             text.substr(0, 64).c_str(), t.rows.empty() ? 0.0 : t.rows.front().t_ms / 1000.0,
             t.rows.empty() ? 0.0 : t.rows.back().t_ms / 1000.0);
    *error = msg;
    return false;
  }
  return true;
}

Profile RuntimeTimelineRowProfile(const RuntimeTimeline& t, const Profile& file_profile,
                                  const RuntimeTimelineWindow& window, std::string* description) {
  const RuntimeTimeline::Row& peak = t.rows[size_t(window.peak_row)];
  Profile out = file_profile;
  out.samples.clear();
  double named = 0;  // the un-sampled bytes of the row's stacks
  // Every stack of the timeline decides the allocation wrappers, not the window's few.
  out.wrapper_stacks.clear();
  for (const auto& [id, pcs] : t.stacks) out.wrapper_stacks.push_back(pcs);
  for (const auto& e : peak.top) {
    auto it = t.stacks.find(e.id);
    if (it == t.stacks.end()) continue;
    RawSample s;
    s.pcs = it->second;
    s.raw.inuse_objects = static_cast<double>(e.count);
    s.raw.inuse_bytes = static_cast<double>(e.bytes);
    const double scale =
        e.bytes > 0 ? RuntimeTimelineUnsampled(e.count, e.bytes, t.rate) / e.bytes : 0;
    s.value = s.raw;
    s.value.inuse_objects *= scale;
    s.value.inuse_bytes *= scale;
    named += s.value.inuse_bytes;
    out.samples.push_back(std::move(s));
  }
  // The rest of the row's sampled estimate, which the row does not split by stack: a sample
  // without frames, so the report's total is the heap's (it counts in no node). Its variance
  // is unknown (the row keeps no count for it) and left out.
  const double rest = static_cast<double>(peak.est) - named;
  if (rest > 0) {
    RawSample s;
    s.value.inuse_bytes = rest;
    s.raw = s.value;
    s.has_variance = true;
    out.samples.push_back(std::move(s));
  }
  char line[400];
  snprintf(line, sizeof(line),
           "Timeline window %s s: the top stacks at its peak, %.3f s (exact in-use %" PRId64
           " %s; the total is the row's %s, %" PRId64
           " requested bytes, of which the named stacks hold %.1f %%)",
           window.text.c_str(), peak.t_ms / 1000.0, peak.exact, RuntimeTimelineExactUnit(t),
           t.rate <= 1 ? "exact total" : "sampled estimate", peak.est,
           peak.est > 0 ? 100.0 * std::min(named, static_cast<double>(peak.est)) /
                              static_cast<double>(peak.est)
                        : 100.0);
  *description = line;
  return out;
}

}  // namespace heapkit::pprof
