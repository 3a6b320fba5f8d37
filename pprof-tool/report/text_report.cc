#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "pprof-tool/model/estimate.h"
#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {

namespace {

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

// The number columns of the text report (five, seven with --error_bars), widened to their
// widest cell plus one space so that wide values (-100.00%, -1234.56MB after --base) never run
// into the next column.
struct Columns {
  explicit Columns(bool error_bars) {
    if (error_bars) {
      names = {"flat", "±2σ", "flat%", "sum%", "cum", "±2σ", "cum%"};
      width = {10, 9, 8, 8, 11, 9, 8};
    } else {
      names = {"flat", "flat%", "sum%", "cum", "cum%"};
      width = {10, 8, 8, 11, 8};
    }
  }
  std::vector<const char*> names;
  std::vector<size_t> width;
  std::vector<std::vector<std::string>> rows;
  // Display width: "±" and "σ" are two bytes each in UTF-8 but one column.
  static size_t Width(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  }
  static std::string Pad(const std::string& s, size_t w) {
    const size_t n = Width(s);
    return n >= w ? s : std::string(w - n, ' ') + s;
  }
  void Add(std::vector<std::string> row) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], Width(row[i]) + 1);
    rows.push_back(std::move(row));
  }
  std::string Header() const {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += Pad(names[i], width[i]);
    return out;
  }
  std::string Row(size_t r) const {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += Pad(rows[r][i], width[i]);
    return out;
  }
};

// A cell of the ±2σ column: "±1.2MB", "0" for an exact value.
std::string IntervalCell(double variance, ValueUnit unit, bool show_bytes) {
  if (!(variance > 0)) return "0";
  return "±" + FormatValue(kIntervalSigmas * std::sqrt(variance), unit, show_bytes);
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
  } else if (options.difference) {
    // Growth first: a large decrease (a cache's noise, a freed buffer) is not a leak.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const GraphNode* a, const GraphNode* b) { return a->flat > b->flat; });
  }
  size_t shown = rows.size();
  if (options.top_n > 0 && size_t(options.top_n) < shown) shown = size_t(options.top_n);
  double shown_flat = 0;
  for (size_t i = 0; i < shown; ++i) shown_flat += rows[i]->flat;

  std::string out;
  for (const std::string& d : samples.description) out += d + "\n";
  const bool sb = options.show_bytes;
  out += ShowingTotalLine(shown_flat, g.total, g.total_variance, g.unit, sb, options.difference) +
         "\n";
  const std::string note = IntervalNote(samples.variance_source);
  if (!note.empty() && (options.error_bars || options.difference) && g.total_variance > 0)
    out += note + "\n";
  if (g.dropped_nodes > 0) {
    out += "Dropped " + std::to_string(g.dropped_nodes) +
           " nodes (cum <= " + FormatValue(g.dropped_node_cutoff, g.unit, sb) + ")\n";
  }
  if (shown < rows.size()) {
    out += "Showing top " + std::to_string(shown) + " nodes out of " +
           std::to_string(g.total_nodes) + "\n";
  }
  Columns columns(options.error_bars);
  double sum = 0;
  for (size_t i = 0; i < shown; ++i) {
    const GraphNode& n = *rows[i];
    sum += n.flat;
    if (options.error_bars) {
      columns.Add({FormatValue(n.flat, g.unit, sb), IntervalCell(n.flat_variance, g.unit, sb),
                   FormatPercent(n.flat, g.total), FormatPercent(sum, g.total),
                   FormatValue(n.cum, g.unit, sb), IntervalCell(n.cum_variance, g.unit, sb),
                   FormatPercent(n.cum, g.total)});
    } else {
      columns.Add({FormatValue(n.flat, g.unit, sb), FormatPercent(n.flat, g.total),
                   FormatPercent(sum, g.total), FormatValue(n.cum, g.unit, sb),
                   FormatPercent(n.cum, g.total)});
    }
  }
  out += columns.Header() + "  name\n";
  for (size_t i = 0; i < shown; ++i) {
    const GraphNode& n = *rows[i];
    out += columns.Row(i) + "  " + n.info.Label();
    // A sampled change whose flat cannot be told from 0 (an exact one always can).
    if (options.difference && n.flat_variance > 0 && !IsSignificant(n.flat, n.flat_variance))
      out += "  (within noise)";
    out += "\n";
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
