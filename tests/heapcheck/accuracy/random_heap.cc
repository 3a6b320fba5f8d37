// The random-heap generator: `random_heap <seed>` builds a random object graph and knows which
// of its objects a correct leak checker must report.
//
// Sizes are drawn at and around every size-class boundary of a tcmalloc-style class table
// (8, 16..128 by 16, then 8 classes per power of two up to 256 KiB; each size, one less and one
// more), at powers of two, at the sizes std::vector and std::string grow through, and a few
// large (page-heap) sizes including exact page multiples. Every word of every object is written:
// zero, a small integer (never an address), a pointer to an object (its start, an interior
// offset, or one past its end), or a stale pointer (to an object freed later). Random subsets
// of the objects are kept reachable from globals, from two threads' stacks and from thread-local
// storage (main's and the threads'); the rest are dropped.
//
// The truth is computed over the program's own record of what each word means (not from the
// words' values): an object is live iff a chain of intended pointers leads to it from a root,
// where a pointer keeps its target alive iff its offset is at most the target's size (one past
// the end included) and at most HEAP_CHECK_MAX_POINTER_OFFSET, read from the environment like
// the checker reads it (unset: the checker's default, -1 = any offset). A checker that
// takes a past-the-end pointer for the next object, or a stale or unwritten word for a pointer,
// disagrees with it. All bookkeeping lives in anonymous mmap memory, made PROT_NONE before the
// program exits (heapkit and valgrind scan readable anonymous memory: its object addresses would
// keep every object alive), and nothing is allocated after the frees (so a stale pointer never
// lands in a new object).
//
// Prints "truth: leaked B bytes in N objects".
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

void* g_roots[64];  // external linkage: the stores stay

namespace {

// HEAP_CHECK_MAX_POINTER_OFFSET as the checker takes it: a number >= 0, else any offset.
size_t MaxPointerOffset() {
  const char* v = std::getenv("HEAP_CHECK_MAX_POINTER_OFFSET");
  char* end = nullptr;
  const long long n = v == nullptr ? -1 : std::strtoll(v, &end, 10);
  return v == nullptr || *v == '\0' || *end != '\0' || n < 0 ? SIZE_MAX : static_cast<size_t>(n);
}
const size_t g_max_pointer_offset = MaxPointerOffset();
constexpr int kThreads = 2;
constexpr int kThreadRoots = 32;

thread_local void* t_roots[16];

struct Rng {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return Next() % n; }
};

// Bookkeeping in anonymous mmap memory, hidden from the checker at the end (HideBookkeeping).
struct Mapping {
  void* start;
  size_t bytes;
};
Mapping g_bookkeeping[16];
int g_bookkeeping_count;

template <typename T>
T* MapArray(size_t n) {
  const size_t bytes = n * sizeof(T) + 1;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED || g_bookkeeping_count == 16) std::abort();
  g_bookkeeping[g_bookkeeping_count++] = {p, bytes};
  return static_cast<T*>(p);
}

void HideBookkeeping() {
  for (int i = 0; i < g_bookkeeping_count; ++i)
    if (mprotect(g_bookkeeping[i].start, g_bookkeeping[i].bytes, PROT_NONE) != 0) std::abort();
}

struct Object {
  uintptr_t start;
  size_t size;
  bool freed;
  bool live;  // the truth
};
struct Edge {  // object `from` (or a root: from < 0) intends a pointer to object `to`
  int from;
  int to;
};

struct Model {
  Object* objects;
  int count;
  Edge* edges;
  size_t edge_count;
};

size_t* g_sizes;
int g_size_count;

void AddSize(size_t s) {
  if (s <= 400000) g_sizes[g_size_count++] = s;
}

