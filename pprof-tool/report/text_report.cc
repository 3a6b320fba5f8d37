#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

namespace {
std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}
}  // namespace

std::string TextReport(const StackSamples& samples, const ReportOptions& options) {
  GraphOptions go = options.graph;
  go.edge_fraction = 0;
  CallGraph g = CallGraph::Build(samples, go);
  std::vector<const GraphNode*> rows;
  for (const GraphNode& n : g.nodes) rows.push_back(&n);
  if (options.cum_sort) {
    std::stable_sort(rows.begin(), rows.end(), [](const GraphNode* a, const GraphNode* b) {
      if (std::fabs(a->cum) != std::fabs(b->cum)) return std::fabs(a->cum) > std::fabs(b->cum);
      return a->info.Label() < b->info.Label();
    });
  }
  size_t shown = rows.size();
  if (options.top_n > 0 && size_t(options.top_n) < shown) shown = size_t(options.top_n);
  double shown_flat = 0;
  for (size_t i = 0; i < shown; ++i) shown_flat += rows[i]->flat;

  std::string out;
  for (const std::string& d : samples.description) out += d + "\n";
  const bool sb = options.show_bytes;
  out += "Showing nodes accounting for " + FormatValue(shown_flat, g.unit, sb) + ", " +
         FormatPercent(shown_flat, g.total) + " of " + FormatValue(g.total, g.unit, sb) + " total\n";
  if (g.dropped_nodes > 0) {
    out += "Dropped " + std::to_string(g.dropped_nodes) + " nodes (cum <= " +
           FormatValue(g.dropped_node_cutoff, g.unit, sb) + ")\n";
  }
  if (shown < rows.size()) {
    out += "Showing top " + std::to_string(shown) + " nodes out of " + std::to_string(g.total_nodes) + "\n";
  }
  out += Pad("flat", 10) + Pad("flat%", 8) + Pad("sum%", 8) + Pad("cum", 11) + Pad("cum%", 8) + "  name\n";
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const GraphNode& n = *rows[i];
    sum += n.flat;
    out += Pad(FormatValue(n.flat, g.unit, sb), 10) + Pad(FormatPercent(n.flat, g.total), 8) +
           Pad(FormatPercent(sum, g.total), 8) + Pad(FormatValue(n.cum, g.unit, sb), 11) +
           Pad(FormatPercent(n.cum, g.total), 8) + "  " + n.info.Label() + "\n";
  }
  return out;
}

std::string TracesReport(const StackSamples& samples, const ReportOptions& options) {
  std::vector<const StackSample*> order;
  for (const StackSample& s : samples.samples) order.push_back(&s);
  auto key = [&](const StackSample* s) {
    std::string k;
    for (const StackFrame& f : s->frames) k += samples.nodes[f.node].Label() + "\n";
    return k;
  };
  std::stable_sort(order.begin(), order.end(), [&](const StackSample* a, const StackSample* b) {
    if (std::fabs(a->value) != std::fabs(b->value)) return std::fabs(a->value) > std::fabs(b->value);
    return key(a) < key(b);
  });
  std::string out;
  for (const std::string& d : samples.description) out += d + "\n";
  const std::string sep = "-----------+-------------------------------------------------------\n";
  for (const StackSample* s : order) {
    out += sep;
    std::string v = FormatValue(s->value, samples.unit, options.show_bytes);
    if (s->frames.empty()) {
      out += Pad(v, 10) + "   <all frames hidden>\n";
      continue;
    }
    for (size_t i = 0; i < s->frames.size(); ++i) {
      const StackFrame& f = s->frames[i];
      out += (i == 0 ? Pad(v, 10) : std::string(10, ' ')) + "   " +
             samples.nodes[f.node].Label() + (f.inlined ? " (inline)" : "") + "\n";
    }
  }
  out += sep;
  return out;
}

}  // namespace heapkit::pprof
