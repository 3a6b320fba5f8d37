#include "pprof-tool/web/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>

#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/render/flame_graph.h"

namespace heapkit::pprof {
namespace {

constexpr double kWidth = 1000, kHeight = 440;
constexpr double kLeft = 80, kRight = 260, kTop = 50, kBottom = 50;
constexpr const char* kOtherColor = "#c8c8c8";
// Ten well-separated colours (Tableau 10), one per band in order; "other" is grey.
constexpr const char* kBandColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// A round step (1, 2 or 5 times a power of ten, or of 1024 for bytes) giving about `ticks`
// intervals up to `max`.
double NiceStep(double max, int ticks, bool binary) {
  if (max <= 0) return 1;
  double unit = 1;
  if (binary) {
    while (max / unit >= 1024) unit *= 1024;
  }
  const double raw = max / unit / ticks;
  const double power = std::pow(10, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * power;
    if (step >= raw) break;
  }
  return step * unit;
}

// A y tick's label: as FormatValue, without the decimals a round value does not need ("30MB").
std::string TickLabel(double v, ValueUnit unit, bool show_bytes) {
  if (unit != ValueUnit::kBytes || show_bytes || v == 0) return FormatValue(v, unit, show_bytes);
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  snprintf(buf, sizeof buf, "%.10g%s", std::round(v * 100) / 100, kUnits[u]);
  return buf;
}

std::string Seconds(double s) {
  char buf[32];
  if (s >= 3600) {
    snprintf(buf, sizeof buf, "%.0fh%02.0fm", std::floor(s / 3600), std::fmod(std::floor(s / 60), 60));
  } else if (s >= 60 && std::fmod(s, 60) == 0) {
    snprintf(buf, sizeof buf, "%.0fm", s / 60);
  } else if (s >= 60) {
    snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  } else {
    snprintf(buf, sizeof buf, "%.10gs", std::round(s * 1000) / 1000);
  }
  return buf;
}

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
  chart->dump_numbers = ClassifyDumps(dumps).numbers;
  bool timed = !dumps.empty();
  for (const Profile& p : dumps) timed = timed && p.dump_time > 0;
  for (size_t d = 1; d < dumps.size() && timed; ++d) timed = dumps[d].dump_time >= dumps[d - 1].dump_time;
  if (timed) {
    for (const Profile& p : dumps) chart->dump_times.push_back(p.dump_time);
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
  const bool bytes = chart.unit == ValueUnit::kBytes && !style.show_bytes;
  const double y_step = NiceStep(max_total, 4, bytes);
  max_total = std::ceil(max_total / y_step - 1e-9) * y_step;  // the axis ends on a tick
  const bool timed = chart.dump_times.size() == n && n > 1 &&
                     chart.dump_times[n - 1] > chart.dump_times[0];
  const double span = timed ? chart.dump_times[n - 1] - chart.dump_times[0] : 0;
  auto x_at = [&](double t) { return kLeft + plot_w * t / span; };
  auto x = [&](size_t d) {
    if (timed) return x_at(chart.dump_times[d] - chart.dump_times[0]);
    return n <= 1 ? kLeft + plot_w / 2 : kLeft + plot_w * double(d) / double(n - 1);
  };
  auto y = [&](double v) { return kTop + plot_h * (1 - std::max(0.0, v) / max_total); };
  auto fmt = [&](double v) { return FormatValue(v, chart.unit, style.show_bytes); };
  auto number = [&](size_t d) {
    return std::to_string(d < chart.dump_numbers.size() ? chart.dump_numbers[d] : int(d) + 1);
  };

  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" + Num(kWidth) +
         "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<text x=\"" + Num(kLeft) + "\" y=\"24\" font-size=\"16\">" + EscapeXml(style.title) +
         " (" + EscapeXml(chart.sample_type) + ", " + std::to_string(n) + " dumps)</text>\n";

  // Axes and y ticks.
  for (double v = 0; v <= max_total * (1 + 1e-9); v += y_step) {
    out += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w) + "\" y1=\"" + Num(y(v)) +
           "\" y2=\"" + Num(y(v)) + "\" stroke=\"#e0e0e0\"/>";
    out += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(y(v) + 4) + "\" text-anchor=\"end\">" +
           EscapeXml(TickLabel(v, chart.unit, style.show_bytes)) + "</text>\n";
  }
  if (timed) {  // time since the first dump, round steps; dumps marked by their number above
    const double nice[] = {60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400};
    double t_step = NiceStep(span, 6, false);  // under a minute: 0.05 s, 1 s, 10 s ...
    for (double c : nice) {
      if (span < 60 * 6) break;
      t_step = c;
      if (span / c <= 8) break;
    }
    for (double t = 0; t <= span + 1e-9; t += t_step) {
      out += "<line x1=\"" + Num(x_at(t)) + "\" x2=\"" + Num(x_at(t)) + "\" y1=\"" +
             Num(kTop + plot_h) + "\" y2=\"" + Num(kTop + plot_h + 4) + "\" stroke=\"#808080\"/>";
      out += "<text x=\"" + Num(x_at(t)) + "\" y=\"" + Num(kTop + plot_h + 18) +
             "\" text-anchor=\"middle\">" + Seconds(t) + "</text>";
    }
    size_t last_label = SIZE_MAX;
    for (size_t d = n; d-- > 0;) {  // dump numbers, at least 24 px apart, the latest always
      if (last_label != SIZE_MAX && x(last_label) - x(d) < 24) continue;
      last_label = d;
      out += "<text class=\"dump-number\" x=\"" + Num(x(d)) + "\" y=\"" + Num(kTop - 6) +
             "\" text-anchor=\"middle\" fill=\"#606060\">" + number(d) + "</text>";
    }
    out += "\n<text x=\"" + Num(kLeft + plot_w / 2) + "\" y=\"" + Num(kHeight - 10) +
           "\" text-anchor=\"middle\">time since the first dump (numbers above: dump files)</text>\n";
  } else {
    size_t step = std::max<size_t>(1, n / 20);
    for (size_t d = 0; d < n; d += step) {
      out += "<text x=\"" + Num(x(d)) + "\" y=\"" + Num(kTop + plot_h + 16) +
             "\" text-anchor=\"middle\">" + number(d) + "</text>";
    }
    out += "\n<text x=\"" + Num(kLeft + plot_w / 2) + "\" y=\"" + Num(kHeight - 10) +
           "\" text-anchor=\"middle\">dump (the number in its file name)</text>\n";
  }

