#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/model/estimate.h"
#include "pprof-tool/report/object_time_views.h"
#include "pprof-tool/report/pipeline.h"
#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {
namespace {

// Fake symbolizer: pc -> frames; 0x2ff is "inner" inlined into "outer".
class FakeSymbolizer : public Symbolizer {
 public:
  const std::vector<SourceFrame>& Symbolize(uint64_t pc) override {
    auto it = cache_.find(pc);
    if (it != cache_.end()) return it->second;
    std::vector<SourceFrame> f;
    switch (pc) {
      case 0xff: f = {{"malloc", "", 0, false, "/lib/libc.so.6"}}; break;
      case 0x1ff: f = {{"leaf", "a.cc", 10, false, "/bin/p"}}; break;
      case 0x2ff:
        f = {{"inner", "b.h", 3, true, "/bin/p"}, {"outer", "b.cc", 20, false, "/bin/p"}};
        break;
      case 0x3ff: f = {{"main", "m.cc", 5, false, "/bin/p"}}; break;
      case 0x4ff: f = {{"leaf", "a.cc", 11, false, "/bin/p"}}; break;
      // The allocation path of a std::string, then two overloads of one template.
      case 0x5ff:
        f = {{"std::__new_allocator<char>::allocate", "new_allocator.h", 1, true, "/bin/p"},
             {"std::__cxx11::basic_string<char>::_M_create", "basic_string.tcc", 2, false,
              "/bin/p"}};
        break;
      case 0x6ff: f = {{"Load<int>", "l.cc", 7, false, "/bin/p", "_Z4LoadIiEvi"}}; break;
      case 0x7ff: f = {{"Load<double>", "l.cc", 7, false, "/bin/p", "_Z4LoadIdEvd"}}; break;
      case 0x8ff: f = {{"__GI___strdup", "", 0, false, "/lib/libc.so.6"}}; break;
      // A thread: libstdc++'s unnamed trampoline called by start_thread.
      case 0x9ff:
        f = {{"libstdc++.so.6.0.30+0xd44a2", "", 0, false, "/lib/libstdc++.so.6.0.30"}};
        break;
      case 0xaff: f = {{"start_thread", "", 0, false, "/lib/libc.so.6"}}; break;
      // An allocation wrapper and its callers.
      case 0xbff: f = {{"xmalloc", "x.c", 3, false, "/bin/p"}}; break;
      case 0xcff: f = {{"one", "x.c", 10, false, "/bin/p"}}; break;
      case 0xdff: f = {{"two", "x.c", 20, false, "/bin/p"}}; break;
      case 0xeff: f = {{"three", "x.c", 30, false, "/bin/p"}}; break;
      case 0xfff: f = {{"four", "x.c", 40, false, "/bin/p"}}; break;
      default: f = {{"0x?", "", 0, false, ""}}; break;
    }
    return cache_.emplace(pc, f).first->second;
  }
  std::map<uint64_t, std::vector<SourceFrame>> cache_;
};

Profile MakeProfile() {
  Profile p;
  ParseError e;
  EXPECT_TRUE(ParseProfileText(
      "heap profile: 3: 300 [ 6: 600] @ heapprofile\n"
      " 1: 100 [ 2: 200] @ 0x100 0x200 0x300 0x400\n"  // malloc<-leaf<-outer/inner<-main
      " 2: 200 [ 4: 400] @ 0x100 0x500 0x400\n"        // malloc<-leaf:11<-main
      " 0: 0 [ 1: 50] @ 0x300 0x400\n",
      "p.heap", &p, &e))
      << e.Message();
  return p;
}

TEST(Pipeline, DropsAllocatorFramesAndExpandsInlines) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err)) << err;
  EXPECT_EQ(s.total, 300);
  ASSERT_EQ(s.samples.size(),
            2u);  // leaf:10 and leaf:11 merge at function granularity? no: different stacks
  const StackSample& first = s.samples[0];
  ASSERT_EQ(first.frames.size(), 4u);  // leaf, inner, outer, main (malloc dropped)
  EXPECT_EQ(s.nodes[first.frames[0].node].name, "leaf");
  EXPECT_EQ(s.nodes[first.frames[1].node].name, "inner");
  EXPECT_TRUE(first.frames[1].inlined);
  EXPECT_EQ(s.nodes[first.frames[2].node].name, "outer");
  EXPECT_FALSE(first.frames[2].inlined);
}

