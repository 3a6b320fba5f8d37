// The pause of a check of a running program: a forked-snapshot check against the
// stop-the-world check, alternated in one run, on a live pointer-dense heap while 8 threads
// allocate and free (and, with `write`, also store pointers into the big heap without pause,
// so that the copy-on-write copy grows). Linked with libheapkit.a and run with HEAPCHECK=local
// (every allocation recorded, no exit check).
//
//   HEAPCHECK=local snapshot_pause <MiB live heap> <checks per kind> [write] [saturate]
//
// Per check: the pause (threads stopped -> released) in parts (the stop, the fork, the release,
// the rest), the time from the release until the last thread has left its handler (running
// again), the whole check, and for a snapshot the copy's largest private memory while it ran (its
// scratch plus the pages the program wrote meanwhile: the extra memory a check costs), sampled from
// /proc/<copy>/smaps_rollup. Also, before and after the checks: a bare stop + resume, a bare
// fork of the same process inside a stop (fork's page-table copy alone: the floor), and how
// much of the memory is in huge pages (a write into a huge page a copy shares splits it).
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "heapcheck/check_driver.h"
#include "heapcheck/check_gate.h"
#include "heapcheck/leak_check.h"
#include "heapcheck/thread_stopper.h"

namespace {

constexpr size_t kObjectBytes = 256;  // 32 words, every one a pointer to another object
constexpr size_t kWords = kObjectBytes / sizeof(void*);

void** g_objects = nullptr;  // the roots: an array of every big-heap object (a heap block)
size_t g_count = 0;
std::atomic<bool> g_stop{false};
bool g_write = false;
bool g_saturate = false;  // no pause between bursts: the threads take every core

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void BuildHeap(size_t mib) {
  g_count = (mib << 20) / kObjectBytes;
  g_objects = static_cast<void**>(malloc(g_count * sizeof(void*)));
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < g_count; ++i) g_objects[i] = malloc(kObjectBytes);
  for (size_t i = 0; i < g_count; ++i) {
    void** o = static_cast<void**>(g_objects[i]);
    for (size_t w = 0; w < kWords; ++w) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      o[w] = g_objects[x % g_count];
    }
  }
}

void* Busy(void* arg) {
  uint64_t x = 0x9e3779b97f4a7c15ull * (reinterpret_cast<uintptr_t>(arg) + 1);
  void* ring[256] = {};
  uint64_t ops = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    // Bursts of 1024 operations, 1 ms apart (about 0.8 of a core for the 8 threads here), so
    // that the copy gets a share of the CPU; `saturate`: no pause.
    if ((++ops & 1023) == 0 && !g_saturate) usleep(1000);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const size_t i = x % 256;
    free(ring[i]);
    ring[i] = malloc(16 + (x >> 20) % 512);
    if (g_write) {
      void** o = static_cast<void**>(g_objects[(x >> 8) % g_count]);
      o[(x >> 40) % kWords] = g_objects[(x >> 24) % g_count];
    }
  }
  for (void* p : ring) free(p);
  return nullptr;
}

// The copy's private memory (KiB), largest seen while the check runs.
std::atomic<bool> g_sampling{false};
std::atomic<long> g_copy_private_kib{0};

long ReadPrivateKib(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/smaps_rollup", static_cast<int>(pid));
  FILE* f = fopen(path, "r");
  if (f == nullptr) return 0;
  char line[256];
  long total = 0, v = 0;
  while (fgets(line, sizeof line, f) != nullptr) {
    if (sscanf(line, "Private_Clean: %ld kB", &v) == 1) total += v;
    if (sscanf(line, "Private_Dirty: %ld kB", &v) == 1) total += v;
  }
  fclose(f);
  return total;
}

void* Sampler(void*) {
  char path[64];
  snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(getpid()));
  while (!g_stop.load()) {
    if (g_sampling.load()) {
      FILE* f = fopen(path, "r");
      int pid = 0;
      if (f != nullptr) {
        if (fscanf(f, "%d", &pid) == 1) {
          const long kib = ReadPrivateKib(pid);
          if (kib > g_copy_private_kib.load()) g_copy_private_kib.store(kib);
        }
        fclose(f);
      }
    }
    usleep(5000);
  }
  return nullptr;
}

