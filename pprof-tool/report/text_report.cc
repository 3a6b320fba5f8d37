#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

namespace {

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// The five number columns of the text report, widened to their widest cell plus one space so
// that wide values (-100.00%, -1234.56MB after --base) never run into the next column.
struct Columns {
  static constexpr size_t kCount = 5;
  size_t width[kCount] = {10, 8, 8, 11, 8};
  std::vector<std::array<std::string, kCount>> rows;
  void Add(std::array<std::string, kCount> row) {
    for (size_t i = 0; i < kCount; ++i) width[i] = std::max(width[i], row[i].size() + 1);
    rows.push_back(std::move(row));
  }
  std::string Header() const {
    const char* names[kCount] = {"flat", "flat%", "sum%", "cum", "cum%"};
    std::string out;
    for (size_t i = 0; i < kCount; ++i) out += Pad(names[i], width[i]);
    return out;
  }
  std::string Row(size_t r) const {
    std::string out;
    for (size_t i = 0; i < kCount; ++i) out += Pad(rows[r][i], width[i]);
    return out;
  }
};

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
         FormatPercent(shown_flat, g.total) + " of " + FormatValue(g.total, g.unit, sb) +
         " total\n";
  if (g.dropped_nodes > 0) {
    out += "Dropped " + std::to_string(g.dropped_nodes) +
           " nodes (cum <= " + FormatValue(g.dropped_node_cutoff, g.unit, sb) + ")\n";
  }
  if (shown < rows.size()) {
    out += "Showing top " + std::to_string(shown) + " nodes out of " +
           std::to_string(g.total_nodes) + "\n";
  }
  Columns columns;
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const GraphNode& n = *rows[i];
    sum += n.flat;
    columns.Add({FormatValue(n.flat, g.unit, sb), FormatPercent(n.flat, g.total),
                 FormatPercent(sum, g.total), FormatValue(n.cum, g.unit, sb),
                 FormatPercent(n.cum, g.total)});
  }
  out += columns.Header() + "  name\n";
  for (size_t i = 0; i < shown; ++i) out += columns.Row(i) + "  " + rows[i]->info.Label() + "\n";
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
    if (std::fabs(a->value) != std::fabs(b->value))
      return std::fabs(a->value) > std::fabs(b->value);
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
      out += (i == 0 ? Pad(v, 10) : std::string(10, ' ')) + "   " + samples.nodes[f.node].Label() +
             (f.inlined ? " (inline)" : "") + "\n";
    }
  }
  out += sep;
  return out;
}

}  // namespace heapkit::pprof
