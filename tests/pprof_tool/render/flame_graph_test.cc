#include "pprof-tool/render/flame_graph.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "pprof-tool/render/dot_escape.h"
#include "synthetic.h"
#include "test_util.h"

namespace heapkit::pprof {
namespace {

struct Frame {
  int depth;
  double x, width, y;
  std::string fill, text, name, title;
};

// Writes the SVG, parses it with python's xml.etree and returns its frames.
std::vector<Frame> Frames(const std::string& svg) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("f.svg"), svg);
  int status = 0;
  const std::string report = testing::Probe("frames", dir.File("f.svg"), &status);
  EXPECT_EQ(status, 0) << report;
  std::vector<Frame> frames;
  for (const std::string& line : testing::Split(report, '\n')) {
    const std::vector<std::string> f = testing::Split(line + "\t", '\t');
    if (f.size() < 8) {
      ADD_FAILURE() << "bad probe line: " << line;
      continue;
    }
    frames.push_back({std::stoi(f[0]), std::stod(f[1]), std::stod(f[2]), std::stod(f[3]), f[4],
                      f[5], f[6], f[7]});
  }
  return frames;
}

const Frame* Find(const std::vector<Frame>& frames, const std::string& name, int depth) {
  for (const Frame& f : frames) {
    if (f.name == name && f.depth == depth) return &f;
  }
  return nullptr;
}

// What an XML parser gives back for `name` after EscapeXml: invalid UTF-8 as '?', control
// characters as spaces.
std::string SanitizeUtf8Name(const std::string& name) {
  std::string out = SanitizeUtf8(name);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = ' ';
  }
  return out;
}

StackSamples Basic() {
  return testing::SamplesBuilder()
      .Type("inuse_space")
      .Add({"malloc_wrapper", "A::alloc", "main"}, 600)
      .Add({"B::grow", "main"}, 300)
      .Add({"C::tiny", "B::grow", "main"}, 100)
      .Build();
}

class FlameGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::HavePython()) GTEST_SKIP() << "python3 with xml.etree not available";
  }
};

TEST_F(FlameGraph, OneRectPerFrameWithWidthsProportionalToValues) {
  FlameGraphOptions o;
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(Basic(), o));
  ASSERT_EQ(frames.size(), 6u);      // all, main, A::alloc, malloc_wrapper, B::grow, C::tiny
  const double span = o.width - 20;  // 10 px padding each side
  struct Want {
    const char* name;
    int depth;
    double offset, value;
  } wants[] = {{"all", 0, 0, 1000},           {"main", 1, 0, 1000},     {"A::alloc", 2, 0, 600},
               {"malloc_wrapper", 3, 0, 600}, {"B::grow", 2, 600, 400}, {"C::tiny", 3, 600, 100}};
  for (const Want& w : wants) {
    const Frame* f = Find(frames, w.name, w.depth);
    ASSERT_NE(f, nullptr) << w.name;
    EXPECT_NEAR(f->width, w.value / 1000 * span, 0.011) << w.name;
    EXPECT_NEAR(f->x, 10 + w.offset / 1000 * span, 0.011) << w.name;
  }
  EXPECT_NE(Find(frames, "A::alloc", 2)->title.find("60.00%"), std::string::npos)
      << Find(frames, "A::alloc", 2)->title;
  EXPECT_NE(Find(frames, "A::alloc", 2)->title.find("inuse_space"), std::string::npos);
}

TEST_F(FlameGraph, FlameAndIcicleOrientation) {
  FlameGraphOptions o;
  const std::vector<Frame> flame = Frames(WriteFlameGraphSvg(Basic(), o));
  EXPECT_GT(Find(flame, "all", 0)->y, Find(flame, "main", 1)->y);  // root at the bottom
  o.icicle = true;
  const std::vector<Frame> icicle = Frames(WriteFlameGraphSvg(Basic(), o));
  EXPECT_LT(Find(icicle, "all", 0)->y, Find(icicle, "main", 1)->y);  // root at the top
  EXPECT_LT(Find(icicle, "main", 1)->y, Find(icicle, "C::tiny", 3)->y);
}

TEST_F(FlameGraph, ColoursAreStablePerFunction) {
  const std::vector<Frame> a = Frames(WriteFlameGraphSvg(Basic(), {}));
  const StackSamples other = testing::SamplesBuilder()
                                 .Add({"B::grow", "zzz", "main"}, 5)
                                 .Add({"D::other", "main"}, 7)
                                 .Build();
  const std::vector<Frame> b = Frames(WriteFlameGraphSvg(other, {}));
  EXPECT_EQ(Find(a, "B::grow", 2)->fill, Find(b, "B::grow", 3)->fill);
  EXPECT_EQ(Find(a, "main", 1)->fill, Find(b, "main", 1)->fill);
  EXPECT_EQ(Find(a, "main", 1)->fill, FlameColorForName("main"));
  std::map<std::string, int> distinct;
  for (const Frame& f : a) distinct[f.fill]++;
  EXPECT_GE(distinct.size(), 4u);  // different names, (almost surely) different colours
}

