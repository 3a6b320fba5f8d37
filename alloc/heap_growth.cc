// Heap growth reporting (observer_hooks.h, "Heap growth").
#include <atomic>

#include "alloc/observer_hooks.h"

namespace heapkit::alloc {

__thread size_t tls_pending_growth_bytes __attribute__((tls_model("initial-exec"))) = 0;

namespace {
HEAPKIT_ALWAYS_WRITTEN_DATA constinit std::atomic<HeapGrowthHook> growth_hook{nullptr};
}  // namespace

void ReportPendingGrowthSlow() noexcept {
  const size_t bytes = tls_pending_growth_bytes;
  tls_pending_growth_bytes = 0;
  HeapGrowthHook hook = growth_hook.load(std::memory_order_acquire);
  if (hook != nullptr) hook(bytes);
}

HEAPKIT_ALWAYS_RUN_CODE void SetHeapGrowthHook(HeapGrowthHook hook) {
  growth_hook.store(hook, std::memory_order_release);
}

}  // namespace heapkit::alloc
