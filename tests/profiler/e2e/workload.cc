// A program with known allocation patterns, run under HEAPPROFILE by run_e2e.py.
//
// Allocating functions are noinline and do work after the call, so each is a real frame and
// the leaf PC of its samples lies inside it (the driver resolves PCs with `nm`):
//   RetainA   20000 x 1000 B  kept to the end   (20 000 000 B in use)
//   RetainB    5000 x 8000 B  kept to the end   (40 000 000 B in use)
//   ChurnC   200000 x  100 B  freed at once      (0 in use, 20 000 000 B allocated)
// Modes (argv[1]): pattern | idle <sec> | signal <signo> | fork | exec | api | churn <MB> |
//                  retain <MB> | heap_sample <file> (static build only) | slowpath | globals |
//                  handler_captures
// globals: HoldInGlobal allocates kGlobalBlocks x 4 MiB into a global object whose destructor
// frees them, so the memory is live at exit() and gone after global destructors.
// slowpath: kSlowThreads fresh threads (empty thread caches, so the allocator's refill/slow
// paths run) each allocate kSlowPerSize objects of every size 8, s*5/4+8, ... <= kSlowMaxSize
// through SlowMalloc, SlowNew, SlowCalloc and SlowAlignedNew, all kept to the end. run_e2e.py
// derives the same numbers and checks every profile record's leaf frame.
// handler_captures: for about a second the main thread allocates bursts of kBurst objects from
// HandlerSiteA (24 B), then HandlerSiteB (40 B), and frees them, while a timer signal every
// 50 us runs a handler that captures its own stack (MallocHook_GetCallerStackTrace: the
// profiler's capture, which rewrites the thread's walk memo whenever it lands between two
// allocations' checks of it). Prints "handler_captures <bursts> <captures>"; run_e2e.py checks
// that exact mode counted every object under its own site.
#include <gperftools/heap-profiler.h>

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>

#ifndef HEAPKIT_WEAK_API
#include <gperftools/malloc_extension.h>

#include <string>
#endif

// The profiler's stack capture (<gperftools/malloc_hook.h>'s C API).
extern "C" int MallocHook_GetCallerStackTrace(void** result, int max_depth, int skip_count);

#ifdef HEAPKIT_WEAK_API
#pragma weak MallocHook_GetCallerStackTrace
#pragma weak HeapProfilerStart
#pragma weak HeapProfilerStop
#pragma weak HeapProfilerDump
#pragma weak IsHeapProfilerRunning
#pragma weak GetHeapProfile
#endif

