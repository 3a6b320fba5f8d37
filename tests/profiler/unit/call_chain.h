// A known call chain built -O2 -fomit-frame-pointer (see CMakeLists.txt): ChainLevel0 calls
// ChainLevel1 calls ChainLevel2, which calls CaptureStack. Each function lives in its own
// section so the test knows its exact address range.
#pragma once

#include <cstdint>

struct CodeRange {
  uintptr_t lo, hi;
  bool Contains(const void* pc) const {
    auto v = reinterpret_cast<uintptr_t>(pc);
    return v >= lo && v < hi;
  }
};

// Captures into pcs (skip 0) from three levels down; returns the depth.
int ChainLevel0(void** pcs, int max_depth);
CodeRange ChainRange(int level);
