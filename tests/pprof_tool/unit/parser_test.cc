#include <gtest/gtest.h>

#include <cmath>

#include "pprof-tool/parse/legacy_parser.h"

namespace heapkit::pprof {
namespace {

bool Parse(const std::string& text, Profile* p, ParseError* e) {
  return ParseProfileText(text, "f.heap", p, e);
}

TEST(Parser, HeapProfileExact) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile:    3:   300 [    5:   500] @ heapprofile\n"
            "     2:   200 [    3:   300] @ 0x400100 0x400200\n"
            "     1:   100 [    2:   200] @ 0x400300\n"
            "\n"
            "MAPPED_LIBRARIES:\n"
            "00400000-00401000 r-xp 00000000 08:01 123 /bin/prog\n",
            &p, &e))
      << e.Message();
  EXPECT_EQ(p.kind, ProfileKind::kHeapProfile);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].pcs, (std::vector<uint64_t>{0x400100, 0x400200}));
  EXPECT_EQ(p.samples[0].value.inuse_bytes, 200);
  EXPECT_EQ(p.samples[0].value.alloc_objects, 3);
  EXPECT_EQ(p.samples[1].value.alloc_bytes, 200);
  ASSERT_EQ(p.mappings.size(), 1u);
  EXPECT_EQ(p.mappings[0].path, "/bin/prog");
  EXPECT_EQ(p.mappings[0].limit, 0x401000u);
  EXPECT_TRUE(p.has_alloc_columns);
}

TEST(Parser, HeapV2UnsamplesInuseAndAllocSeparately) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile: 1: 1024 [ 4: 65536] @ heap_v2/524288\n"
            " 1: 1024 [ 4: 65536] @ 0x1\n",
            &p, &e))
      << e.Message();
  ASSERT_EQ(p.samples.size(), 1u);
  const double in_scale = 1 / (1 - std::exp(-1024.0 / 524288));
  const double al_scale = 1 / (1 - std::exp(-(65536.0 / 4) / 524288));
  EXPECT_NEAR(p.samples[0].value.inuse_bytes, 1024 * in_scale, 1e-6);
  EXPECT_NEAR(p.samples[0].value.inuse_objects, 1 * in_scale, 1e-9);
  EXPECT_NEAR(p.samples[0].value.alloc_bytes, 65536 * al_scale, 1e-6);
  EXPECT_NEAR(p.samples[0].value.alloc_objects, 4 * al_scale, 1e-9);
  EXPECT_EQ(p.samples[0].raw.inuse_bytes, 1024);
  EXPECT_EQ(p.sample_period, 524288u);
}

TEST(Parser, HeapV1UsesHalfTheRate) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile: 1: 1000 [ 1: 1000] @ heap/2000\n 1: 1000 [ 1: 1000] @ 0x1\n", &p, &e));
  EXPECT_NEAR(p.samples[0].value.inuse_bytes, 1000 / (1 - std::exp(-1000.0 / 1000)), 1e-6);
}

TEST(Parser, RateOneOrZeroMeansExact) {
  for (const char* type : {"heap_v2/1", "heap_v2/0", "growth", "heapprofile"}) {
    Profile p;
    ParseError e;
    ASSERT_TRUE(
        Parse(std::string("heap profile: 1: 10 [ 1: 10] @ ") + type + "\n 1: 10 [ 1: 10] @ 0x1\n",
              &p, &e))
        << type << ": " << e.Message();
    EXPECT_EQ(p.samples[0].value.inuse_bytes, 10) << type;
  }
}

TEST(Parser, ToleratesCommentsBlankLinesCrlfUppercaseHexNoPrefixNoAllocColumns) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("# a comment first\n\n"
            "heap profile: 2: 20 @ heapprofile\r\n"
            "# comment between samples\n"
            "  2: 20 @ 0X4005D0 4005E0\r\n"
            "--- Memory map: ---\n"
            "00400000-00401000 r-xp 00000000 08:01 123 /bin/prog\n"
            "garbage line is skipped\n",
            &p, &e))
      << e.Message();
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].pcs, (std::vector<uint64_t>{0x4005d0, 0x4005e0}));
  EXPECT_EQ(p.samples[0].value.alloc_bytes, 20);  // copied from in-use when absent
  EXPECT_FALSE(p.has_alloc_columns);
  EXPECT_EQ(p.mappings.size(), 1u);
}

