// jemalloc's prof dump format, read by the legacy parser (parse/legacy_parser.cc).
#include <gtest/gtest.h>

#include <cmath>

#include "pprof-tool/parse/legacy_parser.h"

namespace heapkit::pprof {
namespace {

const char kDump[] =
    "heap_v2/524288\n"
    "  t*: 3: 1064960 [0: 0]\n"
    "  t0: 2: 1048576 [0: 0]\n"
    "  t1: 1: 16384 [0: 0]\n"
    "@ 0x7f0000001000 0x55000000a000 0x55000000b000\n"
    "  t*: 2: 1048576 [4: 2097152]\n"
    "  t0: 2: 1048576 [4: 2097152]\n"
    "@ 0x7f0000001000 0x55000000c000\n"
    "  t*: 1: 16384 [1: 16384]\n"
    "  t1: 1: 16384 [1: 16384]\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "55000000a000-55000000d000 r-xp 00001000 fe:00 123 /usr/bin/prog\n";

TEST(JemallocDump, StacksTotalsAndUnsampling) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(ParseProfileText(kDump, "je.heap", &p, &e)) << e.Message();
  EXPECT_EQ(p.kind, ProfileKind::kHeapV2);
  EXPECT_EQ(p.sample_period, 524288u);
  EXPECT_EQ(p.header_totals.inuse_objects, 3);
  EXPECT_EQ(p.header_totals.inuse_bytes, 1064960);
  ASSERT_EQ(p.samples.size(), 2u);  // per-thread lines do not add samples
  EXPECT_EQ(p.samples[0].pcs,
            (std::vector<uint64_t>{0x7f0000001000, 0x55000000a000, 0x55000000b000}));
  EXPECT_EQ(p.samples[0].raw.inuse_bytes, 1048576);
  EXPECT_EQ(p.samples[0].raw.alloc_objects, 4);
  // jeprof's rule: count and bytes scaled by 1/(1-exp(-(bytes/count)/rate)), 1 - exp(-x)
  // computed without cancellation (alloc/sample_weight.h), as -expm1(-x) is.
  const double scale = 1 / -std::expm1(-(1048576.0 / 2) / 524288);
  EXPECT_DOUBLE_EQ(p.samples[0].value.inuse_bytes, 1048576 * scale);
  EXPECT_DOUBLE_EQ(p.samples[0].value.inuse_objects, 2 * scale);
  const double small = 1 / -std::expm1(-16384.0 / 524288);
  EXPECT_DOUBLE_EQ(p.samples[1].value.alloc_bytes, 16384 * small);
  ASSERT_EQ(p.mappings.size(), 1u);
  EXPECT_EQ(p.mappings[0].path, "/usr/bin/prog");
}

TEST(JemallocDump, MalformedLinesNameTheLine) {
  struct Case {
    const char* text;
    int line;
    const char* expected;
  };
  const Case cases[] = {
      {"heap_v2/524288\n@ 0x1\n  t*: 1: 8 [0: 0]\n  t*: 1: 8 [0: 0]\n", 4,
       "expected an '@ <address>...' line before this 't*:' line"},
      {"heap_v2/524288\n@ 0x1\n  x: 1: 8\n", 3, "expected a jemalloc line"},
      {"heap_v2/524288\n@ 0x1\n  t*: 1: -8 [0: 0]\n", 3, "same sign"},
      {"heap_v2/abc\n", 1, "expected a sampling rate"},
  };
  for (const Case& c : cases) {
    Profile p;
    ParseError e;
    EXPECT_FALSE(ParseProfileText(c.text, "je.heap", &p, &e)) << c.text;
    EXPECT_EQ(e.line, c.line) << c.text << ": " << e.Message();
    EXPECT_NE(e.expected.find(c.expected), std::string::npos) << e.Message();
  }
}

}  // namespace
}  // namespace heapkit::pprof
