// A 2^20-node binary tree built by recursion: ~1M live objects, every allocation a distinct
// stack (the return addresses of the left and right calls spell the node's path). Nothing
// leaks (the root stays reachable from a global). Measures the per-stack cost of the
// profiler's stack table under HEAPCHECK=normal.
#include <cstdio>

struct T {
  T* l;
  T* r;
};

__attribute__((noinline)) T* make(int d) {
  if (!d) return nullptr;
  T* t = new T;
  t->l = make(d - 1);
  asm volatile("" ::: "memory");  // keep the two calls distinct call sites, no tail call
  t->r = make(d - 1);
  asm volatile("" ::: "memory");
  return t;
}

T* volatile g_root;

int main() {
  g_root = make(20);
  std::printf("built %p\n", static_cast<void*>(g_root));
  return 0;
}
