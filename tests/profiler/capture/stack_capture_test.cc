// Stack capture: a known -O2, frame-pointer-less call chain comes back in order; skip and
// depth limits; capture from a signal handler; the recursion guard.
#include "profiler/capture/stack_capture.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "call_chain.h"
#include "profiler/capture/allocator_frame_filter.h"
#include "profiler/capture/cfi_unwinder.h"

namespace heapkit::prof {
namespace {

TEST(StackCapture, KnownChainWithoutFramePointersInOrder) {
  InitStackCapture();
  void* pcs[kMaxStackDepth];
  int n = ChainLevel0(pcs, kMaxStackDepth);
  ASSERT_GE(n, 4);
  // skip=0: pcs[0] is ChainLevel2's return address, i.e. inside ChainLevel1.
  EXPECT_TRUE(ChainRange(1).Contains(pcs[0])) << pcs[0];
  EXPECT_TRUE(ChainRange(0).Contains(pcs[1])) << pcs[1];
  // pcs[2] is inside this test body; then gtest frames and main follow.
  EXPECT_FALSE(ChainRange(0).Contains(pcs[2]));
  EXPECT_FALSE(ChainRange(2).Contains(pcs[0]));
}

TEST(StackCapture, DepthLimitAndSkip) {
  void* full[kMaxStackDepth];
  int n = ChainLevel0(full, kMaxStackDepth);
  ASSERT_GE(n, 4);
  void* two[2];
  EXPECT_EQ(ChainLevel0(two, 2), 2);
  EXPECT_TRUE(ChainRange(1).Contains(two[0]));
  EXPECT_TRUE(ChainRange(0).Contains(two[1]));
  EXPECT_EQ(ChainLevel0(two, 0), 0);
}

volatile int g_signal_depth = -1;
volatile bool g_signal_guard_seen = false;
void* g_signal_pcs[kMaxStackDepth];

void Handler(int) {
  g_signal_guard_seen = InStackCapture();
  g_signal_depth = CaptureStack(g_signal_pcs, kMaxStackDepth, 0);
}

TEST(StackCapture, WorksInSignalHandler) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = &Handler;
  sigaction(SIGUSR2, &sa, &old);
  raise(SIGUSR2);
  sigaction(SIGUSR2, &old, nullptr);
  EXPECT_FALSE(g_signal_guard_seen);
  // The handler's caller is the signal trampoline; libunwind unwinds through it into this test.
  EXPECT_GE(g_signal_depth, 3);
}

TEST(StackCapture, ManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        void* pcs[kMaxStackDepth];
        int n = ChainLevel0(pcs, kMaxStackDepth);
        if (n >= 3 && ChainRange(1).Contains(pcs[0]) && ChainRange(0).Contains(pcs[1])) ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 8000);
}

// The cached CFI unwinder must give exactly what libunwind gives, frame for frame, for frames
// of every shape (-O2 without frame pointers; rbp-based CFAs from variable-length arrays; big
// frames), warm and cold.
TEST(StackCapture, CfiUnwinderMatchesLibunwind) {
  InitStackCapture();
  for (int round = 0; round < 2; ++round) {  // round 1 runs on the warm rule cache
    for (int depth = 0; depth <= 12; ++depth) {
      void* a[kMaxStackDepth];
      void* b[kMaxStackDepth];
      int na = -1, nb = -2;
      VariedChainBoth(a, &na, b, &nb, kMaxStackDepth, depth);
      ASSERT_GE(na, depth + 3) << "depth " << depth;
      ASSERT_EQ(na, nb) << "depth " << depth;
      for (int i = 0; i < na; ++i) ASSERT_EQ(a[i], b[i]) << "depth " << depth << " frame " << i;
    }
  }
  // Depth limit and skip agree too.
  void* a[4];
  void* b[4];
  int na = -1, nb = -2;
  VariedChainBoth(a, &na, b, &nb, 4, 9);
  EXPECT_EQ(na, 4);
  EXPECT_EQ(nb, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]);
}