void BuildSizeTable() {
  g_sizes = MapArray<size_t>(4096);
  auto around = [](size_t s) {
    AddSize(s - 1);
    AddSize(s);
    AddSize(s + 1);
  };
  around(8);
  for (size_t s = 16; s <= 128; s += 16) around(s);
  for (size_t pow2 = 128; pow2 < 256 * 1024; pow2 *= 2)
    for (size_t s = pow2 + pow2 / 8; s <= pow2 * 2; s += pow2 / 8) around(s);
  for (size_t s = 1; s <= 256 * 1024; s *= 2) around(s);
  for (size_t elem : {8, 16, 24, 32, 40})  // std::vector<T> capacities 1, 2, 4, ...
    for (size_t n = 1; n * elem <= 64 * 1024; n *= 2) AddSize(n * elem);
  for (size_t cap = 15; cap < 64 * 1024; cap = cap * 2) AddSize(cap + 1);  // std::string
  AddSize(0);
  for (size_t pages : {33, 40, 48}) around(pages * 8192);  // large blocks, page multiples
  AddSize(300000);
}

size_t DrawSize(Rng& rng) {
  const size_t s = g_sizes[rng.Below(g_size_count)];
  // Large blocks cost the most to write: draw them rarely.
  if (s > 64 * 1024 && rng.Below(8) != 0) return s / 64;
  return s;
}

// A pointer to object t, at its start, an interior offset or one past its end; edge if it
// keeps t alive under the rule above.
uintptr_t PointerTo(Rng& rng, const Object& t, bool* keeps) {
  size_t off;
  switch (rng.Below(4)) {
    case 0: off = t.size; break;  // one past the end
    case 1: off = t.size == 0 ? 0 : rng.Below(t.size); break;
    default: off = 0;
  }
  *keeps = off <= t.size && off <= g_max_pointer_offset;
  return t.start + off;
}

struct ThreadRoots {
  std::atomic<int> ready{0};
  std::atomic<int> taken{0};
  void* values[kThreadRoots + 16];
};
ThreadRoots* g_mailbox;  // in mmap memory

void* Holder(void* arg) {
  const int me = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  ThreadRoots& box = g_mailbox[me];
  while (box.ready.load(std::memory_order_acquire) == 0) usleep(100);
  void* volatile on_stack[kThreadRoots];
  for (int i = 0; i < kThreadRoots; ++i) on_stack[i] = box.values[i];
  for (int i = 0; i < 16; ++i) t_roots[i] = box.values[kThreadRoots + i];
  std::memset(box.values, 0, sizeof(box.values));
  box.taken.store(1, std::memory_order_release);
  for (;;) pause();  // live, with its roots, until the process exits
  return on_stack[0];
}

