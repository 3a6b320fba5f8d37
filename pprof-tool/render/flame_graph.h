// StackSamples -> a self-contained SVG flame graph (no external scripts, fonts or network).
//
// Model: the samples are merged into a tree of call paths rooted at "all" (frames root first,
// same function on two different paths = two frames). Every tree node keeps
//   width = sum |value| of the samples through it   (so --base diffs with negative values still
//                                                     get a sensible, non-negative width)
//   net   = sum value                                 (growth > 0 > shrink for diffs)
// Siblings are ordered by name, so the picture is stable between runs. A frame is drawn at
//   x = pad + offset / width(root) * (image width - 2 pad),  one row (16 px) per depth;
// flame orientation puts the root at the bottom, icicle at the top. Frames narrower than
// min_frame_px are not drawn (nor, necessarily, their children: a frame is never wider than its
// caller), as flamegraph.pl's --minwidth (default 0.1 px, ours too); a legend line then says how
// many were left out. Totals stay exact: a drawn frame's width and hover value include its
// undrawn callees, the root is the whole profile; only zooming into a frame shows the gaps
// (and "Search" counts drawn frames only).
//
// Speed: the tree comes from flame_tree.h (sorted stacks, merged prefixes), names and colours
// are made once per distinct function, and the SVG is appended to one reserved string; the web
// UI answers the 12,000-stack benchmark picture in ~0.1 s (tests/bench/pprof/RESULTS.md).
//
// Colours: plain profiles use a warm palette keyed by a hash (FNV-1a) of the function name, so
// a function has the same colour in every graph; diffs colour each frame by net / max |net|:
// red for growth, green for shrink, grey for no net change.
//
// The inline script (CDATA) gives: hover details (function, value, percent) in the status
// line plus <title> tooltips; click a frame to zoom into it, "Reset Zoom" / Escape to go back;
// "Search" (or Ctrl-F) highlights frames matching a regular expression and shows the matched
// share. Each frame is <g class="f" data-n=name data-d=depth data-o=offset data-v=width>
// holding <title>, <rect> and <text> (the name truncated to fit the box, ".." marking a cut).
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/stack_samples.h"

namespace heapkit::pprof {

struct FlameGraphOptions {
  std::string title = "Flame Graph";
  std::vector<std::string> legend;  // shown under the title (program, type, ...)
  bool icicle = false;              // root at the top
  bool diff = false;                // colour by growth/shrink instead of by name
  bool show_bytes = false;
  int width = 1200;  // image width in px
  double min_frame_px = 0.1;
};

std::string WriteFlameGraphSvg(const StackSamples& samples, const FlameGraphOptions& options);

// Exposed for tests: the stable per-function colour ("#rrggbb") of the plain palette.
std::string FlameColorForName(std::string_view name);

// XML text/attribute escaping (& < > " '), with invalid UTF-8 and control characters replaced.
std::string EscapeXml(std::string_view text);

// The same for multi-line text (reports in <pre>, hover texts): each line escaped, '\n' kept.
std::string EscapeXmlLines(std::string_view text);

}  // namespace heapkit::pprof
