// The web UI without a socket: listen addresses, query parsing, the views' status codes and
// contents (WebUi::Handle) and the timeline's bands, on small hand-written profiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/report/leaf_names.h"
#include "pprof-tool/web/runtime_timeline_chart.h"
#include "pprof-tool/web/timeline.h"
#include "pprof-tool/web/view_query.h"
#include "pprof-tool/web/web_server.h"
#include "pprof-tool/web/web_ui.h"

namespace heapkit::pprof {
namespace {

// pc 0x1ff -> "Grow", 0x2ff -> "Keep", 0x3ff -> "main" (callers' pcs are looked up minus 1).
class NamesSymbolizer : public Symbolizer {
 public:
  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    ++calls;
    auto it = cache_.find(pc);
    if (it != cache_.end()) return it->second;
    const char* name = pc == 0x1ff ? "Grow" : pc == 0x2ff ? "Keep" : pc == 0x3ff ? "main" : "other";
    return cache_.emplace(pc, std::vector<SourceFrame>{{name, "w.cc", 1, false, "/bin/w"}})
        .first->second;
  }
  std::map<uint64_t, std::vector<SourceFrame>> cache_;
  int calls = 0;  // every lookup, answered from cache_ or not: the pipeline ran
};

Profile Dump(const char* file, int grow_bytes) {
  std::string text =
      "heap profile: 2: 0 [ 2: 0] @ heapprofile\n"
      " 1: " +
      std::to_string(grow_bytes) + " [ 1: " + std::to_string(grow_bytes) +
      "] @ 0x200 0x400\n"
      " 1: 1000 [ 1: 1000] @ 0x300 0x400\n";
  Profile p;
  ParseError e;
  EXPECT_TRUE(ParseProfileText(text, file, &p, &e)) << e.Message();
  return p;
}

using Params = std::multimap<std::string, std::string>;

TEST(Web, ListenAddress) {
  ListenAddress a;
  std::string error;
  ASSERT_TRUE(ParseListenAddress(":8080", &a, &error));
  EXPECT_EQ(a.host, "127.0.0.1");  // never all interfaces by default
  EXPECT_EQ(a.port, 8080);
  ASSERT_TRUE(ParseListenAddress("[::1]:0", &a, &error));
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.port, 0);
  EXPECT_FALSE(ParseListenAddress("localhost", &a, &error));
  EXPECT_FALSE(ParseListenAddress(":70000", &a, &error));
  EXPECT_FALSE(ParseListenAddress(":80x", &a, &error));
}

TEST(Web, QueryParsing) {
  ViewQuery q;
  q.dump_numbers = {1, 2};  // dump= and base= name dumps by their files' numbers
  std::string error;
  ASSERT_TRUE(ParseViewQuery({{"si", "alloc_space"}, {"f", "a b&c"}, {"dump", "2"}}, &q, &error));
  EXPECT_EQ(q.view.sample_type, SampleType::kAllocSpace);
  EXPECT_EQ(q.dump, 1);
  EXPECT_EQ(q.Encode(), "si=alloc_space&f=a%20b%26c&dump=2");
  ASSERT_TRUE(ParseViewQuery({{"dump", "all"}, {"base", "1"}}, &q, &error));
  EXPECT_EQ(q.dump, -1);
  EXPECT_EQ(q.base, 0);
  ViewQuery bad;
  bad.dump_numbers = {1, 2};
  EXPECT_FALSE(ParseViewQuery({{"si", "cpu"}}, &bad, &error));
  EXPECT_NE(error.find("unknown sample type"), std::string::npos);
  EXPECT_FALSE(ParseViewQuery({{"dump", "3"}}, &bad, &error));
  EXPECT_EQ(error, "dump=3: no such dump (the dumps are 1, 2; all: their sum)");
  EXPECT_FALSE(ParseViewQuery({{"dump", "0"}}, &bad, &error));
  EXPECT_FALSE(ParseViewQuery({{"dump", "-1"}}, &bad, &error));
  EXPECT_FALSE(ParseViewQuery({{"base", "all"}}, &bad, &error));
  EXPECT_FALSE(ParseViewQuery({{"f", std::string(kMaxQueryValue + 1, 'a')}}, &bad, &error));
  ViewQuery window;
  ASSERT_TRUE(ParseViewQuery({{"window", "1.5:3"}, {"f", "x"}}, &window, &error));
  EXPECT_EQ(window.Encode(), "si=inuse_space&f=x&window=1.5%3A3");
}