TEST_F(FlameGraph, TextIsTruncatedToFitItsBox) {
  std::string long_name(300, 'x');
  long_name = "ns::" + long_name;
  const StackSamples s = testing::SamplesBuilder()
                             .Add({long_name, "main"}, 50)
                             .Add({"short_sibling_function_name", "main"}, 3)
                             .Build();
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(s, {}));
  for (const Frame& f : frames) {
    EXPECT_LE(f.text.size() * 7.2, f.width - 6 + 1e-9) << f.name << " / " << f.text;
    if (f.text.size() >= 2 && f.text.substr(f.text.size() - 2) == "..") {
      EXPECT_EQ(f.name.substr(0, f.text.size() - 2), f.text.substr(0, f.text.size() - 2));
    } else if (!f.text.empty()) {
      EXPECT_EQ(f.text, f.name);
    }
  }
  const Frame* big = Find(frames, long_name, 2);
  ASSERT_NE(big, nullptr);
  EXPECT_GT(big->text.size(), 20u);
  EXPECT_EQ(big->text.substr(big->text.size() - 2), "..");
}

TEST_F(FlameGraph, DiffUsesAbsoluteWidthsAndGrowthShrinkColours) {
  const StackSamples s =
      testing::SamplesBuilder().Add({"grow", "main"}, 300).Add({"shrink", "main"}, -500).Build();
  FlameGraphOptions o;
  o.diff = true;
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(s, o));
  const double span = o.width - 20;
  const Frame* grow = Find(frames, "grow", 2);
  const Frame* shrink = Find(frames, "shrink", 2);
  ASSERT_TRUE(grow && shrink);
  EXPECT_NEAR(grow->width, 300.0 / 800 * span, 0.011);
  EXPECT_NEAR(shrink->width, 500.0 / 800 * span, 0.011);
  auto red = [](const std::string& c) { return std::stoi(c.substr(1, 2), nullptr, 16); };
  auto green = [](const std::string& c) { return std::stoi(c.substr(3, 2), nullptr, 16); };
  EXPECT_GT(red(grow->fill), green(grow->fill)) << grow->fill;
  EXPECT_GT(green(shrink->fill), red(shrink->fill)) << shrink->fill;
  EXPECT_NE(grow->title.find("+"), std::string::npos) << grow->title;
  EXPECT_NE(shrink->title.find("-"), std::string::npos) << shrink->title;
  EXPECT_NE(Find(frames, "main", 1)->title.find("net change"), std::string::npos);
}

TEST_F(FlameGraph, NastyNamesSurviveAsXml) {
  testing::SamplesBuilder b;
  for (const char* name : testing::kNastyNames) b.Add({name, "main"}, 100);
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(b.Build(), {}));
  int found = 0;
  for (const char* name : testing::kNastyNames) {
    std::string expected = SanitizeUtf8Name(name);
    if (Find(frames, expected, 2) != nullptr) ++found;
  }
  EXPECT_EQ(found, static_cast<int>(std::size(testing::kNastyNames)));
}

TEST_F(FlameGraph, ObjectCountsAreNotBytes) {
  const StackSamples s = testing::SamplesBuilder(ValueUnit::kObjects)
                             .Type("inuse_objects")
                             .Add({"make", "main"}, 1500)
                             .Add({"other", "main"}, 500)
                             .Build();
  FlameGraphOptions o;
  o.legend = {"Type: inuse_objects"};
  const std::string svg = WriteFlameGraphSvg(s, o);
  const std::vector<Frame> frames = Frames(svg);
  const Frame* make = Find(frames, "make", 2);
  ASSERT_NE(make, nullptr);
  EXPECT_NE(make->title.find("1500 inuse_objects (75.00%)"), std::string::npos) << make->title;
  EXPECT_EQ(make->title.find("B "), std::string::npos) << make->title;
  EXPECT_NE(svg.find(">Type: inuse_objects</text>"), std::string::npos);
}

TEST_F(FlameGraph, TinyFramesAreNotDrawn) {
  const StackSamples s =
      testing::SamplesBuilder().Add({"big", "main"}, 1e9).Add({"tiny", "main"}, 1).Build();
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(s, {}));
  EXPECT_NE(Find(frames, "big", 2), nullptr);
  EXPECT_EQ(Find(frames, "tiny", 2), nullptr);
}

