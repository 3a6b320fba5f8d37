#include "flame_graph.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <system_error>

#include "pprof-tool/model/value_format.h"
#include "pprof-tool/render/dot_escape.h"
#include "pprof-tool/render/flame_tree.h"
#include "pprof-tool/render/flame_graph_script.h"

namespace heapkit::pprof {

namespace {

constexpr int kFrameHeight = 16;  // px per depth (15 box + 1 gap)
constexpr int kPad = 10;          // left/right margin
constexpr int kTopPad = 34;       // title
constexpr int kLegendLine = 14;
constexpr int kBottomPad = 26;   // status line
constexpr double kCharPx = 7.2;  // must match HK_CHAR_PX in the script

// Appends `v` as printf's %.<precision>g (general) or %.<precision>f (fixed) would, without
// printf's locale and varargs costs.
void AppendDouble(std::string* out, double v, std::chars_format format, int precision) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, format, precision);
  out->append(buf, r.ec == std::errc() ? r.ptr : buf);
}
void AppendNum(std::string* out, double v) { AppendDouble(out, v, std::chars_format::general, 10); }
void AppendPx(std::string* out, double v) { AppendDouble(out, v, std::chars_format::fixed, 2); }
void AppendInt(std::string* out, long v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// EscapeXml(text) appended to *out; text that needs no escaping (the usual case) is copied.
void AppendEscaped(std::string* out, std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7F || c == '&' || c == '<' || c == '>' || c == '"' || c == '\'') {
      *out += EscapeXml(text);
      return;
    }
  }
  out->append(text);
}

std::string Num(double v) {
  std::string s;
  AppendNum(&s, v);
  return s;
}

std::string Px(double v) {
  std::string s;
  AppendPx(&s, v);
  return s;
}

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// Truncates `name` to what fits in a box `w` px wide (same rule as the script's hkLabel).
std::string FitText(const std::string& name, double w) {
  const double fit_d = std::floor((w - 6) / kCharPx);
  if (fit_d < 3) return "";
  const auto fit = static_cast<size_t>(fit_d);
  // The script counts UTF-16 units; names are overwhelmingly ASCII, so bytes are close enough.
  if (name.size() <= fit) return name;
  std::string cut = name.substr(0, fit - 2);
  while (!cut.empty() && (static_cast<unsigned char>(cut.back()) & 0xC0) == 0x80) cut.pop_back();
  if (!cut.empty() && static_cast<unsigned char>(cut.back()) >= 0xC0) cut.pop_back();
  return cut + "..";
}

// Diff colouring: score = net / max |net| in [-1, 1]; red for growth, green for shrink, pale
// for small changes, grey for none. sqrt keeps small changes visible.
std::string DiffFrameColor(double score) {
  if (score == 0) return "#dddddd";
  const double t = std::sqrt(std::min(std::fabs(score), 1.0));
  auto mix = [t](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  char buf[8];
  if (score > 0) {
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(0xf6, 0xe8), mix(0xdc, 0x3a),
                  mix(0xd4, 0x1c));
  } else {
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(0xdc, 0x3c), mix(0xf0, 0xb4),
                  mix(0xdc, 0x4a));
  }
  return buf;
}

}  // namespace

std::string EscapeXml(std::string_view text) {
  const std::string clean = SanitizeUtf8(text);
  std::string out;
  out.reserve(clean.size() + 8);
  for (const char c : clean) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 forbids most control characters even as references.
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? ' ' : c;
    }
  }
  return out;
}

std::string EscapeXmlLines(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 16);
  for (;;) {
    const size_t nl = text.find('\n');
    out += EscapeXml(text.substr(0, nl));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
}