// The CFI walker reuses its last walk when it starts from the same registers and the stack
// words it read are unchanged: a capture at the same depth from another call site (same stack
// pointer, different return address in one frame) must still come out right.
TEST(StackCapture, CfiWalkMemoNoticesChangedCallers) {
  void* first[2][kMaxStackDepth];
  int nfirst[2] = {0, 0};
  for (int round = 0; round < 3; ++round) {
    for (int site = 0; site < 2; ++site) {
      void* a[kMaxStackDepth];
      void* b[kMaxStackDepth];
      int na = -1, nb = -2;
      VariedChainFromSite(site, a, &na, b, &nb, kMaxStackDepth);
      ASSERT_GE(na, 6);
      ASSERT_EQ(na, nb) << "site " << site << " round " << round;
      for (int i = 0; i < na; ++i) ASSERT_EQ(a[i], b[i]) << "site " << site << " frame " << i;
      if (round == 0) {
        nfirst[site] = na;
        for (int i = 0; i < na; ++i) first[site][i] = a[i];
      } else {  // and the same as the first time from this site
        ASSERT_EQ(na, nfirst[site]);
        for (int i = 0; i < na; ++i) ASSERT_EQ(a[i], first[site][i]);
      }
    }
  }
  ASSERT_EQ(nfirst[0], nfirst[1]);
  int differ = 0;
  for (int i = 0; i < nfirst[0]; ++i) differ += first[0][i] != first[1][i];
  EXPECT_GE(differ, 1);  // the site frame's return address
}

#ifdef HEAPKIT_CFI_UNWINDER
// A memo hit must never return frames a full walk would not: same pc and sp, but the first
// frame's CFA is rbp-based and rbp differs.
TEST(StackCapture, CfiWalkMemoComparesRbpWhenACfaUsesIt) {
  void* a[kMaxStackDepth];
  void* b1[kMaxStackDepth];
  void* b2[kMaxStackDepth];
  int na = -1, nb1 = -1, nb2 = -1;
  RbpMemoProbe(a, &na, b1, &nb1, b2, &nb2, kMaxStackDepth);
  ASSERT_GE(na, 4);     // the real chain: the probe, this test, gtest, main...
  EXPECT_EQ(nb2, 1);    // fresh walk: the probe's frame, then the fake 0 return address
  EXPECT_EQ(nb1, nb2);  // right after the real walk: the same, not the memo's frames
  EXPECT_EQ(b1[0], a[0]);
  EXPECT_EQ(b2[0], a[0]);
}

// Walk ids: the same start twice gives the same id; passing it back skips the copy.
// The stack words a memo's walk depends on (its checks but the pad word's) and its start
// rbp's, sorted: a joined walk must depend on what a whole walk of the same stack depends on.
std::vector<std::pair<const uintptr_t*, uintptr_t>> Dependencies(const WalkMemo& m) {
  std::vector<std::pair<const uintptr_t*, uintptr_t>> out;
  for (int i = 0; i < m.checks; ++i)
    if (m.check[i].at != &kMemoPadWord) out.emplace_back(m.check[i].at, m.check[i].value);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (m.check_rbp0) out.emplace_back(nullptr, m.rbp0);
  return out;
}

bool SameDependencies(const WalkMemo& a, const WalkMemo& b) {
  return a.frames == b.frames && a.pc0 == b.pc0 && a.sp0 == b.sp0 &&
         Dependencies(a) == Dependencies(b);
}

// A walk that joins the memo's at a frame whose CFA uses the start rbp must make the memo
// compare the start rbp, as a whole walk's memo does.
TEST(StackCapture, JoinedWalkComparesTheStartRbpWhereAJoinedCfaUsesIt) {
  void* a[kMaxStackDepth];
  void* b[kMaxStackDepth];
  int na = -1, nb = -1;
  bool joined = false;
  static WalkMemo joined_memo, whole_memo;
  RbpJoinProbe(a, &na, b, &nb, &joined, &joined_memo, &whole_memo, kMaxStackDepth);
  EXPECT_TRUE(joined);
  EXPECT_TRUE(SameDependencies(joined_memo, whole_memo));
  ASSERT_GE(na, 4);  // the leaf, the probe, this test, gtest...
  EXPECT_EQ(nb, 2);  // the leaf, the probe, then the fake 0 return address
  EXPECT_EQ(b[0], a[0]);
  EXPECT_EQ(b[1], a[1]);
}

