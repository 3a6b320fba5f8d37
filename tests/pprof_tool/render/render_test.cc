// The Render() entry point as the CLI calls it: every format to a file, stdout, --web, errors.
#include "pprof-tool/render/render.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include "pprof-tool/render/dot_writer.h"
#include "synthetic.h"
#include "test_util.h"

namespace heapkit::pprof {
namespace {

class RenderEntry : public ::testing::Test {
 protected:
  RenderEntry()
      : samples_(testing::SamplesBuilder()
                     .Type("inuse_space")
                     .Add({"leaf", "Server::Handle(Request const&)", "main"}, 700)
                     .Add({"other", "main"}, 300)
                     .Build()),
        graph_(testing::PlainGraph()) {
    samples_.description = {"File: synthetic", "Type: inuse_space"};
  }
  RenderRequest Request(RenderFormat format, const std::string& output) {
    RenderRequest r;
    r.format = format;
    r.output_path = output;
    r.samples = &samples_;
    r.graph = &graph_;
    r.title = "synthetic";
    r.legend = testing::TestLegend();
    return r;
  }
  StackSamples samples_;
  CallGraph graph_;
  testing::TempDir dir_;
};

TEST_F(RenderEntry, DotToFileMatchesTheWriter) {
  std::string error;
  ASSERT_EQ(Render(Request(RenderFormat::kDot, dir_.File("g.dot")), &error), 0) << error;
  DotStyle style;
  style.title = "synthetic";
  style.legend = testing::TestLegend();
  EXPECT_EQ(testing::ReadFile(dir_.File("g.dot")), WriteDot(graph_, style));
}

TEST_F(RenderEntry, DotToStdout) {
  std::string error;
  ::testing::internal::CaptureStdout();
  const int rc = Render(Request(RenderFormat::kDot, ""), &error);
  const std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0) << error;
  EXPECT_EQ(out.rfind("digraph \"synthetic\" {", 0), 0u) << out.substr(0, 100);
}

TEST_F(RenderEntry, EveryImageFormatToFile) {
  struct {
    RenderFormat format;
    const char* file;
    std::string magic;
  } cases[] = {{RenderFormat::kSvg, "g.svg", "<?xml"},
               {RenderFormat::kPng, "g.png", std::string("\x89PNG", 4)},
               {RenderFormat::kPdf, "g.pdf", "%PDF-"},
               {RenderFormat::kPs, "g.ps", "%!PS-Adobe-"},
               {RenderFormat::kFlameGraph, "f.svg", "<?xml"},
               {RenderFormat::kIcicle, "i.svg", "<?xml"}};
  for (const auto& c : cases) {
    std::string error;
    ASSERT_EQ(Render(Request(c.format, dir_.File(c.file)), &error), 0) << c.file << ": " << error;
    const std::string bytes = testing::ReadFile(dir_.File(c.file));
    EXPECT_EQ(bytes.substr(0, c.magic.size()), c.magic) << c.file;
    EXPECT_GT(bytes.size(), 1000u) << c.file;
  }
  const std::string flame = testing::ReadFile(dir_.File("f.svg"));
  EXPECT_NE(flame.find("Flame Graph: synthetic"), std::string::npos);
  EXPECT_NE(flame.find("Server::Handle(Request const&amp;)"), std::string::npos);
  EXPECT_NE(testing::ReadFile(dir_.File("g.svg")).find("Server::Handle"), std::string::npos);
}

TEST_F(RenderEntry, WebWritesATempSvgAndSaysWhere) {
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved_tmp = old_tmp ? old_tmp : "";
  const char* old_browser = std::getenv("BROWSER");
  const std::string saved_browser = old_browser ? old_browser : "";
  ::setenv("TMPDIR", dir_.path().c_str(), 1);
  ::setenv("BROWSER", "true", 1);  // a "browser" that exits at once
  std::string error;
  ::testing::internal::CaptureStdout();
  const int rc = Render(Request(RenderFormat::kWeb, ""), &error);
  const std::string out = ::testing::internal::GetCapturedStdout();
  old_tmp ? ::setenv("TMPDIR", saved_tmp.c_str(), 1) : ::unsetenv("TMPDIR");
  old_browser ? ::setenv("BROWSER", saved_browser.c_str(), 1) : ::unsetenv("BROWSER");
  ASSERT_EQ(rc, 0) << error;
  const std::string prefix = "Call graph written to " + dir_.path() + "/pprof-tool-";
  ASSERT_EQ(out.rfind(prefix, 0), 0u) << out;
  const std::string path = out.substr(22, out.find(".svg") + 4 - 22);
  EXPECT_TRUE(std::filesystem::exists(path)) << path;
  EXPECT_NE(testing::ReadFile(path).find("<svg"), std::string::npos);
}

TEST_F(RenderEntry, UnwritableOutputIsOneLineNamingTheFile) {
  for (RenderFormat f : {RenderFormat::kDot, RenderFormat::kSvg, RenderFormat::kFlameGraph}) {
    std::string error;
    EXPECT_NE(Render(Request(f, "/nonexistent-dir/x.out"), &error), 0);
    EXPECT_NE(error.find("/nonexistent-dir/x.out"), std::string::npos) << error;
    EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

TEST_F(RenderEntry, NegativeValuesSwitchToDiffColours) {
  StackSamples diff =
      testing::SamplesBuilder().Add({"grow", "main"}, 100).Add({"shrink", "main"}, -300).Build();
  CallGraph graph = testing::DiffGraph();
  RenderRequest r = Request(RenderFormat::kFlameGraph, dir_.File("d.svg"));
  r.samples = &diff;
  r.graph = &graph;
  std::string error;
  ASSERT_EQ(Render(r, &error), 0) << error;
  EXPECT_NE(testing::ReadFile(dir_.File("d.svg")).find("net change"), std::string::npos);
  r.format = RenderFormat::kDot;
  r.output_path = dir_.File("d.dot");
  ASSERT_EQ(Render(r, &error), 0) << error;
  DotStyle style;
  style.title = "synthetic";
  style.legend = testing::TestLegend();
  style.diff = true;
  EXPECT_EQ(testing::ReadFile(dir_.File("d.dot")), WriteDot(graph, style));
}

// A graph past the layout bound is refused with one line before graphviz sees it (a 120k-node
// chain ran for minutes); the same graph still goes out as DOT.
CallGraph Chain(size_t nodes) {
  testing::GraphBuilder b(1e6);
  for (size_t i = 0; i < nodes; ++i) b.Node("f" + std::to_string(i), 1, double(nodes - i));
  for (size_t i = 0; i + 1 < nodes; ++i)
    b.Edge("f" + std::to_string(i), "f" + std::to_string(i + 1), 1);
  return b.Build();
}

TEST_F(RenderEntry, GraphsPastTheLayoutBoundAreRefused) {
  const CallGraph big = Chain(kMaxLayoutNodes + 1);
  RenderRequest r = Request(RenderFormat::kSvg, dir_.File("big.svg"));
  r.graph = &big;
  std::string error;
  EXPECT_NE(Render(r, &error), 0);
  EXPECT_NE(error.find("the call graph has 5001 nodes and 5000 edges, more than graphviz lays out"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_.File("big.svg")));
  r.format = RenderFormat::kDot;
  r.output_path = dir_.File("big.dot");
  EXPECT_EQ(Render(r, &error), 0) << error;
}

TEST_F(RenderEntry, EdgeBoundToo) {
  testing::GraphBuilder b(1e6);
  const size_t n = 200;  // 200 x 199 edges > kMaxLayoutEdges, few nodes
  for (size_t i = 0; i < n; ++i) b.Node("g" + std::to_string(i), 1, 1);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j) b.Edge("g" + std::to_string(i), "g" + std::to_string(j), 1);
  const CallGraph dense = b.Build();
  std::string error;
  EXPECT_FALSE(WithinLayoutLimits(dense, &error));
  EXPECT_NE(error.find("39800 edges"), std::string::npos) << error;
  EXPECT_TRUE(WithinLayoutLimits(Chain(kMaxLayoutNodes), &error));
}

}  // namespace
}  // namespace heapkit::pprof
