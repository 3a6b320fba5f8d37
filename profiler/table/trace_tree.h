// Trace tree: call stacks stored as paths of a tree, so that what stacks share is stored once.
//
// A stack is a node id. Node 0 is the root (the empty stack); every other node is
// (parent node, pc) and stands for the stack "pc, then the parent's frames". Stacks arrive leaf
// first and are inserted from the outermost frame inwards, so stacks with the same callers share
// the nodes of those callers: N stacks that differ only in their last frames cost about N nodes,
// not N times their depth. Reading a stack walks the parent chain from its node: that yields
// its frames leaf first, the order they were captured in.
//
// Nodes live in fixed-size chunks found by id (never moved or freed). Lookup of (parent, pc)
// is lock-free: a fixed array of chain heads (node ids), chain links written once before the
// node is published with a release store of its head; insertion takes the chain's lock (one of
// 64 striped spin locks, by chain) and re-checks the chain. Node ids are handed out in
// increasing order and a chain is only ever prepended to under its lock, so every chain is
// sorted by decreasing id; a child's id is above its parent's, so a lookup of (parent, pc)
// stops at the first id below the parent (for a parent just created: at the head). A chain is
// the parent's id plus a hash of the pc (ChainIndex), so new nodes' children land in
// neighbouring heads. A node names its pc by index in a dictionary of the distinct return
// addresses (pc_dictionary.h): 12 bytes a node instead of 16. Memory: the internal metadata
// arena only (heads reserve 4 MiB, resident only where touched). Fork: ForkPrepare() takes
// every lock, the dictionary's included; ForkParent()/ForkChild() release them. Readers need no
// lock: a node reachable through an id is complete, so a reader in a stopped world (the leak
// checker) never waits.
#pragma once

#include <atomic>
#include <cstdint>

#include "alloc/internal/spin_lock.h"
#include "profiler/table/pc_dictionary.h"

namespace heapkit::prof {

class TraceTree {
 public:
  static constexpr uint32_t kRoot = 0;
  // What Insert, Child and PcIndex return on arena OOM (also PcDictionary::kNone).
  static constexpr uint32_t kNone = ~0u;
  static_assert(kNone == PcDictionary::kNone);
  // Node ids stay below this (chunks x chunk size).
  static constexpr uint32_t kMaxNodes = uint32_t{1} << 28;

  // Allocates the head array from the arena (once). False on OOM.
  bool Init();

  // The node of pcs[0..depth) (leaf first), created as needed. kRoot for depth 0;
  // kNone on arena OOM.
  uint32_t Insert(void* const* pcs, int depth);
  // The child (parent, pc), created if missing. kNone on arena OOM.
  uint32_t Child(uint32_t parent, uintptr_t pc);

  // Writes the frames of `node`, leaf first, into out[0..max); returns how many were written.
  int Read(uint32_t node, void** out, int max) const;
  // The leaf frame of `node` (nullptr for the root).
  void* Leaf(uint32_t node) const;
  // The number of frames of `node` (0 for the root): a walk up its parent chain.
  int Depth(uint32_t node) const;
  // The dictionary index of a return address (created if missing; never 0; kNone on OOM), and
  // back: for callers that keep a leaf frame outside the tree (stack_table.h, StackRef).
  uint32_t PcIndex(uintptr_t pc) { return pcs_.IndexOf(pc); }
  uintptr_t PcOf(uint32_t index) const { return pcs_.PcAt(index); }

  size_t num_nodes() const { return non_root_nodes_.load(std::memory_order_relaxed) + size_t{1}; }

  void ForkPrepare();
  void ForkParent();
  void ForkChild() { ForkParent(); }

 private:
  struct Node {
    uint32_t pc;  // index in pcs_
    uint32_t parent;
    uint32_t next;  // next node id in the hash chain (0: end); immutable once published
  };
  static_assert(sizeof(Node) == 12, "paid per node: the per-stack cost of the tree");
  static constexpr int kHeadBits = 20;
  static constexpr int kLocks = 64;
  static constexpr int kChunkBits = 16;
  static constexpr uint32_t kChunkSize = uint32_t{1} << kChunkBits;
  static constexpr uint32_t kChunks = kMaxNodes >> kChunkBits;

  // The chain of (parent, pc index): the parent id plus a hash of the pc's index. Ids are
  // dense and new nodes take consecutive ids, so the children of recently created nodes under
  // one call site land in neighbouring heads (a program that keeps making new stacks walks the
  // heads almost in order instead of missing the cache on each), while distinct pcs spread
  // over the array.
  static uint32_t ChainIndex(uint32_t parent, uint32_t pc) {
    uint64_t h = (pc + uint64_t{1}) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    return (parent + static_cast<uint32_t>(h >> (64 - kHeadBits))) & ((1u << kHeadBits) - 1);
  }
  const Node* NodeAt(uint32_t id) const {
    Node* chunk = chunks_[id >> kChunkBits].load(std::memory_order_acquire);
    return chunk == nullptr ? nullptr : &chunk[id & (kChunkSize - 1)];
  }
  uint32_t Find(uint32_t first, uint32_t parent, uint32_t pc) const;
  Node* NewNode(uint32_t* id);

  std::atomic<uint32_t>* heads_ = nullptr;
  PcDictionary pcs_;
  // Ids handed out after the root's (0): the next node gets non_root_nodes_ + 1. Counted from
  // zero so that every member starts zero and the process-wide stack table, which holds this
  // tree, lives in .bss: no pages of the runtime's file are touched for it at start-up.
  std::atomic<uint32_t> non_root_nodes_{0};
  std::atomic<Node*> chunks_[kChunks] = {};
  struct alignas(64) PaddedLock {
    internal::SpinLock lock;
  };
  PaddedLock locks_[kLocks];
};

}  // namespace heapkit::prof
