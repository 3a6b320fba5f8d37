// The contract between the allocator and its observers: the heap profiler (profiler/), the leak
// checker (heapcheck/, through the profiler's sampling), and gperftools' MallocHook
// (malloc_hook.cc). Everything an observer registers, and everything the allocator promises
// about when it calls back, is declared here; the allocator's side lives in sampling.cc (the
// registry and the sampled-allocation path), allocator.cc (FreeSlow's sampled frees),
// heap_growth.cc, object_slots.cc and malloc_hook.cc.
//
//   callback                     called by (path)                      when / thread
//   ---------------------------  ------------------------------------  --------------------------
//   on_sampled_alloc             FinishSample -> NotifySample           a sampled allocation, on
//                                (MallocSampled, MallocRefill,          the allocating thread,
//                                MallocSlow, MallocHooked)              before it is returned
//   ExactRecorder                the same, exact mode (parameter 1)     every allocation
//   on_maybe_sampled_free        FreeSlow -> NotifyMaybeSampledFree     a free in a span holding a
//                                                                       recorded object, before
//                                                                       the memory is reused
//   SlotFreeHook                 TakeSlot / TakeObjectSlot (FreeSlow)   a free of an object whose
//                                                                       side slot held a record
//   HeapGrowthHook               ReportPendingGrowth (MallocSlow,       after the page heap grew
//                                MallocRefill)                          for this thread
//   StackCaptureHook             large-allocation report (MallocSlow),  when a report or a caller
//                                MallocHook_GetCallerStackTrace         stack is wanted
//   HeapSampleProvider           MallocExtension::GetHeapSample /       on the asking thread
//                                GetHeapGrowthStacks
//   MallocHook New / Delete      MallocHooked / FreeSlow                every allocation / free
//                                                                       while any is installed
//
// Common rules for every callback:
//  - No allocator lock is held (central, page heap, registry, sampled-span stripes, arena).
//  - The callee must not call the public malloc/free, except MallocHook's New and Delete hooks
//    (user code): what they allocate on their thread while they run is not reported to them.
//    The profiler's callbacks allocate from the metadata arena (internal/arena.h) only.
//  - Re-entry is refused per thread: while a sampling callback runs on a thread
//    (ThreadCache::in_callback_), nested allocations on it are not sampled.
//  - Registration: setters are thread-safe (atomic stores); the pointed-to object or function
//    must stay valid while registered. None of them allocates. The sampling, slot-free,
//    growth, stack and provider hooks have one registrant each (the profiler, at start-up);
//    MallocHook keeps lists (malloc_hook.cc).
// Zero cost: the fast paths look at none of these. They subtract from one per-thread counter
// (sampling) and test one free-magic word per page (frees); observers are reached only when
// those already send the call to a slow path.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "alloc/common.h"

