// Heap-profiler benchmark workload: millions of small malloc/free pairs plus a retained set.
//
//   profiler_bench <churn_pairs> <retain_scale>
//
// Retained set (scale 1), each from its own function so profiles can be checked per function:
//   KeepSmall    400 000 x    48 B = 19.2 MB
//   KeepMedium    20 000 x  2000 B = 40.0 MB
//   KeepLarge        40 x 512 KiB  = 21.0 MB
// Churn: `churn_pairs` malloc/free pairs of 16..256 B (a few live at a time) in ChurnPairs.
// Prints the truth per function (bytes in use at exit, count, size) for accuracy.py.
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

void* volatile g_sink;
inline void Touch(void* p) {
  g_sink = p;
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void* KeepSmall() {
  void* p = malloc(48);
  Touch(p);
  return p;
}
__attribute__((noinline)) void* KeepMedium() {
  void* p = malloc(2000);
  Touch(p);
  return p;
}
__attribute__((noinline)) void* KeepLarge() {
  void* p = malloc(512 * 1024);
  Touch(p);
  return p;
}

__attribute__((noinline)) void ChurnPairs(long pairs) {
  void* ring[8] = {};
  unsigned x = 12345;
  for (long i = 0; i < pairs; ++i) {
    x = x * 1103515245u + 12345u;
    size_t size = 16 + ((x >> 16) & 15) * 16;
    int slot = static_cast<int>(i & 7);
    free(ring[slot]);
    ring[slot] = malloc(size);
    Touch(ring[slot]);
  }
  for (void* p : ring) free(p);
}

}  // namespace

int main(int argc, char** argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 2000000;
  long scale = argc > 2 ? atol(argv[2]) : 1;
  auto t0 = std::chrono::steady_clock::now();
  long n_small = 400000 * scale, n_medium = 20000 * scale, n_large = 40 * scale;
  void** keep = static_cast<void**>(
      malloc(sizeof(void*) * static_cast<size_t>(n_small + n_medium + n_large)));
  long k = 0;
  // Interleave retention with churn so the retained set builds up during the run.
  for (int round = 0; round < 10; ++round) {
    for (long i = 0; i < n_small / 10; ++i) keep[k++] = KeepSmall();
    for (long i = 0; i < n_medium / 10; ++i) keep[k++] = KeepMedium();
    for (long i = 0; i < n_large / 10; ++i) keep[k++] = KeepLarge();
    ChurnPairs(pairs / 10);
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("truth KeepSmall %ld %ld 48\n", n_small * 48, n_small);
  printf("truth KeepMedium %ld %ld 2000\n", n_medium * 2000, n_medium);
  printf("truth KeepLarge %ld %ld %d\n", n_large * 512 * 1024, n_large, 512 * 1024);
  printf("seconds %.6f\n", secs);
  return 0;
}
