// The metadata arena: malloc-free memory for the runtime's own data structures (spans, thread
// caches, and the profiler's and checker's tables).
//
// Memory comes from SystemAlloc in 1 MiB chunks and is carved with a bump pointer under a spin
// lock. With TCMALLOC_HUGE_PAGES (SetArenaHugePages) the chunks are 2 MiB, aligned and advised
// MADV_HUGEPAGE like the page heap's growth: the runtime's tables (the profiler's per-object
// slots are 8 bytes per object) then cost a fork one page-table entry per 2 MiB, not 512. Arena
// memory is never part of the user heap: live-object enumeration never reports it.
//
// APIs:
//   ArenaAlloc(size, align)   permanent allocation (never freed), zeroed.
//   MetaAlloc / MetaFree      reusable variable-size blocks (power-of-two buckets 16 B .. 64 KiB;
//                             larger blocks are mmapped and unmapped directly).
//   ArenaFreeList<T, Align>   a typed free list of fixed-size objects (caller provides locking),
//                             aligned to max(alignof(T), Align, 16).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace heapkit::internal {

// Zeroed, aligned (align is a power of two ≤ 4096), never freed. nullptr only if the OS refuses.
void* ArenaAlloc(size_t size, size_t align = 16);

// Chunks mapped from now on are whole transparent huge pages (on) or 1 MiB (off). Set by the
// allocator's initialisation; chunks mapped before keep their size.
void SetArenaHugePages(bool on);

// Thread-safe reusable blocks. MetaAlloc returns zeroed memory aligned to 16 bytes (nullptr when
// the OS refuses); MetaFree must be given the same size that was asked for.
void* MetaAlloc(size_t size);
void MetaFree(void* block, size_t size);

// fork() support: take / release every arena lock (the allocator's atfork handlers call these).
void ArenaLockAll();
void ArenaUnlockAll();

// Bytes obtained from the OS for metadata (arena chunks + direct Meta mappings).
size_t ArenaSystemBytes();

// Calls fn for every mapping counted by ArenaSystemBytes (whole chunks, touched or not), so
// that a caller can measure their residency. fn runs under an arena spin lock: it must not
// allocate from the arena (system calls are fine).
void ForEachArenaMapping(void (*fn)(void* ctx, uintptr_t start, size_t bytes), void* ctx);

// Typed free list over the arena. Not thread-safe: the owner guards it with its own lock.
// New() returns a value-initialised T (placement new) or nullptr on OOM. Align > alignof(T)
// lets an owner put objects on cache-line boundaries without changing T's own alignment.
template <class T, size_t Align = 16>
class ArenaFreeList {
  static constexpr size_t kAlign = alignof(T) > Align ? alignof(T) : (Align < 16 ? 16 : Align);

 public:
  constexpr ArenaFreeList() = default;

  T* New() {
    void* block = free_;
    if (block != nullptr) {
      free_ = *static_cast<void**>(block);
    } else {
      block = ArenaAlloc(sizeof(T) < sizeof(void*) ? sizeof(void*) : sizeof(T), kAlign);
      if (block == nullptr) return nullptr;
    }
    ++in_use_;
    return new (block) T();
  }
  void Delete(T* object) {
    object->~T();
    *reinterpret_cast<void**>(object) = free_;
    free_ = object;
    --in_use_;
  }
  size_t in_use() const { return in_use_; }

 private:
  void* free_ = nullptr;
  size_t in_use_ = 0;
};

}  // namespace heapkit::internal