namespace heapkit::alloc {

// ---- Sampling ----------------------------------------------------------------------------------
// Each thread keeps a byte counter; an allocation of n bytes subtracts n and branches once.
// When the counter crosses zero, the slow path picks the next exponentially distributed gap
// (mean = sample parameter) and, if an observer is registered, calls on_sampled_alloc on the
// allocating thread.
//
// Frees: the allocator counts, per span, the live objects the observer recorded (its
// on_sampled_alloc returned true); while a span has any, every free in it calls
// on_maybe_sampled_free with the object's start address, which returns true iff that object
// was a recorded sample. Frees in other spans never call out, so the free fast path pays
// nothing when sampling is off, and at a sparse rate only spans that hold a live sampled object
// pay. (Exact mode keeps spans routed while they live; see sampled_spans.h.)
struct SampleObserver {
  // ptr: the object returned to the user; requested: the size the user asked for;
  // allocated: the usable size (size class or page-rounded size). Returns true if the object
  // was recorded (its free must then be reported).
  bool (*on_sampled_alloc)(void* ptr, size_t requested, size_t allocated);
  // Called before the object's memory is reused; ptr is an object start. Returns true iff ptr
  // was recorded by on_sampled_alloc and not reported freed since.
  bool (*on_maybe_sampled_free)(void* ptr);
};

// Registers (or, with nullptr, removes) the single observer.
void SetSampleObserver(const SampleObserver* observer);

// Exact mode's lean path (sample parameter 1: every allocation recorded). When set, FinishSample
// calls this instead of on_sampled_alloc, with what it already knows: the object's side slot
// (object_slots.h, taken from the span in hand; nullptr for large objects and classes without
// slots, or if the requested size does not fit a slot value) and the register state where the
// allocation entered the allocator (SampleOrigin's, below, passed in registers instead of
// thread-local storage). Same contract as on_sampled_alloc otherwise (returns true if it
// recorded the object; runs with re-entry refused), except that the span is routed to the slow
// free path (sampled_spans.h, exact marking) before the call, whatever it returns. Registered
// by the observer's owner together with the observer; on_sampled_alloc still gets every other
// sample. x86-64 only (elsewhere exact mode uses on_sampled_alloc).
// birth: the object's birth word beside its slot (object_slots.h "Birth words"), or nullptr.
// pc, frame: the origin (SampleOrigin, below) as the return address and the frame it is read
// from (the allocator frame whose return address is pc): its sp is frame + 2 and its rbp
// frame[0], read by the recorder, so that the birth word fits the six argument registers.
using ExactRecorder = bool (*)(void* object, size_t requested, std::atomic<uint64_t>* slot,
                               std::atomic<uint64_t>* birth, uintptr_t pc, const uintptr_t* frame);
void SetExactRecorder(ExactRecorder recorder);

// The sampling period (mean bytes between samples) has its own header: sampling_period.h.

// ---- The leak checker's object layout -----------------------------------------------------------
// While on (the checker sets it at start-up), every object handed out on the sampled path
// (which in exact mode is every allocation) gets at least one byte past its requested size, so
// that a pointer one past its end lies inside its own block, never at the start of the next
// object; and a small object's requested bytes are cleared (its first word held the free-list
// link, the rest what an earlier object left), so that a word the program never wrote is no
// pointer. Large blocks are not cleared. realloc keeps a block only if
// the new size plus that byte fits it, and nallocx says the same. Requested sizes (what the
// observers record, and so the profiler's and checker's numbers) are unchanged; usable sizes
// (malloc_usable_size) are those of the larger blocks.
void SetCheckerObjectLayout(bool on);

// ---- Where a sampled allocation entered the allocator ------------------------------------------
// The register state of the frame that called FinishSample (its NotifySample is reached by a
// tail call, so it sees the same caller), as it is right after that call returns. Set by
// NotifySample on its thread for the duration of the observer's on_sampled_alloc call; pc and
// rbp are 0 otherwise (the leak checker scans thread-local storage: a heap pointer left here
// would keep its object reachable). ExactRecorder gets the same three values through its
// arguments (pc, and the frame that sp and rbp are read from).
//
// Why: the observer (profiler/sample_recorder.cc) captures the allocation's stack. Starting the
// walk here instead of at its own frame skips the allocator's own frames (FinishSample, the
// observer, the capture: a third of the words the unwinder's memo check compares), which the
// profiler would strip anyway (profiler/capture/allocator_frame_filter.h). Taking it costs two
// loads and three thread-local stores (and two to clear them): with frame pointers (the runtime is
// built with -fno-omit-frame-pointer, and __builtin_frame_address forces one), the frame holds the
// caller's rbp at [fp] and the return address at [fp + 8], and the caller's stack pointer after
// the return is fp + 16. The caller is whatever called FinishSample (MallocRefill, MallocSlow,
// MallocHooked, or, through MallocSampled's tail call, the allocation's own caller; exact
// mode's RecordExact is reached from MallocSampled and FinishSample by tail calls too): every
// frame from there on is one a full walk would give too.
struct SampleOrigin {
  uintptr_t pc;   // return address (0: no sampled allocation in progress on this thread)
  uintptr_t sp;   // stack pointer once that return has happened
  uintptr_t rbp;  // rbp then
};
extern __thread SampleOrigin tls_sample_origin __attribute__((tls_model("initial-exec")));

// ---- Frees of objects recorded in side slots (exact mode) --------------------------------------
// Called (if set) by TakeSlot / TakeObjectSlot (object_slots.h) with each value it took, on the
// freeing thread (FreeSlow), before the memory is reused; for owners that keep running totals
// (the heap profiler while it profiles). Must be malloc-free.
// birth: the object's birth word (object_slots.h "Birth words"), or nullptr if its slot array
// has none. frame: where the free entered the allocator, like SampleOrigin's (below) for an
// allocation: the frame of the allocator function the free's slow path runs in, whose return
// address is frame[1] (the origin's pc), its sp frame + 2 and its rbp frame[0]; nullptr if not
// known. The hook may start a stack walk there instead of at its own frame.
using SlotFreeHook = void (*)(const void* object, uint64_t value, std::atomic<uint64_t>* birth,
                              const uintptr_t* frame);
void SetSlotFreeHook(SlotFreeHook hook);
extern std::atomic<SlotFreeHook> g_slot_free_hook;

// ---- Stack capture ----------------------------------------------------------------------------
// Fills pcs with up to max_depth return addresses (innermost first) after skipping `skip`
// frames; returns how many. Used for TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD reports and
// MallocHook_GetCallerStackTrace; without a hook (minimal library) they have no stack. Must be
// malloc-free and re-entrancy-safe. Registered by the profiler at start-up.
using StackCaptureHook = int (*)(void** pcs, int max_depth, int skip);
void SetStackCaptureHook(StackCaptureHook hook);
StackCaptureHook GetStackCaptureHook();

// ---- Heap growth ------------------------------------------------------------------------------
// PageHeap::GrowHeap runs under the page-heap lock, where capturing a stack is not allowed
// (libunwind may take the dynamic loader's lock, and a thread inside dlopen may be waiting for
// our lock). So the growth is only noted in a thread-local counter there (NoteHeapGrowth), and
// the slow allocation paths report it once they hold no allocator lock: ReportPendingGrowth()
// calls the HeapGrowthHook on the thread that grew the heap, whose stack is then the
// allocation that caused the growth. The hook may capture the stack; it must be malloc-free.
using HeapGrowthHook = void (*)(size_t bytes);
void SetHeapGrowthHook(HeapGrowthHook hook);

extern __thread size_t tls_pending_growth_bytes __attribute__((tls_model("initial-exec")));
// Under the page-heap lock: `bytes` were just obtained from the OS for this thread.
inline void NoteHeapGrowth(size_t bytes) { tls_pending_growth_bytes += bytes; }
void ReportPendingGrowthSlow() noexcept;
// With no allocator lock held.
HEAPKIT_ALWAYS_INLINE void ReportPendingGrowth() {
  if (HEAPKIT_UNLIKELY(tls_pending_growth_bytes != 0)) ReportPendingGrowthSlow();
}

// ---- Heap sample provider (MallocExtension::GetHeapSample, GetHeapGrowthStacks) ----------------
// Called by MallocExtension on the thread that asks, outside the allocator (no allocator lock
// held). The sink appends to a std::string and so calls the public malloc: the provider must
// not call it while holding a lock its own sampling callbacks take. Without a provider both
// produce an empty string.
using TextSink = void (*)(void* sink_context, const char* data, size_t length);
struct HeapSampleProvider {
  // Writes a heap profile (legacy text format) of the currently sampled live objects.
  void (*heap_sample)(TextSink sink, void* sink_context);
  // Writes the stacks that grew the heap (may be nullptr: empty output).
  void (*heap_growth_stacks)(TextSink sink, void* sink_context);
};
void SetHeapSampleProvider(const HeapSampleProvider* provider);
const HeapSampleProvider* GetHeapSampleProvider();

// ---- MallocHook's New and Delete hooks (<gperftools/malloc_hook.h>, malloc_hook.cc) ------------
// Installing the first New or Delete hook switches the allocator into hooked mode
// (SetMallocHooksActive, called by the hook registry under its own lock):
//  - allocation: every thread's sampling counter is held below zero, so every allocation takes
//    the sampled slow path (as in exact sampling); there MallocHooked calls the New hooks and
//    keeps the sampler's own counter in ThreadCache::hooked_sample_left_, so that the
//    profiler's and checker's sampling goes on unchanged (the sampling callbacks above are
//    called after the New hooks); threads' sample epochs carry a tag bit meanwhile, so that
//    MallocSampled's exact-mode test fails before it reads the flag (sampling.cc);
//  - free: the free-magic table (size_classes.h) is cleared, so that every free takes FreeSlow,
//    which calls the Delete hooks before anything else (before on_maybe_sampled_free).
// Removing the last one restores both. A thread allocating or freeing at the very moment of the
// switch may finish that one call on the old path.
extern std::atomic<bool> g_malloc_hooks_active;  // read on the slow paths only
// Call the New / Delete hooks (no-ops on a thread already inside one).
void InvokeNewHooks(const void* ptr, size_t size);
void InvokeDeleteHooks(const void* ptr);
void SetMallocHooksActive(bool active);
// fork(): the hook registry's lock, held across it (taken before every allocator lock, the
// order Add/Remove take them in), so that the child never inherits it taken.
void LockMallocHookRegistry();
void UnlockMallocHookRegistry();

}  // namespace heapkit::alloc
