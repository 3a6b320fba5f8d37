// The CFA program interpreter on hand-written CFI (profiler/capture/cfa_program.h).
#include "profiler/capture/cfa_program.h"

#include <dwarf.h>
#include <gtest/gtest.h>

#include <vector>

namespace heapkit::prof {
namespace {

// Runs `program` as an FDE's instructions from location 0 to the end, after the usual x86-64
// CIE (CFA = rsp + 8, return address at CFA - 8). code_align 1, data_align -8.
CfaState RunProgram(const std::vector<uint8_t>& program, bool* ok) {
  CfaState st;
  const CfaState initial = st;
  Reader r{program.data(), program.data() + program.size()};
  *ok = RunCfa(r, 0, UINTPTR_MAX, 1, -8, 0x1b, &initial, &st);
  return st;
}

TEST(CfaProgram, PushRbpFrame) {
  bool ok = false;
  const CfaState st =
      RunProgram({DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16, DW_CFA_offset | kDwarfRbp, 2,
                  DW_CFA_advance_loc | 3, DW_CFA_def_cfa_register, kDwarfRbp},
                 &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(st.cfa_reg, kDwarfRbp);
  EXPECT_EQ(st.cfa_off, 16);
  EXPECT_EQ(st.rbp, RegRule::kOffset);
  EXPECT_EQ(st.rbp_off, -16);
  EXPECT_EQ(st.ra, RegRule::kOffset);
}

// DW_CFA_expression's block is a DWARF expression: skipped whole, the register marked as not
// followable. Its bytes here would read as "def_cfa rsp, 64" if run as CFA instructions.
TEST(CfaProgram, ExpressionBlocksAreSkippedNotRun) {
  bool ok = false;
  const CfaState st = RunProgram({DW_CFA_def_cfa, kDwarfRsp, 16, DW_CFA_expression, kDwarfRbp, 3,
                                  DW_CFA_def_cfa, kDwarfRsp, 64},
                                 &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(st.cfa_reg, kDwarfRsp);
  EXPECT_EQ(st.cfa_off, 16);  // not 64
  EXPECT_TRUE(st.cfa_simple);
  EXPECT_EQ(st.rbp, RegRule::kOther);

  const CfaState val = RunProgram(
      {DW_CFA_val_expression, kDwarfReturnAddress, 1, DW_OP_nop, DW_CFA_def_cfa_offset, 48}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(val.ra, RegRule::kOther);
  EXPECT_EQ(val.cfa_off, 48);

  const CfaState cfa = RunProgram({DW_CFA_def_cfa_expression, 2, DW_CFA_def_cfa_offset, 99}, &ok);
  ASSERT_TRUE(ok);
  EXPECT_FALSE(cfa.cfa_simple);
  EXPECT_EQ(cfa.cfa_off, 8);  // the block's bytes were not run
}

TEST(CfaProgram, TruncatedBlockIsMalformed) {
  bool ok = true;
  RunProgram({DW_CFA_expression, kDwarfRbp, 10, 1, 2}, &ok);
  EXPECT_FALSE(ok);
}

TEST(CfaProgram, StopsAtTargetAndRestores) {
  CfaState st;
  const CfaState initial = st;
  const std::vector<uint8_t> p = {DW_CFA_def_cfa_offset,     32,
                                  DW_CFA_offset | kDwarfRbp, 4,
                                  DW_CFA_advance_loc | 10,   DW_CFA_restore | kDwarfRbp,
                                  DW_CFA_def_cfa_offset,     8};
  Reader r{p.data(), p.data() + p.size()};
  ASSERT_TRUE(RunCfa(r, 0, 5, 1, -8, 0x1b, &initial, &st));  // stops before the advance
  EXPECT_EQ(st.cfa_off, 32);
  EXPECT_EQ(st.rbp, RegRule::kOffset);
  CfaState all;
  Reader r2{p.data(), p.data() + p.size()};
  ASSERT_TRUE(RunCfa(r2, 0, UINTPTR_MAX, 1, -8, 0x1b, &initial, &all));
  EXPECT_EQ(all.cfa_off, 8);
  EXPECT_EQ(all.rbp, RegRule::kSameValue);
}

}  // namespace
}  // namespace heapkit::prof