namespace {

void* volatile g_sink;
void** g_keep_a;
void** g_keep_b;

void Touch(void* p) {
  g_sink = p;
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void* RetainA() {
  void* p = malloc(1000);
  Touch(p);
  return p;
}

__attribute__((noinline)) void* RetainB() {
  char* p = new char[8000];
  Touch(p);
  return p;
}

#ifndef HEAPKIT_WEAK_API
bool WriteText(const char* path, const std::string& text) {
  FILE* f = fopen(path, "w");
  if (f == nullptr) return false;
  fwrite(text.data(), 1, text.size(), f);
  return fclose(f) == 0;
}
#endif

// 48 MiB in one block: more than the page heap holds, so it grows from the OS here.
[[maybe_unused]] __attribute__((noinline)) void* GrowTheHeap() {
  void* p = malloc(size_t{48} << 20);
  Touch(p);
  return p;
}

// Forks `forks` times while `busy` runs on another thread until `stop` is set; each child runs
// `child` under a 5 s alarm and exits with its result. Returns 1 at the first child that did
// not exit 0 by itself (one is enough to tell: the rest are not waited out), else 0.
[[maybe_unused]] int ForkWhileBusy(int forks, void* (*busy)(void*), std::atomic<bool>* stop,
                                   int (*child)()) {
  pthread_t thread;
  if (pthread_create(&thread, nullptr, busy, nullptr) != 0) exit(4);
  int stuck = 0;
  for (int i = 0; i < forks && stuck == 0; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      alarm(5);
      _exit(child());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    stuck = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  stop->store(true, std::memory_order_relaxed);
  pthread_join(thread, nullptr);
  return stuck;
}

#ifndef HEAPKIT_WEAK_API
// Heap growth from `depth` + 1 distinct stacks (one 2 MiB+ block each, kept): as many growth
// records, so that reading them takes a while.
[[maybe_unused]] __attribute__((noinline)) void GrowAtDepth(int depth, void** keep) {
  if (depth > 0) {
    GrowAtDepth(depth - 1, keep);
    keep[depth] = malloc((size_t{2} << 20) + static_cast<size_t>(depth) * 4096);
  } else {
    keep[0] = malloc(size_t{2} << 20);
  }
  Touch(keep[depth]);
}

std::atomic<bool> g_stop_reading{false};
void* ReadGrowthStacks(void*) {
  std::string stacks;
  while (!g_stop_reading.load(std::memory_order_relaxed)) {
    stacks.clear();
    MallocExtension::instance()->GetHeapGrowthStacks(&stacks);
  }
  return nullptr;
}

// Forks while another thread keeps reading the growth stacks (their lock held through each
// read); each child grows the heap (its growth is recorded under that lock). ForkWhileBusy's
// result.
[[maybe_unused]] int ForkWhileReadingGrowth(int forks) {
  void* keep[48];
  GrowAtDepth(47, keep);
  const int stuck = ForkWhileBusy(forks, &ReadGrowthStacks, &g_stop_reading,
                                  [] { return GrowTheHeap() != nullptr ? 0 : 3; });
  for (void* p : keep) free(p);
  return stuck;
}
#endif

std::atomic<bool> g_stop_closing{false};
void* OpenAndCloseLibz(void*) {
  while (!g_stop_closing.load(std::memory_order_relaxed)) {
    if (void* h = dlopen("libz.so.1", RTLD_NOW)) dlclose(h);
  }
  return nullptr;
}

// Forks while another thread keeps calling dlclose (the shared runtime remembers each closing
// module's mappings); each child closes a module too. ForkWhileBusy's result; -1 without libz.
[[maybe_unused]] int ForkWhileClosingModules(int forks) {
  void* libz = dlopen("libz.so.1", RTLD_NOW);
  if (libz == nullptr) return -1;
  const int stuck = ForkWhileBusy(forks, &OpenAndCloseLibz, &g_stop_closing, [] {
    void* h = dlopen("libz.so.1", RTLD_NOW);
    return h != nullptr && dlclose(h) == 0 ? 0 : 3;
  });
  dlclose(libz);
  return stuck;
}

__attribute__((noinline)) void ChurnC() {
  void* p = malloc(100);
  Touch(p);
  free(p);
  asm volatile("" ::: "memory");
}

void Pattern() {
  g_keep_a = static_cast<void**>(calloc(20000, sizeof(void*)));
  g_keep_b = static_cast<void**>(calloc(5000, sizeof(void*)));
  for (int i = 0; i < 20000; ++i) g_keep_a[i] = RetainA();
  for (int i = 0; i < 5000; ++i) g_keep_b[i] = RetainB();
  for (int i = 0; i < 200000; ++i) ChurnC();
}

__attribute__((noinline)) void Churn(long mb) {
  for (long i = 0; i < mb * 16; ++i) {  // 64 KiB per round
    void* p = malloc(65536);
    Touch(p);
    free(p);
  }
}

__attribute__((noinline)) void Retain(long mb) {
  for (long i = 0; i < mb * 16; ++i) Touch(malloc(65536));
}

// Keep in sync with run_e2e.py (GLOBAL_*).
constexpr int kGlobalBlocks = 8;
constexpr size_t kGlobalBlockSize = 4 << 20;
struct GlobalHolder {
  void* blocks[kGlobalBlocks] = {};
  ~GlobalHolder() {
    for (void*& b : blocks) {
      free(b);
      b = nullptr;
    }
  }
};
GlobalHolder g_holder;

__attribute__((noinline)) void HoldInGlobal() {
  for (void*& b : g_holder.blocks) {
    b = malloc(kGlobalBlockSize);
    Touch(b);
  }
}

// Keep in sync with run_e2e.py (SLOW_*).
constexpr int kSlowThreads = 2;
constexpr int kSlowPerSize = 16;
constexpr long kSlowMaxSize = 40000;
constexpr int kSlowMaxObjects = 1 << 16;
void* g_slow_keep[kSlowThreads][kSlowMaxObjects];

__attribute__((noinline)) void* SlowMalloc(size_t n) {
  void* p = malloc(n);
  Touch(p);
  return p;
}

__attribute__((noinline)) void* SlowNew(size_t n) {
  void* p = ::operator new(n);
  Touch(p);
  return p;
}

__attribute__((noinline)) void* SlowCalloc(size_t n) {
  void* p = calloc(1, n);
  Touch(p);
  return p;
}

__attribute__((noinline)) void* SlowAlignedNew(size_t n) {
  void* p = ::operator new (n, std::align_val_t{64});
  Touch(p);
  return p;
}

void* SlowThread(void* arg) {
  void** keep = static_cast<void**>(arg);
  int k = 0;
  for (long size = 8; size <= kSlowMaxSize; size = size * 5 / 4 + 8)
    for (int i = 0; i < kSlowPerSize && k + 4 <= kSlowMaxObjects; ++i) {
      keep[k++] = SlowMalloc(size);
      keep[k++] = SlowNew(size);
      keep[k++] = SlowCalloc(size);
      keep[k++] = SlowAlignedNew(size);
    }
  return nullptr;
}

void SlowPath() {
  pthread_t threads[kSlowThreads];
  for (int t = 0; t < kSlowThreads; ++t)
    if (pthread_create(&threads[t], nullptr, &SlowThread, g_slow_keep[t]) != 0) exit(4);
  for (int t = 0; t < kSlowThreads; ++t) pthread_join(threads[t], nullptr);
}

constexpr int kBurst = 16;
std::atomic<long> g_handler_captures{0};

void CaptureInHandler(int) {
  const int saved_errno = errno;
  void* pcs[32];
#ifdef HEAPKIT_WEAK_API
  const bool linked = &MallocHook_GetCallerStackTrace != nullptr;  // the preloaded runtime's
#else
  const bool linked = true;
#endif
  if (linked && MallocHook_GetCallerStackTrace(pcs, 32, 0) > 0)
    g_handler_captures.fetch_add(1, std::memory_order_relaxed);
  errno = saved_errno;
}

__attribute__((noinline)) void* HandlerSiteA() {
  void* p = malloc(24);
  Touch(p);
  return p;
}

__attribute__((noinline)) void* HandlerSiteB() {
  void* p = malloc(40);
  Touch(p);
  return p;
}

double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// handler_captures (header). The timer signals this thread only (the profiler has threads too).
void HandlerCaptures() {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = CaptureInHandler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGRTMIN, &sa, nullptr) != 0) exit(5);
  sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID;
  sev.sigev_signo = SIGRTMIN;
  sev._sigev_un._tid = gettid();
  // One capture in a handler first, while nothing holds an allocator lock: through the signal
  // frame the capture goes on with libunwind, whose thread-local state glibc allocates (malloc)
  // on its first use in a thread when libunwind was loaded on demand (the preloaded runtime);
  // a first use in a handler that interrupted the allocator would deadlock
  // (profiler/capture/README.md, "Stack capture").
  raise(SIGRTMIN);
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) exit(6);
  const itimerspec every{{0, 50000}, {0, 50000}};
  if (timer_settime(timer, 0, &every, nullptr) != 0) exit(7);
  long bursts = 0;
  void* a[kBurst];
  void* b[kBurst];
  for (const double end = MonotonicSeconds() + 1.0; MonotonicSeconds() < end;) {
    for (int k = 0; k < 100; ++k, ++bursts) {
      for (void*& p : a) p = HandlerSiteA();
      for (void*& p : b) p = HandlerSiteB();
      for (int i = 0; i < kBurst; ++i) {
        free(a[i]);
        free(b[i]);
      }
    }
  }
  timer_delete(timer);
  printf("handler_captures %ld %ld\n", bursts, g_handler_captures.load());
}

