// The memory comment lines of heapkit's dumps: the figures, the size classes, the residency
// per stack spread over its samples and un-sampled like their in-use bytes, and the table.
#include <gtest/gtest.h>

#include <cmath>

#include "pprof-tool/model/memory_figures.h"
#include "pprof-tool/model/profile.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/proto/sample_index.h"
#include "pprof-tool/report/reports.h"

namespace heapkit::pprof {
namespace {

bool Parse(const std::string& text, Profile* p) {
  ParseError e;
  return ParseProfileText(text, "t.heap", p, &e);
}

TEST(MemoryFigures, ResidencySpreadOverTheStacksSamplesAndUnsampled) {
  Profile p;
  // Two records of one stack (two size keys), one of another; sampled at 1 MiB.
  ASSERT_TRUE(
      Parse("heap profile: 3: 3145728 [3: 3145728] @ heap_v2/1048576\n"
            "# heapkit: memory rss 9000000\n"
            "# heapkit: residency 1000 0 50 @ 0x0000000000400100 0x0000000000400200\n"
            "# heapkit: residency 2000000 1000000 0 @ 0x0000000000400300\n"
            "# heapkit: residency 1 2 bad\n"
            "1: 1024 [1: 1024] @ 0x0000000000400100 0x0000000000400200\n"
            "1: 3072 [1: 3072] @ 0x0000000000400100 0x0000000000400200\n"
            "1: 3141632 [1: 3141632] @ 0x0000000000400300\n",
            &p));
  ASSERT_EQ(p.samples.size(), 3u);
  // Shares by raw in-use bytes: 1024 / 4096 and 3072 / 4096 of the stack's 1000 resident bytes.
  EXPECT_DOUBLE_EQ(p.samples[0].raw.resident_bytes, 250);
  EXPECT_DOUBLE_EQ(p.samples[1].raw.resident_bytes, 750);
  EXPECT_DOUBLE_EQ(p.samples[0].raw.stranded_bytes, 12.5);
  // Un-sampled with the record's own factor (value.inuse / raw.inuse).
  for (const RawSample& s : p.samples) {
    EXPECT_NEAR(s.value.resident_bytes / s.raw.resident_bytes,
                s.value.inuse_bytes / s.raw.inuse_bytes, 1e-9);
  }
  EXPECT_DOUBLE_EQ(p.samples[2].raw.swapped_bytes, 1000000);
  EXPECT_DOUBLE_EQ(p.samples[2].raw.resident_bytes, 2000000);
  // The sample types are listed and selectable.
  SampleType t = SampleType::kInuseSpace;
  std::string error;
  EXPECT_TRUE(ResolveSampleIndex(p, "resident_space", &t, &error)) << error;
  EXPECT_EQ(t, SampleType::kResidentSpace);
  EXPECT_TRUE(ResolveSampleIndex(p, "stranded_space", &t, &error)) << error;
  EXPECT_EQ(t, SampleType::kStrandedSpace);
  EXPECT_EQ(MemoryFigure(p, "rss"), 9000000u);
}

TEST(MemoryFigures, WithoutResidencyLinesNoResidencyTypes) {
  Profile p;
  ASSERT_TRUE(
      Parse("heap profile: 1: 100 [1: 100] @ heapprofile\n1: 100 [1: 100] @ 0x400300\n", &p));
  SampleType t = SampleType::kInuseSpace;
  std::string error;
  EXPECT_FALSE(ResolveSampleIndex(p, "resident_space", &t, &error));
  std::string out;
  EXPECT_FALSE(MemoryReport(p, false, &out, &error));
  EXPECT_NE(error.find("no memory figures"), std::string::npos) << error;
}

TEST(MemoryFigures, TableAccountsForRss) {
  Profile p;
  ASSERT_TRUE(
      Parse("heap profile: 1: 1000 [1: 1000] @ heapprofile\n"
            "# heapkit: memory rss 10000\n"
            "# heapkit: memory live_heap 1100\n"
            "# heapkit: memory live_heap_resident 1000\n"
            "# heapkit: memory thread_cache_free 500\n"
            "# heapkit: memory central_free 1500\n"
            "# heapkit: memory pageheap_free_resident 2000\n"
            "# heapkit: memory metadata_arena 1000\n"
            "# heapkit: memory code_and_ro_data 3000\n"
            "# heapkit: memory other_anonymous 500\n"
            "# heapkit: memory recorded_requested 1000\n"
            "# heapkit: memory recorded_usable 1250\n"
            "# heapkit: size_class size=64 spans=2 objects_per_span=128 out=10 "
            "transfer=0 free=246 mostly_empty=2 future=7\n"
            "1: 1000 [1: 1000] @ 0x400300\n",
            &p));
  ASSERT_EQ(p.size_classes.size(), 1u);
  EXPECT_EQ(p.size_classes[0].free, 246u);
  std::vector<MemoryRow> rows;
  int64_t rss = 0;
  std::string error;
  ASSERT_TRUE(BuildMemoryTable(p, &rows, &rss, &error)) << error;
  EXPECT_EQ(rss, 10000);
  auto row = [&](const std::string& label) {
    for (const MemoryRow& r : rows) {
      if (r.label == label) return r.bytes;
    }
    ADD_FAILURE() << "no row " << label;
    return int64_t{0};
  };
  // Requested / usable = 0.8 of the 1000 resident live bytes.
  EXPECT_EQ(row("live objects, requested bytes"), 800);
  EXPECT_EQ(row("size-class rounding of live objects"), 200);
  // 1000 + 500 + 1500 + 2000 + 1000 + 3000 + 500 = 9500 of 10000.
  EXPECT_EQ(row("unexplained"), 500);
  std::string out;
  ASSERT_TRUE(MemoryReport(p, true, &out, &error));
  EXPECT_NE(out.find("5.00%"), std::string::npos) << out;  // the unexplained share
  EXPECT_NE(out.find("15744"), std::string::npos) << out;  // 246 stranded 64-byte objects
}

}  // namespace
}  // namespace heapkit::pprof
