#include "alloc/thread_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <vector>

#include "tier_fixture.h"

namespace heapkit::alloc {
namespace {

class ThreadCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tiers_ = std::make_unique<testing::Tiers>();
    registry_ = std::make_unique<ThreadCacheRegistry>();
    registry_->Init(tiers_->central, &tiers_->sizemap, 4 << 20);
  }
  std::unique_ptr<testing::Tiers> tiers_;
  std::unique_ptr<ThreadCacheRegistry> registry_;
};

TEST_F(ThreadCacheTest, SlowStartGrowsMaxLength) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(32);
  const uint32_t batch = static_cast<uint32_t>(tiers_->sizemap.NumToMove(cls));
  // max_length starts at 0 (no capacity reserved until the class is used).
  EXPECT_EQ(tc->list(cls).max_length(), 0u);
  EXPECT_EQ(tc->capacity(), 0u);
  std::vector<void*> held;
  // Each empty-list fetch grows max_length by one until the batch size.
  for (uint32_t i = 0; i < 5; ++i) {
    void* p = tc->Allocate(cls);
    ASSERT_NE(p, nullptr);
    held.push_back(p);
    while (tc->list(cls).length > 0) held.push_back(tc->Allocate(cls));
    EXPECT_EQ(tc->list(cls).max_length(), std::min(batch, i + 1));
    EXPECT_EQ(tc->capacity(), tc->list(cls).max_length() * tiers_->sizemap.ClassSize(cls));
  }
  std::set<void*> unique(held.begin(), held.end());
  EXPECT_EQ(unique.size(), held.size());
  for (void* p : held) tc->Deallocate(p, cls);
  EXPECT_LE(tc->list(cls).length, tc->list(cls).max_length());
  EXPECT_EQ(tc->size(), tc->list(cls).length * tiers_->sizemap.ClassSize(cls));
  registry_->Destroy(tc);
  EXPECT_EQ(tiers_->central[cls].NumSpans(), 0u) << "everything returned at thread exit";
}

TEST_F(ThreadCacheTest, ScavengeMovesHalfTheLowWaterMark) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(256);
  std::vector<void*> held;
  for (int i = 0; i < 200; ++i) held.push_back(tc->Allocate(cls));
  for (void* p : held) tc->Deallocate(p, cls);
  held.clear();
  for (int i = 0; i < 8; ++i) held.push_back(tc->Allocate(cls));
  for (void* p : held) tc->Deallocate(p, cls);
  ASSERT_GE(tc->list(cls).length, 2u);
  tc->Scavenge();  // lowater := length
  EXPECT_EQ(tc->list(cls).lowater, uint32_t{tc->list(cls).length});
  const uint32_t before = tc->list(cls).length;
  tc->Scavenge();  // nothing was used since: release lowater/2
  EXPECT_EQ(uint32_t{tc->list(cls).length}, before - before / 2);
  EXPECT_EQ(tc->size(), tc->list(cls).length * tiers_->sizemap.ClassSize(cls));
  registry_->Destroy(tc);
  EXPECT_EQ(tiers_->central[cls].NumSpans(), 0u);
}

TEST_F(ThreadCacheTest, CacheSizeStaysNearMaxSize) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(8192);
  std::vector<void*> held;
  for (int i = 0; i < 400; ++i) held.push_back(tc->Allocate(cls));  // 3.2 MiB
  for (void* p : held) tc->Deallocate(p, cls);
  EXPECT_LE(tc->size(), tc->max_size() + tiers_->sizemap.ClassSize(cls));
  registry_->Destroy(tc);
}

// A hot list far under max_size is never trimmed, however many bytes go through it (no byte
// accounting on the fast paths; GC only runs when a growth finds no capacity).
TEST_F(ThreadCacheTest, HotListUnderMaxSizeIsNeverGced) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(4096);
  std::vector<void*> v;
  for (int round = 0; round < 2000; ++round) {  // 2000 * 16 * 4 KiB freed >> max_size
    for (int i = 0; i < 16; ++i) v.push_back(tc->Allocate(cls));
    for (void* p : v) tc->Deallocate(p, cls);
    v.clear();
  }
  EXPECT_EQ(tc->size(), tc->list(cls).length * tiers_->sizemap.ClassSize(cls));
  EXPECT_GE(uint32_t{tc->list(cls).length}, 16u) << "no GC: the cache never exceeded max_size";
  EXPECT_LE(tc->size(), tc->max_size());
  registry_->Destroy(tc);
}

// GC uses a low-water estimate kept off the fast path: a list that ran empty since the last GC
// (refilled from the central tier) keeps everything; an untouched one gives back half.
TEST_F(ThreadCacheTest, ScavengeKeepsListsThatRanEmpty) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t hot = tiers_->sizemap.SizeClass(1024);
  const uint32_t cold = tiers_->sizemap.SizeClass(2048);
  std::vector<void*> v;
  for (uint32_t cls : {hot, cold}) {
    for (int i = 0; i < 40; ++i) v.push_back(tc->Allocate(cls));
    for (void* p : v) tc->Deallocate(p, cls);
    v.clear();
  }
  tc->Scavenge();  // lowater := length for both
  const uint32_t cold_len = tc->list(cold).length;
  ASSERT_GE(cold_len, 2u);
  // Drain the hot list to empty (one refill), then give everything back.
  while (tc->list(hot).length > 0) v.push_back(tc->Allocate(hot));
  v.push_back(tc->Allocate(hot));
  for (void* p : v) tc->Deallocate(p, hot);
  v.clear();
  const uint32_t hot_len = tc->list(hot).length;
  ASSERT_GE(hot_len, 1u);
  tc->Scavenge();
  EXPECT_EQ(uint32_t{tc->list(hot).length}, hot_len) << "ran empty: lowater 0, nothing moved";
  EXPECT_EQ(uint32_t{tc->list(cold).length}, cold_len - cold_len / 2);
  registry_->Destroy(tc);
}

