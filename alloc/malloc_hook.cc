// MallocHook (<gperftools/malloc_hook.h>, <gperftools/malloc_hook_c.h>): the C and C++ API over
// the hook lists (hook_lists.h), and the switch into hooked mode (observer_hooks.h) when New or
// Delete hooks come and go.
#include <gperftools/malloc_hook.h>

#include <sys/mman.h>

#include <atomic>

#include "alloc/hook_lists.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/observer_hooks.h"

namespace heapkit::alloc {
namespace {

// After a change of the New or Delete lists (hook_registry_lock held).
void UpdateHookedMode() {
  const bool active = !new_hooks.Empty() || !delete_hooks.Empty();
  if (active != g_malloc_hooks_active.load(std::memory_order_relaxed)) SetMallocHooksActive(active);
}

template <typename List, typename Hook>
int Add(List& list, Hook hook) {
  internal::SpinLockHolder h(&hook_registry_lock);
  const bool added = list.Add(hook);
  UpdateHookedMode();
  return added;
}
template <typename List, typename Hook>
int Remove(List& list, Hook hook) {
  internal::SpinLockHolder h(&hook_registry_lock);
  const bool removed = list.Remove(hook);
  UpdateHookedMode();
  return removed;
}
template <typename List, typename Hook>
Hook Set(List& list, Hook hook) {
  internal::SpinLockHolder h(&hook_registry_lock);
  Hook previous = list.Set(hook);
  UpdateHookedMode();
  return previous;
}
// Replacements: Set fails while one is installed; Remove only removes that one.
template <typename List, typename Hook>
int SetReplacement(List& list, Hook hook) {
  internal::SpinLockHolder h(&hook_registry_lock);
  if (hook == nullptr || list.GetSet() != nullptr) return 0;
  list.Set(hook);
  return 1;
}
template <typename List, typename Hook>
int RemoveReplacement(List& list, Hook hook) {
  internal::SpinLockHolder h(&hook_registry_lock);
  if (hook == nullptr || list.GetSet() != hook) return 0;
  list.Set(nullptr);
  return 1;
}

}  // namespace

}  // namespace heapkit::alloc

using namespace heapkit::alloc;  // NOLINT: the C API below is a list of one-line forwards

#define HEAPKIT_HOOK_API extern "C" __attribute__((visibility("default")))

HEAPKIT_HOOK_API int MallocHook_GetCallerStackTrace(void** result, int max_depth, int skip_count) {
  const StackCaptureHook capture = GetStackCaptureHook();
  if (capture == nullptr || result == nullptr || max_depth <= 0) return 0;
  return capture(result, max_depth, skip_count < 0 ? 1 : skip_count + 1);
}

// Per kind: the C API's Add, Remove and the deprecated Set, and the C++ class's Get (the hook in
// the Set slot).
#define HEAPKIT_HOOK_API_OF(Name, list)                                                            \
  HEAPKIT_HOOK_API int MallocHook_Add##Name##Hook(MallocHook_##Name##Hook h) {                     \
    return Add(list, h);                                                                           \
  }                                                                                                \
  HEAPKIT_HOOK_API int MallocHook_Remove##Name##Hook(MallocHook_##Name##Hook h) {                  \
    return Remove(list, h);                                                                        \
  }                                                                                                \
  HEAPKIT_HOOK_API MallocHook_##Name##Hook MallocHook_Set##Name##Hook(MallocHook_##Name##Hook h) { \
    return Set(list, h);                                                                           \
  }                                                                                                \
  MallocHook::Name##Hook MallocHook::Get##Name##Hook() { return list.GetSet(); }
HEAPKIT_HOOK_KINDS(HEAPKIT_HOOK_API_OF)
#undef HEAPKIT_HOOK_API_OF

#define HEAPKIT_REPLACEMENT_API_OF(Name, list)                                                  \
  HEAPKIT_HOOK_API int MallocHook_Set##Name##Replacement(MallocHook_##Name##Replacement h) {    \
    return SetReplacement(list, h);                                                             \
  }                                                                                             \
  HEAPKIT_HOOK_API int MallocHook_Remove##Name##Replacement(MallocHook_##Name##Replacement h) { \
    return RemoveReplacement(list, h);                                                          \
  }
HEAPKIT_REPLACEMENT_KINDS(HEAPKIT_REPLACEMENT_API_OF)
#undef HEAPKIT_REPLACEMENT_API_OF

// ---- the C++ class's hook invocations -------------------------------------------------------
void MallocHook::InvokeNewHookSlow(const void* p, size_t s) { InvokeNewHooks(p, s); }
void MallocHook::InvokeDeleteHookSlow(const void* p) { InvokeDeleteHooks(p); }
void MallocHook::InvokePreMmapHookSlow(const void* start, size_t size, int protection, int flags,
                                       int fd, off_t offset) {
  pre_mmap_hooks.Invoke(start, size, protection, flags, fd, offset);
}
void MallocHook::InvokeMmapHookSlow(const void* result, const void* start, size_t size,
                                    int protection, int flags, int fd, off_t offset) {
  mmap_hooks.Invoke(result, start, size, protection, flags, fd, offset);
}
bool MallocHook::InvokeMmapReplacementSlow(const void* start, size_t size, int protection,
                                           int flags, int fd, off_t offset, void** result) {
  return mmap_replacement.InvokeReplacement(start, size, protection, flags, fd, offset, result);
}
void MallocHook::InvokeMunmapHookSlow(const void* p, size_t size) { munmap_hooks.Invoke(p, size); }
bool MallocHook::InvokeMunmapReplacementSlow(const void* p, size_t size, int* result) {
  return munmap_replacement.InvokeReplacement(p, size, result);
}
void MallocHook::InvokeMremapHookSlow(const void* result, const void* old_addr, size_t old_size,
                                      size_t new_size, int flags, const void* new_addr) {
  mremap_hooks.Invoke(result, old_addr, old_size, new_size, flags, new_addr);
}
void MallocHook::InvokePreSbrkHookSlow(ptrdiff_t increment) { pre_sbrk_hooks.Invoke(increment); }
void MallocHook::InvokeSbrkHookSlow(const void* result, ptrdiff_t increment) {
  sbrk_hooks.Invoke(result, increment);
}

void* MallocHook::UnhookedMMap(void* start, size_t length, int prot, int flags, int fd,
                               off_t offset) {
  void* result;
  if (InvokeMmapReplacementSlow(start, length, prot, flags, fd, offset, &result)) return result;
  return mmap(start, length, prot, flags, fd, offset);
}

int MallocHook::UnhookedMUnmap(void* start, size_t length) {
  int result;
  if (InvokeMunmapReplacementSlow(start, length, &result)) return result;
  return munmap(start, length);
}
