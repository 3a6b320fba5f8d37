#include "heapcheck/ignore_list.h"

#include <algorithm>
#include <new>

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/live_objects.h"

namespace heapkit::check {
namespace {

internal::SpinLock g_lock;
MmapArray<uintptr_t>* g_list HEAPKIT_GUARDED_BY(g_lock) = nullptr;
alignas(MmapArray<uintptr_t>) unsigned char g_list_storage[sizeof(MmapArray<uintptr_t>)];
__thread int tls_disabler_depth __attribute__((tls_model("initial-exec"))) = 0;

MmapArray<uintptr_t>& List() HEAPKIT_REQUIRES(g_lock) {
  if (g_list == nullptr) g_list = new (g_list_storage) MmapArray<uintptr_t>();
  return *g_list;
}

}  // namespace

int& DisablerDepth() { return tls_disabler_depth; }

bool IgnoreListAdd(uintptr_t object) {
  internal::SpinLockHolder hold(&g_lock);
  auto& list = List();
  for (uintptr_t a : list)
    if (a == object) return true;
  return list.PushBack(object);
}

bool IgnoreListRemove(uintptr_t object) {
  internal::SpinLockHolder hold(&g_lock);
  auto& list = List();
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == object) {
      list[i] = list[list.size() - 1];
      list.Resize(list.size() - 1);
      return true;
    }
  }
  return false;
}

// Analysis off: the lock is taken only if free (TryLock), and released only if taken.
bool IgnoreListCopySorted(MmapArray<uintptr_t>* out) HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  out->Clear();
  bool locked = g_lock.TryLock();
  bool ok = true;
  if (g_list != nullptr) {
    for (uintptr_t a : *g_list) {
      if (!out->PushBack(a)) {
        ok = false;
        break;
      }
    }
  }
  if (locked) g_lock.Unlock();
  std::sort(out->begin(), out->end());
  return ok;
}

void IgnoreHeapObject(const void* ptr) {
  uintptr_t start = 0;
  size_t size = 0;
  if (ptr == nullptr || !alloc::FindHeapObject(reinterpret_cast<uintptr_t>(ptr), &start, &size)) {
    internal::Log("IgnoreObject: %p is not a heap object; nothing to ignore", ptr);
    return;
  }
  if (!IgnoreListAdd(start)) internal::Log("IgnoreObject: out of memory");
}

void UnignoreHeapObject(const void* ptr) {
  uintptr_t start = 0;
  size_t size = 0;
  if (ptr == nullptr || !alloc::FindHeapObject(reinterpret_cast<uintptr_t>(ptr), &start, &size) ||
      !IgnoreListRemove(start)) {
    internal::Log("UnIgnoreObject: %p was not ignored", ptr);
  }
}

}  // namespace heapkit::check

// Declared in <gperftools/heap-checker.h>, whose inline IgnoreObject template calls it: the
// public header reaches the ignore list directly, not through a member of the class it declares.
extern "C" __attribute__((visibility("default"))) void HeapLeakChecker_IgnoreObject(
    const void* ptr) {
  heapkit::check::IgnoreHeapObject(ptr);
}
