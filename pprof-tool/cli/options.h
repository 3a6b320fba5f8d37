// Command-line options of pprof-tool: every option, including the renderers' (one place).
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/cli/remote_source.h"
#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/report/render_request.h"
#include "pprof-tool/report/view_options.h"

namespace heapkit::pprof {

enum class ReportKind {
  kText,
  kTop,
  kTraces,
  kTree,
  kPeek,
  kList,
  kCollapsed,
  kCallgrind,
  kRaw,
  kSymbols,
  kRender,
  kProto,
  kTimeline,  // --timeline[=file]: the memory timeline SVG (web/timeline.h)
  kHttp,      // --http=[host]:port: the web UI (web/web_server.h)
  kMemory,    // --memory: the dump's memory figures as a table (report/memory_report.h)
};

struct CliOptions {
  ReportKind report = ReportKind::kText;
  int top_n = 0;           // --top=N (0: all)
  std::string list_regex;  // --list=<regex>
  std::string peek_regex;  // --peek=<regex>
  RenderFormat render_format = RenderFormat::kDot;
  std::string output;        // --output=<file> / --flamegraph=<file>
  ViewOptions view;          // value type, granularity, filters, names, graph limits
  std::string sample_index;  // --sample_index=<name|number>, or the value flag given ("": none)
  std::vector<std::string> base;       // --base=<file> (repeatable)
  std::vector<std::string> diff_base;  // --diff_base=<file> (repeatable)
  // Several dumps of one process (model/dump_series.h): reports show the latest, or --dump=N
  // (the file's .NNNN); --merge sums them as it does profiles of different processes.
  int dump = -1;       // --dump=N (-1: not given)
  bool merge = false;  // --merge
  bool heapcheck = false;
  std::string http;         // --http=[host]:port
  bool no_browser = false;  // --no_browser: never open a browser for --http
  std::string program;      // optional <program>
  // --symbol_path dirs, then PPROF_BINARY_PATH's: searched for binaries and debug files
  // before the paths the profile recorded.
  std::vector<std::string> symbol_path;
  std::vector<std::string> source_path, trim_path;  // --source_path, --trim_path: source_files.h
  std::vector<std::string> profiles;                // <profile>... (files or http:// URLs)
  RemoteFetchOptions fetch;  // --seconds, --timeout: http:// profiles (remote_source.h)
  // Time views of the runtime's files (cli/time_views.h).
  bool peak = false;            // --peak: the peak profiles (cli/peak_choice.h)
  std::string timeline_window;  // --window=T0:T1 (cli/runtime_timeline.h)
  std::string lifetime;         // --lifetime=<filter> ("": not given)
  int since = -1;               // --since=N (-1: not given)
  // The sampling error (model/estimate.h).
  bool error_bars = false;           // --error_bars: the text rows' intervals
  std::string fail_on_growth;        // --fail_on_growth=BYTES ("": not given)
  double fail_on_growth_bytes = -1;  // its value in bytes (-1: not given)
};

// Parses argv. Returns -1 to continue, or an exit status (0 after --help or --version, 2 on a
// usage error, after printing the message and usage to stderr).
int ParseCommandLine(int argc, const char* const* argv, CliOptions* options);

// Usage line printed after an option error.
const char* UsageLine();

}  // namespace heapkit::pprof