void SleepMs(long ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "pattern";
  if (strcmp(mode, "pattern") == 0) {
    Pattern();
  } else if (strcmp(mode, "idle") == 0) {
    SleepMs(static_cast<long>(atof(argc > 2 ? argv[2] : "1") * 1000));
  } else if (strcmp(mode, "signal") == 0) {
    Pattern();
    kill(getpid(), atoi(argc > 2 ? argv[2] : "10"));
    SleepMs(500);  // the helper thread writes the dump
  } else if (strcmp(mode, "fork") == 0) {
    Pattern();
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      Retain(2);
      printf("child %d\n", static_cast<int>(getpid()));
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent %d child %d status %d\n", static_cast<int>(getpid()), static_cast<int>(child),
           status);
  } else if (strcmp(mode, "exec") == 0) {
    Pattern();
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      char retain[] = "retain", one[] = "1";
      char* args[] = {argv[0], retain, one, nullptr};
      execv("/proc/self/exe", args);
      _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent %d child %d status %d\n", static_cast<int>(getpid()), static_cast<int>(child),
           status);
  } else if (strcmp(mode, "api") == 0) {
    printf("running-before %d\n", IsHeapProfilerRunning());
    HeapProfilerStart(argv[2]);
    printf("running-after-start %d\n", IsHeapProfilerRunning());
    Pattern();
    HeapProfilerDump("api dump");
    char* text = GetHeapProfile();
    printf("profile-header %.*s\n", static_cast<int>(strcspn(text, "\n")), text);
    printf("profile-has-maps %d\n", strstr(text, "\nMAPPED_LIBRARIES:\n") != nullptr);
    free(text);
    HeapProfilerStop();
    printf("running-after-stop %d\n", IsHeapProfilerRunning());
#ifndef HEAPKIT_WEAK_API
  } else if (strcmp(mode, "heap_sample") == 0) {
    // MallocExtension::GetHeapSample with TCMALLOC_SAMPLE_PARAMETER alone (no HEAPPROFILE).
    Pattern();
    std::string sample;
    MallocExtension::instance()->GetHeapSample(&sample);
    if (!WriteText(argv[2], sample)) return 3;
  } else if (strcmp(mode, "growth") == 0) {
    // MallocExtension::GetHeapGrowthStacks: every page-heap growth, with no sampling at all.
    void* big = GrowTheHeap();
    std::string stacks;
    MallocExtension::instance()->GetHeapGrowthStacks(&stacks);
    if (!WriteText(argv[2], stacks)) return 3;
    free(big);
  } else if (strcmp(mode, "fork_growth") == 0) {
    const int forks = atoi(argc > 2 ? argv[2] : "200");
    printf("fork_growth forks %d stuck %d\n", forks, ForkWhileReadingGrowth(forks));
#endif
  } else if (strcmp(mode, "fork_dlclose") == 0) {
    const int forks = atoi(argc > 2 ? argv[2] : "200");
    printf("fork_dlclose forks %d stuck %d\n", forks, ForkWhileClosingModules(forks));
  } else if (strcmp(mode, "slowpath") == 0) {
    SlowPath();
  } else if (strcmp(mode, "churn") == 0) {
    Churn(atol(argc > 2 ? argv[2] : "64"));
  } else if (strcmp(mode, "globals") == 0) {
    HoldInGlobal();
  } else if (strcmp(mode, "handler_captures") == 0) {
    HandlerCaptures();
  } else if (strcmp(mode, "retain") == 0) {
    Retain(atol(argc > 2 ? argv[2] : "64"));
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  printf("done %s\n", mode);
  return 0;
}
