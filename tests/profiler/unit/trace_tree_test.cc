// The trace tree: shared outer frames are stored once, stacks read back as inserted (full
// 64-bit return addresses, through the pc dictionary), and threads inserting the same stacks
// at once agree on their ids. The pc dictionary on its own: stable, distinct indices.
#include "profiler/table/trace_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace heapkit::prof {
namespace {

TraceTree& FreshTree() {
  static TraceTree trees[5];
  static int next = 0;
  TraceTree& t = trees[next++];
  EXPECT_TRUE(t.Init());
  return t;
}

void* Pc(uintptr_t v) { return reinterpret_cast<void*>(v); }

// Stack i: a distinct leaf frame, then the same 30 callers (leaf first, like a capture).
std::vector<void*> SharedPrefixStack(int i) {
  std::vector<void*> s{Pc(0x100000 + i)};
  for (int f = 0; f < 30; ++f) s.push_back(Pc(0x5000 + f));
  return s;
}

TEST(TraceTree, SharedCallersAreStoredOnce) {
  TraceTree& t = FreshTree();
  constexpr int kStacks = 1000;
  for (int i = 0; i < kStacks; ++i) {
    std::vector<void*> s = SharedPrefixStack(i);
    ASSERT_NE(t.Insert(s.data(), static_cast<int>(s.size())), ~0u);
  }
  // 30 shared callers plus one leaf per stack (and the root): not 31 nodes per stack.
  EXPECT_EQ(t.num_nodes(), 1u + 30 + kStacks);
}

TEST(TraceTree, FullWidthReturnAddressesReadBackAndDepthCountsFrames) {
  TraceTree& t = FreshTree();
  // Addresses as a process has them: PIE text, shared libraries, the vdso, and pcs that share
  // their low 32 bits.
  void* s[] = {Pc(0x7ffd12345678), Pc(0x7f0012345678), Pc(0x55555555a0b1), Pc(0x12345678),
               Pc(0xffffffffff600400)};
  const uint32_t node = t.Insert(s, 5);
  ASSERT_NE(node, ~0u);
  void* read[8] = {};
  ASSERT_EQ(t.Read(node, read, 8), 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(read[i], s[i]) << i;
  EXPECT_EQ(t.Leaf(node), s[0]);
  EXPECT_EQ(t.Depth(node), 5);
  EXPECT_EQ(t.Depth(TraceTree::kRoot), 0);
  EXPECT_EQ(t.Insert(s + 1, 4), t.Insert(s + 1, 4));
  EXPECT_EQ(t.Depth(t.Insert(s + 2, 3)), 3);
}

TEST(PcDictionary, IndicesAreStableDistinctAndReadBack) {
  static PcDictionary d;  // constant-initialised, like the process-wide table's
  ASSERT_TRUE(d.Init());
  constexpr uintptr_t kPcs = 200000;  // >> the 64 Ki chain heads: chains hold several pcs
  std::vector<uint32_t> index(kPcs);
  for (uintptr_t i = 0; i < kPcs; ++i) {
    index[i] = d.IndexOf(0x7f0000000000 + i * 0x10001);
    ASSERT_NE(index[i], PcDictionary::kNone);
    ASSERT_NE(index[i], 0u);
  }
  for (uintptr_t i = 0; i < kPcs; i += 7) {
    EXPECT_EQ(d.IndexOf(0x7f0000000000 + i * 0x10001), index[i]);
    EXPECT_EQ(d.PcAt(index[i]), 0x7f0000000000 + i * 0x10001);
  }
  std::vector<uint32_t> sorted = index;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end());
  EXPECT_EQ(sorted.back(), kPcs);  // 1..kPcs, in order of first use
  EXPECT_EQ(d.PcAt(0), 0u);
  EXPECT_EQ(d.PcAt(kPcs + 1), 0u);
}

TEST(PcDictionary, ConcurrentFirstUsesAgree) {
  static PcDictionary d;
  ASSERT_TRUE(d.Init());
  constexpr int kThreads = 4;
  constexpr uintptr_t kPcs = 20000;
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(kPcs));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (uintptr_t i = 0; i < kPcs; ++i) {
        const uintptr_t k = th % 2 ? kPcs - 1 - i : i;  // half the threads backwards
        seen[th][k] = d.IndexOf(0x400000 + k * 4);
      }
    });
  for (auto& t : threads) t.join();
  for (uintptr_t i = 0; i < kPcs; ++i) {
    for (int th = 1; th < kThreads; ++th) ASSERT_EQ(seen[th][i], seen[0][i]) << i;
    ASSERT_EQ(d.PcAt(seen[0][i]), 0x400000 + i * 4);
  }
  EXPECT_EQ(d.IndexOf(0x999999), kPcs + 1);  // no index was handed out twice
}

