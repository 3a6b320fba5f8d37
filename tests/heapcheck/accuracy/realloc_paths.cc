// Every realloc path, for the leak checker and the heap profiler.
//
// `check` (run under HEAPCHECK=normal): each case keeps a block P reachable from a global,
// reallocs it along one path, and P alone holds a pointer to a fresh target object T:
//  - growing (in place or moved), T's pointer is stored past P's old size: the checker must scan
//    P's new size, so T is live;
//  - shrinking in place, T's pointer was stored past the new size before the realloc: the
//    checker must scan only the new size, so T is a leak.
// Prints "in-place <case> yes|no" for each case and the truth: "truth: leaked B bytes in N
// objects".
//
// `layout`: malloc, aligned allocation and nallocx at and around class sizes; prints
// "layout: N sizes, M with a byte past the end, K mismatches" (usable size != nallocx, or an
// aligned block not aligned). Under HEAPCHECK every block has the byte; without, class sizes
// fit exactly.
//
// `profile` (run with TCMALLOC_SAMPLE_PARAMETER=1): 1000 blocks grown in place and 1000 shrunk
// in place; prints the profile header's changes ("profile: +A allocations +B bytes, in use
// +I bytes"), which must count every in-place realloc as an allocation of its new size.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <malloc.h>

#include <initializer_list>

#include <gperftools/heap-profiler.h>
#include <gperftools/nallocx.h>

// The reallocated blocks, live (external linkage: the stores must stay).
void* g_kept[16];

namespace {

uint64_t g_leaked_bytes, g_leaked_objects;

// Stores a pointer to a new target of `target_size` bytes at `offset` of p.
void* PlantTarget(void* p, size_t offset, size_t target_size) {
  void* t = std::malloc(target_size);
  std::memset(t, 0x11, target_size);
  std::memcpy(static_cast<char*>(p) + offset, &t, sizeof(t));
  return t;
}

// P of `from` bytes reallocated to `to`; the target's pointer goes at `offset` (before the
// realloc when shrinking, after it when growing). Shrinking below `offset` leaks the target.
void Case(int i, const char* name, size_t from, size_t to, size_t offset, size_t target_size) {
  void* p = std::malloc(from);
  std::memset(p, 0, from);
  const bool shrink = to < from;
  if (shrink) PlantTarget(p, offset, target_size);
  void* q = std::realloc(p, to);
  if (q == nullptr) std::abort();
  if (!shrink) {
    std::memset(static_cast<char*>(q) + from, 0, to - from);
    PlantTarget(q, offset, target_size);
  }
  g_kept[i] = q;
  if (shrink && offset >= to) {
    g_leaked_bytes += target_size;
    ++g_leaked_objects;
  }
  std::printf("in-place %s %s\n", name, q == p ? "yes" : "no");
}

int Check() {
  // Target sizes differ per case, so a wrong total names the case.
  Case(0, "small-grow", 1000, 1015, 1000, 24);  // class 1024: 1015 + the checker's byte fit
  Case(1, "small-shrink", 200, 150, 184, 40);   // class 208 kept (150 >= 208 / 2)
  Case(2, "small-move", 16, 1000, 992, 56);
  Case(3, "small-to-large", 1000, 300000, 299000, 72);
  Case(4, "large-grow", 300000, 303000, 302000, 88);     // 37 pages = 303104 bytes
  Case(5, "large-shrink", 600000, 400000, 500000, 104);  // 74 pages kept (400000 >= half)
  Case(6, "large-to-small", 300000, 100, 64, 120);
  Case(7, "large-move", 300000, 700000, 690000, 136);
  std::printf("truth: leaked %llu bytes in %llu objects\n",
              static_cast<unsigned long long>(g_leaked_bytes),
              static_cast<unsigned long long>(g_leaked_objects));
  return 0;
}

}  // namespace

void* g_blocks[2000];

namespace {

struct Header {
  long long inuse_objects, inuse_bytes, alloc_objects, alloc_bytes;
};

Header ReadHeader() {
  char* text = GetHeapProfile();
  Header h{};
  if (text == nullptr ||
      std::sscanf(text, "heap profile: %lld: %lld [ %lld: %lld]", &h.inuse_objects, &h.inuse_bytes,
                  &h.alloc_objects, &h.alloc_bytes) != 4) {
    std::fprintf(stderr, "realloc_paths: no heap profile header\n");
    std::exit(2);
  }
  std::free(text);
  return h;
}

constexpr int kBlocks = 1000;

int Profile() {
  HeapProfilerStart("/tmp/realloc_paths_unused");
  // The cost of reading the header itself (the profile text is an allocation).
  const Header a = ReadHeader(), b = ReadHeader();
  for (int i = 0; i < kBlocks; ++i) g_blocks[i] = std::malloc(100);
  for (int i = kBlocks; i < 2 * kBlocks; ++i) g_blocks[i] = std::malloc(200);
  const Header c = ReadHeader();
  int moved = 0;
  for (int i = 0; i < kBlocks; ++i) {
    void* q = std::realloc(g_blocks[i], 110);
    moved += q != g_blocks[i];
    g_blocks[i] = q;
  }
  for (int i = kBlocks; i < 2 * kBlocks; ++i) {
    void* q = std::realloc(g_blocks[i], 150);
    moved += q != g_blocks[i];
    g_blocks[i] = q;
  }
  const Header d = ReadHeader();
  HeapProfilerStop();
  const long long overhead_objects = b.alloc_objects - a.alloc_objects;
  const long long overhead_bytes = b.alloc_bytes - a.alloc_bytes;
  std::printf("moved %d\n", moved);
  std::printf("profile: +%lld allocations +%lld bytes, in use +%lld bytes\n",
              d.alloc_objects - c.alloc_objects - overhead_objects,
              d.alloc_bytes - c.alloc_bytes - overhead_bytes, d.inuse_bytes - c.inuse_bytes);
  return 0;
}

}  // namespace

int Layout() {
  int sizes = 0, with_byte = 0, mismatches = 0;
  auto one = [&](size_t size, size_t align) {
    void* p = nullptr;
    if (align == 0) {
      p = std::malloc(size);
    } else if (posix_memalign(&p, align, size) != 0) {
      p = nullptr;
    }
    if (p == nullptr) std::abort();
    const size_t usable = malloc_usable_size(p);
    ++sizes;
    with_byte += usable >= size + 1;
    if ((align == 0 && usable != nallocx(size, 0)) ||
        (align != 0 && reinterpret_cast<uintptr_t>(p) % align != 0) || usable < size) {
      ++mismatches;
      std::printf("mismatch: size %zu align %zu usable %zu nallocx %zu\n", size, align, usable,
                  nallocx(size, 0));
    }
    std::free(p);
  };
  for (size_t s :
       {8, 16, 32, 48, 64, 128, 144, 1024, 1152, 4096, 8192, 65536, 262144, 270336, 327680})
    for (size_t d : {size_t{0}, size_t{1}}) {
      one(s - d, 0);
      one(s - d, 64);
      one(s - d, 4096);
    }
  std::printf("layout: %d sizes, %d with a byte past the end, %d mismatches\n", sizes, with_byte,
              mismatches);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "layout") == 0) return Layout();
  if (argc > 1 && std::strcmp(argv[1], "check") == 0) return Check();
  if (argc > 1 && std::strcmp(argv[1], "profile") == 0) return Profile();
  std::fprintf(stderr, "usage: realloc_paths check|layout|profile\n");
  return 2;
}
