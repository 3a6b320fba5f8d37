// <gperftools/heap-checker.h>: HeapLeakChecker, Disabler, IgnoreObject, HeapCleaner.
#include <gperftools/heap-checker.h>

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "heapcheck/check_driver.h"
#include "heapcheck/heap_cleanups.h"
#include "heapcheck/ignore_list.h"
#include "heapcheck/mmap_array.h"
#include "profiler/sample_recorder.h"
#include "profiler/table/sampled_objects.h"
#include "profiler/capture/stack_capture.h"

namespace heapkit::check {

struct DisablerState {
  void* pcs[prof::kMaxStackDepth];
  int depth;
  MmapArray<uintptr_t> before;
};
void IgnoreAllocationsSince(DisablerState* st);

namespace {

struct NamedState {
  char name[256];
  MmapArray<uintptr_t> baseline;
  bool whole_program;
  bool checked;
  ssize_t bytes;
  ssize_t objects;
};

alignas(HeapLeakChecker) unsigned char g_global_storage[sizeof(HeapLeakChecker)];
HeapLeakChecker* g_global = nullptr;
internal::SpinLock g_global_lock;

}  // namespace

void IgnoreAllocationsSince(DisablerState* st) {
  MmapArray<uintptr_t> after;
  if (st->depth < 2 || !SnapshotLiveObjects(&after)) return;
  // The owner's callers: pcs[1..depth) (pcs[0] is a site inside the owner itself).
  const int tail = st->depth - 1;
  void* const* want = st->pcs + 1;
  for (uintptr_t object : after) {
    if (std::binary_search(st->before.begin(), st->before.end(), object)) continue;
    prof::AllocationStack stack{};
    size_t size = 0;
    if (!prof::LookupAllocationStack(reinterpret_cast<const void*>(object), &stack, &size))
      continue;
    void* frames[prof::kMaxStackDepth];
    const int depth = prof::ReadAllocationStack(stack, frames, prof::kMaxStackDepth);
    if (depth <= tail) continue;
    bool match = true;
    for (int i = 0; i < tail && match; ++i) match = frames[depth - tail + i] == want[i];
    if (match) IgnoreListAdd(object);
  }
}

}  // namespace heapkit::check

using heapkit::check::NamedState;
namespace hc = heapkit::check;

bool HeapLeakChecker::IsActive() {
  hc::InitCheckerFromEnvironment();
  return hc::CheckerActive();
}

HeapLeakChecker* HeapLeakChecker::GlobalChecker() {
  hc::InitCheckerFromEnvironment();
  if (!hc::CheckerSettings().global_check_pending) return nullptr;
  heapkit::internal::SpinLockHolder h(&hc::g_global_lock);
  if (hc::g_global == nullptr) hc::g_global = new (hc::g_global_storage) HeapLeakChecker("_main_");
  return hc::g_global;
}

bool HeapLeakChecker::NoGlobalLeaks() {
  HeapLeakChecker* main = GlobalChecker();
  if (main == nullptr) return true;
  hc::RunHeapCleanupsOnce();
  return main->NoLeaks();
}

void HeapLeakChecker::CancelGlobalCheck() {
  hc::InitCheckerFromEnvironment();
  if (hc::CheckerSettings().global_check_pending)
    heapkit::internal::LogRaw("Canceling the automatic at-exit whole-program memory leak check");
  hc::CheckerSettings().global_check_pending = false;
}

