#include "profiler/capture/allocator_frame_filter.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstdint>

#include "alloc/common.h"
#include "profiler/capture/runtime_symbols.h"

namespace heapkit::prof {
namespace {

constexpr int kMaxRanges = 8;
constexpr int kMaxReturnAddresses = 128;

struct Range {
  uintptr_t lo, hi;
};

HEAPKIT_ALWAYS_WRITTEN_DATA Range ranges[kMaxRanges];
HEAPKIT_ALWAYS_WRITTEN_DATA std::atomic<int> num_ranges{0};
uintptr_t return_addresses[kMaxReturnAddresses];
std::atomic<int> num_return_addresses{0};
HEAPKIT_ALWAYS_WRITTEN_DATA std::atomic<bool> initialised{false};
HEAPKIT_ALWAYS_WRITTEN_DATA bool is_shared = false;

struct FindSelf {
  uintptr_t probe;
  bool found;
  bool in_executable;
  uintptr_t bias;
};

HEAPKIT_ALWAYS_RUN_CODE int FindSelfCallback(dl_phdr_info* info, size_t, void* data) {
  auto* self = static_cast<FindSelf*>(data);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (self->probe >= lo && self->probe < lo + ph.p_memsz) contains = true;
  }
  if (!contains) return 0;
  self->found = true;
  // The main executable (empty name) also holds the user's code: no range for it.
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
    self->in_executable = true;
    self->bias = info->dlpi_addr;
    return 1;
  }
  is_shared = true;
  int n = 0;
  for (int i = 0; i < info->dlpi_phnum && n < kMaxRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    ranges[n++] = {lo, lo + ph.p_memsz};
  }
  num_ranges.store(n, std::memory_order_release);
  return 1;
}

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE void InitAllocatorFrames() {
  if (initialised.exchange(true, std::memory_order_acq_rel)) return;
  FindSelf self{reinterpret_cast<uintptr_t>(&InitAllocatorFrames), false, false, 0};
  dl_iterate_phdr(&FindSelfCallback, &self);
  // Static link: the runtime's functions by name from the executable's symbol table.
  if (self.in_executable) LoadRuntimeSymbolRanges("/proc/self/exe", self.bias);
}

void AddAllocatorReturnAddress(const void* pc) {
  uintptr_t v = reinterpret_cast<uintptr_t>(pc);
  int n = num_return_addresses.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (return_addresses[i] == v) return;
  if (n >= kMaxReturnAddresses) return;
  return_addresses[n] = v;
  num_return_addresses.store(n + 1, std::memory_order_release);
}

HEAPKIT_ALWAYS_RUN_CODE bool IsAllocatorFrame(const void* pc) {
  uintptr_t v = reinterpret_cast<uintptr_t>(pc);
  int nr = num_ranges.load(std::memory_order_acquire);
  for (int i = 0; i < nr; ++i)
    if (v >= ranges[i].lo && v < ranges[i].hi) return true;
  if (InRuntimeSymbolRange(v)) return true;
  int na = num_return_addresses.load(std::memory_order_acquire);
  for (int i = 0; i < na; ++i)
    if (return_addresses[i] == v) return true;
  return false;
}

bool RuntimeIsSharedObject() { return is_shared; }

}  // namespace heapkit::prof
