// MallocHook (<gperftools/malloc_hook.h>, <gperftools/malloc_hook_c.h>): the hook lists, the
// C API, and the switch into hooked mode (observer_hooks.h) when New or Delete hooks come and go.
#include <gperftools/malloc_hook.h>

#include <sys/mman.h>

#include <atomic>

#include "alloc/internal/spin_lock.h"
#include "alloc/observer_hooks.h"

namespace heapkit::alloc {
namespace {

// The hooks of one kind: kAdded slots filled by Add, plus the deprecated Set's own slot.
// Readers load the slots without a lock; writers hold registry_lock.
template <typename Hook>
class HookList {
 public:
  bool Add(Hook hook) {
    if (hook == nullptr) return false;
    for (int i = 0; i < kAdded; ++i) {
      if (slots_[i].load(std::memory_order_relaxed) == nullptr) {
        slots_[i].store(hook, std::memory_order_release);
        return true;
      }
    }
    return false;
  }
  bool Remove(Hook hook) {
    if (hook == nullptr) return false;
    for (int i = 0; i < kAdded; ++i) {
      if (slots_[i].load(std::memory_order_relaxed) == hook) {
        slots_[i].store(nullptr, std::memory_order_release);
        return true;
      }
    }
    return false;
  }
  Hook Set(Hook hook) { return slots_[kSetSlot].exchange(hook, std::memory_order_acq_rel); }
  Hook GetSet() const { return slots_[kSetSlot].load(std::memory_order_acquire); }
  bool Empty() const {
    for (const auto& slot : slots_) {
      if (slot.load(std::memory_order_relaxed) != nullptr) return false;
    }
    return true;
  }
  template <typename... Args>
  void Invoke(Args... args) const {
    for (const auto& slot : slots_) {
      if (Hook hook = slot.load(std::memory_order_acquire); hook != nullptr) hook(args...);
    }
  }
  // Replacements: the one in the Set slot, if any; true if it handled the call.
  template <typename... Args>
  bool InvokeReplacement(Args... args) const {
    Hook hook = GetSet();
    return hook != nullptr && hook(args...) != 0;
  }

 private:
  static constexpr int kAdded = 7;  // as in gperftools: Add fails beyond seven
  static constexpr int kSetSlot = kAdded;
  std::atomic<Hook> slots_[kAdded + 1] = {};
};

constinit internal::SpinLock registry_lock;
constinit HookList<MallocHook_NewHook> new_hooks;
constinit HookList<MallocHook_DeleteHook> delete_hooks;
constinit HookList<MallocHook_PreMmapHook> pre_mmap_hooks;
constinit HookList<MallocHook_MmapHook> mmap_hooks;
constinit HookList<MallocHook_MmapReplacement> mmap_replacement;
constinit HookList<MallocHook_MunmapHook> munmap_hooks;
constinit HookList<MallocHook_MunmapReplacement> munmap_replacement;
constinit HookList<MallocHook_MremapHook> mremap_hooks;
constinit HookList<MallocHook_PreSbrkHook> pre_sbrk_hooks;
constinit HookList<MallocHook_SbrkHook> sbrk_hooks;

// Set while this thread runs a New or Delete hook: what the hook allocates is not reported.
__thread bool tls_in_hook __attribute__((tls_model("initial-exec"))) = false;

// After a change of the New or Delete lists (registry_lock held).
void UpdateHookedMode() {
  const bool active = !new_hooks.Empty() || !delete_hooks.Empty();
  if (active != g_malloc_hooks_active.load(std::memory_order_relaxed)) SetMallocHooksActive(active);
}

template <typename List, typename Hook>
int Add(List& list, Hook hook) {
  internal::SpinLockHolder h(&registry_lock);
  const bool added = list.Add(hook);
  UpdateHookedMode();
  return added;
}
template <typename List, typename Hook>
int Remove(List& list, Hook hook) {
  internal::SpinLockHolder h(&registry_lock);
  const bool removed = list.Remove(hook);
  UpdateHookedMode();
  return removed;
}
template <typename List, typename Hook>
Hook Set(List& list, Hook hook) {
  internal::SpinLockHolder h(&registry_lock);
  Hook previous = list.Set(hook);
  UpdateHookedMode();
  return previous;
}
// Replacements: Set fails while one is installed; Remove only removes that one.
template <typename List, typename Hook>
int SetReplacement(List& list, Hook hook) {
  internal::SpinLockHolder h(&registry_lock);
  if (hook == nullptr || list.GetSet() != nullptr) return 0;
  list.Set(hook);
  return 1;
}
template <typename List, typename Hook>
int RemoveReplacement(List& list, Hook hook) {
  internal::SpinLockHolder h(&registry_lock);
  if (hook == nullptr || list.GetSet() != hook) return 0;
  list.Set(nullptr);
  return 1;
}

}  // namespace

constinit std::atomic<bool> g_malloc_hooks_active{false};

void LockMallocHookRegistry() { registry_lock.Lock(); }
void UnlockMallocHookRegistry() { registry_lock.Unlock(); }

void InvokeNewHooks(const void* ptr, size_t size) {
  if (tls_in_hook) return;
  tls_in_hook = true;
  new_hooks.Invoke(ptr, size);
  tls_in_hook = false;
}

void InvokeDeleteHooks(const void* ptr) {
  if (tls_in_hook) return;
  tls_in_hook = true;
  delete_hooks.Invoke(ptr);
  tls_in_hook = false;
}

}  // namespace heapkit::alloc

