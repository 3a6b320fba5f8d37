// Slow paths, initialisation, thread-cache lifecycle and fork handling (sampling and the
// observer registry: sampling.cc). The synchronisation rules are at the top of allocator.h.
#include "alloc/allocator.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

// The shared libraries' DT_FINI (-Wl,-fini in CMakeLists.txt) instead of crti's _fini: ours
// has nothing to do (destructors run from .fini_array) and lies at the very end of the text,
// so calling it at exit would map the last fault-around window of the text in every process.
extern "C" __attribute__((visibility("hidden"), used)) HEAPKIT_ALWAYS_RUN_CODE void
heapkit_library_fini() {}

#include "alloc/internal/arena.h"
#include "alloc/internal/alloc_settings.h"
#include "alloc/internal/env.h"
#include "alloc/internal/fork_handlers.h"
#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/object_slots.h"
#include "alloc/observer_hooks.h"
#include "alloc/sampled_spans.h"
#include "alloc/usdt_probes.h"
#include "alloc/sampling.h"
#include "alloc/sampling_period.h"
#include "alloc/stats.h"

namespace heapkit::alloc {

constinit GlobalState g_state;
constinit std::atomic<bool> g_initialized{false};
__thread ThreadCache* tls_cache __attribute__((tls_model("initial-exec"))) = &g_empty_cache;

namespace {

enum CacheState : uint8_t { kNoCache = 0, kCreating = 1, kActive = 2, kExited = 3 };
__thread uint8_t tls_state __attribute__((tls_model("initial-exec"))) = kNoCache;

constinit internal::SpinLock init_lock;
constinit std::atomic<bool> atfork_registered{false};
constinit std::atomic<bool> key_created{false};
constinit internal::SpinLock key_lock;
pthread_key_t cache_key;

constinit std::atomic<int64_t> large_alloc_threshold{int64_t{1} << 30};

uint64_t SeedForThread(const void* cache) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return reinterpret_cast<uintptr_t>(cache) * 0x9e3779b97f4a7c15ULL ^
         static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(ts.tv_sec) << 32);
}

void DestroyThreadCache(void* arg) {
  ThreadCache* tc = static_cast<ThreadCache*>(arg);
  if (tc == nullptr) return;
  tls_cache = &g_empty_cache;
  tls_state = kExited;
  g_state.registry.Destroy(tc);
}

// Every allocator lock, held from PreFork to PostFork (analysis off: across two handlers).
void PreFork() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  if (!g_initialized.load(std::memory_order_acquire)) return;
  LockMallocHookRegistry();
  sampling_period_lock.Lock();
  init_lock.Lock();
  for (int c = 1; c < g_state.sizemap.num_classes(); ++c) g_state.central[c].lock_.Lock();
  g_state.pageheap.lock_.Lock();
  g_state.registry.lock_.Lock();
  usdt::LockAll();  // before the arena's: its set grows from metadata memory under its lock
  internal::ArenaLockAll();
  sampled_spans::LockAll();
}

void PostFork() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  if (!g_initialized.load(std::memory_order_acquire)) return;
  sampled_spans::UnlockAll();
  internal::ArenaUnlockAll();
  usdt::UnlockAll();
  g_state.registry.lock_.Unlock();
  g_state.pageheap.lock_.Unlock();
  for (int c = g_state.sizemap.num_classes() - 1; c >= 1; --c) g_state.central[c].lock_.Unlock();
  init_lock.Unlock();
  sampling_period_lock.Unlock();
  UnlockMallocHookRegistry();
}

// In the child only the forking thread lives: the other caches' spans and batches belong to
// nobody (thread affinity, central_free_list.h), so the child reuses them.
void PostForkChild() {
  PostFork();
  if (!g_initialized.load(std::memory_order_acquire)) return;
  g_state.registry.OrphanAllBut(tls_cache);
}

void RegisterAtFork() {
  bool expected = false;
  if (atfork_registered.compare_exchange_strong(expected, true)) {
    internal::RegisterForkHandlers(PreFork, PostFork, PostForkChild);
  }
}

