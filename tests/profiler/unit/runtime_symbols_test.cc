// Tests of the static-link allocator-frame ranges read from the executable's symbol table.
#include "profiler/capture/runtime_symbols.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "profiler/capture/allocator_frame_filter.h"

// A user function outside namespace heapkit: must never be classified as runtime code.
extern "C" __attribute__((noinline, used)) int UserFunctionForRangeTest(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}

namespace heapkit::prof {
namespace {

TEST(RuntimeSymbols, NameRules) {
  EXPECT_TRUE(IsRuntimeSymbolName("_ZN7heapkit5alloc6MallocEm"));
  EXPECT_TRUE(
      IsRuntimeSymbolName("_ZN7heapkit5alloc12_GLOBAL__N_112FinishSampleEPNS0_11ThreadCacheEPvm"));
  EXPECT_TRUE(IsRuntimeSymbolName("_ZZN7heapkit4prof4InitEvENKUlvE_clEv"));
  EXPECT_TRUE(IsRuntimeSymbolName("malloc"));
  EXPECT_TRUE(IsRuntimeSymbolName("malloc.cold"));
  EXPECT_TRUE(IsRuntimeSymbolName("posix_memalign"));
  EXPECT_TRUE(IsRuntimeSymbolName("__libc_memalign"));
  EXPECT_TRUE(IsRuntimeSymbolName("tc_malloc"));
  EXPECT_TRUE(IsRuntimeSymbolName("_Znwm"));
  EXPECT_TRUE(IsRuntimeSymbolName("_ZnamSt11align_val_tRKSt9nothrow_t"));
  EXPECT_TRUE(IsRuntimeSymbolName("_ZdlPvmSt11align_val_t"));
  EXPECT_TRUE(IsRuntimeSymbolName("_ZdaPv"));
  EXPECT_FALSE(IsRuntimeSymbolName("mallocate_things"));
  EXPECT_FALSE(IsRuntimeSymbolName("freeze"));
  EXPECT_FALSE(IsRuntimeSymbolName("main"));
  EXPECT_FALSE(IsRuntimeSymbolName("UserFunctionForRangeTest"));
  EXPECT_FALSE(IsRuntimeSymbolName("_ZN8heapkitx3FooEv"));
  EXPECT_FALSE(IsRuntimeSymbolName(""));
  EXPECT_FALSE(IsRuntimeSymbolName(nullptr));
}

// This test binary links the profiler core statically, so InitAllocatorFrames loads the ranges
// of its own heapkit:: functions from /proc/self/exe (with the PIE load bias).
TEST(RuntimeSymbols, ClassifiesOwnExecutable) {
  // Bad files load nothing (only checkable before the first successful load: ranges are kept).
  if (NumRuntimeSymbolRanges() == 0) {
    EXPECT_EQ(LoadRuntimeSymbolRanges("/nonexistent/heapkit-test-binary", 0), 0);
    EXPECT_EQ(LoadRuntimeSymbolRanges("/dev/null", 0), 0);
    EXPECT_EQ(LoadRuntimeSymbolRanges("/proc/self/status", 0), 0);
    EXPECT_EQ(NumRuntimeSymbolRanges(), 0);
  }
  InitAllocatorFrames();
  ASSERT_FALSE(RuntimeIsSharedObject());
  ASSERT_GT(NumRuntimeSymbolRanges(), 0);
  EXPECT_TRUE(RuntimeSymbolsFromSymtab());
  auto addr = [](auto* fn) { return reinterpret_cast<uintptr_t>(fn); };
  // A "return address" a few bytes into runtime functions.
  EXPECT_TRUE(IsAllocatorFrame(reinterpret_cast<void*>(addr(&IsAllocatorFrame) + 4)));
  EXPECT_TRUE(InRuntimeSymbolRange(addr(&LoadRuntimeSymbolRanges) + 4));
  EXPECT_TRUE(InRuntimeSymbolRange(addr(&IsRuntimeSymbolName) + 1));
  // User code is never classified as allocator code.
  EXPECT_EQ(UserFunctionForRangeTest(1), 4);
  EXPECT_FALSE(IsAllocatorFrame(reinterpret_cast<void*>(addr(&UserFunctionForRangeTest) + 4)));
  EXPECT_FALSE(InRuntimeSymbolRange(addr(&UserFunctionForRangeTest) + 1));
  // Return address == function start belongs to the previous function (pc-1 rule).
  EXPECT_FALSE(InRuntimeSymbolRange(addr(&UserFunctionForRangeTest)));
  void* stack[3] = {reinterpret_cast<void*>(addr(&IsAllocatorFrame) + 4),
                    reinterpret_cast<void*>(addr(&UserFunctionForRangeTest) + 4),
                    reinterpret_cast<void*>(addr(&IsAllocatorFrame) + 4)};
  // Stops at the first user frame even though a runtime frame follows.
  EXPECT_EQ(CountAllocatorFrames(stack, 3), 1);
}

}  // namespace
}  // namespace heapkit::prof