TEST(Parser, DumpReasonComment) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile:    1:   100 [    1:   100] @ heapprofile\n"
            "# heapkit: dump reason: 1026 MB allocated cumulatively, 5 MB currently in use\r\n"
            "# heapkit: dump reason: a second one is not the reason\n"
            "     1:   100 [    1:   100] @ 0x400300\n",
            &p, &e))
      << e.Message();
  EXPECT_EQ(p.dump_reason, "1026 MB allocated cumulatively, 5 MB currently in use");
  ASSERT_EQ(p.samples.size(), 1u);
  Profile plain;
  ASSERT_TRUE(
      Parse("heap profile: 1: 100 [1: 100] @ heapprofile\n# other comment\n"
            "1: 100 [1: 100] @ 0x400300\n",
            &plain, &e));
  EXPECT_EQ(plain.dump_reason, "");
}

struct BadCase {
  const char* name;
  std::string text;
  int line;
  const char* needle;
};

TEST(Parser, BadFilesGiveFileLineAndExpectation) {
  const BadCase cases[] = {
      {"empty", "", 1, "found end of file"},
      {"only comments", "# x\n\n", 3, "found end of file"},
      {"binary",
       std::string("\x7f"
                   "ELF\x02\x01\x01\0\0\0",
                   10),
       1, "binary data"},
      {"cpu profile", "--- contention\n", 1, "expected a heap profile header"},
      {"wrong type", "heap profile: 1: 1 [ 1: 1] @ heapz_v3\n", 1, "found 'heapz_v3'"},
      {"bad rate", "heap profile: 1: 1 [ 1: 1] @ heap_v2/abc\n", 1, "sampling rate"},
      {"truncated sample", "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 1: 10 [ 1:", 2,
       "sample line"},
      {"no at", "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 1: 10 [ 1: 10] 0x1\n", 2, "no '@'"},
      {"bad address", "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 1: 10 [ 1: 10] @ 0xzz\n", 2,
       "hex address"},
      {"huge count",
       "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 99999999999999999999: 1 [ 1: 1] @ 0x1\n", 2,
       "below 2^53"},
      {"long address",
       "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 1: 1 [ 1: 1] @ 0x12345678901234567\n", 2,
       "16 hex"},
      {"bytes without objects", "heap profile: 1: 1 [ 1: 1] @ heapprofile\n 0: 100 [ 1: 1] @ 0x1\n",
       2, "object count is 0"},
      {"trailing junk in header", "heap profile: 1: 1 [ 1: 1] @ heapprofile extra\n", 1,
       "end of header"},
      {"binary in body", "heap profile: 1: 1 [ 1: 1] @ heapprofile\n\x01\x02\x03\n", 2,
       "binary data"},
  };
  for (const BadCase& c : cases) {
    Profile p;
    ParseError e;
    EXPECT_FALSE(Parse(c.text, &p, &e)) << c.name;
    EXPECT_EQ(e.line, c.line) << c.name << ": " << e.Message();
    EXPECT_NE(e.Message().find(c.needle), std::string::npos) << c.name << ": " << e.Message();
    EXPECT_EQ(e.Message().rfind("f.heap:" + std::to_string(c.line) + ": ", 0), 0u) << e.Message();
    EXPECT_EQ(e.Message().find('\n'), std::string::npos) << c.name;
  }
}

TEST(Parser, LyingHeaderTotalsAreIgnoredInACompleteFile) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile: 999: 999999 [ 999: 999999] @ heapprofile\n 1: 10 [ 1: 10] @ 0x1\n"
            "\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1 /bin/x\n",
            &p, &e));
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].value.inuse_bytes, 10);
  EXPECT_EQ(p.header_totals.inuse_bytes, 999999);
}

// Cut at a line boundary: fewer objects than the header counts and no memory map.
TEST(Parser, MissingRecordsAndMapAreATruncatedFile) {
  Profile p;
  ParseError e;
  EXPECT_FALSE(
      Parse("heap profile: 2: 20 [ 3: 30] @ heapprofile\n 1: 10 [ 1: 10] @ 0x1\n", &p, &e));
  EXPECT_EQ(e.Message(),
            "f.heap:2: expected the header's 2 in-use and 3 allocated objects, found 1 "
            "and 1 and no memory map (truncated?)");
  // Totals that match (a hand-written file, or one whose last records were empty): accepted.
  EXPECT_TRUE(Parse("heap profile: 1: 10 [ 1: 10] @ heapprofile\n 1: 10 [ 1: 10] @ 0x1\n", &p, &e));
}

// heapkit's dumps carry their time and end with a line of their own: any cut is refused.
TEST(Parser, HeapkitDumpWithoutItsEndLineIsTruncated) {
  const std::string whole =
      "heap profile: 1: 10 [ 1: 10] @ heapprofile\n"
      "# heapkit: dump reason: signal\n"
      "# heapkit: dump time: 1795714610.016 pid 6045\n"
      " 1: 10 [ 1: 10] @ 0x1\n"
      "\nMAPPED_LIBRARIES:\n00400000-00401000 r-xp 00000000 08:01 1 /bin/x\n"
      "# heapkit: end of dump\n";
  Profile p;
  ParseError e;
  ASSERT_TRUE(Parse(whole, &p, &e)) << e.Message();
  EXPECT_EQ(p.dump_pid, 6045);
  EXPECT_DOUBLE_EQ(p.dump_time, 1795714610.016);
  const std::string cut = whole.substr(0, whole.rfind("# heapkit: end"));
  ASSERT_FALSE(Parse(cut, &p, &e));
  EXPECT_EQ(e.Message(),
            "f.heap:7: expected the dump's last line '# heapkit: end of dump', found "
            "end of file (truncated?)");
}

