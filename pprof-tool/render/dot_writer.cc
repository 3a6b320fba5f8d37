#include "dot_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "pprof-tool/model/value_format.h"
#include "pprof-tool/render/dot_escape.h"

namespace heapkit::pprof {

namespace {

std::string Hex(int r, int g, int b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", std::clamp(r, 0, 255), std::clamp(g, 0, 255),
                std::clamp(b, 0, 255));
  return buf;
}

// Linear blend between two colours, t in [0, 1].
std::string Blend(int r0, int g0, int b0, int r1, int g1, int b1, double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  return Hex(mix(r0, r1), mix(g0, g1), mix(b0, b1));
}

std::string Fixed(double v, int decimals) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

double SafeRatio(double a, double b) { return b == 0 ? 0 : a / b; }

}  // namespace

std::string HeatBorderColor(double score, bool diff) {
  const double t = std::sqrt(std::min(std::fabs(score), 1.0));
  if (diff && score < 0) return Blend(0xb2, 0xb2, 0xb2, 0x00, 0x8a, 0x2e, t);  // grey -> green
  return Blend(0xb2, 0xb2, 0xb2, 0xb2, 0x1a, 0x00, t);                         // grey -> red
}

std::string HeatFillColor(double score, bool diff) {
  const double t = std::sqrt(std::min(std::fabs(score), 1.0));
  if (diff && score < 0) return Blend(0xf8, 0xf8, 0xf8, 0xc8, 0xf0, 0xcf, t);
  return Blend(0xf8, 0xf8, 0xf8, 0xf6, 0xcf, 0xc4, t);
}

namespace {

// One DOT document: the scales (heat, font size) measured once over the graph.
class DotDocument {
 public:
  DotDocument(const CallGraph& graph, const DotStyle& style);
  std::string Write() const;

 private:
  std::string Value(double v) const { return FormatValue(v, graph_.unit, style_.show_bytes); }
  // " (12.34%)" of |total|, sign kept; nothing when the total is 0 (a diff that nets out).
  std::string Percent(double v) const {
    if (abs_total_ == 0) return "";
    return std::string(" (") + (v < 0 ? "-" : "") + FormatPercent(std::fabs(v), abs_total_) + ")";
  }
  void AppendLegend(std::string* out) const;
  void AppendNode(size_t i, std::string* out) const;
  void AppendEdge(const GraphEdge& e, std::string* out) const;

  const CallGraph& graph_;
  const DotStyle& style_;
  const double abs_total_;
  double max_flat_ = 0, max_cum_ = 0, max_weight_ = 0;
  double heat_base_ = 0;
};

DotDocument::DotDocument(const CallGraph& graph, const DotStyle& style)
    : graph_(graph), style_(style), abs_total_(std::fabs(graph.total)) {
  for (const GraphNode& n : graph.nodes) {
    max_flat_ = std::max(max_flat_, std::fabs(n.flat));
    max_cum_ = std::max(max_cum_, std::fabs(n.cum));
  }
  for (const GraphEdge& e : graph.edges) max_weight_ = std::max(max_weight_, std::fabs(e.weight));
  // Heat is relative to the total for plain profiles; a diff's total can be ~0, so diffs use
  // the largest change instead.
  heat_base_ = style.diff ? max_cum_ : abs_total_;
}

void DotDocument::AppendLegend(std::string* out) const {
  if (style_.legend.empty()) return;
  std::string body, tip;
  for (const std::string& line : style_.legend) {
    body += EscapeDotBody(line) + "\\l";
    tip += (tip.empty() ? "" : "\n") + line;
  }
  *out += "subgraph cluster_L { peripheries=0 \"legend\" [shape=note fontsize=16 label=\"" + body +
          "\" tooltip=" + QuoteDot(tip) + "] }\n";
}

void DotDocument::AppendNode(size_t i, std::string* out_ptr) const {
  std::string& out = *out_ptr;
  const GraphNode& n = graph_.nodes[i];
  const std::string name = n.info.Label();
  std::string label = WrapFunctionName(name);
  label += '\n';
  if (n.flat != 0) {
    label += Value(n.flat) + Percent(n.flat);
  } else {
    label += "0";
  }
  if (n.cum != n.flat) label += "\nof " + Value(n.cum) + Percent(n.cum);
  const int font_size =
      8 + static_cast<int>(std::lround(24.0 * std::sqrt(SafeRatio(std::fabs(n.flat), max_flat_))));
  const double score = std::clamp(SafeRatio(n.cum, heat_base_), -1.0, 1.0);
  const double shade = style_.diff ? score : std::fabs(score);
  const bool leak = style_.heapcheck && n.flat != 0;
  out += "N" + std::to_string(i + 1) + " [label=" + QuoteDot(label) + " id=\"node" +
         std::to_string(i + 1) + "\" fontsize=" + std::to_string(font_size) +
         " shape=box tooltip=" + QuoteDot(n.info.FullLabel() + " (" + Value(n.cum) + ")");
  if (leak) {
    out += " color=\"#e00000\" penwidth=3 peripheries=2 fontcolor=\"#a00000\" fillcolor=" +
           QuoteDot(HeatFillColor(std::max(std::fabs(shade), 0.25), false));
  } else {
    out += " color=" + QuoteDot(HeatBorderColor(shade, style_.diff)) +
           " fillcolor=" + QuoteDot(HeatFillColor(shade, style_.diff));
  }
  out += "]\n";
}

void DotDocument::AppendEdge(const GraphEdge& e, std::string* out_ptr) const {
  std::string& out = *out_ptr;
  const double share = SafeRatio(std::fabs(e.weight), style_.diff ? max_weight_ : abs_total_);
  const double shade = style_.diff ? (e.weight < 0 ? -share : share) : share;
  const std::string caller = graph_.nodes[e.caller].info.FullLabel();
  const std::string callee = graph_.nodes[e.callee].info.FullLabel();
  out +=
      "N" + std::to_string(e.caller + 1) + " -> N" + std::to_string(e.callee + 1) +
      " [label=" + QuoteDot(" " + Value(e.weight) + (e.inlined ? "\n (inline)" : "")) +
      " weight=" + std::to_string(1 + static_cast<int>(std::lround(100 * std::min(share, 1.0)))) +
      " penwidth=" + Fixed(1 + 5 * std::min(share, 1.0), 2) +
      " color=" + QuoteDot(HeatBorderColor(shade, style_.diff)) +
      " tooltip=" + QuoteDot(caller + " -> " + callee + " (" + Value(e.weight) + ")") +
      " labeltooltip=" + QuoteDot(caller + " -> " + callee + " (" + Value(e.weight) + ")");
  if (e.residual) {
    out += " style=\"dotted\"";
  } else if (e.inlined) {
    out += " style=\"dashed\"";
  }
  out += "]\n";
}

std::string DotDocument::Write() const {
  std::string out;
  out.reserve(256 + graph_.nodes.size() * 256 + graph_.edges.size() * 160);
  out += "digraph " + QuoteDot(style_.title.empty() ? "heapkit" : style_.title) + " {\n";
  out += "node [style=filled fillcolor=\"#f8f8f8\" fontname=\"Helvetica\"]\n";
  out += "edge [fontname=\"Helvetica\"]\n";
  AppendLegend(&out);
  for (size_t i = 0; i < graph_.nodes.size(); ++i) AppendNode(i, &out);
  for (const GraphEdge& e : graph_.edges) AppendEdge(e, &out);
  out += "}\n";
  return out;
}

}  // namespace

std::string WriteDot(const CallGraph& graph, const DotStyle& style) {
  return DotDocument(graph, style).Write();
}

}  // namespace heapkit::pprof
