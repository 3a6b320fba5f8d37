// Command-line parsing in four steps, each its own function:
//   1. DefineOptions: every option is defined once, with CLI11 (names, help text, group); the
//      view options (value type, granularity, filters, graph limits) from their table
//      (report/view_options.h, cli/view_flags.h);
//   2. NormalizeArguments: the spellings users type from go pprof and gperftools' pprof are
//      rewritten to CLI11's, using the option names read back from the CLI11 definitions
//      (SpellingsOf), so there is no second list of names to keep in step;
//   3. CLI11 parses;
//   4. Resolve*: the raw values are checked against each other and turned into CliOptions.
#include "pprof-tool/cli/options.h"

#include "pprof-tool/cli/settings_listing.h"
#include "pprof-tool/report/object_time_views.h"
#include "pprof-tool/cli/view_flags.h"
#include "pprof-tool/web/web_server.h"
#include "pprof-tool/tool_settings.h"

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

namespace heapkit::pprof {
namespace {

// What CLI11 fills in before the values are checked against each other. Options that map
// one-to-one onto CliOptions are bound to CliOptions directly.
struct RawOptions {
  ViewChoicesGiven view_choices;  // --inuse_space ..., --lines ...: which were given
  bool text = false, traces = false, tree = false, collapsed = false, callgrind = false,
       raw = false, symbols = false, proto = false, memory = false;
  int top = -1;
  std::string list, peek;
  std::string symbolize;  // --symbolize=demangle=full
  bool dot = false, svg = false, png = false, pdf = false, ps = false, web = false;
  std::string flamegraph, icicle, timeline;  // "-": no file given (stdout, or --output)
  std::vector<std::string> positional;
  std::string symbol_path;             // --symbol_path=<dir>[:<dir>...]
  std::string source_path, trim_path;  // --source_path, --trim_path (go pprof's)
};

// The value an optional-value option (--top, --flamegraph, --icicle) gets when it is given
// without '=': CLI11 would otherwise take the next argument (a profile) as its value.
constexpr const char* kTopAll = "0";
constexpr const char* kNoFile = "-";

constexpr const char* kDescription =
    "pprof-tool: heap profile reports (heapkit). Reads legacy heap profiles written by heapkit "
    "and gperftools (heapprofile, heap_v2/<rate>, heap/<rate>, growth, leak-check *-end.heap), "
    "jemalloc's heap dumps and profile.proto (.pb.gz, e.g. Go's heap profiles), symbolizes them "
    "with libdw and prints reports or writes profile.proto (--proto).\n\n"
    "  pprof-tool ./server /tmp/prof.0003.heap              text report (default)\n"
    "  pprof-tool --top=10 --alloc_space /tmp/prof.0003.heap  binaries from the memory map\n"
    "  pprof-tool --base=/tmp/prof.0001.heap ./server /tmp/prof.0009.heap   growth since .0001\n"
    "Names are simplified (std::vector::push_back; --full_names for the whole name) and the\n"
    "allocation path (malloc, operator new, std:: allocation code, strdup...) is dropped from\n"
    "the leaf end of every stack, so memory is charged to the code that asked for it.\n"
    "Go-style single-dash spellings (-top=10, -text, -o out.svg) are accepted too.\n\n"
    "Binaries and debug files are looked up by build-id (<dir>/.build-id/xx/yyyy[.debug]) and\n"
    "by base name in the --symbol_path directories, then in PPROF_BINARY_PATH's (go pprof's\n"
    "variable, <dir>[:<dir>...]), then at the paths the profile recorded; a file whose build-id\n"
    "differs from the recorded one is refused. Separate debug info is also found under\n"
    "/usr/lib/debug and by .gnu_debuglink, and, only when DEBUGINFOD_URLS is set, fetched from\n"
    "those debuginfod servers (cached under DEBUGINFOD_CACHE_PATH; DEBUGINFOD_MAXSIZE and\n"
    "DEBUGINFOD_MAXTIME default to 512 MiB and 60 s per file when unset; a cache directory\n"
    "that is a link, not yours or writable by others turns downloads off).";

void DefineReportOptions(CLI::App& app, RawOptions& r) {
  const char* g = "Reports";
  app.add_flag("--text", r.text,
               "Text report: flat flat% sum% cum cum% name (default). E.g. --text ./prog x.heap")
      ->group(g);
  app.add_option("--top", r.top,
                 "Like --text, at most N rows (bare --top: all rows). E.g. --top=10")
      ->expected(0, 1)
      ->default_str(kTopAll)
      ->option_text("[=N]")
      ->group(g);
  app.add_flag("--traces", r.traces,
               "Every distinct stack with its value, largest first. E.g. --traces --lines")
      ->group(g);
  app.add_flag("--tree", r.tree,
               "Call tree: every function with its callers above and callees below. E.g. --tree")
      ->group(g);
  app.add_option("--peek", r.peek,
                 "Like --tree, only functions matching the regex. E.g. --peek='^Parse'")
      ->group(g);
  app.add_option("--list", r.list,
                 "Annotated source of functions matching a regex. E.g. --list='^Parse'")
      ->group(g);
  app.add_flag("--collapsed", r.collapsed, "Folded stacks 'main;f;g 1234' for flamegraph.pl etc.")
      ->group(g);
  app.add_flag("--callgrind", r.callgrind,
               "Callgrind format for kcachegrind. E.g. --callgrind > out.cg")
      ->group(g);
  app.add_flag("--memory", r.memory,
               "Where the process's memory was at the dump: RSS by allocator tier and mapping "
               "kind. E.g. --memory x.heap")
      ->group(g);
  app.add_flag(
         "--raw", r.raw,
         "Symbolized self-contained profile, readable without the binaries. E.g. --raw -o s.heap")
      ->group(g);
  app.add_flag("--symbols", r.symbols,
               "Read maps lines and hex addresses from stdin, print '0x<addr> <name>' per address. "
               "E.g. cat maps addrs | pprof-tool --symbols")
      ->group(g);
  app.add_option(
         "--timeline", r.timeline,
         "In-use memory over several dumps as a stacked-area SVG, one band per top-10 function; "
         "of a runtime timeline (<prefix>.timeline.heap) its rows as text, or its chart for "
         "an .svg file. E.g. --timeline=t.svg ./prog prof.*.heap")
      ->expected(0, 1)
      ->default_str(kNoFile)
      ->option_text("[=FILE]")
      ->group(g);
  app.add_flag("--proto", r.proto,
               "Gzipped profile.proto for go tool pprof and profiling servers. E.g. --proto -o "
               "heap.pb.gz")
      ->group(g);
}

void DefineWebOptions(CLI::App& app, CliOptions& o) {
  const char* g = "Web UI";
  app.add_option("--http", o.http,
                 "Serve a web UI (graph, top, flame graph, peek, source, timeline) on [host]:port "
                 "until Ctrl-C; host defaults to 127.0.0.1, port 0 picks one. E.g. --http=:8080")
      ->option_text("[HOST]:PORT")
      ->group(g);
  app.add_flag("--no_browser", o.no_browser,
               "With --http: do not open a browser (one is opened only if $BROWSER or xdg-open is "
               "there). E.g. --http=:0 --no_browser")
      ->group(g);
}

void DefineGraphOptions(CLI::App& app, RawOptions& r, CliOptions& o) {
  const char* g = "Graphs";
  app.add_flag("--dot", r.dot, "Call graph in DOT. E.g. --dot | dot -Tsvg")->group(g);
  app.add_flag("--svg", r.svg, "Call graph as SVG. E.g. --svg --output=heap.svg")->group(g);
  app.add_flag("--png", r.png, "Call graph as PNG. E.g. --png -o heap.png")->group(g);
  app.add_flag("--pdf", r.pdf, "Call graph as PDF. E.g. --pdf -o heap.pdf")->group(g);
  app.add_flag("--ps", r.ps, "Call graph as PostScript. E.g. --ps -o heap.ps")->group(g);
  app.add_flag("--web", r.web, "Call graph as SVG in a temp file, opened with $BROWSER. E.g. --web")
      ->group(g);
  app.add_option("--flamegraph", r.flamegraph,
                 "Flame graph SVG; --flamegraph=<file> writes to <file>. E.g. --flamegraph=f.svg")
      ->expected(0, 1)
      ->default_str(kNoFile)
      ->option_text("[=FILE]")
      ->group(g);
  app.add_option("--icicle", r.icicle,
                 "Icicle graph SVG (flame graph, root on top). E.g. --icicle=i.svg")
      ->expected(0, 1)
      ->default_str(kNoFile)
      ->option_text("[=FILE]")
      ->group(g);
  app.add_option("--output,-o", o.output,
                 "Write the report to a file instead of stdout. E.g. --output=g.svg")
      ->group(g);
  DefineViewFlags(app, g, &o.view, &r.view_choices);
}

void DefineValueOptions(CLI::App& app, RawOptions& r, CliOptions& o) {
  const char* g = "Values";
  DefineViewFlags(app, g, &o.view, &r.view_choices);
  app.add_option("--sample_index", o.sample_index,
                 "Value by go pprof's name or number. E.g. --sample_index=alloc_space")
      ->group(g);
  app.add_option("--base", o.base,
                 "Subtract this profile (repeatable); percentages of the difference. E.g. "
                 "--base=prof.0001.heap")
      ->allow_extra_args(false)
      ->group(g);
  app.add_option("--diff_base", o.diff_base,
                 "Subtract this profile (repeatable); percentages of the base (go pprof). E.g. "
                 "--diff_base=prof.0001.heap")
      ->allow_extra_args(false)
      ->group(g);
  app.add_option("--dump", o.dump,
                 "Of several dumps of one process (shown: the latest), report dump N, the number "
                 "in its file name. "
                 "E.g. --dump=3 ./prog prof.*.heap")
      ->group(g);
  app.add_flag("--merge", o.merge,
               "Sum the profiles even when they are dumps of one process (profiles of different "
               "processes are always summed). "
               "E.g. --merge prof.*.heap")
      ->group(g);
  app.add_flag("--heapcheck", o.heapcheck,
               "The profiles are leak-checker dumps: report leaks. E.g. --heapcheck ./prog "
               "/tmp/prog.123._main_-end.heap")
      ->group(g);
}

void DefineFilterOptions(CLI::App& app, RawOptions& r, CliOptions& o) {  // and names
  DefineViewFlags(app, "Granularity", &o.view, &r.view_choices);
  const char* g = "Filters";
  DefineViewFlags(app, g, &o.view, &r.view_choices);
  app.add_option("--symbolize", r.symbolize,
                 "go pprof's spelling of --full_names. E.g. --symbolize=demangle=full")
      ->group(g);
}

void DefineSymbolOptions(CLI::App& app, RawOptions& r) {
  const char* g = "Symbols";
  app.add_option("--symbol_path", r.symbol_path,
                 "Directories searched first for binaries and debug files (by build-id, then "
                 "base name); before PPROF_BINARY_PATH. E.g. --symbol_path=/srv/bin:/srv/debug")
      ->group(g);
  app.add_option("--source_path", r.source_path,
                 "Directories --list and the web UI's source view read sources from (default: the "
                 "current directory); a source file the profile itself names is read only under "
                 "them. E.g. --source_path=$HOME/src/proj:/usr/src")
      ->group(g);
  app.add_option("--trim_path", r.trim_path,
                 "Path prefixes cut off source file names before --source_path is searched. "
                 "E.g. --trim_path=/build/proj")
      ->group(g);
}

// Remote profiles (http:// URLs, cli/remote_source.h): go pprof's -seconds and -timeout. They
// are not view options (report/view_options.h): they say what is read, not how it is shown.
void DefineRemoteOptions(CLI::App& app, CliOptions& o) {
  const char* g = "Remote profiles";
  app.add_option("--seconds", o.fetch.seconds,
                 "For an http:// profile: ask for a delta over N seconds (adds seconds=N). "
                 "E.g. --seconds=30 http://127.0.0.1:6060/debug/pprof/heap")
      ->check(CLI::Range(0, 86400))
      ->group(g);
  app.add_option(
         "--timeout", o.fetch.timeout,
         "For an http:// profile: give up after S seconds (default 60, or 1.5 x --seconds). "
         "E.g. --timeout=5")
      ->check(CLI::Range(0.001, 86400.0))
      ->group(g);
}

// The time views of the runtime's files (cli/time_views.h): like the remote options, they choose
// what is read (the peak files, a timeline's window, a dump's lifetimes or growth).
void DefineTimeOptions(CLI::App& app, CliOptions& o) {
  const char* g = "Time";
  app.add_flag("--peak", o.peak,
               "Report the peak profile written beside each dump (HEAP_PROFILE_PEAK=1): for "
               "<prefix>.NNNN.heap the peak since the previous dump (<prefix>.peak.NNNN.heap), "
               "for <prefix> the peak since start (<prefix>.peak.heap); the header gives the "
               "peak's time and total; a profile.proto dump (HEAP_PROFILE_FORMAT=proto) names its "
               "peak in the same format (prof.0003.heap.pb.gz -> prof.peak.0003.heap.pb.gz). "
               "E.g. --peak --top=10 prof.0003.heap")
      ->group(g);
  app.add_option("--window", o.timeline_window,
                 "With --timeline of a runtime timeline (<prefix>.timeline.heap, "
                 "HEAP_PROFILE_TIMELINE): the stacks at the peak of [T0,T1], seconds after "
                 "profiling start (with an .svg file: shaded in the chart; with --http: the "
                 "window shown first). E.g. --timeline --window=1.5:3 prof.timeline.heap")
      ->option_text("T0:T1")
      ->group(g);
  app.add_option("--lifetime", o.lifetime,
                 "Allocations by lifetime (dumps written with HEAP_PROFILE_LIFETIMES=1): <D or >D "
                 "(D a decade: 1us 10us ... 1s ... 1000s 1h), live, freed, cross (freed by another "
                 "thread), same. E.g. --lifetime='<1ms' --top=10 x.heap")
      ->group(g);
  app.add_option("--since", o.since,
                 "Growth after dump N up to this dump (dumps written with HEAP_PROFILE_AGES=1): "
                 "allocated after dump N and still live, minus what was live at N and was freed "
                 "since; per stack a leak-or-cache hint. E.g. --since=5 prof.0009.heap")
      ->group(g);
}

// The sampling error (model/estimate.h): the rows' intervals, and the growth check for CI.
void DefineErrorOptions(CLI::App& app, CliOptions& o) {
  const char* g = "Sampling error";
  app.add_flag("--error_bars", o.error_bars,
               "--text/--top: a column with each row's 95 % interval (± 2 standard errors of "
               "the sampled estimate) after flat and after cum. E.g. --error_bars --top=10 "
               "prof.0003.heap")
      ->group(g);
  app.add_option("--fail_on_growth", o.fail_on_growth,
                 "With --base or --since: exit 1 when the total grew by more than BYTES (B, kB, "
                 "MB, GB: powers of 1024) beyond its sampling noise (the growth minus BYTES is "
                 "at least 2 standard errors), else 0, after the report. E.g. "
                 "--fail_on_growth=1MB --base=a.heap b.heap")
      ->option_text("BYTES")
      ->group(g);
}

// "1MB", "512kB", "4096", "0.5GB" -> bytes; false if malformed.
bool ParseByteAmount(const std::string& text, double* bytes) {
  size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    return false;
  }
  const std::string unit = text.substr(end);
  const std::pair<const char*, double> units[] = {
      {"", 1}, {"B", 1}, {"kB", 1024.0}, {"KB", 1024.0}, {"MB", 1048576.0}, {"GB", 1073741824.0}};
  for (const auto& [name, scale] : units) {
    if (unit == name && v >= 0 && std::isfinite(v)) {
      *bytes = v * scale;
      return true;
    }
  }
  return false;
}

bool ResolveErrorOptions(CliOptions* o, std::string* error) {
  if (o->fail_on_growth.empty()) return true;
  if (!ParseByteAmount(o->fail_on_growth, &o->fail_on_growth_bytes)) {
    *error = "--fail_on_growth=" + o->fail_on_growth + ": expected bytes, e.g. 0, 4096, 512kB, 1MB";
    return false;
  }
  if ((o->base.empty() && o->since < 0) || !o->diff_base.empty()) {
    *error = "--fail_on_growth checks a difference: give --base=<file> or --since=N";
    return false;
  }
  if (o->report != ReportKind::kText && o->report != ReportKind::kTop) {
    *error = "--fail_on_growth applies to --text and --top";
    return false;
  }
  return true;
}

bool ResolveObjectTimeOptions(const CliOptions& o, std::string* error) {
  if (o.lifetime.empty() && o.since < 0) return true;
  if (!o.lifetime.empty() && o.since >= 0) {
    *error = "choose one of --lifetime and --since";
    return false;
  }
  const char* flag = o.since >= 0 ? "--since" : "--lifetime";
  if (!o.base.empty() || !o.diff_base.empty() || o.merge) {
    *error = std::string(flag) + " reads one dump; --base, --diff_base and --merge do not apply";
    return false;
  }
  if (o.report == ReportKind::kTimeline || o.report == ReportKind::kHttp ||
      o.report == ReportKind::kMemory || o.report == ReportKind::kSymbols ||
      o.report == ReportKind::kRaw) {
    *error = std::string(flag) +
             " applies to the reports of one profile (--text, --top, --traces, "
             "--tree, --svg, --flamegraph, --proto, ...)";
    return false;
  }
  LifetimeFilter filter;
  return o.lifetime.empty() || ParseLifetimeFilter(o.lifetime, &filter, error);
}

// Thrown by --settings' callback, as CLI11's --version throws CallForVersion.
struct SettingsAsked {};

void DefineOptions(CLI::App& app, RawOptions& r, CliOptions& o) {
  app.set_help_flag("-h,--help", "Print this help and exit. E.g. --help");
  app.set_version_flag("--version", "pprof-tool (heapkit) " HEAPKIT_VERSION,
                       "Print the version and exit. E.g. --version");
  app.add_flag_callback(
      "--settings", [] { throw SettingsAsked(); },
      "Print the environment variables heapkit and pprof-tool read (type, "
      "default, accepted values, meaning) and exit. E.g. --settings");
  app.get_formatter()->column_width(34);
  DefineReportOptions(app, r);
  DefineGraphOptions(app, r, o);
  DefineValueOptions(app, r, o);
  DefineFilterOptions(app, r, o);
  DefineSymbolOptions(app, r);
  DefineWebOptions(app, o);
  DefineRemoteOptions(app, o);
  DefineTimeOptions(app, o);
  DefineErrorOptions(app, o);
  app.add_option("files", r.positional,
                 "[<program>] <profile>...: profiles are summed. E.g. ./prog a.heap b.heap");
}

// The option names as CLI11 knows them, read back from the definitions.
struct Spellings {
  std::set<std::string> long_names;               // "top", "output", ...
  std::set<std::string> short_names;              // "o", "h"
  std::map<std::string, std::string> bare_value;  // optional-value option -> value when bare
};

Spellings SpellingsOf(const CLI::App& app) {
  Spellings s;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& n : opt->get_lnames()) {
      s.long_names.insert(n);
      if (opt->get_expected_min() == 0 && opt->get_expected_max() > 0) {
        s.bare_value[n] = opt->get_default_str();
      }
    }
    for (const std::string& n : opt->get_snames()) s.short_names.insert(n);
  }
  return s;
}

