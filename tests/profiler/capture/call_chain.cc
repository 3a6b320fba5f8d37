#include "call_chain.h"

#include "profiler/capture/cfi_unwinder.h"
#include "profiler/capture/stack_capture.h"

extern "C" {
extern char __start_chain_l0[], __stop_chain_l0[];
extern char __start_chain_l1[], __stop_chain_l1[];
extern char __start_chain_l2[], __stop_chain_l2[];
}

namespace {
volatile int g_after_call = 0;  // work after each call keeps it from becoming a tail call
}

__attribute__((noinline, section("chain_l2"))) int ChainLevel2(void** pcs, int max_depth) {
  int n = heapkit::prof::CaptureStack(pcs, max_depth, 0);
  return n + g_after_call;
}

__attribute__((noinline, section("chain_l1"))) int ChainLevel1(void** pcs, int max_depth) {
  int n = ChainLevel2(pcs, max_depth);
  return n + g_after_call;
}

__attribute__((noinline, section("chain_l0"))) int ChainLevel0(void** pcs, int max_depth) {
  int n = ChainLevel1(pcs, max_depth);
  return n + g_after_call;
}

CodeRange ChainRange(int level) {
  switch (level) {
    case 0:
      return {reinterpret_cast<uintptr_t>(__start_chain_l0),
              reinterpret_cast<uintptr_t>(__stop_chain_l0)};
    case 1:
      return {reinterpret_cast<uintptr_t>(__start_chain_l1),
              reinterpret_cast<uintptr_t>(__stop_chain_l1)};
    default:
      return {reinterpret_cast<uintptr_t>(__start_chain_l2),
              reinterpret_cast<uintptr_t>(__stop_chain_l2)};
  }
}

namespace {

__attribute__((noinline)) int CaptureBoth(void** a, int* na, void** b, int* nb, int max_depth) {
  *na = heapkit::prof::CaptureStackWithCfi(a, max_depth, 0);
  *nb = heapkit::prof::CaptureStackWithLibunwind(b, max_depth, 0);
  return *na + *nb + g_after_call;
}

int Varied(void** a, int* na, void** b, int* nb, int max_depth, int depth);

__attribute__((noinline)) int WithVla(void** a, int* na, void** b, int* nb, int max_depth,
                                      int depth) {
  volatile char buf[16 * (depth + 1)];
  buf[0] = static_cast<char>(depth);
  int n = Varied(a, na, b, nb, max_depth, depth - 1);
  return n + buf[0] + g_after_call;
}

__attribute__((noinline)) int WithBigFrame(void** a, int* na, void** b, int* nb, int max_depth,
                                           int depth) {
  volatile char big[64 * 1024];
  big[depth] = 1;
  int n = Varied(a, na, b, nb, max_depth, depth - 1);
  return n + big[depth] + g_after_call;
}

__attribute__((noinline)) int Plain(void** a, int* na, void** b, int* nb, int max_depth,
                                    int depth) {
  int n = Varied(a, na, b, nb, max_depth, depth - 1);
  return n + g_after_call;
}

__attribute__((noinline)) int Varied(void** a, int* na, void** b, int* nb, int max_depth,
                                     int depth) {
  if (depth <= 0) return CaptureBoth(a, na, b, nb, max_depth) + g_after_call;
  switch (depth % 3) {
    case 0: return WithVla(a, na, b, nb, max_depth, depth) + g_after_call;
    case 1: return WithBigFrame(a, na, b, nb, max_depth, depth) + g_after_call;
    default: return Plain(a, na, b, nb, max_depth, depth) + g_after_call;
  }
}

}  // namespace

int VariedChainBoth(void** a, int* na, void** b, int* nb, int max_depth, int depth) {
  return Varied(a, na, b, nb, max_depth, depth) + g_after_call;
}

namespace {
__attribute__((noinline)) int SiteA(void** a, int* na, void** b, int* nb, int max_depth) {
  int n = VariedChainBoth(a, na, b, nb, max_depth, 3);
  return n + g_after_call;
}
__attribute__((noinline)) int SiteB(void** a, int* na, void** b, int* nb, int max_depth) {
  int n = VariedChainBoth(a, na, b, nb, max_depth, 3);
  return n + g_after_call;
}
}  // namespace