TEST(StackCapture, CaptureStackFromWalkIds) {
  void* a[kMaxStackDepth];
  void* b[kMaxStackDepth];
  int na = -1, nb = -1, nc = -1;
  RbpMemoProbe(a, &na, b, &nb, b, &nc, kMaxStackDepth);  // warms the rule cache
  CallerRegs regs;
  heapkit_caller_regs(&regs);
  uint64_t id1 = 0;
  const int n1 = CaptureStackFrom(regs.pc, regs.sp, regs.rbp, a, kMaxStackDepth, &id1);
  ASSERT_GE(n1, 3);
  EXPECT_NE(id1, 0u);
  for (void*& p : b) p = reinterpret_cast<void*>(0x5a5a);
  uint64_t id2 = id1;
  const int n2 = CaptureStackFrom(regs.pc, regs.sp, regs.rbp, b, kMaxStackDepth, &id2);
  EXPECT_EQ(n2, n1);
  EXPECT_EQ(id2, id1);
  EXPECT_EQ(b[0], reinterpret_cast<void*>(0x5a5a));  // not copied: the caller has them
  uint64_t id3 = 0;
  const int n3 = CaptureStackFrom(regs.pc, regs.sp, regs.rbp, b, kMaxStackDepth, &id3);
  EXPECT_EQ(id3, id1);
  ASSERT_EQ(n3, n1);
  for (int i = 0; i < n1; ++i) EXPECT_EQ(b[i], a[i]) << i;
}
#endif

#ifdef HEAPKIT_CFI_UNWINDER
// CaptureWouldRepeat says "the same frames" only for the memo's own walk from the same start,
// with every checked word unchanged: a frame deep in the chain (the site's, in a later group of
// the memo's checks than the first) that differs makes it say no.
TEST(StackCapture, CaptureWouldRepeatChecksEveryFrameOfTheWalk) {
  // Probes from one call site here, through site 0 or 1 of the chain; whether each one's walk
  // was the memo's: none before the first, then the same site again, then the other site.
  constexpr int kSites[] = {0, 0, 1, 1, 0, 0};
  constexpr bool kRepeats[] = {false, true, false, true, false, true};
  void* pcs[6][kMaxStackDepth];
  int n[6] = {};
  WordCheck checks[6][2 * kMemoFrames + kCheckGroup];
  int nchecks[6] = {};
  uint64_t id = 0;
  for (int probe = 0; probe < 6; ++probe) {
    bool repeated = !kRepeats[probe];
    const uint64_t before = id;
    n[probe] = RepeatProbeFromSite(kSites[probe], &id, &repeated, pcs[probe], kMaxStackDepth);
    EXPECT_EQ(repeated, kRepeats[probe]) << "probe " << probe;
    if (kRepeats[probe]) {
      EXPECT_EQ(id, before) << "probe " << probe;
    }
    ASSERT_GE(n[probe], kRepeatChainDepth + 3);
    const WalkMemo& m = tls_cfi_memo;
    ASSERT_GE(m.groups, 1);
    ASSERT_EQ(m.groups * kCheckGroup, m.checks);
    nchecks[probe] = m.checks;
    for (int i = 0; i < m.checks; ++i) checks[probe][i] = m.check[i];
  }
  for (int probe = 1; probe < 6; ++probe) {
    ASSERT_EQ(n[probe], n[0]);
    ASSERT_EQ(nchecks[probe], nchecks[0]);
  }
  // The two sites' walks differ in one frame only, the site's return address, far up the chain;
  // the memo's word that tells them apart is beyond the first group of checks.
  int differ = -1;
  for (int i = 0; i < n[0]; ++i) {
    EXPECT_EQ(pcs[1][i], pcs[0][i]) << i;
    EXPECT_EQ(pcs[3][i], pcs[2][i]) << i;
    if (pcs[0][i] == pcs[2][i]) continue;
    EXPECT_EQ(differ, -1) << "frames " << differ << " and " << i << " differ";
    differ = i;
  }
  EXPECT_GE(differ, kRepeatChainDepth);
  int word = -1;
  for (int i = 0; i < nchecks[0] && word < 0; ++i)
    if (checks[0][i].at == checks[2][i].at && checks[0][i].value != checks[2][i].value) word = i;
  EXPECT_GE(word, kCheckGroup);
}

