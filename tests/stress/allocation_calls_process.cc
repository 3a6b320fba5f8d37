// The process's own allocation functions (see allocation_calls.h).
#include "allocation_calls.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace heapkit::stress::calls {

const char* Name() { return "process"; }
void* Malloc(size_t size) { return malloc(size); }
void* Calloc(size_t n, size_t size) { return calloc(n, size); }
void* Realloc(void* p, size_t size) { return realloc(p, size); }
void Free(void* p) { free(p); }
void* New(size_t size) { return ::operator new(size); }
void* NewArray(size_t size) { return ::operator new[](size); }
void* NewAligned(size_t size, size_t align) {
  return ::operator new(size, std::align_val_t(align));
}
void Delete(void* p) { ::operator delete(p); }
void DeleteSized(void* p, size_t size) { ::operator delete(p, size); }
void DeleteArray(void* p) { ::operator delete[](p); }
void DeleteAligned(void* p, size_t align) { ::operator delete(p, std::align_val_t(align)); }
int PosixMemalign(void** out, size_t align, size_t size) {
  return posix_memalign(out, align, size);
}
void* AlignedAlloc(size_t align, size_t size) { return aligned_alloc(align, size); }
void* Memalign(size_t align, size_t size) { return memalign(align, size); }
void* Valloc(size_t size) { return valloc(size); }
void* Pvalloc(size_t size) { return pvalloc(size); }
size_t UsableSize(void* p) { return malloc_usable_size(p); }

}  // namespace heapkit::stress::calls