TEST(Pipeline, ValueTypesAndGranularity) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  PipelineOptions o;
  o.view.sample_type = SampleType::kAllocObjects;
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_EQ(s.total, 7);
  EXPECT_EQ(s.unit, ValueUnit::kObjects);
  o.view.sample_type = SampleType::kInuseSpace;
  o.view.granularity = Granularity::kLines;
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  int leaf_nodes = 0;
  for (const NodeInfo& n : s.nodes) leaf_nodes += n.name == "leaf";
  EXPECT_EQ(leaf_nodes, 2);  // a.cc:10 and a.cc:11
  o.view.granularity = Granularity::kFiles;
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  for (const NodeInfo& n : s.nodes)
    EXPECT_TRUE(n.name == "a.cc" || n.name == "b.h" || n.name == "b.cc" || n.name == "m.cc")
        << n.name;
}

TEST(Pipeline, FocusIgnoreHideShow) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  PipelineOptions o;
  o.view.focus = "^outer$";
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_EQ(s.total, 100);
  o = PipelineOptions();
  o.view.ignore = "outer";
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_EQ(s.total, 200);
  o = PipelineOptions();
  o.view.hide = "^(inner|outer)$";
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_EQ(s.total, 300);
  ASSERT_EQ(s.samples.size(), 1u);  // both stacks become leaf<-main and merge
  EXPECT_EQ(s.samples[0].value, 300);
  o = PipelineOptions();
  o.view.show = "main";
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err));
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].frames.size(), 1u);
  o = PipelineOptions();
  o.view.focus = "([";
  EXPECT_FALSE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_NE(err.find("--focus"), std::string::npos) << err;
}

TEST(Pipeline, BaseSubtractionCancelsAndGoesNegative) {
  Profile p = MakeProfile();
  Profile base = MakeProfile();
  base.samples.pop_back();
  base.samples[0].value.inuse_bytes = 150;  // more than the profile: negative result
  p.AddProfile(base, true);
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err));
  ASSERT_EQ(s.samples.size(), 1u);  // the 200-byte stack cancelled out
  EXPECT_EQ(s.samples[0].value, -50);
  EXPECT_EQ(s.total, -50);
}

// operator new <- std::string growth <- Load<int> <- main; malloc <- strdup <- Load<double> <- main
Profile MakeUserProfile() {
  Profile p;
  ParseError e;
  EXPECT_TRUE(
      ParseProfileText("heap profile: 2: 300 [ 2: 300] @ heapprofile\n"
                       " 1: 100 [ 1: 100] @ 0x100 0x600 0x700 0x400\n"
                       " 1: 200 [ 1: 200] @ 0x100 0x900 0x800 0x400\n",
                       "u.heap", &p, &e))
      << e.Message();
  return p;
}

std::vector<std::string> Leaves(const StackSamples& s) {
  std::vector<std::string> out;
  for (const StackSample& x : s.samples)
    out.push_back(x.frames.empty() ? "" : s.nodes[x.frames[0].node].name);
  return out;
}

TEST(Pipeline, AllocationPathIsChargedToTheCaller) {
  Profile p = MakeUserProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  PipelineOptions o;
  o.record_full_names = true;
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err)) << err;
  // std::string's allocation path and strdup are dropped; the overloads merge as "Load", so
  // the two stacks are one.
  EXPECT_EQ(Leaves(s), (std::vector<std::string>{"Load"}));
  EXPECT_EQ(s.samples[0].value, 300);
  ASSERT_EQ(s.nodes.size(), 2u);  // Load, main
  EXPECT_EQ(s.nodes[0].full_name, "void Load<int>(int)");
  PipelineOptions keep;
  keep.view.keep_allocator_frames = true;
  ASSERT_TRUE(BuildStackSamples(p, sym, keep, &s, &err)) << err;
  EXPECT_EQ(Leaves(s), (std::vector<std::string>{"malloc", "malloc"}));
  PipelineOptions full;
  full.view.full_names = true;
  ASSERT_TRUE(BuildStackSamples(p, sym, full, &s, &err)) << err;
  EXPECT_EQ(Leaves(s),
            (std::vector<std::string>{"void Load<int>(int)", "void Load<double>(double)"}));
}

TEST(Pipeline, UnnamedLibstdcxxFrameUnderStartThreadIsTheThreadTrampoline) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 1: 100 [ 1: 100] @ heapprofile\n"
                       " 1: 100 [ 1: 100] @ 0x100 0x200 0xa00 0xb00\n",
                       "p.heap", &p, &e))
      << e.Message();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err)) << err;
  ASSERT_EQ(s.samples.size(), 1u);
  ASSERT_EQ(s.samples[0].frames.size(), 3u);  // leaf, the trampoline, start_thread
  EXPECT_EQ(s.nodes[s.samples[0].frames[1].node].name, "execute_native_thread_routine");
}

