// --memory: the dump's memory figures as a table (model/memory_figures.h).
#include <cstdio>

#include "pprof-tool/model/memory_figures.h"
#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/value_format.h"
#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

bool MemoryReport(const Profile& profile, bool show_bytes, std::string* out, std::string* error) {
  std::vector<MemoryRow> rows;
  int64_t rss = 0;
  if (!BuildMemoryTable(profile, &rows, &rss, error)) return false;
  out->clear();
  *out += "Memory of the process at the dump";
  if (!profile.dump_reason.empty()) *out += " (" + profile.dump_reason + ")";
  *out += "\n";
  char line[256];
  snprintf(line, sizeof(line), "%-66s %12s %8s\n", "", "bytes", "% of RSS");
  *out += line;
  for (const MemoryRow& r : rows) {
    if (r.heading) {
      *out += r.label + "\n";
      continue;
    }
    const std::string label = std::string(static_cast<size_t>(r.depth) * 2, ' ') + r.label;
    const std::string value =
        FormatValue(static_cast<double>(r.bytes), ValueUnit::kBytes, show_bytes);
    const std::string pct = r.in_rss || r.depth == 0 ? FormatPercent(static_cast<double>(r.bytes),
                                                                     static_cast<double>(rss))
                                                     : "";
    snprintf(line, sizeof(line), "%-66s %12s %8s\n", label.c_str(), value.c_str(), pct.c_str());
    *out += line;
  }
  *out += SizeClassTable(profile, 20, show_bytes, rss);
  return true;
}

}  // namespace heapkit::pprof