// Returns the calling thread's cache, creating it if the thread may have one.
ThreadCache* GetCache() {
  ThreadCache* tc = tls_cache;
  if (HEAPKIT_LIKELY(tc != &g_empty_cache)) return tc;
  if (tls_state != kNoCache) return nullptr;  // being created (re-entry) or thread exiting
  tls_state = kCreating;
  if (!key_created.load(std::memory_order_acquire)) {
    internal::SpinLockHolder h(&key_lock);
    if (!key_created.load(std::memory_order_relaxed)) {
      if (pthread_key_create(&cache_key, DestroyThreadCache) != 0) {
        internal::Fatal("pthread_key_create failed");
      }
      key_created.store(true, std::memory_order_release);
    }
  }
  tc = g_state.registry.Create(0);
  if (tc == nullptr) {
    tls_state = kNoCache;
    return nullptr;
  }
  tc->sampler_.Seed(SeedForThread(tc));
  ResetSampleCounter(tc);
  // Hooked mode switched on before this cache was in the registry's sight: hold the counter
  // below zero here (the fence orders the store above before the flag's load, against
  // SetMallocHooksActive's flag store before its registry walk).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed))) {
    tc->sample_epoch_ |= kHookedEpochBit;
    tc->hooked_sample_left_ = tc->sample_left_;
    tc->sample_left_ = -1;
  }
  pthread_setspecific(cache_key, tc);  // may allocate: re-entry sees kCreating
  tls_cache = tc;
  tls_state = kActive;
  return tc;
}

void ReportLargeAlloc(size_t size, void* p) {
  int64_t threshold = large_alloc_threshold.load(std::memory_order_relaxed);
  if (threshold <= 0 || static_cast<int64_t>(size) < threshold) return;
  int64_t next = threshold;
  while (next <= static_cast<int64_t>(size) && next < INT64_MAX / 2) next *= 2;
  if (!large_alloc_threshold.compare_exchange_strong(threshold, next)) return;
  char line[2048];
  size_t len =
      internal::FormatTo(line, sizeof(line), "tcmalloc: large alloc %zu bytes == %p @ ", size, p);
  StackCaptureHook hook = stack_hook.load(std::memory_order_acquire);
  if (hook != nullptr) {
    void* pcs[64];
    int n = hook(pcs, 64, 2);
    for (int i = 0; i < n && len + 24 < sizeof(line); ++i) {
      len += internal::FormatTo(line + len, sizeof(line) - len, " %p", pcs[i]);
    }
  }
  if (len >= sizeof(line) - 1) len = sizeof(line) - 2;
  line[len++] = '\n';
  internal::WriteAll(2, line, len);
}

// Allocates one object of class cls without the sampling counter.
void* AllocateSmall(ThreadCache* tc, uint32_t cls) {
  if (tc != nullptr) return tc->Allocate(cls);
  void* head;
  void* tail;
  if (g_state.central[cls].Ready(cls).RemoveRange(&head, &tail, 1) == 0) return nullptr;
  return head;
}

void* AllocateLarge(size_t size, size_t align) {
  // An aligned request reserves size + align; beyond kMaxAllocSize it fails like an oversized
  // malloc (posix_memalign(&p, 1 << 46, 16): ENOMEM, as in glibc, instead of 64 TiB reserved).
  if (size > kMaxAllocSize || align > kMaxAllocSize - size) return nullptr;
  Length pages = PagesFor(size);
  Span* span = align > kPageSize ? g_state.pageheap.NewAligned(pages, align >> kPageShift)
                                 : g_state.pageheap.New(pages);
  if (span == nullptr) return nullptr;
  void* p = reinterpret_cast<void*>(span->StartAddress());
  ReportLargeAlloc(span->Bytes(), p);
  return p;
}

// Smallest class ≥ size whose objects are aligned to `align` (≤ kPageSize); 0 if none.
uint32_t AlignedClass(size_t size, size_t align) {
  if (size < align) size = align;
  if (size > kMaxSize) return 0;
  uint32_t cls = g_state.sizemap.SizeClass(size);
  if (align <= 8) return cls;
  for (; static_cast<int>(cls) < g_state.sizemap.num_classes(); ++cls) {
    if (g_state.sizemap.ClassSize(cls) % align == 0) return cls;
  }
  return 0;
}

}  // namespace

