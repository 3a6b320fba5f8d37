// Resident set size of the calling process, read from /proc/self/statm without allocating (so
// it is safe inside allocator tests and benchmarks). Returns 0 if the file cannot be read.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>

namespace heapkit::testing {

inline size_t ResidentBytes() {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* p = buf;
  while (*p != ' ' && *p != '\0') ++p;  // skip "size"; "resident" follows
  return strtoull(p, nullptr, 10) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace heapkit::testing
