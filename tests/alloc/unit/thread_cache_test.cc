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
  EXPECT_EQ(tc->list(cls).max_length, 1u);
  std::vector<void*> held;
  // Each empty-list fetch grows max_length by one until the batch size.
  for (uint32_t i = 0; i < 5; ++i) {
    void* p = tc->Allocate(cls);
    ASSERT_NE(p, nullptr);
    held.push_back(p);
    while (tc->list(cls).length > 0) held.push_back(tc->Allocate(cls));
    EXPECT_EQ(tc->list(cls).max_length, std::min(batch, i + 2));
  }
  std::set<void*> unique(held.begin(), held.end());
  EXPECT_EQ(unique.size(), held.size());
  for (void* p : held) tc->Deallocate(p, cls);
  EXPECT_LE(tc->list(cls).length, tc->list(cls).max_length);
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
  EXPECT_EQ(tc->list(cls).lowater, tc->list(cls).length);
  const uint32_t before = tc->list(cls).length;
  tc->Scavenge();  // nothing was used since: release lowater/2
  EXPECT_EQ(tc->list(cls).length, before - before / 2);
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
