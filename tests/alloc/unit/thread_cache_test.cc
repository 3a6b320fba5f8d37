#include "alloc/thread_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <set>
#include <thread>
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
  // Every object of class cls is back in the central tier: free in its spans or parked in the
  // transfer cache (full batches returned at thread exit stay there).
  void ExpectAllInCentral(uint32_t cls) {
    CentralFreeList& cl = tiers_->central[cls];
    EXPECT_EQ(cl.FreeObjectsInSpans() + cl.TransferObjects(),
              cl.NumSpans() * tiers_->sizemap.ObjectsPerSpan(cls));
    if (cl.TransferObjects() == 0) {
      EXPECT_EQ(cl.NumSpans(), 0u) << "spans back to the page heap";
    }
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
  ExpectAllInCentral(cls);  // everything returned at thread exit
}

// Past kSlowStartLinear (8) max_length doubles per refill, so a busy list reaches whole batches
// (moved in O(1) through the transfer cache) after ~log2(batch) central round trips.
TEST_F(ThreadCacheTest, SlowStartDoublesPastEight) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(64);
  const uint32_t batch = static_cast<uint32_t>(tiers_->sizemap.NumToMove(cls));
  ASSERT_GE(batch, 64u);
  std::vector<void*> held;
  std::vector<uint32_t> maxes;
  while (tc->list(cls).max_length() < batch) {
    held.push_back(tc->Allocate(cls));  // empty list: one refill
    while (tc->list(cls).length > 0) held.push_back(tc->Allocate(cls));
    maxes.push_back(tc->list(cls).max_length());
  }
  std::vector<uint32_t> want;
  for (uint32_t m = 1; m <= 8; ++m) want.push_back(m);  // from 0 after Init
  for (uint32_t m = 16; m < batch; m *= 2) want.push_back(m);
  want.push_back(batch);
  EXPECT_EQ(maxes, want);
  for (void* p : held) tc->Deallocate(p, cls);
  registry_->Destroy(tc);
  ExpectAllInCentral(cls);
}

