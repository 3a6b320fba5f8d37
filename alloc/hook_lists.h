// The MallocHook lists (<gperftools/malloc_hook.h>): every kind's hooks, the registry's lock, and
// the calls of the New and Delete hooks from the allocator's paths (observer_hooks.h, hooked
// mode). Below both the API that fills the lists (malloc_hook.cc) and the paths that call them
// (sampling.cc, allocator.cc), so that neither depends on the other through them.
#pragma once

#include <gperftools/malloc_hook.h>

#include <atomic>

#include "alloc/internal/spin_lock.h"

namespace heapkit::alloc {

// The hooks of one kind: kAdded slots filled by Add, plus the deprecated Set's own slot.
// Readers load the slots without a lock; writers hold hook_registry_lock.
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
// from it (malloc_hook.cc).
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

// Changes of the lists hold this lock (readers take none).
extern internal::SpinLock hook_registry_lock;
#define HEAPKIT_HOOK_LIST(Name, list) extern HookList<MallocHook_##Name##Hook> list;
HEAPKIT_HOOK_KINDS(HEAPKIT_HOOK_LIST)
#undef HEAPKIT_HOOK_LIST
#define HEAPKIT_REPLACEMENT_LIST(Name, list) extern HookList<MallocHook_##Name##Replacement> list;
HEAPKIT_REPLACEMENT_KINDS(HEAPKIT_REPLACEMENT_LIST)
#undef HEAPKIT_REPLACEMENT_LIST

}  // namespace heapkit::alloc
