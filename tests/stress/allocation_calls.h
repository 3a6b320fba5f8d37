// The calls the stress program allocates and frees with, in two builds:
//   allocation_calls_process.cc  the process's own malloc family and operator new/delete (glibc,
//                                or heapkit when preloaded or linked): heapkit_stress
//   allocation_calls_direct.cc   heapkit's allocator through its internal API (alloc/allocator.h)
//                                in a process whose malloc stays the C library's:
//                                heapkit_stress_api, the build ThreadSanitizer runs (it must own
//                                malloc itself; see tests/sanitize/sanitize.cmake)
// Each call has the contract of the C/C++ function it is named after.
#pragma once

#include <cstddef>

namespace heapkit::stress::calls {

// One word for the run's first line: which allocator the calls reach.
const char* Name();
void* Malloc(size_t size);
void* Calloc(size_t n, size_t size);
void* Realloc(void* p, size_t size);
void Free(void* p);
void* New(size_t size);
void* NewArray(size_t size);
void* NewAligned(size_t size, size_t align);
void Delete(void* p);
void DeleteSized(void* p, size_t size);
void DeleteArray(void* p);
void DeleteAligned(void* p, size_t align);
int PosixMemalign(void** out, size_t align, size_t size);
void* AlignedAlloc(size_t align, size_t size);
void* Memalign(size_t align, size_t size);
void* Valloc(size_t size);
void* Pvalloc(size_t size);
size_t UsableSize(void* p);

}  // namespace heapkit::stress::calls
