// The peak tracker's lazy rebase against a brute-force model that copies every bucket's live
// counts at each new maximum, since start and since the last interval reset: after random
// sequences of allocations, frees and resets over a few buckets, read at random moments, the
// tracker's per-bucket peaks of both scopes equal the model's copies.
#include "profiler/time/peak_tracker.h"

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
  std::vector<Counts> live, at_peak, at_interval_peak;
  int64_t inuse = 0, peak = 0, interval_peak = 0;
  explicit Model(size_t n) : live(n), at_peak(n), at_interval_peak(n) {}
  void Change(size_t b, int64_t count, int64_t bytes) {
    live[b].count += count;
    live[b].bytes += bytes;
    inuse += bytes;
    if (inuse > interval_peak) {
      interval_peak = inuse;
      at_interval_peak = live;
    }
    if (inuse > peak) {
      peak = inuse;
      at_peak = live;
    }
  }
  void ResetInterval() {
    interval_peak = inuse;
    at_interval_peak = live;
  }
};

void ExpectSamePeak(const Model& m, const std::vector<Bucket*>& buckets, PeakScope scope) {
  const PeakSnapshot s = TakePeakSnapshot(scope);
  const bool since_start = scope == PeakScope::kSinceStart;
  EXPECT_EQ(s.bytes, since_start ? m.peak : m.interval_peak);
  const std::vector<Counts>& want = since_start ? m.at_peak : m.at_interval_peak;
  for (size_t i = 0; i < buckets.size(); ++i) {
    Counts c;
    ASSERT_TRUE(PeakCounts(s, *buckets[i], &c.count, &c.bytes));
    EXPECT_EQ(c.count, want[i].count)
        << "bucket " << i << (since_start ? " since start" : " interval");
    EXPECT_EQ(c.bytes, want[i].bytes)
        << "bucket " << i << (since_start ? " since start" : " interval");
  }
  EXPECT_TRUE(PeakUnchanged(s));
}

void ExpectSamePeaks(const Model& m, const std::vector<Bucket*>& buckets, bool interval_first) {
  ExpectSamePeak(m, buckets, interval_first ? PeakScope::kInterval : PeakScope::kSinceStart);
  ExpectSamePeak(m, buckets, interval_first ? PeakScope::kSinceStart : PeakScope::kInterval);
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
        if (b % 2 == 0) {  // by id, and with the cell in hand (the exact recorder's path)
          PeakOnAlloc(buckets[b]->id.load(), static_cast<size_t>(size), size);
        } else {
          PeakCell* cell = PeakCellFor(buckets[b]->id.load());
          ASSERT_NE(cell, nullptr);
          EXPECT_TRUE(PeakOnAllocAt(cell, static_cast<size_t>(size), size));
        }
        m.Change(b, 1, size);
      } else {
        const size_t k = rng() % objects[b].size();
        const int64_t size = objects[b][k];
        objects[b][k] = objects[b].back();
        objects[b].pop_back();
        PeakOnFree(buckets[b]->id.load(), static_cast<size_t>(size), size);
        m.Change(b, -1, -size);
      }
      // Reading freezes a rising peak; a dump reads both, then restarts the interval.
      if (rng() % 97 == 0) ExpectSamePeaks(m, buckets, rng() % 2 == 0);
      if (rng() % 151 == 0) {
        ExpectSamePeaks(m, buckets, true);
        ResetIntervalPeak();
        m.ResetInterval();
      }
      if (HasFailure()) return;
    }
    ExpectSamePeaks(m, buckets, false);
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
  PeakOnAlloc(b->id.load(), 100, 100);
  const PeakSnapshot s = TakePeakSnapshot(PeakScope::kSinceStart);
  EXPECT_EQ(s.bytes, 100);
  PeakOnAlloc(b->id.load(), 50, 50);  // a new maximum ...
  int64_t n, bytes;
  ASSERT_TRUE(PeakCounts(s, *b, &n, &bytes));  // ... does not change the snapshot's values
  EXPECT_EQ(bytes, 100);
  PeakOnFree(b->id.load(), 50, 50);  // freezes the new peak: the old snapshot is no longer readable
  EXPECT_FALSE(PeakCounts(s, *b, &n, &bytes));
  EXPECT_FALSE(PeakUnchanged(s));
  const PeakSnapshot t = TakePeakSnapshot(PeakScope::kSinceStart);
  EXPECT_EQ(t.bytes, 150);
  ASSERT_TRUE(PeakCounts(t, *b, &n, &bytes));
  EXPECT_EQ(n, 2);
  EXPECT_EQ(bytes, 150);
  StopPeakTracking();
}

}  // namespace
}  // namespace heapkit::prof
