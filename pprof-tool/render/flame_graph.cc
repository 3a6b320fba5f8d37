#include "flame_graph.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "pprof-tool/model/value_format.h"
#include "pprof-tool/render/dot_escape.h"
#include "pprof-tool/render/flame_graph_script.h"

namespace heapkit::pprof {

namespace {

constexpr int kFrameHeight = 16;  // px per depth (15 box + 1 gap)
constexpr int kPad = 10;          // left/right margin
constexpr int kTopPad = 34;       // title
constexpr int kLegendLine = 14;
constexpr int kBottomPad = 26;   // status line
constexpr double kCharPx = 7.2;  // must match HK_CHAR_PX in the script

// Call-path tree. Node 0 is the root ("all").
struct TreeNode {
  int32_t label = -1;  // index into the label table; -1 for the root
  uint32_t depth = 0;
  double width = 0;  // sum |value|
  double net = 0;    // sum value
  bool inlined = false;
  std::vector<uint32_t> children;
};

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string Px(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
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
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        // XML 1.0 forbids most control characters even as references.
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) ? ' ' : c;
    }
  }
  return out;
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

std::string WriteFlameGraphSvg(const StackSamples& samples, const FlameGraphOptions& options) {
  // Labels, computed once per distinct node.
  std::vector<std::string> labels(samples.nodes.size());
  for (size_t i = 0; i < samples.nodes.size(); ++i) labels[i] = samples.nodes[i].Label();

  // Build the tree. Children are found through one hash map keyed by (parent, node).
  std::vector<TreeNode> tree(1);
  std::unordered_map<uint64_t, uint32_t> child_of;
  child_of.reserve(samples.samples.size() * 4);
  for (const StackSample& s : samples.samples) {
    if (s.value == 0) continue;
    const double a = std::fabs(s.value);
    tree[0].width += a;
    tree[0].net += s.value;
    uint32_t cur = 0;
    for (size_t k = s.frames.size(); k-- > 0;) {  // root first
      const StackFrame& fr = s.frames[k];
      const uint64_t key = (static_cast<uint64_t>(cur) << 32) | fr.node;
      auto [it, inserted] = child_of.try_emplace(key, static_cast<uint32_t>(tree.size()));
      if (inserted) {
        TreeNode n;
        n.label = static_cast<int32_t>(fr.node);
        n.depth = tree[cur].depth + 1;
        tree.push_back(std::move(n));
        tree[cur].children.push_back(it->second);
      }
      cur = it->second;
      tree[cur].width += a;
      tree[cur].net += s.value;
      tree[cur].inlined = tree[cur].inlined || fr.inlined;
    }
  }
  auto name_of = [&](const TreeNode& n) -> const std::string& {
    static const std::string kRoot = "all";
    return n.label < 0 ? kRoot : labels[static_cast<size_t>(n.label)];
  };
  double max_net = 0;
  uint32_t max_depth = 0;
  for (TreeNode& n : tree) {
    std::sort(n.children.begin(), n.children.end(),
              [&](uint32_t a, uint32_t b) { return name_of(tree[a]) < name_of(tree[b]); });
    max_net = std::max(max_net, std::fabs(n.net));
    max_depth = std::max(max_depth, n.depth);
  }

  const double total = tree[0].width;
  const double span = std::max(options.width - 2 * kPad, 100);
  const double scale = total > 0 ? span / total : 0;
  const int legend_px = static_cast<int>(options.legend.size()) * kLegendLine;
  const int frames_top = kTopPad + legend_px + 8;
  const int height = frames_top + static_cast<int>(max_depth + 1) * kFrameHeight + kBottomPad;
  auto frame_y = [&](uint32_t depth) {
    return options.icicle ? frames_top + static_cast<int>(depth) * kFrameHeight
                          : frames_top + static_cast<int>(max_depth - depth) * kFrameHeight;
  };
  auto value = [&](double v) {
    std::string s = FormatValue(v, samples.unit, options.show_bytes);
    return (options.diff && v > 0) ? "+" + s : s;
  };
  const std::string what = samples.sample_type.empty() ? "value" : samples.sample_type;

  std::string out;
  out.reserve(4096 + tree.size() * 200);
  const std::string w = std::to_string(options.width), h = std::to_string(height);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out += "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" +
         h + "\" viewBox=\"0 0 " + w + " " + h + "\">\n";
  out += "<style type=\"text/css\"><![CDATA[";
  out += kFlameGraphStyle;
  out += "]]></style>\n<script type=\"text/ecmascript\"><![CDATA[";
  out += kFlameGraphScript;
  out += "]]></script>\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#fdfaf3\"/>\n";
  out += "<text id=\"hk-title\" x=\"" + Px(options.width / 2.0) +
         "\" y=\"22\" text-anchor=\"middle\">" + EscapeXml(options.title) + "</text>\n";
  for (size_t i = 0; i < options.legend.size(); ++i) {
    out += "<text class=\"hk-legend\" x=\"" + Px(options.width / 2.0) + "\" y=\"" +
           std::to_string(kTopPad + static_cast<int>(i + 1) * kLegendLine - 2) +
           "\" text-anchor=\"middle\">" + EscapeXml(options.legend[i]) + "</text>\n";
  }
  out += "<text id=\"hk-reset\" class=\"hk-button hk-hidden\" x=\"" + std::to_string(kPad) +
         "\" y=\"22\">Reset Zoom</text>\n";
  out += "<text id=\"hk-search\" class=\"hk-button\" x=\"" + std::to_string(options.width - kPad) +
         "\" y=\"22\" text-anchor=\"end\">Search</text>\n";
  out += "<text id=\"hk-details\" x=\"" + std::to_string(kPad) + "\" y=\"" +
         std::to_string(height - 8) + "\"> </text>\n";
  out += "<text id=\"hk-matched\" x=\"" + std::to_string(options.width - kPad) + "\" y=\"" +
         std::to_string(height - 8) + "\" text-anchor=\"end\"></text>\n";
  if (total == 0) {
    out += "<text x=\"" + Px(options.width / 2.0) + "\" y=\"" + std::to_string(frames_top + 12) +
           "\" text-anchor=\"middle\">No samples to show</text>\n";
  }
  out += "<g id=\"frames\" data-total=\"" + Num(total) + "\" data-span=\"" + Num(span) +
         "\" data-pad=\"" + std::to_string(kPad) + "\">\n";

  // Depth-first walk with explicit stack: (node, offset in value units).
  std::vector<std::pair<uint32_t, double>> stack;
  if (total > 0) stack.emplace_back(0, 0.0);
  while (!stack.empty()) {
    const auto [id, offset] = stack.back();
    stack.pop_back();
    const TreeNode& n = tree[id];
    const double px_w = n.width * scale;
    if (px_w < options.min_frame_px) continue;  // and so are all its children
    const std::string& name = name_of(n);
    const double x = kPad + offset * scale;

    // The hover text names the function in full (the box shows the simplified name).
    std::string info = (n.label < 0 ? name : samples.nodes[static_cast<size_t>(n.label)].FullLabel()) +
                       (n.inlined ? " (inlined)" : "") + ": ";
    if (options.diff) {
      info += value(n.net) + " net change, " +
              FormatValue(n.width, samples.unit, options.show_bytes) + " changed (" +
              FormatPercent(n.width, total) + " of all changes)";
    } else {
      info += value(n.net) + " " + what + " (" + FormatPercent(n.width, total) + ")";
    }
    const std::string fill =
        options.diff ? DiffFrameColor(max_net > 0 ? n.net / max_net : 0) : FlameColorForName(name);
    out += "<g class=\"f\" data-n=\"" + EscapeXml(name) + "\" data-d=\"" + std::to_string(n.depth) +
           "\" data-o=\"" + Num(offset) + "\" data-v=\"" + Num(n.width) + "\"><title>" +
           EscapeXml(info) + "</title><rect x=\"" + Px(x) + "\" y=\"" +
           std::to_string(frame_y(n.depth)) + "\" width=\"" + Px(px_w) + "\" height=\"" +
           std::to_string(kFrameHeight - 1) + "\" rx=\"2\" fill=\"" + fill + "\"/><text x=\"" +
           Px(x + 3) + "\" y=\"" + std::to_string(frame_y(n.depth) + 11) + "\">" +
           EscapeXml(FitText(name, px_w)) + "</text></g>\n";

    // Push children in reverse so they are emitted left to right.
    double child_offset = offset;
    std::vector<std::pair<uint32_t, double>> kids;
    kids.reserve(n.children.size());
    for (const uint32_t c : n.children) {
      kids.emplace_back(c, child_offset);
      child_offset += tree[c].width;
    }
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back(*it);
  }
  out += "</g>\n</svg>\n";
  return out;
}

}  // namespace heapkit::pprof
