// A known call chain built -O2 -fomit-frame-pointer (see CMakeLists.txt): ChainLevel0 calls
// ChainLevel1 calls ChainLevel2, which calls CaptureStack. Each function lives in its own
// section so the test knows its exact address range.
#pragma once

#include <cstdint>

#include "profiler/capture/cfi_unwinder.h"

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

// Recursion `depth` frames deep through functions of different frame shapes (a variable-length
// array, which makes the CFA rbp-based even without frame pointers; a 64 KiB frame; a plain
// frame), then captures at the bottom twice from the same frame: with CaptureStackWithCfi into
// a (-1: it needed libunwind) and with CaptureStackWithLibunwind into b. Returns *na + *nb.
int VariedChainBoth(void** a, int* na, void** b, int* nb, int max_depth, int depth);

// VariedChainBoth(depth 3) called through one of two call sites (site 0 or 1) whose frames
// have the same size, so both captures start at the same stack pointer.
int VariedChainFromSite(int site, void** a, int* na, void** b, int* nb, int max_depth);

// x86-64 (cached CFI unwinder) only: a frame with an rbp-based CFA captures from its own
// registers into a, then twice from the same pc and sp with a different rbp that points at a
// fake saved (rbp, 0) pair, so that a full walk stops after one frame: b1 right after a (the
// unwinder's memo must notice the rbp), b2 after another capture replaced the memo.
int RbpMemoProbe(void** a, int* na, void** b1, int* nb1, void** b2, int* nb2, int max_depth);

// x86-64 only: a chain of `kRepeatChainDepth` plain frames reached through one of two call sites
// (site 0 or 1, same frame size) whose bottom frame asks CaptureWouldRepeat for *walk_id from its
// own registers (into *repeated), then captures from them through the allocations' memo into
// pcs with a fresh id (into *walk_id). Returns the depth.
constexpr int kRepeatChainDepth = 10;
int RepeatProbeFromSite(int site, uint64_t* walk_id, bool* repeated, void** pcs, int max_depth);

// x86-64 only: a chain `depth` frames deep whose functions alternate between code built with
// frame pointers (fp_chain.cc) and without (this file; every fourth one with a variable-length
// array, which gives it an rbp-based CFA without frame pointers), entered through one of two
// call sites (site 0 or 1, frames of the same size, so that the chain's frames have the same
// pc and sp from either). Every level calls probe(ctx) on the way down and again on the way up.
using ChainProbe = void (*)(void* ctx);
int MixedChainFromSite(int site, int depth, ChainProbe probe, void* ctx);

// x86-64 only: a frame with an rbp-based CFA calls, twice from one call site, a leaf that
// leaves rbp alone: first through one more frame that captures (the memo's walk, through this
// frame at that site), then the leaf captures from its own registers into a (a walk that joins
// the memo's at this frame, whose CFA uses the leaf's rbp, the start rbp: *joined says whether
// it joined) and from the same pc and sp with rbp at a fake saved (rbp, 0) pair in this frame
// into b (a whole walk stops after two frames: the leaf's and this one's). Then the memo of
// the joined walk (right after it) goes to *joined_memo, and that of a whole walk from the
// leaf's registers (the memo forgotten first) to *whole_memo.
int RbpJoinProbe(void** a, int* na, void** b, int* nb, bool* joined,
                 heapkit::prof::WalkMemo* joined_memo, heapkit::prof::WalkMemo* whole_memo,
                 int max_depth);
