// The allocator's sampling hook point: the seam between alloc/ and profiler/ + heapcheck/.
//
// Fast path contract: each thread keeps a byte counter; an allocation of n
// bytes subtracts n and branches once. When the counter crosses zero, the slow path picks the
// next exponentially distributed gap (mean = sample parameter) and, if an observer is
// registered, calls observer->on_sampled_alloc on the allocating thread.
//
// Frees: the allocator counts, per span, the live objects the observer recorded (its
// on_sampled_alloc returned true); while a span has any, every free in it calls
// observer->on_maybe_sampled_free with the object's start address, which returns true iff that
// object was a recorded sample. Frees in other spans never call out, so the free fast path
// pays nothing when sampling is off, and at a sparse rate only spans that hold a live sampled
// object pay. (Exact mode keeps spans routed while they live; see alloc/sampled_spans.h.)
//
// Callbacks run outside all allocator locks, may allocate internally only from the metadata
// arena, must never call the public malloc, and must tolerate re-entry being refused: while a
// callback runs on a thread, nested allocations on that thread are not sampled.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace heapkit::alloc {

struct SampleObserver {
  // ptr: the object returned to the user; requested: the size the user asked for;
  // allocated: the usable size (size class or page-rounded size). Returns true if the object
  // was recorded (its free must then be reported).
  bool (*on_sampled_alloc)(void* ptr, size_t requested, size_t allocated);
  // Called before the object's memory is reused; ptr is an object start. Returns true iff ptr
  // was recorded by on_sampled_alloc and not reported freed since.
  bool (*on_maybe_sampled_free)(void* ptr);
};

// Registers (or, with nullptr, removes) the single observer. Thread-safe; the observer object
// must outlive its registration.
void SetSampleObserver(const SampleObserver* observer);

// Exact mode's lean path (sample parameter 1: every allocation recorded). When set, FinishSample
// calls this instead of on_sampled_alloc, with what it already knows: the object's side slot
// (live_objects.h, taken from the span in hand; nullptr for large objects and classes without
// slots, or if the requested size does not fit a slot value) and the register state where the
// allocation entered the allocator (the same as SampleOrigin's, sample_origin.h, passed in
// registers instead of thread-local storage). Same contract as on_sampled_alloc otherwise
// (returns true if it recorded the object; runs with re-entry refused), except that the span is
// routed to the slow free path (sampled_spans.h, exact marking) before the call, whatever it
// returns. Registered by the observer's owner together with the observer; on_sampled_alloc
// still gets every other sample. x86-64 only (elsewhere exact mode uses on_sampled_alloc).
using ExactRecorder = bool (*)(void* object, size_t requested, std::atomic<uint64_t>* slot,
                               uintptr_t pc, uintptr_t sp, uintptr_t rbp);
void SetExactRecorder(ExactRecorder recorder);

// Mean bytes between samples: 0 = sampling off, 1 = every allocation is sampled.
// Initialised from TCMALLOC_SAMPLE_PARAMETER (default 0 in the allocator itself; the profiler
// raises it to 512 KiB when HEAPPROFILE is set and the variable is unset; the checker sets 1).
void SetSampleParameter(int64_t mean_bytes);
int64_t GetSampleParameter();

// True if TCMALLOC_SAMPLE_PARAMETER was given explicitly (valid) in the environment.
bool SampleParameterFromEnvironment();

}  // namespace heapkit::alloc
