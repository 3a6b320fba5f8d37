// The runtime's profile.proto pieces: the shared wire encoder on both of its buffers, the
// malloc-free string table, and the legacy text -> Profile conversion on a small known text.
#include "profiler/format/proto_profile.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profiler/format/mapped_bytes.h"
#include "profiler/format/proto_strings.h"
#include "profiler/base/proto_wire.h"

namespace heapkit::prof {
namespace {

std::string Hex(const char* data, size_t n) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(data[i]));
    out += buf;
  }
  return out;
}

template <class Buffer>
std::string Encode() {
  ProtoWire<Buffer> inner, outer;
  inner.Varint(1, 150);
  const uint64_t values[] = {0, 1, 300};
  outer.PackedVarints(2, values);  // zeros kept: one entry per value
  outer.Message(3, inner);
  outer.Varint(4, 0);  // skipped
  outer.Bytes(6, std::string(), true);
  return Hex(outer.data().data(), outer.data().size());
}

TEST(ProtoWire, SameBytesOnStringAndMappedBytes) {
  // protobuf's documented encodings: field 1 = 150 is 08 96 01; packed [0, 1, 300] in field 2
  // is 12 04 00 01 ac 02.
  EXPECT_EQ(Encode<std::string>(),
            "120400"
            "01ac02"
            "1a03089601"
            "3200");
  EXPECT_EQ(Encode<MappedBytes>(), Encode<std::string>());
}

TEST(MappedBytes, GrowsPastItsInlineBytes) {
  MappedBytes b;
  std::string want;
  for (int i = 0; i < 100000; ++i) {
    const char c = static_cast<char>('a' + i % 26);
    b.push_back(c);
    want.push_back(c);
  }
  b.append(want.data(), want.size());
  want += want.substr(0, 100000);
  ASSERT_FALSE(b.failed());
  EXPECT_EQ(std::string(b.data(), b.size()), want);
}

// field 6 entries of a string table, in order.
std::vector<std::string> Table(const MappedBytes& b) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < b.size()) {
    EXPECT_EQ(b.data()[i], 0x32);                                  // field 6, wire type 2
    const size_t n = static_cast<unsigned char>(b.data()[i + 1]);  // short strings only
    out.emplace_back(b.data() + i + 2, n);
    i += 2 + n;
  }
  return out;
}

TEST(ProtoStrings, IndexesOnceAppendsAlways) {
  ProtoStrings s;
  EXPECT_EQ(s.Index(""), 0);
  EXPECT_EQ(s.Index("inuse_space"), 1);
  EXPECT_EQ(s.Index("bytes"), 2);
  EXPECT_EQ(s.Index("inuse_space"), 1);
  EXPECT_EQ(s.Append("# a comment", 11), 3);
  EXPECT_EQ(s.Append("# a comment", 11), 4);
  for (int i = 0; i < 5000; ++i) s.Index(std::to_string(i).c_str());  // several rehashes
  EXPECT_EQ(s.Index("bytes"), 2);
  EXPECT_EQ(s.Index("4999"), 5004);
  const std::vector<std::string> t = Table(s.table().data());
  ASSERT_EQ(t.size(), 5005u);
  EXPECT_EQ(t[0], "");
  EXPECT_EQ(t[1], "inuse_space");
  EXPECT_EQ(t[4], "# a comment");
  EXPECT_EQ(t[5004], "4999");
}

// Top-level fields of a Profile: field -> count, and the varint values of fields 9 and 12.
struct TopLevel {
  std::map<int, int> count;
  std::map<int, uint64_t> varint;
};

uint64_t ReadVarint(const MappedBytes& b, size_t* i) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto c = static_cast<unsigned char>(b.data()[(*i)++]);
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (c < 0x80) return v;
  }
}

TopLevel Scan(const MappedBytes& b) {
  TopLevel t;
  size_t i = 0;
  while (i < b.size()) {
    const uint64_t key = ReadVarint(b, &i);
    const int field = static_cast<int>(key >> 3);
    ++t.count[field];
    const uint64_t v = ReadVarint(b, &i);
    if ((key & 7) == 2) {
      i += v;
    } else {
      t.varint[field] = v;
    }
  }
  return t;
}

TEST(LegacyTextToProto, ExactPeakProfileWithALifetimeLine) {
  const std::string text =
      "heap profile:      2:      200 [     3:      300] @ heapprofile\n"
      "# heapkit: dump reason: peak profile: 0 MB in use at 0.5 s after profiling start "
      "(estimated 200 bytes; CLOCK_MONOTONIC 5 ns; unix time 1700000000.250)\n"
      "# heapkit: dump time: 1700000009.000 pid 7\n"
      "# heapkit: lifetime 1000 cross 1 100 100 @ 0x0000000000401000 | 0x0000000000401100\n"
      "     2:      200 [     3:      300] @ 0x0000000000401000 0x0000000000401234\n"
      "\nMAPPED_LIBRARIES:\n"
      "00400000-00402000 r-xp 00000000 00:00 0          /nonexistent/prog\n"
      "# heapkit: end of dump\n";
  MappedBytes out;
  ASSERT_TRUE(LegacyTextToProto(text.data(), text.size(), &out));
  const TopLevel t = Scan(out);
  EXPECT_EQ(t.count.at(1), 10);  // Go's four sample types and tcmalloc's six
  EXPECT_EQ(t.count.at(2), 3);   // the record, the lifetime line's stack pair (two samples)
  EXPECT_EQ(t.count.at(3), 1);   // the executable mapping
  EXPECT_EQ(t.count.at(4), 3);   // the allocation stacks' two addresses and the free stack's
  EXPECT_EQ(t.count.at(13), 4);  // every comment line
  EXPECT_EQ(t.varint.at(9), 1700000000250000000u);  // the peak's time, not the dump's
  EXPECT_EQ(t.varint.at(12), 1u);                   // exact counts: period 1
  const std::string bad = "not a heap profile\n";
  MappedBytes none;
  EXPECT_FALSE(LegacyTextToProto(bad.data(), bad.size(), &none));
}

}  // namespace
}  // namespace heapkit::prof