// The checker's layout for p, a fresh object of `size` requested bytes from a thread-cache
// list (so its alignment is at most 16, which every class above 8 bytes has): if its class
// leaves no byte past size, p goes back to its list and an object of the next fitting class
// (or a large block) is taken instead; then its requested bytes are cleared (the free-list link
// in its first word, and whatever an earlier object left: stale pointers).
// Large blocks: MallocSlow reserves the byte when it picks the page count.
__attribute__((noinline)) void* FitForChecker(ThreadCache* tc, void* p, size_t size) {
  const uint32_t cls = PageMap::ClassOf(g_state.pagemap.Info(reinterpret_cast<uintptr_t>(p)));
  if (cls == 0) return p;
  if (g_state.sizemap.ClassSize(cls) <= size) {
    void* q = size + 1 <= kMaxSize ? AllocateSmall(tc, g_state.sizemap.SizeClass(size + 1))
                                   : AllocateLarge(size + 1, 0);
    if (q == nullptr) return p;  // out of memory: keep the tight block
    tc->Deallocate(p, cls);
    if (size + 1 > kMaxSize) return q;
    p = q;
  }
  memset(p, 0, size < sizeof(void*) ? sizeof(void*) : size);
  return p;
}

// observer_hooks.h: the layout is the allocator's; sampling.cc applies it in MallocSampled.
void SetCheckerObjectLayout(bool on) {
  checker_fit.store(on ? &FitForChecker : nullptr, std::memory_order_relaxed);
}

namespace {

// A free reached the slow path in a span whose page-map sampled bit is set. A record in the
// object's side slot (exact mode) is taken here, with the span in hand; the observer hears
// only of other frees (object_slots.h, TakeObjectSlot). Samples that only the otel_memory
// probes track (usdt_probes.h) are looked for last: neither a slot nor the observer holds them.
// index: ptr's object index in the span (SizeMap::ObjectIndexOf; 0 for a large span).
inline __attribute__((always_inline)) void NotifyMaybeSampledFree(Span* span, void* ptr,
                                                                  uint64_t index) {
  const SampleObserver* obs = observer.load(std::memory_order_acquire);
  if (obs == nullptr) {
    if (usdt::TakeProbeOnlySample(&g_state.pagemap, span, ptr)) return;
    sampled_spans::ReleaseIfUnused(&g_state.pagemap, span);
    return;
  }
  // The slot's value (0: none); TakeSlot and TakeObjectSlot also call the slot-free hook.
  void* array = nullptr;
  if (const uint32_t cls = span->sizeclass_;
      cls != 0 && index < g_state.sizemap.ObjectsPerSpan(cls))
    array = OwnedCachedArray(span);
  // The frame of the function this is inlined into (FreeSlow, ReallocInPlace): the hook's origin.
  const auto* frame = static_cast<const uintptr_t*>(__builtin_frame_address(0));
  if ((array != nullptr ? TakeSlot(SlotOfArray(array, index), ptr, array, frame)
                        : TakeObjectSlot(span, ptr, index, frame)) != 0) {
    usdt::SampledFree(ptr);
    sampled_spans::Remove(&g_state.pagemap, span);
    return;
  }
  const bool was_sampled = obs->on_maybe_sampled_free != nullptr && obs->on_maybe_sampled_free(ptr);
  if (was_sampled) {
    usdt::SampledFree(ptr);
    sampled_spans::Remove(&g_state.pagemap, span);
  } else if (!usdt::TakeProbeOnlySample(&g_state.pagemap, span, ptr)) {
    sampled_spans::ReleaseIfUnused(&g_state.pagemap, span);
  }
}

}  // namespace

static_assert(internal::AllocSetting("TCMALLOC_RELEASE_RATE").number_default ==
              PageHeap::kDefaultReleaseRate);
static_assert(internal::AllocSetting("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES").default_value ==
              ThreadCacheRegistry::kDefaultMaxTotal);

