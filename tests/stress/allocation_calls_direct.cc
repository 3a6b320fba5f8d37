// heapkit's allocator through its internal API, in a process that keeps the C library's malloc
// (see allocation_calls.h). The C/C++ entry points of alloc/entry.cc are not linked: the argument
// checks they add (overflow, alignment validity) are not what this program exercises, so each
// call below goes to the allocator function that entry point reaches for valid arguments.
#include "allocation_calls.h"

#include <cstring>

#include "alloc/allocator.h"

namespace heapkit::stress::calls {
namespace {

namespace ha = heapkit::alloc;

constexpr size_t kPage = 4096;

void* Aligned(size_t align, size_t size) {
  if (align <= 16) return ha::Malloc(size < align ? align : size);
  return ha::MallocSlow(size, align);
}

}  // namespace

const char* Name() { return "heapkit-api"; }
void* Malloc(size_t size) { return ha::Malloc(size); }
void* Calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) return nullptr;
  return ha::Calloc(total);
}
// realloc's contract: keeps min(old, new) bytes; nullptr is malloc, 0 bytes frees.
void* Realloc(void* p, size_t size) {
  if (p == nullptr) return ha::Malloc(size);
  if (size == 0) {
    ha::Free(p);
    return nullptr;
  }
  const size_t old = ha::UsableSize(p);
  void* q = ha::Malloc(size);
  if (q == nullptr) return nullptr;
  memcpy(q, p, size < old ? size : old);
  ha::Free(p);
  return q;
}
void Free(void* p) { ha::Free(p); }
void* New(size_t size) { return ha::Malloc(size); }
void* NewArray(size_t size) { return ha::Malloc(size); }
void* NewAligned(size_t size, size_t align) { return Aligned(align, size); }
void Delete(void* p) { ha::Free(p); }
void DeleteSized(void* p, size_t) { ha::Free(p); }
void DeleteArray(void* p) { ha::Free(p); }
void DeleteAligned(void* p, size_t) { ha::Free(p); }
int PosixMemalign(void** out, size_t align, size_t size) {
  void* p = Aligned(align, size);
  if (p == nullptr) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void* AlignedAlloc(size_t align, size_t size) { return Aligned(align, size); }
void* Memalign(size_t align, size_t size) { return Aligned(align, size); }
void* Valloc(size_t size) { return Aligned(kPage, size); }
void* Pvalloc(size_t size) {
  return Aligned(kPage, size == 0 ? kPage : (size + kPage - 1) & ~(kPage - 1));
}
size_t UsableSize(void* p) { return ha::UsableSize(p); }

}  // namespace heapkit::stress::calls