HeapLeakChecker::HeapLeakChecker(const char* name) : state_(nullptr) {
  hc::InitCheckerFromEnvironment();
  void* mem =
      mmap(nullptr, sizeof(NamedState), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  auto* st = new (mem) NamedState();
  if (name == nullptr || name[0] == '\0') name = "unnamed";
  size_t i = 0;
  for (; name[i] != '\0' && i + 1 < sizeof(st->name); ++i)
    st->name[i] = name[i] == '/' ? '_' : name[i];  // the name is part of a file name
  st->name[i] = '\0';
  st->whole_program = std::strcmp(st->name, "_main_") == 0;
  if (hc::CheckerActive() && !st->whole_program) hc::SnapshotLiveObjects(&st->baseline);
  state_ = st;
}

HeapLeakChecker::~HeapLeakChecker() {
  auto* st = static_cast<NamedState*>(state_);
  if (st == nullptr) return;
  st->~NamedState();
  munmap(st, sizeof(NamedState));
}

__attribute__((noinline)) bool HeapLeakChecker::NoLeaks() {
  uintptr_t regs[6];
  HEAPKIT_CAPTURE_CALLEE_SAVED(regs);
  const uintptr_t sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  auto* st = static_cast<NamedState*>(state_);
  if (st == nullptr || !hc::CheckerActive()) return true;
  uint64_t bytes = 0, objects = 0;
  bool clean = hc::CheckAndReport(st->name, sp, regs, 6,
                                  st->whole_program ? nullptr : &st->baseline, &bytes, &objects);
  st->checked = true;
  st->bytes = static_cast<ssize_t>(bytes);
  st->objects = static_cast<ssize_t>(objects);
  return clean;
}

bool HeapLeakChecker::QuickNoLeaks() { return NoLeaks(); }
bool HeapLeakChecker::BriefNoLeaks() { return NoLeaks(); }
bool HeapLeakChecker::SameHeap() { return NoLeaks(); }
bool HeapLeakChecker::QuickSameHeap() { return NoLeaks(); }
bool HeapLeakChecker::BriefSameHeap() { return NoLeaks(); }
bool HeapLeakChecker::DoNoLeaks() { return NoLeaks(); }

ssize_t HeapLeakChecker::BytesLeaked() const {
  auto* st = static_cast<NamedState*>(state_);
  return st == nullptr ? 0 : st->bytes;
}

ssize_t HeapLeakChecker::ObjectsLeaked() const {
  auto* st = static_cast<NamedState*>(state_);
  return st == nullptr ? 0 : st->objects;
}

// Disabler. Preferred: the profiler stops recording this thread (weak hook). Fallback, while the
// profiler lacks that hook: the outermost Disabler of a thread snapshots the live objects and
// its own call stack; at destruction, objects that appeared meanwhile and whose allocation
// stack ends with the Disabler owner's callers (so: allocated on this call path while the
// Disabler lived) are added to the ignore list.
__attribute__((noinline)) HeapLeakChecker::Disabler::Disabler() : state_(nullptr) {
  if (hc::DisablerDepth()++ != 0) return;
  if (heapkit::prof::SetThreadRecordingDisabled != nullptr) {
    heapkit::prof::SetThreadRecordingDisabled(true);
    return;
  }
  if (!hc::CheckerActive()) return;
  void* mem = mmap(nullptr, sizeof(hc::DisablerState), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return;
  auto* st = new (mem) hc::DisablerState();
  st->depth = heapkit::prof::CaptureStack(st->pcs, heapkit::prof::kMaxStackDepth, 0);
  hc::SnapshotLiveObjects(&st->before);
  state_ = st;
}

HeapLeakChecker::Disabler::~Disabler() {
  if (--hc::DisablerDepth() != 0) return;
  if (heapkit::prof::SetThreadRecordingDisabled != nullptr) {
    heapkit::prof::SetThreadRecordingDisabled(false);
    return;
  }
  auto* st = static_cast<hc::DisablerState*>(state_);
  if (st == nullptr) return;
  hc::IgnoreAllocationsSince(st);
  st->~DisablerState();
  munmap(st, sizeof(hc::DisablerState));
}

void HeapLeakChecker::DoIgnoreObject(const void* ptr) { hc::IgnoreHeapObject(ptr); }

void HeapLeakChecker::UnIgnoreObject(const void* ptr) { hc::UnignoreHeapObject(ptr); }

HeapCleaner::HeapCleaner(void_function f) { hc::RegisterHeapCleanup(f); }

void HeapCleaner::RunHeapCleanups() { hc::RunHeapCleanupsOnce(); }
