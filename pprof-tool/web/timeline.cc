#include "pprof-tool/web/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "pprof-tool/render/flame_graph.h"

namespace heapkit::pprof {
namespace {

constexpr double kWidth = 1000, kHeight = 440;
constexpr double kLeft = 80, kRight = 260, kTop = 50, kBottom = 50;
constexpr const char* kOtherColor = "#c8c8c8";

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string Num(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string DumpLabel(const Profile& p) {
  char buf[160];
  snprintf(buf, sizeof buf, ": heap profile: %.0f objects, %.0f bytes in use (%s)",
           p.header_totals.inuse_objects, p.header_totals.inuse_bytes, ProfileKindName(p.kind));
  return Basename(p.file) + buf;
}

}  // namespace

bool BuildTimeline(const std::vector<Profile>& dumps, Symbolizer& symbolizer,
                   const PipelineOptions& options, int bands, TimelineChart* chart,
                   std::string* error) {
  std::map<std::string, std::vector<double>> by_function;
  std::vector<double> unattributed(dumps.size(), 0.0);
  for (size_t d = 0; d < dumps.size(); ++d) {
    StackSamples samples;
    if (!BuildStackSamples(dumps[d], symbolizer, options, &samples, error)) return false;
    chart->unit = samples.unit;
    chart->sample_type = samples.sample_type;
    chart->dump_labels.push_back(DumpLabel(dumps[d]));
    chart->dump_reasons.push_back(dumps[d].dump_reason);
    for (const StackSample& s : samples.samples) {
      if (s.frames.empty()) {
        unattributed[d] += s.value;
        continue;
      }
      std::vector<double>& v = by_function[samples.nodes[s.frames[0].node].name];
      v.resize(dumps.size(), 0.0);
      v[d] += s.value;
    }
  }
  std::vector<TimelineBand> all;
  for (auto& [name, values] : by_function) all.push_back({name, std::move(values)});
  auto peak = [](const TimelineBand& b) { return *std::max_element(b.values.begin(), b.values.end()); };
  std::stable_sort(all.begin(), all.end(), [&](const TimelineBand& a, const TimelineBand& b) {
    return peak(a) > peak(b);
  });
  TimelineBand other{"other", unattributed};
  for (size_t i = 0; i < all.size(); ++i) {
    if (i < size_t(bands)) {
      chart->bands.push_back(std::move(all[i]));
    } else {
      for (size_t d = 0; d < dumps.size(); ++d) other.values[d] += all[i].values[d];
    }
  }
  if (std::any_of(other.values.begin(), other.values.end(), [](double v) { return v != 0; })) {
    chart->bands.push_back(std::move(other));
  }
  chart->totals.assign(dumps.size(), 0.0);
  for (const TimelineBand& b : chart->bands) {
    for (size_t d = 0; d < dumps.size(); ++d) chart->totals[d] += b.values[d];
  }
  return true;
}

std::string TimelineSvg(const TimelineChart& chart, const TimelineStyle& style) {
  const size_t n = chart.dump_labels.size();
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double max_total = 0;
  for (double t : chart.totals) max_total = std::max(max_total, t);
  if (max_total <= 0) max_total = 1;
  auto x = [&](size_t d) { return n <= 1 ? kLeft + plot_w / 2 : kLeft + plot_w * double(d) / double(n - 1); };
  auto y = [&](double v) { return kTop + plot_h * (1 - std::max(0.0, v) / max_total); };
  auto fmt = [&](double v) { return FormatValue(v, chart.unit, style.show_bytes); };

  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" + Num(kWidth) +
         "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"24\" font-size=\"16\">" + EscapeXml(style.title) +
         " (" + EscapeXml(chart.sample_type) + ", " + std::to_string(n) + " dumps)</text>\n";

  // Axes and y ticks.
  for (int t = 0; t <= 4; ++t) {
    double v = max_total * t / 4;
    out += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" + Num(y(v)) +
           "\" y2=\"" + Num(y(v)) + "\" stroke=\"#e0e0e0\"/>";
    out += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(y(v) + 4) + "\" text-anchor=\"end\">" +
           EscapeXml(fmt(v)) + "</text>\n";
  }
  size_t step = std::max<size_t>(1, n / 20);
  for (size_t d = 0; d < n; d += step) {
    out += "<text x=\"" + Num(x(d)) + "\" y=\"" + Num(kTop + plot_h + 16) +
           "\" text-anchor=\"middle\">" + std::to_string(d) + "</text>";
  }
  out += "\n<text x=\"" + Num(kLeft + plot_w / 2) + "\" y=\"" + Num(kHeight - 10) +
         "\" text-anchor=\"middle\">dump number</text>\n";

  // Bands, stacked from the bottom in chart order.
  std::vector<double> base(n, 0.0);
  for (const TimelineBand& b : chart.bands) {
    std::string upper, lower;
    std::vector<double> top(n);
    for (size_t d = 0; d < n; ++d) top[d] = base[d] + std::max(0.0, b.values[d]);
    if (n == 1) {  // one dump: a bar
      upper = Num(x(0) - 20) + "," + Num(y(top[0])) + " " + Num(x(0) + 20) + "," + Num(y(top[0]));
      lower = Num(x(0) + 20) + "," + Num(y(base[0])) + " " + Num(x(0) - 20) + "," + Num(y(base[0]));
    } else {
      for (size_t d = 0; d < n; ++d) upper += Num(x(d)) + "," + Num(y(top[d])) + " ";
      for (size_t d = n; d-- > 0;) lower += Num(x(d)) + "," + Num(y(base[d])) + " ";
    }
    const std::string color = b.name == "other" ? kOtherColor : FlameColorForName(b.name);
    std::string title = b.name;
    double peak = *std::max_element(b.values.begin(), b.values.end());
    title += " (peak " + fmt(peak) + ")";
    out += "<polygon class=\"band\" data-name=\"" + EscapeXml(b.name) + "\" fill=\"" + color +
           "\" stroke=\"#ffffff\" stroke-width=\"0.5\" points=\"" + upper + lower + "\"><title>" +
           EscapeXml(title) + "</title></polygon>\n";
    base = std::move(top);
  }

  // One hover/click column per dump.
  const double col_w = n <= 1 ? 40 : plot_w / double(n - 1);
  for (size_t d = 0; d < n; ++d) {
    const std::string& reason = d < chart.dump_reasons.size() ? chart.dump_reasons[d] : "";
    std::string text = "dump " + std::to_string(d) + ": " + chart.dump_labels[d] + "\n" +
                       (reason.empty() ? "(no dump reason recorded in the file)"
                                       : "reason: " + reason) +
                       "\ntotal " + fmt(chart.totals[d]);
    for (const TimelineBand& b : chart.bands) text += "\n" + fmt(b.values[d]) + "  " + b.name;
    std::string rect = "<rect class=\"dump\" data-dump=\"" + std::to_string(d) + "\" x=\"" +
                       Num(x(d) - col_w / 2) + "\" y=\"" + Num(kTop) + "\" width=\"" +
                       Num(col_w) + "\" height=\"" + Num(plot_h) +
                       "\" fill=\"#000000\" fill-opacity=\"0\"><title>" + EscapeXmlLines(text) +
                       "</title></rect>";
    if (!style.link_prefix.empty()) {
      rect = "<a href=\"" + EscapeXml(style.link_prefix + std::to_string(d)) + "\">" + rect + "</a>";
    }
    out += rect + "\n";
  }

  // Legend, largest band first.
  double ly = kTop;
  for (const TimelineBand& b : chart.bands) {
    const std::string color = b.name == "other" ? kOtherColor : FlameColorForName(b.name);
    std::string shown = b.name.size() > 36 ? b.name.substr(0, 34) + ".." : b.name;
    out += "<g class=\"legend\"><title>" + EscapeXml(b.name) + "</title><rect x=\"" +
           Num(kWidth - kRight + 16) + "\" y=\"" + Num(ly) + "\" width=\"12\" height=\"12\" fill=\"" +
           color + "\"/><text x=\"" + Num(kWidth - kRight + 34) + "\" y=\"" + Num(ly + 10) + "\">" +
           EscapeXml(shown) + "</text></g>\n";
    ly += 18;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace heapkit::pprof