  // Bands, stacked from the bottom in chart order.
  std::vector<double> base(n, 0.0);
  auto color_of = [&](size_t band) {
    return chart.bands[band].name == "other" ? std::string(kOtherColor)
                                             : std::string(kBandColors[band % std::size(kBandColors)]);
  };
  for (size_t bi = 0; bi < chart.bands.size(); ++bi) {
    const TimelineBand& b = chart.bands[bi];
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
    const std::string color = color_of(bi);
    std::string title = b.name;
    double peak = *std::max_element(b.values.begin(), b.values.end());
    title += " (peak " + fmt(peak) + ")";
    out += "<polygon class=\"band\" data-name=\"" + EscapeXml(b.name) + "\" fill=\"" + color +
           "\" stroke=\"#ffffff\" stroke-width=\"0.5\" points=\"" + upper + lower + "\"><title>" +
           EscapeXml(title) + "</title></polygon>\n";
    base = std::move(top);
  }

  // One hover/click column per dump.
  for (size_t d = 0; d < n; ++d) {
    // The column reaches halfway to each neighbour.
    const double left = d == 0 ? x(d) - (n <= 1 ? 20 : (x(1) - x(0)) / 2) : (x(d - 1) + x(d)) / 2;
    const double right = d + 1 == n ? x(d) + (n <= 1 ? 20 : (x(d) - x(d - 1)) / 2) : (x(d) + x(d + 1)) / 2;
    const std::string& reason = d < chart.dump_reasons.size() ? chart.dump_reasons[d] : "";
    std::string when;
    if (timed) {
      char buf[64];
      snprintf(buf, sizeof buf, "\nwritten %.1f s after the first dump",
               chart.dump_times[d] - chart.dump_times[0]);
      when = buf;
    }
    std::string text = "dump " + number(d) + ": " + chart.dump_labels[d] + when + "\n" +
                       (reason.empty() ? "(no dump reason recorded in the file)"
                                       : "reason: " + reason) +
                       "\ntotal " + fmt(chart.totals[d]);
    for (const TimelineBand& b : chart.bands) text += "\n" + fmt(b.values[d]) + "  " + b.name;
    std::string rect = "<rect class=\"dump\" data-dump=\"" + number(d) + "\" x=\"" +
                       Num(left) + "\" y=\"" + Num(kTop) + "\" width=\"" +
                       Num(std::max(1.0, right - left)) + "\" height=\"" + Num(plot_h) +
                       "\" fill=\"#000000\" fill-opacity=\"0\"><title>" + EscapeXmlLines(text) +
                       "</title></rect>";
    if (!style.link_prefix.empty()) {
      rect = "<a href=\"" + EscapeXml(style.link_prefix + number(d)) + "\">" + rect + "</a>";
    }
    out += rect + "\n";
  }

  // Legend, largest band first.
  double ly = kTop;
  for (size_t bi = 0; bi < chart.bands.size(); ++bi) {
    const TimelineBand& b = chart.bands[bi];
    const std::string color = color_of(bi);
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
