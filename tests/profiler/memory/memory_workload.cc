// Programs whose memory is known, run under HEAPPROFILE by run_memory.py, which checks the
// dump's memory figures (profiler/output/memory_breakdown.h) against the truth. Each mode ends with
// HeapProfilerDump, so the figures describe the moment the mode chose:
//   small <MiB>   MiB of 56..1016-byte objects, 90 % freed in random order: the live tenth and
//                 the stranded free objects of partly used spans (StrandSmallObjects)
//   release       64 MiB of 256 KiB blocks freed, dumped, ReleaseFreeMemory, dumped again
//   threads <n>   n threads with 8 MiB stacks, each writing 1 MiB of its stack, all alive at
//                 the dump
//   mmap <MiB>    one direct anonymous mmap of MiB, all written
//   partial <MiB> <touched MiB>  one malloc of MiB of which the first touched MiB are written
#include <gperftools/heap-profiler.h>

// LD_PRELOAD=libheapkit.so supplies the profiler API at run time.
#pragma weak HeapProfilerDump

#include <malloc.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

extern "C" void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));

namespace {

volatile void* g_sink;

uint64_t g_rng = 0x9e3779b97f4a7c15ull;
uint64_t Next() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

__attribute__((noinline)) void* StrandSmallObjects(size_t size) {
  void* p = malloc(size);
  memset(p, 0x5a, size);
  return p;
}

void Small(size_t mib) {
  const size_t total = mib << 20;
  size_t n = 0, bytes = 0;
  // Requested sizes 8 bytes below a size class: 2 % of the live bytes is rounding.
  static const size_t kSizes[] = {56, 120, 248, 504, 1016};
  const size_t cap = total / 56 + 1;
  void** objects = static_cast<void**>(calloc(cap, sizeof(void*)));
  memset(objects, 0, cap * sizeof(void*));  // all of it written: live and resident
  while (bytes < total && n < cap) {
    const size_t size = kSizes[n % 5];
    objects[n++] = StrandSmallObjects(size);
    bytes += size;
  }
  // Free 90 % in random order (Fisher-Yates over the indexes, free the first 90 %).
  for (size_t i = n - 1; i > 0; --i) {
    const size_t j = Next() % (i + 1);
    void* t = objects[i];
    objects[i] = objects[j];
    objects[j] = t;
  }
  const size_t freed = n / 10 * 9;
  size_t freed_usable = 0, live_requested = 0, live_usable = malloc_usable_size(objects);
  for (size_t i = 0; i < n; ++i) {
    const size_t usable = malloc_usable_size(objects[i]);
    if (i < freed) {
      freed_usable += usable;
      free(objects[i]);
    } else {
      live_usable += usable;
      live_requested += usable - 8;  // every requested size is its class size - 8
    }
  }
  live_requested += cap * sizeof(void*);
  HeapProfilerDump("small objects, 90 % freed");
  // run_memory.py reads this line.
  fprintf(stderr, "freed_usable %zu live_usable %zu live_requested %zu\n", freed_usable,
          live_usable, live_requested);
}

__attribute__((noinline)) void* ReleaseBlock() {
  void* p = malloc(256 << 10);
  memset(p, 1, 256 << 10);
  return p;
}

void Release() {
  void* blocks[256];
  for (void*& b : blocks) b = ReleaseBlock();
  for (void* b : blocks) free(b);
  HeapProfilerDump("freed, not released");
  MallocExtension_ReleaseFreeMemory();
  HeapProfilerDump("released");
}

pthread_barrier_t g_ready, g_done;

void* StackUser(void*) {
  char stack_bytes[1 << 20];
  memset(stack_bytes, 3, sizeof(stack_bytes));
  g_sink = stack_bytes;
  pthread_barrier_wait(&g_ready);
  pthread_barrier_wait(&g_done);
  return nullptr;
}

void Threads(int n) {
  pthread_barrier_init(&g_ready, nullptr, static_cast<unsigned>(n) + 1);
  pthread_barrier_init(&g_done, nullptr, static_cast<unsigned>(n) + 1);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 8 << 20);
  pthread_t* threads = static_cast<pthread_t*>(malloc(sizeof(pthread_t) * static_cast<size_t>(n)));
  for (int i = 0; i < n; ++i) {
    if (pthread_create(&threads[i], &attr, StackUser, nullptr) != 0) {
      fprintf(stderr, "pthread_create failed at %d\n", i);
      exit(2);
    }
  }
  pthread_barrier_wait(&g_ready);
  HeapProfilerDump("threads running");
  pthread_barrier_wait(&g_done);
  for (int i = 0; i < n; ++i) pthread_join(threads[i], nullptr);
}

void Mmap(size_t mib) {
  void* p = mmap(nullptr, mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(2);
  }
  memset(p, 7, mib << 20);
  HeapProfilerDump("direct mmap written");
  munmap(p, mib << 20);
}

__attribute__((noinline)) void* PartlyTouchedBlock(size_t bytes, size_t touched) {
  char* p = static_cast<char*>(malloc(bytes));
  memset(p, 9, touched);
  return p;
}

void Partial(size_t mib, size_t touched_mib) {
  void* p = PartlyTouchedBlock(mib << 20, touched_mib << 20);
  g_sink = p;
  HeapProfilerDump("partly touched block");
  free(p);
}

double NowSeconds() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// dumpcost <MiB> <reps>: MiB of 56..1016-byte objects kept live, then <reps> timed dumps; prints
// each dump's wall time (tests/bench/profiler/dump_cost.sh).
void DumpCost(size_t mib, int reps) {
  static const size_t kSizes[] = {56, 120, 248, 504, 1016};
  size_t bytes = 0;
  for (size_t n = 0; bytes < (mib << 20); ++n) {
    g_sink = StrandSmallObjects(kSizes[n % 5]);
    bytes += kSizes[n % 5];
  }
  for (int i = 0; i < reps; ++i) {
    const double start = NowSeconds();
    HeapProfilerDump("dump cost");
    printf("dump_seconds %.4f\n", NowSeconds() - start);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  const long arg = argc > 2 ? atol(argv[2]) : 0;
  if (strcmp(mode, "small") == 0)
    Small(static_cast<size_t>(arg));
  else if (strcmp(mode, "release") == 0)
    Release();
  else if (strcmp(mode, "threads") == 0)
    Threads(static_cast<int>(arg));
  else if (strcmp(mode, "mmap") == 0)
    Mmap(static_cast<size_t>(arg));
  else if (strcmp(mode, "dumpcost") == 0)
    DumpCost(static_cast<size_t>(arg), atoi(argv[3]));
  else if (strcmp(mode, "partial") == 0)
    Partial(static_cast<size_t>(arg), static_cast<size_t>(atol(argv[3])));
  else
    return 2;
  return 0;
}