// An overflow at batch + 1 objects gives back the batch freed first (the list's far end, which
// needs no walk: it already ends with the null link) and keeps the newest object; the batch is
// parked whole in the transfer cache and comes back as a null-terminated chain.
TEST_F(ThreadCacheTest, OverflowParksTheOldestBatch) {
  ThreadCache* tc = registry_->Create(1);
  const uint32_t cls = tiers_->sizemap.SizeClass(1024);
  const uint32_t batch = static_cast<uint32_t>(tiers_->sizemap.NumToMove(cls));
  std::vector<void*> held;
  while (tc->list(cls).max_length() < batch) {  // slow start up to the batch size
    held.push_back(tc->Allocate(cls));
    while (tc->list(cls).length > 0) held.push_back(tc->Allocate(cls));
  }
  ASSERT_EQ(tc->list(cls).max_length(), batch);
  ASSERT_EQ(uint32_t{tc->list(cls).length}, 0u);
  ASSERT_GE(held.size(), batch + 1);
  const size_t parked_before = tiers_->central[cls].TransferObjects();
  std::vector<void*> freed(held.end() - (batch + 1), held.end());
  held.resize(held.size() - (batch + 1));
  for (void* p : freed) tc->Deallocate(p, cls);  // the last one overflows
  EXPECT_EQ(uint32_t{tc->list(cls).length}, 1u);
  EXPECT_EQ(tc->head(cls), freed.back()) << "the newest object stays";
  EXPECT_EQ(tiers_->central[cls].TransferObjects(), parked_before + batch);
  void* head;
  void* tail;
  ASSERT_EQ(tiers_->central[cls].RemoveRange(&head, &tail, static_cast<int>(batch)),
            static_cast<int>(batch));
  std::vector<void*> got;
  for (void* p = head; p != nullptr; p = *static_cast<void**>(p)) got.push_back(p);
  std::vector<void*> want(freed.rbegin() + 1, freed.rend());  // LIFO order, minus the newest
  EXPECT_EQ(got, want);
  for (void* p : got) tc->Deallocate(p, cls);
  for (void* p : held) tc->Deallocate(p, cls);
  registry_->Destroy(tc);
  ExpectAllInCentral(cls);
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
  ExpectAllInCentral(cls);
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

// A steal writes the victim's max_size_ from another thread (under the registry lock) while the
// victim's owner reads it without the lock when its lists grow: both sides must be atomic. The
// race is what ThreadSanitizer reports (tests/scripts/sanitizer_builds.sh thread runs this test);
// without it the test checks that the budget is conserved across concurrent steals.
TEST_F(ThreadCacheTest, StealFromAnOwnerThatIsGrowingIsRaceFree) {
  const size_t total = 2 * ThreadCache::kMinSize + ThreadCache::kStealAmount;
  registry_->SetMaxTotal(total);
  ThreadCache* owner = registry_->Create(1);
  ThreadCache* thief = registry_->Create(2);
  std::atomic<bool> stop{false};
  std::thread stealer([&] {
    while (!stop.load(std::memory_order_relaxed)) registry_->IncreaseCacheLimit(thief);
  });
  // The owner fills and empties lists of many classes: every refill grows a list (Grow reads
  // max_size_), and a growth over max_size_ takes budget back (GrowSlow -> IncreaseCacheLimit).
  std::vector<std::pair<void*, uint32_t>> held;
  // Classes up to 32 KiB, 16 objects each: the lists' capacity passes kMinSize within a round.
  for (int round = 0; round < 50; ++round) {
    for (uint32_t cls = 1; cls < static_cast<uint32_t>(tiers_->sizemap.num_classes()) &&
                           tiers_->sizemap.ClassSize(cls) <= 32768;
         ++cls) {
      for (int i = 0; i < 16; ++i) {
        void* p = owner->Allocate(cls);
        ASSERT_NE(p, nullptr);
        held.emplace_back(p, cls);
      }
    }
    for (auto [p, cls] : held) owner->Deallocate(p, cls);
    held.clear();
  }
  stop.store(true);
  stealer.join();
  EXPECT_EQ(owner->max_size() + thief->max_size() + static_cast<size_t>(registry_->unclaimed()),
            total);
  registry_->Destroy(owner);
  registry_->Destroy(thief);
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

// Two thread caches on one central tier (one thread plays both; only the caches' identities
// matter): A keeps every other object it took, frees the rest and gives its lists back to the
// central tier (as a GC or overflows would, in batches); B then allocates as many. None of B's
// objects may share a 64-byte line with an object A still holds (false sharing between threads).
TEST_F(ThreadCacheTest, ObjectsOfOneLineStayWithOneCache) {
  ThreadCache* a = registry_->Create(1);
  ThreadCache* b = registry_->Create(2);
  const uint32_t cls = tiers_->sizemap.SizeClass(16);
  const size_t size = tiers_->sizemap.ClassSize(cls);
  std::vector<void*> a_live;
  std::set<uintptr_t> a_lines;
  std::vector<void*> all;
  for (int i = 0; i < 4096; ++i) all.push_back(a->Allocate(cls));
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % 2 == 0) {
      a_live.push_back(all[i]);
      a_lines.insert(reinterpret_cast<uintptr_t>(all[i]) / 64);
      a_lines.insert((reinterpret_cast<uintptr_t>(all[i]) + size - 1) / 64);
    } else {
      a->Deallocate(all[i], cls);
    }
  }
  a->ReleaseAll();
  ASSERT_GT(tiers_->central[cls].TransferObjects(), 0u) << "the scenario needs parked batches";
  std::vector<void*> b_objects;
  int shared = 0;
  for (int i = 0; i < 2048; ++i) {
    void* p = b->Allocate(cls);
    b_objects.push_back(p);
    if (a_lines.count(reinterpret_cast<uintptr_t>(p) / 64) ||
        a_lines.count((reinterpret_cast<uintptr_t>(p) + size - 1) / 64)) {
      ++shared;
    }
  }
  EXPECT_EQ(shared, 0) << "objects of B on lines holding A's live objects";
  for (void* p : b_objects) b->Deallocate(p, cls);
  for (void* p : a_live) a->Deallocate(p, cls);
  registry_->Destroy(a);
  registry_->Destroy(b);
  ExpectAllInCentral(cls);
}

// When A's thread exits, what it gave back is reused by B (no new spans).
TEST_F(ThreadCacheTest, ExitedCacheObjectsAreReused) {
  ThreadCache* a = registry_->Create(1);
  ThreadCache* b = registry_->Create(2);
  const uint32_t cls = tiers_->sizemap.SizeClass(48);
  std::vector<void*> held;
  for (int i = 0; i < 3000; ++i) held.push_back(a->Allocate(cls));
  for (void* p : held) a->Deallocate(p, cls);
  registry_->Destroy(a);
  const size_t spans = tiers_->central[cls].NumSpans();
  held.clear();
  for (int i = 0; i < 3000; ++i) held.push_back(b->Allocate(cls));
  EXPECT_EQ(tiers_->central[cls].NumSpans(), spans) << "B carved new spans instead";
  for (void* p : held) b->Deallocate(p, cls);
  registry_->Destroy(b);
  ExpectAllInCentral(cls);
}

}  // namespace
}  // namespace heapkit::alloc
