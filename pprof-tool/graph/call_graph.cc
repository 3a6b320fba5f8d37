#include "pprof-tool/graph/call_graph.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "pprof-tool/model/estimate.h"

namespace heapkit::pprof {

namespace {

// Each node's flat and cum (a node counted once per sample), and the nodes some sample has.
struct NodeValues {
  std::vector<double> flat, cum;
  std::vector<double> flat_variance, cum_variance;  // samples are independent: variances add
  std::vector<uint32_t> present;
};

NodeValues ComputeNodeValues(const StackSamples& samples) {
  const size_t n = samples.nodes.size();
  NodeValues v;
  v.flat.assign(n, 0);
  v.cum.assign(n, 0);
  v.flat_variance.assign(n, 0);
  v.cum_variance.assign(n, 0);
  std::vector<size_t> stamp(n, SIZE_MAX);
  for (size_t si = 0; si < samples.samples.size(); ++si) {
    const StackSample& s = samples.samples[si];
    if (s.frames.empty()) continue;
    v.flat[s.frames[0].node] += s.value;
    v.flat_variance[s.frames[0].node] += s.variance;
    for (const StackFrame& f : s.frames) {
      if (stamp[f.node] != si) {
        stamp[f.node] = si;
        v.cum[f.node] += s.value;
        v.cum_variance[f.node] += s.variance;
      }
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (stamp[i] != SIZE_MAX) v.present.push_back(i);
  }
  return v;
}

// node_fraction, then node_count by |cum|; the kept nodes in their final order (|flat| desc,
// |cum| desc, label). Counts what was dropped in *g.
std::vector<uint32_t> KeptNodes(const StackSamples& samples, const NodeValues& v,
                                const GraphOptions& options, CallGraph* g) {
  const std::vector<double>& flat = v.flat;
  const std::vector<double>& cum = v.cum;
  g->dropped_node_cutoff =
      options.node_fraction > 0 ? options.node_fraction * std::fabs(g->total) : 0;
  std::vector<uint32_t> candidates;
  for (uint32_t i : v.present) {
    if (options.drop_negative && (flat[i] < 0 || (flat[i] == 0 && cum[i] < 0))) continue;
    if (g->dropped_node_cutoff > 0 && std::fabs(cum[i]) <= g->dropped_node_cutoff) {
      ++g->dropped_nodes;
      continue;
    }
    candidates.push_back(i);
  }
  g->nodes_over_cutoff = int(candidates.size());
  std::sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    if (std::fabs(cum[a]) != std::fabs(cum[b])) return std::fabs(cum[a]) > std::fabs(cum[b]);
    if (std::fabs(flat[a]) != std::fabs(flat[b])) return std::fabs(flat[a]) > std::fabs(flat[b]);
    return samples.nodes[a].Label() < samples.nodes[b].Label();
  });
  if (options.node_count > 0 && candidates.size() > size_t(options.node_count)) {
    candidates.resize(size_t(options.node_count));
  }
  std::sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
    if (std::fabs(flat[a]) != std::fabs(flat[b])) return std::fabs(flat[a]) > std::fabs(flat[b]);
    if (std::fabs(cum[a]) != std::fabs(cum[b])) return std::fabs(cum[a]) > std::fabs(cum[b]);
    return samples.nodes[a].Label() < samples.nodes[b].Label();
  });
  return candidates;
}

// Edges between kept nodes (graph_index >= 0), rebuilt from the samples.
void AddEdges(const StackSamples& samples, const std::vector<int>& graph_index, CallGraph* g) {
  std::unordered_map<uint64_t, uint32_t> edge_index;
  std::unordered_map<uint64_t, size_t> edge_stamp;
  for (size_t si = 0; si < samples.samples.size(); ++si) {
    const StackSample& s = samples.samples[si];
    int prev = -1;  // graph index of the last kept frame (callee side)
    size_t prev_pos = 0;
    bool skipped = false;  // dropped frames since prev
    for (size_t k = 0; k < s.frames.size(); ++k) {
      int gi = graph_index[s.frames[k].node];
      if (gi < 0) {
        skipped = true;
        continue;
      }
      if (prev >= 0) {
        uint64_t key = (uint64_t(uint32_t(gi)) << 32) | uint32_t(prev);
        auto [it, inserted] = edge_index.emplace(key, uint32_t(g->edges.size()));
        if (inserted) {
          GraphEdge e;
          e.caller = uint32_t(gi);
          e.callee = uint32_t(prev);
          g->edges.push_back(e);
        }
        GraphEdge& e = g->edges[it->second];
        auto [st, fresh] = edge_stamp.emplace(key, si);
        if (fresh || st->second != si) {
          st->second = si;
          e.weight += s.value;
        }
        if (skipped)
          e.residual = true;
        else if (s.frames[prev_pos].inlined)
          e.inlined = true;
      }
      prev = gi;
      prev_pos = k;
      skipped = false;
    }
  }
}