// Only the memo's id repeats, never 0. Unguarded, the check relies on the memo's order: a
// rewrite (a signal handler's capture, or one this check interrupted in a handler) first clears
// pc0, so a memo under rewrite never repeats, then takes a fresh id, so that no earlier id
// repeats once any word of a rewrite can have been read.
// Reusing the outer frames of the memo's walk (cfi_unwinder.cc): a chain whose frames alternate
// between code with and without frame pointers is entered through one call site, then the
// other, each time capturing at one level (down or up), the next level each time; so the memo
// holds the other site's walk, whose frames in the chain have the same pc and sp as the new
// walk's but other callers above them. The capture that joins the memo's walk must give the
// frames of a whole walk (the memo forgotten first) and of libunwind, at depths within the
// memo and beyond it; and a second capture from another call site joins that whole walk.
struct JoinProbe {
  int calls = 0;
  int target = 0;  // the probe call that captures
  int captures = 0;
  int mismatches = 0;
  int depth = 0;  // of the joined capture
};

__attribute__((noinline)) void CompareJoinedWalk(void* ctx) {
  auto* p = static_cast<JoinProbe*>(ctx);
  if (p->calls++ != p->target) return;
  void* joined[kMaxCaptureDepth];
  void* full[kMaxCaptureDepth];
  void* libunwind[kMaxCaptureDepth];
  static WalkMemo joined_memo;
  CallerRegs regs;
  heapkit_caller_regs(&regs);
  uint64_t walk = 0;
  const int nj = CaptureStackFrom(regs.pc, regs.sp, regs.rbp, joined, kMaxCaptureDepth, &walk);
  joined_memo = tls_cfi_memo;
  tls_cfi_memo.pc0 = 0;  // forgotten: the next walk is a whole one
  tls_cfi_memo.frames = 0;
  walk = 0;
  const int nf = CaptureStackFrom(regs.pc, regs.sp, regs.rbp, full, kMaxCaptureDepth, &walk);
  if (nf > 0 && nf < kMaxCaptureDepth && !SameDependencies(joined_memo, tls_cfi_memo))
    ++p->mismatches;
  const int nl = CaptureStackWithLibunwind(libunwind, kMaxCaptureDepth, 0);
  ++p->captures;
  p->depth = nj;
  // libunwind's capture starts one frame up, at this function's caller: one frame fewer, or
  // as many at the depth limit.
  const auto one_up = [nf](int n) { return n == nf - 1 || (nf == kMaxCaptureDepth && n == nf); };
  bool same = nj == nf && one_up(nl) && nj > 0;
  for (int i = 0; same && i < nj; ++i) same = joined[i] == full[i];
  for (int i = 0; same && i + 1 < nf; ++i) same = full[i + 1] == libunwind[i];
  if (!same) ++p->mismatches;
  // Joining the whole walk from this function's caller on.
  const int nj2 = CaptureStackWithCfi(joined, kMaxCaptureDepth, 0);
  same = one_up(nj2);
  for (int i = 0; same && i + 1 < nf; ++i) same = joined[i] == full[i + 1];
  if (!same) ++p->mismatches;
}

TEST(StackCapture, JoinedWalkMatchesWholeWalkThroughFramePointerCode) {
  InitStackCapture();
  for (const int depth : {6, 40, kMemoFrames + 8}) {
    const uint64_t reuses_before = tls_cfi_memo.outer_reuses;
    int runs = 0, deepest = 0;
    for (int target = 0; target < 2 * (depth + 1); ++target, ++runs) {
      JoinProbe probe;
      probe.target = target;
      MixedChainFromSite(target % 2, depth, &CompareJoinedWalk, &probe);
      ASSERT_EQ(probe.captures, 1);
      EXPECT_EQ(probe.mismatches, 0) << "depth " << depth << " probe call " << target;
      deepest = std::max(deepest, probe.depth);
    }
    if (depth + 16 < kMemoFrames) {
      EXPECT_GT(deepest, depth);
      // Both joined captures of a run joined the walk before them (but the test's first:
      // the memo may hold none).
      EXPECT_GE(tls_cfi_memo.outer_reuses - reuses_before, static_cast<uint64_t>(2 * runs - 1))
          << "depth " << depth;
    } else {
      EXPECT_EQ(deepest, kMaxCaptureDepth) << "beyond the memo: every frame up to the limit";
    }
  }
}

