// Stack capture: a known -O2, frame-pointer-less call chain comes back in order; skip and
// depth limits; capture from a signal handler; the recursion guard.
#include "profiler/stack_capture.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <thread>
#include <vector>

#include "call_chain.h"
#include "profiler/allocator_frames.h"

namespace heapkit::prof {
namespace {

TEST(StackCapture, KnownChainWithoutFramePointersInOrder) {
  InitStackCapture();
  void* pcs[kMaxStackDepth];
  int n = ChainLevel0(pcs, kMaxStackDepth);
  ASSERT_GE(n, 4);
  // skip=0: pcs[0] is ChainLevel2's return address, i.e. inside ChainLevel1.
  EXPECT_TRUE(ChainRange(1).Contains(pcs[0])) << pcs[0];
  EXPECT_TRUE(ChainRange(0).Contains(pcs[1])) << pcs[1];
  // pcs[2] is inside this test body; then gtest frames and main follow.
  EXPECT_FALSE(ChainRange(0).Contains(pcs[2]));
  EXPECT_FALSE(ChainRange(2).Contains(pcs[0]));
}

TEST(StackCapture, DepthLimitAndSkip) {
  void* full[kMaxStackDepth];
  int n = ChainLevel0(full, kMaxStackDepth);
  ASSERT_GE(n, 4);
  void* two[2];
  EXPECT_EQ(ChainLevel0(two, 2), 2);
  EXPECT_TRUE(ChainRange(1).Contains(two[0]));
  EXPECT_TRUE(ChainRange(0).Contains(two[1]));
  EXPECT_EQ(ChainLevel0(two, 0), 0);
}

volatile int g_signal_depth = -1;
volatile bool g_signal_guard_seen = false;
void* g_signal_pcs[kMaxStackDepth];

void Handler(int) {
  g_signal_guard_seen = InStackCapture();
  g_signal_depth = CaptureStack(g_signal_pcs, kMaxStackDepth, 0);
}

TEST(StackCapture, WorksInSignalHandler) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = &Handler;
  sigaction(SIGUSR2, &sa, &old);
  raise(SIGUSR2);
  sigaction(SIGUSR2, &old, nullptr);
  EXPECT_FALSE(g_signal_guard_seen);
  // The handler's caller is the signal trampoline; libunwind unwinds through it into this test.
  EXPECT_GE(g_signal_depth, 3);
}

TEST(StackCapture, ManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        void* pcs[kMaxStackDepth];
        int n = ChainLevel0(pcs, kMaxStackDepth);
        if (n >= 3 && ChainRange(1).Contains(pcs[0]) && ChainRange(0).Contains(pcs[1])) ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 8000);
}

TEST(AllocatorFrames, ReturnAddressesAreSkipped) {
  InitAllocatorFrames();
  EXPECT_FALSE(RuntimeIsSharedObject());  // the unit test links the code statically
  int marker1 = 0, marker2 = 0, user = 0;
  AddAllocatorReturnAddress(&marker1);
  AddAllocatorReturnAddress(&marker2);
  AddAllocatorReturnAddress(&marker1);  // duplicates are fine
  void* pcs[] = {&marker1, &marker2, &user, &marker1};
  EXPECT_EQ(CountAllocatorFrames(pcs, 4), 2);  // stops at the first user frame
  EXPECT_EQ(CountAllocatorFrames(pcs, 1), 1);
  EXPECT_FALSE(IsAllocatorFrame(&user));
}

}  // namespace
}  // namespace heapkit::prof