// Rewrites one argument (before "--") to CLI11's spelling:
//   -name[=v] (a long option, go pprof style)  -> --name[=v]
//   -o=v (a short option with '=')             -> -o v   (never a file named "=v")
//   --top / --flamegraph (optional value, bare) -> --top=0 / --flamegraph=-
// A single-dash word that names no option is an error (CLI11 would read "-http" as "-h ttp").
bool NormalizeArgument(const std::string& a, const Spellings& s, std::vector<std::string>* out,
                       std::string* error) {
  if (a.size() < 2 || a[0] != '-' || !isalpha(static_cast<unsigned char>(a[a[1] == '-' ? 2 : 1]))) {
    out->push_back(a);
    return true;
  }
  bool single = a[1] != '-';
  size_t name_start = single ? 1 : 2;
  size_t eq = a.find('=');
  std::string name =
      a.substr(name_start, eq == std::string::npos ? std::string::npos : eq - name_start);
  std::string value = eq == std::string::npos ? "" : a.substr(eq);  // "=v" or ""
  if (single && s.short_names.count(name)) {
    out->push_back("-" + name);
    if (!value.empty()) out->push_back(value.substr(1));
    return true;
  }
  if (!s.long_names.count(name)) {
    if (!single) {
      out->push_back(a);  // CLI11 reports the unknown option
      return true;
    }
    *error = "unknown option " + a.substr(0, eq);
    return false;
  }
  auto bare = s.bare_value.find(name);
  if (value.empty() && bare != s.bare_value.end()) value = "=" + bare->second;
  out->push_back("--" + name + value);
  return true;
}