std::string FlameColorForName(std::string_view name) {
  const uint64_t h = Fnv1a(name);
  // A warm palette: red high, green anywhere up to orange/yellow, little blue.
  const int r = 205 + static_cast<int>((h >> 8) % 51);
  const int g = static_cast<int>((h >> 24) % 191);
  const int b = static_cast<int>((h >> 40) % 56);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

namespace {

// One picture: the frame tree, its layout, and the texts of the nodes drawn. Labels are
// computed once per distinct node; so are the escaped names, hover names and colours of the
// nodes that are drawn (a node is drawn once per call path it is on).
class FlameSvg {
 public:
  FlameSvg(const StackSamples& samples, const FlameGraphOptions& options);
  std::string Write();

 private:
  struct NodeText {
    bool done = false;
    std::string name, full, fill;  // escaped data-n, escaped hover name, plain-palette colour
  };
  const std::string& NameOf(const TreeFrame& f) const;
  const NodeText& TextOf(uint32_t node);
  int FrameY(uint32_t depth) const {
    return options_.icicle ? frames_top_ + static_cast<int>(depth) * kFrameHeight
                           : frames_top_ + static_cast<int>(max_depth_ - depth) * kFrameHeight;
  }
  std::string Value(double v) const {
    std::string s = FormatValue(v, samples_.unit, options_.show_bytes);
    return (options_.diff && v > 0) ? "+" + s : s;
  }
  void AppendHeader(std::string* out) const;
  void AppendHover(const TreeFrame& f, std::string* out) const;
  void AppendFrame(const TreeFrame& f, std::string* out);

  const StackSamples& samples_;
  const FlameGraphOptions& options_;
  std::vector<std::string> labels_;
  std::vector<TreeFrame> tree_;
  std::vector<NodeText> texts_;
  double total_ = 0, span_ = 0, scale_ = 0, max_net_ = 0;
  uint32_t max_depth_ = 0;
  size_t drawn_ = 0;
  std::vector<std::string> legend_;
  int frames_top_ = 0, height_ = 0;
  std::string what_;
};

FlameSvg::FlameSvg(const StackSamples& samples, const FlameGraphOptions& options)
    : samples_(samples), options_(options), labels_(samples.nodes.size()) {
  for (size_t i = 0; i < samples.nodes.size(); ++i) labels_[i] = samples.nodes[i].Label();
  tree_ = BuildFlameTree(samples, labels_);
  texts_.resize(samples.nodes.size());
  total_ = tree_[0].width;
  span_ = std::max(options.width - 2 * kPad, 100);
  scale_ = total_ > 0 ? span_ / total_ : 0;
  for (const TreeFrame& f : tree_) {
    max_net_ = std::max(max_net_, std::fabs(f.net));
    max_depth_ = std::max(max_depth_, f.depth);
    if (f.width * scale_ >= options.min_frame_px) ++drawn_;
  }
  // Frames left out are said so under the title; their values stay in their callers' widths
  // (and in the total), so every drawn frame's width and hover value is exact.
  legend_ = options.legend;
  const size_t frames = total_ > 0 ? tree_.size() : 0;
  if (drawn_ < frames) {
    legend_.push_back(std::to_string(frames - drawn_) + " of " + std::to_string(frames) +
                      " frames are narrower than " + Num(options.min_frame_px) +
                      " px and not drawn; their callers' widths include them");
  }
  const int legend_px = static_cast<int>(legend_.size()) * kLegendLine;
  frames_top_ = kTopPad + legend_px + 8;
  height_ = frames_top_ + static_cast<int>(max_depth_ + 1) * kFrameHeight + kBottomPad;
  what_ = EscapeXml(samples.sample_type.empty() ? "value" : samples.sample_type);
}

const std::string& FlameSvg::NameOf(const TreeFrame& f) const {
  static const std::string kRoot = "all";
  return f.node == TreeFrame::kRootNode ? kRoot : labels_[f.node];
}

const FlameSvg::NodeText& FlameSvg::TextOf(uint32_t node) {
  NodeText& t = texts_[node];
  if (!t.done) {
    t.done = true;
    t.name = EscapeXml(labels_[node]);
    t.full = EscapeXml(samples_.nodes[node].FullLabel());
    t.fill = FlameColorForName(labels_[node]);
  }
  return t;
}

// The document up to the frames: style, script, title, legend, buttons, status line.
void FlameSvg::AppendHeader(std::string* out_ptr) const {
  std::string& out = *out_ptr;
  const int width = options_.width;
  const std::string w = std::to_string(width), h = std::to_string(height_);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out += "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" +
         h + "\" viewBox=\"0 0 " + w + " " + h + "\">\n";
  out += "<style type=\"text/css\"><![CDATA[";
  out += kFlameGraphStyle;
  out += "]]></style>\n<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlameGraphScript;
  out += "]]></script>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#fdfaf3\"/>\n";
  out += "<text id=\"hk-title\" x=\"" + Px(width / 2.0) + "\" y=\"22\" text-anchor=\"middle\">" +
         EscapeXml(options_.title) + "</text>\n";
  for (size_t i = 0; i < legend_.size(); ++i) {
    out += "<text class=\"hk-legend\" x=\"" + Px(width / 2.0) + "\" y=\"" +
           std::to_string(kTopPad + static_cast<int>(i + 1) * kLegendLine - 2) +
           "\" text-anchor=\"middle\">" + EscapeXml(legend_[i]) + "</text>\n";
  }
  out += "<text id=\"hk-reset\" class=\"hk-button hk-hidden\" x=\"" + std::to_string(kPad) +
         "\" y=\"22\">Reset Zoom</text>\n";
  out += "<text id=\"hk-search\" class=\"hk-button\" x=\"" + std::to_string(width - kPad) +
         "\" y=\"22\" text-anchor=\"end\">Search</text>\n";
  out += "<text id=\"hk-details\" x=\"" + std::to_string(kPad) + "\" y=\"" +
         std::to_string(height_ - 8) + "\"> </text>\n";
  out += "<text id=\"hk-matched\" x=\"" + std::to_string(width - kPad) + "\" y=\"" +
         std::to_string(height_ - 8) + "\" text-anchor=\"end\"></text>\n";
  if (total_ == 0) {
    out += "<text x=\"" + Px(width / 2.0) + "\" y=\"" + std::to_string(frames_top_ + 12) +
           "\" text-anchor=\"middle\">No samples to show</text>\n";
  }
}

// The frame's value in its hover text.
void FlameSvg::AppendHover(const TreeFrame& f, std::string* out) const {
  if (options_.diff) {
    AppendEscaped(out, Value(f.net));
    *out += " net change, ";
    AppendEscaped(out, FormatValue(f.width, samples_.unit, options_.show_bytes));
    *out += " changed (";
    AppendEscaped(out, FormatPercent(f.width, total_));
    *out += " of all changes)";
  } else {
    AppendEscaped(out, Value(f.net));
    *out += ' ';
    *out += what_;
    *out += " (";
    AppendEscaped(out, FormatPercent(f.width, total_));
    *out += ')';
  }
}

void FlameSvg::AppendFrame(const TreeFrame& f, std::string* out_ptr) {
  std::string& out = *out_ptr;
  const double px_w = f.width * scale_;
  const bool root = f.node == TreeFrame::kRootNode;
  const std::string& name = NameOf(f);
  const double x = kPad + f.offset * scale_;
  const int y = FrameY(f.depth);
  const NodeText* t = root ? nullptr : &TextOf(f.node);

  out += "<g class=\"f\" data-n=\"";
  out += root ? name : t->name;
  out += "\" data-d=\"";
  AppendInt(&out, f.depth);
  out += "\" data-o=\"";
  AppendNum(&out, f.offset);
  out += "\" data-v=\"";
  AppendNum(&out, f.width);
  // The hover text names the function in full (the box shows the simplified name).
  out += "\"><title>";
  out += root ? name : t->full;
  out += f.inlined ? " (inlined): " : ": ";
  AppendHover(f, &out);
  out += "</title><rect x=\"";
  AppendPx(&out, x);
  out += "\" y=\"";
  AppendInt(&out, y);
  out += "\" width=\"";
  AppendPx(&out, px_w);
  out += "\" height=\"";
  AppendInt(&out, kFrameHeight - 1);
  out += "\" rx=\"2\" fill=\"";
  if (options_.diff) {
    out += DiffFrameColor(max_net_ > 0 ? f.net / max_net_ : 0);
  } else {
    out += root ? FlameColorForName(name) : t->fill;
  }
  out += "\"/><text x=\"";
  AppendPx(&out, x + 3);
  out += "\" y=\"";
  AppendInt(&out, y + 11);
  out += "\">";
  if (px_w >= 6 + 3 * kCharPx) AppendEscaped(&out, FitText(name, px_w));
  out += "</text></g>\n";
}

std::string FlameSvg::Write() {
  std::string out;
  out.reserve(sizeof kFlameGraphScript + 4096 + drawn_ * 300);
  AppendHeader(&out);
  out += "<g id=\"frames\" data-total=\"" + Num(total_) + "\" data-span=\"" + Num(span_) +
         "\" data-pad=\"" + std::to_string(kPad) + "\">\n";
  // Preorder is drawing order (parents before children, siblings left to right). A frame is
  // never wider than its parent, so testing each frame alone drops whole narrow subtrees.
  for (size_t i = total_ > 0 ? 0 : tree_.size(); i < tree_.size(); ++i) {
    if (tree_[i].width * scale_ < options_.min_frame_px) continue;
    AppendFrame(tree_[i], &out);
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace

std::string WriteFlameGraphSvg(const StackSamples& samples, const FlameGraphOptions& options) {
  return FlameSvg(samples, options).Write();
}

}  // namespace heapkit::pprof