TEST(StackCapture, CaptureWouldRepeatOnlyForTheMemosIdOutsideARewrite) {
  void* a[kMaxStackDepth];
  CallerRegs regs;
  heapkit_caller_regs(&regs);
  uint64_t id = 0;
  ASSERT_GE(CaptureStackFrom(regs.pc, regs.sp, regs.rbp, a, kMaxStackDepth, &id), 3);
  ASSERT_NE(id, 0u);
  EXPECT_TRUE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id, false));
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id + 1, false));
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, 0, false));
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth / 2, id, false));
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp - 16, regs.rbp, kMaxStackDepth, id, false));
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id, true))
      << "the frees' memo has ids of its own";
  // A rewrite stopped after its first store (as a check in a signal handler would see it).
  const uintptr_t pc0 = tls_cfi_memo.pc0;
  tls_cfi_memo.pc0 = 0;
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id, false));
  tls_cfi_memo.pc0 = pc0;
  EXPECT_TRUE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id, false));
  // A whole rewrite of the same frames: a fresh id, the earlier one never repeats again.
  tls_cfi_memo.pc0 = 0;
  uint64_t id2 = id;
  ASSERT_GE(CaptureStackFrom(regs.pc, regs.sp, regs.rbp, a, kMaxStackDepth, &id2), 3);
  EXPECT_NE(id2, id);
  EXPECT_FALSE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id, false));
  EXPECT_TRUE(CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, kMaxStackDepth, id2, false));
}
#endif

void* g_handler_a[kMaxStackDepth];
void* g_handler_b[kMaxStackDepth];
volatile int g_handler_na = -1, g_handler_nb = -2;

void CompareHandler(int) {
  int na = -1, nb = -2;
  VariedChainBoth(g_handler_a, &na, g_handler_b, &nb, kMaxStackDepth, 4);
  g_handler_na = na;
  g_handler_nb = nb;
}

void* g_handler_c[kMaxStackDepth];
volatile int g_handler_nc = -1;

void CaptureStackHandler(int) { g_handler_nc = CaptureStack(g_handler_c, kMaxStackDepth, 0); }

// A signal frame is not for the CFI walker (its FDE is a signal frame with a CFA expression):
// it says so, and CaptureStack hands over to libunwind, which unwinds into the interrupted code.
TEST(StackCapture, CfiUnwinderDefersSignalFramesToLibunwind) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = &CompareHandler;
  sigaction(SIGUSR2, &sa, &old);
  raise(SIGUSR2);
  EXPECT_EQ(g_handler_na, -1);
  EXPECT_GE(g_handler_nb, 8);
  sa.sa_handler = &CaptureStackHandler;
  sigaction(SIGUSR2, &sa, nullptr);
  raise(SIGUSR2);
  sigaction(SIGUSR2, &old, nullptr);
  void* here[kMaxStackDepth];
  int nh = CaptureStackWithLibunwind(here, kMaxStackDepth, 0);
  // The handler's stack ends with this test's callers: the same outer frames as here.
  ASSERT_GE(g_handler_nc, nh);
  for (int i = 1; i <= nh - 1; ++i) EXPECT_EQ(g_handler_c[g_handler_nc - i], here[nh - i]) << i;
}

TEST(StackCapture, CfiUnwinderMatchesLibunwindOnOtherThreads) {
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        void* a[kMaxStackDepth];
        void* b[kMaxStackDepth];
        int na = -1, nb = -2;
        VariedChainBoth(a, &na, b, &nb, kMaxStackDepth, (i + t) % 7);
        bool same = na == nb && na > 3;
        for (int k = 0; same && k < na; ++k) same = a[k] == b[k];
        if (same) ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 600);
}

TEST(AllocatorFrames, ReturnAddressesAreSkipped) {
  InitAllocatorFrames();
  EXPECT_FALSE(RuntimeIsSharedObject());  // the unit test links the code statically
  int marker1 = 0, marker2 = 0, user = 0;
  AddAllocatorReturnAddress(&marker1);
  AddAllocatorReturnAddress(&marker2);
  AddAllocatorReturnAddress(&marker1);  // duplicates are fine
  void* pcs[] = {&marker1, &marker2, &user, &marker1};
  EXPECT_EQ(CountAllocatorFrames(pcs, 4), 2);  // stops at the first user frame
  EXPECT_EQ(CountAllocatorFrames(pcs, 1), 1);
  EXPECT_FALSE(IsAllocatorFrame(&user));
}

}  // namespace
}  // namespace heapkit::prof