bool NormalizeArguments(int argc, const char* const* argv, const Spellings& s,
                        std::vector<std::string>* args, std::string* error) {
  bool positional_only = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (positional_only || a == "--") {
      positional_only = true;
      args->push_back(a);
    } else if (!NormalizeArgument(a, s, args, error)) {
      return false;
    }
  }
  return true;
}

// A regular file that starts with the ELF magic. Opened non-blocking and checked with fstat
// first: a FIFO or device given as a profile must not block here.
bool IsElf(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat st;
  char magic[4] = {0};
  bool elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, magic, 4) == 4 &&
             memcmp(magic,
                    "\x7f"
                    "ELF",
                    4) == 0;
  close(fd);
  return elf;
}

bool ResolveReport(const RawOptions& r, CliOptions* o, std::string* error) {
  bool flame = !r.flamegraph.empty(), icicle = !r.icicle.empty(), timeline = !r.timeline.empty();
  int reports = int(r.text) + timeline + !o->http.empty() + (r.top >= 0) + r.traces + r.tree +
                !r.peek.empty() + !r.list.empty() + r.collapsed + r.callgrind + r.raw + r.symbols +
                r.dot + r.svg + r.png + r.pdf + r.ps + r.web + flame + icicle + r.proto + r.memory;
  if (reports > 1) {
    *error = "choose one report (--text, --top, --traces, --list, --svg, ...)";
    return false;
  }
  if (r.top < -1) {
    *error = "--top: expected N >= 0";
    return false;
  }
  const std::pair<bool, ReportKind> reports_by_flag[] = {
      {r.top >= 0, ReportKind::kTop},        {r.traces, ReportKind::kTraces},
      {r.tree, ReportKind::kTree},           {!r.peek.empty(), ReportKind::kPeek},
      {!r.list.empty(), ReportKind::kList},  {r.collapsed, ReportKind::kCollapsed},
      {r.callgrind, ReportKind::kCallgrind}, {r.raw, ReportKind::kRaw},
      {r.symbols, ReportKind::kSymbols},     {r.proto, ReportKind::kProto},
      {r.memory, ReportKind::kMemory},       {timeline, ReportKind::kTimeline},
      {!o->http.empty(), ReportKind::kHttp}};
  for (const auto& [on, kind] : reports_by_flag) {
    if (on) o->report = kind;
  }
  ListenAddress address;
  if (!o->http.empty() && !ParseListenAddress(o->http, &address, error)) return false;
  if (o->no_browser && o->http.empty()) {
    *error = "--no_browser applies to --http only";
    return false;
  }
  if (r.top >= 0) o->top_n = r.top;
  o->list_regex = r.list;
  o->peek_regex = r.peek;
  const std::pair<bool, RenderFormat> renders[] = {
      {r.dot, RenderFormat::kDot},        {r.svg, RenderFormat::kSvg},
      {r.png, RenderFormat::kPng},        {r.pdf, RenderFormat::kPdf},
      {r.ps, RenderFormat::kPs},          {r.web, RenderFormat::kWeb},
      {flame, RenderFormat::kFlameGraph}, {icicle, RenderFormat::kIcicle}};
  for (const auto& [on, format] : renders) {
    if (on) {
      o->report = ReportKind::kRender;
      o->render_format = format;
    }
  }
  const std::string& file = flame ? r.flamegraph : icicle ? r.icicle : r.timeline;
  if ((flame || icicle || timeline) && file != kNoFile) {
    if (!o->output.empty() && o->output != file) {
      *error = std::string(flame    ? "--flamegraph"
                           : icicle ? "--icicle"
                                    : "--timeline") +
               "=<file> and --output=<file> name different files";
      return false;
    }
    o->output = file;
  }
  return true;
}

