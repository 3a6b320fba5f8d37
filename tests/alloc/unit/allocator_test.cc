// The global allocator through its internal entry points (no malloc override in this binary).
#include "alloc/allocator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "alloc/observer_hooks.h"
#include "alloc/sampling_period.h"
#include "alloc/stats.h"

namespace heapkit::alloc {
namespace {

size_t InUse() {
  AllocatorStats s;
  GetAllocatorStats(&s);
  return s.in_use_bytes;
}

TEST(AllocatorTest, CurrentAllocatedBytesIsExact) {
  Free(Malloc(1));  // make sure the thread cache exists
  const size_t before = InUse();
  void* small = Malloc(100);
  EXPECT_EQ(InUse() - before, UsableSize(small));
  EXPECT_EQ(UsableSize(small), 112u);
  void* large = Malloc(1 << 20);
  EXPECT_EQ(InUse() - before, 112u + (1 << 20));
  Free(small);
  Free(large);
  EXPECT_EQ(InUse(), before);
}

TEST(AllocatorTest, AlignmentAndUsableSizeOfEveryClass) {
  for (size_t size = 1; size <= kMaxSize + 10000; size += (size < 2048 ? 1 : 997)) {
    void* p = Malloc(size);
    ASSERT_NE(p, nullptr);
    if (size >= 16) {
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u) << size;
    }
    ASSERT_GE(UsableSize(p), size);
    ASSERT_EQ(UsableSize(p), EstimatedSize(size, 0));
    memset(p, 0x77, size);
    Free(p);
  }
  for (size_t align = 32; align <= (1 << 21); align *= 2) {
    void* p = MallocSlow(100, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << align;
    EXPECT_GE(UsableSize(p), 100u);
    Free(p);
  }
}

TEST(AllocatorTest, HugeRequestsFailWithEnomem) {
  errno = 0;
  EXPECT_EQ(Malloc(size_t{1} << 62), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(MallocSlow(SIZE_MAX - 4096, 64), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

// A thread without a cache uses the shared empty cache: its first call may be a free (of an
// object from another thread) or a malloc, and both must fall through to the slow paths
// without writing to the empty cache.
TEST(AllocatorTest, ThreadWithoutCacheFreesAndAllocates) {
  Free(Malloc(1));
  const size_t before = InUse();
  void* from_main = Malloc(200);
  std::thread worker([from_main] {
    Free(from_main);  // first call of this thread
    void* p = Malloc(24);
    EXPECT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
    EXPECT_EQ(UsableSize(p), 32u);
    Free(p);
  });
  worker.join();
  // Many frees in a row overflow max_length and the budget: the counts stay exact.
  std::vector<void*> v;
  for (int i = 0; i < 20000; ++i) v.push_back(Malloc(64));
  EXPECT_EQ(InUse() - before, 20000u * 64u);
  for (void* p : v) Free(p);
  EXPECT_EQ(InUse(), before);
}

TEST(AllocatorDeathTest, InvalidFreeIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  int on_stack = 0;
  void* volatile bad = &on_stack;  // opaque to the optimiser
  EXPECT_DEATH(Free(bad), "heapkit: attempt to free invalid pointer 0x[0-9a-f]+");
  EXPECT_DEATH(
      {
        char* p = static_cast<char*>(Malloc(64));
        Free(p + 16);
      },
      "heapkit: attempt to free invalid pointer 0x");
  EXPECT_DEATH(
      {
        void* p = Malloc(48);
        Free(p);
        Free(p);
      },
      "heapkit: attempt to free invalid pointer 0x");
  EXPECT_DEATH(
      {
        void* p = Malloc(1 << 20);
        Free(p);
        Free(p);
      },
      "heapkit: attempt to free invalid pointer 0x");
}

std::atomic<int> sampled_allocs{0};
std::atomic<int> sampled_frees{0};
std::atomic<void*> last_sampled{nullptr};
std::atomic<size_t> last_requested{0};
std::atomic<size_t> last_allocated{0};

bool OnAlloc(void* p, size_t requested, size_t allocated) {
  ++sampled_allocs;
  last_sampled = p;
  last_requested = requested;
  last_allocated = allocated;
  // Nested allocations inside the callback are not sampled (and must not recurse).
  Free(Malloc(32));
  return true;
}
bool OnFree(void* p) {
  if (p != last_sampled.load()) return false;
  ++sampled_frees;
  last_sampled = nullptr;
  return true;
}
const SampleObserver kObserver{OnAlloc, OnFree};

TEST(AllocatorTest, SamplingHookEveryAllocationAndFrees) {
  SetSampleObserver(&kObserver);
  SetSamplingPeriod(1);
  sampled_allocs = 0;
  sampled_frees = 0;
  void* p = Malloc(40);
  EXPECT_EQ(sampled_allocs.load(), 1);
  EXPECT_EQ(last_sampled.load(), p);
  EXPECT_EQ(last_requested.load(), 40u);
  EXPECT_EQ(last_allocated.load(), 48u);
  Free(p);
  EXPECT_EQ(sampled_frees.load(), 1);
  void* big = Malloc(3 << 20);
  EXPECT_EQ(sampled_allocs.load(), 2);
  EXPECT_EQ(last_allocated.load(), size_t{3} << 20);
  Free(big);
  EXPECT_EQ(sampled_frees.load(), 2);
  // Sampled objects stay in their size class (no page per sampled object).
  std::vector<void*> many;
  for (int i = 0; i < 100; ++i) many.push_back(Malloc(24));
  EXPECT_EQ(sampled_allocs.load(), 102);
  EXPECT_EQ(UsableSize(many[0]), 32u);
  for (void* q : many) Free(q);
  SetSamplingPeriod(0);
  int before = sampled_allocs.load();
  for (int i = 0; i < 1000; ++i) Free(Malloc(100));
  EXPECT_EQ(sampled_allocs.load(), before);
  SetSampleObserver(nullptr);
}

bool SampledBit(const void* p) {
  return (g_state.pagemap.Info(reinterpret_cast<uintptr_t>(p)) & PageMap::kSampledBit) != 0;
}

// An observer that remembers up to kSlots recorded objects, as the profiler does.
constexpr int kSlots = 64;
std::atomic<void*> recorded[kSlots];
std::atomic<int> recorded_frees{0};
bool RecordAlloc(void* p, size_t, size_t) {
  for (auto& slot : recorded) {
    void* expected = nullptr;
    if (slot.compare_exchange_strong(expected, p)) return true;
  }
  return false;  // full: not recorded, so its free is not reported
}
bool RecordFree(void* p) {
  for (auto& slot : recorded) {
    void* expected = p;
    if (slot.compare_exchange_strong(expected, nullptr)) {
      ++recorded_frees;
      return true;
    }
  }
  return false;
}
const SampleObserver kRecordingObserver{RecordAlloc, RecordFree};

// At a sparse rate a span routes frees to the slow path only while it holds a live recorded
// object; in exact mode it stays routed (every object in it is recorded anyway).
TEST(AllocatorTest, SampledBitFollowsLiveSampledObjects) {
  SetSampleObserver(&kRecordingObserver);
  // A class no other test samples in exact mode (that would leave its span routed for good).
  constexpr size_t kSize = 2900;
  SetSamplingPeriod(2);  // sparse mode, but every kSize object is sampled (p = 1 - e^-1450)
  void* first = Malloc(kSize);
  void* second = Malloc(kSize);
  ASSERT_EQ(UsableSize(first), UsableSize(second));
  ASSERT_TRUE(SampledBit(first));
  ASSERT_TRUE(SampledBit(second));
  SetSamplingPeriod(int64_t{1} << 40);  // nothing else gets sampled until exact mode below
  recorded_frees = 0;
  Free(first);
  EXPECT_EQ(recorded_frees.load(), 1);
  EXPECT_TRUE(SampledBit(second));  // second is still a live recorded object
  Free(second);
  EXPECT_EQ(recorded_frees.load(), 2);
  void* again = Malloc(kSize);  // from the same span (this thread's list head), no longer routed
  EXPECT_EQ(again, second);
  EXPECT_FALSE(SampledBit(again));
  Free(again);
  EXPECT_EQ(recorded_frees.load(), 2);
  // Exact mode: the span stays routed after its last recorded object is freed — and after the
  // rate changes — until the span itself goes back to the page heap.
  SetSamplingPeriod(1);
  void* exact = Malloc(kSize);
  ASSERT_TRUE(SampledBit(exact));
  Free(exact);
  EXPECT_EQ(recorded_frees.load(), 3);
  EXPECT_TRUE(SampledBit(exact));
  SetSamplingPeriod(0);
  void* later = Malloc(kSize);
  Free(later);
  EXPECT_TRUE(SampledBit(later));
  EXPECT_EQ(recorded_frees.load(), 3);
  SetSampleObserver(nullptr);
}

TEST(AllocatorTest, SamplingRateMatchesParameter) {
  SetSampleObserver(&kObserver);
  SetSamplingPeriod(64 * 1024);
  sampled_allocs = 0;
  const int n = 200000;
  const size_t size = 256;
  std::vector<void*> batch;
  for (int i = 0; i < n; ++i) {
    void* p = Malloc(size);
    batch.push_back(p);
    if (batch.size() == 1000) {
      for (void* q : batch) Free(q);
      batch.clear();
    }
  }
  for (void* q : batch) Free(q);
  SetSamplingPeriod(0);
  SetSampleObserver(nullptr);
  const double p = 1 - std::exp(-static_cast<double>(size) / (64 * 1024));
  const double expected = n * p;
  EXPECT_NEAR(sampled_allocs.load(), expected, 6 * std::sqrt(expected) + 0.02 * expected);
}

TEST(AllocatorTest, ThreadsExitAndReturnTheirCaches) {
  const size_t before = InUse();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([] {
      std::vector<void*> v;
      for (int i = 0; i < 5000; ++i) v.push_back(Malloc(static_cast<size_t>(i % 700) + 1));
      for (void* p : v) Free(p);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(InUse(), before);
  AllocatorStats s;
  GetAllocatorStats(&s);
  EXPECT_LE(s.num_thread_caches, 2u);  // this thread (+ none of the exited ones)
}

TEST(AllocatorTest, StatsTextLooksLikeGperftools) {
  char buf[4096];
  size_t n = FormatStats(buf, sizeof(buf));
  ASSERT_LT(n, sizeof(buf));
  EXPECT_NE(strstr(buf, "MALLOC: "), nullptr);
  EXPECT_NE(strstr(buf, "Bytes in use by application"), nullptr);
  EXPECT_NE(strstr(buf, "Bytes released to OS (aka unmapped)"), nullptr);
  char tiny[16];
  EXPECT_EQ(FormatStats(tiny, sizeof(tiny)), n > 0 ? FormatStats(buf, sizeof(buf)) : 0);
  EXPECT_EQ(strlen(tiny), sizeof(tiny) - 1);
}

}  // namespace
}  // namespace heapkit::alloc

namespace heapkit::alloc {
namespace {

TEST(AllocatorTest, CallocZeroesReusedAndFreshMemory) {
  // Dirty a large block, free it, and calloc the same size: it must come back zeroed.
  for (int round = 0; round < 3; ++round) {
    const size_t n = (size_t{3} << 20) + 12345;
    char* dirty = static_cast<char*>(Malloc(n));
    ASSERT_NE(dirty, nullptr);
    memset(dirty, 0xee, n);
    Free(dirty);
    char* z = static_cast<char*>(Calloc(n));
    ASSERT_NE(z, nullptr);
    for (size_t i = 0; i < n; i += 509) ASSERT_EQ(z[i], 0) << "offset " << i;
    ASSERT_EQ(z[n - 1], 0);
    Free(z);
    ReleaseFreeMemory();  // next round: from released (madvised) spans
  }
  char* small = static_cast<char*>(Malloc(200));
  memset(small, 0x11, 200);
  Free(small);
  char* zs = static_cast<char*>(Calloc(200));
  for (int i = 0; i < 200; ++i) ASSERT_EQ(zs[i], 0);
  Free(zs);
}

}  // namespace
}  // namespace heapkit::alloc

namespace heapkit::alloc {
namespace {

TEST(AllocatorTest, MarkThreadIdleReturnsTheCache) {
  std::thread worker([] {
    std::vector<void*> v;
    for (int i = 0; i < 1000; ++i) v.push_back(Malloc(64));
    for (void* p : v) Free(p);
    AllocatorStats before;
    GetAllocatorStats(&before);
    ASSERT_GT(before.thread_cache_free_bytes, 0u);
    MarkThreadIdle();
    AllocatorStats after;
    GetAllocatorStats(&after);
    EXPECT_EQ(after.num_thread_caches + 1, before.num_thread_caches);
    EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
    // The thread keeps working after being marked idle (a new cache is created lazily).
    void* p = Malloc(64);
    ASSERT_NE(p, nullptr);
    Free(p);
    GetAllocatorStats(&after);
    EXPECT_EQ(after.num_thread_caches, before.num_thread_caches);
  });
  worker.join();
}

}  // namespace
}  // namespace heapkit::alloc
