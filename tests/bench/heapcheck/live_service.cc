// Benchmark program: a service with a large pointer-dense live heap whose worker threads
// allocate without pause, for the cost of live leak checks (/debug/pprof/leaks) asked back to
// back (live_leaks.sh drives it).
//
//   live_service <heap MiB> <workers> <seconds>
//
// Builds a graph of 56-byte nodes (six pointers to other nodes, see Link, and a value: 64-byte
// blocks under the checker's layout) filling <heap MiB>, reachable from a global table, plus one
// leaked node; prints "ready <nodes>" and then runs <workers> threads for <seconds>: each
// replaces random nodes of its own share of the graph (a malloc and a free per step, the new
// node linked in at once) and counts its steps. Every second it prints "rate <steps/s>" (all
// workers), and at the end "total <steps/s> over <seconds> s", then _exit(0) (no exit check).
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

struct Node {
  Node* edges[6];
  uint64_t value;
};

Node** g_nodes = nullptr;  // the roots: one slot per node
size_t g_count = 0;
int g_workers = 0;
std::atomic<bool> g_stop{false};
std::atomic<uint64_t> g_steps{0};

uint64_t Next(uint64_t* x) {
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

// Node i's edges: its neighbours, its parent and child in an implicit binary tree, a node 64
// further on, and one node anywhere: mostly near pointers, as in lists, trees and vectors of
// a real service's heap, and one far one each.
void Link(Node* n, size_t i, uint64_t* rng) {
  const size_t near[5] = {i + 1, i + 2, i / 2, 2 * i + 1, i + 64};
  for (int k = 0; k < 5; ++k) n->edges[k] = g_nodes[near[k] % g_count];
  n->edges[5] = g_nodes[Next(rng) % g_count];
}

__attribute__((noinline)) Node* NewNode(size_t i, uint64_t* rng) {
  Node* n = static_cast<Node*>(malloc(sizeof(Node)));
  Link(n, i, rng);
  n->value = *rng;
  return n;
}

__attribute__((noinline)) void Build(size_t count) {
  g_count = count;
  g_nodes = static_cast<Node**>(calloc(count, sizeof(Node*)));
  uint64_t rng = 88172645463325252ull;
  for (size_t i = 0; i < count; ++i) g_nodes[i] = static_cast<Node*>(malloc(sizeof(Node)));
  for (size_t i = 0; i < count; ++i) {
    Link(g_nodes[i], i, &rng);
    g_nodes[i]->value = i;
  }
  void* lost = malloc(sizeof(Node));
  asm volatile("" : : "r"(lost) : "memory");
}

// Worker w owns the slots i with i % workers == w: it frees a node and links a new one in its
// place (edges into it from other nodes become stale: the graph stays dense, never a leak,
// since every node is in g_nodes).
void* Work(void* arg) {
  const size_t w = reinterpret_cast<uintptr_t>(arg);
  uint64_t rng = 0x9e3779b97f4a7c15ull * (w + 1);
  uint64_t local = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    const size_t slot = (Next(&rng) % (g_count / g_workers)) * g_workers + w;
    Node* fresh = NewNode(slot, &rng);
    Node* old = g_nodes[slot];
    g_nodes[slot] = fresh;
    free(old);
    if (++local == 1024) {
      g_steps.fetch_add(local, std::memory_order_relaxed);
      local = 0;
    }
  }
  return nullptr;
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <heap MiB> <workers> <seconds>\n", argv[0]);
    return 2;
  }
  const size_t mib = strtoul(argv[1], nullptr, 10);
  g_workers = atoi(argv[2]);
  const int seconds = atoi(argv[3]);
  if (mib == 0 || g_workers < 1 || g_workers > 64 || seconds < 1) return 2;
  // 64-byte blocks (56 requested, the checker's byte past the end) and the root table's slot.
  Build(mib * (size_t{1} << 20) / (64 + sizeof(Node*)));
  printf("ready %zu\n", g_count);
  fflush(stdout);
  pthread_t threads[64];
  for (int w = 0; w < g_workers; ++w)
    pthread_create(&threads[w], nullptr, Work, reinterpret_cast<void*>(uintptr_t(w)));
  const double start = Now();
  uint64_t last = 0;
  for (int s = 1; s <= seconds; ++s) {
    const double until = start + s;
    while (Now() < until) usleep(static_cast<useconds_t>((until - Now()) * 1e6) + 1);
    const uint64_t steps = g_steps.load(std::memory_order_relaxed);
    printf("rate %llu\n", static_cast<unsigned long long>(steps - last));
    fflush(stdout);
    last = steps;
  }
  const double elapsed = Now() - start;
  printf("total %.0f over %.1f s\n", g_steps.load() / elapsed, elapsed);
  fflush(stdout);
  g_stop.store(true);
  for (int w = 0; w < g_workers; ++w) pthread_join(threads[w], nullptr);
  _exit(0);
}