bool ResolveValues(const RawOptions& r, CliOptions* o, std::string* error) {
  if (!r.view_choices.Check(error)) return false;  // one value flag, one granularity
  const SampleType type = o->view.sample_type;
  if (r.view_choices.Given(&ViewOptions::sample_type)) {
    if (!o->sample_index.empty()) {
      *error = "choose --sample_index or a value flag (--inuse_space ...), not both";
      return false;
    }
    o->sample_index = SampleTypeName(type);
  }
  if (o->heapcheck && (type == SampleType::kAllocSpace || type == SampleType::kAllocObjects)) {
    *error = "--heapcheck reports leaked (in-use) memory; --alloc_* does not apply";
    return false;
  }
  if (o->dump >= 0 && o->merge) {
    *error = "choose one of --dump=N (one dump of a series) and --merge (the sum of all)";
    return false;
  }
  if (!o->base.empty() && !o->diff_base.empty()) {
    *error = "choose one of --base (percentages of the difference) and --diff_base (of the base)";
    return false;
  }
  return true;
}

bool ResolveNames(const RawOptions& r, CliOptions* o, std::string* error) {
  if (r.symbolize.empty()) return true;
  if (r.symbolize != "demangle=full") {
    *error =
        "--symbolize=" + r.symbolize + ": only demangle=full (same as --full_names) is supported";
    return false;
  }
  o->view.full_names = true;
  return true;
}

