#include "alloc/internal/system_memory.h"

#include <atomic>
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
  if (end > aligned + bytes)
    munmap(reinterpret_cast<void*>(aligned + bytes), end - aligned - bytes);
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

void SystemPrefault(void* start, size_t bytes) {
  static std::atomic<bool> populate_unsupported{false};
  if (!populate_unsupported.load(std::memory_order_relaxed)) {
    int saved_errno = errno;
    const int rc = madvise(start, bytes, MADV_POPULATE_WRITE);
    const int err = errno;
    errno = saved_errno;
    if (rc == 0) return;
    // Older kernels reject the advice; anything else (ENOMEM, EFAULT...) leaves the pages to
    // be faulted in on first use, as they would be without this call.
    if (err != EINVAL) return;
    populate_unsupported.store(true, std::memory_order_relaxed);
  }
  const size_t page = SystemPageSize();
  for (size_t off = 0; off < bytes; off += page) {
    __atomic_fetch_add(static_cast<char*>(start) + off, 0, __ATOMIC_RELAXED);  // a write
  }
}

}  // namespace heapkit::internal
