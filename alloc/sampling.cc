// Sampling and the observer registry (sampling.h): what the allocator does when a thread's
// sampling counter fires, and the setters of observer_hooks.h.
#include "alloc/sampling.h"

#include "alloc/global_state.h"
#include "alloc/internal/alloc_settings.h"
#include "alloc/object_slots.h"
#include "alloc/sampled_spans.h"
#include "alloc/sampling_period.h"
#include "alloc/usdt_probes.h"

namespace heapkit::alloc {

constinit std::atomic<int64_t> sample_parameter{0};  // in effect (sampling_period.h)
constinit std::atomic<int64_t> period_of_record{0};
constinit std::atomic<uint64_t> sample_epoch{1};
constinit std::atomic<bool> sample_from_env{false};
constinit std::atomic<const SampleObserver*> observer{nullptr};
constinit std::atomic<ExactRecorder> exact_recorder{nullptr};
constinit std::atomic<CheckerFit> checker_fit{nullptr};
HEAPKIT_ALWAYS_WRITTEN_DATA constinit std::atomic<StackCaptureHook> stack_hook{nullptr};
HEAPKIT_ALWAYS_WRITTEN_DATA constinit std::atomic<const HeapSampleProvider*> sample_provider{
    nullptr};

void ResetSampleCounter(ThreadCache* tc) {
  uint64_t epoch = sample_epoch.load(std::memory_order_acquire);
  // A new epoch read here makes SetMallocHooksActive's earlier flag store visible.
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
    epoch |= kHookedEpochBit;
  tc->sample_epoch_ = epoch;
  tc->sample_left_ = tc->sampler_.NextGap(sample_parameter.load(std::memory_order_relaxed));
}

__thread SampleOrigin tls_sample_origin __attribute__((tls_model("initial-exec"))) = {};

namespace {

// Exact mode: every allocation is recorded, so spans stay routed to the slow path.
bool ExactSampling() { return sample_parameter.load(std::memory_order_relaxed) == 1; }

// Calls the observer for the sampled object p of span; marks the span when it recorded p.
// Then fires the otel_memory:alloc probe if a consumer is attached (usdt_probes.h).
void NotifySampledAlloc(ThreadCache* tc, Span* span, void* p, size_t requested, size_t allocated) {
  if (tc->in_callback_) return;
  const SampleObserver* obs = observer.load(std::memory_order_acquire);
  bool recorded = false;
  if (obs != nullptr && obs->on_sampled_alloc != nullptr) {
    tc->in_callback_ = true;
    recorded = obs->on_sampled_alloc(p, requested, allocated);
    tc->in_callback_ = false;
    // Marking after the callback is safe: nobody else can free p before we return it.
    if (recorded) sampled_spans::Add(&g_state.pagemap, span, ExactSampling());
  }
  if (HEAPKIT_UNLIKELY(usdt::ProbesEnabled()))
    usdt::SampledAlloc(span, p, requested, recorded,
                       sample_parameter.load(std::memory_order_relaxed));
}

// The observer's part of FinishSample. Reached by a tail call (as FinishSample itself is from
// MallocSampled), so that the frame that called it is the one where the allocation entered the
// allocator (observer_hooks.h, SampleOrigin); were it a real call, that frame would be
// FinishSample's, one allocator frame more for the profiler to strip.
__attribute__((noinline)) void* NotifySample(ThreadCache* tc, void* p, size_t requested) {
  Span* span = g_state.pagemap.GetSpan(reinterpret_cast<uintptr_t>(p) >> kPageShift);
  size_t allocated =
      span->sizeclass_ != 0 ? g_state.sizemap.ClassSize(span->sizeclass_) : span->Bytes();
#if defined(__x86_64__)
  // Where the stack above us starts (observer_hooks.h, SampleOrigin).
  SampleOrigin& origin = tls_sample_origin;
  const auto* fp = static_cast<const uintptr_t*>(__builtin_frame_address(0));
  origin.rbp = fp[0];
  origin.sp = reinterpret_cast<uintptr_t>(fp + 2);
  origin.pc = fp[1];
  NotifySampledAlloc(tc, span, p, requested, allocated);
  // Cleared, not just invalidated: the leak checker scans every thread's TLS, and a heap
  // pointer that rbp held in code without frame pointers, left here, would keep whatever it
  // points to reachable.
  origin.pc = 0;
  origin.rbp = 0;
#else
  NotifySampledAlloc(tc, span, p, requested, allocated);
#endif
  return p;
}

// Exact mode's lean path (observer_hooks.h, ExactRecorder): the slot from the span in hand (no
// second page-map lookup, no provider call), the origin in registers (no thread-local stores),
// and the span marked before the call (in exact mode it stays routed while it lives anyway).
// Reached by a tail call, like NotifySample, which it falls back to without a recorder.

// The recorder's call, the slot found and the span marked. kProbes: also fire the
// otel_memory:alloc probe afterwards (usdt_probes.h). A separate instantiation, so that without
// a probe consumer nothing stays live across the recorder's call but the thread cache and the
// object (a larger frame would cost the recorder's stack-memo check one word per allocation).
#if defined(__x86_64__)
template <bool kProbes>
HEAPKIT_ALWAYS_INLINE void* CallExactRecorder(ExactRecorder record, ThreadCache* tc, Span* span,
                                              void* p, size_t requested,
                                              std::atomic<uint64_t>* slot) {
  // A slot's array is the span's cached one (OwnedCachedSlot, SlotOfNewObject).
  std::atomic<uint64_t>* birth =
      slot != nullptr ? BirthOfSlot(OwnedCachedArray(span), slot) : nullptr;
  const auto* fp = static_cast<const uintptr_t*>(__builtin_frame_address(0));
  tc->in_callback_ = true;
  const bool recorded = record(p, requested, slot, birth, fp[1], fp);
  tc->in_callback_ = false;
  if constexpr (kProbes)
    usdt::SampledAlloc(span, p, requested, recorded,
                       sample_parameter.load(std::memory_order_relaxed));
  return p;
}
#endif

// The paths to the recorder's call: kCommon, a slot in the span's cached array and the span
// marked already, makes no call before the recorder's (so that only the thread cache and the
// object need registers that survive it) and leaves anything else to kWhole, which makes the
// slot if the span has no array yet and marks the span; kProbed is kWhole with the probe.
enum class ExactPath { kCommon, kWhole, kProbed };
__attribute__((noinline)) void* RecordExactWhole(ThreadCache* tc, void* p, size_t requested);

template <ExactPath kPath>
HEAPKIT_ALWAYS_INLINE void* RecordExactBody(ThreadCache* tc, void* p, size_t requested) {
#if defined(__x86_64__)
  const ExactRecorder record = exact_recorder.load(std::memory_order_acquire);
  if (HEAPKIT_UNLIKELY(record == nullptr)) return NotifySample(tc, p, requested);
  Span* span = g_state.pagemap.SpanOfOwnedPage(reinterpret_cast<uintptr_t>(p) >> kPageShift);
  std::atomic<uint64_t>* slot = nullptr;
  if (const uint32_t cls = span->sizeclass_; cls != 0 && requested <= UINT32_MAX) {
    const uintptr_t offset = reinterpret_cast<uintptr_t>(p) - span->StartAddress();
    slot = OwnedCachedSlot(span, g_state.sizemap.ObjectIndexOf(cls, offset));
    if (HEAPKIT_UNLIKELY(slot == nullptr)) {
      if constexpr (kPath == ExactPath::kCommon) return RecordExactWhole(tc, p, requested);
      slot = SlotOfNewObject(span, p);
    }
  }
  if constexpr (kPath == ExactPath::kCommon) {
    if (HEAPKIT_UNLIKELY(!sampled_spans::ExactMarked(span)))
      return RecordExactWhole(tc, p, requested);
  } else {
    sampled_spans::Add(&g_state.pagemap, span, true);
  }
  return CallExactRecorder<kPath == ExactPath::kProbed>(record, tc, span, p, requested, slot);
#else
  return NotifySample(tc, p, requested);
#endif
}

// Each reached by a tail call, so that the recorder sees the same origin.
__attribute__((noinline)) void* RecordExactWhole(ThreadCache* tc, void* p, size_t requested) {
  return RecordExactBody<ExactPath::kWhole>(tc, p, requested);
}

__attribute__((noinline)) void* RecordExactProbed(ThreadCache* tc, void* p, size_t requested) {
  return RecordExactBody<ExactPath::kProbed>(tc, p, requested);
}

__attribute__((noinline)) void* RecordExact(ThreadCache* tc, void* p, size_t requested) {
  if (HEAPKIT_UNLIKELY(usdt::ProbesEnabled())) return RecordExactProbed(tc, p, requested);
  return RecordExactBody<ExactPath::kCommon>(tc, p, requested);
}

}  // namespace

// Called when the counter fired: decides whether this allocation is sampled, re-arms the
// counter and tells the observer (by tail calls: see NotifySample).
void* FinishSample(ThreadCache* tc, void* p, size_t requested) {
  const uint64_t epoch = sample_epoch.load(std::memory_order_acquire);
  const int64_t mean = sample_parameter.load(std::memory_order_relaxed);
  if (HEAPKIT_LIKELY(mean == 1 && tc->sample_epoch_ == epoch)) {
    tc->sample_left_ = Sampler::kExactGap;  // exact mode: no draw (sampler.h)
    if (p == nullptr || tc->in_callback_) return p;
    return RecordExact(tc, p, requested);
  }
  const bool stale = tc->sample_epoch_ != epoch;
  ResetSampleCounter(tc);
  if (stale) {
    // The parameter changed: this allocation counts against a gap drawn with the new mean.
    tc->sample_left_ -= static_cast<int64_t>(requested);
    if (tc->sample_left_ >= 0) return p;
    ResetSampleCounter(tc);
  }
  if (p == nullptr || mean <= 0 || tc->in_callback_) return p;
  if (mean == 1) return RecordExact(tc, p, requested);
  return NotifySample(tc, p, requested);
}

namespace {

// Exact mode, the common case: FinishSample's first branch, with one call level less. Never
// taken in hooked mode, whose epochs carry kHookedEpochBit.
HEAPKIT_ALWAYS_INLINE bool ExactAndCurrent(const ThreadCache* tc, int64_t mean) {
  return mean == 1 && tc->sample_epoch_ == sample_epoch.load(std::memory_order_acquire);
}
HEAPKIT_ALWAYS_INLINE void* RecordExactFromList(ThreadCache* tc, void* p, size_t size) {
  tc->sample_left_ = Sampler::kExactGap;
  if (tc->in_callback_) return p;
  return RecordExact(tc, p, size);  // p != nullptr: it came from a list
}

// The rest of MallocSampled, after the exact-mode and hooks tests.
HEAPKIT_ALWAYS_INLINE void* SampleOther(ThreadCache* tc, void* p, size_t size, int64_t mean) {
  // Also reached every 16 MiB allocated when sampling is off: a steady small-object workload
  // that never leaves its thread cache still drives the time-driven release. With dense
  // sampling (exact mode: every allocation) this would read the clock on every malloc; the
  // page heap's and central lists' slow paths tick often enough then.
  constexpr int64_t kDenseSampling = 64 * 1024;
  if (mean == 0 || mean >= kDenseSampling) g_state.pageheap.ReleaseTick();
  return FinishSample(tc, p, size);
}

}  // namespace

// Hooked mode (observer_hooks.h, MallocHook): every allocation comes here. Calls the New hooks,
// then runs the sampler on its own counter, hooked_sample_left_, as the fast path would have.
__attribute__((noinline)) void* MallocHooked(ThreadCache* tc, void* p, size_t size) {
  InvokeNewHooks(p, size);
  const int64_t left = tc->hooked_sample_left_ - static_cast<int64_t>(size);
  const uint64_t epoch = sample_epoch.load(std::memory_order_acquire);
  if (HEAPKIT_LIKELY(left >= 0 && tc->sample_epoch_ == (epoch | kHookedEpochBit))) {
    tc->hooked_sample_left_ = left;
    tc->sample_left_ = -1;
    return p;
  }
  // The sampler's turn, on its own counter and an untagged epoch (FinishSample compares them).
  tc->sample_left_ = left;
  tc->sample_epoch_ &= ~kHookedEpochBit;
  const int64_t mean = sample_parameter.load(std::memory_order_relaxed);
  p = ExactAndCurrent(tc, mean) ? RecordExactFromList(tc, p, size) : SampleOther(tc, p, size, mean);
  tc->sample_epoch_ |= kHookedEpochBit;
  tc->hooked_sample_left_ = tc->sample_left_;
  tc->sample_left_ = -1;
  return p;
}

void* MallocSampled(ThreadCache* tc, void* p, size_t size) noexcept {
  if (const CheckerFit fit = checker_fit.load(std::memory_order_relaxed); HEAPKIT_UNLIKELY(fit))
    p = fit(tc, p, size);
  const int64_t mean = sample_parameter.load(std::memory_order_relaxed);
  if (HEAPKIT_LIKELY(ExactAndCurrent(tc, mean))) return RecordExactFromList(tc, p, size);
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
    return MallocHooked(tc, p, size);
  return SampleOther(tc, p, size, mean);
}

// ---- observer_hooks.h: sampling ----------------------------------------------------------------
void SetSampleObserver(const SampleObserver* obs) {
  observer.store(obs, std::memory_order_release);
}

void SetExactRecorder(ExactRecorder recorder) {
  exact_recorder.store(recorder, std::memory_order_release);
}

// ---- sampling_period.h
// ---------------------------------------------------------------------------
namespace {

int active_scopes HEAPKIT_GUARDED_BY(sampling_period_lock) = 0;

// Puts `period` in effect: every thread re-draws its gap on its next allocation, below zero so
// that even a malloc(0), which subtracts nothing, reaches FinishSample (with 0 there, a thread
// whose next allocations were all malloc(0) never recorded them in exact mode).
void PutInEffect(int64_t period) HEAPKIT_REQUIRES(sampling_period_lock) {
  sample_parameter.store(period, std::memory_order_relaxed);
  sample_epoch.fetch_add(1, std::memory_order_acq_rel);
  g_state.registry.ForEach(
      [](ThreadCache* tc) { __atomic_store_n(&tc->sample_left_, -1, __ATOMIC_RELAXED); });
}

}  // namespace

constinit internal::SpinLock sampling_period_lock;

void SetSamplingPeriod(int64_t period) {
  EnsureInit();
  if (period < 0) period = 0;
  internal::SpinLockHolder h(&sampling_period_lock);
  period_of_record.store(period, std::memory_order_relaxed);
  if (active_scopes == 0) PutInEffect(period);
}

void SetSamplingPeriodUnlessChosen(int64_t period) {
  EnsureInit();
  if (sample_from_env.load(std::memory_order_relaxed) || SamplingPeriod() > 0) return;
  SetSamplingPeriod(period);
}

void ScopedSamplingPeriod::Begin(int64_t period) {
  if (active_) return;
  EnsureInit();
  if (period < 0) period = 0;
  internal::SpinLockHolder h(&sampling_period_lock);
  active_ = true;
  ++active_scopes;
  PutInEffect(period);
}

void ScopedSamplingPeriod::End() {
  if (!active_) return;
  internal::SpinLockHolder h(&sampling_period_lock);
  active_ = false;
  if (--active_scopes == 0) PutInEffect(period_of_record.load(std::memory_order_relaxed));
}

void InitSamplingPeriod() {
  int64_t period;
  if (!internal::SettingInt64Given(internal::AllocSetting("TCMALLOC_SAMPLE_PARAMETER"), &period))
    return;
  sample_from_env.store(true, std::memory_order_relaxed);
  period_of_record.store(period, std::memory_order_relaxed);
  sample_parameter.store(period, std::memory_order_relaxed);
}

// ---- observer_hooks.h: MallocHook's hooked mode ------------------------------------------------
void SetMallocHooksActive(bool active) {
  EnsureInit();
  g_malloc_hooks_active.store(active, std::memory_order_seq_cst);
  g_state.sizemap.RouteAllFreesToSlowPath(active);
  // Every thread's next allocation takes the slow path; the new epoch makes it re-draw its
  // sampling gap there (in hooked mode: into hooked_sample_left_; leaving it: back into
  // sample_left_), so that the switch itself is never counted as a sample.
  sample_epoch.fetch_add(1, std::memory_order_acq_rel);
  g_state.registry.ForEach(
      [](ThreadCache* tc) { __atomic_store_n(&tc->sample_left_, -1, __ATOMIC_RELAXED); });
}

// ---- observer_hooks.h: stack capture, heap sample provider --------------------------------------
HEAPKIT_ALWAYS_RUN_CODE void SetStackCaptureHook(StackCaptureHook hook) { stack_hook.store(hook); }
StackCaptureHook GetStackCaptureHook() { return stack_hook.load(); }
HEAPKIT_ALWAYS_RUN_CODE void SetHeapSampleProvider(const HeapSampleProvider* p) {
  sample_provider.store(p);
}
const HeapSampleProvider* GetHeapSampleProvider() { return sample_provider.load(); }

}  // namespace heapkit::alloc
