#include "alloc/page_map.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "alloc/span.h"

namespace heapkit::alloc {
namespace {

TEST(PageMapTest, SetGetAcrossLeavesAndRange) {
  auto map = std::make_unique<PageMap>();
  Span a, b;
  const PageId low = 12345;
  const PageId high = (PageId{1} << 34) + 7;  // far leaf, still below 2^48 bytes
  ASSERT_TRUE(map->Ensure(low, 3));
  ASSERT_TRUE(map->Ensure(high, 1));
  map->Set(low, &a, PageMap::InfoForClass(5));
  map->Set(low + 2, &a, PageMap::InfoForClass(5));
  map->Set(high, &b, PageMap::InfoForClass(7) | PageMap::kSampledBit);
  EXPECT_EQ(map->GetSpan(low), &a);
  EXPECT_EQ(map->GetSpan(low + 1), nullptr);
  EXPECT_EQ(map->GetSpan(low + 2), &a);
  EXPECT_EQ(map->GetSpan(high), &b);
  EXPECT_EQ(map->Info((low << kPageShift) + 100), PageMap::InfoForClass(5));
  EXPECT_EQ(PageMap::ClassOf(map->Info(high << kPageShift)), 7u);
  EXPECT_NE(map->Info(high << kPageShift) & PageMap::kSampledBit, 0u);
  // SetInfo changes the info word only; the class survives setting and clearing the bit.
  map->SetInfo(high, map->GetInfo(high) & ~PageMap::kSampledBit);
  EXPECT_EQ(map->GetInfo(high), PageMap::InfoForClass(7));
  // Unmapped leaves and addresses beyond 48 bits read as "nothing".
  EXPECT_EQ(map->Info(uintptr_t{1} << 40), 0u);
  EXPECT_EQ(map->Info(uintptr_t{1} << 50), 0u);
  EXPECT_EQ(map->GetSpan(PageId{1} << 40), nullptr);
  EXPECT_FALSE(map->Ensure(PageId{1} << 36, 1));
  int entries = 0;
  map->ForEachEntry([&](PageId, Span*) { ++entries; });
  EXPECT_EQ(entries, 3);
}

// The free fast path's lookup: biased root; entry >> 52 is the info and x = a + entry has the
// offset in the span's object grid in its low 52 bits; sampled-bit updates keep the grid.
TEST(PageMapTest, FastPathEntryGivesInfoAndGridOffset) {
  auto map = std::make_unique<PageMap>();
  const PageId start = (PageId{3} << PageMap::kLeafBits) - 2;  // a span across two leaves
  const size_t size = 48;
  ASSERT_TRUE(map->Ensure(start, 4));
  Span span;
  for (Length i = 0; i < 4; ++i) map->SetSmall(start + i, &span, 9, size, i);
  map->SetInfo(start + 1, map->GetInfo(start + 1) | PageMap::kSampledBit);
  for (Length i = 0; i < 4; ++i) {
    const PageId page = start + i;
    const uintptr_t root = map->RootOf(page);
    ASSERT_NE(root, 0u);
    const uint32_t want = PageMap::InfoForClass(9) | (i == 1 ? PageMap::kSampledBit : 0);
    EXPECT_EQ(map->GetInfo(page), want);
    EXPECT_EQ(map->GetSpan(page), &span);
    for (uintptr_t in_page : {uintptr_t{0}, uintptr_t{17}, kPageSize - 1}) {
      const uintptr_t a = (page << kPageShift) + in_page;
      const uint64_t entry = PageMap::EntryAt(root, page);
      EXPECT_EQ(entry >> PageMap::kInfoShift, want);
      const uint64_t x = a + entry;
      const uint64_t off = x & ((uint64_t{1} << PageMap::kInfoShift) - 1);
      EXPECT_EQ(off % size, (a - (start << kPageShift)) % size) << i << " " << in_page;
      EXPECT_LT(off, kPageSize + size);
    }
  }
  EXPECT_EQ(map->RootOf(PageId{1} << 30), 0u);
}

// The hot leaf is the first leaf created and never changes; the fast path's one-load lookup
// (hot_root()) reads the same entries as the general one (RootOf).
TEST(PageMapTest, HotLeafIsTheFirstLeafAndAgreesWithTheRoot) {
  auto map = std::make_unique<PageMap>();
  const PageId first = (PageId{5} << PageMap::kLeafBits) + 100;
  const PageId other = (PageId{9} << PageMap::kLeafBits) + 3;
  for (PageId p : {PageId{0}, first, other}) EXPECT_FALSE(map->InHotLeaf(p)) << p;
  ASSERT_TRUE(map->Ensure(first, 2));
  ASSERT_TRUE(map->Ensure(other, 1));
  EXPECT_TRUE(map->InHotLeaf(first));
  EXPECT_TRUE(map->InHotLeaf(PageId{5} << PageMap::kLeafBits));
  EXPECT_TRUE(map->InHotLeaf((PageId{6} << PageMap::kLeafBits) - 1));
  EXPECT_FALSE(map->InHotLeaf(PageId{6} << PageMap::kLeafBits));
  EXPECT_FALSE(map->InHotLeaf(other));
  EXPECT_FALSE(map->InHotLeaf(PageId{0}));
  // Addresses at or above 2^48 never alias into the hot leaf.
  EXPECT_FALSE(map->InHotLeaf(first | (PageId{1} << (kAddressBits - kPageShift))));
  EXPECT_EQ(map->hot_root(), map->RootOf(first));
  Span a;
  map->SetSmall(first + 1, &a, 4, 64, 1);
  map->Set(first, &a, PageMap::InfoForClass(4));
  EXPECT_EQ(PageMap::EntryAt(map->hot_root(), first + 1),
            PageMap::EntryAt(map->RootOf(first + 1), first + 1));
  EXPECT_EQ(PageMap::EntryAt(map->hot_root(), first) >> PageMap::kInfoShift,
            PageMap::InfoForClass(4));
}

// ForEachEntry visits every set entry although it scans only the range Ensure() covered.
TEST(PageMapTest, ForEachEntryCoversEveryEnsuredRange) {
  auto map = std::make_unique<PageMap>();
  Span s;
  const PageId leaf = PageId{7} << PageMap::kLeafBits;
  const PageId pages[] = {leaf + 50, leaf + 60, leaf + 9, leaf + PageMap::kLeafLength - 1,
                          leaf + PageMap::kLeafLength};  // the last one in the next leaf
  for (PageId p : pages) {
    ASSERT_TRUE(map->Ensure(p, 1));
    map->Set(p, &s, 0);
  }
  std::vector<PageId> seen;
  map->ForEachEntry([&](PageId p, Span* span) {
    EXPECT_EQ(span, &s);
    seen.push_back(p);
  });
  EXPECT_EQ(seen,
            (std::vector<PageId>{leaf + 9, leaf + 50, leaf + 60, leaf + PageMap::kLeafLength - 1,
                                 leaf + PageMap::kLeafLength}));
}

}  // namespace
}  // namespace heapkit::alloc