void InitSlow() {
  {
    internal::SpinLockHolder h(&init_lock);
    if (g_initialized.load(std::memory_order_acquire)) return;
    using internal::AllocSetting;
    const int64_t transfer = internal::SettingInt64(AllocSetting("TCMALLOC_TRANSFER_NUM_OBJ"));
    const double release_rate = internal::SettingDouble(AllocSetting("TCMALLOC_RELEASE_RATE"));
    const int64_t max_total =
        internal::SettingInt64(AllocSetting("TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES"));
    const int64_t limit_mb = internal::SettingInt64(AllocSetting("TCMALLOC_HEAP_LIMIT_MB"));
    // The report prints heap and code addresses: a privileged process never prints it to the
    // user who started it (0 = never).
    large_alloc_threshold.store(
        internal::SecureExecution()
            ? 0
            : internal::SettingInt64(AllocSetting("TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD")));
    InitSamplingPeriod();
    g_state.sizemap.Init(static_cast<int>(transfer));
    g_state.pageheap.Init(&g_state.pagemap, release_rate, static_cast<size_t>(limit_mb) << 20);
    g_state.pageheap.set_aggressive_decommit(
        internal::SettingBool(AllocSetting("TCMALLOC_AGGRESSIVE_DECOMMIT")));
    const bool huge_pages = internal::SettingBool(AllocSetting("TCMALLOC_HUGE_PAGES"));
    g_state.pageheap.set_huge_pages(huge_pages);
    internal::SetArenaHugePages(huge_pages);  // the runtime's tables too (arena.h)
    CentralFreeList::SetLazyInit(&g_state.sizemap, &g_state.pageheap);  // lists init on use
    g_state.registry.Init(g_state.central, &g_state.sizemap, static_cast<size_t>(max_total));
    g_initialized.store(true, std::memory_order_release);
  }
  RegisterAtFork();
}

std::atomic<AllocationFailureHandler> g_failure_handler{nullptr};

void SetAllocationFailureHandler(AllocationFailureHandler handler) noexcept {
  g_failure_handler.store(handler, std::memory_order_release);
}

void* OutOfMemory(size_t size, size_t align) noexcept {
  errno = ENOMEM;
  AllocationFailureHandler handler = g_failure_handler.load(std::memory_order_acquire);
  return handler != nullptr ? handler(size, align) : nullptr;
}

void* MallocSlow(size_t size, size_t align) noexcept {
  EnsureInit();
  if (size > kMaxAllocSize) return OutOfMemory(size, align);
  ThreadCache* tc = GetCache();
  void* p;
  uint32_t cls = 0;
  const size_t reserve = CheckerReserve();
  const size_t need = size + reserve;  // the checker's byte past the end (observer_hooks.h)
  if (align <= 16) {
    if (need <= kMaxSize) cls = g_state.sizemap.SizeClass(need < align ? align : need);
    if (align == 16 && cls != 0 && g_state.sizemap.ClassSize(cls) < 16)
      cls = AlignedClass(need, 16);
  } else if (align <= kPageSize) {
    cls = AlignedClass(need, align);
  }
  if (cls != 0) {
    p = AllocateSmall(tc, cls);
    // The checker's layout clears what the list and earlier objects left (FitForChecker).
    if (p != nullptr && reserve != 0) memset(p, 0, size < sizeof(void*) ? sizeof(void*) : size);
  } else {
    p = AllocateLarge(need == 0 ? 1 : need, align);
  }
  if (p == nullptr) return OutOfMemory(size, align);
  ReportPendingGrowth();
  if (tc != nullptr) {
    tc->sample_left_ -= static_cast<int64_t>(size);
    if (tc->sample_left_ < 0) return CounterFired(tc, p, size);
  } else if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed))) {
    InvokeNewHooks(p, size);  // no cache (being created, or the thread is exiting)
  }
  return p;
}

void* MallocMedium(size_t size) noexcept {
  if (HEAPKIT_LIKELY(size <= kMaxSize)) {  // and > kMaxSmallLookup (only Malloc calls this)
    ThreadCache* tc = tls_cache;
    return MallocFromList(tc, tc->mutable_list(g_state.sizemap.MediumSizeClass(size)), size);
  }
  return MallocSlow(size, 0);
}

