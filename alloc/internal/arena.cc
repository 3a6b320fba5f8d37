#include "alloc/internal/arena.h"

#include <atomic>
#include <cstdint>

#include "alloc/internal/dcheck.h"
#include "alloc/internal/sections.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::internal {
namespace {

constexpr size_t kChunkSize = size_t{1} << 20;
// With huge pages (SetArenaHugePages): whole, aligned transparent huge pages, one page-table
// entry each for a fork to copy.
constexpr size_t kHugeChunkSize = kSystemHugePageSize;
static_assert(kHugeChunkSize >= kChunkSize);
HEAPKIT_ALWAYS_WRITTEN_DATA std::atomic<bool> arena_huge_pages{false};
constexpr size_t kMinBucketShift = 4;   // 16 B
constexpr size_t kMaxBucketShift = 16;  // 64 KiB
constexpr int kNumBuckets = kMaxBucketShift - kMinBucketShift + 1;

// The current chunk and how much of it is used: no end or next pointer, which would equal the
// start of whatever the system maps right after the chunk (a user's large block) and, in a
// statically linked program, whose globals the leak checker scans, keep that block alive.
HEAPKIT_ALWAYS_WRITTEN_DATA SpinLock arena_lock;
HEAPKIT_ALWAYS_WRITTEN_DATA uintptr_t arena_chunk HEAPKIT_GUARDED_BY(arena_lock) = 0;
HEAPKIT_ALWAYS_WRITTEN_DATA size_t arena_used HEAPKIT_GUARDED_BY(arena_lock) = 0;
HEAPKIT_ALWAYS_WRITTEN_DATA std::atomic<size_t> arena_system_bytes{0};

// Every mapping of the arena, so that statistics can tell its resident pages from reserved ones
// (ForEachArenaMapping). Each chunk begins with the address of the chunk before it (a pointer
// into the arena, never into the user heap) and its size. Direct mappings (large ArenaAlloc and
// MetaAlloc blocks) are listed in nodes carved from the arena, guarded by mapping_lock; a node
// whose block was unmapped goes on the spare list.
constexpr size_t kChunkHeader = 16;
struct DirectMapping {
  uintptr_t start;
  size_t bytes;
  DirectMapping* next;
};
SpinLock mapping_lock;
DirectMapping* direct_mappings HEAPKIT_GUARDED_BY(mapping_lock) = nullptr;
DirectMapping* spare_mapping_nodes HEAPKIT_GUARDED_BY(mapping_lock) = nullptr;

void NoteDirectMapping(void* block, size_t bytes) {
  DirectMapping* node;
  {
    SpinLockHolder h(&mapping_lock);
    node = spare_mapping_nodes;
    if (node != nullptr) spare_mapping_nodes = node->next;
  }
  if (node == nullptr) node = static_cast<DirectMapping*>(ArenaAlloc(sizeof(DirectMapping)));
  if (node == nullptr) return;  // out of memory: the mapping is counted, just not measured
  node->start = reinterpret_cast<uintptr_t>(block);
  node->bytes = bytes;
  SpinLockHolder h(&mapping_lock);
  node->next = direct_mappings;
  direct_mappings = node;
}

void ForgetDirectMapping(void* block) {
  SpinLockHolder h(&mapping_lock);
  for (DirectMapping** link = &direct_mappings; *link != nullptr; link = &(*link)->next) {
    DirectMapping* node = *link;
    if (node->start != reinterpret_cast<uintptr_t>(block)) continue;
    *link = node->next;
    node->next = spare_mapping_nodes;
    spare_mapping_nodes = node;
    return;
  }
}

SpinLock meta_lock;
void* meta_buckets[kNumBuckets] HEAPKIT_GUARDED_BY(meta_lock);

int BucketFor(size_t size) {
  size_t shift = kMinBucketShift;
  while ((size_t{1} << shift) < size) ++shift;
  return static_cast<int>(shift - kMinBucketShift);
}

// A chunk's size, from its header.
size_t ChunkBytes(uintptr_t chunk) { return reinterpret_cast<const uintptr_t*>(chunk)[1]; }

}  // namespace

void SetArenaHugePages(bool on) { arena_huge_pages.store(on, std::memory_order_relaxed); }