// data-n, data-d -> (data-o, data-v) of every drawn frame, read from the SVG text.
std::map<std::pair<std::string, int>, std::pair<double, double>> Extents(const std::string& svg) {
  std::map<std::pair<std::string, int>, std::pair<double, double>> out;
  const std::regex frame(
      R"re(<g class="f" data-n="([^"]*)" data-d="(\d+)" data-o="([^"]*)" data-v="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame); it != std::sregex_iterator();
       ++it) {
    out[{(*it)[1].str(), std::stoi((*it)[2].str())}] = {std::stod((*it)[3].str()),
                                                        std::stod((*it)[4].str())};
  }
  return out;
}

TEST_F(FlameGraph, StacksMergeWhateverTheirOrderAndOwnValueLiesRightOfCallees) {
  // main has its own 50 right of its callees a (100 + 25, two samples of one path) and b (200).
  const StackSamples one = testing::SamplesBuilder()
                               .Add({"b", "main"}, 200)
                               .Add({"main"}, 50)
                               .Add({"a", "main"}, 100)
                               .Add({"x", "a", "main"}, 25)
                               .Add({"a", "main"}, 25)
                               .Build();
  const StackSamples other = testing::SamplesBuilder()
                                 .Add({"a", "main"}, 25)
                                 .Add({"x", "a", "main"}, 25)
                                 .Add({"main"}, 50)
                                 .Add({"a", "main"}, 100)
                                 .Add({"b", "main"}, 200)
                                 .Build();
  const std::string svg = WriteFlameGraphSvg(one, {});
  EXPECT_EQ(svg, WriteFlameGraphSvg(other, {}));
  const auto e = Extents(svg);
  ASSERT_EQ(e.size(), 5u) << svg;
  using P = std::pair<double, double>;
  EXPECT_EQ(e.at({"all", 0}), P(0, 400));
  EXPECT_EQ(e.at({"main", 1}), P(0, 400));
  EXPECT_EQ(e.at({"a", 2}), P(0, 150));  // callees in name order from the caller's left edge
  EXPECT_EQ(e.at({"x", 3}), P(0, 25));
  EXPECT_EQ(e.at({"b", 2}), P(150, 200));  // main's own 50 is the gap at 350..400
}

TEST_F(FlameGraph, LeftOutFramesAreCountedAndStayInTheirCallersWidths) {
  const StackSamples s = testing::SamplesBuilder()
                             .Add({"big", "main"}, 10000)
                             .Add({"tiny", "main"}, 1)
                             .Add({"tinier", "tiny", "main"}, 1)
                             .Build();
  FlameGraphOptions o;
  o.min_frame_px = 1;  // tiny is 0.24 px wide in 1180 px
  const std::string svg = WriteFlameGraphSvg(s, o);
  const auto e = Extents(svg);
  EXPECT_EQ(e.count({"tiny", 2}), 0u);
  EXPECT_EQ(e.count({"tinier", 3}), 0u);
  EXPECT_EQ(e.at({"main", 1}).second, 10002);
  EXPECT_NE(svg.find(">2 of 5 frames are narrower than 1 px and not drawn"), std::string::npos)
      << svg.substr(0, 3000);
  const std::string all = WriteFlameGraphSvg(s, {});  // 0.1 px: everything is drawn
  EXPECT_EQ(Extents(all).size(), 5u);
  EXPECT_EQ(all.find("not drawn"), std::string::npos);
}

TEST_F(FlameGraph, EmptyProfileIsStillAValidSvg) {
  const std::vector<Frame> frames = Frames(WriteFlameGraphSvg(StackSamples{}, {}));
  EXPECT_TRUE(frames.empty());
  EXPECT_NE(WriteFlameGraphSvg(StackSamples{}, {}).find("No samples"), std::string::npos);
}

TEST(FlameGraphText, SelfContainedWithInteractiveScript) {
  const std::string svg = WriteFlameGraphSvg(Basic(), {});
  // No external resources: the only URL is the SVG namespace.
  const std::regex url("https?://[^\"]*");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), url); it != std::sregex_iterator();
       ++it) {
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
  }
  EXPECT_EQ(svg.find("xlink:href"), std::string::npos);
  EXPECT_EQ(svg.find("<script src"), std::string::npos);
  for (const char* hook : {"function hkZoom", "function hkReset", "function hkSearch", "Reset Zoom",
                           "mouseover", "<title>"}) {
    EXPECT_NE(svg.find(hook), std::string::npos) << hook;
  }
  // The script must not terminate its CDATA section early.
  const size_t script = svg.find("<script");
  const size_t end = svg.find("]]></script>");
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(svg.find("]]>", script), end);
}

TEST(FlameGraphText, EscapeXml) {
  EXPECT_EQ(EscapeXml("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(EscapeXml("x\x01y\xffz"), "x y?z");
}

}  // namespace
}  // namespace heapkit::pprof
