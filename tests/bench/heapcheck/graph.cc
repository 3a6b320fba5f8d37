// Benchmark program: a reachable graph of N (default 1,000,000) heap objects plus one leak.
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct GraphNode {
  GraphNode* left;
  GraphNode* right;
  unsigned long value;
};

GraphNode* g_root = nullptr;

__attribute__((noinline)) void Build(int n) {
  GraphNode** all = static_cast<GraphNode**>(std::malloc(sizeof(GraphNode*) * n));
  for (int i = 0; i < n; ++i)
    all[i] = new GraphNode{nullptr, nullptr, static_cast<unsigned long>(i)};
  for (int i = 0; i < n; ++i) {
    if (2 * i + 1 < n) all[i]->left = all[2 * i + 1];
    if (2 * i + 2 < n) all[i]->right = all[2 * i + 2];
  }
  g_root = all[0];
  std::free(all);
  void* lost = std::malloc(64);
  asm volatile("" : : "r"(lost) : "memory");
}

__attribute__((noinline)) void Wipe() {
  char buf[64 * 1024];
  std::memset(buf, 0, sizeof(buf));
  asm volatile("" : : "r"(buf) : "memory");
}

int main(int argc, char** argv) {
  Build(argc > 1 ? std::atoi(argv[1]) : 1000000);
  Wipe();
  return 0;
}
