// The DWARF call-frame (CFA) program interpreter of the CFI unwinder: runs a CIE's or FDE's
// instructions up to a pc and keeps what the unwinder's packed rule can express for x86-64 —
// the CFA as rsp/rbp + offset, and where rbp and the return address were saved.
//
// Anything the fast unwinder cannot follow is recorded as such, never guessed: a CFA given by a
// DWARF expression (cfa_simple false), a register rule given by an expression or another
// register (kind kOther). Expression blocks (DW_CFA_expression, DW_CFA_val_expression,
// DW_CFA_def_cfa_expression) are skipped whole: their bytes are DWARF expressions, not CFA
// instructions.
#pragma once

#include <cstdint>

#include "profiler/capture/eh_frame_reader.h"

namespace heapkit::prof {

// DWARF register numbers on x86-64.
inline constexpr uint64_t kDwarfRbp = 6;
inline constexpr uint64_t kDwarfRsp = 7;
inline constexpr uint64_t kDwarfReturnAddress = 16;

enum class RegRule : uint8_t {
  kSameValue,  // unchanged in the caller
  kOffset,     // saved at CFA + offset
  kUndefined,  // no value (the return address: outermost frame)
  kOther,      // another register, an expression, a value rule: not followed
};

struct CfaState {
  uint64_t cfa_reg = kDwarfRsp;
  int64_t cfa_off = 8;
  bool cfa_simple = true;  // false: CFA given by an expression
  RegRule rbp = RegRule::kSameValue;
  int64_t rbp_off = 0;
  RegRule ra = RegRule::kOffset;
  int64_t ra_off = -8;
};

// Runs the instructions in r until the location passes `target` (true), or to their end. loc:
// the location they start at. initial: the state after the CIE's instructions (what
// DW_CFA_restore returns to), nullptr while running those. False on an instruction it does not
// know or a malformed program.
bool RunCfa(Reader r, uintptr_t loc, uintptr_t target, uint64_t code_align, int64_t data_align,
            uint8_t fde_enc, const CfaState* initial, CfaState* st);

}  // namespace heapkit::prof
