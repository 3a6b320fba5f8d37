// --tree and --peek: go pprof's text call tree. One block per function (flat order), its
// callers above it and its callees below, each with the value that flowed along that call and
// its share of the function's cum:
//
//   -----------------------------------------------------------------+-------------
//         flat   flat%    sum%        cum    cum%      calls  calls% | context
//   -----------------------------------------------------------------+-------------
//                                                  1.50MB 100.00% |   main
//       1.50MB  75.00%  75.00%     1.50MB  75.00%                 | Load
//                                                  0.50MB  33.33% |   Parse
//   -----------------------------------------------------------------+-------------
#include <algorithm>
#include <string>

#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {
namespace {

// Right-aligned, and never touching the cell before it.
std::string Cell(const std::string& s, size_t width) {
  return s.size() + 1 > width ? " " + s : std::string(width - s.size(), ' ') + s;
}

// Column widths: flat flat% sum% cum cum%, then calls calls% (callers and callees only).
constexpr size_t kWidth[] = {10, 8, 8, 11, 8, 11, 8};
constexpr size_t kNodeColumns = 10 + 8 + 8 + 11 + 8;
constexpr size_t kCallColumns = 11 + 8;
const std::string kRule = std::string(kNodeColumns + kCallColumns + 1, '-') + "+-------------\n";

std::string EdgeLine(const CallGraph& g, const GraphEdge& e, uint32_t other, double cum, bool sb) {
  std::string name = g.nodes[other].info.Label() + (e.inlined ? " (inline)" : "");
  return std::string(kNodeColumns, ' ') + Cell(FormatValue(e.weight, g.unit, sb), kWidth[5]) +
         Cell(FormatPercent(e.weight, cum), kWidth[6]) + " |   " + name + "\n";
}

}  // namespace

bool TreeReport(const StackSamples& samples, const std::string& peek, const ReportOptions& options,
                std::string* out, std::string* error) {
  NamePattern re;
  if (!re.Compile(peek, "peek", error)) return false;
  GraphOptions go = options.graph;
  go.edge_fraction = 0;
  CallGraph g = CallGraph::Build(samples, go);
  const bool sb = options.show_bytes;
  out->clear();
  for (const std::string& d : samples.description) *out += d + "\n";
  for (const std::string& l : g.LegendLines(sb)) *out += l + "\n";
  *out += kRule;
  const char* names[] = {"flat", "flat%", "sum%", "cum", "cum%", "calls", "calls%"};
  for (size_t i = 0; i < 7; ++i) *out += Cell(names[i], kWidth[i]);
  *out += " | context\n";
  *out += kRule;
  double sum = 0;
  size_t shown = 0;
  for (const GraphNode& n : g.nodes) {
    sum += n.flat;
    if (!peek.empty() && !re.Search(n.info.name)) continue;
    ++shown;
    for (uint32_t e : n.in_edges) *out += EdgeLine(g, g.edges[e], g.edges[e].caller, n.cum, sb);
    *out += Cell(FormatValue(n.flat, g.unit, sb), kWidth[0]) +
            Cell(FormatPercent(n.flat, g.total), kWidth[1]) +
            Cell(FormatPercent(sum, g.total), kWidth[2]) +
            Cell(FormatValue(n.cum, g.unit, sb), kWidth[3]) +
            Cell(FormatPercent(n.cum, g.total), kWidth[4]) + std::string(kCallColumns, ' ') +
            " | " + n.info.Label() + "\n";
    for (uint32_t e : n.out_edges) *out += EdgeLine(g, g.edges[e], g.edges[e].callee, n.cum, sb);
    *out += kRule;
  }
  if (!peek.empty() && shown == 0) {
    *error = "--peek=" + peek + ": no function matches";
    return false;
  }
  return true;
}

}  // namespace heapkit::pprof
