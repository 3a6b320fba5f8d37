// Lock annotations for clang's thread-safety analysis (-Wthread-safety): which lock guards which
// field, which functions take, release or need a lock. The compiler then proves, per function,
// that a guarded field is touched only with its lock held. No-ops under gcc, which builds the
// shipped libraries; `bash tests/scripts/thread_safety_build.sh` builds the runtime with clang
// and the analysis as errors (tests/README.md).
//
// What is annotated: internal::SpinLock (a capability) and SpinLockHolder (a scoped one), and the
// fields whose every access is under one lock. Left out: fields read without the lock on
// purpose (atomics, the lock-free fast paths) and locks taken in one function and released in
// another through a table (the fork handlers): HEAPKIT_NO_THREAD_SAFETY_ANALYSIS marks those.
#pragma once

#if defined(__clang__)
#define HEAPKIT_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define HEAPKIT_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are locks.
#define HEAPKIT_CAPABILITY(name) HEAPKIT_THREAD_ANNOTATION(capability(name))
// On a class: an RAII holder of a lock.
#define HEAPKIT_SCOPED_CAPABILITY HEAPKIT_THREAD_ANNOTATION(scoped_lockable)
// On a field: read and written only with `lock` held.
#define HEAPKIT_GUARDED_BY(lock) HEAPKIT_THREAD_ANNOTATION(guarded_by(lock))
// On a pointer field: what it points to is read and written only with `lock` held.
#define HEAPKIT_PT_GUARDED_BY(lock) HEAPKIT_THREAD_ANNOTATION(pt_guarded_by(lock))
// On a function: called with these locks held (and returns with them held).
#define HEAPKIT_REQUIRES(...) HEAPKIT_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// On a function: called without these locks held (it takes them itself).
#define HEAPKIT_EXCLUDES(...) HEAPKIT_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// On a function: takes / releases these locks (none named: the object's own).
#define HEAPKIT_ACQUIRE(...) HEAPKIT_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define HEAPKIT_RELEASE(...) HEAPKIT_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
// On a function: takes the lock when it returns `result`.
#define HEAPKIT_TRY_ACQUIRE(...) HEAPKIT_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// On a function: the analysis trusts it (a lock held across a table of calls, as at fork).
#define HEAPKIT_NO_THREAD_SAFETY_ANALYSIS HEAPKIT_THREAD_ANNOTATION(no_thread_safety_analysis)
