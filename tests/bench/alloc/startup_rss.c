/* Peak RSS of a short C program under a preloaded allocator: prints this process's VmHWM (KiB,
 * from /proc/self/status), which counts only the memory of this program image, not that of the
 * process that started it (getrusage's ru_maxrss, as /usr/bin/time reports it, also counts the
 * pages of the parent the child was forked from: under LD_PRELOAD that is /usr/bin/time itself
 * with the allocator loaded).
 * Usage: startup_rss <N>: first N allocations of 16..1024 bytes (0: none, like /bin/true; the
 * answer is then written without stdio, so nothing calls malloc). */
#include <stdio.h>
#include <stdlib.h>

#include "peak_rss.h"

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  for (int i = 0; i < n; ++i) {
    char* p = malloc(16 + (size_t)(i * 37) % 1009);
    if (p == NULL) return 1;
    p[0] = (char)i;
    if (i % 2) free(p); /* half stay live, as in a program's start-up */
  }
  long kib = PeakRssKiB();
  if (n > 0) {
    printf("%ld\n", kib);
    return kib < 0;
  }
  return WriteKiB(kib) == 0 && kib >= 0 ? 0 : 1;
}