TEST(Pipeline, AllocationWrappersWithManyCallersAreChargedToThem) {
  // xmalloc is the leaf of all its stacks, from four callers; "leaf" has one caller (main).
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 5: 500 [ 5: 500] @ heapprofile\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xd00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xe00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xf00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0x1000 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0x200 0x400\n",
                       "p.heap", &p, &e))
      << e.Message();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err)) << err;
  std::vector<std::string> leaves = Leaves(s);
  std::sort(leaves.begin(), leaves.end());
  EXPECT_EQ(leaves, (std::vector<std::string>{"four", "leaf", "one", "three", "two"}));
  EXPECT_EQ(s.folded_wrappers, (std::vector<std::string>{"xmalloc"}));
  EXPECT_EQ(
      s.FoldedWrappersLine(),
      "Allocation wrappers charged to their callers: xmalloc (--keep_allocator_frames shows them)");
  // Three callers are not "many": xmalloc stays.
  p.samples.pop_back();
  p.samples.pop_back();
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err)) << err;
  EXPECT_EQ(Leaves(s), (std::vector<std::string>{"xmalloc", "xmalloc", "xmalloc"}));
  EXPECT_TRUE(s.folded_wrappers.empty());
}

// One folding per profile: a time view selects some of the dump's stacks (here two of
// xmalloc's four callers), but the dump's stacks decide the wrappers, so the view folds xmalloc
// as the whole dump's reports do, and names it.
TEST(Pipeline, TimeViewsFoldTheWrappersOfTheWholeDump) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 5: 500 [ 5: 500] @ heapprofile\n"
                       "# heapkit: lifetime 0 same 1 100 100 @ 0x100 0xc00 0xd00 0x400\n"
                       "# heapkit: lifetime 0 same 1 100 100 @ 0x100 0xc00 0xe00 0x400\n"
                       "# heapkit: lifetime 1000000000 live 1 100 100 @ 0x100 0xc00 0xf00 0x400\n"
                       "# heapkit: lifetime 1000000000 live 1 100 100 @ 0x100 0xc00 0x1000 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xd00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xe00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xf00 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0x1000 0x400\n"
                       " 1: 100 [ 1: 100] @ 0x100 0x200 0x400\n",
                       "p.heap", &p, &e))
      << e.Message();
  ASSERT_EQ(p.object_times.lifetimes.size(), 4u);
  LifetimeFilter below;
  std::string err;
  ASSERT_TRUE(ParseLifetimeFilter("<1ms", &below, &err)) << err;
  std::vector<std::string> notes;
  ASSERT_TRUE(ApplyLifetimeView(below, &p, &notes, &err)) << err;
  ASSERT_EQ(p.samples.size(), 2u);
  FakeSymbolizer sym;
  StackSamples s;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err)) << err;
  std::vector<std::string> leaves = Leaves(s);
  std::sort(leaves.begin(), leaves.end());
  EXPECT_EQ(leaves, (std::vector<std::string>{"one", "two"}));
  EXPECT_EQ(s.folded_wrappers, (std::vector<std::string>{"xmalloc"}));
  // A series' stacks, given by the caller, decide for each of its dumps the same way.
  Profile lone;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 1: 100 [ 1: 100] @ heapprofile\n"
                       " 1: 100 [ 1: 100] @ 0x100 0xc00 0xd00 0x400\n",
                       "q.heap", &lone, &e))
      << e.Message();
  const std::vector<std::vector<uint64_t>> series = {{0x100, 0xc00, 0xd00, 0x400},
                                                     {0x100, 0xc00, 0xe00, 0x400},
                                                     {0x100, 0xc00, 0xf00, 0x400},
                                                     {0x100, 0xc00, 0x1000, 0x400}};
  PipelineOptions o;
  o.wrapper_stacks = &series;
  ASSERT_TRUE(BuildStackSamples(lone, sym, o, &s, &err)) << err;
  EXPECT_EQ(Leaves(s), (std::vector<std::string>{"one"}));
}

