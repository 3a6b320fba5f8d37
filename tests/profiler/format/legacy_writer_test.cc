// The legacy heap-profile writer: exact text, streaming of a huge profile, atomic files.
#include "profiler/format/legacy_writer.h"

#include "profiler/format/heap_profile_text.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace heapkit::prof {
namespace {

struct Rec {
  RecordCounts counts;
  std::vector<const void*> pcs;
};

struct FakeSource {
  std::vector<Rec> records;
  int calls = 0;
  void (*during_second_pass)(void*) = nullptr;
  void* arg = nullptr;
};

void FakeSourceFn(void* ctx, RecordVisitor visit, void* visit_ctx) {
  auto* s = static_cast<FakeSource*>(ctx);
  if (++s->calls == 2 && s->during_second_pass) s->during_second_pass(s->arg);
  for (const Rec& r : s->records)
    visit(visit_ctx, r.counts, r.pcs.data(), static_cast<int>(r.pcs.size()));
}

std::string Render(FakeSource* src, ProfileKind kind, int64_t rate, bool maps) {
  LegacyProfile p;
  p.kind = kind;
  p.sample_rate = rate;
  p.source = &FakeSourceFn;
  p.source_ctx = src;
  p.write_mapped_libraries = maps;
  MemorySink sink;
  EXPECT_TRUE(WriteLegacyProfile(&sink, p));
  return std::string(sink.data(), sink.size());
}

const void* Pc(uintptr_t v) { return reinterpret_cast<const void*>(v); }

TEST(LegacyWriter, ExactText) {
  FakeSource src;
  src.records.push_back({{2, 200, 5, 500}, {Pc(0x401abc), Pc(0x7fffDEADBEEF)}});
  src.records.push_back({{0, 0, 0, 0}, {Pc(0x1)}});  // empty: left out
  src.records.push_back({{1, 1048576, 1, 1048576}, {Pc(0x10)}});
  EXPECT_EQ(Render(&src, ProfileKind::kHeapExact, 1, false),
            "heap profile:      3:  1048776 [     6:  1049076] @ heapprofile\n"
            "     2:      200 [     5:      500] @ 0x0000000000401abc 0x00007fffdeadbeef\n"
            "     1:  1048576 [     1:  1048576] @ 0x0000000000000010\n");
  std::string sampled = Render(&src, ProfileKind::kHeapSampled, 524288, false);
  EXPECT_EQ(sampled.substr(0, sampled.find('\n')),
            "heap profile:      3:  1048776 [     6:  1049076] @ heap_v2/524288");
  std::string growth = Render(&src, ProfileKind::kGrowth, 0, false);
  EXPECT_EQ(growth.substr(0, growth.find('\n')),
            "heap profile:      3:  1048776 [     6:  1049076] @ growthz");
}

// A sampled record's variance rides on a comment line just before it (legacy_writer.h), which
// the one reader (heap_profile_text.h) hands to that record, not to Comment.
TEST(LegacyWriter, SampledRecordsCarryTheirVarianceLineBeforeThem) {
  FakeSource src;
  const RecordVariance small{1.5, 2.25e11, 3, 4.0e11};
  const RecordVariance huge{0, 3.75e18, 0.0004, 1.2345678901234567e25};
  src.records.push_back({{2, 200, 5, 500, &small}, {Pc(0x401abc)}});
  src.records.push_back({{1, 100, 1, 100}, {Pc(0x20)}});  // none recorded: no line
  src.records.push_back({{1, 1048576, 1, 1048576, &huge}, {Pc(0x10)}});
  const std::string text = Render(&src, ProfileKind::kHeapSampled, 524288, false);
  EXPECT_EQ(text,
            "heap profile:      4:  1048876 [     7:  1049176] @ heap_v2/524288\n"
            "# heapkit: variance 1.5 225000000000 3 400000000000\n"
            "     2:      200 [     5:      500] @ 0x0000000000401abc\n"
            "     1:      100 [     1:      100] @ 0x0000000000000020\n"
            "# heapkit: variance 0 375000000000000e+4 0 123456789012346e+11\n"
            "     1:  1048576 [     1:  1048576] @ 0x0000000000000010\n");

  struct Visitor final : HeapTextVisitor {
    std::vector<HeapTextVariance> variances;
    std::vector<bool> has;
    int comments = 0;
    void Record(const HeapTextRecord& r) override {
      has.push_back(r.variance != nullptr);
      if (r.variance != nullptr) variances.push_back(*r.variance);
    }
    void Comment(const char*, size_t) override { ++comments; }
  } read;
  ASSERT_TRUE(ReadHeapText(text.data(), text.size(), &read));
  EXPECT_EQ(read.has, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(read.comments, 0);
  ASSERT_EQ(read.variances.size(), 2u);
  EXPECT_DOUBLE_EQ(read.variances[0].inuse_count, 1.5);
  EXPECT_DOUBLE_EQ(read.variances[0].inuse_bytes, 2.25e11);
  EXPECT_DOUBLE_EQ(read.variances[0].alloc_bytes, 4.0e11);
  EXPECT_NEAR(read.variances[1].inuse_bytes, 3.75e18, 1e-12 * 3.75e18);
  EXPECT_NEAR(read.variances[1].alloc_bytes, 1.2345678901234567e25, 1e-13 * 1.2345678901234567e25);
  EXPECT_EQ(read.variances[1].alloc_count, 0);  // 0.0004 rounds to 0.000
}

TEST(LegacyWriter, ReasonIsOneCommentLineAfterTheHeader) {
  FakeSource src;
  src.records.push_back({{1, 8, 1, 8}, {Pc(0xabc)}});
  LegacyProfile p;
  p.source = &FakeSourceFn;
  p.source_ctx = &src;
  p.write_mapped_libraries = false;
  p.reason = "1026 MB allocated cumulatively,\n5 MB\tcurrently in use";
  MemorySink sink;
  ASSERT_TRUE(WriteLegacyProfile(&sink, p));
  // The reason, then the time and the writing process (heapkit comment lines), the records and
  // the line that tells a complete dump from one cut at a line boundary.
  const std::string text(sink.data(), sink.size());
  const std::regex want(
      "heap profile:      1:        8 \\[     1:        8\\] @ heapprofile\n"
      "# heapkit: dump reason: 1026 MB allocated cumulatively, 5 MB currently in use\n"
      "# heapkit: dump time: ([0-9]+)\\.[0-9]{3} pid " +
      std::to_string(getpid()) +
      "\n"
      "     1:        8 \\[     1:        8\\] @ 0x0000000000000abc\n"
      "# heapkit: end of dump\n");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(text, m, want)) << text;
  EXPECT_LE(std::abs(std::stoll(m[1].str()) - static_cast<long long>(time(nullptr))), 5);
  p.reason = "";  // none: no comment line
  MemorySink plain;
  ASSERT_TRUE(WriteLegacyProfile(&plain, p));
  EXPECT_EQ(std::string(plain.data(), plain.size()).find('#'), std::string::npos);
}

TEST(LegacyWriter, MappedLibrariesSection) {
  FakeSource src;
  src.records.push_back({{1, 8, 1, 8}, {Pc(0xabc)}});
  std::string text = Render(&src, ProfileKind::kHeapExact, 1, true);
  size_t pos = text.find("\n\nMAPPED_LIBRARIES:\n");
  ASSERT_NE(pos, std::string::npos);
  std::string maps = text.substr(pos + strlen("\n\nMAPPED_LIBRARIES:\n"));
  // Full /proc/self/maps lines, with offsets: "lo-hi perms offset dev inode [path]".
  std::regex line(R"(^[0-9a-f]+-[0-9a-f]+ [r-][w-][x-][ps] [0-9a-f]+ [0-9a-f]+:[0-9a-f]+ \d+.*$)");
  std::istringstream in(maps);
  std::string l;
  int n = 0;
  bool saw_test_binary = false;
  while (std::getline(in, l)) {
    ASSERT_TRUE(std::regex_match(l, line)) << l;
    if (l.find("profiler_format_test") != std::string::npos) saw_test_binary = true;
    ++n;
  }
  EXPECT_GT(n, 5);
  EXPECT_TRUE(saw_test_binary);
}

TEST(LegacyWriter, StreamsHugeProfileWithoutDroppingAnything) {
  FakeSource src;
  const int kRecords = 200000;  // ~ 15 MB of text, far beyond any fixed buffer
  src.records.reserve(kRecords);
  for (int i = 0; i < kRecords; ++i)
    src.records.push_back(
        {{1, i + 1, 2, 2 * (i + 1)}, {Pc(0x400000 + i), Pc(0x500000), Pc(0x600000 + 7 * i)}});
  char path[] = "/tmp/heapkit_writer_huge_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  LegacyProfile p;
  p.source = &FakeSourceFn;
  p.source_ctx = &src;
  int err = 0;
  ASSERT_TRUE(WriteLegacyProfileFile(path, p, &err)) << err;
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  int64_t sum_bytes = int64_t{kRecords} * (kRecords + 1) / 2;
  EXPECT_EQ(header, "heap profile: " + std::string(6 - std::to_string(kRecords).size(), ' ') +
                        std::to_string(kRecords) + ": " + std::to_string(sum_bytes) + " [" +
                        std::to_string(2 * kRecords) + ": " + std::to_string(2 * sum_bytes) +
                        "] @ heapprofile");
  std::string l;
  int lines = 0;
  int64_t bytes = 0;
  while (std::getline(in, l) && !l.empty()) {
    ++lines;
    bytes += std::stoll(l.substr(l.find(':') + 1));
  }
  EXPECT_EQ(lines, kRecords);
  EXPECT_EQ(bytes, sum_bytes);
  std::getline(in, l);
  EXPECT_EQ(l, "MAPPED_LIBRARIES:");
  unlink(path);
}

struct AtomicCheck {
  const char* path;
  std::string old_content;
  bool checked = false;
  bool old_intact = false;
};

void CheckDuringWrite(void* arg) {
  auto* c = static_cast<AtomicCheck*>(arg);
  std::ifstream in(c->path);
  std::stringstream ss;
  ss << in.rdbuf();
  c->checked = true;
  c->old_intact = ss.str() == c->old_content;
}

TEST(LegacyWriter, FileIsReplacedAtomically) {
  const char* path = "/tmp/heapkit_writer_atomic.heap";
  {
    std::ofstream out(path);
    out << "old profile\n";
  }
  FakeSource src;
  src.records.push_back({{1, 8, 1, 8}, {Pc(0xabc)}});
  AtomicCheck check{path, "old profile\n"};
  src.during_second_pass = &CheckDuringWrite;
  src.arg = &check;
  LegacyProfile p;
  p.source = &FakeSourceFn;
  p.source_ctx = &src;
  int err = 0;
  ASSERT_TRUE(WriteLegacyProfileFile(path, p, &err));
  EXPECT_TRUE(check.checked);
  EXPECT_TRUE(check.old_intact) << "the final name held a partial profile while writing";
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("heap profile:", 0), 0u);
  std::string tmp = std::string(path) + ".tmp." + std::to_string(getpid());
  EXPECT_NE(access(tmp.c_str(), F_OK), 0) << "temporary left behind";
  unlink(path);
}

TEST(LegacyWriter, UnwritableDirectoryFailsCleanly) {
  FakeSource src;
  LegacyProfile p;
  p.source = &FakeSourceFn;
  p.source_ctx = &src;
  int err = 0;
  EXPECT_FALSE(WriteLegacyProfileFile("/nonexistent-dir-heapkit/x.heap", p, &err));
  EXPECT_EQ(err, ENOENT);
}

}  // namespace
}  // namespace heapkit::prof