TEST(Parser, UnreadableFiles) {
  Profile p;
  ParseError e;
  EXPECT_FALSE(ReadProfileFile("/nonexistent/x.heap", &p, &e));
  EXPECT_NE(e.Message().find("/nonexistent/x.heap: cannot open"), std::string::npos) << e.Message();
  EXPECT_FALSE(ReadProfileFile("/tmp", &p, &e));
  EXPECT_NE(e.Message().find("regular file"), std::string::npos) << e.Message();
}

TEST(Parser, RawOutputWithSymbolSection) {
  Profile p;
  ParseError e;
  ASSERT_TRUE(Parse(
      "--- symbol\nbinary=/bin/prog\n0x0000000000400100 inner--outer\n0x4001ff main\n---\n"
      "--- heap\nheap profile: 1: 10 [ 1: 10] @ heapprofile\n 1: 10 [ 1: 10] @ 0x400100 0x400200\n",
      &p, &e))
      << e.Message();
  EXPECT_EQ(p.binary, "/bin/prog");
  ASSERT_EQ(p.symbols.size(), 2u);
  EXPECT_EQ(p.symbols[0].frames, (std::vector<std::string>{"inner", "outer"}));
  EXPECT_EQ(p.samples.size(), 1u);
}

TEST(Parser, MapsLine) {
  Mapping m;
  EXPECT_TRUE(ParseMapsLine("7f00-7fff r-xp 00001000 fd:01 42   /lib/x.so", &m));
  EXPECT_EQ(m.offset, 0x1000u);
  EXPECT_EQ(m.path, "/lib/x.so");
  EXPECT_TRUE(ParseMapsLine("7f00-7fff rw-p 00000000 00:00 0", &m));
  EXPECT_EQ(m.path, "");
  EXPECT_FALSE(ParseMapsLine("7f00-7fff /lib/x.so", &m));  // no offsets: skipped
  EXPECT_FALSE(ParseMapsLine("hello", &m));
}

TEST(Parser, AddProfileSumsAndNegates) {
  Profile a, b;
  ParseError e;
  ASSERT_TRUE(Parse("heap profile: 1: 10 [ 1: 10] @ heapprofile\n 1: 10 [ 1: 10] @ 0x1\n", &a, &e));
  ASSERT_TRUE(Parse("heap profile: 1: 4 [ 1: 4] @ heapprofile\n 1: 4 [ 1: 4] @ 0x1\n", &b, &e));
  a.AddProfile(b, true);
  ASSERT_EQ(a.samples.size(), 2u);
  EXPECT_EQ(a.samples[1].value.inuse_bytes, -4);
}

TEST(Parser, AddProfileTranslatesPcsOfAnotherProcess) {
  Profile a, b;
  ParseError e;
  ASSERT_TRUE(
      Parse("heap profile: 1: 10 [ 1: 10] @ heapprofile\n 1: 10 [ 1: 10] @ 0x555000001234\n"
            "MAPPED_LIBRARIES:\n"
            "555000000000-555000001000 r--p 00000000 08:01 1 /bin/p\n"
            "555000001000-555000002000 r-xp 00001000 08:01 1 /bin/p\n",
            &a, &e));
  ASSERT_TRUE(Parse(
      "heap profile: 1: 4 [ 1: 4] @ heapprofile\n 1: 4 [ 1: 4] @ 0x777000001234 0x7f0000000010\n"
      "MAPPED_LIBRARIES:\n"
      "777000000000-777000001000 r--p 00000000 08:01 1 /bin/p\n"
      "777000001000-777000002000 r-xp 00001000 08:01 1 /bin/p\n"
      "7f0000000000-7f0000001000 r-xp 00000000 08:01 2 /lib/l.so\n",
      &b, &e));
  a.AddProfile(b, false);
  ASSERT_EQ(a.samples.size(), 2u);
  EXPECT_EQ(a.samples[1].pcs[0], 0x555000001234u);  // same file offset in our address space
  EXPECT_EQ(a.samples[1].pcs[1], 0x7f0000000010u);  // adopted library keeps its address
  EXPECT_EQ(a.mappings.size(), 3u);
  EXPECT_NE(a.maps_text.find("/lib/l.so"), std::string::npos);
}

}  // namespace
}  // namespace heapkit::pprof
