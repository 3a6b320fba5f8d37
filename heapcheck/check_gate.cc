#include "heapcheck/check_gate.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "alloc/internal/fork_handlers.h"
#include "alloc/internal/log.h"
#include "alloc/internal/monotonic_clock.h"
#include "alloc/observer_hooks.h"
#include "alloc/sampling_period.h"
#include "heapcheck/roots.h"

namespace heapkit::check {
namespace {

// The gate word: a futex mutex (kFree, kHeld, kHeldWaited: someone may sleep on it).
enum GateState : uint32_t { kFree = 0, kHeld = 1, kHeldWaited = 2 };
std::atomic<uint32_t> g_gate{kFree};
// The holder's thread pointer (the same in a child forked by it); 0 when free.
std::atomic<uintptr_t> g_holder{0};
// PauseRecording's sampling off, in static storage (not the holder's stack), so that a forked
// child whose holder is gone ends it; begun and ended by the holder only.
constinit alloc::ScopedSamplingPeriod g_recording_paused;

long FutexWait(uint32_t expected, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_gate), FUTEX_WAIT_PRIVATE, expected,
                 timeout, nullptr, 0);
}

void FutexWakeOne() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_gate), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

// Drepper's mutex ("Futexes are tricky", mutex 3). deadline < 0: no limit. Each wait returns on
// a wake, a signal (the suspend signal: the waiter is stopped and scanned in its handler, then
// waits on) or the timeout; then the word is tried again.
bool Acquire(int64_t deadline_nanos) {
  uint32_t c = kFree;
  if (g_gate.compare_exchange_strong(c, kHeld, std::memory_order_acquire)) return true;
  if (c != kHeldWaited) c = g_gate.exchange(kHeldWaited, std::memory_order_acquire);
  while (c != kFree) {
    timespec relative;
    const timespec* timeout = nullptr;
    if (deadline_nanos >= 0) {
      const int64_t left = deadline_nanos - internal::MonotonicNanos();
      if (left <= 0) return false;  // the word stays kHeldWaited: one needless wake, no harm
      relative.tv_sec = left / 1000000000;
      relative.tv_nsec = left % 1000000000;
      timeout = &relative;
    }
    FutexWait(kHeldWaited, timeout);
    c = g_gate.exchange(kHeldWaited, std::memory_order_acquire);
  }
  return true;
}

void Release() {
  if (g_gate.exchange(kFree, std::memory_order_release) == kHeldWaited) FutexWakeOne();
}

void RestoreRecording() { g_recording_paused.End(); }

// In a forked child: a gate held by another thread of the parent is free here (that thread is
// gone), with the recording it paused restored; the forking thread's own hold stays.
void FreeGateInChild() {
  if (g_gate.load(std::memory_order_relaxed) == kFree) return;
  if (g_holder.load(std::memory_order_relaxed) == CurrentThreadPointer()) return;
  RestoreRecording();
  g_holder.store(0, std::memory_order_relaxed);
  g_gate.store(kFree, std::memory_order_release);
}

}  // namespace

CheckGate::CheckGate(GateWait wait) {
  const uintptr_t self = CurrentThreadPointer();
  if (g_holder.load(std::memory_order_relaxed) == self) {
    internal::Log("leak check: a check was asked for from inside a check; not run");
    return;
  }
  const int64_t deadline = wait == GateWait::kBriefly
                               ? internal::MonotonicNanos() + int64_t{kBriefGateWaitMs} * 1000000
                               : -1;
  if (!Acquire(deadline)) return;
  g_holder.store(self, std::memory_order_relaxed);
  held_ = true;
}

CheckGate::~CheckGate() {
  if (!held_) return;
  RestoreRecording();
  g_holder.store(0, std::memory_order_relaxed);
  Release();
}

void CheckGate::PauseRecording() {
  if (held_) g_recording_paused.Begin(0);
}

bool CheckGateHeldHere() {
  return g_gate.load(std::memory_order_acquire) != kFree &&
         g_holder.load(std::memory_order_relaxed) == CurrentThreadPointer();
}

void InstallCheckGateForkHandler() {
  internal::RegisterForkHandlers(nullptr, nullptr, &FreeGateInChild);
}

}  // namespace heapkit::check
