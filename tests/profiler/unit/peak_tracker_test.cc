// The peak tracker's lazy rebase against a brute-force model that copies every bucket's live
// counts at each new maximum: after random sequences of allocations and frees over a few
// buckets, read at random moments, the tracker's per-bucket peak equals the model's copy.
#include "profiler/peak_tracker.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace heapkit::prof {
namespace {

struct Counts {
  int64_t count = 0, bytes = 0;
  bool operator==(const Counts&) const = default;
};

struct Model {
  std::vector<Counts> live, at_peak;
  int64_t inuse = 0, peak = 0;
  explicit Model(size_t n) : live(n), at_peak(n) {}
  void Change(size_t b, int64_t count, int64_t bytes) {
    live[b].count += count;
    live[b].bytes += bytes;
    inuse += bytes;
    if (inuse > peak) {
      peak = inuse;
      at_peak = live;
    }
  }
};

void ExpectSamePeak(const Model& m, const std::vector<Bucket*>& buckets) {
  const PeakSnapshot s = TakePeakSnapshot();
  EXPECT_EQ(s.bytes, m.peak);
  for (size_t i = 0; i < buckets.size(); ++i) {
    Counts c;
    ASSERT_TRUE(PeakCounts(s, *buckets[i], &c.count, &c.bytes));
    EXPECT_EQ(c.count, m.at_peak[i].count) << "bucket " << i;
    EXPECT_EQ(c.bytes, m.at_peak[i].bytes) << "bucket " << i;
  }
  EXPECT_TRUE(PeakUnchanged(s));
}

TEST(PeakTracker, LazyRebaseEqualsCopyAtEachMaximum) {
  // The tracker's cells follow the global table's buckets (BeginPeakTracking re-seeds them).
  StackTable& table = GlobalStackTable();
  ASSERT_TRUE(table.Init());
  std::vector<Bucket*> buckets;
  for (uintptr_t i = 0; i < 6; ++i) {
    void* pc = reinterpret_cast<void*>(0x1000 + i);
    buckets.push_back(table.FindOrCreateBucket(&pc, 1, 0));
    ASSERT_NE(buckets.back(), nullptr);
  }
  std::mt19937_64 rng(29);
  for (int round = 0; round < 50; ++round) {
    BeginPeakTracking(0);  // no live records in the table: every cell restarts at zero
    Model m(buckets.size());
    std::vector<std::vector<int64_t>> objects(buckets.size());  // sizes of live objects
    for (int step = 0; step < 2000; ++step) {
      const size_t b = rng() % buckets.size();
      // Phases of growth and shrinkage, so that maxima are reached, left and beaten again.
      const bool grow = ((step / 200) % 2 == 0) ? rng() % 3 != 0 : rng() % 3 == 0;
      if (grow || objects[b].empty()) {
        const int64_t size = 1 + static_cast<int64_t>(rng() % 4096);
        objects[b].push_back(size);
        PeakOnAlloc(buckets[b], static_cast<size_t>(size), size);
        m.Change(b, 1, size);
      } else {
        const size_t k = rng() % objects[b].size();
        const int64_t size = objects[b][k];
        objects[b][k] = objects[b].back();
        objects[b].pop_back();
        PeakOnFree(buckets[b], static_cast<size_t>(size), size);
        m.Change(b, -1, -size);
      }
      if (rng() % 97 == 0) ExpectSamePeak(m, buckets);  // reading freezes a rising peak
      if (HasFailure()) return;
    }
    ExpectSamePeak(m, buckets);
  }
  StopPeakTracking();
}

TEST(PeakTracker, StaleSnapshotIsRefused) {
  StackTable& table = GlobalStackTable();
  ASSERT_TRUE(table.Init());
  void* pc = reinterpret_cast<void*>(0x2000);
  Bucket* b = table.FindOrCreateBucket(&pc, 1, 0);
  ASSERT_NE(b, nullptr);
  BeginPeakTracking(0);
  PeakOnAlloc(b, 100, 100);
  const PeakSnapshot s = TakePeakSnapshot();
  EXPECT_EQ(s.bytes, 100);
  PeakOnAlloc(b, 50, 50);  // a new maximum ...
  int64_t n, bytes;
  ASSERT_TRUE(PeakCounts(s, *b, &n, &bytes));  // ... does not change the snapshot's values
  EXPECT_EQ(bytes, 100);
  PeakOnFree(b, 50, 50);  // freezes the new peak: the old snapshot is no longer readable
  EXPECT_FALSE(PeakCounts(s, *b, &n, &bytes));
  EXPECT_FALSE(PeakUnchanged(s));
  const PeakSnapshot t = TakePeakSnapshot();
  EXPECT_EQ(t.bytes, 150);
  ASSERT_TRUE(PeakCounts(t, *b, &n, &bytes));
  EXPECT_EQ(n, 2);
  EXPECT_EQ(bytes, 150);
  StopPeakTracking();
}

}  // namespace
}  // namespace heapkit::prof
