#include "alloc/internal/system_memory.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc/internal/runtime_mappings.h"

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
  NoteRuntimeMapping(aligned, bytes);
  return reinterpret_cast<void*>(aligned);
}

void SystemFree(void* start, size_t bytes) {
  int saved_errno = errno;
  // Forgotten first: a check that runs in between scans these pages once as the program's
  // (conservative), never the program's next mapping at this address as the runtime's.
  ForgetRuntimeMapping(reinterpret_cast<uintptr_t>(start), bytes);
  munmap(start, bytes);
  errno = saved_errno;
}

void* SystemResize(void* start, size_t old_bytes, size_t new_bytes) {
  const size_t page = SystemPageSize();
  old_bytes = (old_bytes + page - 1) & ~(page - 1);
  new_bytes = (new_bytes + page - 1) & ~(page - 1);
  if (new_bytes == 0 || new_bytes > (size_t{1} << 46)) return nullptr;
  int saved_errno = errno;
  // The destination is reserved and noted before the contents move into it.
  void* target =
      mmap(nullptr, new_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (target == MAP_FAILED) {
    errno = saved_errno;
    return nullptr;
  }
  NoteRuntimeMapping(reinterpret_cast<uintptr_t>(target), new_bytes);
  void* moved = mremap(start, old_bytes, new_bytes, MREMAP_MAYMOVE | MREMAP_FIXED, target);
  if (moved == MAP_FAILED) {
    ForgetRuntimeMapping(reinterpret_cast<uintptr_t>(target), new_bytes);
    munmap(target, new_bytes);
    errno = saved_errno;
    return nullptr;
  }
  ForgetRuntimeMapping(reinterpret_cast<uintptr_t>(start), old_bytes);
  errno = saved_errno;
  return moved;
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

bool SystemAdviseHugePages(void* start, size_t bytes) {
  int saved_errno = errno;
  const int rc = madvise(start, bytes, MADV_HUGEPAGE);
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
