// The otel_memory USDT probes and the set of samples only they track (usdt_probes.h).
#include "alloc/usdt_probes.h"

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define HEAPKIT_HAVE_SDT 1
#endif
#endif

#include "alloc/global_state.h"
#include "alloc/internal/arena.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/sampled_spans.h"
#include "alloc/sample_weight.h"

extern "C" {
// In .probes, as sdt.h's consumers expect; a consumer writes them, so never constant-folded.
__attribute__((section(".probes"), used,
               visibility("hidden"))) volatile unsigned short otel_memory_alloc_semaphore = 0;
__attribute__((section(".probes"), used,
               visibility("hidden"))) volatile unsigned short otel_memory_free_semaphore = 0;
}

namespace heapkit::alloc::usdt {

// Arguments: 8-byte unsigned (the notes say 8@reg): the address, the requested size and the
// weight, rounded to whole bytes.
__attribute__((noinline)) void FireAlloc(void* p, size_t size, uint64_t weighted_bytes) {
#ifdef HEAPKIT_HAVE_SDT
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  const uint64_t bytes = size;
  STAP_PROBE3(otel_memory, alloc, address, bytes, weighted_bytes);
#else
  (void)p, (void)size, (void)weighted_bytes;
#endif
}

__attribute__((noinline)) void FireFree(void* p) {
#ifdef HEAPKIT_HAVE_SDT
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  STAP_PROBE1(otel_memory, free, address);
#else
  (void)p;
#endif
}

namespace {

// Samples nobody else records, while the free probe has a consumer: an open-addressing set of
// object addresses (linear probing, deletion by backward shift, doubled at half load), in
// metadata memory. Sampled objects are few (one per R bytes allocated), so a spin lock serves.
// Keys are stored complemented (Key): no word here looks like a pointer to the object, so a
// scan of metadata memory (the leak checker's) never finds the object reachable through it.
internal::SpinLock set_lock;
uintptr_t* set_slots = nullptr;  // 0 = empty
size_t set_capacity = 0;         // a power of two, or 0 before the first insert
size_t set_size = 0;

uintptr_t Key(const void* p) { return ~reinterpret_cast<uintptr_t>(p); }  // never 0

size_t HomeOf(uintptr_t key, size_t capacity) {
  return static_cast<size_t>(((key >> 4) * 0x9E3779B97F4A7C15ull) >> 32) & (capacity - 1);
}

// Under set_lock. False only if metadata memory ran out.
bool GrowLocked() {
  const size_t capacity = set_capacity == 0 ? 1024 : set_capacity * 2;
  auto* slots = static_cast<uintptr_t*>(internal::MetaAlloc(capacity * sizeof(uintptr_t)));
  if (slots == nullptr) return false;
  for (size_t i = 0; i < set_capacity; ++i) {
    const uintptr_t key = set_slots[i];
    if (key == 0) continue;
    size_t j = HomeOf(key, capacity);
    while (slots[j] != 0) j = (j + 1) & (capacity - 1);
    slots[j] = key;
  }
  if (set_slots != nullptr) internal::MetaFree(set_slots, set_capacity * sizeof(uintptr_t));
  set_slots = slots;
  set_capacity = capacity;
  return true;
}

bool Insert(uintptr_t key) {
  internal::SpinLockHolder h(&set_lock);
  if ((set_size + 1) * 2 > set_capacity && !GrowLocked()) return false;
  size_t i = HomeOf(key, set_capacity);
  while (set_slots[i] != 0) {
    if (set_slots[i] == key) return true;  // cannot happen: a live object is sampled once
    i = (i + 1) & (set_capacity - 1);
  }
  set_slots[i] = key;
  ++set_size;
  probe_only_samples.store(set_size, std::memory_order_relaxed);
  return true;
}

bool Erase(uintptr_t key) {
  internal::SpinLockHolder h(&set_lock);
  if (set_size == 0) return false;
  const size_t mask = set_capacity - 1;
  size_t i = HomeOf(key, set_capacity);
  while (set_slots[i] != key) {
    if (set_slots[i] == 0) return false;
    i = (i + 1) & mask;
  }
  // Backward shift: move later members of the run into the hole when their home allows it.
  size_t hole = i;
  for (size_t j = (i + 1) & mask; set_slots[j] != 0; j = (j + 1) & mask) {
    const size_t home = HomeOf(set_slots[j], set_capacity);
    // j may move to hole iff home is not cyclically within (hole, j].
    const bool home_after_hole =
        hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (!home_after_hole) {
      set_slots[hole] = set_slots[j];
      hole = j;
    }
  }
  set_slots[hole] = 0;
  --set_size;
  probe_only_samples.store(set_size, std::memory_order_relaxed);
  return true;
}

uint64_t WeightedBytes(size_t requested, int64_t rate) {
  return static_cast<uint64_t>(
      alloc::SampleBytesEstimate(static_cast<double>(requested), static_cast<double>(rate)) + 0.5);
}

}  // namespace

constinit std::atomic<size_t> probe_only_samples{0};

void SampledAlloc(Span* span, void* p, size_t requested, bool recorded, int64_t rate) {
  if (!recorded && otel_memory_free_semaphore != 0) {
    // Its free must fire too: keep it, and route its span's frees to FreeSlow.
    if (!Insert(Key(p))) return;  // no memory: no unpaired alloc
    sampled_spans::Add(&g_state.pagemap, span, /*exact=*/false);
  }
  if (otel_memory_alloc_semaphore != 0) FireAlloc(p, requested, WeightedBytes(requested, rate));
}

bool TakeProbeOnlySampleSlow(PageMap* map, Span* span, void* p) {
  if (!Erase(Key(p))) return false;
  SampledFree(p);
  sampled_spans::Remove(map, span);
  return true;
}

// Fork handlers: the lock is taken in one and released in the other.
void LockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { set_lock.Lock(); }
void UnlockAll() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { set_lock.Unlock(); }

}  // namespace heapkit::alloc::usdt