void* MallocRefill(size_t size) noexcept {
  ThreadCache* tc = tls_cache;
  if (tc == &g_empty_cache) return MallocSlow(size, 0);  // init, cache creation, exiting
  const uint32_t cls = g_state.sizemap.SizeClass(size);  // initialised: tc is a real cache
  void* p = tc->Allocate(cls);  // the list is empty: fetches from the central tier
  if (p == nullptr) return OutOfMemory(size, 0);
  if (HEAPKIT_UNLIKELY(checker_fit.load(std::memory_order_relaxed) != nullptr))
    p = FitForChecker(tc, p, size);
  ReportPendingGrowth();
  tc->sample_left_ -= static_cast<int64_t>(size);
  if (tc->sample_left_ < 0) return CounterFired(tc, p, size);
  return p;
}

void* ReallocInPlace(void* ptr, size_t size) noexcept {
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
    InvokeDeleteHooks(ptr);
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  Span* span = g_state.pagemap.GetSpan(a >> kPageShift);  // realloc validated ptr
  if (__atomic_load_n(&span->sampled_, __ATOMIC_RELAXED)) {
    const uint32_t cls = span->sizeclass_;
    NotifyMaybeSampledFree(
        span, ptr, cls != 0 ? g_state.sizemap.ObjectIndexOf(cls, a - span->StartAddress()) : 0);
  }
  ThreadCache* tc = GetCache();
  if (tc == nullptr) {
    if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
      InvokeNewHooks(ptr, size);
    return ptr;
  }
  tc->sample_left_ -= static_cast<int64_t>(size);
  if (tc->sample_left_ < 0) return CounterFired(tc, ptr, size);
  return ptr;
}

void FreeOverflow(void* ptr) noexcept {
  ThreadCache* tc = tls_cache;
  // The fast path validated ptr: its page holds small objects of this class.
  const uint32_t cls = PageMap::ClassOf(g_state.pagemap.Info(reinterpret_cast<uintptr_t>(ptr)));
  if (tc == &g_empty_cache) {
    g_empty_cache.RepairEmpty(cls);
    return FreeSlow(ptr);  // validates again and may create the cache
  }
  tc->PushOverflow(ptr, cls);  // pushes, then releases a batch to the central tier
}

void InvalidFree(const void* ptr) { internal::Fatal("attempt to free invalid pointer %p", ptr); }

void ReportInvalidFree(const void* ptr) noexcept { InvalidFree(ptr); }

void FreeOtherLeaf(void* ptr) noexcept {
  const uintptr_t root = g_state.pagemap.RootOf(reinterpret_cast<uintptr_t>(ptr) >> kPageShift);
  if (HEAPKIT_UNLIKELY(root == 0)) return FreeSlow(ptr);
  FreeInLeaf(ptr, root);
}

namespace {

// A validated small object of class cls to the thread's cache, or to the central list when the
// thread has none (out of line: the common case needs no frame for its arguments).
__attribute__((noinline)) void FreeToCentral(void* ptr, uint32_t cls) {
  g_state.central[cls].InsertRange(ptr, ptr, 1);
}
HEAPKIT_ALWAYS_INLINE void FreeToCache(void* ptr, uint32_t cls) {
  ThreadCache* tc = GetCache();
  if (HEAPKIT_UNLIKELY(tc == nullptr)) return FreeToCentral(ptr, cls);
  if (tc->head(cls) == ptr) InvalidFree(ptr);
  tc->Deallocate(ptr, cls);
}

// Exact mode's common free, inline in FreeSlow: the object's slot in the span's cached array
// holds a record and the span is marked (its count of recorded objects is not kept). Takes the
// slot (TakeSlot tells the slot-free hook) and fires the probe; false, having done nothing,
// in any other case (NotifyMaybeSampledFree's). So that only the object and its class stay
// live across the hook's call.
HEAPKIT_ALWAYS_INLINE bool TakeRecordedSlot(Span* span, void* ptr, uint64_t index, uint32_t cls) {
  if (observer.load(std::memory_order_acquire) == nullptr || !sampled_spans::ExactMarked(span) ||
      index >= g_state.sizemap.ObjectsPerSpan(cls))
    return false;
  void* array = OwnedCachedArray(span);
  const auto* frame = static_cast<const uintptr_t*>(__builtin_frame_address(0));
  if (array == nullptr || TakeSlot(SlotOfArray(array, index), ptr, array, frame) == 0) return false;
  usdt::SampledFree(ptr);
  return true;
}

// FreeSlow's other cases, reached by tail calls (so that the hook sees the same origin).
__attribute__((noinline)) void FreeSampledSmall(Span* span, void* ptr, uint64_t index,
                                                uint32_t cls) {
  NotifyMaybeSampledFree(span, ptr, index);
  FreeToCache(ptr, cls);
}
__attribute__((noinline)) void FreeLarge(Span* span, void* ptr) {
  if (__atomic_load_n(&span->sampled_, __ATOMIC_RELAXED)) NotifyMaybeSampledFree(span, ptr, 0);
  g_state.pageheap.Delete(span);
}

}  // namespace

