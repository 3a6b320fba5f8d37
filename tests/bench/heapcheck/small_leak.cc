// Benchmark program: a small program with a few leaks (direct, indirect chain, lost buffer).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

struct Node {
  Node* next;
  char payload[40];
};

std::vector<std::string>* g_keep = nullptr;

__attribute__((noinline)) void* Escape(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

__attribute__((noinline)) void Leak() {
  Escape(std::malloc(1000));
  Node* head = nullptr;
  for (int i = 0; i < 10; ++i) {
    Node* n = new Node;
    n->next = head;
    head = n;
  }
  Escape(head);
}

__attribute__((noinline)) void Wipe() {
  char buf[64 * 1024];
  std::memset(buf, 0, sizeof(buf));
  asm volatile("" : : "r"(buf) : "memory");
}

int main() {
  g_keep = new std::vector<std::string>;
  for (int i = 0; i < 1000; ++i) g_keep->push_back(std::string(40 + i % 64, 'x'));
  Leak();
  Wipe();
  std::printf("done\n");
  return 0;
}
