#include "profiler/table/pc_dictionary.h"

#include "alloc/internal/arena.h"
#include "alloc/internal/dcheck.h"

namespace heapkit::prof {

bool PcDictionary::Init() {
  if (heads_ != nullptr) return true;
  void* heads = internal::ArenaAlloc(sizeof(std::atomic<uint32_t>) << kHeadBits, 4096);
  if (heads == nullptr) return false;
  heads_ = static_cast<std::atomic<uint32_t>*>(heads);  // zeroed by the arena: empty chains
  return true;
}

uint32_t PcDictionary::Find(uint32_t first, uintptr_t pc) const {
  for (uint32_t index = first; index != 0;) {
    const Entry* e = EntryAt(index);
    if (e == nullptr) return kNone;
    if (e->pc == pc) return index;
    index = e->next;
  }
  return kNone;
}

uint32_t PcDictionary::IndexOf(uintptr_t pc) {
  std::atomic<uint32_t>& head = heads_[HeadIndex(pc)];
  uint32_t found = Find(head.load(std::memory_order_acquire), pc);
  if (found != kNone) return found;
  internal::SpinLockHolder hold(&lock_);
  const uint32_t first = head.load(std::memory_order_acquire);
  found = Find(first, pc);
  if (found != kNone) return found;
  const uint32_t index = count_ + 1;
  if (index >= kChunks * kChunkSize) return kNone;
  std::atomic<Entry*>& slot = chunks_[index >> kChunkBits];
  Entry* chunk = slot.load(std::memory_order_relaxed);
  if (chunk == nullptr) {  // only under the lock: no race
    chunk = static_cast<Entry*>(internal::ArenaAlloc(sizeof(Entry) * kChunkSize, 4096));
    if (chunk == nullptr) return kNone;
    slot.store(chunk, std::memory_order_release);
  }
  Entry& e = chunk[index & (kChunkSize - 1)];
  e.pc = pc;
  e.next = first;
  count_ = index;
  HEAPKIT_DCHECK(lock_.IsHeld());                // chains change under the lock
  head.store(index, std::memory_order_release);  // publishes the entry
  return index;
}

}  // namespace heapkit::prof
