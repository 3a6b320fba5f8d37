// Sampling and the observer registry: the sample parameter and epoch, the observers of
// observer_hooks.h and their setters (the checker's layout is set by allocator.cc, whose fit it
// is), and the allocator's sampled-allocation path (the counter fired: MallocSampled,
// FinishSample, hooked mode), all in sampling.cc. allocator.h's fast paths and allocator.cc's slow
// paths (cache creation, init, MallocSlow/MallocRefill, FreeSlow) reach them through this
// header. The synchronisation rules are at the top of allocator.h (rule 6: callbacks run with
// no allocator lock held).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/observer_hooks.h"
#include "alloc/thread_cache.h"

namespace heapkit::alloc {

// The registry (defined in sampling.cc; hidden: read RIP-relative on the slow paths).
// sample_parameter is the sampling period in effect (sampling_period.h, its owner).
#define HEAPKIT_SAMPLING_STATE extern __attribute__((visibility("hidden")))
HEAPKIT_SAMPLING_STATE std::atomic<int64_t> sample_parameter;
HEAPKIT_SAMPLING_STATE std::atomic<uint64_t> sample_epoch;
HEAPKIT_SAMPLING_STATE std::atomic<bool> sample_from_env;
HEAPKIT_SAMPLING_STATE std::atomic<const SampleObserver*> observer;
HEAPKIT_SAMPLING_STATE std::atomic<ExactRecorder> exact_recorder;
HEAPKIT_SAMPLING_STATE std::atomic<StackCaptureHook> stack_hook;
HEAPKIT_SAMPLING_STATE std::atomic<const HeapSampleProvider*> sample_provider;
// The checker's layout (observer_hooks.h, SetCheckerObjectLayout, set in allocator.cc): null
// while off, else the allocator's fit for a fresh small object (FitForChecker, allocator.h: a
// class with no byte past the request is traded for the next one, and the requested bytes are
// cleared), which MallocSampled applies before anything else.
using CheckerFit = void* (*)(ThreadCache* tc, void* p, size_t size);
HEAPKIT_SAMPLING_STATE std::atomic<CheckerFit> checker_fit;
// Serialises the sampling period's writers (sampling_period.h); taken before the registry's
// lock, and held across fork (allocator.cc, PreFork).
HEAPKIT_SAMPLING_STATE internal::SpinLock sampling_period_lock;
#undef HEAPKIT_SAMPLING_STATE

// In hooked mode (observer_hooks.h, MallocHook) each thread's sample_epoch_ carries this bit,
// which the global epoch never has: the exact-mode test in MallocSampled then fails, so that
// the hooks' flag is read only after it and exact sampling without hooks does not pay for it.
constexpr uint64_t kHookedEpochBit = uint64_t{1} << 63;

// Draws the thread's next sampling gap at the current parameter and epoch.
void ResetSampleCounter(ThreadCache* tc);

// Called when the counter fired: decides whether this allocation is sampled, re-arms the
// counter and tells the observer.
void* FinishSample(ThreadCache* tc, void* p, size_t requested);
// Hooked mode (observer_hooks.h, MallocHook): every allocation's New hooks, then the sampler.
void* MallocHooked(ThreadCache* tc, void* p, size_t size);

// Bytes reserved past every request while the checker's layout is on (observer_hooks.h).
inline size_t CheckerReserve() {
  return checker_fit.load(std::memory_order_relaxed) != nullptr ? 1 : 0;
}

// The sampling counter of tc crossed zero while allocating p (`size` bytes requested): the
// fast paths (allocator.h) reach it by a tail jump. Never inlined: MallocMedium reaches it by a
// tail jump and needs no stack frame itself.
__attribute__((noinline)) void* MallocSampled(ThreadCache* tc, void* p, size_t size) noexcept;

// MallocSlow's and MallocRefill's end, when the counter crossed zero.
inline void* CounterFired(ThreadCache* tc, void* p, size_t size) {
  if (HEAPKIT_UNLIKELY(g_malloc_hooks_active.load(std::memory_order_relaxed)))
    return MallocHooked(tc, p, size);
  return FinishSample(tc, p, size);
}

}  // namespace heapkit::alloc
