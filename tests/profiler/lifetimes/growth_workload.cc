// The growth window's ground truth (run_growth.py): a bounded cache that replaces a quarter of
// its entries every tick, and fl() leaking 1 MiB per tick; a dump after every tick
// (HeapProfilerDump, found with dlsym: the program runs under LD_PRELOAD=libheapkit.so).
//   fcache  4096 entries x 16 KiB = 64 MiB, filled before the first tick, size constant
//   fl      256 x 4 KiB = 1 MiB per tick, never freed
// The replacement pattern is fixed (a seeded LCG), so the truth is known: for the window
// after dump <since> up to dump <ticks>, it prints the cache's entries allocated in the
// window and live at the end, and the entries live at dump <since> freed in the window:
//   "cache_new <n>", "cache_old_freed <n>", "fl_window <bytes>", "entry <bytes> leak <bytes>".
// argv: ticks since.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

namespace {

constexpr size_t kEntry = 16384, kLeak = 4096;
constexpr int kEntries = 4096, kLeaksPerTick = 256, kReplacedPerTick = kEntries / 4;

struct Entry {
  void* p;
  int born;  // the tick it was allocated in (0: before the first)
};
Entry cache[kEntries];
void* leaked[kLeaksPerTick * 64];

#define ALLOCATION_SITE(name, size)         \
  __attribute__((noinline)) void* name() {  \
    void* p = malloc(size);                 \
    asm volatile("" : : "r"(p) : "memory"); \
    return p;                               \
  }
ALLOCATION_SITE(fcache, kEntry)
ALLOCATION_SITE(fl, kLeak)

uint64_t lcg = 12345;
uint32_t Next() {
  lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<uint32_t>(lcg >> 33);
}

}  // namespace

int main(int argc, char** argv) {
  const int ticks = argc > 1 ? atoi(argv[1]) : 20;
  const int since = argc > 2 ? atoi(argv[2]) : 10;
  if (ticks < 1 || ticks > 64 || since < 0 || since >= ticks) return 2;
  auto dump = reinterpret_cast<void (*)(const char*)>(dlsym(RTLD_DEFAULT, "HeapProfilerDump"));
  if (dump == nullptr) {
    fprintf(stderr, "HeapProfilerDump not found (run under LD_PRELOAD=libheapkit.so)\n");
    return 3;
  }
  for (Entry& e : cache) e = {fcache(), 0};
  int n_leaked = 0;
  long old_freed = 0;  // entries live at dump `since` (born <= since) freed after it
  for (int tick = 1; tick <= ticks; ++tick) {
    for (int i = 0; i < kReplacedPerTick; ++i) {
      Entry& e = cache[Next() % kEntries];
      if (tick > since && e.born <= since) ++old_freed;
      free(e.p);
      e = {fcache(), tick};
    }
    for (int i = 0; i < kLeaksPerTick; ++i) leaked[n_leaked++] = fl();
    dump("tick");  // dump number `tick`
  }
  long cache_new = 0;
  for (const Entry& e : cache) cache_new += e.born > since;
  printf("cache_new %ld\ncache_old_freed %ld\nfl_window %zu\nentry %zu leak %zu\n", cache_new,
         old_freed, static_cast<size_t>(ticks - since) * kLeaksPerTick * kLeak, kEntry, kLeak);
  return leaked[0] == nullptr;
}
