#include "heapcheck/process_tree.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "alloc/internal/fork_handlers.h"

namespace heapkit::check {
namespace {

struct TreeRecord {
  std::atomic<uint32_t> count;
  std::atomic<pid_t> pids[UncheckedProcesses::kListed];
  std::atomic<int> signals[UncheckedProcesses::kListed];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free,
              "written by processes that share the page, and from signal handlers");

TreeRecord* g_tree = nullptr;
// The process this memory belongs to: the checking process, or the fork() child the child
// handler ran in. 0 before StartProcessTree.
pid_t g_memory_owner = 0;

pid_t KernelPid() { return static_cast<pid_t>(syscall(SYS_getpid)); }

void NoteForkedChild() { g_memory_owner = KernelPid(); }

}  // namespace

void StartProcessTree() {
  g_memory_owner = KernelPid();
  internal::RegisterForkHandlers(nullptr, nullptr, &NoteForkedChild);
  if (g_tree != nullptr) return;
  // Not through the system memory layer: a shared mapping is never a root, and the page must
  // outlive every fork of the tree (it is never unmapped).
  void* page =
      mmap(nullptr, sizeof(TreeRecord), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page != MAP_FAILED) g_tree = static_cast<TreeRecord*>(page);  // zero-filled: count 0
}

bool InOwnMemory() { return g_memory_owner != 0 && KernelPid() == g_memory_owner; }

void NoteEndedUnchecked(pid_t pid, int signal) {
  if (g_tree == nullptr) return;
  const uint32_t slot = g_tree->count.fetch_add(1, std::memory_order_acq_rel);
  if (slot >= UncheckedProcesses::kListed) return;
  g_tree->signals[slot].store(signal, std::memory_order_relaxed);
  g_tree->pids[slot].store(pid, std::memory_order_release);
}

UncheckedProcesses ReadUncheckedProcesses() {
  UncheckedProcesses out;
  if (g_tree == nullptr) return out;
  out.count = g_tree->count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < out.count && i < UncheckedProcesses::kListed; ++i) {
    // A slot taken but not yet written (its process is ending right now) reads pid 0.
    out.pids[i] = g_tree->pids[i].load(std::memory_order_acquire);
    out.signals[i] = g_tree->signals[i].load(std::memory_order_relaxed);
  }
  return out;
}

}  // namespace heapkit::check
