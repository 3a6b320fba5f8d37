// Text reports over StackSamples / CallGraph. Each returns the whole report as a string.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/model/profile.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/model/stack_samples.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct SourceAccess;  // source_files.h

struct ReportOptions {
  bool show_bytes = false;
  bool cum_sort = false;  // --cum: order by cum instead of flat
  int top_n = 0;          // --top=N: at most N lines (0 = all)
  GraphOptions graph;     // text reports use node_fraction (node_count only if given)
  const SourceAccess* sources = nullptr;  // --list's files (source_files.h); null: defaults
  // --list's routines by weight (flat, then cum, both descending; go pprof's web source view)
  // instead of by name (its --list).
  bool list_by_weight = false;
  // --error_bars: --text/--top rows get a "± 2σ" column after flat and after cum (by default
  // only the header's total carries its interval: the row table stays go pprof's, for scripts).
  bool error_bars = false;
  // --base / --since: the values are changes; rows are sorted by growth (largest first, not by
  // |change|) and a sampled change within its noise (|z| < 2, model/estimate.h) is marked.
  bool difference = false;
};

// --text / --top: header lines, then "flat flat% sum% cum cum% name" rows.
std::string TextReport(const StackSamples& samples, const ReportOptions& options);

// --traces: every stack (leaf first) with its value, largest first.
std::string TracesReport(const StackSamples& samples, const ReportOptions& options);

// --tree (peek_regex empty) / --peek=<regex>: go pprof's text call tree, each function with its
// callers above and callees below. Sets *error on a bad regex or when --peek matches nothing.
bool TreeReport(const StackSamples& samples, const std::string& peek_regex,
                const ReportOptions& options, std::string* out, std::string* error);

// --collapsed: "root;...;leaf <value>" lines (Brendan Gregg's folded stacks), sorted.
std::string CollapsedReport(const StackSamples& samples);

// --callgrind: callgrind format (kcachegrind/qcachegrind), function granularity with lines.
std::string CallgrindReport(const StackSamples& line_samples, const ReportOptions& options);

// --list=<regex>: per matching function, its source lines annotated with flat and cum.
// `line_samples` must be built with Granularity::kLines. Sets *error if nothing matches.
bool ListReport(const StackSamples& line_samples, const std::string& regex,
                const ReportOptions& options, std::string* out, std::string* error);

// --raw: a self-contained symbolized profile that pprof-tool (and gperftools' pprof) read back.
std::string RawReport(const Profile& profile, Symbolizer& symbolizer, const std::string& binary);

// --memory: the dump's memory figures (model/memory_figures.h) as a table with bytes and share
// of RSS. False with *error when the profile carries none.
bool MemoryReport(const Profile& profile, bool show_bytes, std::string* out, std::string* error);

// --symbols: "0x<addr> <name>[--<caller>...]" per address (inlined frames innermost first); the
// addresses and the maps the symbolizer uses are read by load/profile_file.h.
std::string SymbolsReport(const std::vector<uint64_t>& addresses, Symbolizer& symbolizer);

}  // namespace heapkit::pprof
