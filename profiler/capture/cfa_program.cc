#include "profiler/capture/cfa_program.h"

#include <dwarf.h>

#include "alloc/common.h"

namespace heapkit::prof {
namespace {

void SetRule(CfaState* st, uint64_t reg, RegRule rule, int64_t off) {
  if (reg == kDwarfRbp) {
    st->rbp = rule == RegRule::kUndefined ? RegRule::kOther : rule;
    st->rbp_off = off;
  } else if (reg == kDwarfReturnAddress) {
    st->ra = rule == RegRule::kSameValue ? RegRule::kOther : rule;
    st->ra_off = off;
  }
}

void Restore(CfaState* st, const CfaState* initial, uint64_t reg) {
  if (initial == nullptr) return;
  if (reg == kDwarfRbp) {
    st->rbp = initial->rbp;
    st->rbp_off = initial->rbp_off;
  } else if (reg == kDwarfReturnAddress) {
    st->ra = initial->ra;
    st->ra_off = initial->ra_off;
  }
}

// Skips a DWARF expression block (ULEB length, then the bytes). False if it overruns.
bool SkipBlock(Reader& r) {
  const uint64_t len = r.Uleb();
  if (!r.Has(len)) return false;
  r.p += len;
  return true;
}

// The primary opcodes (DW_CFA_advance_loc, DW_CFA_offset, DW_CFA_restore) keep their operand
// in the low six bits of the opcode byte; the others have those two high bits clear.
constexpr uint8_t kPrimaryOpcodeMask = 0xc0;
constexpr uint8_t kPrimaryOperandMask = 0x3f;

// The register-rule and CFA-definition instructions. False on an instruction it does not know
// or a malformed expression block.
bool ApplyRuleOp(uint8_t op, Reader& r, int64_t data_align, const CfaState* initial, CfaState* st) {
  switch (op) {
    case DW_CFA_offset_extended: {
      const uint64_t reg = r.Uleb();
      SetRule(st, reg, RegRule::kOffset, static_cast<int64_t>(r.Uleb()) * data_align);
      break;
    }
    case DW_CFA_offset_extended_sf: {
      const uint64_t reg = r.Uleb();
      SetRule(st, reg, RegRule::kOffset, r.Sleb() * data_align);
      break;
    }
    case DW_CFA_GNU_negative_offset_extended: {
      const uint64_t reg = r.Uleb();
      SetRule(st, reg, RegRule::kOffset, -static_cast<int64_t>(r.Uleb()) * data_align);
      break;
    }
    case DW_CFA_restore_extended: Restore(st, initial, r.Uleb()); break;
    case DW_CFA_undefined: SetRule(st, r.Uleb(), RegRule::kUndefined, 0); break;
    case DW_CFA_same_value: SetRule(st, r.Uleb(), RegRule::kSameValue, 0); break;
    case DW_CFA_register: {
      const uint64_t reg = r.Uleb();
      r.Uleb();
      SetRule(st, reg, RegRule::kOther, 0);
      break;
    }
    case DW_CFA_expression:
    case DW_CFA_val_expression: {  // register rule by an expression: not followed
      const uint64_t reg = r.Uleb();
      if (!SkipBlock(r)) return false;
      SetRule(st, reg, RegRule::kOther, 0);
      break;
    }
    case DW_CFA_val_offset:
    case DW_CFA_val_offset_sf: {
      const uint64_t reg = r.Uleb();
      if (op == DW_CFA_val_offset)
        r.Uleb();
      else
        r.Sleb();
      SetRule(st, reg, RegRule::kOther, 0);
      break;
    }
    case DW_CFA_def_cfa:
      st->cfa_reg = r.Uleb();
      st->cfa_off = static_cast<int64_t>(r.Uleb());
      st->cfa_simple = true;
      break;
    case DW_CFA_def_cfa_sf:
      st->cfa_reg = r.Uleb();
      st->cfa_off = r.Sleb() * data_align;
      st->cfa_simple = true;
      break;
    case DW_CFA_def_cfa_register:
      st->cfa_reg = r.Uleb();
      st->cfa_simple = true;
      break;
    case DW_CFA_def_cfa_offset: st->cfa_off = static_cast<int64_t>(r.Uleb()); break;
    case DW_CFA_def_cfa_offset_sf: st->cfa_off = r.Sleb() * data_align; break;
    case DW_CFA_def_cfa_expression:
      if (!SkipBlock(r)) return false;
      st->cfa_simple = false;
      break;
    case DW_CFA_GNU_args_size: r.Uleb(); break;
    default: return false;
  }
  return true;
}

}  // namespace

HEAPKIT_ALWAYS_RUN_CODE uint64_t Reader::Uleb() {
  uint64_t v = 0;
  for (int shift = 0; Has(1); shift += 7) {
    uint8_t b = *p++;
    if (shift < 64) v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

HEAPKIT_ALWAYS_RUN_CODE uintptr_t Reader::Encoded(uint8_t enc, uintptr_t data_base) {
  if (enc == DW_EH_PE_omit) return 0;
  const uintptr_t here = reinterpret_cast<uintptr_t>(p);
  uintptr_t v = 0;
  switch (enc & kEhPeFormatMask) {
    case DW_EH_PE_absptr: v = Fixed<uint64_t>(); break;
    case DW_EH_PE_uleb128: v = Uleb(); break;
    case DW_EH_PE_udata2: v = Fixed<uint16_t>(); break;
    case DW_EH_PE_udata4: v = Fixed<uint32_t>(); break;
    case DW_EH_PE_udata8: v = Fixed<uint64_t>(); break;
    case DW_EH_PE_sleb128: v = static_cast<uintptr_t>(Sleb()); break;
    case DW_EH_PE_sdata2: v = static_cast<uintptr_t>(static_cast<int64_t>(Fixed<int16_t>())); break;
    case DW_EH_PE_sdata4: v = static_cast<uintptr_t>(static_cast<int64_t>(Fixed<int32_t>())); break;
    case DW_EH_PE_sdata8: v = Fixed<uint64_t>(); break;
    default: ok = false; return 0;
  }
  switch (enc & kEhPeApplicationMask) {
    case DW_EH_PE_absptr: break;
    case DW_EH_PE_pcrel: v += here; break;
    case DW_EH_PE_datarel: v += data_base; break;
    default: ok = false; return 0;
  }
  return v;
}

HEAPKIT_ALWAYS_RUN_CODE bool RunCfa(Reader r, uintptr_t loc, uintptr_t target, uint64_t code_align,
                                    int64_t data_align, uint8_t fde_enc, const CfaState* initial,
                                    CfaState* st) {
  CfaState stack[8];
  int depth = 0;
  auto advance = [&](uint64_t delta) {
    loc += delta * code_align;
    return loc <= target;
  };
  while (r.ok && r.p < r.end) {
    const uint8_t op = *r.p++;
    const uint8_t operand = op & kPrimaryOperandMask;
    switch (op & kPrimaryOpcodeMask) {
      case DW_CFA_advance_loc:
        if (!advance(operand)) return true;
        continue;
      case DW_CFA_offset:
        SetRule(st, operand, RegRule::kOffset, static_cast<int64_t>(r.Uleb()) * data_align);
        continue;
      case DW_CFA_restore: Restore(st, initial, operand); continue;
      default: break;
    }
    switch (op) {
      case DW_CFA_nop: break;
      case DW_CFA_set_loc: {
        const uintptr_t to = r.Encoded(fde_enc, 0);
        if (to > target) return true;
        loc = to;
        break;
      }
      case DW_CFA_advance_loc1:
        if (!advance(r.Fixed<uint8_t>())) return true;
        break;
      case DW_CFA_advance_loc2:
        if (!advance(r.Fixed<uint16_t>())) return true;
        break;
      case DW_CFA_advance_loc4:
        if (!advance(r.Fixed<uint32_t>())) return true;
        break;
      case DW_CFA_remember_state:
        if (depth == 8) return false;
        stack[depth++] = *st;
        break;
      case DW_CFA_restore_state:  // the CFA rule included, as libgcc and libunwind do
        if (depth == 0) return false;
        *st = stack[--depth];
        break;
      default:
        if (!ApplyRuleOp(op, r, data_align, initial, st)) return false;
        break;
    }
  }
  return r.ok;
}

}  // namespace heapkit::prof
