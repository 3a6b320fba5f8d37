// User mistakes: an invalid or double free aborts with one clear line; a malformed TCMALLOC_*
// value gives exactly one "heapkit: ignoring ..." line and the program still runs normally.
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <initializer_list>

#include "probe.h"

extern char** environ;

namespace heapkit::probe {
namespace {

int g_global_object[16];

}  // namespace

PROBE_CASE(invalid_free_aborts) {
  if (Expected() == Allocator::kTcmalloc) Skip("tcmalloc does not promise to catch these");
  int on_stack[4] = {};
  ExpectFreeDeath(
      "free(stack)", [](void* p) { free(p); }, on_stack, reinterpret_cast<uintptr_t>(on_stack));
  ExpectFreeDeath(
      "free(global)", [](void* p) { free(p); }, g_global_object,
      reinterpret_cast<uintptr_t>(g_global_object));
  // operator delete goes through the same check.
  ExpectFreeDeath(
      "delete(stack)", [](void* p) { ::operator delete(p); }, on_stack,
      reinterpret_cast<uintptr_t>(on_stack));
  // realloc of a pointer heapkit never handed out goes through the same check.
  ExpectFreeDeath(
      "realloc(stack)", [](void* p) { Escape(realloc(p, 100)); }, on_stack,
      reinterpret_cast<uintptr_t>(on_stack));
  // A pointer into the middle of a live large (page-level) object: the page map knows it is
  // not an object start.
  char* obj = static_cast<char*>(malloc(1 << 20));
  if (ExpectHeapkit()) {
    ExpectFreeDeath(
        "free(interior of large object)", [](void* p) { free(p); }, obj + 3 * 4096,
        reinterpret_cast<uintptr_t>(obj + 3 * 4096));
  }
  free(obj);
}

PROBE_CASE(double_free_aborts) {
  if (Expected() == Allocator::kTcmalloc) Skip("tcmalloc does not detect double frees");
  // Immediate double free of a small object and of a large one.
  for (size_t n : {size_t{32}, size_t{5000}, size_t{1} << 20}) {
    void* p = malloc(n);
    ExpectFreeDeath(
        n == 32     ? "double free small"
        : n == 5000 ? "double free medium"
                    : "double free large",
        [](void* q) {
          free(q);
          free(q);
        },
        p, reinterpret_cast<uintptr_t>(p));
    free(p);  // in the parent the block is still live
  }
}

namespace {

// Re-runs this binary's `trivial` case with NAME=VALUE and checks the warning and the result.
void CheckBadEnv(const char* self, const char* name, const char* value) {
  struct Arg {
    const char* self;
    const char* name;
    const char* value;
  } arg{self, name, value};
  char out[8192];
  const int status = RunInChild(
      [](void* a) {
        auto* arg = static_cast<Arg*>(a);
        setenv(arg->name, arg->value, 1);
        execl(arg->self, arg->self, "trivial", static_cast<char*>(nullptr));
        _exit(127);
      },
      &arg, out, sizeof(out), 20);
  printf("--- %s=%s: status 0x%x; output:\n%s", name, value, status, out);
  PROBE_CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s=%s: program did not run normally (status 0x%x)", name, value, status);
  PROBE_CHECK_MSG(strstr(out, "PASS [trivial]") != nullptr, "%s=%s: no PASS", name, value);
  int warnings = 0, heapkit_lines = 0;
  const char* line = out;
  bool names_var = false;
  while (*line != '\0') {
    const char* end = strchr(line, '\n');
    if (end == nullptr) end = line + strlen(line);
    if (strncmp(line, "heapkit: ", 9) == 0) ++heapkit_lines;
    if (strncmp(line, "heapkit: ignoring ", 18) == 0) {
      ++warnings;
      const char* at = strstr(line, name);
      names_var = at != nullptr && at < end;
    }
    line = *end ? end + 1 : end;
  }
  PROBE_CHECK_MSG(warnings == 1, "%s=%s: %d 'heapkit: ignoring' lines, want 1", name, value,
                  warnings);
  PROBE_CHECK_MSG(names_var, "%s=%s: warning does not name the variable", name, value);
  PROBE_CHECK_MSG(heapkit_lines == 1, "%s=%s: %d heapkit lines, want 1", name, value,
                  heapkit_lines);
}

}  // namespace

PROBE_CASE(trivial) {
  // Enough work to make the allocator initialise fully, from two threads.
  void* p[100];
  for (int i = 0; i < 100; ++i) p[i] = malloc(size_t(i) * 97 + 1);
  for (auto q : p) free(q);
  pthread_t t;
  pthread_create(
      &t, nullptr,
      [](void*) -> void* {
        free(malloc(300000));
        return nullptr;
      },
      nullptr);
  pthread_join(t, nullptr);
}

PROBE_CASE(bad_env_values) {
  if (!ExpectHeapkit()) Skip("the warning line is heapkit's");
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  PROBE_CHECK(n > 0);
  self[n] = '\0';
  CheckBadEnv(self, "TCMALLOC_SAMPLE_PARAMETER", "abc");
  CheckBadEnv(self, "TCMALLOC_SAMPLE_PARAMETER", "-1");
  CheckBadEnv(self, "TCMALLOC_RELEASE_RATE", "-5");
  CheckBadEnv(self, "TCMALLOC_RELEASE_RATE", "fast");
  CheckBadEnv(self, "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES", "lots");
  CheckBadEnv(self, "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES", "12Q");
  CheckBadEnv(self, "TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD", "x1");
  CheckBadEnv(self, "TCMALLOC_HEAP_LIMIT_MB", "-3");
  CheckBadEnv(self, "TCMALLOC_TRANSFER_NUM_OBJ", "many");
  CheckBadEnv(self, "TCMALLOC_SAMPLE_PARAMETER", "99999999999999999999999");
}

PROBE_CASE(good_env_values_silent) {
  // Valid values give no heapkit line at all.
  if (!ExpectHeapkit()) Skip("heapkit's environment");
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  PROBE_CHECK(n > 0);
  self[n] = '\0';
  struct Arg {
    const char* self;
  } arg{self};
  char out[8192];
  const int status = RunInChild(
      [](void* a) {
        setenv("TCMALLOC_RELEASE_RATE", "2.5", 1);
        setenv("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES", "67108864", 1);
        setenv("TCMALLOC_TRANSFER_NUM_OBJ", "64", 1);
        execl(static_cast<Arg*>(a)->self, static_cast<Arg*>(a)->self, "trivial",
              static_cast<char*>(nullptr));
        _exit(127);
      },
      &arg, out, sizeof(out), 20);
  PROBE_CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x: %s", status, out);
  PROBE_CHECK_MSG(strstr(out, "heapkit:") == nullptr, "unexpected output: %s", out);
}

}  // namespace heapkit::probe
