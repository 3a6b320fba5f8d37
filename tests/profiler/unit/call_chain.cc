#include "call_chain.h"

#include "profiler/stack_capture.h"

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
    case 0: return {reinterpret_cast<uintptr_t>(__start_chain_l0), reinterpret_cast<uintptr_t>(__stop_chain_l0)};
    case 1: return {reinterpret_cast<uintptr_t>(__start_chain_l1), reinterpret_cast<uintptr_t>(__stop_chain_l1)};
    default: return {reinterpret_cast<uintptr_t>(__start_chain_l2), reinterpret_cast<uintptr_t>(__stop_chain_l2)};
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
