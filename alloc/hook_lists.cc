// The MallocHook lists and the allocator's calls of the New and Delete hooks (hook_lists.h).
#include "alloc/hook_lists.h"

#include "alloc/observer_hooks.h"

namespace heapkit::alloc {

constinit internal::SpinLock hook_registry_lock;
#define HEAPKIT_HOOK_LIST(Name, list) constinit HookList<MallocHook_##Name##Hook> list;
HEAPKIT_HOOK_KINDS(HEAPKIT_HOOK_LIST)
#undef HEAPKIT_HOOK_LIST
#define HEAPKIT_REPLACEMENT_LIST(Name, list) \
  constinit HookList<MallocHook_##Name##Replacement> list;
HEAPKIT_REPLACEMENT_KINDS(HEAPKIT_REPLACEMENT_LIST)
#undef HEAPKIT_REPLACEMENT_LIST

namespace {
// Set while this thread runs a New or Delete hook: what the hook allocates is not reported.
__thread bool tls_in_hook __attribute__((tls_model("initial-exec"))) = false;
}  // namespace

constinit std::atomic<bool> g_malloc_hooks_active{false};

// Held across fork (analysis off: taken and released by two handlers).
void LockMallocHookRegistry() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { hook_registry_lock.Lock(); }
void UnlockMallocHookRegistry() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS { hook_registry_lock.Unlock(); }

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
