/* Small allocating programs for peak-RSS comparisons between preloaded allocators
 * (small_rss.sh). Each prints this process's VmHWM (KiB, /proc/self/status) at the end; with a
 * second argument "stop" it then stops itself (SIGSTOP) so that /proc/<pid>/smaps can be read.
 *   none     no allocation (the answer is written without stdio)
 *   n1000    1000 allocations of 16..1024 bytes, half freed (a program's start-up)
 *   simple   glibc-simple-like: 1e7 malloc/free pairs of random sizes 8..512 bytes, plus
 *            batches of 100 live blocks
 *   cfrac    cfrac-like: small bignums (16..96 bytes) allocated and freed in a working set of
 *            ~2000 live objects, 2e6 operations */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "peak_rss.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t Random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)rng_state;
}

static int StartupAllocations(void) {
  for (int i = 0; i < 1000; ++i) {
    char* p = malloc(16 + (size_t)(i * 37) % 1009);
    if (p == NULL) return 1;
    p[0] = (char)i;
    if (i % 2) free(p);
  }
  return 0;
}

static int GlibcSimple(void) {
  void* batch[100];
  for (long i = 0; i < 10000000; ++i) {
    char* p = malloc(8 + Random() % 505);
    if (p == NULL) return 1;
    p[0] = (char)i;
    free(p);
    if (i % 1000 == 0) {
      for (int k = 0; k < 100; ++k)
        if ((batch[k] = malloc(8 + Random() % 505)) == NULL) return 1;
      for (int k = 0; k < 100; ++k) free(batch[k]);
    }
  }
  return 0;
}

static int CfracLike(void) {
  enum { kLive = 2048 };
  static char* live[kLive];
  for (long i = 0; i < 2000000; ++i) {
    uint32_t r = Random();
    uint32_t slot = r % kLive;
    free(live[slot]);
    size_t size = 16 + (r >> 16) % 81;
    if ((live[slot] = malloc(size)) == NULL) return 1;
    memset(live[slot], (int)i, size);
  }
  for (int k = 0; k < kLive; ++k) free(live[k]);
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "none";
  int failed = 0;
  if (strcmp(mode, "n1000") == 0)
    failed = StartupAllocations();
  else if (strcmp(mode, "simple") == 0)
    failed = GlibcSimple();
  else if (strcmp(mode, "cfrac") == 0)
    failed = CfracLike();
  else if (strcmp(mode, "none") != 0) {
    static const char usage[] = "small_rss: mode must be none, n1000, simple or cfrac\n";
    (void)!write(2, usage, sizeof usage - 1);
    return 2;
  }
  long kib = PeakRssKiB();
  if (WriteKiB(kib) != 0) return 1;
  if (argc > 2 && strcmp(argv[2], "stop") == 0) raise(SIGSTOP);
  return failed || kib < 0;
}