class WebUiTest : public testing::Test {
 protected:
  WebUiTest() {
    dumps_ = {Dump("w.0001.heap", 1000), Dump("w.0002.heap", 5000)};
    profile_ = dumps_[1];
    input_.profile = &profile_;
    input_.dumps = &dumps_;
    input_.symbolizer = &symbolizer_;
    input_.title = "w";
    input_.series = ClassifyDumps(dumps_);
  }
  Profile profile_;
  std::vector<Profile> dumps_;
  NamesSymbolizer symbolizer_;
  WebInput input_;
};

// A sampled profile's top table carries each row's 95 % interval, with the standard error and z
// on hover (model/estimate.h); an exact one's has no such column. The timeline of sampled
// dumps draws the interval band.
TEST(Web, SampledTopTableAndTimelineCarryIntervals) {
  Profile sampled;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 10: 655360 [ 10: 655360] @ heap_v2/524288\n"
                       " 10: 655360 [ 10: 655360] @ 0x200 0x400\n",
                       "s.0001.heap", &sampled, &e))
      << e.Message();
  std::vector<Profile> dumps = {sampled};
  NamesSymbolizer symbolizer;
  WebInput input;
  input.profile = &sampled;
  input.dumps = &dumps;
  input.symbolizer = &symbolizer;
  input.series = ClassifyDumps(dumps);
  WebUi ui(input);
  const WebResponse top = ui.Handle("/ui/top", {});
  ASSERT_EQ(top.status, 200);
  EXPECT_NE(top.body.find("<th title=\"95 % interval of the estimate\">±2σ</th>"),
            std::string::npos);
  EXPECT_NE(top.body.find("title=\"95 % interval: "), std::string::npos);
  EXPECT_NE(top.body.find("(standard error "), std::string::npos);
  EXPECT_NE(top.body.find(" at 95 %)"), std::string::npos);  // the header's total
  // Exact: no column.
  Profile exact_profile = Dump("e.0001.heap", 1000);
  std::vector<Profile> exact_dumps = {exact_profile};
  input.profile = &exact_profile;
  input.dumps = &exact_dumps;
  input.series = ClassifyDumps(exact_dumps);
  WebUi exact(input);
  EXPECT_EQ(exact.Handle("/ui/top", {}).body.find("±2σ"), std::string::npos);
  // The timeline over two sampled dumps: one interval band around the stacked total.
  std::vector<Profile> series = {sampled, sampled};
  TimelineChart chart;
  std::string error;
  ASSERT_TRUE(BuildTimeline(series, symbolizer, PipelineOptions{}, kTimelineBands, &chart, &error))
      << error;
  ASSERT_EQ(chart.total_variances.size(), 2u);
  EXPECT_GT(chart.total_variances[0], 0);
  const std::string svg = TimelineSvg(chart, TimelineStyle{});
  EXPECT_NE(svg.find("class=\"interval\""), std::string::npos);
  EXPECT_NE(svg.find(" (95 %)"), std::string::npos);  // a dump's hover text
}

