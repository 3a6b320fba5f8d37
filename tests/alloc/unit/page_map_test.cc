#include "alloc/page_map.h"

#include <gtest/gtest.h>

#include <memory>

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
  map->Set(low, &a, 5 | (64u << 8));
  map->Set(low + 2, &a, 5);
  map->Set(high, &b, 7 | PageMap::kSampledBit);
  EXPECT_EQ(map->GetSpan(low), &a);
  EXPECT_EQ(map->GetSpan(low + 1), nullptr);
  EXPECT_EQ(map->GetSpan(low + 2), &a);
  EXPECT_EQ(map->GetSpan(high), &b);
  EXPECT_EQ(map->Info((low << kPageShift) + 100), 5u | (64u << 8));
  EXPECT_EQ(map->Info(high << kPageShift) & PageMap::kClassMask, 7u);
  EXPECT_NE(map->Info(high << kPageShift) & PageMap::kSampledBit, 0u);
  // Unmapped leaves and addresses beyond 48 bits read as "nothing".
  EXPECT_EQ(map->Info(uintptr_t{1} << 40), 0u);
  EXPECT_EQ(map->Info(uintptr_t{1} << 50), 0u);
  EXPECT_EQ(map->GetSpan(PageId{1} << 40), nullptr);
  EXPECT_FALSE(map->Ensure(PageId{1} << 36, 1));
  int entries = 0;
  map->ForEachEntry([&](PageId, Span*) { ++entries; });
  EXPECT_EQ(entries, 3);
}

}  // namespace
}  // namespace heapkit::alloc
