// A small test-and-test-and-set spin lock for allocator metadata.
//
// Critical sections guarded by it are short and never call malloc. It is a literal type with a
// constexpr constructor so that global locks need no constructor (they are used before any
// constructor runs). Waiters spin briefly with `pause`, then yield the CPU. Annotated for clang's
// thread-safety analysis (thread_annotations.h).
#pragma once

#include <atomic>
#include <sched.h>

#include "alloc/internal/thread_annotations.h"

namespace heapkit::internal {

class HEAPKIT_CAPABILITY("mutex") SpinLock {
 public:
  constexpr SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void Lock() HEAPKIT_ACQUIRE() {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    LockSlow();
  }
  bool TryLock() HEAPKIT_TRY_ACQUIRE(true) {
    return !locked_.exchange(true, std::memory_order_acquire);
  }
  void Unlock() HEAPKIT_RELEASE() { locked_.store(false, std::memory_order_release); }
  bool IsHeld() const { return locked_.load(std::memory_order_relaxed); }

 private:
  static void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  void LockSlow() {
    for (int spins = 0;; ++spins) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (spins < 64) {
          CpuRelax();
          ++spins;
        } else {
          sched_yield();
        }
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  std::atomic<bool> locked_{false};
};

class HEAPKIT_SCOPED_CAPABILITY SpinLockHolder {
 public:
  explicit SpinLockHolder(SpinLock* lock) HEAPKIT_ACQUIRE(lock) : lock_(lock) { lock_->Lock(); }
  ~SpinLockHolder() HEAPKIT_RELEASE() { lock_->Unlock(); }
  SpinLockHolder(const SpinLockHolder&) = delete;
  SpinLockHolder& operator=(const SpinLockHolder&) = delete;

 private:
  SpinLock* lock_;
};

}  // namespace heapkit::internal
