// The allocator instance and its inline fast paths (used by entry.cc).
//
// Synchronisation rules (the whole allocator in a dozen lines):
//  1. Thread caches are touched only by their owner thread, without locks. Other threads read
//     the lists' counters (ThreadCache::size()) and store sample_left_ with relaxed atomics;
//     max_size_ moves between caches only under the registry lock. The one shared write is the
//     free fast path's room decrement on g_empty_cache (see thread_cache.h).
//  2. CentralFreeList::lock_ (one per class) guards its spans, their object free lists, their
//     owners (thread affinity, central_free_list.h) and its transfer cache; a list's own Init
//     runs under it on its first refill and is published by a release store (Ready).
//  3. PageHeap::lock_ guards free spans, page-heap statistics and page-map writes of free spans.
//     Lock order: central -> page heap -> arena. The registry lock is never held while taking a
//     central or page-heap lock.
//  4. Page-map entries of an in-use span are written only by its owner (central list or large
//     allocation) and read lock-free; a free of a pointer the caller does not own is the only
//     reader that may see a stale entry (and it is reported as invalid when detected).
//  5. Initialisation runs once under init_lock, is malloc-free and re-entrancy-safe; it needs no
//     constructor. fork() takes every lock in the order above and releases it in both processes.
//  6. Sampling callbacks and large-allocation reports run with no allocator lock held.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "alloc/central_free_list.h"
#include "alloc/common.h"
#include "alloc/global_state.h"
#include "alloc/page_heap.h"
#include "alloc/page_map.h"
#include "alloc/sampling.h"
#include "alloc/size_classes.h"
#include "alloc/thread_cache.h"

