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

// Every kind of hook, once: its name in the API (MallocHook_Add<Name>Hook, MallocHook::<Name>Hook,
// ...) and its list. The lists, the C API's Add/Remove/Set and the C++ class's Get are generated
// from it below.
#define HEAPKIT_HOOK_KINDS(X) \
  X(New, new_hooks)           \
  X(Delete, delete_hooks)     \
  X(PreMmap, pre_mmap_hooks)  \
  X(Mmap, mmap_hooks)         \
  X(Munmap, munmap_hooks)     \
  X(Mremap, mremap_hooks)     \
  X(PreSbrk, pre_sbrk_hooks)  \
  X(Sbrk, sbrk_hooks)
// The replacements (MallocHook_Set<Name>Replacement, MallocHook_Remove<Name>Replacement).
#define HEAPKIT_REPLACEMENT_KINDS(X) \
  X(Mmap, mmap_replacement)          \
  X(Munmap, munmap_replacement)

constinit internal::SpinLock registry_lock;
#define HEAPKIT_HOOK_LIST(Name, list) constinit HookList<MallocHook_##Name##Hook> list;
HEAPKIT_HOOK_KINDS(HEAPKIT_HOOK_LIST)
#undef HEAPKIT_HOOK_LIST
#define HEAPKIT_REPLACEMENT_LIST(Name, list) \
  constinit HookList<MallocHook_##Name##Replacement> list;
HEAPKIT_REPLACEMENT_KINDS(HEAPKIT_REPLACEMENT_LIST)
#undef HEAPKIT_REPLACEMENT_LIST

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

// Held across fork (analysis off: taken and released by two handlers).
void LockMallocHookRegistry() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { registry_lock.Lock(); }
void UnlockMallocHookRegistry() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { registry_lock.Unlock(); }

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
