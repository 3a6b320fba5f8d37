#include "heapcheck/process_tree.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>

namespace heapkit::check {
namespace {

struct TreeRecord {
  std::atomic<uint32_t> count;
  std::atomic<pid_t> pids[UncheckedProcesses::kListed];
};
static_assert(std::atomic<uint32_t>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free,
              "written by processes that share the page only");

TreeRecord* g_tree = nullptr;

}  // namespace

bool CreateProcessTreeRecord() {
  if (g_tree != nullptr) return true;
  // Not through the system memory layer: a shared mapping is never a root, and the page must
  // outlive every fork of the tree (it is never unmapped).
  void* page =
      mmap(nullptr, sizeof(TreeRecord), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  g_tree = static_cast<TreeRecord*>(page);  // zero-filled: count 0
  return true;
}

void NoteLeftUncheckedByUnderscoreExit(pid_t pid) {
  if (g_tree == nullptr) return;
  const uint32_t slot = g_tree->count.fetch_add(1, std::memory_order_acq_rel);
  if (slot < UncheckedProcesses::kListed) g_tree->pids[slot].store(pid, std::memory_order_release);
}

UncheckedProcesses ReadUncheckedProcesses() {
  UncheckedProcesses out;
  if (g_tree == nullptr) return out;
  const uint32_t count = g_tree->count.load(std::memory_order_acquire);
  out.count = count;
  for (uint32_t i = 0; i < count && i < UncheckedProcesses::kListed; ++i) {
    out.pids[i] = g_tree->pids[i].load(std::memory_order_acquire);
    // A slot taken but not yet written (its process is ending right now): 0, printed as '?'.
  }
  return out;
}

}  // namespace heapkit::check
