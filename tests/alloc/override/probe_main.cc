// Override probe driver: `override_probe <case> [args]` runs one case; `--list` prints them.
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "probe.h"
#include "../../common/resident_bytes.h"

#ifdef HEAPKIT_PROBE_STATIC
// Direct references: linking these pulls heapkit's objects out of libheapkit_minimal.a, and the
// case checks then prove that plain malloc() also resolved to heapkit.
extern "C" {
int MallocExtension_GetNumericProperty(const char*, size_t*);
int MallocExtension_SetNumericProperty(const char*, size_t);
void MallocExtension_GetStats(char*, int);
void MallocExtension_ReleaseFreeMemory(void);
void MallocExtension_ReleaseToSystem(size_t);
int MallocExtension_GetOwnership(const void*);
size_t MallocExtension_GetAllocatedSize(const void*);
size_t MallocExtension_GetEstimatedAllocatedSize(size_t);
void MallocExtension_MarkThreadIdle(void);
void MallocExtension_MarkThreadBusy(void);
size_t nallocx(size_t, int);
}
#endif

namespace heapkit::probe {
namespace {

struct Entry {
  const char* name;
  CaseFn fn;
};
Entry g_cases[128];
int g_num_cases = 0;
const char* g_current_case = "?";

MallocExt LoadExt() {
  MallocExt e;
#ifdef HEAPKIT_PROBE_STATIC
  e.get_numeric = &MallocExtension_GetNumericProperty;
  e.set_numeric = &MallocExtension_SetNumericProperty;
  e.get_stats = &MallocExtension_GetStats;
  e.release_free_memory = &MallocExtension_ReleaseFreeMemory;
  e.release_to_system = &MallocExtension_ReleaseToSystem;
  e.get_ownership = &MallocExtension_GetOwnership;
  e.get_allocated_size = &MallocExtension_GetAllocatedSize;
  e.get_estimated_allocated_size = &MallocExtension_GetEstimatedAllocatedSize;
  e.mark_thread_idle = &MallocExtension_MarkThreadIdle;
  e.mark_thread_busy = &MallocExtension_MarkThreadBusy;
  e.nallocx = &nallocx;
#else
  auto sym = [](const char* name) { return dlsym(RTLD_DEFAULT, name); };
  e.get_numeric =
      reinterpret_cast<int (*)(const char*, size_t*)>(sym("MallocExtension_GetNumericProperty"));
  e.set_numeric =
      reinterpret_cast<int (*)(const char*, size_t)>(sym("MallocExtension_SetNumericProperty"));
  e.get_stats = reinterpret_cast<void (*)(char*, int)>(sym("MallocExtension_GetStats"));
  e.release_free_memory = reinterpret_cast<void (*)()>(sym("MallocExtension_ReleaseFreeMemory"));
  e.release_to_system = reinterpret_cast<void (*)(size_t)>(sym("MallocExtension_ReleaseToSystem"));
  e.get_ownership = reinterpret_cast<int (*)(const void*)>(sym("MallocExtension_GetOwnership"));
  e.get_allocated_size =
      reinterpret_cast<size_t (*)(const void*)>(sym("MallocExtension_GetAllocatedSize"));
  e.get_estimated_allocated_size =
      reinterpret_cast<size_t (*)(size_t)>(sym("MallocExtension_GetEstimatedAllocatedSize"));
  e.mark_thread_idle = reinterpret_cast<void (*)()>(sym("MallocExtension_MarkThreadIdle"));
  e.mark_thread_busy = reinterpret_cast<void (*)()>(sym("MallocExtension_MarkThreadBusy"));
  e.nallocx = reinterpret_cast<size_t (*)(size_t, int)>(sym("nallocx"));
#endif
  return e;
}

}  // namespace

CaseRegistrar::CaseRegistrar(const char* name, CaseFn fn) {
  if (g_num_cases < static_cast<int>(sizeof(g_cases) / sizeof(g_cases[0]))) {
    g_cases[g_num_cases++] = Entry{name, fn};
  }
}

Allocator Expected() {
  const char* e = getenv("HEAPKIT_PROBE_EXPECT");
  if (e != nullptr && strcmp(e, "glibc") == 0) return Allocator::kGlibc;
  if (e != nullptr && strcmp(e, "tcmalloc") == 0) return Allocator::kTcmalloc;
  return Allocator::kHeapkit;
}
bool ExpectHeapkit() { return Expected() == Allocator::kHeapkit; }
bool IsStaticFlavour() {
#ifdef HEAPKIT_PROBE_STATIC
  return true;
#else
  return false;
#endif
}

void Fail(const char* file, int line, const char* what, const char* fmt, ...) {
  fprintf(stdout, "FAIL [%s] %s:%d: %s\n", g_current_case, file, line, what);
  if (fmt != nullptr) {
    va_list ap;
    va_start(ap, fmt);
    fputs("  ", stdout);
    vfprintf(stdout, fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
  }
  fflush(stdout);
  fflush(stderr);
  _exit(1);
}

void Skip(const char* why) {
  fprintf(stdout, "SKIP [%s]: %s\n", g_current_case, why);
  fflush(stdout);
  _exit(kSkip);
}

const MallocExt& Ext() {
  static const MallocExt ext = LoadExt();
  return ext;
}

const MallocExt& RequireExt() {
  const MallocExt& e = Ext();
  const bool complete = e.get_numeric && e.set_numeric && e.get_stats && e.release_free_memory &&
                        e.release_to_system && e.get_ownership && e.get_allocated_size &&
                        e.get_estimated_allocated_size && e.mark_thread_idle &&
                        e.mark_thread_busy && e.nallocx;
  if (!complete) {
    if (ExpectHeapkit()) {
      Fail(__FILE__, __LINE__, "MallocExtension C API complete", "missing: %s%s%s%s%s%s%s%s%s%s%s",
           e.get_numeric ? "" : "GetNumericProperty ", e.set_numeric ? "" : "SetNumericProperty ",
           e.get_stats ? "" : "GetStats ", e.release_free_memory ? "" : "ReleaseFreeMemory ",
           e.release_to_system ? "" : "ReleaseToSystem ", e.get_ownership ? "" : "GetOwnership ",
           e.get_allocated_size ? "" : "GetAllocatedSize ",
           e.get_estimated_allocated_size ? "" : "GetEstimatedAllocatedSize ",
           e.mark_thread_idle ? "" : "MarkThreadIdle ", e.mark_thread_busy ? "" : "MarkThreadBusy ",
           e.nallocx ? "" : "nallocx");
    }
    Skip("allocator has no MallocExtension C API");
  }
  return e;
}

bool TryProperty(const char* name, size_t* value) {
  const MallocExt& e = RequireExt();
  return e.get_numeric(name, value) != 0;
}

size_t Property(const char* name) {
  size_t v = 0;
  if (!TryProperty(name, &v)) Fail(__FILE__, __LINE__, "GetNumericProperty", "unknown %s", name);
  return v;
}

size_t RssBytes() { return heapkit::testing::ResidentBytes(); }

void FillPattern(void* p, size_t n, uintptr_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = PatternByte(seed, i);
}

size_t FindPatternMismatch(const void* p, size_t n, uintptr_t seed) {
  auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != PatternByte(seed, i)) return i;
  }
  return n;
}

