// A program with an allocator of its own, as CPython (pymalloc) and GCC (its GC heap) have: the
// only pointers to some heap objects are kept in an anonymous mapping it made. Those objects are
// live (valgrind agrees; LeakSanitizer, which scans no anonymous mapping, reports them). Around
// it, what an anonymous root must never hide:
//  - pointers in a mapping the program made PROT_NONE, or unmapped;
//  - a pointer left on the stack of a thread that exited (glibc caches the stack, an anonymous
//    mapping, with the dead frames in it);
//  - an ordinary lost pointer.
// And a 4 GiB reservation never touched: not a page of it is read.
// Prints the truth with anonymous roots and without them
// (HEAP_CHECK_SCAN_ANONYMOUS_MAPPINGS=false).
#include <pthread.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void* volatile g_sink;

struct Totals {
  long long bytes = 0, objects = 0;
  void Add(long long b) {
    bytes += b;
    ++objects;
  }
};

void* MapOrDie(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("mmap");
    std::exit(2);
  }
  return p;
}

// Objects reachable only from the program's arena (and one level further, from those objects).
Totals FillArena() {
  constexpr size_t kArenaBytes = 1 << 20;
  auto* arena = static_cast<void**>(MapOrDie(kArenaBytes));
  Totals held;
  for (int i = 0; i < 50; ++i) {
    // Slots on the first page and on one page half-way in; the rest of the arena stays untouched.
    const size_t slot = i < 25 ? static_cast<size_t>(i) * 3 : kArenaBytes / 16 + i;
    void** parent = static_cast<void**>(std::malloc(200));
    std::memset(parent, 0, 200);
    parent[1] = std::malloc(40);
    arena[slot] = parent;
    held.Add(200);
    held.Add(40);
  }
  return held;
}

// Pointers in memory no scan may read: made PROT_NONE, or unmapped.
Totals HideInUnreadableMemory() {
  Totals lost;
  auto* guarded = static_cast<void**>(MapOrDie(2 * 4096));
  for (int i = 0; i < 4; ++i) {
    guarded[i * 100] = std::malloc(96);
    lost.Add(96);
  }
  mprotect(guarded, 2 * 4096, PROT_NONE);
  auto* gone = static_cast<void**>(MapOrDie(4096));
  gone[7] = std::malloc(72);
  lost.Add(72);
  munmap(gone, 4096);
  return lost;
}

// The thread's frame keeps the pointer until the thread exits; its stack then stays mapped in
// glibc's cache with the pointer in it.
__attribute__((noinline)) void* LoseOnThreadStack(void*) {
  void* volatile kept[8];
  for (auto& k : kept) k = nullptr;
  kept[3] = std::malloc(56);
  g_sink = nullptr;
  return nullptr;
}

}  // namespace

int main() {
  const Totals held = FillArena();
  Totals always = HideInUnreadableMemory();
  pthread_t thread;
  if (pthread_create(&thread, nullptr, LoseOnThreadStack, nullptr) != 0) return 2;
  pthread_join(thread, nullptr);
  always.Add(56);
  g_sink = std::malloc(24);
  g_sink = nullptr;
  always.Add(24);
  void* reservation = mmap(nullptr, size_t{4} << 30, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  g_sink = reservation == MAP_FAILED ? nullptr : reservation;
  g_sink = nullptr;
  std::printf("truth: leaked %lld bytes in %lld objects\n", always.bytes, always.objects);
  std::printf("truth without anonymous roots: leaked %lld bytes in %lld objects\n",
              always.bytes + held.bytes, always.objects + held.objects);
  return 0;
}