void FreeSlow(void* ptr) noexcept {
  // Hooked mode sends every free here (observer_hooks.h, MallocHook); the hooks hear of it first.
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
    InvokeDeleteHooks(ptr);
  if (ptr == nullptr) return;
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  if (!g_initialized.load(std::memory_order_acquire)) InvalidFree(ptr);
  Span* span = g_state.pagemap.GetSpan(a >> kPageShift);
  if (span == nullptr || span->location_ != Span::kInUse) InvalidFree(ptr);
  if (span->sizeclass_ == 0) {
    if (a != span->StartAddress()) InvalidFree(ptr);
    return FreeLarge(span, ptr);
  }
  const uint32_t cls = span->sizeclass_;
  // Not an object start: (a - start) is not a multiple of the class size (DivMagic: no
  // division). The high half of the same product is the object's index (ObjectIndexOf).
  const uint64_t magic = g_state.sizemap.DivMagic(cls);
  const unsigned __int128 product =
      static_cast<unsigned __int128>(a - span->StartAddress()) * magic;
  if (static_cast<uint64_t>(product) > magic - 1) InvalidFree(ptr);
  if (__atomic_load_n(&span->sampled_, __ATOMIC_RELAXED)) {
    const auto index = static_cast<uint64_t>(product >> 64);
    if (!TakeRecordedSlot(span, ptr, index, cls)) return FreeSampledSmall(span, ptr, index, cls);
  }
  FreeToCache(ptr, cls);
}

void* Calloc(size_t bytes) {
  void* p = Malloc(bytes);
  if (p == nullptr) return nullptr;
  if (bytes > kMaxSize) {
    Span* span = g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift);
    if (span != nullptr && span->sizeclass_ == 0 && span->zero_) return p;
  }
  memset(p, 0, bytes);
  return p;
}

size_t UsableSize(const void* ptr) {
  if (ptr == nullptr || !g_initialized.load(std::memory_order_acquire)) return 0;
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  const uint32_t cls = PageMap::ClassOf(g_state.pagemap.Info(a));
  if (cls != 0) return g_state.sizemap.ClassSize(cls);
  Span* span = g_state.pagemap.GetSpan(a >> kPageShift);
  if (span == nullptr || span->location_ != Span::kInUse) return 0;
  return span->Bytes();
}

bool Owns(const void* ptr) {
  if (ptr == nullptr || !g_initialized.load(std::memory_order_acquire)) return false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  return g_state.pageheap.InUseSpanContaining(a >> kPageShift) != nullptr;
}

size_t EstimatedSize(size_t size, size_t align) {
  EnsureInit();
  if (size < kMaxAllocSize) size += CheckerReserve();
  if (align <= 16 && size <= kMaxSize) {
    uint32_t cls = g_state.sizemap.SizeClass(size < align ? align : size);
    if (align == 16 && g_state.sizemap.ClassSize(cls) < 16) cls = AlignedClass(size, 16);
    return g_state.sizemap.ClassSize(cls);
  }
  if (align > 16 && align <= kPageSize) {
    uint32_t cls = AlignedClass(size, align);
    if (cls != 0) return g_state.sizemap.ClassSize(cls);
  }
  return PagesFor(size == 0 ? 1 : size) << kPageShift;
}

void MarkThreadIdle() {
  ThreadCache* tc = tls_cache;
  if (tc == &g_empty_cache) return;
  tls_cache = &g_empty_cache;
  tls_state = kCreating;  // a nested allocation must not recreate the cache meanwhile
  g_state.registry.Destroy(tc);
  pthread_setspecific(cache_key, nullptr);
  tls_state = kNoCache;
}

}  // namespace heapkit::alloc
