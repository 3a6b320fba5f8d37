#include "render.h"

#include <cstdio>
#include <string>

#include "pprof-tool/render/dot_writer.h"
#include "pprof-tool/render/flame_graph.h"
#include "pprof-tool/render/gvc_render.h"
#include "pprof-tool/report/output.h"

namespace heapkit::pprof {

namespace {

// --base given, or negative values anyway (only subtraction makes them).
bool IsDiff(const RenderRequest& r) {
  if (r.diff) return true;
  for (const StackSample& s : r.samples->samples) {
    if (s.value < 0) return true;
  }
  return false;
}

std::vector<std::string> GraphLegend(const RenderRequest& r) {
  if (!r.legend.empty()) return r.legend;
  std::vector<std::string> legend = r.samples->description;
  if (legend.empty() && !r.title.empty()) legend.push_back("File: " + r.title);
  for (std::string& line : r.graph->LegendLines(r.show_bytes)) legend.push_back(std::move(line));
  return legend;
}

const char* ImageFormatName(RenderFormat f) {
  switch (f) {
    case RenderFormat::kPng: return "png";
    case RenderFormat::kPdf: return "pdf";
    case RenderFormat::kPs: return "ps";
    default: return "svg";
  }
}

}  // namespace

bool WithinLayoutLimits(const CallGraph& graph, std::string* error) {
  if (graph.nodes.size() <= kMaxLayoutNodes && graph.edges.size() <= kMaxLayoutEdges) return true;
  *error = "the call graph has " + std::to_string(graph.nodes.size()) + " nodes and " +
           std::to_string(graph.edges.size()) +
           " edges, more than graphviz lays out in reasonable time and memory (at most " +
           std::to_string(kMaxLayoutNodes) + " nodes and " + std::to_string(kMaxLayoutEdges) +
           " edges); shrink it with --nodecount, --nodefraction, --edgefraction or --focus, or "
           "use --dot, --text or --flamegraph";
  return false;
}

bool RenderImage(const RenderRequest& request, std::string* image, std::string* error) {
  if (request.samples == nullptr || request.graph == nullptr) {
    *error = "internal error: render request without samples or graph";
    return false;
  }
  const bool diff = IsDiff(request);

  if (request.format == RenderFormat::kFlameGraph || request.format == RenderFormat::kIcicle) {
    FlameGraphOptions options;
    options.title = request.title.empty() ? "Flame Graph" : "Flame Graph: " + request.title;
    options.legend = request.samples->description;
    options.icicle = request.format == RenderFormat::kIcicle;
    options.diff = diff;
    options.show_bytes = request.show_bytes;
    if (request.flame_min_frame_px > 0) options.min_frame_px = request.flame_min_frame_px;
    *image = WriteFlameGraphSvg(*request.samples, options);
    return true;
  }

  if (request.format != RenderFormat::kDot && !WithinLayoutLimits(*request.graph, error)) {
    return false;
  }

  DotStyle style;
  style.title = request.title;
  style.legend = GraphLegend(request);
  style.show_bytes = request.show_bytes;
  style.diff = diff;
  style.heapcheck = request.heapcheck;
  std::string dot = WriteDot(*request.graph, style);
  if (request.format == RenderFormat::kDot) {
    *image = std::move(dot);
    return true;
  }
  return RenderDotInProcess(dot, ImageFormatName(request.format), image, error);
}

int Render(const RenderRequest& request, std::string* error) {
  std::string image;
  if (!RenderImage(request, &image, error)) return 1;
  if (request.format != RenderFormat::kWeb) {
    return WriteOutput(request.output_path, image, error) ? 0 : 1;
  }
  std::string path = request.output_path;
  if (path.empty()) {
    if (!WriteTempFile(".svg", image, &path, error)) return 1;
  } else if (!WriteOutput(path, image, error)) {
    return 1;
  }
  const bool opened = OpenInBrowser(path);
  std::printf("Call graph written to %s%s\n", path.c_str(),
              opened ? " (opening it in your browser)" : "");
  std::fflush(stdout);
  return 0;
}

}  // namespace heapkit::pprof
