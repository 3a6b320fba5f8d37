#include "pprof-tool/render/dot_writer.h"

#include <graphviz/cgraph.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>

#include "synthetic.h"
#include "test_util.h"

namespace heapkit::pprof {
namespace {

using testing::ReadFile;

// Compares `actual` with testdata/<name>; HEAPKIT_UPDATE_GOLDEN=1 rewrites the file instead.
void ExpectGolden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(HEAPKIT_RENDER_TESTDATA) + "/" + name;
  const char* update = std::getenv("HEAPKIT_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    testing::WriteFile(path, actual);
    GTEST_SKIP() << "golden file updated: " << path;
  }
  const std::string expected = ReadFile(path);
  ASSERT_FALSE(expected.empty()) << "missing golden " << path
                                 << " (run with HEAPKIT_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(actual, expected) << "differs from " << path
                              << " (HEAPKIT_UPDATE_GOLDEN=1 updates it after a reviewed change)";
}

// Attribute `attr` of the DOT statement that starts with `head` (e.g. "N3 [" or "N1 -> N2 [").
std::string Attr(const std::string& dot, const std::string& head, const std::string& attr) {
  const size_t line = dot.find("\n" + head);
  if (line == std::string::npos) return "<no " + head + ">";
  const size_t end = dot.find('\n', line + 1);
  const std::string stmt = dot.substr(line + 1, end - line - 1);
  const std::regex re("[ \\[]" + attr + "=(\"(?:[^\"\\\\]|\\\\.)*\"|[^ \\]]+)");
  std::smatch m;
  if (!std::regex_search(stmt, m, re)) return "";
  std::string v = m[1];
  if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
  return v;
}

DotStyle Style() {
  DotStyle s;
  s.title = "synthetic";
  s.legend = testing::TestLegend();
  return s;
}

TEST(DotWriter, GoldenPlain) {
  ExpectGolden("plain.dot", WriteDot(testing::PlainGraph(), Style()));
}

TEST(DotWriter, GoldenDiff) {
  DotStyle s = Style();
  s.diff = true;
  ExpectGolden("diff.dot", WriteDot(testing::DiffGraph(), s));
}

TEST(DotWriter, GoldenHeapcheck) {
  DotStyle s = Style();
  s.heapcheck = true;
  s.show_bytes = true;
  ExpectGolden("heapcheck.dot", WriteDot(testing::LeakGraph(), s));
}

TEST(DotWriter, GraphvizParsesOutput) {
  for (const CallGraph& g : {testing::PlainGraph(), testing::DiffGraph(), testing::LeakGraph()}) {
    const std::string dot = WriteDot(g, Style());
    Agraph_t* parsed = agmemread(dot.c_str());
    ASSERT_NE(parsed, nullptr) << dot;
    EXPECT_EQ(agnnodes(parsed), static_cast<int>(g.nodes.size()) + 1);  // + legend
    EXPECT_EQ(agnedges(parsed), static_cast<int>(g.edges.size()));
    agclose(parsed);
  }
}

TEST(DotWriter, LabelsCarryFlatAndCum) {
  const CallGraph g = testing::PlainGraph();
  const std::string dot = WriteDot(g, Style());
  // Server::Handle: flat 100000 of cum 700000 out of 1048576.
  const std::string label = Attr(dot, "N4 [", "label");
  EXPECT_NE(label.find("Server::Handle(Request const&)\\n"), std::string::npos) << label;
  EXPECT_NE(label.find("(9.54%)\\nof "), std::string::npos) << label;
  EXPECT_NE(label.find("(66.76%)"), std::string::npos) << label;
  // main has no flat: "0" then "of" cum.
  EXPECT_NE(Attr(dot, "N6 [", "label").find("main\\n0\\nof "), std::string::npos);
}

TEST(DotWriter, FontSizeGrowsWithFlat) {
  const std::string dot = WriteDot(testing::PlainGraph(), Style());
  const int biggest = std::stoi(Attr(dot, "N1 [", "fontsize"));
  const int middle = std::stoi(Attr(dot, "N4 [", "fontsize"));
  const int none = std::stoi(Attr(dot, "N6 [", "fontsize"));
  EXPECT_EQ(biggest, 32);
  EXPECT_GT(biggest, middle);
  EXPECT_GT(middle, none);
  EXPECT_EQ(none, 8);
}

TEST(DotWriter, EdgeStyles) {
  const std::string dot = WriteDot(testing::PlainGraph(), Style());
  EXPECT_EQ(Attr(dot, "N4 -> N1 [", "style"), "dashed");  // inlined push_back
  EXPECT_EQ(Attr(dot, "N6 -> N2 [", "style"), "dotted");  // residual
  EXPECT_EQ(Attr(dot, "N6 -> N4 [", "style"), "");        // plain call
  EXPECT_GT(std::stod(Attr(dot, "N6 -> N4 [", "penwidth")),
            std::stod(Attr(dot, "N3 -> N5 [", "penwidth")));
  EXPECT_NE(Attr(dot, "N4 -> N1 [", "label").find("(inline)"), std::string::npos);
}

TEST(DotWriter, LegendListsDroppedNodesAndEdges) {
  const std::string dot = WriteDot(testing::PlainGraph(), Style());
  const std::string legend = Attr(dot, "subgraph cluster_L { peripheries=0 \"legend\" [", "label");
  EXPECT_NE(legend.find("File: synthetic\\l"), std::string::npos) << dot;
  EXPECT_NE(legend.find("Dropped 3 nodes (cum <= 5.1kB)\\l"), std::string::npos);
  EXPECT_NE(legend.find("Dropped 2 edges"), std::string::npos);
}

int Red(const std::string& hex) { return std::stoi(hex.substr(1, 2), nullptr, 16); }
int Green(const std::string& hex) { return std::stoi(hex.substr(3, 2), nullptr, 16); }

TEST(DotWriter, DiffColoursGrowthRedShrinkGreen) {
  DotStyle s = Style();
  s.diff = true;
  const std::string dot = WriteDot(testing::DiffGraph(), s);
  const std::string grow = Attr(dot, "N1 [", "color");    // Cache::Grow +300000
  const std::string shrink = Attr(dot, "N2 [", "color");  // Pool::Release -500000
  EXPECT_GT(Red(grow), Green(grow)) << grow;
  EXPECT_GT(Green(shrink), Red(shrink)) << shrink;
  EXPECT_NE(Attr(dot, "N2 [", "label").find("(-"), std::string::npos);  // negative percent
}

TEST(DotWriter, HeapcheckMarksOnlyLeakSites) {
  DotStyle s = Style();
  s.heapcheck = true;
  const std::string dot = WriteDot(testing::LeakGraph(), s);
  EXPECT_EQ(Attr(dot, "N1 [", "peripheries"), "2");  // LeakyAlloc
  EXPECT_EQ(Attr(dot, "N2 [", "peripheries"), "2");  // MakeNode
  EXPECT_EQ(Attr(dot, "N3 [", "peripheries"), "");   // Build: only cum
  EXPECT_EQ(Attr(dot, "N1 [", "color"), "#e00000");
  s.heapcheck = false;
  EXPECT_EQ(Attr(WriteDot(testing::LeakGraph(), s), "N1 [", "peripheries"), "");
}

TEST(DotWriter, EmptyGraphIsValid) {
  const std::string dot = WriteDot(CallGraph{}, DotStyle{});
  Agraph_t* parsed = agmemread(dot.c_str());
  ASSERT_NE(parsed, nullptr) << dot;
  EXPECT_EQ(agnnodes(parsed), 0);
  agclose(parsed);
}

}  // namespace
}  // namespace heapkit::pprof