bool CheckGraphLimits(const ViewOptions& v, std::string* error) {
  if (v.nodecount < -1) *error = "--nodecount: expected N >= 0";
  if (!(v.nodefraction >= 0 && v.nodefraction <= 1))
    *error = "--nodefraction: expected a fraction in [0, 1]";
  if (!(v.edgefraction >= 0 && v.edgefraction <= 1))
    *error = "--edgefraction: expected a fraction in [0, 1]";
  return error->empty();
}

// [<program>] <profile>...: a first argument that is an ELF file is the program.
bool ResolveFiles(const RawOptions& r, CliOptions* o, std::string* error) {
  const std::vector<std::string>& files = r.positional;
  if (o->report == ReportKind::kSymbols) {
    if (files.size() > 1) *error = "--symbols takes at most one <program>";
    if (!files.empty()) o->program = files[0];
    return error->empty();
  }
  if (files.empty() || (files.size() == 1 && IsElf(files[0]))) {
    *error =
        files.empty() ? "no profile given" : "no profile given (" + files[0] + " is a program)";
    return false;
  }
  if (files.size() >= 2 && IsElf(files[0])) {
    o->program = files[0];
    o->profiles.assign(files.begin() + 1, files.end());
  } else {
    o->profiles = files;
  }
  return true;
}

