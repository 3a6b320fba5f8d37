#include "profiler/table/trace_tree.h"

#include "alloc/internal/arena.h"
#include "alloc/internal/dcheck.h"

namespace heapkit::prof {
namespace {

// This thread's last inserted path, root first: a new stack usually shares most of its outer
// frames with the previous one (same callers, another call site), and those need no lookup.
struct LastPath {
  static constexpr int kDepth = 64;
  const TraceTree* tree;
  int depth;
  uintptr_t pcs[kDepth];
  uint32_t nodes[kDepth];
};
__thread LastPath tls_last_path __attribute__((tls_model("initial-exec")));

}  // namespace

bool TraceTree::Init() {
  if (heads_ != nullptr) return true;
  if (!pcs_.Init()) return false;
  void* heads = internal::ArenaAlloc(sizeof(std::atomic<uint32_t>) << kHeadBits, 4096);
  if (heads == nullptr) return false;
  heads_ = static_cast<std::atomic<uint32_t>*>(heads);  // zeroed by the arena: empty chains
  return true;
}

// A chain is ordered newest first and ids grow with time (both under the chain's lock), and a
// child is created only after its parent was published: no node past the first id below
// `parent` can be its child. A fresh parent's lookup thus usually reads no node at all.
uint32_t TraceTree::Find(uint32_t first, uint32_t parent, uint32_t pc) const {
  for (uint32_t id = first; id > parent;) {
    const Node* n = NodeAt(id);
    if (n == nullptr) return kNone;
    if (n->pc == pc && n->parent == parent) return id;
    id = n->next;
  }
  return kNone;
}

TraceTree::Node* TraceTree::NewNode(uint32_t* id) {
  const uint32_t i = non_root_nodes_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (i >= kChunks * kChunkSize) return nullptr;
  std::atomic<Node*>& slot = chunks_[i >> kChunkBits];
  Node* chunk = slot.load(std::memory_order_acquire);
  if (chunk == nullptr) {
    auto* fresh = static_cast<Node*>(internal::ArenaAlloc(sizeof(Node) * kChunkSize, 4096));
    if (fresh == nullptr) return nullptr;
    // A loser's chunk stays in the arena unused (untouched pages: no resident cost).
    if (slot.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel)) chunk = fresh;
  }
  *id = i;
  return &chunk[i & (kChunkSize - 1)];
}

uint32_t TraceTree::Child(uint32_t parent, uintptr_t return_address) {
  const uint32_t pc = pcs_.IndexOf(return_address);
  if (pc == kNone) return kNone;
  const uint32_t index = ChainIndex(parent, pc);
  std::atomic<uint32_t>& head = heads_[index];
  uint32_t found = Find(head.load(std::memory_order_acquire), parent, pc);
  if (found != kNone) return found;
  // The lock follows the chain (one chain, one lock: its order is the order of its ids).
  internal::SpinLockHolder hold(&locks_[index % kLocks].lock);
  const uint32_t first = head.load(std::memory_order_acquire);
  found = Find(first, parent, pc);
  if (found == kNone) {
    uint32_t id;
    Node* n = NewNode(&id);
    if (n != nullptr) {
      n->pc = pc;
      n->parent = parent;
      n->next = first;
      HEAPKIT_DCHECK(locks_[index % kLocks].lock.IsHeld());  // chains change under their lock
      HEAPKIT_DCHECK(parent < id);  // a node's parent is older: parent chains end
      head.store(id, std::memory_order_release);
      found = id;
    }
  }
  return found;
}

uint32_t TraceTree::Insert(void* const* pcs, int depth) {
  LastPath& last = tls_last_path;
  if (last.tree != this) {
    last.tree = this;
    last.depth = 0;
  }
  // j: frames from the root end shared with the last path (their nodes are known).
  int j = 0;
  while (j < depth && j < last.depth &&
         last.pcs[j] == reinterpret_cast<uintptr_t>(pcs[depth - 1 - j]))
    ++j;
  uint32_t node = j > 0 ? last.nodes[j - 1] : kRoot;
  for (; j < depth; ++j) {
    const uintptr_t pc = reinterpret_cast<uintptr_t>(pcs[depth - 1 - j]);
    node = Child(node, pc);
    if (node == kNone) {
      last.depth = j < LastPath::kDepth ? j : LastPath::kDepth;
      return kNone;
    }
    if (j < LastPath::kDepth) {
      last.pcs[j] = pc;
      last.nodes[j] = node;
    }
  }
  last.depth = depth < LastPath::kDepth ? depth : LastPath::kDepth;
  return node;
}

int TraceTree::Read(uint32_t node, void** out, int max) const {
  int n = 0;
  while (node != kRoot && n < max) {
    const Node* p = NodeAt(node);
    if (p == nullptr) break;
    out[n++] = reinterpret_cast<void*>(pcs_.PcAt(p->pc));
    node = p->parent;
  }
  return n;
}

void* TraceTree::Leaf(uint32_t node) const {
  const Node* p = node != kRoot ? NodeAt(node) : nullptr;
  return p != nullptr ? reinterpret_cast<void*>(pcs_.PcAt(p->pc)) : nullptr;
}

int TraceTree::Depth(uint32_t node) const {
  int n = 0;
  for (const Node* p; node != kRoot && (p = NodeAt(node)) != nullptr; node = p->parent) ++n;
  return n;
}

// Every lock, held across fork (analysis off: an array of locks, released in ForkParent).
void TraceTree::ForkPrepare() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  for (PaddedLock& l : locks_) l.lock.Lock();
  pcs_.ForkPrepare();
}

void TraceTree::ForkParent() HEAPKIT_NO_THREAD_SAFETY_ANALYSIS {
  pcs_.ForkParent();
  for (PaddedLock& l : locks_) l.lock.Unlock();
}

}  // namespace heapkit::prof
