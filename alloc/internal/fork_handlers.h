// Fork handlers registered the way pthread_atfork registers them, called directly: glibc's
// __register_atfork (GLIBC_2.3.2) with this library's __dso_handle, so that the handlers go when
// the library is unloaded. pthread_atfork itself is libc_nonshared's stub, linked after all of
// our code: calling it at start-up would map the last fault-around window of the library's text
// in every process (sections.h).
#pragma once

#include "alloc/internal/spin_lock.h"
#include "alloc/internal/thread_annotations.h"

extern "C" int __register_atfork(void (*prepare)(), void (*parent)(), void (*child)(),
                                 void* dso_handle);
// crtbeginS.o (crtbeginT.o when linked statically) defines it.
extern "C" void* __dso_handle __attribute__((visibility("hidden")));

namespace heapkit::internal {

// Registers prepare / parent / child as pthread_atfork would. Prepare handlers run in the reverse
// order of registration, parent and child handlers in that order.
inline void RegisterForkHandlers(void (*prepare)(), void (*parent)(), void (*child)()) {
  __register_atfork(prepare, parent, child, __dso_handle);
}

// The handlers of HoldAcrossFork (analysis off: taken and released in two handlers).
template <SpinLock& kLock>
void LockBeforeFork() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  kLock.Lock();
}
template <SpinLock& kLock>
void UnlockAfterFork() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  kLock.Unlock();
}

// Holds kLock from before a fork until after it in both processes, so that a child never finds
// it held by a thread of the parent. For a leaf lock (nothing is taken while it is held), whose
// place among the other handlers' locks does not matter. Inline: start-up code calls it.
template <SpinLock& kLock>
inline __attribute__((always_inline)) void HoldAcrossFork() {
  RegisterForkHandlers(&LockBeforeFork<kLock>, &UnlockAfterFork<kLock>, &UnlockAfterFork<kLock>);
}

}  // namespace heapkit::internal
