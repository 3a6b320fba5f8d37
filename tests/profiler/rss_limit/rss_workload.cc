// HEAP_PROFILE_RSS_LIMIT's ground truth (run_rss_limit.py): the process's memory crosses a
// limit twice, from two functions, with a fall below 90 % of it in between.
//   grow_a(): 8 MiB blocks, each written, every 20 ms up to `top` MiB; hold 600 ms (the check
//             runs every 100 ms: one dump per crossing, not one per check);
//   all freed and returned to the OS (MallocExtension_ReleaseFreeMemory); hold 400 ms;
//   grow_b(): the same again; hold 600 ms; exit.
// Prints the CLOCK_MONOTONIC ns of each phase's start.
//   rss_workload <top MiB>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

namespace {

constexpr size_t kBlock = 8 << 20;
void* blocks[256];

long long Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void grow_a(int n) {
  for (int i = 0; i < n; ++i) {
    blocks[i] = malloc(kBlock);
    memset(blocks[i], 1, kBlock);
    usleep(20000);
  }
}
__attribute__((noinline)) void grow_b(int n) {
  for (int i = 0; i < n; ++i) {
    blocks[i] = malloc(kBlock);
    memset(blocks[i], 2, kBlock);
    usleep(20000);
  }
}

void FreeAll(int n) {
  for (int i = 0; i < n; ++i) free(blocks[i]);
  auto release =
      reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (release != nullptr) release();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = (argc > 1 ? atoi(argv[1]) : 160) / 8;
  if (n <= 0 || n > 256) return 2;
  printf("a_start %lld\n", Now());
  grow_a(n);
  usleep(600000);
  FreeAll(n);
  printf("released %lld\n", Now());
  usleep(400000);
  printf("b_start %lld\n", Now());
  grow_b(n);
  usleep(600000);
  printf("b_end %lld\n", Now());
  FreeAll(n);
  return 0;
}
