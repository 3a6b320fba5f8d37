// Deterministic allocation pattern for pprof-tool's golden tests. Built PIE and non-PIE with -g.
// Phase 1 allocations, then (if the profiler's C API is present) a dump, then phase 2.
// Every function that allocates is noinline; InlineHelper (which calls LeafC) is always inlined
// into OuterInl (an inline frame in the reports).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


namespace lib {
void* LibAlloc(size_t n);
}

std::vector<void*> g_keep;

__attribute__((noinline)) void* LeafA(size_t n) {
  void* p = malloc(n);
  memset(p, 1, n);
  return p;
}
__attribute__((noinline)) void* LeafB(size_t n) {
  char* p = new char[n];
  memset(p, 2, n);
  return p;
}
__attribute__((noinline)) void* LeafC(size_t n) { return calloc(1, n); }
// Inlined into OuterInl; work after the call keeps the return address inside the inline range.
static inline __attribute__((always_inline)) void* InlineHelper(size_t n) {
  char* p = static_cast<char*>(LeafC(n));
  p[n - 1] = 3;
  return p;
}
__attribute__((noinline)) void* OuterInl(size_t n) { return InlineHelper(n); }

namespace ns {
template <class T>
struct Box {
  __attribute__((noinline)) static void* Make(size_t n) { return LeafA(n * sizeof(T)); }
};
}  // namespace ns

__attribute__((noinline)) void Phase1() {
  for (int i = 0; i < 100; i++) g_keep.push_back(LeafA(1000));
  for (int i = 0; i < 50; i++) g_keep.push_back(LeafB(3000));
  for (int i = 0; i < 10; i++) free(LeafA(100000));
}

__attribute__((noinline)) void Phase2() {
  for (int i = 0; i < 40; i++) g_keep.push_back(OuterInl(5000));
  for (int i = 0; i < 30; i++) g_keep.push_back(ns::Box<int>::Make(500));
  for (int i = 0; i < 20; i++) g_keep.push_back(lib::LibAlloc(2000));
}

int main(int argc, char** argv) {
  g_keep.reserve(1000);
  Phase1();
  using DumpFn = void (*)(const char*);
  if (auto dump = reinterpret_cast<DumpFn>(dlsym(RTLD_DEFAULT, "HeapProfilerDump"))) {
    dump("phase1");
  }
  Phase2();
  (void)argc;
  (void)argv;
  if (getenv("GOLDEN_LEAK")) memset(g_keep.data(), 0, g_keep.size() * sizeof(void*));  // leak all
  return 0;
}
