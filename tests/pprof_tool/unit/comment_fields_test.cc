// The readers of heapkit's comment-line fields (pprof-tool/model/comment_fields.h): what they
// take, where they stop, and what they refuse.
#include "pprof-tool/model/comment_fields.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace heapkit::pprof {
namespace {

TEST(CommentFields, DecimalsUpToNineteenDigits) {
  std::string_view s = "1234 rest";
  uint64_t v = 0;
  ASSERT_TRUE(ReadDecimal(&s, &v));
  EXPECT_EQ(v, 1234u);
  EXPECT_EQ(s, " rest");
  s = "x1";
  EXPECT_FALSE(ReadDecimal(&s, &v));
  EXPECT_EQ(s, "x1");
  s = "99999999999999999999";  // 20 digits: 19 are read, the 20th is left
  ASSERT_TRUE(ReadDecimal(&s, &v));
  EXPECT_EQ(v, 9999999999999999999u);
  EXPECT_EQ(s, "9");
}

TEST(CommentFields, HexWordsOfEitherCase) {
  uint64_t v = 0;
  std::string_view s = "0x00007fAbCdEf0123 next";
  ASSERT_TRUE(ReadHexWord(&s, &v));
  EXPECT_EQ(v, 0x7fabcdef0123u);
  EXPECT_EQ(s, " next");
  s = "0XFFFFFFFFFFFFFFFF";
  ASSERT_TRUE(ReadHexWord(&s, &v));
  EXPECT_EQ(v, ~uint64_t{0});
  EXPECT_TRUE(s.empty());
  for (std::string_view bad : {"0x", "0xg", "x12", "12", ""}) {
    std::string_view b = bad;
    EXPECT_FALSE(ReadHexWord(&b, &v)) << bad;
  }
}

TEST(CommentFields, PcListsStopAtTheEndOrABar) {
  std::vector<uint64_t> pcs;
  std::string_view s = "  0x10 0x20   0x30 | 0x40";
  ASSERT_TRUE(ReadPcList(&s, &pcs));
  EXPECT_EQ(pcs, (std::vector<uint64_t>{0x10, 0x20, 0x30}));
  EXPECT_EQ(s, "| 0x40");
  pcs.clear();
  s = "0x1";
  ASSERT_TRUE(ReadPcList(&s, &pcs));
  EXPECT_EQ(pcs, (std::vector<uint64_t>{1}));
  // A 17-digit value, a word glued to the next, something that is not a pc: refused.
  for (std::string_view bad : {"0x11111111111111111", "0x10x2", "0x1 main", "0x1,0x2"}) {
    std::string_view b = bad;
    pcs.clear();
    EXPECT_FALSE(ReadPcList(&b, &pcs)) << bad;
  }
}

}  // namespace
}  // namespace heapkit::pprof
