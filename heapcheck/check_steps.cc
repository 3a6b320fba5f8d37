#include "heapcheck/check_steps.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"
#include "alloc/live_objects.h"
#include "heapcheck/anonymous_roots.h"
#include "heapcheck/ignore_list.h"
#include "heapcheck/proc_maps.h"
#include "heapcheck/roots.h"
#include "profiler/table/sampled_objects.h"
#include "profiler/capture/stack_capture.h"

namespace heapkit::check {
namespace {

bool InRegions(const MmapArray<Region>& regions, uintptr_t pc) {
  for (const Region& r : regions)
    if (pc >= r.start && pc < r.end) return true;
  return false;
}

struct SnapshotState {
  MmapArray<HeapObject>* objects;
  const MmapArray<Region>* loader_text;  // for root objects allocated by the dynamic loader
  bool ok;
};

// HeapObject::aux values while the snapshot is built.
constexpr uint32_t kNeedsLookup = 1;  // no side slot: ask the profiler's table (step 2)

void CollectObject(void* ctx, void* object, size_t size) {
  auto* s = static_cast<SnapshotState*>(ctx);
  if (!s->objects->PushBack({reinterpret_cast<uintptr_t>(object), size, 0, 0})) s->ok = false;
}

// Applies an object's record (requested size, loader-allocated -> root); false if none.
bool ApplyRecord(HeapObject* o, const prof::AllocationStack& stack, size_t requested,
                 const MmapArray<Region>& loader_text) {
  if (requested < o->size) o->size = requested;
  if (stack.leaf != nullptr && InRegions(loader_text, reinterpret_cast<uintptr_t>(stack.leaf)))
    o->flags |= kRootObject;
  return true;
}

// Exact mode gives most objects' records with the walk (side slots): decoded here, in one pass
// over memory the walk just touched, instead of a table lookup per object later.
void CollectObjectWithSlot(void* ctx, void* object, size_t size, uint64_t slot) {
  auto* s = static_cast<SnapshotState*>(ctx);
  HeapObject o{reinterpret_cast<uintptr_t>(object), size, 0, kNeedsLookup};
  prof::AllocationStack stack{};
  size_t requested = 0;
  if (slot != 0 && prof::DecodeAllocationSlot(slot, &stack, &requested)) {
    ApplyRecord(&o, stack, requested, *s->loader_text);
    o.aux = 0;
  }
  if (!s->objects->PushBack(o)) s->ok = false;
}

// All scratch memory of a check, kept between checks (mappings are reused).
struct Scratch {
  ProcMaps maps;
  LoadedModules modules;
  MmapArray<uintptr_t> ignored;
  MmapArray<HeapObject> objects;
  MmapArray<Region> roots;
  MmapArray<uintptr_t> registers;
  MmapArray<uint8_t> states;
  MmapArray<uint8_t> states_unaligned;
  MmapArray<uint8_t> states_other_rule;  // the second flood, with the other interior rule
  MmapArray<uint32_t> work;
  MmapArray<PageIndexEntry> page_index;
  MmapArray<Region> unreadable;
  MmapArray<uintptr_t> stack_blocks;  // heap blocks threads use as stacks
  AnonymousRoots anonymous;
};

// Heap blocks that threads run on (roots.h): live, their live part already a root region.
void MarkStackBlocks(const MmapArray<uintptr_t>& blocks, MmapArray<HeapObject>* objects) {
  for (uintptr_t start : blocks) {
    HeapObject* o = std::lower_bound(objects->begin(), objects->end(), start,
                                     [](const HeapObject& a, uintptr_t b) { return a.start < b; });
    if (o != objects->end() && o->start == start) o->flags |= kLiveObject;
  }
}

alignas(Scratch) unsigned char g_scratch_storage[sizeof(Scratch)];
Scratch* g_scratch = nullptr;

Scratch& GetScratch() {
  if (g_scratch == nullptr) g_scratch = new (g_scratch_storage) Scratch();
  return *g_scratch;
}

// World running: check_steps.h, PrepareCheck.
bool PrepareWhileRunning(Scratch& s, bool populate) {
  if (!CollectModules(&s.modules) || !IgnoreListCopySorted(&s.ignored)) {
    internal::Log("leak check: out of memory while collecting roots; no check done");
    return false;
  }
  s.objects.Clear();
  s.roots.Clear();
  s.registers.Clear();
  PrepareAnonymousRoots(&s.anonymous);  // refused: the copy below says incomplete
  // Pre-size the snapshot from the profiler's count of recorded live objects (plus slack for
  // unrecorded ones and what threads allocate until they stop) and fault its pages in with one
  // call each, so the stopped phase seldom mremaps or takes a page fault per 4 KiB. The
  // flood's work stack is only reserved: it grows as deep as the heap's pointer graph is
  // wide (a tree or a list: a few pages), seldom to one entry per object.
  const size_t recorded = prof::RecordedLiveObjects();
  const size_t expect = recorded + recorded / 64 + (1 << 12);
  if (populate) {
    s.objects.ReservePopulated(expect);
    s.states.ReservePopulated(expect);
  } else {  // address space only: no page for the fork to copy (not even an earlier check's)
    s.objects.ClearAndDepopulate();
    s.states.ClearAndDepopulate();
    s.states_unaligned.ClearAndDepopulate();
    s.states_other_rule.ClearAndDepopulate();
    s.work.ClearAndDepopulate();
    s.page_index.ClearAndDepopulate();
    s.objects.Reserve(expect);
    s.states.Reserve(expect);
  }
  s.work.Reserve(expect);
  return true;
}

// 0. The address space, read with the world stopped: every thread's stack and TLS is in it,
// and no thread can start, exit or map memory between this read and the scan (a maps read
// taken before the stop missed the stacks of threads started since). System calls only.
// False (said in one line) if the check cannot be done.
bool ReadAddressSpace(Scratch& s) {
  if (!s.maps.Read()) {
    internal::Log("leak check: cannot read /proc/self/maps; no check done");
    return false;
  }
  CopyRuntimeMappingsStopped(&s.anonymous);  // the same moment as the maps
  if (!s.maps.CollectUnreadable(&s.unreadable)) {
    internal::Log("leak check: out of memory (mmap refused) while reading the address space");
    return false;
  }
  return true;
}

// 1. Snapshot of the live heap, with the records of objects that have side slots, sorted by
// address (the allocator walks its page map in address order: sorting is only a fallback).
bool SnapshotHeap(Scratch& s, const CheckConfig& config) {
  SnapshotState st{&s.objects, &s.modules.loader_text, true};
  alloc::ForEachLiveObjectWithSlot(CollectObjectWithSlot, &st);
  bool ok = st.ok;
  const size_t n = s.objects.size();
  const auto by_start = [](const HeapObject& a, const HeapObject& b) { return a.start < b.start; };
  if (!std::is_sorted(s.objects.begin(), s.objects.end(), by_start))
    std::sort(s.objects.begin(), s.objects.end(), by_start);
  ok = ok && s.states.Resize(n) && s.work.Resize(n);
  if (config.test_pointer_alignment) ok = ok && s.states_unaligned.Resize(n);
  if (config.compare_other_pointer_rule) ok = ok && s.states_other_rule.Resize(n);
  return ok;
}

// 2. Sizes (and the first frame) of the other objects from the profiler's table; root
// objects.
void ResolveObjects(Scratch& s, CheckResult* out) {
  size_t ignored_index = 0;
  for (HeapObject& o : s.objects) {
    if (o.aux == kNeedsLookup) {
      o.aux = 0;
      prof::AllocationStack stack{};
      size_t requested = 0;
      if (prof::LookupAllocationStack(reinterpret_cast<const void*>(o.start), &stack, &requested)) {
        ApplyRecord(&o, stack, requested, s.modules.loader_text);
      } else {
        o.flags |= kRootObject;
        ++out->unrecorded_objects;
      }
    }
    while (ignored_index < s.ignored.size() && s.ignored[ignored_index] < o.start) ++ignored_index;
    if (ignored_index < s.ignored.size() && s.ignored[ignored_index] == o.start)
      o.flags |= kRootObject;
  }
}

// 3. Roots: writable segments of the loaded modules, every thread's stack and TLS, the
// registers of the stopped threads and the checking thread's (self.regs). A thread whose stack no
// mapping holds goes to *unmapped (the report names it).
bool CollectRoots(Scratch& s, const CheckConfig& config, const CheckingThread& self,
                  const ThreadStopper& stopper, UnscannedThreads* unmapped) {
  bool ok = true;
  if (config.scan_globals) {
    for (const Region& r : s.modules.writable)
      ok = ok && s.maps.AddReadable(r.start, r.end, &s.roots);
  }
  if (!ok || !config.scan_threads) return ok;
  for (int i = 0; i < self.reg_count; ++i) ok = ok && s.registers.PushBack(self.regs[i]);
  s.stack_blocks.Clear();
  auto add = [&](pid_t tid, uintptr_t sp, uintptr_t tp, bool interrupted) {
    const ThreadRegions added = AddThreadRegions(s.maps, sp, tp, interrupted, tid == self.pid,
                                                 &s.roots, &s.stack_blocks, &s.anonymous.excluded);
    if (added == ThreadRegions::kStackNotMapped) unmapped->Add(tid);
    return added != ThreadRegions::kOutOfMemory;
  };
  ok = ok && add(self.tid, self.entry_sp, self.thread_pointer, false);
  for (size_t t = 0; ok && t < stopper.slot_count(); ++t) {
    const StoppedThread* th = stopper.thread(t);
    if (th == nullptr) continue;
    for (int r = 0; r < th->register_count; ++r) ok = ok && s.registers.PushBack(th->registers[r]);
    ok = ok && add(th->tid, th->sp, th->thread_pointer, true);
  }
  if (ok) MarkStackBlocks(s.stack_blocks, &s.objects);
  if (ok && !s.registers.empty()) {
    uintptr_t b = reinterpret_cast<uintptr_t>(s.registers.data());
    ok = s.roots.PushBack({b, b + s.registers.size() * sizeof(uintptr_t)});
  }
  return ok;
}

// 3b. The program's anonymous memory (anonymous_roots.h), once the stacks are known.
bool CollectAnonymousRoots(Scratch& s, const CheckConfig& config, const ThreadStopper& stopper,
                           AnonymousRootsStats* stats) {
  *stats = AnonymousRootsStats{};
  if (!config.scan_globals || !config.scan_anonymous) return true;
  if (stopper.unstopped_count() > 0) {  // it may unmap its memory under the scan
    stats->outcome = AnonymousRootsOutcome::kThreadsRunning;
    return true;
  }
  return AddAnonymousRegions(s.maps, s.modules, &s.anonymous, &s.roots, stats);
}

// 4b. The second flood, with the other interior-pointer rule (OtherPointerRule in
// leak_check.h), over the same objects, roots and page directory. A bounded rule's other (any
// interior pointer) can only keep more objects alive, so without leaks there is nothing to
// change; any interior pointer's other (1024 B) may make reachable objects leaks, so it always
// runs. Left out when the check's own flood took longer than the budget.
bool FloodWithOtherRule(Scratch& s, const FloodOptions& flood, const PageIndex& index,
                        const FloodStats& first, double first_seconds, CheckResult* out) {
  OtherPointerRule& other = out->other_rule;
  other.max_pointer_offset = OtherMaxPointerOffset(flood.max_pointer_offset);
  other.first_flood_us = static_cast<uint64_t>(first_seconds * 1e6);
  if (flood.max_pointer_offset >= 0 && first.leaked_direct + first.leaked_indirect == 0)
    return true;
  if (first_seconds > OtherPointerRule::kOtherRuleFloodBudgetSeconds) {
    other.outcome = OtherPointerRule::Outcome::kFloodTooLong;
    return true;
  }
  FloodOptions rule = flood;
  rule.max_pointer_offset = other.max_pointer_offset;
  if (!Flood(s.objects.data(), s.objects.size(), s.roots.data(), s.roots.size(), rule,
             s.states_other_rule.data(), s.work.data(), nullptr, &index))
    return false;
  other.outcome = OtherPointerRule::Outcome::kComputed;
  return true;
}

// 4. Flood (with a page directory for its pointer lookups when memory allows; the result is
// the same without); again with the other interior-pointer rule; again with any alignment when
// leaks were found and the config asks.
bool FloodHeap(Scratch& s, const CheckConfig& config, CheckResult* out) {
  const size_t n = s.objects.size();
  PageIndex index;
  const size_t cap = PageIndexCapacity(s.objects.data(), n);
  if (s.page_index.Resize(cap)) {
    memset(s.page_index.data(), 0, cap * sizeof(PageIndexEntry));
    index = BuildPageIndex(s.objects.data(), n, s.page_index.data(), cap);
  }
  FloodStats stats;
  FloodOptions flood = config.flood;
  flood.unreadable = s.unreadable.data();
  flood.unreadable_count = s.unreadable.size();
  const double flood_start = internal::MonotonicSeconds();
  bool ok = Flood(s.objects.data(), n, s.roots.data(), s.roots.size(), flood, s.states.data(),
                  s.work.data(), &stats, &index);
  const double flood_seconds = internal::MonotonicSeconds() - flood_start;
  out->unreadable_ranges_skipped = stats.unreadable_ranges_skipped;
  out->unreadable_bytes_skipped = stats.unreadable_bytes_skipped;
  if (config.compare_other_pointer_rule)
    ok = ok && FloodWithOtherRule(s, flood, index, stats, flood_seconds, out);
  if (ok && config.test_pointer_alignment && stats.leaked_direct + stats.leaked_indirect > 0) {
    FloodOptions any = flood;
    any.source_alignment = 1;
    ok = Flood(s.objects.data(), n, s.roots.data(), s.roots.size(), any, s.states_unaligned.data(),
               s.work.data(), nullptr, &index);
  }
  return ok;
}

// 5. Leak records (stacks copied: the table may change once the world runs again) and the
// reachable totals. Objects in `baseline` (nullptr: none) are not reported.
bool RecordLeaks(const Scratch& s, const CheckConfig& config, const MmapArray<uintptr_t>* baseline,
                 CheckResult* out) {
  bool ok = true;
  const bool other_rule = out->other_rule.outcome == OtherPointerRule::Outcome::kComputed;
  for (size_t i = 0; ok && i < s.objects.size(); ++i) {
    const HeapObject& o = s.objects[i];
    const uint8_t state = s.states[i];
    const bool in_baseline =
        baseline != nullptr && std::binary_search(baseline->begin(), baseline->end(), o.start);
    const bool other_rule_reachable = other_rule && s.states_other_rule[i] == kReachable;
    if (state == kReachable) {
      ++out->reachable_objects;
      out->reachable_bytes += o.size;
      if (other_rule && !other_rule_reachable && !in_baseline) {
        ++out->other_rule.lost_objects;
        out->other_rule.lost_bytes += o.size;
      }
      continue;
    }
    if (in_baseline) continue;
    prof::AllocationStack stack{};
    size_t requested = 0;
    if (!prof::LookupAllocationStack(reinterpret_cast<const void*>(o.start), &stack, &requested))
      stack = {};
    LeakRecord rec{};
    rec.address = o.start;
    rec.bytes = o.size;
    rec.pc_offset = static_cast<uint32_t>(out->pcs.size());
    rec.state = state;
    rec.unaligned_reachable = config.test_pointer_alignment && s.states_unaligned[i] == kReachable;
    rec.other_rule_reachable = other_rule_reachable;
    void* frames[prof::kMaxStackDepth];
    const int depth = prof::ReadAllocationStack(stack, frames, prof::kMaxStackDepth);
    rec.depth = static_cast<uint16_t>(depth);
    for (int d = 0; d < depth; ++d)
      ok = ok && out->pcs.PushBack(reinterpret_cast<uintptr_t>(frames[d]));
    ok = ok && out->leaks.PushBack(rec);
    out->leaked_bytes += o.size;
  }
  return ok;
}

}  // namespace

bool PrepareCheck(bool populate) { return PrepareWhileRunning(GetScratch(), populate); }

bool AnalyzeFrozenProcess(const CheckConfig& config, const CheckingThread& self,
                          const ThreadStopper& stopper, const MmapArray<uintptr_t>* baseline,
                          CheckResult* out) {
  Scratch& s = GetScratch();
  if (!ReadAddressSpace(s)) return false;
  bool ok = SnapshotHeap(s, config);
  if (ok) ResolveObjects(s, out);
  ok = ok && CollectRoots(s, config, self, stopper, &out->stack_not_mapped);
  ok = ok && CollectAnonymousRoots(s, config, stopper, &out->anonymous);
  ok = ok && FloodHeap(s, config, out);
  ok = ok && RecordLeaks(s, config, baseline, out);
  out->live_objects = s.objects.size();
  if (!ok) internal::Log("leak check: out of memory (mmap refused) during the check; no result");
  return ok;
}

bool ListLiveObjects() {
  Scratch& s = GetScratch();
  s.objects.Clear();
  SnapshotState st{&s.objects, nullptr, true};
  alloc::ForEachLiveObject(CollectObject, &st);
  return st.ok;
}

bool CopyListedObjectStarts(MmapArray<uintptr_t>* out) {
  const Scratch& s = GetScratch();
  out->Clear();
  for (const HeapObject& o : s.objects)
    if (!out->PushBack(o.start)) return false;
  std::sort(out->begin(), out->end());
  return true;
}

}  // namespace heapkit::check