// The sampling variance through the pipeline (model/estimate.h): each row's from its values at
// the file's rate, summed per stack and in the total; a --base row's is added, not subtracted.
TEST(Pipeline, VariancesAddUpThroughMergeAndBase) {
  Profile a, b;
  ParseError e;
  ASSERT_TRUE(
      ParseProfileText("heap profile: 3: 300000 [ 3: 300000] @ heap_v2/524288\n"
                       " 2: 200000 [ 2: 200000] @ 0x100 0x200 0x400\n"
                       " 1: 100000 [ 1: 100000] @ 0x100 0x200 0x400\n",
                       "a.heap", &a, &e))
      << e.Message();
  ASSERT_TRUE(
      ParseProfileText("heap profile: 1: 100000 [ 1: 100000] @ heap_v2/524288\n"
                       " 1: 100000 [ 1: 100000] @ 0x100 0x200 0x400\n",
                       "b.heap", &b, &e))
      << e.Message();
  const double rate = 524288;
  const double one =
      UnsampledRowVariance(a.samples[1].value.inuse_objects, a.samples[1].value.inuse_bytes, rate)
          .bytes;
  ASSERT_GT(one, 0);
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(a, sym, PipelineOptions{}, &s, &err)) << err;
  ASSERT_EQ(s.samples.size(), 1u);  // two rows, one stack
  EXPECT_NEAR(s.samples[0].variance, 3 * one, 1e-6 * one);
  EXPECT_NEAR(s.total_variance, 3 * one, 1e-6 * one);
  EXPECT_EQ(s.variance_source, VarianceSource::kMeanSize);  // not a heapkit dump
  a.AddProfile(b, /*negate=*/true);
  ASSERT_TRUE(BuildStackSamples(a, sym, PipelineOptions{}, &s, &err)) << err;
  EXPECT_NEAR(s.total, 2 * a.samples[1].value.inuse_bytes, 1e-6 * s.total);
  EXPECT_NEAR(s.total_variance, 4 * one, 1e-6 * one);
  // An exact profile: no variance anywhere.
  ASSERT_TRUE(BuildStackSamples(MakeProfile(), sym, PipelineOptions{}, &s, &err)) << err;
  EXPECT_EQ(s.total_variance, 0);
  EXPECT_EQ(s.variance_source, VarianceSource::kExact);
}

// A heapkit dump's recorded variances (`# heapkit: variance` before each record, from each
// sample's own size) are used as written, summed per stack, and the source says so; one record
// without its line and the profile's variances are derived again (at the rows' mean sizes).
TEST(Pipeline, RecordedVariancesAreUsedAsWritten) {
  const std::string text =
      "heap profile: 3: 300000 [ 3: 300000] @ heap_v2/524288\n"
      "# heapkit: variance 1 4000000000000.5 2 9e+12\n"
      " 2: 200000 [ 2: 200000] @ 0x100 0x200 0x400\n"
      "# heapkit: variance 0.25 1000000000000 0.5 3e12\n"
      " 1: 100000 [ 1: 100000] @ 0x100 0x200 0x400\n";
  Profile a;
  ParseError e;
  ASSERT_TRUE(ParseProfileText(text, "a.heap", &a, &e)) << e.Message();
  ASSERT_EQ(a.samples.size(), 2u);
  EXPECT_TRUE(a.variance_recorded);
  EXPECT_TRUE(a.samples[0].has_variance);
  EXPECT_DOUBLE_EQ(a.samples[0].variance.inuse_bytes, 4000000000000.5);
  EXPECT_DOUBLE_EQ(a.samples[0].variance.alloc_bytes, 9e12);
  EXPECT_DOUBLE_EQ(a.samples[1].variance.inuse_objects, 0.25);
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(a, sym, PipelineOptions{}, &s, &err)) << err;
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_DOUBLE_EQ(s.samples[0].variance, 5000000000000.5);
  EXPECT_DOUBLE_EQ(s.total_variance, 5000000000000.5);
  EXPECT_EQ(s.variance_source, VarianceSource::kRecorded);
  EXPECT_NE(IntervalNote(s.variance_source).find("recorded"), std::string::npos);
  PipelineOptions alloc_space;
  alloc_space.view.sample_type = SampleType::kAllocSpace;
  ASSERT_TRUE(BuildStackSamples(a, sym, alloc_space, &s, &err)) << err;
  EXPECT_DOUBLE_EQ(s.total_variance, 1.2e13);

  // The second record's line missing: derived for all, and the note says approximated.
  const std::string partial = text.substr(0, text.rfind("# heapkit: variance")) +
                              " 1: 100000 [ 1: 100000] @ 0x100 0x200 0x400\n";
  Profile b;
  ASSERT_TRUE(ParseProfileText(partial, "b.heap", &b, &e)) << e.Message();
  EXPECT_FALSE(b.variance_recorded);
  ASSERT_TRUE(BuildStackSamples(b, sym, PipelineOptions{}, &s, &err)) << err;
  EXPECT_EQ(s.variance_source, VarianceSource::kMeanSize);
}