TEST_F(WebUiTest, ViewsAndBadRequests) {
  WebUi ui(input_);
  WebResponse top = ui.Handle("/ui/top", {});
  EXPECT_EQ(top.status, 200);
  EXPECT_NE(top.body.find(">Grow</a>"), std::string::npos);
  EXPECT_NE(top.body.find(">Keep</a>"), std::string::npos);
  WebResponse ignored = ui.Handle("/ui/top", Params{{"i", "^Grow$"}});
  EXPECT_EQ(ignored.body.find(">Grow</a>"), std::string::npos);
  EXPECT_NE(ignored.body.find(">Keep</a>"), std::string::npos);
  EXPECT_NE(ignored.body.find("name=\"i\" value=\"^Grow$\""), std::string::npos);  // form keeps it
  EXPECT_EQ(ui.Handle("/ui/", {}).status, 200);
  EXPECT_EQ(ui.Handle("/ui/flamegraph.svg", {}).content_type, "image/svg+xml");
  EXPECT_EQ(ui.Handle("/ui/timeline", {}).status, 200);
  // The text reports keep their lines.
  for (const char* path : {"/ui/peek", "/ui/source"}) {
    const std::string body = ui.Handle(path, {}).body;
    const size_t pre = body.find("<pre>"), end = body.find("</pre>");
    ASSERT_NE(end, std::string::npos) << path;
    EXPECT_GE(std::count(body.begin() + pre, body.begin() + end, '\n'), 3) << path << ": " << body;
  }
  for (const auto& [path, params, status] : std::vector<std::tuple<std::string, Params, int>>{
           {"/nosuch", {}, 404},
           {"/ui/top", {{"f", "("}}, 400},
           {"/ui/top", {{"si", "bogus"}}, 400},
           {"/ui/peek", {{"f", "NoSuchFunction"}}, 404}}) {
    WebResponse r = ui.Handle(path, params);
    EXPECT_EQ(r.status, status) << path;
    EXPECT_EQ(r.body.find('\n'), r.body.size() - 1) << "one line: " << r.body;
  }
}

// The call graph page: graphviz's picture whole, at its own size (its width and height kept),
// its content in the group the page script pans and zooms, and the zoom buttons before it.
TEST_F(WebUiTest, GraphKeepsItsOwnSizeInAPannableGroup) {
  WebUi ui(input_);
  const std::string body = ui.Handle("/ui/", {}).body;
  const size_t svg = body.find("<svg"), open_end = body.find('>', svg);
  ASSERT_NE(open_end, std::string::npos);
  const std::string tag = body.substr(svg, open_end - svg);
  EXPECT_NE(tag.find(" width=\""), std::string::npos) << tag;
  EXPECT_NE(tag.find(" viewBox=\""), std::string::npos) << tag;
  EXPECT_EQ(tag.find("preserveAspectRatio"), std::string::npos) << tag;
  const std::string group = "<g id=\"viewport\">";
  EXPECT_EQ(body.compare(open_end + 1, group.size(), group), 0) << body.substr(open_end, 40);
  EXPECT_NE(body.find("</g></svg></div>"), std::string::npos);
  EXPECT_LT(body.find("id=\"graph-controls\""), svg);
  for (const char* zoom : {"in", "out", "fit", "natural"}) {
    EXPECT_NE(body.find(std::string("data-zoom=\"") + zoom + "\""), std::string::npos) << zoom;
  }
  EXPECT_NE(body.find("<div id=\"graph\" tabindex=\"0\""), std::string::npos);  // keyboard
}

// The source view lists its routines heaviest first (flat, then cum), not by name as --list
// does: here Keep (1000 B flat) before Grow (10 B) before main (0 flat).
TEST(Web, SourceViewListsRoutinesByWeight) {
  std::vector<Profile> dumps = {Dump("w.heap", 10)};
  NamesSymbolizer symbolizer;
  WebInput input;
  input.profile = &dumps[0];
  input.dumps = &dumps;
  input.symbolizer = &symbolizer;
  input.series = ClassifyDumps(dumps);
  WebUi ui(input);
  for (const Params& params : {Params{}, Params{{"f", "Grow|Keep|main"}}}) {
    const WebResponse r = ui.Handle("/ui/source", params);
    ASSERT_EQ(r.status, 200) << r.body;
    const size_t keep = r.body.find("ROUTINE ======================== Keep ");
    const size_t grow = r.body.find("ROUTINE ======================== Grow ");
    ASSERT_NE(keep, std::string::npos) << r.body;
    ASSERT_NE(grow, std::string::npos) << r.body;
    EXPECT_LT(keep, grow) << r.body;
    // Each routine shows its weight: flat and cum, and cum's share of the total.
    EXPECT_NE(r.body.find("1000B      1000B (flat, cum) 99.01% of Total", keep), std::string::npos)
        << r.body.substr(keep, 200);
    const size_t main_routine = r.body.find("ROUTINE ======================== main ");
    if (params.empty()) continue;  // the ten largest by flat: main (0 flat) is not among them
    ASSERT_NE(main_routine, std::string::npos) << r.body;
    EXPECT_LT(grow, main_routine) << r.body;
  }
}

