// The timeline chart drawn (timeline.h: TimelineSvg): axes, bands, curves, marks, hover
// columns and legend.
#include "pprof-tool/web/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>

#include "pprof-tool/model/estimate.h"
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
    snprintf(buf, sizeof buf, "%.0fh%02.0fm", std::floor(s / 3600),
             std::fmod(std::floor(s / 60), 60));
  } else if (s >= 60 && std::fmod(s, 60) == 0) {
    snprintf(buf, sizeof buf, "%.0fm", s / 60);
  } else if (s >= 60) {
    snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  } else {
    snprintf(buf, sizeof buf, "%.10gs", std::round(s * 1000) / 1000);
  }
  return buf;
}

std::string Num(double v) {
  char buf[32];
  snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// One timeline picture: the chart's layout (scales, time or dump axis) and its parts.
class TimelineDrawing {
 public:
  TimelineDrawing(const TimelineChart& chart, const TimelineStyle& style);
  std::string Draw();

 private:
  double XAt(double t) const { return kLeft + plot_w_ * t / span_; }
  double X(size_t d) const {
    if (timed_) return XAt(chart_.dump_times[d] - origin_);
    return n_ <= 1 ? kLeft + plot_w_ / 2 : kLeft + plot_w_ * double(d) / double(n_ - 1);
  }
  double Y(double v) const { return kTop + plot_h_ * (1 - std::max(0.0, v) / max_total_); }
  std::string Format(double v) const { return FormatValue(v, chart_.unit, style_.show_bytes); }
  std::string Number(size_t d) const {
    return std::to_string(d < chart_.dump_numbers.size() ? chart_.dump_numbers[d] : int(d) + 1);
  }
  std::string Key(size_t d) const {
    return d < chart_.column_keys.size() ? chart_.column_keys[d] : Number(d);
  }
  // The value a column is judged by when close columns are merged: the first curve's, else
  // the bands' total.
  double Emphasis(size_t d) const {
    return chart_.curves.empty() ? chart_.totals[d] : chart_.curves[0].values[d];
  }
  std::string ColorOf(size_t band) const {
    return chart_.bands[band].name == "other"
               ? std::string(kOtherColor)
               : std::string(kBandColors[band % std::size(kBandColors)]);
  }
  void AppendTimeAxis(std::string* out) const;
  void AppendDumpAxis(std::string* out) const;
  void AppendBands(std::string* out) const;
  void AppendCurves(std::string* out) const;
  void AppendInterval(std::string* out) const;
  void AppendMarks(std::string* out) const;
  void AppendColumns(std::string* out) const;
  void AppendColumn(size_t d, double left, double right, std::string* out) const;
  void AppendLegend(std::string* out) const;

  const TimelineChart& chart_;
  const TimelineStyle& style_;
  const size_t n_;
  const double plot_w_ = kWidth - kLeft - kRight, plot_h_ = kHeight - kTop - kBottom;
  double max_total_ = 0, y_step_ = 0, span_ = 0, origin_ = 0;
  bool timed_ = false;
};

TimelineDrawing::TimelineDrawing(const TimelineChart& chart, const TimelineStyle& style)
    : chart_(chart), style_(style), n_(chart.dump_labels.size()) {
  for (double t : chart.totals) max_total_ = std::max(max_total_, t);
  for (const TimelineCurve& c : chart.curves) {
    for (double v : c.values) max_total_ = std::max(max_total_, v);
  }
  if (max_total_ <= 0) max_total_ = 1;
  const bool bytes = chart.unit == ValueUnit::kBytes && !style.show_bytes;
  y_step_ = NiceStep(max_total_, 4, bytes);
  max_total_ = std::ceil(max_total_ / y_step_ - 1e-9) * y_step_;  // the axis ends on a tick
  if (chart.since_start) {  // seconds after profiling start, from 0
    timed_ = chart.dump_times.size() == n_ && n_ > 0 && chart.dump_times[n_ - 1] > 0;
  } else {
    timed_ =
        chart.dump_times.size() == n_ && n_ > 1 && chart.dump_times[n_ - 1] > chart.dump_times[0];
    origin_ = timed_ ? chart.dump_times[0] : 0;
  }
  span_ = timed_ ? chart.dump_times[n_ - 1] - origin_ : 0;
}

// Time since the first dump, round steps; dumps marked by their number above.
void TimelineDrawing::AppendTimeAxis(std::string* out_ptr) const {
  std::string& out = *out_ptr;
  const double nice[] = {60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400};
  double t_step = NiceStep(span_, 6, false);  // under a minute: 0.05 s, 1 s, 10 s ...
  for (double c : nice) {
    if (span_ < 60 * 6) break;
    t_step = c;
    if (span_ / c <= 8) break;
  }
  for (double t = 0; t <= span_ + 1e-9; t += t_step) {
    out += "<line x1=\"" + Num(XAt(t)) + "\" x2=\"" + Num(XAt(t)) + "\" y1=\"" +
           Num(kTop + plot_h_) + "\" y2=\"" + Num(kTop + plot_h_ + 4) + "\" stroke=\"#808080\"/>";
    out += "<text x=\"" + Num(XAt(t)) + "\" y=\"" + Num(kTop + plot_h_ + 18) +
           "\" text-anchor=\"middle\">" + Seconds(t) + "</text>";
  }
  if (chart_.since_start) {
    out += "\n<text x=\"" + Num(kLeft + plot_w_ / 2) + "\" y=\"" + Num(kHeight - 10) +
           "\" text-anchor=\"middle\">time after profiling start</text>\n";
    return;
  }
  size_t last_label = SIZE_MAX;
  for (size_t d = n_; d-- > 0;) {  // dump numbers, at least 24 px apart, the latest always
    if (last_label != SIZE_MAX && X(last_label) - X(d) < 24) continue;
    last_label = d;
    out += "<text class=\"dump-number\" x=\"" + Num(X(d)) + "\" y=\"" + Num(kTop - 6) +
           "\" text-anchor=\"middle\" fill=\"#606060\">" + Number(d) + "</text>";
  }
  out += "\n<text x=\"" + Num(kLeft + plot_w_ / 2) + "\" y=\"" + Num(kHeight - 10) +
         "\" text-anchor=\"middle\">time since the first dump (numbers above: dump files)</text>\n";
}

void TimelineDrawing::AppendDumpAxis(std::string* out_ptr) const {
  std::string& out = *out_ptr;
  size_t step = std::max<size_t>(1, n_ / 20);
  for (size_t d = 0; d < n_; d += step) {
    out += "<text x=\"" + Num(X(d)) + "\" y=\"" + Num(kTop + plot_h_ + 16) +
           "\" text-anchor=\"middle\">" + Number(d) + "</text>";
  }
  out += "\n<text x=\"" + Num(kLeft + plot_w_ / 2) + "\" y=\"" + Num(kHeight - 10) +
         "\" text-anchor=\"middle\">dump (the number in its file name)</text>\n";
}

// Bands, stacked from the bottom in chart order.
void TimelineDrawing::AppendBands(std::string* out) const {
  std::vector<double> base(n_, 0.0);
  for (size_t bi = 0; bi < chart_.bands.size(); ++bi) {
    const TimelineBand& b = chart_.bands[bi];
    std::string upper, lower;
    std::vector<double> top(n_);
    for (size_t d = 0; d < n_; ++d) top[d] = base[d] + std::max(0.0, b.values[d]);
    if (n_ == 1) {  // one dump: a bar
      upper = Num(X(0) - 20) + "," + Num(Y(top[0])) + " " + Num(X(0) + 20) + "," + Num(Y(top[0]));
      lower = Num(X(0) + 20) + "," + Num(Y(base[0])) + " " + Num(X(0) - 20) + "," + Num(Y(base[0]));
    } else {
      for (size_t d = 0; d < n_; ++d) upper += Num(X(d)) + "," + Num(Y(top[d])) + " ";
      for (size_t d = n_; d-- > 0;) lower += Num(X(d)) + "," + Num(Y(base[d])) + " ";
    }
    const std::string color = ColorOf(bi);
    std::string title = b.name;
    double peak = *std::max_element(b.values.begin(), b.values.end());
    title += " (peak " + Format(peak) + ")";
    *out += "<polygon class=\"band\" data-name=\"" + EscapeXml(b.name) + "\" fill=\"" + color +
            "\" stroke=\"#ffffff\" stroke-width=\"0.5\" points=\"" + upper + lower + "\"><title>" +
            EscapeXml(title) + "</title></polygon>\n";
    base = std::move(top);
  }
}

// The hover/click columns, one per dump (or row); each reaches halfway to its neighbours.
// A runtime timeline's rows (up to 4096) closer than 2 px are merged: the one kept is the one
// with the highest value, so the peak can always be hovered.
void TimelineDrawing::AppendColumns(std::string* out) const {
  std::vector<size_t> kept;
  double group_x = 0;  // the first column of the group kept.back() stands for
  for (size_t d = 0; d < n_; ++d) {
    if (chart_.since_start && !kept.empty() && X(d) - group_x < 2) {
      if (Emphasis(d) > Emphasis(kept.back())) kept.back() = d;
      continue;
    }
    kept.push_back(d);
    group_x = X(d);
  }
  const size_t n = kept.size();
  for (size_t k = 0; k < n; ++k) {
    const double x = X(kept[k]);
    const double left =
        k == 0 ? x - (n <= 1 ? 20 : (X(kept[1]) - x) / 2) : (X(kept[k - 1]) + x) / 2;
    const double right =
        k + 1 == n ? x + (n <= 1 ? 20 : (x - X(kept[k - 1])) / 2) : (x + X(kept[k + 1])) / 2;
    AppendColumn(kept[k], left, right, out);
  }
}

void TimelineDrawing::AppendColumn(size_t d, double left, double right, std::string* out) const {
  std::string text;
  if (d < chart_.column_texts.size() && !chart_.column_texts[d].empty()) {
    text = chart_.column_texts[d];
  } else {
    const std::string& reason = d < chart_.dump_reasons.size() ? chart_.dump_reasons[d] : "";
    std::string when;
    if (timed_) {
      char buf[64];
      snprintf(buf, sizeof buf, "\nwritten %.1f s after the first dump",
               chart_.dump_times[d] - chart_.dump_times[0]);
      when = buf;
    }
    text = "dump " + Number(d) + ": " + chart_.dump_labels[d] + when + "\n" +
           (reason.empty() ? "(no dump reason recorded in the file)" : "reason: " + reason) +
           "\ntotal " + Format(chart_.totals[d]);
    if (d < chart_.total_variances.size() && chart_.total_variances[d] > 0) {
      text += " " + FormatInterval(chart_.total_variances[d], chart_.unit, style_.show_bytes) +
              " (95 %)";
    }
  }
  for (const TimelineBand& b : chart_.bands) text += "\n" + Format(b.values[d]) + "  " + b.name;
  std::string rect =
      "<rect class=\"dump\" data-dump=\"" + EscapeXml(Key(d)) + "\" x=\"" + Num(left) + "\" y=\"" +
      Num(kTop) + "\" width=\"" + Num(std::max(1.0, right - left)) + "\" height=\"" + Num(plot_h_) +
      "\" fill=\"#000000\" fill-opacity=\"0\"><title>" + EscapeXmlLines(text) + "</title></rect>";
  if (!style_.link_prefix.empty()) {
    rect = "<a href=\"" + EscapeXml(style_.link_prefix + Key(d)) + "\">" + rect + "</a>";
  }
  *out += rect + "\n";
}

// Legend, largest band first.
void TimelineDrawing::AppendLegend(std::string* out) const {
  double ly = kTop;
  for (const TimelineCurve& c : chart_.curves) {
    *out += "<g class=\"legend\"><line x1=\"" + Num(kWidth - kRight + 16) + "\" x2=\"" +
            Num(kWidth - kRight + 28) + "\" y1=\"" + Num(ly + 6) + "\" y2=\"" + Num(ly + 6) +
            "\" stroke=\"" + c.color + "\" stroke-width=\"2\"" +
            (c.dashed ? " stroke-dasharray=\"4 2\"" : "") + "/><text x=\"" +
            Num(kWidth - kRight + 34) + "\" y=\"" + Num(ly + 10) + "\">" + EscapeXml(c.name) +
            "</text></g>\n";
    ly += 18;
  }
  for (size_t bi = 0; bi < chart_.bands.size(); ++bi) {
    const TimelineBand& b = chart_.bands[bi];
    const std::string color = ColorOf(bi);
    std::string shown = b.name.size() > 36 ? b.name.substr(0, 34) + ".." : b.name;
    *out += "<g class=\"legend\"><title>" + EscapeXml(b.name) + "</title><rect x=\"" +
            Num(kWidth - kRight + 16) + "\" y=\"" + Num(ly) +
            "\" width=\"12\" height=\"12\" fill=\"" + color + "\"/><text x=\"" +
            Num(kWidth - kRight + 34) + "\" y=\"" + Num(ly + 10) + "\">" + EscapeXml(shown) +
            "</text></g>\n";
    ly += 18;
  }
}

// The 95 % interval of the sampled total (± 2 standard errors, model/estimate.h), a hatched
// band around the top of the stack; nothing for exact profiles.
void TimelineDrawing::AppendInterval(std::string* out) const {
  const std::vector<double>& var = chart_.total_variances;
  if (var.size() != n_ || std::none_of(var.begin(), var.end(), [](double v) { return v > 0; }))
    return;
  std::string upper, lower;
  double widest = 0;
  for (size_t d = 0; d < n_; ++d) {
    const double half = kIntervalSigmas * std::sqrt(std::max(0.0, var[d]));
    widest = std::max(widest, half);
    upper += Num(X(d)) + "," + Num(Y(std::min(max_total_, chart_.totals[d] + half))) + " ";
  }
  for (size_t d = n_; d-- > 0;) {
    const double half = kIntervalSigmas * std::sqrt(std::max(0.0, var[d]));
    lower += Num(X(d)) + "," + Num(Y(std::max(0.0, chart_.totals[d] - half))) + " ";
  }
  *out +=
      "<polygon class=\"interval\" fill=\"#000000\" fill-opacity=\"0.18\" "
      "stroke=\"#000000\" stroke-opacity=\"0.4\" stroke-width=\"0.5\" points=\"" +
      upper + lower + "\"><title>" +
      EscapeXml("95 % interval of the sampled total (± 2 standard errors; widest ± " +
                Format(widest) + ")") +
      "</title></polygon>\n";
}

// The curves, as lines over the bands.
void TimelineDrawing::AppendCurves(std::string* out) const {
  for (const TimelineCurve& c : chart_.curves) {
    std::string points;
    for (size_t d = 0; d < n_ && d < c.values.size(); ++d) {
      points += Num(X(d)) + "," + Num(Y(c.values[d])) + " ";
    }
    const double peak = c.values.empty() ? 0 : *std::max_element(c.values.begin(), c.values.end());
    *out += "<polyline class=\"curve\" data-name=\"" + EscapeXml(c.name) +
            "\" fill=\"none\" stroke=\"" + c.color + "\" stroke-width=\"1.5\"" +
            (c.dashed ? " stroke-dasharray=\"4 2\"" : "") + " points=\"" + points + "\"><title>" +
            EscapeXml(c.name + " (peak " + Format(peak) + ")") + "</title></polyline>\n";
  }
}

// The window (shaded, its peak ringed) and the peak of the first curve (a line and its value).
void TimelineDrawing::AppendMarks(std::string* out) const {
  const bool curve = !chart_.curves.empty();
  auto value = [&](int d) {
    return curve ? chart_.curves[0].values[size_t(d)] : chart_.totals[size_t(d)];
  };
  if (chart_.window_from >= 0 && timed_) {
    const double from = XAt(std::clamp(chart_.window_from - origin_, 0.0, span_));
    const double to = XAt(std::clamp(chart_.window_to - origin_, 0.0, span_));
    char t[96];
    snprintf(t, sizeof t, "window %.10g s to %.10g s", chart_.window_from, chart_.window_to);
    *out += "<rect class=\"window\" x=\"" + Num(from) + "\" y=\"" + Num(kTop) + "\" width=\"" +
            Num(std::max(1.0, to - from)) + "\" height=\"" + Num(plot_h_) +
            "\" fill=\"#4e79a7\" fill-opacity=\"0.15\" stroke=\"#4e79a7\"><title>" + t +
            "</title></rect>\n";
    if (chart_.window_peak >= 0 && size_t(chart_.window_peak) < n_) {
      const size_t d = size_t(chart_.window_peak);
      *out += "<circle class=\"window-peak\" cx=\"" + Num(X(d)) + "\" cy=\"" +
              Num(Y(value(chart_.window_peak))) +
              "\" r=\"5\" fill=\"none\" stroke=\"#1f3b5a\" "
              "stroke-width=\"2\"><title>the window's peak: " +
              Format(value(chart_.window_peak)) + "</title></circle>\n";
    }
  }
  if (chart_.peak < 0 || size_t(chart_.peak) >= n_) return;
  const size_t d = size_t(chart_.peak);
  char at[64] = "";
  if (timed_)
    snprintf(at, sizeof at, " at %.10g s",
             std::round((chart_.dump_times[d] - origin_) * 1000) / 1000);
  const std::string label = "peak " + Format(value(chart_.peak)) + at;
  const bool right_half = X(d) > kLeft + plot_w_ / 2;  // the label on the side with room
  *out += "<g class=\"peak\" data-column=\"" + std::to_string(d) + "\"><line x1=\"" + Num(X(d)) +
          "\" x2=\"" + Num(X(d)) + "\" y1=\"" + Num(kTop) + "\" y2=\"" + Num(kTop + plot_h_) +
          "\" stroke=\"#d62728\" stroke-dasharray=\"3 3\"/><circle cx=\"" + Num(X(d)) + "\" cy=\"" +
          Num(Y(value(chart_.peak))) + "\" r=\"3.5\" fill=\"#d62728\"/><text x=\"" +
          Num(right_half ? X(d) - 4 : X(d) + 4) + "\" y=\"" + Num(kTop + 12) + "\"" +
          (right_half ? " text-anchor=\"end\"" : "") + " fill=\"#d62728\">" + EscapeXml(label) +
          "</text></g>\n";
}

std::string TimelineDrawing::Draw() {
  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"" + Num(kWidth) +
         "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  const std::string unit_in_title =
      chart_.since_start || chart_.in_use_meaning.empty() ? "" : ", " + chart_.in_use_meaning;
  out += "<text x=\"" + Num(kLeft) + "\" y=\"24\" font-size=\"16\">" + EscapeXml(style_.title) +
         " (" + EscapeXml(chart_.sample_type + unit_in_title) + ", " + std::to_string(n_) +
         (chart_.since_start ? " rows" : " dumps") + ")</text>\n";
  if (chart_.since_start && !chart_.in_use_meaning.empty())
    out += "<text class=\"in-use\" x=\"" + Num(kLeft) + "\" y=\"40\" font-size=\"11\">" +
           EscapeXml(chart_.in_use_meaning) + "</text>\n";
  // Axes and y ticks.
  for (double v = 0; v <= max_total_ * (1 + 1e-9); v += y_step_) {
    out += "<line x1=\"" + Num(kLeft) + "\" x2=\"" + Num(kLeft + plot_w_) + "\" y1=\"" + Num(Y(v)) +
           "\" y2=\"" + Num(Y(v)) + "\" stroke=\"#e0e0e0\"/>";
    out += "<text x=\"" + Num(kLeft - 6) + "\" y=\"" + Num(Y(v) + 4) + "\" text-anchor=\"end\">" +
           EscapeXml(TickLabel(v, chart_.unit, style_.show_bytes)) + "</text>\n";
  }
  if (timed_) {
    AppendTimeAxis(&out);
  } else {
    AppendDumpAxis(&out);
  }
  AppendBands(&out);
  AppendInterval(&out);
  AppendCurves(&out);
  AppendMarks(&out);
  AppendColumns(&out);
  AppendLegend(&out);
  out += "</svg>\n";
  return out;
}

}  // namespace

std::string TimelineSvg(const TimelineChart& chart, const TimelineStyle& style) {
  return TimelineDrawing(chart, style).Draw();
}

}  // namespace heapkit::pprof
