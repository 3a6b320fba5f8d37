// libFuzzer target: the legacy profile parser, and for inputs that parse, the rest of the
// offline pipeline (embedded-symbol table, stack samples, call graph, text/collapsed reports).
// Must never crash, hang or leak; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/report/reports.h"
#include "pprof-tool/load/table_symbolizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace heapkit::pprof;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Profile p;
  ParseError e;
  if (!ParseProfileText(text, "fuzz.heap", &p, &e)) {
    (void)e.Message();
    return 0;
  }
  if (p.samples.size() > 5000) return 0;
  auto sym = MakeTableSymbolizer(p.symbols);
  PipelineOptions o;
  for (Granularity g : {Granularity::kFunctions, Granularity::kAddresses}) {
    o.view.granularity = g;
    StackSamples s;
    std::string err;
    if (!BuildStackSamples(p, *sym, o, &s, &err)) continue;
    ReportOptions ro;
    (void)TextReport(s, ro);
    (void)CollapsedReport(s);
    CallGraph g2 = CallGraph::Build(s, GraphOptions{10, 0.01, 0.01});
    (void)g2.LegendLines(false);
  }
  return 0;
}
