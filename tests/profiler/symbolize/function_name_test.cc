#include <gtest/gtest.h>

#include "profiler/symbolize/allocation_frames.h"
#include "profiler/symbolize/function_name.h"

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

TEST(FunctionName, SimplifiedHasNoTemplateArguments) {
  EXPECT_EQ(SimplifiedFunctionName(
                "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"),
            "std::vector::_M_realloc_insert");
  EXPECT_EQ(SimplifiedFunctionName("std::__cxx11::basic_string<char, std::char_traits<char>, "
                                   "std::allocator<char> >::_M_construct<char const*>"),
            "std::__cxx11::basic_string::_M_construct");
  EXPECT_EQ(SimplifiedFunctionName("demo::Session::Load"), "demo::Session::Load");
  EXPECT_EQ(SimplifiedFunctionName("max<int>"), "max");
  EXPECT_EQ(SimplifiedFunctionName("Foo<int>::operator<"), "Foo::operator<");
  EXPECT_EQ(SimplifiedFunctionName("Foo<int>::operator<<"), "Foo::operator<<");
  EXPECT_EQ(SimplifiedFunctionName("Foo<int>::operator->"), "Foo::operator->");
  EXPECT_EQ(SimplifiedFunctionName("Foo<int>::operator()"), "Foo::operator()");
  EXPECT_EQ(SimplifiedFunctionName("main::{lambda(std::vector<int>)#1}::operator()"),
            "main::{lambda(std::vector<int>)#1}::operator()");
  EXPECT_EQ(SimplifiedFunctionName("(anonymous namespace)::f"), "(anonymous namespace)::f");
  EXPECT_EQ(SimplifiedFunctionName("malloc"), "malloc");
}

TEST(FunctionName, FullNameIsTheWholeDemangledName) {
  SourceFrame f;
  f.function = "Foo::bar";
  f.linkage_name = "_ZNK3Foo3barEi";
  EXPECT_EQ(FullFunctionName(f), "Foo::bar(int) const");
  f.linkage_name = "_ZNK3Foo3barEi@@V1";
  EXPECT_EQ(FullFunctionName(f), "Foo::bar(int) const");
  f.linkage_name = nullptr;
  EXPECT_EQ(FullFunctionName(f), "Foo::bar");
  f.linkage_name = "plain_c";
  EXPECT_EQ(FullFunctionName(f), "Foo::bar");
}

TEST(AllocationFrames, Classification) {
  EXPECT_EQ(ClassifyFrame("malloc", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("operator new", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("operator new[]", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("tcmalloc::ThreadCache::Allocate", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("anything", "/usr/lib/libtcmalloc.so.4"), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("anything", "/build/libheapkit.so"), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("je_malloc", "/usr/lib/libjemalloc.so.2"), FrameRole::kAllocator);
  // The C++ standard library's allocation paths.
  EXPECT_EQ(ClassifyFrame("std::__new_allocator<char>::allocate", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("std::vector<int>::_M_realloc_insert", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("__gnu_cxx::new_allocator<char>::allocate", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("std::__1::allocator<char>::allocate", ""), FrameRole::kAllocator);
  EXPECT_EQ(ClassifyFrame("std::make_shared<int>", ""), FrameRole::kAllocator);
  // libc's copying allocators.
  EXPECT_EQ(ClassifyFrame("strdup", "/lib/libc.so.6"), FrameRole::kCopyingAllocator);
  EXPECT_EQ(ClassifyFrame("__vasprintf_internal", "/lib/libc.so.6"), FrameRole::kCopyingAllocator);
  EXPECT_EQ(ClassifyFrame("__GI___strdup", "/lib/libc.so.6"), FrameRole::kCopyingAllocator);
  // Callers: the user's code, and libraries allocating for their own purposes.
  EXPECT_EQ(ClassifyFrame("main", "/bin/prog"), FrameRole::kCaller);
  EXPECT_EQ(ClassifyFrame("mallocate_stuff", ""), FrameRole::kCaller);
  EXPECT_EQ(ClassifyFrame("fopen", "/lib/libc.so.6"), FrameRole::kCaller);
  EXPECT_EQ(ClassifyFrame("getline", "/lib/libc.so.6"), FrameRole::kCaller);
  EXPECT_EQ(ClassifyFrame("stdx::thing", ""), FrameRole::kCaller);
}

TEST(AllocationFrames, PathLength) {
  using R = FrameRole;
  auto length = [](std::vector<R> roles, std::vector<int> modules) {
    return AllocationPathLength(
        roles.size(), [&](size_t i) { return roles[i]; },
        [&](size_t i, size_t j) { return modules[i] == modules[j]; });
  };
  // malloc, operator new, std::vector::_M_realloc_insert, user, main
  EXPECT_EQ(length({R::kAllocator, R::kAllocator, R::kAllocator, R::kCaller, R::kCaller},
                   {0, 1, 2, 2, 2}),
            3u);
  // malloc, strdup (libc), user
  EXPECT_EQ(length({R::kAllocator, R::kCopyingAllocator, R::kCaller}, {0, 1, 2}), 2u);
  // malloc, _IO_str_overflow, __vfprintf_internal, asprintf (all libc), user
  EXPECT_EQ(length({R::kAllocator, R::kCaller, R::kCaller, R::kCopyingAllocator, R::kCaller},
                   {0, 1, 1, 1, 2}),
            4u);
  // malloc, fopen (libc, allocating for itself), user: fopen stays the leaf
  EXPECT_EQ(length({R::kAllocator, R::kCaller, R::kCaller}, {0, 1, 2}), 1u);
  // A copying allocator in another module than the first caller frame does not count.
  EXPECT_EQ(length({R::kAllocator, R::kCaller, R::kCopyingAllocator, R::kCaller}, {0, 2, 1, 2}),
            1u);
  // Only allocator frames: the last one stays.
  EXPECT_EQ(length({R::kAllocator, R::kAllocator}, {0, 0}), 1u);
  EXPECT_EQ(length({}, {}), 0u);
}

}  // namespace
}  // namespace heapkit::pprof