// --symbol_path's directories, then PPROF_BINARY_PATH's; relative ones made absolute (libdwfl
// looks for debug files under absolute directories only).
void ResolveSymbolPath(const RawOptions& r, CliOptions* o) {
  char cwd[PATH_MAX];
  const bool have_cwd = getcwd(cwd, sizeof cwd) != nullptr;
  const char* env = internal::ToolSettingText(ToolSetting("PPROF_BINARY_PATH"));
  for (const std::string& list : {r.symbol_path, std::string(env ? env : "")}) {
    size_t at = 0;
    while (at <= list.size()) {
      size_t end = list.find(':', at);
      if (end == std::string::npos) end = list.size();
      std::string dir = list.substr(at, end - at);
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      if (!dir.empty() && dir[0] != '/' && have_cwd) dir = std::string(cwd) + "/" + dir;
      if (!dir.empty()) o->symbol_path.push_back(dir);
      at = end + 1;
    }
  }
}

std::vector<std::string> SplitPathList(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < list.size()) {
    size_t end = list.find(':', at);
    if (end == std::string::npos) end = list.size();
    if (end > at) out.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

int UsageError(const std::string& message) {
  fprintf(stderr, "pprof-tool: %s\n%s\n", message.c_str(), UsageLine());
  return 2;
}

}  // namespace