TEST(Web, AnswerCacheKeepsTheLastAnswersWithinItsBounds) {
  AnswerCache cache(2, 100);
  auto answer = [](const std::string& body) { return WebResponse{200, "text/plain", body}; };
  cache.Insert("a", answer("A"));
  cache.Insert("b", answer("B"));
  ASSERT_NE(cache.Find("a"), nullptr);  // now the most recent: b goes first
  cache.Insert("c", answer("C"));
  EXPECT_EQ(cache.Find("b"), nullptr);
  ASSERT_NE(cache.Find("a"), nullptr);
  EXPECT_EQ(cache.Find("a")->body, "A");
  EXPECT_EQ(cache.Find("c")->body, "C");
  cache.Insert("c", answer("C2"));  // replaced, not duplicated
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Find("c")->body, "C2");
  cache.Insert("big", answer(std::string(99, 'x')));  // count, then bytes bound: both others go
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.bytes(), 99u);
  cache.Insert("huge", answer(std::string(101, 'x')));  // larger than the bound: not kept
  EXPECT_EQ(cache.Find("huge"), nullptr);
  EXPECT_NE(cache.Find("big"), nullptr);
}

TEST_F(WebUiTest, AnswersAreKeptPerPathAndNormalizedQuery) {
  WebUi ui(input_);
  const WebResponse top = ui.Handle("/ui/top", {});
  const int after_first = symbolizer_.calls;
  ASSERT_GT(after_first, 0);
  // The same view again, also spelled with the default sample type: answered from the kept one.
  EXPECT_EQ(ui.Handle("/ui/top", {}).body, top.body);
  EXPECT_EQ(ui.Handle("/ui/top", Params{{"si", "inuse_space"}}).body, top.body);
  EXPECT_EQ(symbolizer_.calls, after_first);
  // Another query or another view is not mixed up with it.
  const WebResponse ignored = ui.Handle("/ui/top", Params{{"i", "^Grow$"}});
  EXPECT_GT(symbolizer_.calls, after_first);
  EXPECT_NE(ignored.body, top.body);
  EXPECT_EQ(ui.Handle("/ui/peek", {}).body.find("<table class=\"top\">"), std::string::npos);
  EXPECT_EQ(ui.Handle("/", {}).body, ui.Handle("/ui/", {}).body);
  // Errors are not kept: a bad request stays bad and a good one after it is right.
  EXPECT_EQ(ui.Handle("/ui/top", Params{{"f", "("}}).status, 400);
  EXPECT_EQ(ui.Handle("/ui/top", Params{{"f", "("}}).status, 400);
}

TEST_F(WebUiTest, WebFlameGraphLeavesOutSubPixelFrames) {
  // Grow holds 1 byte of 5001: 0.24 px of the picture, drawn by the CLI, not by the web UI.
  dumps_ = {Dump("w.0001.heap", 1)};
  dumps_[0].samples[1].value.inuse_bytes = 5000;
  profile_ = dumps_[0];
  WebUi ui(input_);
  const WebResponse svg = ui.Handle("/ui/flamegraph.svg", {});
  ASSERT_EQ(svg.status, 200);
  EXPECT_EQ(svg.body.find("data-n=\"Grow\""), std::string::npos);
  EXPECT_NE(svg.body.find("data-n=\"Keep\""), std::string::npos);
  EXPECT_NE(svg.body.find("frames are narrower than 1 px and not drawn"), std::string::npos);
}