int VariedChainFromSite(int site, void** a, int* na, void** b, int* nb, int max_depth) {
  int n = site == 0 ? SiteA(a, na, b, nb, max_depth) : SiteB(a, na, b, nb, max_depth);
  return n + g_after_call;
}

#ifdef HEAPKIT_CFI_UNWINDER
// A frame whose CFA is rbp-based (the variable-length array) captures with CaptureStackFrom
// from its own register state, then from the same pc and sp with rbp pointing at a fake saved
// (rbp, return address = 0) pair on its stack: a full walk of the latter stops after one frame.
// Then the same again after a capture from elsewhere has replaced the walk memo.
__attribute__((noinline)) int RbpMemoProbe(void** a, int* na, void** b1, int* nb1, void** b2,
                                           int* nb2, int max_depth) {
  volatile char vla[16 + g_after_call];
  vla[0] = 1;
  uintptr_t fake[2] = {0, 0};
  heapkit::prof::CallerRegs regs;
  heapkit::prof::heapkit_caller_regs(&regs);
  const uintptr_t fake_rbp = reinterpret_cast<uintptr_t>(&fake[0]);
  uint64_t walk = 0;
  *na = heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, regs.rbp, a, max_depth, &walk);
  walk = 0;
  *nb1 = heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, fake_rbp, b1, max_depth, &walk);
  void* other[4];
  (void)heapkit::prof::CaptureStackWithCfi(other, 4, 0);  // replaces the memo
  walk = 0;
  *nb2 = heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, fake_rbp, b2, max_depth, &walk);
  asm volatile("" : : "r"(fake) : "memory");
  return *na + *nb1 + *nb2 + vla[0] + g_after_call;
}
#endif

#ifdef HEAPKIT_CFI_UNWINDER
namespace {

__attribute__((noinline)) int RepeatLeaf(uint64_t* walk_id, bool* repeated, void** pcs,
                                         int max_depth) {
  heapkit::prof::CallerRegs regs;
  heapkit::prof::heapkit_caller_regs(&regs);
  *repeated = heapkit::prof::CaptureWouldRepeat(regs.pc, regs.sp, regs.rbp, max_depth, *walk_id,
                                                /*free_memo=*/false);
  uint64_t fresh = 0;
  const int n = heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, regs.rbp, pcs, max_depth, &fresh);
  *walk_id = fresh;
  return n + g_after_call;
}

__attribute__((noinline)) int RepeatChain(uint64_t* walk_id, bool* repeated, void** pcs,
                                          int max_depth, int depth) {
  const int n = depth <= 0 ? RepeatLeaf(walk_id, repeated, pcs, max_depth)
                           : RepeatChain(walk_id, repeated, pcs, max_depth, depth - 1);
  return n + g_after_call;
}

__attribute__((noinline)) int RepeatSiteA(uint64_t* walk_id, bool* repeated, void** pcs,
                                          int max_depth) {
  const int n = RepeatChain(walk_id, repeated, pcs, max_depth, kRepeatChainDepth);
  return n + g_after_call;
}
__attribute__((noinline)) int RepeatSiteB(uint64_t* walk_id, bool* repeated, void** pcs,
                                          int max_depth) {
  const int n = RepeatChain(walk_id, repeated, pcs, max_depth, kRepeatChainDepth);
  return n + g_after_call;
}

}  // namespace

int RepeatProbeFromSite(int site, uint64_t* walk_id, bool* repeated, void** pcs, int max_depth) {
  const int n = site == 0 ? RepeatSiteA(walk_id, repeated, pcs, max_depth)
                          : RepeatSiteB(walk_id, repeated, pcs, max_depth);
  return n + g_after_call;
}
#endif

int MixedChainFp(int depth, ChainProbe probe, void* ctx);  // fp_chain.cc

namespace {
__attribute__((noinline)) int MixedChainVla(int depth, ChainProbe probe, void* ctx) {
  volatile char vla[16 * (depth + 1)];
  vla[0] = 1;
  probe(ctx);
  const int n = depth > 0 ? MixedChainFp(depth - 1, probe, ctx) : 0;
  probe(ctx);
  return n + vla[0] + g_after_call;
}
}  // namespace

