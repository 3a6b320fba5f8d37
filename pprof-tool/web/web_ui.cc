#include "pprof-tool/web/web_ui.h"

#include <algorithm>
#include <cmath>

#include "pprof-tool/render/flame_graph.h"
#include "pprof-tool/render/render.h"
#include "pprof-tool/report/leaf_names.h"
#include "pprof-tool/report/name_pattern.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/web/page.h"
#include "pprof-tool/web/page_assets.h"
#include "pprof-tool/web/runtime_timeline_chart.h"
#include "pprof-tool/web/timeline.h"

namespace heapkit::pprof {

struct WebUi::View {
  std::string path;
  ViewQuery query;
};

namespace {

WebResponse Error(int status, const std::string& message) {
  WebResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = "pprof-tool: " + message + "\n";
  std::replace(r.body.begin(), r.body.end() - 1, '\n', ' ');
  return r;
}

std::string Cell(double v, const std::string& text, const std::string& hover = "") {
  char buf[40];
  snprintf(buf, sizeof buf, "%.17g", v);
  return std::string("<td data-v=\"") + buf + "\"" +
         (hover.empty() ? "" : " title=\"" + EscapeXml(hover) + "\"") + ">" + EscapeXml(text) +
         "</td>";
}

// A sampled value's interval cell (model/estimate.h): "±1.2MB", the hover saying what it is.
std::string IntervalCell(double value, double variance, ValueUnit unit, bool show_bytes) {
  const std::string interval = FormatInterval(variance, unit, show_bytes);
  if (interval.empty()) return Cell(0, "0", "exact");
  const double sigma = std::sqrt(variance);
  char z[32];
  snprintf(z, sizeof z, "%.1f", value / sigma);
  return Cell(kIntervalSigmas * sigma, "±" + interval.substr(interval.find(' ') + 1),
              "95 % interval: " + FormatValue(value, unit, show_bytes) + " " + interval +
                  " (standard error " + FormatValue(sigma, unit, show_bytes) + ", z " + z + ")");
}

}  // namespace

WebUi::WebUi(const WebInput& input) : in_(input) {
  defaults_.view = in_.pipeline.view;
  defaults_.window = in_.first_window;
  if (in_.dumps->size() > 1) {  // a series shows one dump, profiles of several processes the sum
    defaults_.dump_numbers = in_.series.numbers;
    if (in_.first_dump >= 0) {
      defaults_.dump = in_.first_dump;
    } else if (in_.series.one_process && !in_.merge) {
      defaults_.dump = int(in_.series.latest);
    }
  }
}

WebResponse WebUi::Handle(const std::string& path,
                          const std::multimap<std::string, std::string>& params) {
  View v{path, defaults_};
  std::string error;
  if (!ParseViewQuery(params, &v.query, &error)) return Error(400, error);
  if (v.query.base >= 0 && v.query.dump < 0) {
    return Error(400, "base=N compares two dumps: give the other as dump=M");
  }
  if (in_.heapcheck && (v.query.view.sample_type == SampleType::kAllocSpace ||
                        v.query.view.sample_type == SampleType::kAllocObjects)) {
    return Error(400,
                 "leak-checker dumps have in-use values only (si=inuse_space or inuse_objects)");
  }
  if (!v.query.window.empty()) {
    RuntimeTimelineWindow window;
    if (in_.runtime_timeline == nullptr) {
      return Error(400, "window=T0:T1 applies to a runtime timeline (<prefix>.timeline.heap)");
    }
    if (!ParseRuntimeTimelineWindow(*in_.runtime_timeline, v.query.window, &window, &error)) {
      return Error(400, "window=" + error);
    }
  }
  if (path == "/" || path == "/ui") v.path = "/ui/";
  const std::string key = v.path + "?" + v.query.Encode();
  auto kept = [&](WebResponse* answer) {
    std::lock_guard<std::mutex> lock(answers_mutex_);
    const WebResponse* found = answers_.Find(key);
    if (found != nullptr) *answer = *found;
    return found != nullptr;
  };
  WebResponse r;
  if (kept(&r)) return r;
  std::lock_guard<std::mutex> lock(pipeline_mutex_);
  if (kept(&r)) return r;  // computed while this request waited
  r = Route(v);
  if (r.status == 200) {
    std::lock_guard<std::mutex> answers_lock(answers_mutex_);
    answers_.Insert(key, r);
  }
  return r;
}

WebResponse WebUi::Route(const View& v) {
  const std::string& path = v.path;
  if (path == "/ui/") return Graph(v);
  if (path == "/ui/top") return Top(v);
  if (path == "/ui/flamegraph") return FlameGraphPage(v);
  if (path == "/ui/flamegraph.svg") return FlameGraphSvg(v);
  if (path == "/ui/peek") return Peek(v);
  if (path == "/ui/source") return Source(v);
  if (path == "/ui/timeline") return Timeline(v);
  return Error(404, "no such page: " + path.substr(0, 200));
}

const StackSamples* WebUi::Samples(const ViewQuery& q, Granularity granularity,
                                   std::string* error) {
  const std::string key = std::to_string(int(granularity)) + "?" + q.Encode();
  if (memo_valid_ && memo_key_ == key) return &memo_;
  memo_valid_ = false;
  memo_ = StackSamples();
  PipelineOptions po = in_.pipeline;
  po.view = q.view;
  po.view.granularity = granularity;
  const Profile* profile = in_.profile;
  Profile difference, window_profile;
  std::string window_line;
  RuntimeTimelineWindow window;
  if (!q.window.empty()) {  // checked by Handle
    if (!ParseRuntimeTimelineWindow(*in_.runtime_timeline, q.window, &window, error))
      return nullptr;
    window_profile =
        RuntimeTimelineRowProfile(*in_.runtime_timeline, *in_.profile, window, &window_line);
    profile = &window_profile;
  }
  const Profile* base = q.base >= 0 ? &(*in_.dumps)[size_t(q.base)] : in_.base;
  if (q.dump >= 0) {
    profile = &(*in_.dumps)[size_t(q.dump)];
    if (base != nullptr) {
      difference = *profile;
      SubtractBase(base, q.base < 0 && in_.diff_base, &difference);
      profile = &difference;
    }
  }
  if (!BuildStackSamples(*profile, *in_.symbolizer, po, &memo_, error)) return nullptr;
  if (!in_.title.empty()) memo_.description.push_back("File: " + in_.title);
  if (in_.dumps->size() > 1) {
    memo_.description.push_back(
        DumpDescription(*in_.dumps, in_.series, q.dump, "others, and a base: menu bar, timeline"));
  }
  if (!window_line.empty()) memo_.description.push_back(window_line);
  if (q.base >= 0) {
    memo_.description.push_back("Base: " + FileBasename((*in_.dumps)[size_t(q.base)].file) +
                                " (subtracted)");
  }
  memo_.description.push_back(std::string("Type: ") + memo_.sample_type +
                              (in_.heapcheck ? " (leak check: leaked memory)" : "") +
                              (Diff(q) ? " (difference to the base)" : ""));
  if (!memo_.folded_wrappers.empty()) memo_.description.push_back(memo_.FoldedWrappersLine());
  memo_key_ = key;
  memo_valid_ = true;
  return &memo_;
}

WebResponse WebUi::Html(const View& v, const std::string& title, std::vector<std::string> legend,
                        const std::string& body) {
  Page page;
  page.view_path = v.path;
  page.title =
      (in_.heapcheck ? "Leaks: " : "") + title + (in_.title.empty() ? "" : " - " + in_.title);
  page.query = v.query;
  page.heapcheck = in_.heapcheck;
  page.timeline = in_.dumps->size() > 1 || in_.runtime_timeline != nullptr;
  page.window = in_.runtime_timeline != nullptr;
  if (in_.series.one_process) page.latest_dump = int(in_.series.latest);
  page.legend = std::move(legend);
  page.body_html = body;
  WebResponse r;
  r.body = PageHtml(page);
  return r;
}

WebResponse WebUi::Graph(const View& v) {
  std::string error;
  const StackSamples* found = Samples(v.query, in_.pipeline.view.granularity, &error);
  if (found == nullptr) return Error(400, error);
  const StackSamples& samples = *found;
  const ViewOptions& view = v.query.view;
  const GraphOptions go = view.Graph(true);
  CallGraph graph = CallGraph::Build(samples, go);
  RenderRequest req;
  req.format = RenderFormat::kSvg;
  req.samples = &samples;
  req.graph = &graph;
  req.graph_options = go;
  req.show_bytes = view.show_bytes;
  req.heapcheck = in_.heapcheck;
  req.diff = Diff(v.query);
  req.title = in_.title;
  req.legend = samples.description;
  for (const std::string& l : graph.LegendLines(view.show_bytes)) req.legend.push_back(l);
  std::string svg;
  if (!RenderImage(req, &svg, &error)) return Error(400, error);
  // The picture keeps graphviz's own size (its labels as large as the CLI's --svg draws them);
  // its content goes into a group that the page script pans and zooms (page_assets.h).
  const size_t start = svg.find("<svg");
  const size_t open_end = start == std::string::npos ? start : svg.find('>', start);
  const size_t close = svg.rfind("</svg>");
  if (open_end == std::string::npos || close == std::string::npos || close < open_end) {
    return Error(500, "graphviz wrote no SVG picture");
  }
  svg = svg.substr(start, open_end + 1 - start) + "<g id=\"viewport\">" +
        svg.substr(open_end + 1, close - open_end - 1) + "</g></svg>";
  // The legend is the picture's own box (as in go pprof): printed above it too, it was doubled.
  return Html(v, "Call graph", {},
              std::string(kGraphControls) +
                  "<div id=\"graph\" tabindex=\"0\" role=\"region\" "
                  "aria-label=\"Call graph\">" +
                  svg + "</div>");
}

// The top table of `samples` (flat flat% sum% cum cum% name, each name a link to its peek);
// *legend gets the samples' header lines and the graph's.
std::string WebUi::TopTable(const StackSamples& samples, const ViewQuery& q,
                            std::vector<std::string>* legend) {
  GraphOptions go = q.view.Graph(false);
  go.edge_fraction = 0;
  CallGraph g = CallGraph::Build(samples, go);
  const bool sb = q.view.show_bytes;
  // A sampled profile's rows carry their 95 % intervals (model/estimate.h); an exact one's not.
  const bool intervals = samples.total_variance > 0;
  const char* interval_th = intervals ? "<th title=\"95 % interval of the estimate\">±2σ</th>" : "";
  std::string body = std::string("<table class=\"top\"><thead><tr><th>flat</th>") + interval_th +
                     "<th>flat%</th><th>sum%</th><th>cum</th>" + interval_th +
                     "<th>cum%</th><th class=\"name\">name</th></tr></thead><tbody>\n";
  const double total = std::fabs(samples.total);
  auto pct = [&](double x) { return total == 0 ? 0.0 : 100.0 * x / total; };
  double sum = 0;
  ViewQuery peek = q;
  for (const GraphNode& n : g.nodes) {
    sum += n.flat;
    peek.view.focus = ExactNamePattern(n.info.name);
    const std::string flat_interval =
        intervals ? IntervalCell(n.flat, n.flat_variance, samples.unit, sb) : "";
    const std::string cum_interval =
        intervals ? IntervalCell(n.cum, n.cum_variance, samples.unit, sb) : "";
    body += "<tr>" + Cell(n.flat, FormatValue(n.flat, samples.unit, sb)) + flat_interval +
            Cell(pct(n.flat), FormatPercent(n.flat, samples.total)) +
            Cell(pct(sum), FormatPercent(sum, samples.total)) +
            Cell(n.cum, FormatValue(n.cum, samples.unit, sb)) + cum_interval +
            Cell(pct(n.cum), FormatPercent(n.cum, samples.total)) +
            "<td class=\"name\"><a href=\"/ui/peek?" + EscapeXml(peek.Encode()) + "\">" +
            EscapeXml(n.info.Label()) + "</a></td></tr>\n";
  }
  body += "</tbody></table>";
  *legend = samples.description;
  for (const std::string& l : g.LegendLines(sb)) legend->push_back(l);
  return body;
}

WebResponse WebUi::Top(const View& v) {
  std::string error;
  const StackSamples* found = Samples(v.query, in_.pipeline.view.granularity, &error);
  if (found == nullptr) return Error(400, error);
  std::vector<std::string> legend;
  const std::string body = TopTable(*found, v.query, &legend);
  return Html(v, "Top", legend, body);
}

WebResponse WebUi::FlameGraphPage(const View& v) {
  // The pipeline validates the query before the page refers to the picture, and the samples it
  // builds are kept for the picture's request that follows.
  std::string error;
  if (Samples(v.query, in_.pipeline.view.granularity, &error) == nullptr) return Error(400, error);
  std::string q = v.query.Encode();
  // The legend is in the picture (its header lines); printed above it too, it was doubled.
  return Html(v, "Flame graph", {},
              "<object id=\"flame\" type=\"image/svg+xml\" data=\"/ui/flamegraph.svg" +
                  (q.empty() ? "" : "?" + EscapeXml(q)) + "\"></object>");
}

WebResponse WebUi::FlameGraphSvg(const View& v) {
  std::string error;
  const StackSamples* found = Samples(v.query, in_.pipeline.view.granularity, &error);
  if (found == nullptr) return Error(400, error);
  const StackSamples& samples = *found;
  CallGraph unused;
  RenderRequest req;
  req.format = RenderFormat::kFlameGraph;
  req.samples = &samples;
  req.graph = &unused;
  req.flame_min_frame_px = kWebFlameMinFramePx;
  req.show_bytes = v.query.view.show_bytes;
  req.diff = Diff(v.query);
  req.title = in_.title;
  WebResponse r;
  r.content_type = "image/svg+xml";
  if (!RenderImage(req, &r.body, &error)) return Error(400, error);
  // In the page's frame the picture sits at the top, not centred in a taller box.
  const size_t svg = r.body.find("<svg ");
  if (svg != std::string::npos) r.body.insert(svg + 5, "preserveAspectRatio=\"xMidYMin meet\" ");
  return r;
}

WebResponse WebUi::Peek(const View& v) {
  std::string error, out;
  const StackSamples* found = Samples(v.query, in_.pipeline.view.granularity, &error);
  if (found == nullptr) return Error(400, error);
  const StackSamples& samples = *found;
  const ViewOptions& view = v.query.view;
  ReportOptions ro;
  ro.show_bytes = view.show_bytes;
  ro.graph = view.Graph(false);
  if (!TreeReport(samples, view.focus, ro, &out, &error)) return Error(404, error);
  return Html(v, view.focus.empty() ? "Call tree" : "Peek " + view.focus, {},
              "<pre>" + EscapeXmlLines(out) + "</pre>");
}

WebResponse WebUi::Source(const View& v) {
  std::string error, out;
  const ViewOptions& view = v.query.view;
  std::string regex = view.focus;
  if (regex.empty()) {  // the ten functions with the largest flat value
    const StackSamples* functions = Samples(v.query, Granularity::kFunctions, &error);
    if (functions == nullptr) return Error(400, error);
    GraphOptions go = view.Graph(false);
    go.node_count = 10;
    CallGraph g = CallGraph::Build(*functions, go);
    for (const GraphNode& n : g.nodes)
      regex += (regex.empty() ? "" : "|") + ExactNamePattern(n.info.name);
    if (regex.empty()) return Error(404, "no functions to list");
  }
  const StackSamples* lines = Samples(v.query, Granularity::kLines, &error);
  if (lines == nullptr) return Error(400, error);
  ReportOptions ro;
  ro.sources = &in_.sources;
  ro.show_bytes = view.show_bytes;
  ro.graph = view.Graph(false);
  ro.list_by_weight = true;  // the heaviest routine first, as go pprof's source view
  if (!ListReport(*lines, regex, ro, &out, &error)) return Error(404, error);
  return Html(v, "Source", {}, "<pre>" + EscapeXmlLines(out) + "</pre>");
}

WebResponse WebUi::Timeline(const View& v) {
  if (in_.runtime_timeline != nullptr) return RuntimeTimelineView(v);
  if (in_.dumps->size() < 2) {
    return Error(404, "the timeline needs several dumps (pprof-tool --http=:0 ./prog prof.*.heap)");
  }
  PipelineOptions po = in_.pipeline;
  po.view = v.query.view;
  po.view.granularity = Granularity::kFunctions;
  TimelineChart chart;
  std::string error;
  if (!BuildTimeline(*in_.dumps, *in_.symbolizer, po, kTimelineBands, &chart, &error)) {
    return Error(400, error);
  }
  TimelineStyle style;
  style.show_bytes = v.query.view.show_bytes;
  ViewQuery link = v.query;
  link.dump = link.base = -1;
  link.dump_numbers.clear();
  std::string q = link.Encode();
  style.link_prefix = "/ui/top?" + (q.empty() ? "" : q + "&") + "dump=";
  return Html(
      v, "Timeline",
      {"Hover a dump for its header line and values; click it for its top table; shift-click it "
       "to compare the dump chosen in the menu bar with it (as its base)."},
      TimelineSvg(chart, style) + "<div id=\"tl-info\"></div>");
}

// A runtime timeline: its chart (each row's column links to the top table of that row), and
// with window= the window shaded and the stacks at its peak in a top table below.
WebResponse WebUi::RuntimeTimelineView(const View& v) {
  RuntimeTimelineWindow window;
  std::string error;
  if (!v.query.window.empty() &&
      !ParseRuntimeTimelineWindow(*in_.runtime_timeline, v.query.window, &window, &error)) {
    return Error(400, "window=" + error);
  }
  TimelineChart chart;
  PipelineOptions po = in_.pipeline;
  po.view = v.query.view;
  BuildRuntimeTimelineChart(
      *in_.runtime_timeline,
      RuntimeTimelineStackNames(*in_.runtime_timeline, *in_.profile, *in_.symbolizer, po),
      v.query.window.empty() ? nullptr : &window, v.query.view.show_bytes, &chart);
  TimelineStyle style;
  style.title = "Runtime timeline";
  style.show_bytes = v.query.view.show_bytes;
  ViewQuery link = v.query;
  link.window.clear();
  const std::string q = link.Encode();
  style.link_prefix = "/ui/top?" + (q.empty() ? "" : q + "&") + "window=";
  std::string body = TimelineSvg(chart, style) + "<div id=\"tl-info\"></div>";
  std::vector<std::string> legend = {
      "Hover a row for its values; click it for the top table of its stacks; choose a window "
      "(seconds after profiling start, T0:T1) in the menu bar for the stacks at its peak."};
  if (!v.query.window.empty()) {
    const StackSamples* found = Samples(v.query, in_.pipeline.view.granularity, &error);
    if (found == nullptr) return Error(400, error);
    std::vector<std::string> lines;
    const std::string table = TopTable(*found, v.query, &lines);
    body += "<h3 id=\"window-stacks\">The stacks at the window's peak</h3><div class=\"legend\">";
    for (const std::string& line : lines) body += EscapeXml(line) + "<br>";
    body += "</div>" + table;
  }
  return Html(v, "Timeline", legend, body);
}

}  // namespace heapkit::pprof
