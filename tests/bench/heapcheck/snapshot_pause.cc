// The pause of a check of a running program: a forked-snapshot check against the
// stop-the-world check, alternated in one run, on a live pointer-dense heap while 8 threads
// allocate and free (and, with `write`, also store pointers into the big heap without pause,
// so that the copy-on-write copy grows). Linked with libheapkit.a and run with HEAPCHECK=local
// (every allocation recorded, no exit check).
//
//   HEAPCHECK=local snapshot_pause <MiB live heap> <checks per kind> [write] [saturate]
//
// Per check: the pause (threads stopped -> resumed), the fork inside it, the whole check, and
// for a snapshot the copy's largest private memory while it ran (its scratch plus the pages the
// program wrote meanwhile: the extra memory a check costs), sampled from
// /proc/<copy>/smaps_rollup. Also: a bare stop + resume, and a bare fork of the same process
// with nothing stopped (fork's page-table copy alone).
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
void PrintMemory(const char* when) {
  printf("%s: RSS %ld MiB, of it in huge pages %ld MiB; page tables %ld KiB\n", when,
         ProcKib("/proc/self/status", "VmRSS") >> 10,
         ProcKib("/proc/self/smaps_rollup", "AnonHugePages") >> 10,
         ProcKib("/proc/self/status", "VmPTE"));
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: HEAPCHECK=local %s <MiB> <checks per kind> [write]\n", argv[0]);
    return 2;
  }
  const size_t mib = strtoull(argv[1], nullptr, 10);
  const int checks = atoi(argv[2]);
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

  // A bare stop + resume, and a bare fork inside a stop (the copy exits at once): fork's
  // page-table copy alone.
  std::vector<double> stop_resume, bare_fork;
  for (int i = 0; i < 5; ++i) {
    hc::ThreadStopper stopper;
    double t0 = Now();
    stopper.StopAll(2000);
    stopper.ResumeAll();
    stop_resume.push_back(Now() - t0);
    hc::ThreadStopper again;
    again.StopAll(2000);
    t0 = Now();
    const long pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) syscall(SYS_exit_group, 0);
    bare_fork.push_back(Now() - t0);
    again.ResumeAll();
    waitpid(static_cast<pid_t>(pid), nullptr, 0);
  }
  // The pause's parts as a snapshot check has them: the stop, the fork, and the resume with the
  // copy alive (it waits, signals blocked, for SIGCONT, as the check's copy waits for Finish):
  // every page the resumed threads write is then a copy-on-write fault.
  std::vector<double> stop_s, fork_alive_s, resume_s;
  for (int i = 0; i < 5; ++i) {
    hc::ThreadStopper stopper;
    const double t0 = Now();
    stopper.StopAll(2000);
    const double t1 = Now();
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const long pid = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) {
      int sig;
      sigset_t go;
      sigemptyset(&go);
      sigaddset(&go, SIGCONT);
      sigwait(&go, &sig);
      syscall(SYS_exit_group, 0);
    }
    const double t2 = Now();
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    stopper.ResumeAll();
    const double t3 = Now();
    kill(static_cast<pid_t>(pid), SIGCONT);
    waitpid(static_cast<pid_t>(pid), nullptr, 0);
    stop_s.push_back(t1 - t0);
    fork_alive_s.push_back(t2 - t1);
    resume_s.push_back(t3 - t2);
  }
  printf("heap %zu MiB (%zu objects), %d busy threads%s%s\n", mib, g_count, kBusy,
         g_write ? " writing into the heap" : "", g_saturate ? ", saturating" : ", in bursts");
  const char* huge = getenv("TCMALLOC_HUGE_PAGES");
  printf("heap pages: %s; built in %.1f s\n",
         huge != nullptr && strcmp(huge, "true") == 0 ? "TCMALLOC_HUGE_PAGES=true" : "default",
         build_s);
  PrintMemory("before the checks");
  printf("bare stop+resume: median %.2f ms; bare fork (threads stopped): median %.2f ms\n",
         Median(stop_resume) * 1e3, Median(bare_fork) * 1e3);
  printf(
      "a snapshot's pause in parts (copy alive): stop median %.2f ms (max %.2f), fork %.2f ms "
      "(max %.2f), resume %.2f ms (max %.2f)\n",
      Median(stop_s) * 1e3, *std::max_element(stop_s.begin(), stop_s.end()) * 1e3,
      Median(fork_alive_s) * 1e3, *std::max_element(fork_alive_s.begin(), fork_alive_s.end()) * 1e3,
      Median(resume_s) * 1e3, *std::max_element(resume_s.begin(), resume_s.end()) * 1e3);

  hc::CheckConfig config = hc::CheckerSettings().config;
  hc::CheckResult result;
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  std::vector<double> pause[2], fork_s[2], total[2];
  std::vector<double> copy_mib;
  for (int i = 0; i < 2 * checks; ++i) {
    const int snapshot = i % 2 == 0;
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
    pause[snapshot].push_back(result.seconds_stopped);
    fork_s[snapshot].push_back(result.seconds_forking);
    total[snapshot].push_back(result.seconds_total);
    if (snapshot) copy_mib.push_back(g_copy_private_kib.load() / 1024.0);
    printf(
        "check %2d %-14s pause %8.2f ms (fork %7.2f ms)  total %8.1f ms  live %llu%s\n", i,
        snapshot ? "snapshot" : "stop-the-world", result.seconds_stopped * 1e3,
        result.seconds_forking * 1e3, result.seconds_total * 1e3,
        static_cast<unsigned long long>(result.live_objects),
        snapshot
            ? (" copy private " + std::to_string(g_copy_private_kib.load() / 1024) + " MiB").c_str()
            : "");
    fflush(stdout);
  }
  PrintMemory("after the checks");
  g_stop = true;
  for (pthread_t t : busy) pthread_join(t, nullptr);
  pthread_join(sampler, nullptr);
  printf(
      "summary %zu MiB%s%s: stop-the-world pause median %.1f ms (total %.1f ms); snapshot pause "
      "median %.2f ms, of it fork %.2f ms (total %.1f ms); %.2f ms per GiB; copy private "
      "memory median %.0f MiB\n",
      mib, g_write ? " write" : "", huge != nullptr && strcmp(huge, "true") == 0 ? " huge" : "",
      Median(pause[0]) * 1e3, Median(total[0]) * 1e3, Median(pause[1]) * 1e3,
      Median(fork_s[1]) * 1e3, Median(total[1]) * 1e3, Median(pause[1]) * 1e3 / (mib / 1024.0),
      Median(copy_mib));
  return 0;
}
