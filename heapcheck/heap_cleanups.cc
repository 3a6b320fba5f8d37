#include "heapcheck/heap_cleanups.h"

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"

namespace heapkit::check {
namespace {

using Cleanup = void (*)();
constexpr int kMaxCleanups = 256;
internal::SpinLock g_lock;
Cleanup g_cleanups[kMaxCleanups] HEAPKIT_GUARDED_BY(g_lock);
int g_count HEAPKIT_GUARDED_BY(g_lock) = 0;
bool g_ran HEAPKIT_GUARDED_BY(g_lock) = false;

}  // namespace

bool RegisterHeapCleanup(Cleanup cleanup) {
  internal::SpinLockHolder h(&g_lock);
  if (g_count >= kMaxCleanups) {
    internal::Log("REGISTER_HEAPCHECK_CLEANUP: more than %d cleanups; extra ones ignored",
                  kMaxCleanups);
    return false;
  }
  g_cleanups[g_count++] = cleanup;
  return true;
}

void RunHeapCleanupsOnce() {
  int n;
  const Cleanup* cleanups;
  {
    internal::SpinLockHolder h(&g_lock);
    if (g_ran) return;
    g_ran = true;
    n = g_count;
    cleanups = g_cleanups;
  }
  // Without the lock: a cleanup may register another (which then does not run).
  for (int i = 0; i < n; ++i) cleanups[i]();
}

}  // namespace heapkit::check