const char* UsageLine() {
  return "usage: pprof-tool [options] [<program>] <profile> [<profile>...]   (--help for details)";
}

int ParseCommandLine(int argc, const char* const* argv, CliOptions* o) {
  CLI::App app{kDescription, "pprof-tool"};
  RawOptions raw;
  DefineOptions(app, raw, *o);

  std::vector<std::string> args;
  std::string error;
  if (!NormalizeArguments(argc, argv, SpellingsOf(app), &args, &error)) return UsageError(error);
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 wants them reversed
  } catch (const CLI::CallForHelp&) {
    fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion& v) {
    printf("%s\n", v.what());
    return 0;
  } catch (const SettingsAsked&) {
    fputs(SettingsListing().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    return UsageError(e.what());
  }

  if (!ResolveReport(raw, o, &error) || !ResolveValues(raw, o, &error) ||
      !ResolveNames(raw, o, &error) || !CheckGraphLimits(o->view, &error) ||
      !ResolveFiles(raw, o, &error) || !ResolveObjectTimeOptions(*o, &error) ||
      !ResolveErrorOptions(o, &error)) {
    return UsageError(error);
  }
  ResolveSymbolPath(raw, o);
  o->source_path = SplitPathList(raw.source_path);
  o->trim_path = SplitPathList(raw.trim_path);
  return -1;
}

}  // namespace heapkit::pprof
