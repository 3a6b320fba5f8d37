// An allocation wrapper as C programs write them (xmalloc: check for NULL, abort), called from
// five functions, plus a helper that allocates for a single caller. pprof-tool must charge
// my_xmalloc's memory to the five callers (wrapper_check.sh), and keep OneCallerHelper.
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void* volatile g_sink;

__attribute__((noinline)) void* my_xmalloc(size_t n) {
  void* p = malloc(n);
  if (p == nullptr) {
    fprintf(stderr, "out of memory\n");
    abort();
  }
  return p;
}

// Each caller allocates its own amount through the wrapper and keeps it (memset: real use).
#define CALLER(name, count, size)                     \
  __attribute__((noinline)) void name() {             \
    for (int i = 0; i < (count); ++i) {               \
      char* p = static_cast<char*>(my_xmalloc(size)); \
      memset(p, 1, size);                             \
      g_sink = p;                                     \
    }                                                 \
  }
CALLER(ParseConfig, 100, 10000)  // 1,000,000 B
CALLER(BuildIndex, 300, 10000)   // 3,000,000 B
CALLER(LoadTable, 200, 10000)    // 2,000,000 B
CALLER(CacheResult, 50, 10000)   //   500,000 B
CALLER(LogMessage, 20, 10000)    //   200,000 B

__attribute__((noinline)) void* OneCallerHelper(size_t n) {
  char* p = static_cast<char*>(malloc(n));
  memset(p, 2, n);
  return p;
}

__attribute__((noinline)) void UsesHelper() {
  for (int i = 0; i < 40; ++i) g_sink = OneCallerHelper(10000);  // 400,000 B
}

}  // namespace

int main() {
  ParseConfig();
  BuildIndex();
  LoadTable();
  CacheResult();
  LogMessage();
  UsesHelper();
  puts("done");
  return 0;
}
