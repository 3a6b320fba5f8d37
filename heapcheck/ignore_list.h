// Objects the user asked the checker to ignore (HeapLeakChecker::IgnoreObject), kept in an
// mmap'd array under a spin lock (never the public heap). Ignored objects are roots: they and
// everything reachable from them are not leaks.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/mmap_array.h"

namespace heapkit::check {

// `object` must be an object start. Adding twice keeps one entry. False on out-of-memory.
bool IgnoreListAdd(uintptr_t object);
// False if it was not in the list.
bool IgnoreListRemove(uintptr_t object);
// HeapLeakChecker::IgnoreObject / UnIgnoreObject: the start of the heap object that ptr points
// into is added / removed; anything else (not a heap object, not ignored) gets one line.
void IgnoreHeapObject(const void* ptr);
void UnignoreHeapObject(const void* ptr);
// Copies the list, sorted, into out (world running or stopped: uses TryLock, then reads).
bool IgnoreListCopySorted(MmapArray<uintptr_t>* out);

// Disabler depth of the calling thread (allocations made while > 0 are not recorded).
int& DisablerDepth();

}  // namespace heapkit::check
