// The hook between the CLI and the renderers (pprof-tool/render/).
//
// The CLI parses every option (including the render ones), runs the pipeline, builds and prunes
// the call graph, then calls
//
//     int heapkit::pprof::Render(const RenderRequest& request, std::string* error);
//
// declared in pprof-tool/render/render.h and defined in the library target
// heapkit_pprof_render. Return 0 on success; on failure return non-zero and set *error to one
// line (without "pprof-tool: " prefix and without newline); the CLI prints it and exits 2.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/graph/call_graph.h"
#include "pprof-tool/model/stack_samples.h"

namespace heapkit::pprof {

enum class RenderFormat {
  kDot,         // --dot   : DOT text
  kSvg,         // --svg
  kPng,         // --png
  kPdf,         // --pdf
  kPs,          // --ps
  kWeb,         // --web   : SVG to a temp file, opened in a browser ($BROWSER / xdg-open)
  kFlameGraph,  // --flamegraph[=file] : self-contained SVG flame graph
  kIcicle,      // --icicle[=file]     : same, root at top
};

struct RenderRequest {
  RenderFormat format = RenderFormat::kDot;
  std::string output_path;                // --output=<file> (or --flamegraph=<file>); "" = stdout
  const StackSamples* samples = nullptr;  // never null
  const CallGraph* graph = nullptr;       // pruned per options; never null
  GraphOptions graph_options;
  bool show_bytes = false;          // --show_bytes
  bool cum_sort = false;            // --cum
  std::string title;                // program name or profile file name
  std::vector<std::string> legend;  // samples->description + graph->LegendLines()
  bool heapcheck = false;           // --heapcheck: values are leaked memory
  bool diff = false;                // --base given: values are differences (may be negative)
  double flame_min_frame_px = 0;    // flame graphs: narrower frames are not drawn (0: default)
};

}  // namespace heapkit::pprof
