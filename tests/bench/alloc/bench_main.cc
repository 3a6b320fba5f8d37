// alloc_bench driver: `alloc_bench <workload> [args]`; `alloc_bench --list` for usage.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "bench.h"
#include "../../common/resident_bytes.h"

namespace heapkit::bench {
namespace {
struct Entry {
  const char* name;
  const char* usage;
  Workload fn;
};
Entry g_workloads[64];
int g_num = 0;
}  // namespace

WorkloadRegistrar::WorkloadRegistrar(const char* name, const char* usage, Workload fn) {
  if (g_num < 64) g_workloads[g_num++] = Entry{name, usage, fn};
}

size_t RssBytes() { return heapkit::testing::ResidentBytes(); }

double CpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void Report(const char* metric, double value) {
  printf("%s %.6g\n", metric, value);
  fflush(stdout);
}

bool AllocatorProperty(const char* name, size_t* value) {
  using Fn = int (*)(const char*, size_t*);
  static Fn fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty"));
  return fn != nullptr && fn(name, value) != 0;
}

long ArgLong(int argc, char** argv, int i, long def) {
  return i < argc ? strtol(argv[i], nullptr, 0) : def;
}

}  // namespace heapkit::bench

int main(int argc, char** argv) {
  using namespace heapkit::bench;
  if (argc < 2 || strcmp(argv[1], "--list") == 0) {
    for (int i = 0; i < g_num; ++i) printf("%-16s %s\n", g_workloads[i].name, g_workloads[i].usage);
    return argc < 2 ? 2 : 0;
  }
  for (int i = 0; i < g_num; ++i) {
    if (strcmp(argv[1], g_workloads[i].name) != 0) continue;
    const int rc = g_workloads[i].fn(argc - 1, argv + 1);
    // Peak resident set of the whole run (all rows print it; the memory columns of the
    // multi-threaded rows read it).
    rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    Report("max_rss_mib", double(ru.ru_maxrss) / 1024.0);
    // heapkit's central-list counters (totals of the run), after the workload's own lines.
    static const char* const kCounters[] = {"central_lock_acquisitions", "central_lock_contended",
                                            "central_foreign_batches"};
    for (const char* name : kCounters) {
      char property[64];
      snprintf(property, sizeof property, "heapkit.%s", name);
      size_t value = 0;
      if (AllocatorProperty(property, &value)) Report(name, double(value));
    }
    return rc;
  }
  fprintf(stderr, "alloc_bench: unknown workload '%s' (try --list)\n", argv[1]);
  return 2;
}
