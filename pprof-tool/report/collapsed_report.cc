#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

std::string CollapsedReport(const StackSamples& samples) {
  // Folded stacks: root first, ';'-separated; ';' in names would split frames, so replace it.
  std::map<std::string, double> folded;
  for (const StackSample& s : samples.samples) {
    if (s.frames.empty()) continue;
    std::string line;
    for (size_t i = s.frames.size(); i-- > 0;) {
      std::string label = samples.nodes[s.frames[i].node].Label();
      std::replace(label.begin(), label.end(), ';', ':');
      std::replace(label.begin(), label.end(), '\n', ' ');
      if (!line.empty()) line += ';';
      line += label;
    }
    folded[line] += s.value;
  }
  std::string out;
  char buf[64];
  for (const auto& [stack, value] : folded) {
    double r = std::round(value);
    if (r == 0) continue;
    snprintf(buf, sizeof buf, " %.0f\n", r);
    out += stack + buf;
  }
  return out;
}

}  // namespace heapkit::pprof
