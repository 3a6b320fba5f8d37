#include <gtest/gtest.h>

#include <unistd.h>

#include "pprof-tool/cli/options.h"

namespace heapkit::pprof {
namespace {

int Parse(std::vector<const char*> args, CliOptions* o) {
  args.insert(args.begin(), "pprof-tool");
  return ParseCommandLine(int(args.size()), args.data(), o);
}

TEST(Options, GperftoolsAndGoSpellings) {
  CliOptions o;
  EXPECT_EQ(Parse({"--top=5", "--alloc_space", "--lines", "x.heap"}, &o), -1);
  EXPECT_EQ(o.report, ReportKind::kTop);
  EXPECT_EQ(o.top_n, 5);
  EXPECT_EQ(o.sample_type, SampleType::kAllocSpace);
  EXPECT_EQ(o.granularity, Granularity::kLines);
  EXPECT_EQ(o.profiles, (std::vector<std::string>{"x.heap"}));
  CliOptions g;
  EXPECT_EQ(Parse({"-top=7", "-inuse_objects", "-focus=foo", "a.heap", "b.heap"}, &g), -1);
  EXPECT_EQ(g.top_n, 7);
  EXPECT_EQ(g.sample_type, SampleType::kInuseObjects);
  EXPECT_EQ(g.focus, "foo");
  EXPECT_EQ(g.profiles.size(), 2u);  // not ELF: both are profiles
  CliOptions t;
  EXPECT_EQ(Parse({"--top", "a.heap"}, &t), -1);
  EXPECT_EQ(t.report, ReportKind::kTop);
  EXPECT_EQ(t.top_n, 0);
}

TEST(Options, ProgramDetectedByElfMagic) {
  CliOptions o;
  EXPECT_EQ(Parse({"/proc/self/exe", "a.heap"}, &o), -1);
  EXPECT_EQ(o.program, "/proc/self/exe");
  EXPECT_EQ(o.profiles, (std::vector<std::string>{"a.heap"}));
}

TEST(Options, RenderOptions) {
  CliOptions o;
  EXPECT_EQ(Parse({"--flamegraph=out.svg", "a.heap"}, &o), -1);
  EXPECT_EQ(o.report, ReportKind::kRender);
  EXPECT_EQ(o.render_format, RenderFormat::kFlameGraph);
  EXPECT_EQ(o.output, "out.svg");
  CliOptions s;
  EXPECT_EQ(Parse({"-svg", "-nodecount=20", "--output", "g.svg", "a.heap"}, &s), -1);
  EXPECT_EQ(s.render_format, RenderFormat::kSvg);
  EXPECT_EQ(s.nodecount, 20);
  EXPECT_EQ(s.output, "g.svg");
  EXPECT_DOUBLE_EQ(s.nodefraction, 0.005);
  EXPECT_DOUBLE_EQ(s.edgefraction, 0.001);
}

TEST(Options, ErrorsExitTwo) {
  testing::internal::CaptureStderr();
  CliOptions a, b, c, d, e;
  EXPECT_EQ(Parse({"--bogus", "a.heap"}, &a), 2);
  EXPECT_EQ(Parse({"--text", "--traces", "a.heap"}, &b), 2);
  EXPECT_EQ(Parse({}, &c), 2);
  EXPECT_EQ(Parse({"--nodefraction=2", "a.heap"}, &d), 2);
  EXPECT_EQ(Parse({"--inuse_space", "--alloc_space", "a.heap"}, &e), 2);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("pprof-tool: "), std::string::npos);
  EXPECT_NE(err.find("usage: pprof-tool"), std::string::npos);
}

}  // namespace
}  // namespace heapkit::pprof
