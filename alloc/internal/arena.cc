#include "alloc/internal/arena.h"

#include <atomic>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/internal/system_memory.h"

namespace heapkit::internal {
namespace {

constexpr size_t kChunkSize = size_t{1} << 20;
constexpr size_t kMinBucketShift = 4;   // 16 B
constexpr size_t kMaxBucketShift = 16;  // 64 KiB
constexpr int kNumBuckets = kMaxBucketShift - kMinBucketShift + 1;

HEAPKIT_ALWAYS_WRITTEN_DATA SpinLock arena_lock;
HEAPKIT_ALWAYS_WRITTEN_DATA uintptr_t arena_next = 0;
HEAPKIT_ALWAYS_WRITTEN_DATA uintptr_t arena_end = 0;
HEAPKIT_ALWAYS_WRITTEN_DATA std::atomic<size_t> arena_system_bytes{0};

SpinLock meta_lock;
void* meta_buckets[kNumBuckets];

int BucketFor(size_t size) {
  size_t shift = kMinBucketShift;
  while ((size_t{1} << shift) < size) ++shift;
  return static_cast<int>(shift - kMinBucketShift);
}

}  // namespace

void* ArenaAlloc(size_t size, size_t align) {
  if (align < 16) align = 16;
  size = (size + 15) & ~size_t{15};
  if (size > kChunkSize / 4) {
    void* p = SystemAlloc(size, align);
    if (p != nullptr) arena_system_bytes.fetch_add(size, std::memory_order_relaxed);
    return p;
  }
  SpinLockHolder h(&arena_lock);
  uintptr_t start = (arena_next + align - 1) & ~(align - 1);
  if (arena_next == 0 || start + size > arena_end) {
    void* chunk = SystemAlloc(kChunkSize, 4096);
    if (chunk == nullptr) return nullptr;
    arena_system_bytes.fetch_add(kChunkSize, std::memory_order_relaxed);
    arena_next = reinterpret_cast<uintptr_t>(chunk);
    arena_end = arena_next + kChunkSize;
    start = (arena_next + align - 1) & ~(align - 1);
  }
  arena_next = start + size;
  return reinterpret_cast<void*>(start);
}

void* MetaAlloc(size_t size) {
  if (size == 0) size = 1;
  if (size > (size_t{1} << kMaxBucketShift)) {
    void* p = SystemAlloc(size, 4096);
    if (p != nullptr) arena_system_bytes.fetch_add(size, std::memory_order_relaxed);
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
    SystemFree(block, (size + 4095) & ~size_t{4095});
    arena_system_bytes.fetch_sub(size, std::memory_order_relaxed);
    return;
  }
  int b = BucketFor(size);
  SpinLockHolder h(&meta_lock);
  *static_cast<void**>(block) = meta_buckets[b];
  meta_buckets[b] = block;
}

void ArenaLockAll() {
  arena_lock.Lock();
  meta_lock.Lock();
}

void ArenaUnlockAll() {
  meta_lock.Unlock();
  arena_lock.Unlock();
}

size_t ArenaSystemBytes() { return arena_system_bytes.load(std::memory_order_relaxed); }

}  // namespace heapkit::internal
