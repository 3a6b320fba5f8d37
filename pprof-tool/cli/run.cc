#include "pprof-tool/cli/run.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <sstream>

#include "pprof-tool/cli/profile_choice.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/proto/profile_loader.h"
#include "pprof-tool/proto/profile_symbolizer.h"
#include "pprof-tool/proto/profile_writer.h"
#include "pprof-tool/proto/sample_index.h"
#include "pprof-tool/report/output.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/render/render.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/report/source_files.h"
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

// Loads every file, each profile on its own.
bool LoadEach(const std::vector<std::string>& files, std::vector<Profile>* each,
              std::string* error, std::vector<std::string>* warnings) {
  for (const std::string& f : files) {
    Profile p;
    ParseError pe;
    if (!LoadProfileFile(f, &p, &pe)) {
      *error = pe.Message();
      return false;
    }
    for (std::string& w : p.warnings) warnings->push_back(std::move(w));
    p.warnings.clear();
    each->push_back(std::move(p));
  }
  return true;
}

// Loads every file and sums them (--base files).
bool LoadAll(const std::vector<std::string>& files, Profile* merged, std::string* error,
             std::vector<std::string>* warnings) {
  std::vector<Profile> each;
  if (!LoadEach(files, &each, error, warnings)) return false;
  *merged = std::move(each[0]);
  for (size_t i = 1; i < each.size(); ++i) merged->AddProfile(each[i], false);
  return true;
}

// --timeline[=file]: the memory timeline over the dumps, written like any report.
int WriteTimeline(const CliOptions& o, const std::vector<Profile>& dumps, Symbolizer& symbolizer,
                  const PipelineOptions& po, const std::string& program_name,
                  const std::function<void()>& flush_warnings) {
  TimelineChart chart;
  std::string error;
  if (!BuildTimeline(dumps, symbolizer, po, kTimelineBands, &chart, &error)) return Fail(error);
  flush_warnings();
  TimelineStyle style;
  style.show_bytes = o.view.show_bytes;
  if (!program_name.empty()) style.title += ": " + Basename(program_name);
  return Emit(TimelineSvg(chart, style), o.output);
}

// The source files --list and the web UI read (source_files.h): the profiles' own file names
// are read only under --source_path.
SourceAccess SourceAccessFor(const CliOptions& o, const Profile& profile, const std::vector<Profile>& dumps) {
  SourceAccess access;
  access.source_path = o.source_path;
  access.trim_path = o.trim_path;
  auto add = [&access](const Profile& p) {
    for (const EmbeddedSymbol& s : p.symbols) access.profile_named.insert(s.files.begin(), s.files.end());
  };
  add(profile);
  for (const Profile& d : dumps) add(d);
  return access;
}

// --http: serves the loaded profiles until SIGINT/SIGTERM. The command line's filters are
// checked once first, so a bad regex is a usage error rather than a page of errors.
int ServeProfiles(const CliOptions& o, const Profile& profile, const std::vector<Profile>& dumps,
                  const DumpSeries& series, const Profile* base, Symbolizer& symbolizer,
                  const PipelineOptions& po, const std::string& title,
                  const std::function<void()>& flush_warnings) {
  ListenAddress address;
  std::string error;
  if (!ParseListenAddress(o.http, &address, &error)) return Fail(error);
  StackSamples check;
  if (!BuildStackSamples(profile, symbolizer, po, &check, &error)) return Fail(error);
  flush_warnings();
  WebInput web;
  web.profile = &profile;
  web.dumps = &dumps;
  web.series = series;
  web.base = base;
  web.diff_base = !o.diff_base.empty();
  web.first_dump = o.dump >= 0 ? series.IndexOf(o.dump) : -1;
  web.merge = o.merge;
  web.symbolizer = &symbolizer;
  web.pipeline = po;
  web.heapcheck = o.heapcheck;
  web.diff = base != nullptr;
  web.title = title;
  web.sources = SourceAccessFor(o, profile, dumps);
  return ServeWebUi(web, address, !o.no_browser);
}

}  // namespace

