#include "profiler/sample_recorder.h"

#include <stdint.h>

#include "alloc/common.h"
#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/object_slots.h"
#include "alloc/observer_hooks.h"
#include "profiler/capture/allocator_frame_filter.h"
#include "profiler/capture/calibration.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/record/lifetime_recorder.h"
#include "profiler/table/object_birth.h"
#include "profiler/on_demand/on_demand_library.h"
#include "profiler/time/peak_tracker.h"
#include "profiler/control/profiler_fork.h"
#include "alloc/sampling_period.h"
#include "profiler/profiler_state.h"
#include "profiler/control/profiler_thread.h"
#include "profiler/capture/runtime_symbols.h"
#include "profiler/record/slot_births.h"
#include "profiler/table/sample_estimate.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/table/stack_table.h"

namespace heapkit::prof {

namespace {

std::atomic<bool> g_recording{false};
internal::SpinLock g_enable_lock;

// This thread's last recorded raw stack (allocator frames included), its StackRef and, once
// one was needed, its bucket: the same call site again — the common case — skips the
// allocator-frame scan, the trace tree and the buckets. Nodes and buckets are never freed, so
// both stay valid. When the capture's walk id (stack_capture.h) is the remembered one, the
// frames are not even copied or compared; otherwise (a new walk that may still give the same
// frames, or the libunwind fallback, id 0) they are compared frame by frame.
struct LastStack {
  static constexpr int kDepth = 24;         // deeper stacks are matched by walk id only
  int depth = -1;                           // frames in pcs (-1: none kept)
  uint64_t key = ~uint64_t{0};              // Key(size key, depth limit) of stack (none: no match)
  uint64_t walk_id = 0;                     // 0 whenever stack.node is kNoStack
  StackRef stack{StackTable::kNoStack, 0};  // the frames kept (allocator frames cut)
  int kept = 0;                             // and their number
  Bucket* bucket = nullptr;                 // (stack, size key)'s; nullptr: not looked up yet
  PeakCell* peak_cell = nullptr;            // bucket's peak-tracker cell, once looked up
  void* pcs[kDepth] = {};