// edge_fraction; the edges left sorted and linked to their nodes.
void PruneEdges(const GraphOptions& options, CallGraph* g) {
  g->dropped_edge_cutoff =
      options.edge_fraction > 0 ? options.edge_fraction * std::fabs(g->total) : 0;
  std::vector<GraphEdge> edges;
  for (const GraphEdge& e : g->edges) {
    if (g->dropped_edge_cutoff > 0 && std::fabs(e.weight) <= g->dropped_edge_cutoff) {
      ++g->dropped_edges;
      continue;
    }
    edges.push_back(e);
  }
  std::sort(edges.begin(), edges.end(), [](const GraphEdge& a, const GraphEdge& b) {
    if (std::fabs(a.weight) != std::fabs(b.weight))
      return std::fabs(a.weight) > std::fabs(b.weight);
    if (a.caller != b.caller) return a.caller < b.caller;
    return a.callee < b.callee;
  });
  g->edges = std::move(edges);
  for (uint32_t i = 0; i < g->edges.size(); ++i) {
    g->nodes[g->edges[i].caller].out_edges.push_back(i);
    g->nodes[g->edges[i].callee].in_edges.push_back(i);
  }
}

}  // namespace

CallGraph CallGraph::Build(const StackSamples& samples, const GraphOptions& options) {
  CallGraph g;
  g.total = samples.total;
  g.total_variance = samples.total_variance;
  g.unit = samples.unit;
  const NodeValues values = ComputeNodeValues(samples);  // 1. flat and cum
  g.total_nodes = int(values.present.size());
  std::vector<int> graph_index(samples.nodes.size(), -1);
  for (uint32_t i : KeptNodes(samples, values, options, &g)) {  // 2. node pruning
    graph_index[i] = int(g.nodes.size());
    GraphNode node;
    node.info = samples.nodes[i];
    node.sample_node = i;
    node.flat = values.flat[i];
    node.cum = values.cum[i];
    node.flat_variance = values.flat_variance[i];
    node.cum_variance = values.cum_variance[i];
    g.kept_flat += values.flat[i];
    g.kept_flat_variance += values.flat_variance[i];
    g.nodes.push_back(std::move(node));
  }
  AddEdges(samples, graph_index, &g);  // 3. edges between kept nodes
  PruneEdges(options, &g);             // 4. edge pruning
  return g;
}

std::string ShowingTotalLine(double shown, double total, double total_variance, ValueUnit unit,
                             bool show_bytes, bool difference) {
  std::string line = "Showing nodes accounting for " + FormatValue(shown, unit, show_bytes) + ", " +
                     FormatPercent(shown, total) + " of " + FormatValue(total, unit, show_bytes) +
                     " total";
  if (total_variance > 0) {
    line += " (" + FormatInterval(total_variance, unit, show_bytes) + " at 95 %";
    if (difference) {
      line += IsSignificant(total, total_variance)
                  ? std::string(total > 0 ? ": significant growth" : ": significant decrease")
                  : ": within sampling noise";
    }
    line += ")";
  }
  return line;
}

std::vector<std::string> CallGraph::LegendLines(bool show_bytes) const {
  std::vector<std::string> out;
  out.push_back(ShowingTotalLine(kept_flat, total, total_variance, unit, show_bytes, false));
  if (dropped_nodes > 0) {
    out.push_back("Dropped " + std::to_string(dropped_nodes) +
                  " nodes (cum <= " + FormatValue(dropped_node_cutoff, unit, show_bytes) + ")");
  }
  if (dropped_edges > 0) {
    out.push_back("Dropped " + std::to_string(dropped_edges) +
                  " edges (freq <= " + FormatValue(dropped_edge_cutoff, unit, show_bytes) + ")");
  }
  if (int(nodes.size()) < nodes_over_cutoff) {
    out.push_back("Showing top " + std::to_string(nodes.size()) + " nodes out of " +
                  std::to_string(total_nodes));
  }
  return out;
}

}  // namespace heapkit::pprof