int RunPprofTool(const CliOptions& o) {
  std::vector<std::string> warnings;
  auto flush_warnings = [&]() {
    for (const std::string& w : warnings) fprintf(stderr, "pprof-tool: warning: %s\n", w.c_str());
    warnings.clear();
  };

  if (o.report == ReportKind::kSymbols) {
    std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    std::string out = SymbolsReport(input, o.program, o.symbol_path, &warnings);
    flush_warnings();
    return Emit(out, o.output);
  }

  Profile profile;
  std::string error;
  std::vector<Profile> dumps;
  if (!LoadEach(o.profiles, &dumps, &error, &warnings)) return Fail(error);
  const DumpSeries series = ClassifyDumps(dumps);
  std::string dump_description;  // which dump, or the sum: a header line of every report
  if (!ChooseProfile(dumps, series, o, &profile, &dump_description, &error)) return Fail(error);
  const std::vector<std::string>& base_files = o.base.empty() ? o.diff_base : o.base;
  Profile base;
  if (!base_files.empty()) {
    if (!LoadAll(base_files, &base, &error, &warnings)) return Fail(error);
    SubtractBase(&base, !o.diff_base.empty(), &profile);
  }
  if (o.report == ReportKind::kMemory) {
    std::string out;
    if (!MemoryReport(profile, o.view.show_bytes, &out, &error)) return Fail(error);
    flush_warnings();
    return Emit(out, o.output);
  }
  if (o.heapcheck) {
    profile.kind = ProfileKind::kHeapCheck;
    for (Profile& d : dumps) d.kind = ProfileKind::kHeapCheck;
  }
  // The web UI offers every dump and their sum: it symbolizes through the sum's maps (each
  // dump's files at one address), and shows the chosen profile first.
  Profile sum;
  if (o.report == ReportKind::kHttp) {
    sum = dumps[0];
    for (size_t i = 1; i < dumps.size(); ++i) sum.AddProfile(dumps[i], false);
    SubtractBase(base_files.empty() ? nullptr : &base, !o.diff_base.empty(), &sum);
    if (o.heapcheck) sum.kind = ProfileKind::kHeapCheck;
  } else if (o.report != ReportKind::kTimeline) {
    dumps.clear();  // reports need the chosen profile only
    dumps.shrink_to_fit();
  }
  const Profile& symbolized = o.report == ReportKind::kHttp ? sum : profile;

  SampleType sample_type = o.view.sample_type;
  if (!ResolveSampleIndex(profile, o.sample_index, &sample_type, &error)) return Fail(error);
  if (o.heapcheck && sample_type != SampleType::kInuseObjects) sample_type = SampleType::kInuseSpace;
  std::unique_ptr<Symbolizer> symbolizer = MakeProfileSymbolizer(symbolized, o.program, o.symbol_path, &warnings);

  std::string program_name = !o.program.empty() ? o.program : profile.binary;
  if (program_name.empty()) {
    for (const Mapping& m : profile.mappings) {
      if (!m.path.empty() && m.path[0] == '/' && m.perms.find('x') != std::string::npos) {
        program_name = m.path;
        break;
      }
    }
  }

  if (o.report == ReportKind::kRaw) {
    std::string out = RawReport(profile, *symbolizer, program_name);
    flush_warnings();
    return Emit(out, o.output);
  }

  PipelineOptions po;
  po.view = o.view;
  po.view.sample_type = sample_type;
  if (o.report == ReportKind::kList || o.report == ReportKind::kCallgrind) {
    po.view.granularity = Granularity::kLines;
  }
  po.record_full_names = o.report == ReportKind::kRender || o.report == ReportKind::kProto ||
                         o.report == ReportKind::kHttp;

  if (o.report == ReportKind::kProto) {
    ProtoWriteOptions wo;
    wo.pipeline = po;
    wo.heapcheck = o.heapcheck;
    wo.main_binary = program_name;
    wo.gzip = true;
    std::string file;
    if (!EncodeProfileProto(profile, *symbolizer, wo, &file, &error)) return Fail(error);
    flush_warnings();
    return Emit(file, o.output);
  }

  if (o.report == ReportKind::kTimeline) {
    return WriteTimeline(o, dumps, *symbolizer, po, program_name, flush_warnings);
  }
  if (o.report == ReportKind::kHttp) {
    const std::string title =
        program_name.empty() ? Basename(o.profiles[0]) : Basename(program_name);
    return ServeProfiles(o, sum, dumps, series, base_files.empty() ? nullptr : &base,
                         *symbolizer, po, title, flush_warnings);
  }

  StackSamples samples;
  if (!BuildStackSamples(profile, *symbolizer, po, &samples, &error)) return Fail(error);
  if (!program_name.empty()) samples.description.push_back("File: " + Basename(program_name));
  if (!dump_description.empty()) samples.description.push_back(dump_description);
  if (!base_files.empty()) {
    std::string names;
    for (const std::string& f : base_files) names += (names.empty() ? "" : ", ") + Basename(f);
    samples.description.push_back("Base: " + names + " (subtracted" +
                                  (o.diff_base.empty() ? ")" : "; percentages of the base)"));
  }
  samples.description.push_back(std::string("Type: ") + samples.sample_type +
                                (o.heapcheck ? " (leak check: leaked memory)" : ""));
  if (!samples.folded_wrappers.empty()) samples.description.push_back(samples.FoldedWrappersLine());
  flush_warnings();

  const SourceAccess sources = SourceAccessFor(o, profile, {});
  ReportOptions ro;
  ro.sources = &sources;
  ro.show_bytes = o.view.show_bytes;
  ro.cum_sort = o.view.cum;
  ro.top_n = o.top_n;
  ro.graph = o.view.Graph(false);

  switch (o.report) {
    case ReportKind::kText:
    case ReportKind::kTop:
      return Emit(TextReport(samples, ro), o.output);
    case ReportKind::kTraces:
      return Emit(TracesReport(samples, ro), o.output);
    case ReportKind::kTree:
    case ReportKind::kPeek: {
      std::string out;
      if (!TreeReport(samples, o.peek_regex, ro, &out, &error)) return Fail(error);
      return Emit(out, o.output);
    }
    case ReportKind::kCollapsed:
      return Emit(CollapsedReport(samples), o.output);
    case ReportKind::kCallgrind:
      return Emit(CallgrindReport(samples, ro), o.output);
    case ReportKind::kList: {
      std::string out;
      if (!ListReport(samples, o.list_regex, ro, &out, &error)) return Fail(error);
      return Emit(out, o.output);
    }
    case ReportKind::kRender: {
      const GraphOptions go = o.view.Graph(true);
      CallGraph graph = CallGraph::Build(samples, go);
      RenderRequest req;
      req.format = o.render_format;
      req.output_path = o.output;
      req.samples = &samples;
      req.graph = &graph;
      req.graph_options = go;
      req.show_bytes = o.view.show_bytes;
      req.cum_sort = o.view.cum;
      req.heapcheck = o.heapcheck;
      req.diff = !base_files.empty();
      req.title = program_name.empty() ? (o.profiles.empty() ? "" : Basename(o.profiles[0]))
                                       : Basename(program_name);
      req.legend = samples.description;
      for (const std::string& l : graph.LegendLines(o.view.show_bytes)) req.legend.push_back(l);
      fflush(stdout);
      std::string render_error;
      if (Render(req, &render_error) != 0) return Fail(render_error);
      fflush(stdout);
      return 0;
    }
    default:
      break;
  }
  return Fail("internal error: unknown report");
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
