/* Peak RSS of a short C program under a preloaded allocator: prints this process's VmHWM (KiB,
 * from /proc/self/status), which counts only the memory of this program image, not that of the
 * process that started it (getrusage's ru_maxrss, as /usr/bin/time reports it, also counts the
 * pages of the parent the child was forked from: under LD_PRELOAD that is /usr/bin/time itself
 * with the allocator loaded).
 * Usage: startup_rss <N>: first N allocations of 16..1024 bytes (0: none, like /bin/true; the
 * answer is then written without stdio, so nothing calls malloc). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long PeakRssKiB(void) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  const char* line = strstr(buf, "VmHWM:");
  return line != NULL ? strtol(line + 6, NULL, 10) : -1;
}

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
  char out[32];
  int len = 0;
  char digits[24];
  int d = 0;
  unsigned long v = kib < 0 ? 0 : (unsigned long)kib;
  do digits[d++] = (char)('0' + v % 10); while ((v /= 10) != 0);
  while (d > 0) out[len++] = digits[--d];
  out[len++] = '\n';
  return write(1, out, (size_t)len) == len && kib >= 0 ? 0 : 1;
}
