#include "alloc/internal/system_memory.h"

#include <cerrno>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>

namespace heapkit::internal {

size_t SystemPageSize() { return 4096; }

void* SystemAlloc(size_t bytes, size_t alignment) {
  const size_t page = SystemPageSize();
  if (alignment < page) alignment = page;
  if (bytes == 0 || bytes > (size_t{1} << 46)) return nullptr;
  bytes = (bytes + page - 1) & ~(page - 1);
  const size_t extra = alignment - page;
  int saved_errno = errno;
  void* raw = mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED) {
    errno = saved_errno;
    return nullptr;
  }
  uintptr_t start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + alignment - 1) & ~(alignment - 1);
  if (aligned > start) munmap(raw, aligned - start);
  uintptr_t end = start + bytes + extra;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
  return reinterpret_cast<void*>(aligned);
}

void SystemFree(void* start, size_t bytes) {
  int saved_errno = errno;
  munmap(start, bytes);
  errno = saved_errno;
}

bool SystemRelease(void* start, size_t bytes) {
  int saved_errno = errno;
  int rc;
  do {
    rc = madvise(start, bytes, MADV_DONTNEED);
  } while (rc != 0 && errno == EAGAIN);
  errno = saved_errno;
  return rc == 0;
}

}  // namespace heapkit::internal