TEST(TraceTree, RoundTripAndIdentity) {
  TraceTree& t = FreshTree();
  void* a[] = {Pc(0x1), Pc(0x2), Pc(0x3)};
  void* b[] = {Pc(0x9), Pc(0x2), Pc(0x3)};
  const uint32_t na = t.Insert(a, 3);
  const uint32_t nb = t.Insert(b, 3);
  EXPECT_NE(na, nb);
  EXPECT_EQ(t.Insert(a, 3), na);
  EXPECT_NE(t.Insert(a + 1, 2), na);  // a suffix of callers is another stack
  EXPECT_EQ(t.Insert(nullptr, 0), TraceTree::kRoot);
  void* out[8] = {};
  ASSERT_EQ(t.Read(na, out, 8), 3);
  EXPECT_EQ(out[0], Pc(0x1));
  EXPECT_EQ(out[1], Pc(0x2));
  EXPECT_EQ(out[2], Pc(0x3));
  EXPECT_EQ(t.Read(na, out, 2), 2);  // truncated to the buffer, leaf first
  EXPECT_EQ(out[0], Pc(0x1));
  EXPECT_EQ(t.Leaf(nb), Pc(0x9));
  EXPECT_EQ(t.Leaf(TraceTree::kRoot), nullptr);
  EXPECT_EQ(t.Read(TraceTree::kRoot, out, 8), 0);
}

TEST(TraceTree, ConcurrentInsertsAgreeOnIds) {
  TraceTree& t = FreshTree();
  constexpr int kThreads = 4, kStacks = 2000;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kStacks));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      for (int k = 0; k < kStacks; ++k) {
        // Threads walk the stacks in different orders so that they race on the same nodes.
        const int i = (th % 2 == 0) ? k : kStacks - 1 - k;
        void* s[] = {Pc(0x7000 + i % 7), Pc(0x100000 + i), Pc(0x200 + i % 3), Pc(0x10)};
        ids[th][i] = t.Insert(s, 4);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int th = 1; th < kThreads; ++th) EXPECT_EQ(ids[th], ids[0]);
  for (int i = 0; i < kStacks; ++i) {
    void* out[4];
    ASSERT_EQ(t.Read(ids[0][i], out, 4), 4);
    EXPECT_EQ(out[1], Pc(0x100000 + i));
  }
  // Root, 0x10, three 0x200+ nodes, a 0x100000+i node and a leaf per stack.
  EXPECT_EQ(t.num_nodes(), 1u + 1 + 3 + 2 * kStacks);
}

// The allocation stacks of a recursive tree builder: node `path` (bits below a leading 1, one
// per level: left or right call site) allocates from one site under its chain of calls.
std::vector<void*> TreePathStack(uint32_t path) {
  std::vector<void*> s{Pc(0xa110c)};
  for (uint32_t p = path; p > 1; p >>= 1) s.push_back(Pc(p & 1 ? 0x2222 : 0x1111));
  s.push_back(Pc(0x3333));  // main
  return s;
}

// Many distinct stacks built as such a program builds them (each under a node made just
// before, the case where a lookup stops at the chain head), then looked up again in the
// opposite order from another thread (no remembered path): every stack keeps its node and no
// node is added.
TEST(TraceTree, DistinctStacksOfARecursiveBuilderAreFoundAgain) {
  TraceTree& t = FreshTree();
  constexpr uint32_t kNodes = 1u << 13;
  std::vector<uint32_t> ids(kNodes);
  std::vector<uint32_t> order;
  auto dfs = [&](auto&& self, uint32_t path) -> void {
    if (path >= kNodes) return;
    order.push_back(path);
    self(self, path * 2);
    self(self, path * 2 + 1);
  };
  dfs(dfs, 1);
  for (uint32_t path : order) {
    std::vector<void*> s = TreePathStack(path);
    ids[path] = t.Insert(s.data(), static_cast<int>(s.size()));
    ASSERT_NE(ids[path], ~0u);
  }
  const size_t nodes = t.num_nodes();
  // Root, main, a node per path below the first, and an allocation-site leaf per path.
  EXPECT_EQ(nodes, 1u + 1 + (kNodes - 2) + (kNodes - 1));
  std::thread([&] {
    for (size_t k = order.size(); k-- > 0;) {
      std::vector<void*> s = TreePathStack(order[k]);
      EXPECT_EQ(t.Insert(s.data(), static_cast<int>(s.size())), ids[order[k]]) << order[k];
    }
  }).join();
  EXPECT_EQ(t.num_nodes(), nodes);
  void* out[32];
  for (uint32_t path = 1; path < kNodes; ++path) {
    std::vector<void*> s = TreePathStack(path);
    ASSERT_EQ(t.Read(ids[path], out, 32), static_cast<int>(s.size()));
    for (size_t f = 0; f < s.size(); ++f) EXPECT_EQ(out[f], s[f]);
  }
}

}  // namespace
}  // namespace heapkit::prof
