#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/report/source_files.h"

namespace heapkit::pprof {
namespace {

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

struct LineStat {
  double flat = 0, cum = 0;
};

}  // namespace

bool ListReport(const StackSamples& samples, const std::string& regex, const ReportOptions& options,
                std::string* out, std::string* error) {
  NamePattern re;
  if (!re.Compile(regex, "list", error)) return false;
  // Matching function names.
  std::map<std::string, bool> match;
  for (const NodeInfo& n : samples.nodes) {
    if (!match.count(n.name)) match[n.name] = re.Search(n.name);
  }
  // function -> file -> line -> stats; function -> (flat, cum)
  std::map<std::string, std::map<std::string, std::map<int, LineStat>>> stats;
  std::map<std::string, LineStat> totals;
  for (const StackSample& s : samples.samples) {
    std::set<std::pair<std::string, std::pair<std::string, int>>> seen_line;
    std::set<std::string> seen_fn;
    for (size_t i = 0; i < s.frames.size(); ++i) {
      const NodeInfo& n = samples.nodes[s.frames[i].node];
      if (!match[n.name]) continue;
      LineStat& ls = stats[n.name][n.file][n.line];
      if (i == 0) {
        ls.flat += s.value;
        totals[n.name].flat += s.value;
      }
      if (seen_line.insert({n.name, {n.file, n.line}}).second) ls.cum += s.value;
      if (seen_fn.insert(n.name).second) totals[n.name].cum += s.value;
    }
  }
  if (stats.empty()) {
    *error = "--list=" + regex + ": no function matches";
    return false;
  }
  const bool sb = options.show_bytes;
  auto fmt = [&](double v) { return v == 0 ? std::string(".") : FormatValue(v, samples.unit, sb); };
  // One routine per function and file, by name (the maps' order) unless by weight.
  struct Routine {
    const std::string* fn;
    const std::string* file;
    const std::map<int, LineStat>* lines;
    double flat, cum;
  };
  std::vector<Routine> routines;
  for (const auto& [fn, files] : stats) {
    for (const auto& [file, lines] : files) {
      double f = 0;
      for (const auto& [l, st] : lines) f += st.flat;
      routines.push_back({&fn, &file, &lines, f, totals[fn].cum});
    }
  }
  if (options.list_by_weight) {
    std::stable_sort(routines.begin(), routines.end(), [](const Routine& a, const Routine& b) {
      if (a.flat != b.flat) return std::fabs(a.flat) > std::fabs(b.flat);
      return std::fabs(a.cum) > std::fabs(b.cum);
    });
  }
  for (const Routine& routine : routines) {
    const std::string& fn = *routine.fn;
    const std::string& file = *routine.file;
    const std::map<int, LineStat>& lines = *routine.lines;
    *out += "ROUTINE ======================== " + fn + " in " + (file.empty() ? "??" : file) + "\n";
    const double f = routine.flat, c = routine.cum;
    *out += Pad(FormatValue(f, samples.unit, sb), 10) + " " +
            Pad(FormatValue(c, samples.unit, sb), 10) + " (flat, cum) " +
            FormatPercent(c, samples.total) + " of Total\n";
    std::vector<std::string> src;
    std::string why = "no file name";
    if (!file.empty())
      ReadSourceFile(options.sources ? *options.sources : SourceAccess(), file, &src, &why);
    int lo = lines.begin()->first, hi = lines.rbegin()->first;
    if (src.empty()) {
      *out += "         .          .           (source not available: " + why + ")\n";
      for (const auto& [l, st] : lines) {
        *out += Pad(fmt(st.flat), 10) + " " + Pad(fmt(st.cum), 10) + " " +
                Pad(std::to_string(l), 6) + ":\n";
      }
      continue;
    }
    lo = std::max(1, lo - 3);
    hi = std::min(int(src.size()), hi + 3);
    for (int l = lo; l <= hi; ++l) {
      auto it = lines.find(l);
      LineStat st = it == lines.end() ? LineStat() : it->second;
      *out += Pad(fmt(st.flat), 10) + " " + Pad(fmt(st.cum), 10) + " " + Pad(std::to_string(l), 6) +
              ": " + src[size_t(l - 1)] + "\n";
    }
  }
  return true;
}

}  // namespace heapkit::pprof
