// The sampling period: mean bytes between sampled allocations (0 = off, 1 = every allocation,
// "exact mode"). Its one owner; every other component reads and changes it through this header.
//
// Two values, which differ only while a ScopedSamplingPeriod is active:
//  - the period of record, SamplingPeriod(): the period the recorded samples were taken at, so
//    the one every dump's header carries and every estimate weighs a sample with. Set at
//    start-up from TCMALLOC_SAMPLE_PARAMETER, then by SetSamplingPeriod (the checker's exact
//    mode, the profiler's default and its fit to the dump intervals).
//  - the period in effect, SamplingPeriodInEffect(): what the allocator samples at now. A
//    ScopedSamplingPeriod changes it for a while (the checker pauses sampling while it reports,
//    the profiler's calibration samples every allocation of its probes) and puts the period of
//    record back when it ends; the period of record stays what it was. A sample taken at
//    another period than the period of record has no weight in the profile (its recorder
//    drops it: sample_recorder.cc).
// Writes are rare and serialised (a spin lock); reads are one relaxed load.
#pragma once

#include <atomic>
#include <cstdint>

namespace heapkit::alloc {

// The two values (defined in sampling.cc; hidden: the runtime's components share one library).
// Read them through the functions below; sampling.cc alone writes them.
extern __attribute__((visibility("hidden"))) std::atomic<int64_t> period_of_record;
extern __attribute__((visibility("hidden"))) std::atomic<int64_t> sample_parameter;

// Inline: exact mode's recorder compares with it on every allocation.
inline int64_t SamplingPeriod() { return period_of_record.load(std::memory_order_relaxed); }
inline int64_t SamplingPeriodInEffect() { return sample_parameter.load(std::memory_order_relaxed); }

// Sets the period of record (and the period in effect, unless a ScopedSamplingPeriod is active,
// which puts this one in effect when it ends). Below 0: 0.
void SetSamplingPeriod(int64_t period);

// The default rule of the profiler's starts (HEAPPROFILE, the HTTP endpoint): sets `period`
// unless TCMALLOC_SAMPLE_PARAMETER gave one or a period is set already.
void SetSamplingPeriodUnlessChosen(int64_t period);

// A temporary period in effect, from Begin (or the constructor) to End (or the destructor).
// constexpr-constructible inactive, so that a holder may keep one in static storage (the
// checker's gate ends it in a forked child, where the thread that began it is gone). Scopes of
// different threads may overlap: the last to end puts the period of record back.
class ScopedSamplingPeriod {
 public:
  constexpr ScopedSamplingPeriod() = default;
  explicit ScopedSamplingPeriod(int64_t period) { Begin(period); }
  ~ScopedSamplingPeriod() { End(); }
  ScopedSamplingPeriod(const ScopedSamplingPeriod&) = delete;
  ScopedSamplingPeriod& operator=(const ScopedSamplingPeriod&) = delete;

  void Begin(int64_t period);  // no-op when active
  void End();                  // no-op when inactive
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

// alloc/'s start-up (InitSlow): the period of record from TCMALLOC_SAMPLE_PARAMETER.
void InitSamplingPeriod();

}  // namespace heapkit::alloc