// Capacity model: sum of max_length * size never exceeds max_size, so neither do the bytes
// cached, whatever mix of classes is freed; capacity() is exactly that sum.
TEST_F(ThreadCacheTest, CapacityBoundsTheCache) {
  registry_->SetMaxTotal(ThreadCache::kMinSize + 2 * ThreadCache::kStealAmount);
  ThreadCache* tc = registry_->Create(1);
  std::vector<std::pair<void*, uint32_t>> held;
  for (int round = 0; round < 3; ++round) {
    for (size_t size = 16; size <= 64 * 1024; size += size / 4) {
      const uint32_t cls = tiers_->sizemap.SizeClass(size);
      for (int i = 0; i < 24; ++i) held.emplace_back(tc->Allocate(cls), cls);
    }
    for (auto [p, cls] : held) {
      ASSERT_NE(p, nullptr);
      tc->Deallocate(p, cls);
      ASSERT_LE(tc->size(), tc->capacity());
      ASSERT_LE(tc->capacity(), tc->max_size());
    }
    held.clear();
  }
  size_t sum = 0;
  for (int c = 1; c < tiers_->sizemap.num_classes(); ++c) {
    sum += size_t{tc->list(c).max_length()} * tiers_->sizemap.ClassSize(c);
  }
  EXPECT_EQ(tc->capacity(), sum);
  EXPECT_EQ(tc->max_size(), ThreadCache::kMinSize + 2 * ThreadCache::kStealAmount)
      << "took the unclaimed budget before trimming itself";
  registry_->Destroy(tc);
}

// GC gives back the capacity of lists that saw no refill or overflow since the previous GC
// (max_length := length); a list that is used keeps its max_length.
TEST_F(ThreadCacheTest, ScavengeReturnsUnusedCapacity) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(512);
  std::vector<void*> v;
  for (int i = 0; i < 100; ++i) v.push_back(tc->Allocate(cls));
  for (void* p : v) tc->Deallocate(p, cls);
  v.clear();
  for (int i = 0; i < 30; ++i) v.push_back(tc->Allocate(cls));  // leaves the list shorter
  const uint32_t max = tc->list(cls).max_length();
  ASSERT_GT(max, uint32_t{tc->list(cls).length});
  tc->Scavenge();  // the list was active: max_length kept
  EXPECT_EQ(tc->list(cls).max_length(), max);
  tc->Scavenge();  // idle since: half the low-water mark released, slack given back
  EXPECT_EQ(tc->list(cls).max_length(), uint32_t{tc->list(cls).length});
  EXPECT_EQ(tc->capacity(), tc->list(cls).length * tiers_->sizemap.ClassSize(cls));
  for (void* p : v) tc->Deallocate(p, cls);  // frees still work: overflow, then slow start
  EXPECT_LE(tc->size(), tc->capacity());
  registry_->Destroy(tc);
  EXPECT_EQ(tiers_->central[cls].NumSpans(), 0u);
}

TEST_F(ThreadCacheTest, MaxSizeGrowsFromBudgetThenBySteal) {
  registry_->SetMaxTotal(2 * ThreadCache::kMinSize + ThreadCache::kStealAmount);
  ThreadCache* a = registry_->Create(1);
  ThreadCache* b = registry_->Create(2);
  EXPECT_EQ(a->max_size(), ThreadCache::kMinSize);
  EXPECT_EQ(b->max_size(), ThreadCache::kMinSize);
  EXPECT_EQ(registry_->unclaimed(), static_cast<int64_t>(ThreadCache::kStealAmount));
  registry_->IncreaseCacheLimit(a);  // from the unclaimed budget
  EXPECT_EQ(a->max_size(), ThreadCache::kMinSize + ThreadCache::kStealAmount);
  EXPECT_EQ(registry_->unclaimed(), 0);
  registry_->IncreaseCacheLimit(b);  // nothing unclaimed: steals from a
  EXPECT_EQ(a->max_size(), ThreadCache::kMinSize);
  EXPECT_EQ(b->max_size(), ThreadCache::kMinSize + ThreadCache::kStealAmount);
  registry_->IncreaseCacheLimit(b);  // a is at the minimum: no steal
  EXPECT_EQ(a->max_size(), ThreadCache::kMinSize);
  ThreadCache* c = registry_->Create(3);  // over budget: one steal unit
  EXPECT_EQ(c->max_size(), ThreadCache::kStealAmount);
  EXPECT_EQ(registry_->NumCaches(), 3u);
  registry_->Destroy(a);
  registry_->Destroy(b);
  registry_->Destroy(c);
  EXPECT_EQ(registry_->unclaimed(),
            static_cast<int64_t>(2 * ThreadCache::kMinSize + ThreadCache::kStealAmount));
}

}  // namespace
}  // namespace heapkit::alloc
