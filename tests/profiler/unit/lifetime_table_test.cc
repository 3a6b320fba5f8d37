// Lifetimes: the decade bins, the cells (aggregation per key, concurrent counting), and the
// births the live-object map keeps with each record.
#include "profiler/time/lifetime_table.h"

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <tuple>
#include <vector>

#include "profiler/table/stack_table.h"

namespace heapkit::prof {
namespace {

TEST(LifetimeTable, DecadeBins) {
  EXPECT_EQ(LifetimeBin(-5), 0);
  EXPECT_EQ(LifetimeBin(0), 0);
  EXPECT_EQ(LifetimeBin(999), 0);
  EXPECT_EQ(LifetimeBin(1000), 1);  // 1 us
  EXPECT_EQ(LifetimeBin(9999), 1);
  EXPECT_EQ(LifetimeBin(10000), 2);
  EXPECT_EQ(LifetimeBin(50 * 1000 * 1000), 5);              // 50 ms: [10 ms, 100 ms)
  EXPECT_EQ(LifetimeBin(1200LL * 1000 * 1000), 7);          // 1.2 s: [1 s, 10 s)
  EXPECT_EQ(LifetimeBin(3599LL * 1000 * 1000 * 1000), 10);  // [1000 s, 1 h)
  EXPECT_EQ(LifetimeBin(3600LL * 1000 * 1000 * 1000), 11);  // 1 h+
  EXPECT_EQ(LifetimeBin(INT64_MAX), 11);
}

// The bit-scan bins agree with the definition (the highest lower bound at or below the
// lifetime) at and around every bound and every power of two.
TEST(LifetimeTable, DecadeBinsMatchTheBoundsEverywhere) {
  auto reference = [](int64_t ns) {
    int bin = 0;
    for (int i = 1; i < kLifetimeBins; ++i)
      if (ns >= kLifetimeBinLowerNs[i]) bin = i;
    return bin;
  };
  std::vector<int64_t> probes;
  for (int64_t bound : kLifetimeBinLowerNs)
    for (int64_t d = -2; d <= 2; ++d) probes.push_back(bound + d);
  for (int b = 0; b < 63; ++b)
    for (int64_t d = -1; d <= 1; ++d) probes.push_back((int64_t{1} << b) + d);
  for (int64_t ns : probes) {
    if (ns >= 0) {
      EXPECT_EQ(LifetimeBin(ns), reference(ns)) << ns;
    }
  }
}

using Key = std::tuple<uint32_t, uint32_t, int, int>;

std::map<Key, LifetimeCell> Cells() {
  std::map<Key, LifetimeCell> out;
  ForEachLifetimeCell(
      [](void* ctx, const LifetimeCell& c) {
        (*static_cast<std::map<Key, LifetimeCell>*>(
            ctx))[{c.alloc_node, c.free_node, c.bin, static_cast<int>(c.end)}] = c;
      },
      &out);
  return out;
}

TEST(LifetimeTable, CountsPerKeyFromManyThreads) {
  // Keys unique to this test (node ids far above any other test's).
  constexpr uint32_t kNode = 900000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 10000; ++i) {
        CountLifetime(kNode + (i % 3), kNoFreeStack, i % 2, LifetimeEnd::kSameThread, 10, 30);
        if (t == 0) CountLifetime(kNode, kNode + 7, 4, LifetimeEnd::kOtherThread, 1, 2);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const std::map<Key, LifetimeCell> cells = Cells();
  int64_t total = 0;
  for (uint32_t n = 0; n < 3; ++n) {
    for (int bin = 0; bin < 2; ++bin) {
      auto it = cells.find({kNode + n, kNoFreeStack, bin, 0});
      ASSERT_NE(it, cells.end());
      total += it->second.count;
      EXPECT_EQ(it->second.bytes, it->second.count * 10);
      EXPECT_EQ(it->second.estimated_bytes, it->second.count * 30);
    }
  }
  EXPECT_EQ(total, 40000);
  auto cross = cells.find({kNode, kNode + 7, 4, 1});
  ASSERT_NE(cross, cells.end());
  EXPECT_EQ(cross->second.count, 10000);
  EXPECT_EQ(cross->second.estimated_bytes, 20000);
}

// Exact mode's slot records stand for themselves (estimate = size); a cell that also counts
// sampled records (a rate change mid-run) adds only their excess.
TEST(LifetimeTable, ExactRecordsAreEstimatedAtTheirSize) {
  constexpr uint32_t kNode = 910000, kBucket = 123457;
  uint32_t (*node_of)(uint32_t) = [](uint32_t bucket) {
    return bucket == kBucket ? kNode : kNoAllocNode;
  };
  for (int i = 0; i < 1000; ++i)
    CountLifetimeOfBucket(kBucket, node_of, kNoFreeStack, 3, LifetimeEnd::kSameThread, 48);
  CountLifetimeOfBucket(kBucket + 1, node_of, kNoFreeStack, 3, LifetimeEnd::kSameThread, 48);
  for (int i = 0; i < 10; ++i)
    CountLifetime(kNode, kNoFreeStack, 3, LifetimeEnd::kSameThread, 16, 700);
  const std::map<Key, LifetimeCell> cells = Cells();
  auto it = cells.find({kNode, kNoFreeStack, 3, 0});
  ASSERT_NE(it, cells.end());
  EXPECT_EQ(it->second.count, 1010);
  EXPECT_EQ(it->second.bytes, 1000 * 48 + 10 * 16);
  EXPECT_EQ(it->second.estimated_bytes, 1000 * 48 + 10 * 700);
}

TEST(LifetimeTable, MapRecordsKeepTheirBirths) {
  static StackTable t;
  ASSERT_TRUE(t.Init());
  void* pcs[] = {reinterpret_cast<void*>(0x1000)};
  Bucket* b = t.FindOrCreateBucket(pcs, 1, 0);
  ASSERT_NE(b, nullptr);
  const void* a = reinterpret_cast<const void*>(0x10000);
  const void* c = reinterpret_cast<const void*>(0x20000);
  t.RecordAllocIn(nullptr, a, b, 100, ObjectBirth{123456789, 7, 3});
  t.RecordAllocIn(nullptr, c, b, 50);  // no birth: zero
  struct Seen {
    int records = 0;
    ObjectBirth of_a;
  } seen;
  t.ForEachLiveMapRecord(
      [](void* ctx, const void* object, Bucket*, size_t, const ObjectBirth& birth) {
        auto* s = static_cast<Seen*>(ctx);
        ++s->records;
        if (object == reinterpret_cast<const void*>(0x10000)) s->of_a = birth;
      },
      &seen);
  EXPECT_EQ(seen.records, 2);
  EXPECT_EQ(seen.of_a.time_ns, 123456789);
  EXPECT_EQ(seen.of_a.thread, 7u);
  EXPECT_EQ(seen.of_a.interval, 3u);
  size_t size = 0;
  const Bucket* freed_bucket = nullptr;
  ObjectBirth birth;
  ASSERT_TRUE(t.RecordFree(a, &size, &freed_bucket, &birth));
  EXPECT_EQ(size, 100u);
  EXPECT_EQ(freed_bucket, b);
  EXPECT_EQ(birth.time_ns, 123456789);
  EXPECT_EQ(birth.thread, 7u);
  ASSERT_TRUE(t.RecordFree(c, &size, &freed_bucket, &birth));
  EXPECT_EQ(birth.time_ns, 0);
}

}  // namespace
}  // namespace heapkit::prof
