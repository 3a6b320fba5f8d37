#include <gtest/gtest.h>

#include "pprof-tool/report/allocator_frames.h"
#include "pprof-tool/symbolize/function_name.h"

namespace heapkit::pprof {
namespace {

TEST(FunctionName, DemangleAndSimplify) {
  EXPECT_EQ(CleanFunctionName("_ZN2ns3BoxIiE4makeEm"), "ns::Box<int>::make");
  EXPECT_EQ(CleanFunctionName("malloc@@GLIBC_2.2.5"), "malloc");
  EXPECT_EQ(CleanFunctionName("main"), "main");
  EXPECT_EQ(CleanFunctionName("_Znwm"), "operator new");
  EXPECT_EQ(CleanFunctionName("_ZNK3Foo3barEv"), "Foo::bar");
  EXPECT_EQ(CleanFunctionName("_Z3maxIiET_S0_S0_"), "max<int>");  // return type dropped
  EXPECT_EQ(CleanFunctionName("_ZN12_GLOBAL__N_11fEi"), "(anonymous namespace)::f");
  EXPECT_EQ(CleanFunctionName("_Zbogus"), "_Zbogus");
  EXPECT_EQ(SimplifyDemangled("Foo::operator()(int) const"), "Foo::operator()");
  EXPECT_EQ(SimplifyDemangled("Foo::operator<(Foo const&)"), "Foo::operator<");
  EXPECT_EQ(SimplifyDemangled("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(SimplifyDemangled("std::vector<int, std::allocator<int> >::push_back(int const&)"),
            "std::vector<int, std::allocator<int> >::push_back");
}

TEST(AllocatorFrames, Classification) {
  EXPECT_TRUE(IsAllocatorFrame("malloc", ""));
  EXPECT_TRUE(IsAllocatorFrame("operator new", ""));
  EXPECT_TRUE(IsAllocatorFrame("operator new[]", ""));
  EXPECT_TRUE(IsAllocatorFrame("tcmalloc::ThreadCache::Allocate", ""));
  EXPECT_TRUE(IsAllocatorFrame("anything", "/usr/lib/libtcmalloc.so.4"));
  EXPECT_TRUE(IsAllocatorFrame("anything", "/build/libheapkit.so"));
  EXPECT_FALSE(IsAllocatorFrame("std::__new_allocator<char>::allocate", ""));
  EXPECT_FALSE(IsAllocatorFrame("main", "/bin/prog"));
  EXPECT_FALSE(IsAllocatorFrame("mallocate_stuff", ""));
  EXPECT_FALSE(IsAllocatorFrame("std::vector<int>::_M_realloc_insert", ""));
}

}  // namespace
}  // namespace heapkit::pprof
