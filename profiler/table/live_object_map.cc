// The live-object map (live_object_map.h).
#include "profiler/table/live_object_map.h"

#include <sched.h>

#include "alloc/internal/arena.h"
#include "alloc/internal/dcheck.h"

namespace heapkit::prof {

void LockFlag(std::atomic<bool>* l) {
  for (int spins = 0;; ++spins) {
    if (!l->exchange(true, std::memory_order_acquire)) return;
    while (l->load(std::memory_order_relaxed)) {
      if (spins++ < 100) {
        __builtin_ia32_pause();
      } else {
        sched_yield();
      }
    }
  }
}

bool LiveObjectMap::Init() {
  void* filter = internal::ArenaAlloc(sizeof(std::atomic<uint32_t>) << kFilterBits, 4096);
  if (filter == nullptr) return false;
  filter_ = static_cast<std::atomic<uint32_t>*>(filter);  // zeroed, resident only when touched
  for (Stripe& s : stripes_) {
    void* h = internal::ArenaAlloc(kInitialStripeHeads * sizeof(Node*), 64);
    if (h == nullptr) return false;
    s.mask = kInitialStripeHeads - 1;
    s.heads.store(static_cast<Node**>(h), std::memory_order_release);
  }
  return true;
}

LiveObjectMap::Node* LiveObjectMap::NewNode(Stripe& s) {
  HEAPKIT_DCHECK(s.lock.load(std::memory_order_relaxed));  // the stripe's lock is held
  if (s.free_nodes == nullptr) {
    auto* slab = static_cast<Slab*>(internal::ArenaAlloc(sizeof(Slab), 64));
    if (slab == nullptr) return nullptr;
    slab->next = s.slabs;
    s.slabs = slab;
    for (Node& n : slab->nodes) {
      n.address = 0;
      n.next = s.free_nodes;
      s.free_nodes = &n;
    }
  }
  Node* n = s.free_nodes;
  s.free_nodes = n->next;
  return n;
}

void LiveObjectMap::Grow(Stripe& s) {
  HEAPKIT_DCHECK(s.lock.load(std::memory_order_relaxed));
  size_t old_size = s.mask + 1;
  size_t new_size = old_size * 2;
  auto* fresh = static_cast<Node**>(internal::ArenaAlloc(new_size * sizeof(Node*), 64));
  if (fresh == nullptr) return;  // keep the longer chains
  Node** old = s.heads.load(std::memory_order_relaxed);
  // Move nodes one by one; a moved node only ever points at moved nodes, so chains seen by a
  // lock-free reader stay acyclic (see header).
  for (size_t i = 0; i < old_size; ++i) {
    Node* n = old[i];
    while (n != nullptr) {
      Node* next = n->next;
      size_t idx = HashAddress(n->address) & (new_size - 1);
      n->next = fresh[idx];
      fresh[idx] = n;
      n = next;
    }
  }
  s.mask = new_size - 1;
  s.heads.store(fresh, std::memory_order_release);
  // The old array is retired, not returned (lock-free readers may still walk it).
}

LiveObjectMap::InsertResult LiveObjectMap::Insert(const void* object, Bucket* bucket, size_t size,
                                                  const ObjectBirth& birth, Bucket** old_bucket,
                                                  size_t* old_size) {
  uintptr_t a = reinterpret_cast<uintptr_t>(object);
  uint64_t h = HashAddress(a);
  Stripe& s = StripeFor(h);
  LockFlag(&s.lock);
  Node** heads = s.heads.load(std::memory_order_relaxed);
  Node** head = &heads[h & s.mask];
  for (Node* n = *head; n != nullptr; n = n->next) {
    if (n->address == a) {  // stale entry: its free was never reported
      *old_bucket = n->bucket;
      *old_size = n->size;
      n->bucket = bucket;
      n->size = size;
      n->birth = birth;
      UnlockFlag(&s.lock);
      return InsertResult::kReplaced;
    }
  }
  Node* n = NewNode(s);
  if (n == nullptr) {
    UnlockFlag(&s.lock);
    return InsertResult::kNoMemory;
  }
  n->address = a;
  n->bucket = bucket;
  n->size = size;
  n->birth = birth;
  n->next = *head;
  FilterSlot(h).fetch_add(1, std::memory_order_relaxed);
  __atomic_store_n(head, n, __ATOMIC_RELEASE);
  if (++s.count > s.mask + 1) Grow(s);
  UnlockFlag(&s.lock);
  return InsertResult::kInserted;
}

bool LiveObjectMap::Remove(const void* object, uint64_t h, Bucket** bucket, size_t* size,
                           ObjectBirth* birth) {
  uintptr_t a = reinterpret_cast<uintptr_t>(object);
  Stripe& s = StripeFor(h);
  LockFlag(&s.lock);
  Node** heads = s.heads.load(std::memory_order_relaxed);
  Node** link = &heads[h & s.mask];
  for (Node* n = *link; n != nullptr; link = &n->next, n = n->next) {
    if (n->address != a) continue;
    __atomic_store_n(link, n->next, __ATOMIC_RELEASE);
    *bucket = n->bucket;
    *size = n->size;
    *birth = n->birth;
    n->address = 0;  // free (ForEach skips it)
    n->next = s.free_nodes;
    s.free_nodes = n;
    --s.count;
    FilterSlot(h).fetch_sub(1, std::memory_order_relaxed);
    UnlockFlag(&s.lock);
    return true;
  }
  UnlockFlag(&s.lock);
  return false;
}

bool LiveObjectMap::Find(const void* object, Bucket** bucket, size_t* size) {
  uintptr_t a = reinterpret_cast<uintptr_t>(object);
  uint64_t h = HashAddress(a);
  Stripe& s = StripeFor(h);
  bool locked = TryLockFlag(&s.lock);
  Node** heads = s.heads.load(std::memory_order_acquire);
  size_t mask = locked ? s.mask : __atomic_load_n(&s.mask, __ATOMIC_RELAXED);
  bool found = false;
  int steps = 0;
  for (Node* n = __atomic_load_n(&heads[h & mask], __ATOMIC_ACQUIRE);
       n != nullptr && steps < (1 << 20);
       n = __atomic_load_n(&n->next, __ATOMIC_ACQUIRE), ++steps) {
    if (n->address == a) {
      *bucket = n->bucket;
      *size = n->size;
      found = true;
      break;
    }
  }
  if (locked) UnlockFlag(&s.lock);
  return found;
}

void LiveObjectMap::ForEach(Visitor visit, void* ctx) {
  for (Stripe& s : stripes_) {
    LockFlag(&s.lock);
    for (Slab* slab = s.slabs; slab != nullptr; slab = slab->next)
      for (Node& n : slab->nodes)
        if (n.address != 0)
          visit(ctx, reinterpret_cast<const void*>(n.address), n.bucket, n.size, n.birth);
    UnlockFlag(&s.lock);
  }
}

size_t LiveObjectMap::size() const {
  size_t total = 0;
  for (const Stripe& s : stripes_) total += __atomic_load_n(&s.count, __ATOMIC_RELAXED);
  return total;
}

void LiveObjectMap::LockAll() {
  for (Stripe& s : stripes_) LockFlag(&s.lock);
}

void LiveObjectMap::UnlockAll() {
  for (Stripe& s : stripes_) UnlockFlag(&s.lock);
}

}  // namespace heapkit::prof
