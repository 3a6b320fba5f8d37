// A parsed command line, run in three steps:
//   1. load (load/loaded_profiles.h): the files read, the profile shown chosen, --base
//      subtracted, the symbolizer built;
//   2. options: the pipeline's options, the command line's view options resolved against the
//      loaded profile (--sample_index, the granularity a report needs);
//   3. dispatch: the report asked for.
#include "pprof-tool/cli/run.h"

#include <cstdio>
#include <iostream>
#include <iterator>

#include "pprof-tool/cli/peak_choice.h"
#include "pprof-tool/cli/remote_source.h"
#include "pprof-tool/cli/time_views.h"
#include "pprof-tool/load/loaded_profiles.h"
#include "pprof-tool/load/profile_file.h"
#include "pprof-tool/load/symbolizer_choice.h"
#include "pprof-tool/proto/profile_writer.h"
#include "pprof-tool/proto/sample_index.h"
#include "pprof-tool/render/render.h"
#include "pprof-tool/report/leaf_names.h"
#include "pprof-tool/report/output.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/report/source_files.h"
#include "pprof-tool/web/runtime_timeline_chart.h"
#include "pprof-tool/web/timeline.h"
#include "pprof-tool/web/web_server.h"

namespace heapkit::pprof {
namespace {

int Fail(const std::string& msg) {
  fflush(stdout);
  fprintf(stderr, "pprof-tool: %s\n", msg.c_str());
  fflush(stderr);
  return 2;
}

std::string Basename(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

int Emit(const std::string& text, const std::string& output) {
  std::string error;
  return WriteOutput(output, text, &error) ? 0 : Fail(error);
}

// Warnings go to stderr just before the output they concern (none after an error line).
class Warnings {
 public:
  std::vector<std::string>* list() { return &list_; }
  void Flush() {
    for (const std::string& w : list_) fprintf(stderr, "pprof-tool: warning: %s\n", w.c_str());
    list_.clear();
  }

 private:
  std::vector<std::string> list_;
};

const std::vector<std::string>& BaseFiles(const CliOptions& o) {
  return o.base.empty() ? o.diff_base : o.base;
}

// The pictures' and pages' title: the program's base name, else the first profile's.
std::string Title(const CliOptions& o, const LoadedProfiles& in) {
  if (!in.program_name.empty()) return Basename(in.program_name);
  return o.profiles.empty() ? "" : Basename(o.profiles[0]);
}

// 1. What the load stage reads for this command line: `files` are its profiles as read
// (http:// URLs fetched, --peak's files instead of the dumps).
LoadRequest LoadRequestFor(const CliOptions& o, const std::vector<std::string>& files) {
  LoadRequest r;
  r.profiles = files;
  r.base = BaseFiles(o);
  r.diff_base = !o.diff_base.empty();
  r.dump = o.dump;
  r.merge = o.merge;
  r.heapcheck = o.heapcheck;
  r.keep_dumps = o.report == ReportKind::kHttp || o.report == ReportKind::kTimeline ||
                 o.since >= 0;  // --since finds dump N among them
  r.sum_dumps = o.report == ReportKind::kHttp;
  r.symbolize = o.report != ReportKind::kMemory;
  r.program = o.program;
  r.symbol_path = o.symbol_path;
  return r;
}

// 2. The pipeline's options: the command line's view, its value type checked against the
// profile (leak-checker dumps have in-use values only), the granularity a report needs.
bool PipelineFor(const CliOptions& o, const LoadedProfiles& in, PipelineOptions* po,
                 std::string* error) {
  const Profile& profile = in.profile;
  po->view = o.view;
  if (!in.series_stacks.empty()) po->wrapper_stacks = &in.series_stacks;
  SampleType& type = po->view.sample_type;
  if (!ResolveSampleIndex(profile, o.sample_index, &type, error)) return false;
  if (o.heapcheck && type != SampleType::kInuseObjects) type = SampleType::kInuseSpace;
  if (o.report == ReportKind::kList || o.report == ReportKind::kCallgrind) {
    po->view.granularity = Granularity::kLines;
  }
  po->record_full_names = o.report == ReportKind::kRender || o.report == ReportKind::kProto ||
                          o.report == ReportKind::kHttp;
  return true;
}

// The source files --list and the web UI read (source_files.h): the profiles' own file names
// are read only under --source_path.
SourceAccess SourceAccessFor(const CliOptions& o, const Profile& profile,
                             const std::vector<Profile>& dumps) {
  SourceAccess access;
  access.source_path = o.source_path;
  access.trim_path = o.trim_path;
  auto add = [&access](const Profile& p) {
    for (const EmbeddedSymbol& s : p.symbols)
      access.profile_named.insert(s.files.begin(), s.files.end());
  };
  add(profile);
  for (const Profile& d : dumps) add(d);
  return access;
}

// --symbols: maps lines and addresses from stdin.
int WriteSymbols(const CliOptions& o, Warnings* warnings) {
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  SymbolsInput in = ReadSymbolsInput(input);
  auto symbolizer = MakeSymbolizer(in.maps, o.program, o.symbol_path, warnings->list());
  std::string out = SymbolsReport(in.addresses, *symbolizer);
  warnings->Flush();
  return Emit(out, o.output);
}

int WriteMemory(const CliOptions& o, const LoadedProfiles& in, Warnings* warnings) {
  std::string out, error;
  if (!MemoryReport(in.profile, o.view.show_bytes, &out, &error)) return Fail(error);
  warnings->Flush();
  return Emit(out, o.output);
}

int WriteProto(const CliOptions& o, const LoadedProfiles& in, const PipelineOptions& po,
               Warnings* warnings) {
  ProtoWriteOptions wo;
  wo.pipeline = po;
  wo.heapcheck = o.heapcheck;
  wo.main_binary = in.program_name;
  wo.gzip = true;
  std::string file, error;
  if (!EncodeProfileProto(in.profile, *in.symbolizer, wo, &file, &error)) return Fail(error);
  warnings->Flush();
  return Emit(file, o.output);
}

// --timeline[=file]: the memory timeline over the dumps, written like any report.
int WriteTimeline(const CliOptions& o, const LoadedProfiles& in, const PipelineOptions& po,
                  Warnings* warnings) {
  TimelineChart chart;
  std::string error;
  if (!BuildTimeline(in.dumps, *in.symbolizer, po, kTimelineBands, &chart, &error))
    return Fail(error);
  warnings->Flush();
  TimelineStyle style;
  style.show_bytes = po.view.show_bytes;
  if (!in.program_name.empty()) style.title += ": " + Basename(in.program_name);
  return Emit(TimelineSvg(chart, style), o.output);
}

// --timeline=<file>.svg of a runtime timeline: its chart, --window shaded.
int WriteRuntimeTimelineSvg(const CliOptions& o, const LoadedProfiles& in, const TimeViews& views,
                            const PipelineOptions& po, Warnings* warnings) {
  TimelineChart chart;
  BuildRuntimeTimelineChart(
      views.runtime_timeline,
      RuntimeTimelineStackNames(views.runtime_timeline, in.profile, *in.symbolizer, po),
      views.window.text.empty() ? nullptr : &views.window, po.view.show_bytes, &chart);
  warnings->Flush();
  TimelineStyle style;
  style.title = "Runtime timeline";
  style.show_bytes = po.view.show_bytes;
  if (!in.program_name.empty()) style.title += ": " + Basename(in.program_name);
  return Emit(TimelineSvg(chart, style), o.output);
}

// --http: serves the loaded profiles until SIGINT/SIGTERM. The command line's filters are
// checked once first, so a bad regex is a usage error rather than a page of errors.
int ServeProfiles(const CliOptions& o, const LoadedProfiles& in, const TimeViews& views,
                  const PipelineOptions& po, Warnings* warnings) {
  ListenAddress address;
  std::string error;
  if (!ParseListenAddress(o.http, &address, &error)) return Fail(error);
  StackSamples check;
  if (!BuildStackSamples(in.sum, *in.symbolizer, po, &check, &error)) return Fail(error);
  warnings->Flush();
  WebInput web;
  web.profile = &in.sum;
  web.dumps = &in.dumps;
  web.series = in.series;
  web.base = in.Base();
  web.diff_base = !o.diff_base.empty();
  web.first_dump = o.dump >= 0 ? in.series.IndexOf(o.dump) : -1;
  web.merge = o.merge;
  web.symbolizer = in.symbolizer.get();
  web.pipeline = po;
  web.heapcheck = o.heapcheck;
  web.diff = in.has_base;
  web.title = Title(o, in);
  web.sources = SourceAccessFor(o, in.sum, in.dumps);
  if (views.is_runtime_timeline) {
    web.runtime_timeline = &views.runtime_timeline;
    web.first_window = views.window.text;
  }
  return ServeWebUi(web, address, !o.no_browser);
}

// The header lines of every report: file, dump, (peak), base, value type, (time views' notes),
// folded wrappers.
void Describe(const CliOptions& o, const LoadedProfiles& in, const TimeViews& views,
              const PipelineOptions& po, StackSamples* samples) {
  std::vector<std::string>& lines = samples->description;
  if (!in.program_name.empty()) lines.push_back("File: " + Basename(in.program_name));
  if (!in.dump_description.empty()) lines.push_back(in.dump_description);
  const size_t after_dump = lines.size();
  if (in.has_base) {
    std::string names;
    for (const std::string& f : BaseFiles(o)) names += (names.empty() ? "" : ", ") + Basename(f);
    lines.push_back("Base: " + names + " (subtracted" +
                    (o.diff_base.empty() ? ")" : "; percentages of the base)"));
  }
  lines.push_back(std::string("Type: ") + samples->sample_type +
                  (o.heapcheck ? " (leak check: leaked memory)" : ""));
  views.Describe(in.profile, *in.symbolizer, po, after_dump, &lines);
  if (!samples->folded_wrappers.empty()) lines.push_back(samples->FoldedWrappersLine());
}

// --dot, --svg, ..., --flamegraph: the pruned call graph, rendered.
int RenderGraph(const CliOptions& o, const LoadedProfiles& in, const ViewOptions& view,
                const StackSamples& samples) {
  const GraphOptions go = view.Graph(true);
  CallGraph graph = CallGraph::Build(samples, go);
  RenderRequest req;
  req.format = o.render_format;
  req.output_path = o.output;
  req.samples = &samples;
  req.graph = &graph;
  req.graph_options = go;
  req.show_bytes = view.show_bytes;
  req.cum_sort = view.cum;
  req.heapcheck = o.heapcheck;
  req.diff = in.has_base;
  req.title = Title(o, in);
  req.legend = samples.description;
  for (const std::string& l : graph.LegendLines(view.show_bytes)) req.legend.push_back(l);
  fflush(stdout);
  std::string render_error;
  if (Render(req, &render_error) != 0) return Fail(render_error);
  fflush(stdout);
  return 0;
}

// --fail_on_growth: 1 when the total grew by more than `allowed` bytes beyond its sampling
// noise (model/estimate.h), with one line on stderr saying so; else 0.
int GrowthCheck(const StackSamples& samples, double allowed) {
  const double excess = samples.total - allowed;
  if (excess <= 0 || !IsSignificant(excess, samples.total_variance)) return 0;
  const std::string interval = FormatInterval(samples.total_variance, samples.unit, false);
  fprintf(stderr, "pprof-tool: growth %s%s exceeds %s beyond sampling noise (--fail_on_growth)\n",
          FormatValue(samples.total, samples.unit).c_str(),
          interval.empty() ? "" : (" " + interval).c_str(),
          FormatValue(allowed, samples.unit).c_str());
  return 1;
}

// The reports of the chosen profile's stack samples.
int WriteReport(const CliOptions& o, const LoadedProfiles& in, const TimeViews& views,
                const PipelineOptions& po, Warnings* warnings) {
  StackSamples samples;
  std::string error, out;
  if (!BuildStackSamples(in.profile, *in.symbolizer, po, &samples, &error)) return Fail(error);
  Describe(o, in, views, po, &samples);
  warnings->Flush();
  const SourceAccess sources = SourceAccessFor(o, in.profile, {});
  ReportOptions ro;
  ro.sources = &sources;
  ro.show_bytes = po.view.show_bytes;
  ro.cum_sort = po.view.cum;
  ro.top_n = o.top_n;
  ro.graph = po.view.Graph(false);
  ro.error_bars = o.error_bars;
  ro.difference = (in.has_base && o.diff_base.empty()) || o.since >= 0;
  switch (o.report) {
    case ReportKind::kText:
    case ReportKind::kTop:
    case ReportKind::kTimeline:  // a runtime timeline's --window
      out = TextReport(samples, ro);
      break;
    case ReportKind::kTraces: out = TracesReport(samples, ro); break;
    case ReportKind::kTree:
    case ReportKind::kPeek:
      if (!TreeReport(samples, o.peek_regex, ro, &out, &error)) return Fail(error);
      break;
    case ReportKind::kCollapsed: out = CollapsedReport(samples); break;
    case ReportKind::kCallgrind: out = CallgrindReport(samples, ro); break;
    case ReportKind::kList:
      if (!ListReport(samples, o.list_regex, ro, &out, &error)) return Fail(error);
      break;
    case ReportKind::kRender: return RenderGraph(o, in, po.view, samples);
    default: return Fail("internal error: unknown report");
  }
  const int rc = Emit(out, o.output);
  if (rc != 0 || o.fail_on_growth_bytes < 0) return rc;
  return GrowthCheck(samples, o.fail_on_growth_bytes);
}

// 3. The report asked for.
int Dispatch(const CliOptions& o, const LoadedProfiles& in, const TimeViews& views,
             const PipelineOptions& po, Warnings* warnings) {
  switch (o.report) {
    case ReportKind::kRaw: {
      std::string out = RawReport(in.profile, *in.symbolizer, in.program_name);
      warnings->Flush();
      return Emit(out, o.output);
    }
    case ReportKind::kProto: return WriteProto(o, in, po, warnings);
    case ReportKind::kTimeline:
      if (views.timeline_rows) {
        std::string out = RuntimeTimelineText(
            views.runtime_timeline,
            RuntimeTimelineStackNames(views.runtime_timeline, in.profile, *in.symbolizer, po),
            po.view.show_bytes);
        warnings->Flush();
        return Emit(out, o.output);
      }
      if (views.timeline_svg) return WriteRuntimeTimelineSvg(o, in, views, po, warnings);
      if (views.is_runtime_timeline) return WriteReport(o, in, views, po, warnings);
      return WriteTimeline(o, in, po, warnings);
    case ReportKind::kHttp: return ServeProfiles(o, in, views, po, warnings);
    default: return WriteReport(o, in, views, po, warnings);
  }
}

}  // namespace

int RunPprofTool(const CliOptions& o) {
  Warnings warnings;
  if (o.report == ReportKind::kSymbols) return WriteSymbols(o, &warnings);
  std::string error;
  FetchedSources fetched;  // http:// profiles (remote_source.h), kept until the end
  if (!fetched.Fetch(o.profiles, o.fetch, &error)) return Fail(error);
  std::vector<std::string> peak_files;  // --peak: the peak profiles instead (peak_choice.h)
  if (o.peak && !PeakProfileFiles(fetched.paths(), &peak_files, &error)) return Fail(error);
  const std::vector<std::string>& files = o.peak ? peak_files : fetched.paths();
  LoadedProfiles in;
  if (!LoadProfiles(LoadRequestFor(o, files), &in, warnings.list(), &error))
    return Fail(fetched.NameSources(error));
  TimeViews views;
  if (!ApplyTimeViews(o, files, &in, &views, &error)) return Fail(error);
  if (o.report == ReportKind::kMemory) return WriteMemory(o, in, &warnings);
  PipelineOptions po;
  if (!PipelineFor(o, in, &po, &error)) return Fail(error);
  return Dispatch(o, in, views, po, &warnings);
}

int PprofToolMain(int argc, const char* const* argv) {
  CliOptions options;
  int rc = ParseCommandLine(argc, argv, &options);
  if (rc >= 0) {
    fflush(stdout);
    fflush(stderr);
    return rc;
  }
  return RunPprofTool(options);
}

}  // namespace heapkit::pprof