TEST(Pipeline, DropFramesAndShowFrom) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  PipelineOptions o;
  o.view.drop_frames = "^lea";  // the leaf is dropped like an allocator frame
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err)) << err;
  EXPECT_EQ(Leaves(s), (std::vector<std::string>{"inner", "main"}));
  o = PipelineOptions();
  o.view.show_from = "^(outer|main)$";  // callers above the root-most match go
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err)) << err;
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].frames.size(), 4u);  // leaf inner outer main
  o.view.show_from = "^outer$";
  ASSERT_TRUE(BuildStackSamples(p, sym, o, &s, &err)) << err;
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].frames.size(), 3u);  // leaf inner outer (main dropped)
  EXPECT_TRUE(s.samples[1].frames.empty());   // no match: no frames, still in the total
  EXPECT_EQ(s.total, 300);
  o.view.show_from = "(";
  EXPECT_FALSE(BuildStackSamples(p, sym, o, &s, &err));
  EXPECT_NE(err.find("--show_from"), std::string::npos) << err;
}

TEST(Pipeline, DiffBaseTotalIsTheBase) {
  Profile p = MakeProfile();  // 300 in use
  Profile base = MakeProfile();
  base.samples[0].value.inuse_bytes = 400;  // base: 400 + 200 = 600
  p.diff_base_begin = p.samples.size();
  p.AddProfile(base, true);
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err));
  EXPECT_EQ(s.total, 600);  // percentages refer to the base
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].value, -300);
}

TEST(Reports, TreeAndPeek) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err, out;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err));
  ReportOptions ro;
  ASSERT_TRUE(TreeReport(s, "", ro, &out, &err)) << err;
  // leaf's block: its callers above it with their share of its cum.
  EXPECT_NE(out.find("200B  66.67% |   main\n"), std::string::npos) << out;
  EXPECT_NE(out.find("100B  33.33% |   inner\n"), std::string::npos) << out;
  EXPECT_NE(out.find("| leaf\n"), std::string::npos) << out;
  ASSERT_TRUE(TreeReport(s, "^outer$", ro, &out, &err)) << err;
  EXPECT_EQ(out.find("| leaf\n"), std::string::npos) << out;  // only outer's block
  EXPECT_NE(out.find("| outer\n"), std::string::npos) << out;
  EXPECT_FALSE(TreeReport(s, "nomatch", ro, &out, &err));
}

TEST(Reports, DropNegative) {
  Profile p = MakeProfile();
  Profile base = MakeProfile();
  base.samples[0].value.inuse_bytes = 150;  // outer's stack goes down by 50
  p.AddProfile(base, true);
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err));
  ReportOptions ro;
  EXPECT_NE(TextReport(s, ro).find("outer"), std::string::npos);
  ro.graph.drop_negative = true;
  EXPECT_EQ(TextReport(s, ro).find("outer"), std::string::npos);
}

TEST(Reports, TextCollapsedTracesList) {
  Profile p = MakeProfile();
  FakeSymbolizer sym;
  StackSamples s;
  std::string err;
  ASSERT_TRUE(BuildStackSamples(p, sym, PipelineOptions{}, &s, &err));
  ReportOptions ro;
  std::string text = TextReport(s, ro);
  EXPECT_NE(text.find("of 300B total"), std::string::npos) << text;
  EXPECT_NE(text.find("300B 100.00% 100.00%       300B 100.00%  leaf"), std::string::npos) << text;
  std::string folded = CollapsedReport(s);
  EXPECT_NE(folded.find("main;outer;inner;leaf 100\n"), std::string::npos) << folded;
  EXPECT_NE(folded.find("main;leaf 200\n"), std::string::npos) << folded;
  std::string traces = TracesReport(s, ro);
  EXPECT_NE(traces.find("inner (inline)"), std::string::npos) << traces;
  ro.top_n = 1;
  text = TextReport(s, ro);
  EXPECT_NE(text.find("Showing top 1 nodes out of 4"), std::string::npos) << text;

  PipelineOptions lo;
  lo.view.granularity = Granularity::kLines;
  ASSERT_TRUE(BuildStackSamples(p, sym, lo, &s, &err));
  std::string list;
  ASSERT_TRUE(ListReport(s, "^leaf$", ro, &list, &err)) << err;
  EXPECT_NE(list.find("ROUTINE ======================== leaf in a.cc"), std::string::npos) << list;
  EXPECT_FALSE(ListReport(s, "nomatch", ro, &list, &err));
  EXPECT_NE(err.find("no function matches"), std::string::npos);
  std::string cg = CallgrindReport(s, ro);
  EXPECT_NE(cg.find("events: inuse_space"), std::string::npos);
  EXPECT_NE(cg.find("fn=leaf\n10 100\n11 200\n"), std::string::npos) << cg;
}

}  // namespace
}  // namespace heapkit::pprof
