// MallocHook (<gperftools/malloc_hook.h>) inside the allocator: the New and Delete hooks.
//
// Zero cost while none is installed: the fast paths do not look at the hooks. Installing the
// first New or Delete hook switches the allocator into hooked mode (SetMallocHooksActive):
//  - allocation: every thread's sampling counter is held below zero, so every allocation takes
//    the sampled slow path (as in exact sampling); there MallocHooked calls the New hooks and
//    keeps the sampler's own counter in ThreadCache::hooked_sample_left_, so that the
//    profiler's and checker's sampling goes on unchanged;
//  - free: the free-magic table (size_classes.h) is cleared, so that every free takes FreeSlow,
//    which calls the Delete hooks before anything else.
// Removing the last one restores both. A thread allocating or freeing at the very moment of the
// switch may finish that one call on the old path.
#pragma once

#include <atomic>
#include <cstddef>

namespace heapkit::alloc {

// True while a New or Delete hook is installed (read on the slow paths only).
extern std::atomic<bool> g_malloc_hooks_active;

// Call the New / Delete hooks (no-ops on a thread already inside a hook). No lock held.
void InvokeNewHooks(const void* ptr, size_t size);
void InvokeDeleteHooks(const void* ptr);

// Switches hooked mode (allocator.cc). Called by the hook registry under its lock.
void SetMallocHooksActive(bool active);

}  // namespace heapkit::alloc
