// CallGraph -> DOT text, pprof style.
//
//  - One box per node, id N<index+1> in CallGraph order (sorted by |flat|), label
//    "name\nflat (x%)\nof cum (y%)" (percentages of |total|); font size grows with
//    sqrt(|flat| / max |flat|) from 8 to 32 points, so the heavy allocators stand out.
//  - Edges caller -> callee labelled with their weight; penwidth 1..6 and layout weight grow
//    with |weight| / |total|; inlined calls are dashed, residual edges (dropped nodes between
//    caller and callee) dotted.
//  - Colour: plain profiles shade from grey (cold) to red (hot) by |cum| / |total|;
//    diffs (--base) shade red for growth (positive) and green for shrink (negative), intensity
//    by |value| / max |value|; with heapcheck, leak sites (flat != 0) get a thick red double
//    border.
//  - A legend box (shape=note) first: the caller's legend lines (program, type, totals, what was
//    dropped), left-justified.
// Every string is emitted through QuoteDot() (dot_escape.h). Output is deterministic (golden
// tests compare it byte for byte).
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/graph/call_graph.h"

namespace heapkit::pprof {

struct DotStyle {
  std::string title;                // graph name; "" -> "heapkit"
  std::vector<std::string> legend;  // legend lines; empty -> no legend node
  bool show_bytes = false;
  bool diff = false;       // --base: colour growth red, shrink green
  bool heapcheck = false;  // highlight leak sites
};

std::string WriteDot(const CallGraph& graph, const DotStyle& style);

// Colour helpers shared with the flame graph; `score` in [-1, 1] (sign = growth/shrink for
// diffs, magnitude = heat). Return "#rrggbb".
std::string HeatBorderColor(double score, bool diff);
std::string HeatFillColor(double score, bool diff);

}  // namespace heapkit::pprof
