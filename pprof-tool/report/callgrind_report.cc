#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

std::string CallgrindReport(const StackSamples& s, const ReportOptions& /*options*/) {
  using Fn = std::pair<std::string, std::string>;  // (file, function)
  struct Call {
    double inclusive = 0;
    long long calls = 0;
    int callee_line = 0;
  };
  std::map<Fn, std::map<int, double>> self;
  std::map<Fn, std::map<std::tuple<int, std::string, std::string>, Call>> calls;
  for (const StackSample& sample : s.samples) {
    if (sample.frames.empty()) continue;
    const NodeInfo& leaf = s.nodes[sample.frames[0].node];
    self[{leaf.file, leaf.name}][leaf.line] += sample.value;
    std::set<std::tuple<std::string, std::string, int, std::string, std::string>> seen;
    for (size_t i = 1; i < sample.frames.size(); ++i) {
      const NodeInfo& caller = s.nodes[sample.frames[i].node];
      const NodeInfo& callee = s.nodes[sample.frames[i - 1].node];
      if (!seen.emplace(caller.file, caller.name, caller.line, callee.file, callee.name).second)
        continue;
      Call& c = calls[{caller.file, caller.name}][{caller.line, callee.file, callee.name}];
      c.inclusive += sample.value;
      c.calls += 1;
      c.callee_line = callee.line;
      self[{caller.file, caller.name}];  // make sure every caller appears
    }
  }
  std::string out =
      "version: 1\ncreator: heapkit pprof-tool\npositions: line\nevents: " + s.sample_type + "\n";
  char buf[96];
  snprintf(buf, sizeof buf, "summary: %.0f\n\n", std::round(s.total));
  out += buf;
  for (const auto& [fn, lines] : self) {
    out += "fl=" + (fn.first.empty() ? std::string("??") : fn.first) + "\nfn=" + fn.second + "\n";
    for (const auto& [line, v] : lines) {
      if (std::round(v) == 0) continue;
      snprintf(buf, sizeof buf, "%d %.0f\n", line, std::round(v));
      out += buf;
    }
    auto it = calls.find(fn);
    if (it != calls.end()) {
      for (const auto& [key, c] : it->second) {
        const auto& [line, cfile, cfn] = key;
        out += "cfl=" + (cfile.empty() ? std::string("??") : cfile) + "\ncfn=" + cfn + "\n";
        snprintf(buf, sizeof buf, "calls=%lld %d\n%d %.0f\n", c.calls, c.callee_line, line,
                 std::round(c.inclusive));
        out += buf;
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace heapkit::pprof