int RunInChild(void (*fn)(void*), void* arg, char* output, size_t cap, int timeout_s) {
  fflush(stdout);
  fflush(stderr);
  int fds[2];
  if (pipe(fds) != 0) Fail(__FILE__, __LINE__, "pipe", nullptr);
  pid_t pid = fork();
  if (pid < 0) Fail(__FILE__, __LINE__, "fork", nullptr);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    dup2(fds[1], 1);
    close(fds[1]);
    alarm(static_cast<unsigned>(timeout_s));
    fn(arg);
    fflush(stdout);
    fflush(stderr);
    _exit(0);
  }
  close(fds[1]);
  size_t used = 0;
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  int status = 0;
  bool exited = false;
  // Poll: read output, reap, give up after the timeout (+1 s grace over the child's alarm).
  for (int tick = 0; tick < (timeout_s + 1) * 100; ++tick) {
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0) {
      size_t take = static_cast<size_t>(n);
      if (used + take > cap - 1) take = cap - 1 - used;
      memcpy(output + used, buf, take);
      used += take;
    }
    if (!exited && waitpid(pid, &status, WNOHANG) == pid) exited = true;
    if (exited && n == 0) break;
    usleep(10000);
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  close(fds[0]);
  output[used] = '\0';
  return status;
}

namespace {
constexpr const char* kInvalidFree = "heapkit: attempt to free invalid pointer 0x";
}  // namespace

void ExpectFreeDeath(const char* what, void (*bad)(void*), void* arg, uintptr_t expected) {
  char out[8192];
  const int status = RunInChild(bad, arg, out, sizeof(out), 10);
  const bool died = WIFSIGNALED(status);
  printf("--- %s: %s %d; output:\n%s\n", what, died ? "signal" : "exit",
         died ? WTERMSIG(status) : WEXITSTATUS(status), out);
  if (!ExpectHeapkit()) {
    // The references only show the harness works: glibc aborts on these too.
    if (Expected() == Allocator::kGlibc) PROBE_CHECK_MSG(died, "%s: glibc did not abort", what);
    return;
  }
  PROBE_CHECK_MSG(died && WTERMSIG(status) == SIGABRT, "%s: child did not abort (status 0x%x)",
                  what, status);
  const char* hit = strstr(out, kInvalidFree);
  PROBE_CHECK_MSG(hit != nullptr, "%s: no '%s' line", what, kInvalidFree);
  PROBE_CHECK_MSG(strstr(hit + 1, kInvalidFree) == nullptr, "%s: message repeated", what);
  const uintptr_t reported = strtoull(hit + strlen(kInvalidFree), nullptr, 16);
  PROBE_CHECK_MSG(reported == expected, "%s: reported 0x%lx, freed 0x%lx", what,
                  static_cast<unsigned long>(reported), static_cast<unsigned long>(expected));
}

}  // namespace heapkit::probe

int main(int argc, char** argv) {
  using namespace heapkit::probe;
  if (argc < 2 || strcmp(argv[1], "--list") == 0) {
    for (int i = 0; i < g_num_cases; ++i) printf("%s\n", g_cases[i].name);
    return argc < 2 ? 2 : 0;
  }
  for (int i = 0; i < g_num_cases; ++i) {
    if (strcmp(argv[1], g_cases[i].name) == 0) {
      g_current_case = g_cases[i].name;
      alarm(60);  // nothing may hang; ctest has its own timeout too
      g_cases[i].fn(argc - 1, argv + 1);
      printf("PASS [%s]\n", g_current_case);
      fflush(stdout);
      return 0;
    }
  }
  fprintf(stderr, "override_probe: unknown case '%s' (try --list)\n", argv[1]);
  return 2;
}