// 0x1ff: "Inner" inlined into "Grow"; the others as NamesSymbolizer names them.
class InlineSymbolizer : public Symbolizer {
 public:
  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    if (pc == 0x1ff) return inner_;
    return names_.Symbolize(pc);
  }

 private:
  std::vector<SourceFrame> inner_{{"Inner", "w.cc", 2, true, "/bin/w"},
                                  {"Grow", "w.cc", 1, false, "/bin/w"}};
  NamesSymbolizer names_;
};

// A view option with a URL parameter in the table (noinlines=) is parsed, kept in the links
// and the settings form, and reaches the pipeline.
TEST_F(WebUiTest, NoinlinesParameterReachesThePipeline) {
  InlineSymbolizer symbolizer;
  input_.symbolizer = &symbolizer;
  WebUi ui(input_);
  const std::string inlined = ui.Handle("/ui/top", {}).body;
  EXPECT_NE(inlined.find(">Inner</a>"), std::string::npos);
  EXPECT_EQ(inlined.find("noinlines=true"), std::string::npos);
  const std::string physical = ui.Handle("/ui/top", Params{{"noinlines", "true"}}).body;
  EXPECT_EQ(physical.find(">Inner</a>"), std::string::npos);  // charged to Grow
  EXPECT_NE(physical.find(">Grow</a>"), std::string::npos);
  EXPECT_NE(physical.find("noinlines=true"), std::string::npos);  // links keep it
  EXPECT_NE(physical.find("name=\"noinlines\" value=\"true\" checked"), std::string::npos);
  EXPECT_EQ(ui.Handle("/ui/top", Params{{"noinlines", "yes"}}).status, 400);
}

TEST_F(WebUiTest, HeapcheckIsInUseOnly) {
  input_.heapcheck = true;
  WebUi ui(input_);
  EXPECT_EQ(ui.Handle("/ui/top", Params{{"si", "alloc_space"}}).status, 400);
  EXPECT_NE(ui.Handle("/ui/top", {}).body.find("<title>Leaks: Top"), std::string::npos);
}

// Dumps of one process (same maps, <prefix>.NNNN.heap): the latest is shown, not the sum.
TEST_F(WebUiTest, DumpsOfOneProcessShowTheLatestNotTheirSum) {
  const std::string maps =
      "\nMAPPED_LIBRARIES:\n"
      "00400000-00500000 r-xp 00000000 08:01 1 /bin/w\n";
  dumps_.clear();
  for (int grow : {1000, 5000, 3000}) {
    Profile p;
    ParseError e;
    const std::string file = "w.000" + std::to_string(dumps_.size() + 1) + ".heap";
    ASSERT_TRUE(
        ParseProfileText("heap profile: 2: 0 [ 2: 0] @ heapprofile\n 1: " + std::to_string(grow) +
                             " [ 1: 1] @ 0x200 0x400\n"
                             " 1: 1000 [ 1: 1000] @ 0x300 0x400\n" +
                             maps,
                         file, &p, &e))
        << e.Message();
    dumps_.push_back(p);
  }
  input_.series = ClassifyDumps(dumps_);
  ASSERT_TRUE(input_.series.one_process);
  EXPECT_EQ(input_.series.latest, 2u);
  profile_ = dumps_[0];
  profile_.AddProfile(dumps_[1], false);
  profile_.AddProfile(dumps_[2], false);
  input_.pipeline.view.show_bytes = true;
  WebUi ui(input_);
  auto top = [&](Params params) { return ui.Handle("/ui/top", params).body; };
  const std::string latest = top({});
  EXPECT_NE(latest.find("Dump: w.0003.heap, the latest of 3 dumps of one process"),
            std::string::npos);
  EXPECT_NE(latest.find("of 4000 total"), std::string::npos) << latest;  // 3000 + 1000 B
  EXPECT_NE(latest.find("<option value=\"3\" selected>3 (latest)</option>"), std::string::npos);
  EXPECT_NE(top({{"dump", "1"}}).find("of 2000 total"), std::string::npos);
  EXPECT_NE(top({{"dump", "all"}}).find("of 12000 total"), std::string::npos);  // only when asked
  const std::string diff = top({{"dump", "2"}, {"base", "1"}});
  EXPECT_NE(diff.find("Base: w.0001.heap"), std::string::npos);
  EXPECT_NE(diff.find("of 4000 total"), std::string::npos) << diff;  // 6000 - 2000
  EXPECT_EQ(ui.Handle("/ui/top", {{"base", "1"}, {"dump", "all"}}).status, 400);
  // The timeline numbers its dumps as the files are numbered and links to them.
  const std::string timeline = ui.Handle("/ui/timeline", {}).body;
  EXPECT_NE(timeline.find("dump=1\""), std::string::npos);
  EXPECT_EQ(timeline.find("dump=0\""), std::string::npos);
}