__attribute__((noinline)) int MixedChainNoFp(int depth, ChainProbe probe, void* ctx) {
  if (depth % 4 == 1) return MixedChainVla(depth, probe, ctx) + g_after_call;
  probe(ctx);
  const int n = depth > 0 ? MixedChainFp(depth - 1, probe, ctx) : 0;
  probe(ctx);
  return n + 1 + g_after_call;
}

namespace {
__attribute__((noinline)) int MixedSiteA(int depth, ChainProbe probe, void* ctx) {
  const int n = MixedChainNoFp(depth, probe, ctx);
  return n + g_after_call;
}
__attribute__((noinline)) int MixedSiteB(int depth, ChainProbe probe, void* ctx) {
  const int n = MixedChainNoFp(depth, probe, ctx);
  return n + g_after_call;
}
}  // namespace

int MixedChainFromSite(int site, int depth, ChainProbe probe, void* ctx) {
  const int n = site == 0 ? MixedSiteA(depth, probe, ctx) : MixedSiteB(depth, probe, ctx);
  return n + g_after_call;
}

#ifdef HEAPKIT_CFI_UNWINDER
namespace {
__attribute__((noinline)) int JoinCapture() {
  void* pcs[heapkit::prof::kMaxCaptureDepth];
  const int n = heapkit::prof::CaptureStackWithCfi(pcs, heapkit::prof::kMaxCaptureDepth, 0);
  return n + g_after_call;
}

struct RbpJoin {
  void** a;
  int* na;
  void** b;
  int* nb;
  bool* joined;
  heapkit::prof::WalkMemo* joined_memo;
  heapkit::prof::WalkMemo* whole_memo;
  int max_depth;
  uintptr_t fake_rbp;
};

// The captures from the leaf's registers (regs), out of the leaf, so that the leaf needs no
// more than one saved register (never rbp).
__attribute__((noinline)) int JoinFrom(const heapkit::prof::CallerRegs& regs, const RbpJoin* j) {
  const uint64_t reuses = heapkit::prof::tls_cfi_memo.outer_reuses;
  uint64_t walk = 0;
  *j->na = heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, regs.rbp, j->a, j->max_depth, &walk);
  *j->joined = heapkit::prof::tls_cfi_memo.outer_reuses == reuses + 1;
  *j->joined_memo = heapkit::prof::tls_cfi_memo;
  walk = 0;
  *j->nb =
      heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, j->fake_rbp, j->b, j->max_depth, &walk);
  heapkit::prof::tls_cfi_memo.pc0 = 0;  // forgotten: the next walk is a whole one
  heapkit::prof::tls_cfi_memo.frames = 0;
  void* whole[heapkit::prof::kMaxCaptureDepth];
  walk = 0;
  (void)heapkit::prof::CaptureStackFrom(regs.pc, regs.sp, regs.rbp, whole, j->max_depth, &walk);
  *j->whole_memo = heapkit::prof::tls_cfi_memo;
  return *j->na + g_after_call;
}

heapkit::prof::CallerRegs g_join_regs;

__attribute__((noinline)) int JoinLeaf(int mode, const RbpJoin* j) {
  if (mode == 0) return JoinCapture() + g_after_call;
  heapkit::prof::heapkit_caller_regs(&g_join_regs);  // a global: no register holds its address
  return JoinFrom(g_join_regs, j) + g_after_call;
}
}  // namespace

__attribute__((noinline)) int RbpJoinProbe(void** a, int* na, void** b, int* nb, bool* joined,
                                           heapkit::prof::WalkMemo* joined_memo,
                                           heapkit::prof::WalkMemo* whole_memo, int max_depth) {
  volatile char vla[16 + g_after_call];
  vla[0] = 1;
  uintptr_t fake[2] = {0, 0};
  const RbpJoin j = {a,          na,        b,
                     nb,         joined,    joined_memo,
                     whole_memo, max_depth, reinterpret_cast<uintptr_t>(&fake[0])};
  int n = 0;
  // One call site: a loop that is not unrolled (its count is not known).
  for (int mode = 0; mode < 2 + g_after_call; ++mode) n += JoinLeaf(mode, &j);
  asm volatile("" : : "r"(fake) : "memory");
  return n + vla[0] + g_after_call;
}
#endif
