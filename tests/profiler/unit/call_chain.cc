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
