// pprof-tool's picture outputs: the entry point the CLI calls (contract: report/render_request.h).
//
//   int heapkit::pprof::Render(const RenderRequest& request, std::string* error);
//
// Dispatch on request.format:
//   kDot               DOT text of the pruned call graph (dot_writer.h)
//   kSvg kPng kPdf kPs that DOT laid out and rendered in-process by libgvc (gvc_render.h)
//   kWeb               the SVG written to a fresh temp file (mkstemps, /tmp or $TMPDIR); prints
//                      "Call graph written to <path>" on stderr and, if $BROWSER is set, runs
//                      it on the file (never blocks on it); nothing else is opened implicitly
//   kFlameGraph        self-contained SVG flame graph of request.samples (flame_graph.h)
//   kIcicle            the same with the root at the top
// Output goes to request.output_path, or to stdout when it is "". Returns 0 on success;
// otherwise non-zero with one line (no "pprof-tool: " prefix, no newline) in *error, e.g. an
// unwritable output file or graphviz's missing plugin configuration (with the `dot -c` fix).
//
// Colouring: diffs (request.diff, or any negative value) are coloured growth=red /
// shrink=green; with request.heapcheck, nodes with a non-zero flat value - the leak sites - get a
// thick red double border. See README.md for the full picture.
#pragma once

#include <string>

#include "pprof-tool/report/render_request.h"

namespace heapkit::pprof {

int Render(const RenderRequest& request, std::string* error);

// The bytes Render would write, for every format but kWeb (which yields the SVG): the web UI
// (pprof-tool/web/) serves them. Returns false with one line in *error like Render.
bool RenderImage(const RenderRequest& request, std::string* image, std::string* error);

// The largest pruned graph handed to graphviz for layout (svg, png, pdf, ps, web). dot's layout
// grows faster than linearly: a 5,000-node chain takes ~4 s and 45 MB, 10,000 nodes ~20 s, and
// 100k-node graphs ran for minutes or out of memory. Above either bound Render refuses with one
// line that says how to shrink the graph; --dot and the flame graph have no bound.
inline constexpr size_t kMaxLayoutNodes = 5000;
inline constexpr size_t kMaxLayoutEdges = 25000;
// True when `graph` is within both bounds, else false with the one-line refusal in *error.
bool WithinLayoutLimits(const CallGraph& graph, std::string* error);

}  // namespace heapkit::pprof
