// The frame-pointer half of MixedChainFromSite (call_chain.h): built with -fno-omit-frame-pointer
// (CMakeLists.txt), so that every frame's CFA is rbp-based and every step restores rbp.
#include "call_chain.h"

int MixedChainNoFp(int depth, ChainProbe probe, void* ctx);

namespace {
volatile int g_fp_after_call = 0;  // work after each call keeps it from becoming a tail call
}

__attribute__((noinline)) int MixedChainFp(int depth, ChainProbe probe, void* ctx) {
  probe(ctx);
  const int n = depth > 0 ? MixedChainNoFp(depth - 1, probe, ctx) : 0;
  probe(ctx);
  return n + 1 + g_fp_after_call;
}