__attribute__((noinline)) void Build(uint64_t seed, Model* m) {
  Rng rng{seed * 0x2545f4914f6cdd1dULL + 1};
  BuildSizeTable();
  const int n = 150 + static_cast<int>(rng.Below(350));
  m->objects = MapArray<Object>(n);
  m->edges = MapArray<Edge>(1 << 20);
  m->count = n;
  m->edge_count = 0;
  for (int i = 0; i < n; ++i) {
    const size_t size = DrawSize(rng);
    void* p = std::malloc(size);
    if (p == nullptr) std::abort();
    m->objects[i] = {reinterpret_cast<uintptr_t>(p), size, false, false};
  }
  // Objects to free at the end: stale pointers point to them.
  for (int i = 0; i < n; ++i) m->objects[i].freed = rng.Below(8) == 0;
  auto random_target = [&](bool freed) -> int {
    for (int tries = 0; tries < 64; ++tries) {
      const int t = static_cast<int>(rng.Below(n));
      if (m->objects[t].freed == freed) return t;
    }
    return -1;
  };
  for (int i = 0; i < n; ++i) {
    Object& o = m->objects[i];
    auto* bytes = reinterpret_cast<unsigned char*>(o.start);
    std::memset(bytes, 0, o.size);
    const size_t words = o.size / 8;
    // Dense pointers in small objects, sparse in large ones (the graph stays sparse).
    const uint64_t per_mille = words <= 16 ? 80 : (words <= 512 ? 8 : 1);
    for (size_t w = 0; w < words; ++w) {
      uintptr_t value = 0;
      const uint64_t r = rng.Below(1000);
      if (r < per_mille) {
        const int t = random_target(false);
        bool keeps = false;
        if (t >= 0) value = PointerTo(rng, m->objects[t], &keeps);
        if (keeps && !o.freed) m->edges[m->edge_count++] = {i, t};
      } else if (r < per_mille + 30) {
        const int t = random_target(true);  // stale once t is freed
        bool keeps;
        if (t >= 0) value = PointerTo(rng, m->objects[t], &keeps);
      } else if (r < per_mille + 200) {
        value = rng.Below(1u << 31);  // a small integer
      }
      std::memcpy(bytes + w * 8, &value, sizeof(value));
    }
  }
  // Roots: globals, each thread's stack and TLS, main's TLS.
  auto root = [&](void** slot) {
    const int t = random_target(false);
    bool keeps = false;
    *slot = t >= 0 ? reinterpret_cast<void*>(PointerTo(rng, m->objects[t], &keeps)) : nullptr;
    if (keeps) m->edges[m->edge_count++] = {-1, t};
  };
  const int globals = static_cast<int>(rng.Below(24));
  for (int i = 0; i < globals; ++i) root(&g_roots[i]);
  const int main_tls = static_cast<int>(rng.Below(8));
  for (int i = 0; i < main_tls; ++i) root(&t_roots[i]);
  for (int k = 0; k < kThreads; ++k) {
    const int stack_roots = static_cast<int>(rng.Below(kThreadRoots));
    for (int i = 0; i < stack_roots; ++i) root(&g_mailbox[k].values[i]);
    const int tls = static_cast<int>(rng.Below(16));
    for (int i = 0; i < tls; ++i) root(&g_mailbox[k].values[kThreadRoots + i]);
    g_mailbox[k].ready.store(1, std::memory_order_release);
  }
  for (int k = 0; k < kThreads; ++k)
    while (g_mailbox[k].taken.load(std::memory_order_acquire) == 0) usleep(100);
  for (int i = 0; i < n; ++i)
    if (m->objects[i].freed) std::free(reinterpret_cast<void*>(m->objects[i].start));
}

// The truth: flood over the intended edges.
void Truth(Model* m, unsigned long long* bytes, unsigned long long* objects) {
  int* work = MapArray<int>(m->count);
  int top = 0;
  for (size_t e = 0; e < m->edge_count; ++e) {
    const Edge& edge = m->edges[e];
    if (edge.from < 0 && !m->objects[edge.to].live) {
      m->objects[edge.to].live = true;
      work[top++] = edge.to;
    }
  }
  // Adjacency by scanning the edge list per popped object (small graphs).
  while (top > 0) {
    const int o = work[--top];
    for (size_t e = 0; e < m->edge_count; ++e) {
      const Edge& edge = m->edges[e];
      if (edge.from == o && !m->objects[edge.to].live) {
        m->objects[edge.to].live = true;
        work[top++] = edge.to;
      }
    }
  }
  *bytes = *objects = 0;
  for (int i = 0; i < m->count; ++i) {
    const Object& o = m->objects[i];
    if (o.freed || o.live) continue;
    *bytes += o.size;
    ++*objects;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: random_heap <seed>\n");
    return 2;
  }
  const uint64_t seed = std::strtoull(argv[1], nullptr, 10);
  std::printf("random_heap seed %llu\n", static_cast<unsigned long long>(seed));
  std::fflush(stdout);  // stdout's buffer exists before any object is freed
  g_mailbox = MapArray<ThreadRoots>(kThreads);
  for (int k = 0; k < kThreads; ++k) new (&g_mailbox[k]) ThreadRoots();
  pthread_t threads[kThreads];
  for (int k = 0; k < kThreads; ++k)
    pthread_create(&threads[k], nullptr, Holder, reinterpret_cast<void*>(static_cast<intptr_t>(k)));
  Model* m = MapArray<Model>(1);
  Build(seed, m);
  unsigned long long bytes, objects;
  Truth(m, &bytes, &objects);
  std::printf("truth: leaked %llu bytes in %llu objects\n", bytes, objects);
  std::fflush(stdout);
  HideBookkeeping();
  return 0;
}
