// USDT probes for eBPF memory profilers: OpenTelemetry's `otel_memory` contract.
//
//   otel_memory:alloc(ptr, size, weighted_bytes)   a sampled object was handed out
//   otel_memory:free(ptr)                          a sampled object is being freed
//
// weighted_bytes = S / (1 - exp(-S/R)): the bytes one sampled object of S requested bytes stands
// for at sample parameter R (alloc/sample_weight.h, SampleBytesEstimate; the weight the heap
// profiler gives the same sample). In exact mode (R = 1) it is S.
//
// Where they fire: only on the sampled path. An allocation fires `alloc` in sampling.cc after the
// counter picked it (with or without a registered observer); a free fires `free` in FreeSlow's
// NotifyMaybeSampledFree, which only frees in spans holding a live sampled object reach. The
// unsampled fast paths contain no probe and read no semaphore.
//
// Semaphores: each probe has one (otel_memory_alloc_semaphore, otel_memory_free_semaphore, in
// the .probes section, named in the stapsdt note), which a consumer (bpftrace, gdb, an agent)
// raises while it is attached. With both at zero nothing below runs.
//
// Frees when nobody else records samples: the free path knows an object was sampled only when
// something recorded it (the profiler's observer, or exact mode's side slots). Sampling can be on
// without either (TCMALLOC_SAMPLE_PARAMETER alone; the minimal library). While the free
// semaphore is raised, such samples are recorded here, in a small address set in metadata memory
// whose span is marked like any sampled span (sampled_spans.h), so that their frees fire too.
// An object sampled before the semaphore was raised fires no `free` (it never fired `alloc`).
//
// Without <sys/sdt.h> at build time (systemtap-sdt-dev) the probes compile to nothing.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"
#include "alloc/page_map.h"
#include "alloc/span.h"

extern "C" {
// Raised by a consumer while attached (the stapsdt notes carry their addresses).
extern volatile unsigned short otel_memory_alloc_semaphore __attribute__((visibility("hidden")));
extern volatile unsigned short otel_memory_free_semaphore __attribute__((visibility("hidden")));
}

namespace heapkit::alloc::usdt {

// True while a consumer is attached to either probe.
HEAPKIT_ALWAYS_INLINE bool ProbesEnabled() {
  return (otel_memory_alloc_semaphore | otel_memory_free_semaphore) != 0;
}

// The sampled object p (requested bytes) of span was just picked at sample parameter `rate`;
// recorded: whether an observer or side slot will report its free. Fires `alloc`, and records p
// here when nobody else will report its free while `free` has a consumer. Call only when
// ProbesEnabled().
void SampledAlloc(Span* span, void* p, size_t requested, bool recorded, int64_t rate);

// The probe sites (out of line: one site per probe, arguments in registers).
void FireAlloc(void* p, size_t size, uint64_t weighted_bytes);
void FireFree(void* p);

// A free of an object that an observer or side slot reported as sampled: fires `free`.
HEAPKIT_ALWAYS_INLINE void SampledFree(void* p) {
  if (HEAPKIT_UNLIKELY(otel_memory_free_semaphore != 0)) FireFree(p);
}

// Frees of objects recorded here (SampledAlloc, recorded == false): true if p was one (it is no
// longer; `free` has fired and span's sampled count dropped). Cheap while the set is empty.
bool TakeProbeOnlySampleSlow(PageMap* map, Span* span, void* p);
extern std::atomic<size_t> probe_only_samples;
HEAPKIT_ALWAYS_INLINE bool TakeProbeOnlySample(PageMap* map, Span* span, void* p) {
  if (HEAPKIT_LIKELY(probe_only_samples.load(std::memory_order_relaxed) == 0)) return false;
  return TakeProbeOnlySampleSlow(map, span, p);
}

// fork(): the set's lock, held across it (taken before the arena's locks).
void LockAll();
void UnlockAll();

}  // namespace heapkit::alloc::usdt
