// A dlopen'd library that leaks (tests/heapcheck scenario "dlopen").
#include <cstdlib>

extern "C" __attribute__((noinline, visibility("default"))) void* PluginLeak(size_t n) {
  void* p = std::malloc(n);
  asm volatile("" : : "r"(p) : "memory");
  return p;
}
