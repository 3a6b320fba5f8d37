#include <gtest/gtest.h>

#include "pprof-tool/graph/call_graph.h"

namespace heapkit::pprof {
namespace {

// Nodes: 0 main, 1 a, 2 b, 3 leaf, 4 tiny
StackSamples Make() {
  StackSamples s;
  for (const char* n : {"main", "a", "b", "leaf", "tiny"}) {
    NodeInfo i;
    i.name = n;
    s.nodes.push_back(i);
  }
  s.samples.push_back({{{3, false}, {1, false}, {0, false}}, 600});  // main->a->leaf
  s.samples.push_back({{{3, true}, {2, false}, {0, false}}, 300});   // main->b->leaf (inlined)
  s.samples.push_back({{{2, false}, {0, false}}, 99});               // main->b
  s.samples.push_back({{{4, false}, {0, false}}, 1});                // main->tiny
  s.samples.push_back({{{1, false}, {1, false}, {0, false}}, 10});   // recursion a->a
  s.total = 1010;
  return s;
}

const GraphNode* Find(const CallGraph& g, const std::string& name) {
  for (const GraphNode& n : g.nodes)
    if (n.info.name == name) return &n;
  return nullptr;
}

TEST(CallGraph, FlatCumEdgesUnpruned) {
  GraphOptions o{0, 0, 0};
  CallGraph g = CallGraph::Build(Make(), o);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[0].info.name, "leaf");  // sorted by flat
  EXPECT_EQ(Find(g, "leaf")->flat, 900);
  EXPECT_EQ(Find(g, "main")->cum, 1010);
  EXPECT_EQ(Find(g, "main")->flat, 0);
  EXPECT_EQ(Find(g, "a")->cum, 610);  // recursion counted once per sample
  EXPECT_EQ(Find(g, "a")->flat, 10);
  bool saw_inline = false;
  for (const GraphEdge& e : g.edges) {
    if (g.nodes[e.caller].info.name == "b" && g.nodes[e.callee].info.name == "leaf") {
      EXPECT_TRUE(e.inlined);
      EXPECT_EQ(e.weight, 300);
      saw_inline = true;
    }
    if (g.nodes[e.caller].info.name == "a" && g.nodes[e.callee].info.name == "a") {
      EXPECT_EQ(e.weight, 10);
    }
    EXPECT_FALSE(e.residual);
  }
  EXPECT_TRUE(saw_inline);
  EXPECT_EQ(g.kept_flat, 1010);
}

TEST(CallGraph, PruningReportsWhatWasDropped) {
  GraphOptions o{3, 0.005, 0.2};
  CallGraph g = CallGraph::Build(Make(), o);
  // tiny (cum 1 <= 5.05) dropped by fraction; then top 3 by cum: main, leaf, a (b: 399).
  EXPECT_EQ(g.dropped_nodes, 1);
  EXPECT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes_over_cutoff, 4);
  EXPECT_EQ(g.total_nodes, 5);
  EXPECT_EQ(Find(g, "b"), nullptr);
  // main -> leaf now residual through dropped b (300), below edge cutoff 202? no: 300 > 202.
  bool residual = false;
  for (const GraphEdge& e : g.edges) {
    EXPECT_GT(e.weight, 0.2 * 1010);
    if (e.residual) residual = true;
  }
  EXPECT_TRUE(residual);
  EXPECT_GT(g.dropped_edges, 0);
  auto legend = g.LegendLines(false);
  ASSERT_GE(legend.size(), 3u);
  EXPECT_NE(legend[0].find("Showing nodes accounting for"), std::string::npos);
  EXPECT_NE(legend[1].find("Dropped 1 nodes"), std::string::npos);
}

TEST(CallGraph, NegativeValuesFromBase) {
  StackSamples s;
  NodeInfo f;
  f.name = "f";
  s.nodes.push_back(f);
  s.samples.push_back({{{0, false}}, -50});
  s.total = -50;
  CallGraph g = CallGraph::Build(s, GraphOptions{});
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].flat, -50);
}

}  // namespace
}  // namespace heapkit::pprof