// A field of /proc/self/status or /proc/self/smaps_rollup, in KiB (0 if absent).
long ProcKib(const char* file, const char* field) {
  FILE* f = fopen(file, "r");
  if (f == nullptr) return 0;
  char line[256];
  long v = 0;
  const size_t n = strlen(field);
  while (fgets(line, sizeof line, f) != nullptr) {
    if (strncmp(line, field, n) == 0 && line[n] == ':') {
      v = strtol(line + n + 1, nullptr, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

// What the fork copies: the resident memory, how much of it is in transparent huge pages (one
// page-table entry per 2 MiB), and the page tables themselves.
// What the fork copies entry by entry: the resident private memory of each mapping not in
// huge pages (Rss - AnonHugePages of /proc/self/smaps; file-backed pages that were never
// written are shared, not copied, but counted here too). Prints the total and the largest few
// mappings by size (no addresses: the name or "[anon]").
void PrintSmallPageMappings() {
  FILE* f = fopen("/proc/self/smaps", "r");
  if (f == nullptr) return;
  struct Mapping {
    long small_kib;
    long size_kib;
    char name[64];
  };
  std::vector<Mapping> maps;
  char line[512];
  Mapping cur{0, 0, ""};
  long rss = 0, huge = 0, private_kib = 0;
  auto flush = [&] {
    cur.small_kib = std::min(rss - huge, private_kib);
    if (cur.size_kib > 0) maps.push_back(cur);
  };
  while (fgets(line, sizeof line, f) != nullptr) {
    unsigned long lo, hi;
    char perms[8];
    int consumed = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &lo, &hi, perms, &consumed) == 3) {
      flush();
      cur = Mapping{0, static_cast<long>((hi - lo) >> 10), ""};
      const char* name = line + consumed;
      while (*name == ' ') ++name;
      snprintf(cur.name, sizeof cur.name, "%s", *name == '\n' || *name == '\0' ? "[anon]\n" : name);
      cur.name[strcspn(cur.name, "\n")] = '\0';
      rss = huge = private_kib = 0;
      continue;
    }
    long v;
    if (sscanf(line, "Rss: %ld kB", &v) == 1) rss = v;
    if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1) huge = v;
    if (sscanf(line, "Private_Dirty: %ld kB", &v) == 1) private_kib = v;
  }
  flush();
  fclose(f);
  std::sort(maps.begin(), maps.end(),
            [](const Mapping& a, const Mapping& b) { return a.small_kib > b.small_kib; });
  long total = 0;
  for (const Mapping& m : maps) total += m.small_kib;
  printf("  private dirty memory in 4 KiB pages: %ld MiB in %zu mappings; largest:", total >> 10,
         maps.size());
  for (size_t i = 0; i < maps.size() && i < 4; ++i)
    printf("%s %ld MiB of a %ld MiB %s", i ? "," : "", maps[i].small_kib >> 10,
           maps[i].size_kib >> 10, maps[i].name);
  printf("\n");
}

// Returns the MiB in huge pages.
long PrintMemory(const char* when) {
  const long huge_mib = ProcKib("/proc/self/smaps_rollup", "AnonHugePages") >> 10;
  printf("%s: RSS %ld MiB, of it in huge pages %ld MiB; page tables %ld KiB\n", when,
         ProcKib("/proc/self/status", "VmRSS") >> 10, huge_mib,
         ProcKib("/proc/self/status", "VmPTE"));
  PrintSmallPageMappings();
  return huge_mib;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Max(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

std::vector<double> g_stop_resume;  // the bare stop + resume rounds

// Five rounds of a bare stop + resume and of a bare fork inside a stop (the copy exits at
// once): fork's page-table copy alone, the floor of a snapshot's pause. Returns the median
// fork.
double BareFork() {
  namespace hc = heapkit::check;
  std::vector<double> bare_fork;
  for (int i = 0; i < 5; ++i) {
    hc::ThreadStopper stopper;
    double t0 = Now();
    stopper.StopAll(2000);
    stopper.ResumeAll();
    g_stop_resume.push_back(Now() - t0);
    hc::ThreadStopper again;
    again.StopAll(2000);
    t0 = Now();
    const long pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) syscall(SYS_exit_group, 0);
    bare_fork.push_back(Now() - t0);
    again.ResumeAll();
    waitpid(static_cast<pid_t>(pid), nullptr, 0);
  }
  return Median(bare_fork);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: HEAPCHECK=local %s <MiB> <checks per kind> [write]\n", argv[0]);
    return 2;
  }
  const size_t mib = strtoull(argv[1], nullptr, 10);
  const int checks = atoi(argv[2]);
  // SNAPSHOT_PAUSE_STW_CHECKS: how many stop-the-world checks (default: as many as snapshots).
  const char* stw = getenv("SNAPSHOT_PAUSE_STW_CHECKS");
  const int stw_checks = stw != nullptr && *stw != '\0' ? atoi(stw) : checks;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], "write") == 0) g_write = true;
    if (strcmp(argv[i], "saturate") == 0) g_saturate = true;
  }
  namespace hc = heapkit::check;
  hc::InitCheckerFromEnvironment();
  if (!hc::CheckerActive()) {
    fprintf(stderr, "run with HEAPCHECK=local\n");
    return 2;
  }
  const double b0 = Now();
  BuildHeap(mib);
  const double build_s = Now() - b0;
  constexpr int kBusy = 8;
  pthread_t busy[kBusy], sampler;
  for (int i = 0; i < kBusy; ++i)
    pthread_create(&busy[i], nullptr, Busy, reinterpret_cast<void*>(uintptr_t(i)));
  pthread_create(&sampler, nullptr, Sampler, nullptr);
  usleep(200000);

  const double bare_before_ms = BareFork() * 1e3;
  printf("heap %zu MiB (%zu objects), %d busy threads%s%s\n", mib, g_count, kBusy,
         g_write ? " writing into the heap" : "", g_saturate ? ", saturating" : ", in bursts");
  const char* huge = getenv("TCMALLOC_HUGE_PAGES");
  const bool huge_pages = huge != nullptr && strcmp(huge, "true") == 0;
  printf("heap pages: %s; built in %.1f s\n", huge_pages ? "TCMALLOC_HUGE_PAGES=true" : "default",
         build_s);
  const long huge_before_mib = PrintMemory("before the checks");
  printf("bare stop+resume: median %.2f ms; bare fork (threads stopped): median %.2f ms\n",
         Median(g_stop_resume) * 1e3, bare_before_ms);

  hc::CheckConfig config = hc::CheckerSettings().config;
  hc::CheckResult result;
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  // [0]: stop-the-world, [1]: snapshot.
  std::vector<double> pause[2], resuming[2], stopping[2], releasing[2], other[2], fork_s, total[2];
  std::vector<double> copy_mib;
  int done[2] = {0, 0};
  while (done[1] < checks || done[0] < stw_checks) {
    // Alternated while both kinds have checks left.
    const int snapshot = done[1] < checks && (done[1] <= done[0] || done[0] >= stw_checks);
    config.fork_snapshot = snapshot;
    g_copy_private_kib = 0;
    g_sampling = snapshot;
    hc::CheckGate gate(hc::GateWait::kUntilFree);  // every check holds it (check_gate.h)
    const bool ok =
        gate.held() &&
        hc::RunLeakCheck(config, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)), regs, 6,
                         nullptr, &result);
    g_sampling = false;
    if (!ok) {
      fprintf(stderr, "check failed\n");
      return 1;
    }
    if (snapshot && !result.from_snapshot) {
      fprintf(stderr, "the snapshot check fell back to stopping the threads\n");
      return 1;
    }
    const double rest = result.seconds_stopped - result.seconds_stopping - result.seconds_forking -
                        result.seconds_releasing;
    pause[snapshot].push_back(result.seconds_stopped);
    resuming[snapshot].push_back(result.seconds_resuming);
    stopping[snapshot].push_back(result.seconds_stopping);
    releasing[snapshot].push_back(result.seconds_releasing);
    other[snapshot].push_back(rest);
    total[snapshot].push_back(result.seconds_total);
    if (snapshot) {
      fork_s.push_back(result.seconds_forking);
      copy_mib.push_back(g_copy_private_kib.load() / 1024.0);
    }
    printf(
        "check %2d %-14s pause %8.2f ms (stop %.2f, fork %.2f, release %.2f, other %.2f ms); "
        "running again %.2f ms later; total %8.1f ms; live %llu%s\n",
        done[0] + done[1], snapshot ? "snapshot" : "stop-the-world", result.seconds_stopped * 1e3,
        result.seconds_stopping * 1e3, result.seconds_forking * 1e3, result.seconds_releasing * 1e3,
        rest * 1e3, result.seconds_resuming * 1e3, result.seconds_total * 1e3,
        static_cast<unsigned long long>(result.live_objects),
        snapshot ? ("; copy private " + std::to_string(g_copy_private_kib.load() / 1024) + " MiB")
                       .c_str()
                 : "");
    fflush(stdout);
    ++done[snapshot];
  }
  const long huge_after_mib = PrintMemory("after the checks");
  const double bare_after_ms = BareFork() * 1e3;
  g_stop = true;
  for (pthread_t t : busy) pthread_join(t, nullptr);
  pthread_join(sampler, nullptr);
  // One line with every figure (medians over the checks of each kind).
  const char* tag = huge_pages ? " huge" : "";
  printf(
      "summary %zu MiB%s%s: snapshot pause median %.2f ms (max %.2f), %.2f ms per GiB; parts: "
      "stop %.2f, fork %.2f, release %.2f, other %.2f ms; running again %.2f ms after the "
      "release (max %.2f); total %.1f ms; copy private memory %.0f MiB\n",
      mib, g_write ? " write" : "", tag, Median(pause[1]) * 1e3, Max(pause[1]) * 1e3,
      Median(pause[1]) * 1e3 / (mib / 1024.0), Median(stopping[1]) * 1e3, Median(fork_s) * 1e3,
      Median(releasing[1]) * 1e3, Median(other[1]) * 1e3, Median(resuming[1]) * 1e3,
      Max(resuming[1]) * 1e3, Median(total[1]) * 1e3, Median(copy_mib));
  printf(
      "summary %zu MiB%s%s: floor: bare fork %.2f ms before the checks, %.2f ms after; "
      "bare stop+resume %.2f ms; in huge pages %ld MiB before, %ld MiB after\n",
      mib, g_write ? " write" : "", tag, bare_before_ms, bare_after_ms, Median(g_stop_resume) * 1e3,
      huge_before_mib, huge_after_mib);
  if (stw_checks > 0)
    printf(
        "summary %zu MiB%s%s: stop-the-world pause median %.1f ms (total %.1f ms); running "
        "again %.2f ms after the release\n",
        mib, g_write ? " write" : "", tag, Median(pause[0]) * 1e3, Median(total[0]) * 1e3,
        Median(resuming[0]) * 1e3);
  return 0;
}