TEST_F(WebUiTest, TimelineBands) {
  TimelineChart chart;
  std::string error;
  ASSERT_TRUE(BuildTimeline(dumps_, symbolizer_, PipelineOptions{}, 1, &chart, &error)) << error;
  ASSERT_EQ(chart.bands.size(), 2u);  // the top function, then "other"
  EXPECT_EQ(chart.bands[0].name, "Grow");
  EXPECT_EQ(chart.bands[0].values, (std::vector<double>{1000, 5000}));
  EXPECT_EQ(chart.bands[1].name, "other");
  EXPECT_EQ(chart.totals, (std::vector<double>{2000, 6000}));
  std::string svg = TimelineSvg(chart, TimelineStyle{});
  EXPECT_NE(svg.find("w.0002.heap: heap profile:"), std::string::npos);
  EXPECT_NE(svg.find("(no dump reason recorded in the file)"), std::string::npos);
  EXPECT_NE(svg.find("(inuse_space, requested bytes, 2 dumps)"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("<a "), std::string::npos);  // links only for the web UI
}

TEST_F(WebUiTest, TimelineHoverShowsTheProfilersDumpReason) {
  Profile with_reason;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 1: 10 [ 1: 10] @ heapprofile\n"
                       "# heapkit: dump reason: 1026 MB allocated cumulatively, 5 MB "
                       "currently in use <&>\n"
                       " 1: 10 [ 1: 10] @ 0x200 0x400\n",
                       "w.0003.heap", &with_reason, &e))
      << e.Message();
  dumps_.push_back(with_reason);
  TimelineChart chart;
  std::string error;
  ASSERT_TRUE(BuildTimeline(dumps_, symbolizer_, PipelineOptions{}, 1, &chart, &error)) << error;
  ASSERT_EQ(chart.dump_reasons.size(), 3u);
  EXPECT_EQ(chart.dump_reasons[0], "");
  const std::string svg = TimelineSvg(chart, TimelineStyle{});
  EXPECT_NE(svg.find("dump 3: w.0003.heap: heap profile: 1 objects, 10 bytes in use (heapprofile)\n"
                     "reason: 1026 MB allocated cumulatively, 5 MB currently in use &lt;&amp;&gt;"),
            std::string::npos)
      << svg;
}

// A runtime timeline of three rows (exact mode: the rows' bytes are the values): stack 1
// (Grow) holds 1000 then 5000 bytes, stack 2 (Keep) 4000 then 2000; the exact in-use peaks at
// the second row.
RuntimeTimeline ThreeRows() {
  RuntimeTimeline t;
  t.period_ms = 100;
  t.rate = 1;
  t.stacks[1] = {0x200, 0x400};
  t.stacks[2] = {0x300, 0x400};
  t.rows = {{100, 3000, 20000, 1000, {{1, 1, 1000}}},
            {200, 9000, 30000, 9000, {{1, 1, 5000}, {2, 1, 4000}}},
            {300, 2500, 25000, 2000, {{2, 1, 2000}}}};
  return t;
}