  static uint64_t Key(uint32_t size_key, int limit) {
    return (static_cast<uint64_t>(size_key) << 32) | static_cast<uint32_t>(limit);
  }
  // The walk id whose frames need no copy for this key; 0 if none.
  uint64_t KnownWalk(uint64_t k) const { return k == key ? walk_id : 0; }
  bool Matches(void* const* p, int n, uint64_t k) const {
    if (n != depth || k != key) return false;
    for (int i = 0; i < n; ++i)
      if (p[i] != pcs[i]) return false;
    return true;
  }
  void Remember(void* const* p, int n, uint64_t k, uint64_t id, StackRef ref, int frames) {
    if (n <= kDepth) {
      for (int i = 0; i < n; ++i) pcs[i] = p[i];
      depth = n;
    } else {
      depth = -1;
    }
    key = k;
    walk_id = id;
    stack = ref;
    kept = frames;
    bucket = nullptr;
    peak_cell = nullptr;
  }
};
__thread LastStack tls_last_stack __attribute__((tls_model("initial-exec")));

// Where the allocation entered the allocator (alloc/observer_hooks.h, SampleOrigin).
struct Origin {
  uintptr_t pc, sp, rbp;  // pc 0: none
};

// How a record is kept: counted in its stack's bucket (a profile is being collected, or the
// object has no side slot), or as its stack alone in the object's slot, with no bucket and no
// count and the leaf frame apart (the leak checker's case; stack_table.h "Object slots"). Two
// instances of Record, so that neither pays for the other's branches.
enum class Keep { kCounted, kStackOnly };

// GCC cannot see that pcs is written by the capture whenever it is read (the walk id differs
// from the remembered one) once FindStack is inlined into OnExactAlloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The thread's last stack (tls_last_stack) made the one of this allocation: captured from
// `origin` when its pc is set, else from here, and interned unless the walk or the frames are
// the remembered ones. False when the stack table is full.
template <Keep kKeep>
inline __attribute__((always_inline)) bool FindStack(uint32_t size_key, int limit,
                                                     const Origin& origin, LastStack& last,
                                                     StackTable& table) {
  const uint64_t last_key = LastStack::Key(size_key, limit);
  const uint64_t known = last.KnownWalk(last_key);
  uint64_t walk = known;
  void* pcs[kMaxCaptureDepth];
  // The allocator frames of either start are stripped below.
  int depth = -1;
  if (origin.pc != 0)
    depth = CaptureStackFrom(origin.pc, origin.sp, origin.rbp, pcs, kMaxCaptureDepth, &walk);
  if (depth < 0) {
    walk = known;
    depth = CaptureStack(pcs, kMaxCaptureDepth, 0, &walk);
  }
  if (walk != 0 && walk == known) return true;  // the same frames as last time; pcs unwritten
  if (last.Matches(pcs, depth, last_key)) {
    last.walk_id = walk;
    return true;
  }
  int skip = CountAllocatorFrames(pcs, depth);
  int keep = depth - skip;
  if (keep > limit) keep = limit;
  const StackRef stack = kKeep == Keep::kStackOnly
                             ? table.InsertCallers(pcs + skip, keep)
                             : StackRef{table.InsertStack(pcs + skip, keep), 0};
  if (stack.node == StackTable::kNoStack) return false;
  last.Remember(pcs, depth, last_key, walk, stack, keep);
  return true;
}

// A slot record's bits beside its bucket id (StackTable::SlotInterval) when its birth word is
// set: the birth flag, with the dump interval when ages are on (object_birth.h).
inline __attribute__((always_inline)) uint64_t SlotBitsWithBirthWord() {
  return g_object_times.ages.load(std::memory_order_relaxed)
             ? StackTable::SlotInterval(
                   {1, 1, g_object_times.interval.load(std::memory_order_relaxed)})
             : StackTable::kSlotBirthFlag;
}

// The birth a slot record keeps when ages alone are on: the dump interval, on thread `thread`.
inline ObjectBirth AgesOnlyBirth(uint32_t thread) {
  return {0, thread, g_object_times.interval.load(std::memory_order_relaxed)};
}

// RecordWithBirth's other cases: the object's birth word looked up (the allocator did not hand
// one over), else a live-object-map record.
__attribute__((noinline)) void RecordWithBirthSlow(void* ptr, size_t requested, int64_t rate,
                                                   std::atomic<uint64_t>* slot, Bucket* bucket,
                                                   StackTable& table) {
  if (slot != nullptr) {
    std::atomic<uint64_t>* word = OwnedBirthWord(ptr);
    if (const uint64_t birth = BirthWordNow(); word != nullptr && birth != 0) {
      word->store(birth, std::memory_order_relaxed);  // before the slot's release store
      return table.RecordAllocInSlot(slot, bucket, requested, SlotBitsWithBirthWord());
    }
  }
  table.RecordAllocIn(nullptr, ptr, bucket, requested, BirthNow(), rate);
}

// A record with its whole birth (lifetimes): in its slot with the birth in the slot array's
// birth word (slot_births.h) when the array has one and the birth fits it, else in the
// live-object map. word: the object's birth word from the allocator (nullptr: none, or not
// handed over).
inline __attribute__((always_inline)) void RecordWithBirth(void* ptr, size_t requested,
                                                           int64_t rate,
                                                           std::atomic<uint64_t>* slot,
                                                           std::atomic<uint64_t>* word,
                                                           Bucket* bucket, StackTable& table) {
  if (__builtin_expect(slot != nullptr && word != nullptr, 1)) {
    if (const uint64_t birth = BirthWordNow(); __builtin_expect(birth != 0, 1)) {
      word->store(birth, std::memory_order_relaxed);  // before the slot's release store
      return table.RecordAllocInSlot(slot, bucket, requested, SlotBitsWithBirthWord());
    }
  }
  RecordWithBirthSlow(ptr, requested, rate, slot, bucket, table);
}

// The peak tracker's count of an allocation in the last stack's bucket (while PeakTrackingOn()),
// through the bucket's cell, looked up once per stack and size; true.
__attribute__((noinline)) bool CountInPeakFirst(LastStack& last, size_t requested,
                                                int64_t estimate) {
  const uint32_t id = last.bucket->id.load(std::memory_order_relaxed);
  last.peak_cell = PeakCellFor(id);
  if (last.peak_cell == nullptr) {  // no bucket id, or the arena is exhausted
    PeakOnAlloc(id, requested, estimate);
    return true;
  }
  return PeakOnAllocAt(last.peak_cell, requested, estimate);
}
inline __attribute__((always_inline)) bool CountInPeak(LastStack& last, size_t requested,
                                                       int64_t estimate) {
  if (__builtin_expect(last.peak_cell == nullptr, 0))
    return CountInPeakFirst(last, requested, estimate);
  return PeakOnAllocAt(last.peak_cell, requested, estimate);
}

// The counted record in the last stack's bucket (found once per stack and size): the object's
// birth when lifetimes or ages are on, then the profile's estimate and the peak's.
inline __attribute__((always_inline)) bool CountInBucket(void* ptr, size_t requested, int64_t rate,
                                                         uint32_t size_key,
                                                         std::atomic<uint64_t>* slot,
                                                         std::atomic<uint64_t>* birth,
                                                         LastStack& last, StackTable& table) {
  if (__builtin_expect(last.bucket == nullptr, 0)) {
    const uint32_t node = table.NodeOf(last.stack);
    if (node == StackTable::kNoStack) return false;
    last.bucket = table.BucketForStack(node, last.kept, size_key);
    if (last.bucket == nullptr) return false;
    last.peak_cell = nullptr;
  }
  if (__builtin_expect(BirthsOn(), 0)) {  // with its birth (object_birth.h)
    // Lifetimes need the whole birth: the slot array's birth word (slot_births.h), else the
    // map. Ages alone: a slot keeps the interval.
    if (slot == nullptr || g_object_times.lifetimes.load(std::memory_order_relaxed)) {
      RecordWithBirth(ptr, requested, rate, slot, birth, last.bucket, table);
    } else {
      table.RecordAllocIn(slot, ptr, last.bucket, requested, AgesOnlyBirth(ThisThreadNumber()),
                          rate);
    }
  } else {
    table.RecordAllocIn(slot, ptr, last.bucket, requested, {}, rate);
  }
  if (g_profiler.profiling.load(std::memory_order_relaxed)) {
    const int64_t estimate = EstimateBytes(requested, rate);
    g_profiler.est_alloc.fetch_add(estimate, std::memory_order_relaxed);
    MaybeRestartHelperThread();
    MaybeDumpAfterAlloc();
    // Last, as a tail call (every allocation in exact mode), like the free's (OnSlotFree).
    if (__builtin_expect(PeakTrackingOn(), 0)) return CountInPeak(last, requested, estimate);
  }
  return true;
}

// The record of one sampled allocation, shared by both entry points below: `slot` is the
// object's side slot (exact mode; never nullptr for kStackOnly) or nullptr (hash map).
template <Keep kKeep>
inline __attribute__((always_inline)) bool Record(void* ptr, size_t requested, int64_t rate,
                                                  std::atomic<uint64_t>* slot,
                                                  std::atomic<uint64_t>* birth,
                                                  const Origin& origin) {
  if (__builtin_expect(tls_calibrating, false)) {
    CalibrationSample();
    return false;
  }
  if (tls_recording_disabled) return false;
  const uint32_t size_key = SizeKey(requested, rate);
  LastStack& last = tls_last_stack;
  StackTable& table = GlobalStackTable();
  if (slot != nullptr) __builtin_prefetch(slot, 1);  // for the store below
  if (!FindStack<kKeep>(size_key, g_profiler.config.stack_depth, origin, last, table)) return false;
  if constexpr (kKeep == Keep::kStackOnly) {
    return table.RecordStackIn(slot, last.stack, requested);
  } else {
    return CountInBucket(ptr, requested, rate, size_key, slot, birth, last, table);
  }
}

// The instance for this record: stack only when it has a slot and no profile is collected.
inline __attribute__((always_inline)) bool RecordEither(void* ptr, size_t requested, int64_t rate,
                                                        std::atomic<uint64_t>* slot,
                                                        std::atomic<uint64_t>* birth,
                                                        const Origin& origin) {
  if (slot != nullptr && !g_profiler.profiling.load(std::memory_order_relaxed))
    return Record<Keep::kStackOnly>(ptr, requested, rate, slot, birth, origin);
  return Record<Keep::kCounted>(ptr, requested, rate, slot, birth, origin);
}
#pragma GCC diagnostic pop

// The observer's entry: sampled mode (and exact mode without the recorder below).
bool OnSampledAlloc(void* ptr, size_t requested, size_t /*allocated*/) {
  if (ptr == nullptr) return false;
  // The period this sample was taken at. Another than the period of record (a temporary one:
  // alloc/sampling_period.h) gives it no weight in the profile; calibration's own are counted.
  const int64_t rate = alloc::SamplingPeriodInEffect();
  if (__builtin_expect(rate != alloc::SamplingPeriod(), 0) && !tls_calibrating) return false;
  // Exact mode: the object's side slot (see StackTable::SlotForAlloc).
  std::atomic<uint64_t>* slot = rate == 1 && requested < StackTable::kMaxSlotSize
                                    ? GlobalStackTable().SlotForAlloc(ptr)
                                    : nullptr;
  const alloc::SampleOrigin& o = alloc::tls_sample_origin;
  return RecordEither(ptr, requested, rate, slot, nullptr, Origin{o.pc, o.sp, o.rbp});
}

// Exact mode's lean entry (alloc/observer_hooks.h, ExactRecorder): the allocator hands over the
// slot and the origin, the rate is 1. Only small objects have slots, and slots hold their sizes
// in kMaxSlotSize's bits.
static_assert(alloc::kMaxSize < StackTable::kMaxSlotSize, "a small object's size fits its slot");
// Its full path: any case, through RecordEither.
__attribute__((noinline)) bool RecordExactAlloc(void* ptr, size_t requested,
                                                std::atomic<uint64_t>* slot,
                                                std::atomic<uint64_t>* birth, uintptr_t pc,
                                                const uintptr_t* frame) {
  // Exact sampling for a while only (calibration: alloc/sampling_period.h): no weight.
  if (alloc::SamplingPeriod() != 1 && !tls_calibrating) return false;
  return RecordEither(ptr, requested, 1, slot, birth,
                      Origin{pc, reinterpret_cast<uintptr_t>(frame + 2), frame[0]});
}

// The allocation after its record crossed a dump trigger: the dump, then the peak tracker.
__attribute__((noinline)) bool CountExactAllocAfterDumpCheck(LastStack& last, size_t requested,
                                                             int64_t alloc, int64_t freed) {
  DumpIfTriggered(alloc, freed);
  if (__builtin_expect(PeakTrackingOn(), 0)) return CountInPeak(last, requested, requested);
  return true;
}

// Exact mode's common case, an allocation from the thread's last call site again, with no
// call but tail calls (so that no value lives across a call); anything else goes to
// RecordExactAlloc untouched, since everything is checked before anything is written. Both kinds of
// record:
//  - counted (a profile is collected; Record<Keep::kCounted>): the repeat walk's bucket is known
//    and is the one this thread's slot batch counts, the birth word (if births are on) needs no
//    call, and the helper thread is not to be restarted;
//  - stack only (the leak checker's; Record<Keep::kStackOnly>): the slot takes the stack as is.
// The steps and their order are Record's.
bool OnExactAlloc(void* ptr, size_t requested, std::atomic<uint64_t>* slot,
                  std::atomic<uint64_t>* birth, uintptr_t pc, const uintptr_t* frame) {
  LastStack& last = tls_last_stack;
  StackTable& table = GlobalStackTable();
  if (slot != nullptr) __builtin_prefetch(slot, 1);  // for the store below
  if (__builtin_expect(tls_calibrating || tls_recording_disabled || slot == nullptr ||
                           alloc::SamplingPeriod() != 1 ||
                           last.key != LastStack::Key(0, g_profiler.config.stack_depth),
                       0))
    return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(frame + 2);
  if (!g_profiler.profiling.load(std::memory_order_relaxed)) {
    if (!table.StackSlotTakes(last.stack) ||
        !CaptureWouldRepeat(pc, sp, frame[0], kMaxCaptureDepth, last.walk_id, /*free_memo=*/false))
      return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
    StackTable::StoreStackSlot(slot, last.stack, requested);
    return true;
  }
  if (__builtin_expect(last.bucket == nullptr ||
                           g_profiler.helper_restart.load(std::memory_order_relaxed) ||
                           !table.SlotBatchTakes(last.bucket),
                       0))
    return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
  if (!CaptureWouldRepeat(pc, sp, frame[0], kMaxCaptureDepth, last.walk_id, /*free_memo=*/false))
    return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
  uint64_t extra = 0;
  uint64_t word = 0;
  if (__builtin_expect(BirthsOn(), 0)) {  // as CountInBucket's births with a slot
    // A thread without its number yet, or a birth word that needs a call: the full path.
    const uint32_t thread = tls_thread_number;
    if (thread == 0) return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
    if (g_object_times.lifetimes.load(std::memory_order_relaxed)) {
      if (birth == nullptr || (word = BirthWordNowWithoutCall()) == 0)
        return RecordExactAlloc(ptr, requested, slot, birth, pc, frame);
      extra = SlotBitsWithBirthWord();
    } else {  // ages alone: the slot keeps the interval
      extra = StackTable::SlotInterval(AgesOnlyBirth(thread));
    }
  }
  if (word != 0) birth->store(word, std::memory_order_relaxed);  // before the slot's release store
  table.RecordBatchedSlot(slot, last.bucket, requested, extra);
  const auto estimate = static_cast<int64_t>(requested);  // rate 1
  const int64_t alloc =
      g_profiler.est_alloc.fetch_add(estimate, std::memory_order_relaxed) + estimate;
  const int64_t freed = g_profiler.est_free.load(std::memory_order_relaxed);
  if (__builtin_expect(AllocCrossedDumpTrigger(alloc, freed), 0))
    return CountExactAllocAfterDumpCheck(last, requested, alloc, freed);
  if (__builtin_expect(PeakTrackingOn(), 0)) return CountInPeak(last, requested, estimate);
  return true;
}

bool OnMaybeSampledFree(void* ptr) {
  size_t size;
  const Bucket* bucket = nullptr;
  ObjectBirth birth;
  // The period of record, as at the allocation (the sampling variance it subtracts: the
  // table's "Sampling variance").
  const int64_t rate = alloc::SamplingPeriod();
  if (!GlobalStackTable().RecordFree(ptr, &size, &bucket, &birth, rate)) return false;
  if (g_profiler.profiling.load(std::memory_order_relaxed)) {  // totals: see profiler_state.h
    const int64_t estimate = EstimateBytes(size, rate);
    g_profiler.est_free.fetch_add(estimate, std::memory_order_relaxed);
    if (__builtin_expect(PeakTrackingOn(), 0))
      PeakOnFree(bucket != nullptr ? bucket->id.load(std::memory_order_relaxed) : 0, size,
                 estimate);
    if (__builtin_expect(birth.time_ns != 0, 0)) CountFreedObject(bucket, size, birth, estimate);
    MaybeDumpAfterFree();
  }
  return true;
}

constexpr alloc::SampleObserver kObserver = {&OnSampledAlloc, &OnMaybeSampledFree};

// Exact mode keeps small objects' records in the allocator's per-object side slots.
constexpr SlotProvider kSlotProvider = {&alloc::ObjectSlotForAlloc, &alloc::FindObjectSlot,
                                        &alloc::ForEachObjectSlot};

// Static runtime: .symtab names every runtime function. Without it (stripped binary), .dynsym
// covers only the exported entry points, so calibration adds the return addresses of the
// internal paths it can reach.
void FindStaticAllocatorFrames() {
  int ranges = NumRuntimeSymbolRanges();
  if (ranges > 0 && RuntimeSymbolsFromSymtab()) {
    if (internal::Verbose())
      internal::Log("static runtime: allocator frames from %d symbol ranges of /proc/self/exe",
                    ranges);
  } else {
    int seen = CalibrateAllocatorFrames();
    if (internal::Verbose())
      internal::Log(
          "static runtime: no .symtab, allocator frames from %d .dynsym ranges + "
          "calibration (%d probes)",
          ranges, seen);
  }
}

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE bool SampleRecordingOn() { return g_recording.load(); }

namespace {

// The lifetime of a freed slot record (with its birth word), as a tail call where it can be.
inline __attribute__((always_inline)) void CountSlotLifetime(uint64_t value,
                                                             std::atomic<uint64_t>* birth,
                                                             const uintptr_t* frame) {
  // Arrays have birth words only while lifetimes are on (slot_births.h).
  if (__builtin_expect(birth != nullptr, 0) && StackTable::SlotHasBirth(value))
    return CountFreedSlotObject(value, birth->load(std::memory_order_relaxed), frame);
}

// CountSlotFree when the peak tracker's common case did not serve: the tracker in full, then
// the lifetime.
__attribute__((noinline)) void CountSlotFreeInPeak(uint64_t value, std::atomic<uint64_t>* birth,
                                                   const uintptr_t* frame) {
  const size_t size = StackTable::SlotSize(value);
  const auto estimate = static_cast<int64_t>(size);  // OnSlotFree
  PeakOnFree(StackTable::SlotBucketId(value), size, estimate);
  CountSlotLifetime(value, birth, frame);
}

// OnSlotFree after the totals and the dump check: the peak tracker and the lifetime, last, so
// that a dump fired by this free is the moment before it for both. The tracker's common case
// is inline, so that the lifetime is still a tail call.
inline __attribute__((always_inline)) void CountSlotFree(uint64_t value,
                                                         std::atomic<uint64_t>* birth,
                                                         const uintptr_t* frame) {
  const size_t size = StackTable::SlotSize(value);
  const auto estimate = static_cast<int64_t>(size);  // OnSlotFree
  if (__builtin_expect(PeakTrackingOn(), 0) &&
      __builtin_expect(!PeakOnFreeIfReady(StackTable::SlotBucketId(value), size, estimate), 0))
    return CountSlotFreeInPeak(value, birth, frame);
  CountSlotLifetime(value, birth, frame);
}

// OnSlotFree when the free crossed the deallocation trigger (out of line: the common path then
// makes no call before its tail calls).
__attribute__((noinline)) void CountSlotFreeAfterDumpCheck(uint64_t value,
                                                           std::atomic<uint64_t>* birth,
                                                           const uintptr_t* frame, int64_t freed) {
  DumpIfTriggered(g_profiler.est_alloc.load(std::memory_order_relaxed), freed);
  CountSlotFree(value, birth, frame);
}

}  // namespace

void OnSlotFree(const void*, uint64_t value, std::atomic<uint64_t>* birth, const uintptr_t* frame) {
  if (!g_profiler.profiling.load(std::memory_order_relaxed)) return;
  // Slot records are made at rate 1 only (exact mode: OnExactAlloc, OnSampledAlloc): a record's
  // estimate is its size, whatever the rate is now.
  const auto estimate = static_cast<int64_t>(StackTable::SlotSize(value));
  const int64_t freed =
      g_profiler.est_free.fetch_add(estimate, std::memory_order_relaxed) + estimate;
  if (__builtin_expect(FreeCrossedDumpTrigger(freed), 0))
    return CountSlotFreeAfterDumpCheck(value, birth, frame, freed);
  CountSlotFree(value, birth, frame);
}

void EnableSampleRecording() {
  if (g_recording.load(std::memory_order_acquire)) return;
  LoadOnDemandLibrary();  // libunwind for stack capture; dlopen, so before any lock
  internal::SpinLockHolder h(&g_enable_lock);
  if (g_recording.load(std::memory_order_relaxed)) return;
  InitStackCapture();
  InitAllocatorFrames();
  if (!GlobalStackTable().Init()) {
    internal::Log("cannot allocate the heap-profile table; heap sampling is off");
    return;
  }
  GlobalStackTable().SetSlotProvider(&kSlotProvider);
  RegisterProfilerForkHandlers();
  alloc::SetSampleObserver(&kObserver);
  alloc::SetExactRecorder(&OnExactAlloc);
  if (!RuntimeIsSharedObject()) FindStaticAllocatorFrames();
  g_recording.store(true, std::memory_order_release);
}

}  // namespace heapkit::prof
