// The call graph built from StackSamples (model/stack_samples.h), pruned like pprof:
//   1. nodes with |cum| < node_fraction * |total| are dropped;
//   2. of the rest, the node_count nodes with the largest |cum| are kept (ties: by name);
//   3. the graph is rebuilt from the samples using only kept nodes: consecutive kept frames
//      of a stack give an edge caller -> callee; if dropped frames lay between them the edge
//      is `residual` (drawn dotted by pprof);
//   4. edges with |weight| < edge_fraction * |total| are dropped.
// flat(n) = sum of values of samples whose leaf frame is n (a sample whose leaf was dropped
// contributes to no node's flat, only to the cum of its kept frames).
// cum(n) = sum of values of samples in which n appears (counted once per sample, recursion-safe).
// Edge weight likewise counts each (caller, callee) pair once per sample.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pprof-tool/model/stack_samples.h"

namespace heapkit::pprof {

// The header's total line: "Showing nodes accounting for X, P% of T total", then, when the
// total is a sampled estimate, " (± S at 95 %)" and for a difference whether it is beyond
// its noise.
std::string ShowingTotalLine(double shown, double total, double total_variance, ValueUnit unit,
                             bool show_bytes, bool difference);

struct GraphOptions {
  int node_count = 80;           // --nodecount; <= 0 means unlimited
  double node_fraction = 0.005;  // --nodefraction
  double edge_fraction = 0.001;  // --edgefraction
  // --drop_negative: leave out nodes that went down (flat < 0, or flat == 0 and cum < 0: go
  // pprof's rule), before the fractions and the count apply.
  bool drop_negative = false;
};

struct GraphNode {
  NodeInfo info;
  uint32_t sample_node = 0;  // index into StackSamples::nodes
  double flat = 0;
  double cum = 0;
  double flat_variance = 0;  // sampling variances of flat and cum (model/estimate.h)
  double cum_variance = 0;
  std::vector<uint32_t> in_edges;   // indexes into CallGraph::edges (callers)
  std::vector<uint32_t> out_edges;  // indexes into CallGraph::edges (callees)
};

struct GraphEdge {
  uint32_t caller = 0;  // index into CallGraph::nodes
  uint32_t callee = 0;  // index into CallGraph::nodes
  double weight = 0;
  bool inlined = false;   // the callee was inlined into the caller at (some of) these calls
  bool residual = false;  // dropped nodes lay between caller and callee
};

struct CallGraph {
  std::vector<GraphNode> nodes;  // sorted by |flat| descending, then |cum|, then name
  std::vector<GraphEdge> edges;  // sorted by |weight| descending
  double total = 0;              // StackSamples::total
  double total_variance = 0;     // StackSamples::total_variance
  ValueUnit unit = ValueUnit::kBytes;

  // What pruning removed (for the legend: "Dropped 12 nodes (cum <= 1.2kB)").
  int dropped_nodes = 0;  // by node_fraction (node_count drops: nodes_over_cutoff - nodes.size())
  double dropped_node_cutoff = 0;  // the cum cutoff used by node_fraction
  int dropped_edges = 0;
  double dropped_edge_cutoff = 0;
  double kept_flat = 0;  // sum of flat of kept nodes ("Showing nodes accounting for")
  double kept_flat_variance = 0;
  int total_nodes = 0;        // nodes before pruning ("Showing top 80 nodes out of 312")
  int nodes_over_cutoff = 0;  // nodes left after node_fraction, before node_count

  // Builds the full (unpruned when options are all zero) graph and prunes it.
  static CallGraph Build(const StackSamples& samples, const GraphOptions& options);

  // Legend lines in pprof's wording: "Showing nodes accounting for X, Y% of Z total",
  // "Dropped N nodes (cum <= C)", "Dropped M edges (freq <= E)".
  std::vector<std::string> LegendLines(bool show_bytes) const;
};

}  // namespace heapkit::pprof