using namespace heapkit::alloc;  // NOLINT: the C API below is a list of one-line forwards

#define HEAPKIT_HOOK_API extern "C" __attribute__((visibility("default")))

HEAPKIT_HOOK_API int MallocHook_GetCallerStackTrace(void** result, int max_depth,
                                                    int skip_count) {
  const StackCaptureHook capture = GetStackCaptureHook();
  if (capture == nullptr || result == nullptr || max_depth <= 0) return 0;
  return capture(result, max_depth, skip_count < 0 ? 1 : skip_count + 1);
}

HEAPKIT_HOOK_API int MallocHook_AddNewHook(MallocHook_NewHook h) { return Add(new_hooks, h); }
HEAPKIT_HOOK_API int MallocHook_RemoveNewHook(MallocHook_NewHook h) {
  return Remove(new_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_AddDeleteHook(MallocHook_DeleteHook h) {
  return Add(delete_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_RemoveDeleteHook(MallocHook_DeleteHook h) {
  return Remove(delete_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_AddPreMmapHook(MallocHook_PreMmapHook h) {
  return Add(pre_mmap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_RemovePreMmapHook(MallocHook_PreMmapHook h) {
  return Remove(pre_mmap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_AddMmapHook(MallocHook_MmapHook h) { return Add(mmap_hooks, h); }
HEAPKIT_HOOK_API int MallocHook_RemoveMmapHook(MallocHook_MmapHook h) {
  return Remove(mmap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_SetMmapReplacement(MallocHook_MmapReplacement h) {
  return SetReplacement(mmap_replacement, h);
}
HEAPKIT_HOOK_API int MallocHook_RemoveMmapReplacement(MallocHook_MmapReplacement h) {
  return RemoveReplacement(mmap_replacement, h);
}
HEAPKIT_HOOK_API int MallocHook_AddMunmapHook(MallocHook_MunmapHook h) {
  return Add(munmap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_RemoveMunmapHook(MallocHook_MunmapHook h) {
  return Remove(munmap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_SetMunmapReplacement(MallocHook_MunmapReplacement h) {
  return SetReplacement(munmap_replacement, h);
}
HEAPKIT_HOOK_API int MallocHook_RemoveMunmapReplacement(MallocHook_MunmapReplacement h) {
  return RemoveReplacement(munmap_replacement, h);
}
HEAPKIT_HOOK_API int MallocHook_AddMremapHook(MallocHook_MremapHook h) {
  return Add(mremap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_RemoveMremapHook(MallocHook_MremapHook h) {
  return Remove(mremap_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_AddPreSbrkHook(MallocHook_PreSbrkHook h) {
  return Add(pre_sbrk_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_RemovePreSbrkHook(MallocHook_PreSbrkHook h) {
  return Remove(pre_sbrk_hooks, h);
}
HEAPKIT_HOOK_API int MallocHook_AddSbrkHook(MallocHook_SbrkHook h) { return Add(sbrk_hooks, h); }
HEAPKIT_HOOK_API int MallocHook_RemoveSbrkHook(MallocHook_SbrkHook h) {
  return Remove(sbrk_hooks, h);
}

HEAPKIT_HOOK_API MallocHook_NewHook MallocHook_SetNewHook(MallocHook_NewHook h) {
  return Set(new_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_DeleteHook MallocHook_SetDeleteHook(MallocHook_DeleteHook h) {
  return Set(delete_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_PreMmapHook MallocHook_SetPreMmapHook(MallocHook_PreMmapHook h) {
  return Set(pre_mmap_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_MmapHook MallocHook_SetMmapHook(MallocHook_MmapHook h) {
  return Set(mmap_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_MunmapHook MallocHook_SetMunmapHook(MallocHook_MunmapHook h) {
  return Set(munmap_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_MremapHook MallocHook_SetMremapHook(MallocHook_MremapHook h) {
  return Set(mremap_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_PreSbrkHook MallocHook_SetPreSbrkHook(MallocHook_PreSbrkHook h) {
  return Set(pre_sbrk_hooks, h);
}
HEAPKIT_HOOK_API MallocHook_SbrkHook MallocHook_SetSbrkHook(MallocHook_SbrkHook h) {
  return Set(sbrk_hooks, h);
}

// ---- the C++ class's out-of-line members ------------------------------------------------------
MallocHook::NewHook MallocHook::GetNewHook() { return new_hooks.GetSet(); }
MallocHook::DeleteHook MallocHook::GetDeleteHook() { return delete_hooks.GetSet(); }
MallocHook::PreMmapHook MallocHook::GetPreMmapHook() { return pre_mmap_hooks.GetSet(); }
MallocHook::MmapHook MallocHook::GetMmapHook() { return mmap_hooks.GetSet(); }
MallocHook::MunmapHook MallocHook::GetMunmapHook() { return munmap_hooks.GetSet(); }
MallocHook::MremapHook MallocHook::GetMremapHook() { return mremap_hooks.GetSet(); }
MallocHook::PreSbrkHook MallocHook::GetPreSbrkHook() { return pre_sbrk_hooks.GetSet(); }
MallocHook::SbrkHook MallocHook::GetSbrkHook() { return sbrk_hooks.GetSet(); }

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