namespace heapkit::alloc {

// ---- slow paths (allocator.cc; MallocSampled: sampling.h) ---------------------------------
// Slow paths are noexcept so that the (noexcept) entry points can reach them by tail jumps.
// Everything the fast path does not handle: init, no cache, large, alignment > 16 (align 0 or
// ≤ 16 means default). Returns nullptr with errno = ENOMEM on failure.
void* MallocSlow(size_t size, size_t align) noexcept;
// Every malloc-family failure ends here: errno = ENOMEM and nullptr, unless a failure handler
// is set (tc_set_new_mode(1): the new handler is called, as gperftools does), whose answer is
// returned instead. Off the fast paths.
void* OutOfMemory(size_t size, size_t align) noexcept;
using AllocationFailureHandler = void* (*)(size_t size, size_t align);
void SetAllocationFailureHandler(AllocationFailureHandler handler) noexcept;
void FreeSlow(void* ptr) noexcept;
[[noreturn]] void InvalidFree(const void* ptr);
// Same, declared returning so that the fast path can reach it with a tail jump.
void ReportInvalidFree(const void* ptr) noexcept;
// calloc after the overflow check: zeroes the object unless it is a large object carved from
// memory known to be zero (fresh from the OS or released), which saves touching every page.
void* Calloc(size_t bytes);
// Usable size of an owned object, 0 for nullptr or a pointer heapkit does not own.
size_t UsableSize(const void* ptr);
// True if ptr points into an in-use span (GetOwnership).
bool Owns(const void* ptr);
// The usable size malloc(size) would give (nallocx, GetEstimatedAllocatedSize).
size_t EstimatedSize(size_t size, size_t align);

// ---- fast paths -----------------------------------------------------------------------------
// Design (see README "Fast path"): one TLS load (tls_cache is never null: threads without a
// cache point at g_empty_cache, whose empty lists send both paths to their slow paths), the
// list from a per-cache direct table (malloc) or from the page-map info word used as a byte
// offset (free), pop/push with a signed room counter, one subtract-and-branch for sampling.
// Slow paths are reached by tail jumps.
// Sizes above kMaxSmallLookup (coarse class index).
void* MallocMedium(size_t size) noexcept;
// The list of size's class was empty, or no cache yet (size ≤ kMaxSize).
void* MallocRefill(size_t size) noexcept;
// The checker's layout for p, a fresh object of `size` requested bytes from a thread-cache list
// (sampling.h, checker_fit, holds it while the layout is on).
__attribute__((noinline)) void* FitForChecker(ThreadCache* tc, void* p, size_t size);
// realloc(ptr, size) keeps ptr (validated, its block holds size): accounted as a free of the old
// object and an allocation of size bytes at the same address (as gperftools' hooks and
// heaptrack see it), so a recorded object is recorded again with its new size.
__attribute__((noinline)) void* ReallocInPlace(void* ptr, size_t size) noexcept;

// A free decremented a list's room below zero (list full, or the thread has no cache).
void FreeOverflow(void* ptr) noexcept;

HEAPKIT_ALWAYS_INLINE void* MallocFromList(ThreadCache* tc, ThreadCache::FreeList& list,
                                           size_t size) {
  void* p = list.head;
#if defined(__x86_64__)
  // Load the head straight into the return register (GCC otherwise puts the list there and
  // needs one more move before `ret`).
  asm("" : "+a"(p));
#endif
  if (HEAPKIT_UNLIKELY(p == nullptr)) return MallocRefill(size);
  list.head = *static_cast<void**>(p);
  ++list.length.room;
  const int64_t left = tc->sample_left_ - static_cast<int64_t>(size);
  tc->sample_left_ = left;
  if (HEAPKIT_UNLIKELY(left < 0)) return MallocSampled(tc, p, size);
  return p;
}

HEAPKIT_ALWAYS_INLINE void* Malloc(size_t size) {
  if (HEAPKIT_LIKELY(size <= kMaxSmallLookup)) {
    ThreadCache* tc = tls_cache;
    // MallocFromList(tc, tc->SmallList(size), size), written so that every access to the list
    // uses the scaled-index address tc + off * 8 directly: the empty asm statements give each
    // use its own copy of off, so GCC does not spend an instruction materialising the list
    // pointer (a lea) to share it.
    size_t off = tc->SmallListOffset(size);
    void* p = tc->ListAtOffset(off).head;
#if defined(__x86_64__)
    asm("" : "+a"(p));  // the head straight into the return register
#endif
    if (HEAPKIT_UNLIKELY(p == nullptr)) return MallocRefill(size);
    void* next = *static_cast<void**>(p);
    asm("" : "+r"(off));
    ++tc->ListAtOffset(off).length.room;
    asm("" : "+r"(off));
    tc->ListAtOffset(off).head = next;
    const int64_t left = tc->sample_left_ - static_cast<int64_t>(size);
    tc->sample_left_ = left;
    if (HEAPKIT_UNLIKELY(left < 0)) return MallocSampled(tc, p, size);
    return p;
  }
  return MallocMedium(size);
}

// The free fast path for a pointer whose page's biased root entry is `root` (non-zero).
HEAPKIT_ALWAYS_INLINE void FreeInLeaf(void* ptr, uintptr_t root) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  const uintptr_t page = a >> kPageShift;
  // info = entry >> 52; the low 52 bits of x = a + entry are (a & kPageMask) + phase, the
  // offset in the span's object grid (see page_map.h).
  const uint64_t entry = PageMap::EntryAt(root, page);
  const uint32_t info = static_cast<uint32_t>(entry >> PageMap::kInfoShift);
  const uint64_t x = a + entry;
  // 0 unless the page holds small objects of a class and no sampled object: then the test
  // below fails and FreeSlow validates (nullptr, large, sampled, foreign pointers).
  const uint64_t magic = g_state.sizemap.FreeMagic(info);
  // a is an object start iff x * magic < magic (mod 2^64; the info bits drop out).
  if (HEAPKIT_UNLIKELY(x * magic >= magic)) return FreeSlow(ptr);
  ThreadCache* tc = tls_cache;
  ThreadCache::FreeList& list = tc->ListAt(info);
  void* head = list.head;
  // The most common double free: the object is already at the head of this thread's list.
  if (HEAPKIT_UNLIKELY(head == ptr)) return ReportInvalidFree(ptr);
  if (HEAPKIT_UNLIKELY(--list.length.room < 0)) return FreeOverflow(ptr);
  *static_cast<void**>(ptr) = head;
  list.head = ptr;
}

// A pointer outside the hot leaf (or nullptr, or before the first leaf exists).
void FreeOtherLeaf(void* ptr) noexcept;

HEAPKIT_ALWAYS_INLINE void Free(void* ptr) {
  const uintptr_t page = reinterpret_cast<uintptr_t>(ptr) >> kPageShift;
  if (HEAPKIT_UNLIKELY(!g_state.pagemap.InHotLeaf(page))) return FreeOtherLeaf(ptr);
  return FreeInLeaf(ptr, g_state.pagemap.hot_root());
}

}  // namespace heapkit::alloc