TEST_F(WebUiTest, RuntimeTimelineChart) {
  const RuntimeTimeline t = ThreeRows();
  const auto names = RuntimeTimelineStackNames(t, profile_, symbolizer_, PipelineOptions{});
  EXPECT_EQ(names.at(1), "Grow");  // named by the pipeline, as every report names them
  EXPECT_EQ(names.at(2), "Keep");
  RuntimeTimelineWindow window;
  std::string error;
  ASSERT_TRUE(ParseRuntimeTimelineWindow(t, "0.25:1", &window, &error)) << error;
  EXPECT_EQ(window.peak_row, 2);
  EXPECT_FALSE(ParseRuntimeTimelineWindow(t, "0.31:1", &window, &error));
  EXPECT_EQ(error, "0.31:1: no timeline row in it (rows from 0.100 s to 0.300 s)");
  EXPECT_FALSE(ParseRuntimeTimelineWindow(t, "2:1", &window, &error));
  ASSERT_TRUE(ParseRuntimeTimelineWindow(t, "0.25:1", &window, &error));
  TimelineChart chart;
  BuildRuntimeTimelineChart(t, names, &window, false, &chart);
  ASSERT_EQ(chart.bands.size(), 2u);  // the estimate is the bands' sum: no "other"
  EXPECT_EQ(chart.bands[0].name, "Grow");
  EXPECT_EQ(chart.bands[0].values, (std::vector<double>{1000, 5000, 0}));
  EXPECT_EQ(chart.bands[1].values, (std::vector<double>{0, 4000, 2000}));
  EXPECT_EQ(chart.curves[0].values, (std::vector<double>{3000, 9000, 2500}));
  EXPECT_EQ(chart.peak, 1);
  EXPECT_EQ(chart.window_peak, 2);
  const std::string svg = TimelineSvg(chart, TimelineStyle{});
  EXPECT_NE(svg.find("class=\"window\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"peak\" data-column=\"1\""), std::string::npos);
  // A file without the header's `exact` field: the allocator's usable bytes, named so.
  EXPECT_NE(svg.find("data-name=\"exact in-use (usable bytes)\""), std::string::npos);
  EXPECT_NE(svg.find("In use: requested bytes"), std::string::npos);
  EXPECT_NE(svg.find("time after profiling start"), std::string::npos);
}

TEST_F(WebUiTest, RuntimeTimelineViewAndWindow) {
  const RuntimeTimeline t = ThreeRows();
  {
    WebUi plain(input_);  // not a runtime timeline: window= is refused
    EXPECT_EQ(plain.Handle("/ui/top", Params{{"window", "0:1"}}).status, 400);
  }
  dumps_ = {profile_};
  input_.series = ClassifyDumps(dumps_);
  input_.runtime_timeline = &t;
  WebUi ui(input_);
  WebResponse view = ui.Handle("/ui/timeline", {});
  EXPECT_EQ(view.status, 200);
  EXPECT_NE(view.body.find("class=\"curve\""), std::string::npos);
  EXPECT_NE(view.body.find("name=\"window\""), std::string::npos);  // the form's field
  EXPECT_EQ(view.body.find("window-stacks"), std::string::npos);
  // The window [0.25, 1] peaks at its only row, 0.3 s: Keep alone.
  WebResponse windowed = ui.Handle("/ui/timeline", Params{{"window", "0.25:1"}});
  EXPECT_EQ(windowed.status, 200);
  const std::string stacks = windowed.body.substr(windowed.body.find("window-stacks"));
  EXPECT_NE(stacks.find(">Keep</a>"), std::string::npos) << stacks;
  EXPECT_EQ(stacks.find(">Grow</a>"), std::string::npos) << stacks;
  WebResponse top = ui.Handle("/ui/top", Params{{"window", "0:1"}});  // the peak row: both
  EXPECT_NE(top.body.find(">Grow</a>"), std::string::npos);
  EXPECT_NE(top.body.find("Timeline window 0:1 s: the top stacks at its peak, 0.200 s"),
            std::string::npos);
  // Each row's column links to the top table of that row alone.
  EXPECT_NE(view.body.find("href=\"/ui/top?si=inuse_space&amp;window=0.300:0.300\""),
            std::string::npos);
  for (const char* bad : {"x", "2:1", "5:6"}) {
    WebResponse r = ui.Handle("/ui/timeline", Params{{"window", bad}});
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.body.find('\n'), r.body.size() - 1) << "one line: " << r.body;
  }
}

}  // namespace
}  // namespace heapkit::pprof