void* ArenaAlloc(size_t size, size_t align) {
  if (align < 16) align = 16;
  size = (size + 15) & ~size_t{15};
  if (size > kChunkSize / 4) {
    void* p = SystemAlloc(size, align);
    if (p != nullptr) {
      arena_system_bytes.fetch_add(size, std::memory_order_relaxed);
      NoteDirectMapping(p, size);
    }
    return p;
  }
  HEAPKIT_DCHECK(align <= 4096);  // offsets in a page-aligned chunk
  SpinLockHolder h(&arena_lock);
  size_t offset = (arena_used + align - 1) & ~(align - 1);  // chunks are page-aligned
  if (arena_chunk == 0 || offset + size > ChunkBytes(arena_chunk)) {
    const bool huge = arena_huge_pages.load(std::memory_order_relaxed);
    const size_t bytes = huge ? kHugeChunkSize : kChunkSize;
    void* chunk = SystemAlloc(bytes, huge ? kHugeChunkSize : 4096);
    if (chunk == nullptr) return nullptr;
    if (huge) SystemAdviseHugePages(chunk, bytes);
    arena_system_bytes.fetch_add(bytes, std::memory_order_relaxed);
    auto* header = static_cast<uintptr_t*>(chunk);
    header[0] = arena_chunk;  // the chain ForEachArenaMapping walks
    header[1] = bytes;
    arena_chunk = reinterpret_cast<uintptr_t>(chunk);
    offset = (kChunkHeader + align - 1) & ~(align - 1);
  }
  arena_used = offset + size;
  return reinterpret_cast<void*>(arena_chunk + offset);
}

void* MetaAlloc(size_t size) {
  if (size == 0) size = 1;
  if (size > (size_t{1} << kMaxBucketShift)) {
    void* p = SystemAlloc(size, 4096);
    if (p != nullptr) {
      arena_system_bytes.fetch_add(size, std::memory_order_relaxed);
      NoteDirectMapping(p, size);
    }
    return p;
  }
  int b = BucketFor(size);
  size_t bucket_size = size_t{1} << (b + kMinBucketShift);
  {
    SpinLockHolder h(&meta_lock);
    void* block = meta_buckets[b];
    if (block != nullptr) {
      meta_buckets[b] = *static_cast<void**>(block);
      memset(block, 0, bucket_size);
      return block;
    }
  }
  return ArenaAlloc(bucket_size, bucket_size < 4096 ? 16 : 4096);
}

void MetaFree(void* block, size_t size) {
  if (block == nullptr) return;
  if (size == 0) size = 1;
  if (size > (size_t{1} << kMaxBucketShift)) {
    ForgetDirectMapping(block);
    SystemFree(block, (size + 4095) & ~size_t{4095});
    arena_system_bytes.fetch_sub(size, std::memory_order_relaxed);
    return;
  }
  int b = BucketFor(size);
  SpinLockHolder h(&meta_lock);
  *static_cast<void**>(block) = meta_buckets[b];
  meta_buckets[b] = block;
}

// Held across fork (analysis off: taken and released by two handlers).
void ArenaLockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  arena_lock.Lock();
  meta_lock.Lock();
  mapping_lock.Lock();
}

void ArenaUnlockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  mapping_lock.Unlock();
  meta_lock.Unlock();
  arena_lock.Unlock();
}

void ForEachArenaMapping(void (*fn)(void* ctx, uintptr_t start, size_t bytes), void* ctx) {
  uintptr_t chunk;
  {
    SpinLockHolder h(&arena_lock);
    chunk = arena_chunk;
  }
  // Chunk headers never change once written, so the chain is walked without the lock.
  for (; chunk != 0; chunk = *reinterpret_cast<const uintptr_t*>(chunk))
    fn(ctx, chunk, ChunkBytes(chunk));
  SpinLockHolder h(&mapping_lock);
  for (const DirectMapping* node = direct_mappings; node != nullptr; node = node->next) {
    fn(ctx, node->start, node->bytes);
  }
}

size_t ArenaSystemBytes() { return arena_system_bytes.load(std::memory_order_relaxed); }

}  // namespace heapkit::internal
