/* This process's peak RSS, for the start-up probes (startup_rss.c, small_rss.c): VmHWM (KiB) from
 * /proc/self/status, which counts only the memory of this program image, not that of the process
 * that started it. Written out without stdio, so that reporting it calls no malloc. */
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -1 when /proc/self/status cannot be read. */
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

/* Writes kib (0 if negative) and a newline to stdout; 0 on success. */
static int WriteKiB(long kib) {
  char out[32];
  int len = 0;
  char digits[24];
  int d = 0;
  unsigned long v = kib < 0 ? 0 : (unsigned long)kib;
  do digits[d++] = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  while (d > 0) out[len++] = digits[--d];
  out[len++] = '\n';
  return write(1, out, (size_t)len) == len ? 0 : 1;
}
