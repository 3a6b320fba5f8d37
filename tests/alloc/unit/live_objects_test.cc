// Live-object enumeration over the global allocator (driven through heapkit::alloc::Malloc,
// not through the malloc override: this binary uses glibc's malloc for everything else).
#include "alloc/live_objects.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "alloc/allocator.h"

namespace heapkit::alloc {
namespace {

struct Collected {
  std::map<uintptr_t, size_t> objects;
  int duplicates = 0;
};

void Visit(void* ctx, void* object, size_t size) {
  auto* c = static_cast<Collected*>(ctx);
  if (!c->objects.emplace(reinterpret_cast<uintptr_t>(object), size).second) ++c->duplicates;
}

TEST(LiveObjectsTest, EnumeratesExactlyTheLiveSetAcrossThreads) {
  // Objects from earlier tests in this binary: remember them as the baseline.
  Collected baseline;
  ForEachLiveObject(Visit, &baseline);

  constexpr int kThreads = 4;
  std::mutex mu;
  std::condition_variable cv;
  int parked = 0;
  bool release = false;
  std::map<uintptr_t, size_t> expected;  // object -> usable size
  std::vector<std::vector<void*>> handoff(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<void*> mine;
      std::map<uintptr_t, size_t> live;
      for (int i = 0; i < 3000; ++i) {
        size_t size = static_cast<size_t>((i * 131 + t * 17) % 3000) + 1;
        if (i % 500 == 0) size = 300 * 1024 + i;  // some large objects
        void* p = Malloc(size);
        ASSERT_NE(p, nullptr);
        mine.push_back(p);
      }
      // Free every third object here, and hand every fifth to the next thread to free.
      std::vector<void*> give;
      for (size_t i = 0; i < mine.size(); ++i) {
        if (i % 3 == 0) {
          Free(mine[i]);
        } else if (i % 5 == 0) {
          give.push_back(mine[i]);
        } else {
          live[reinterpret_cast<uintptr_t>(mine[i])] = UsableSize(mine[i]);
        }
      }
      std::unique_lock<std::mutex> lock(mu);
      handoff[(t + 1) % kThreads] = give;
      expected.insert(live.begin(), live.end());
      ++parked;
      cv.notify_all();
      cv.wait(lock, [&] { return parked >= kThreads; });
      std::vector<void*> to_free = handoff[t];
      lock.unlock();
      for (void* p : to_free) Free(p);  // cross-thread frees, into this thread's cache
      lock.lock();
      ++parked;
      cv.notify_all();
      // Stay alive (with a populated thread cache) until the main thread has enumerated.
      cv.wait(lock, [&] { return release; });
      lock.unlock();
      for (auto& [p, size] : live) Free(reinterpret_cast<void*>(p));
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return parked == 2 * kThreads; });
  }
  // Threads are parked outside the allocator: the world is effectively stopped.
  Collected now;
  ForEachLiveObject(Visit, &now);
  EXPECT_EQ(now.duplicates, 0);
  for (auto& [addr, size] : baseline.objects) now.objects.erase(addr);
  EXPECT_EQ(now.objects.size(), expected.size());
  for (auto& [addr, size] : expected) {
    auto it = now.objects.find(addr);
    ASSERT_NE(it, now.objects.end()) << "live object " << addr << " not enumerated";
    EXPECT_EQ(it->second, size);
  }
  // FindHeapObject maps interior pointers back to their object.
  for (auto& [addr, size] : expected) {
    uintptr_t start;
    size_t found_size;
    ASSERT_TRUE(FindHeapObject(addr + size / 2, &start, &found_size));
    EXPECT_EQ(start, addr);
    EXPECT_EQ(found_size, size);
  }
  uintptr_t start;
  size_t found_size;
  int on_stack = 0;
  EXPECT_FALSE(FindHeapObject(reinterpret_cast<uintptr_t>(&on_stack), &start, &found_size));
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  for (auto& th : threads) th.join();
  Collected after;
  ForEachLiveObject(Visit, &after);
  for (auto& [addr, size] : baseline.objects) after.objects.erase(addr);
  EXPECT_TRUE(after.objects.empty()) << after.objects.size() << " objects still reported";
}

}  // namespace
}  // namespace heapkit::alloc
