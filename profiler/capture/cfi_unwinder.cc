// The cached .eh_frame (DWARF CFI) unwinder behind CaptureStack (x86-64).
//
// * Fast path (x86-64): every frame is stepped with a rule read from the code's .eh_frame (the
//   same CFI libunwind and the C++ runtime use, so code without frame pointers unwinds right):
//   CFA = rsp or rbp + offset, return address at CFA-8, rbp restored from CFA-8k or unchanged.
//   Rules are cached per return address in a global direct-mapped table of 64-bit words
//   (tag | packed rule; written with one atomic store, so readers need no lock). A warm frame
//   costs a table load, one or two stack loads and a few ALU ops (libunwind's unw_backtrace,
//   with its cursor set-up, cost ~800 instructions for an 8-frame stack).
// * A frame whose rule is not of that simple form (CFA from another register or a DWARF
//   expression, a signal trampoline, a return address saved elsewhere, no FDE) marks its
//   return address "unsupported" and the whole capture is redone with libunwind, which
//   handles everything. A frame whose return address is undefined (_start, thread start) ends
//   the stack.
// * Misses: glibc's _dl_find_object (2.35 and later: lock-free and async-signal-safe, made for
//   unwinders) finds the object's PT_GNU_EH_FRAME binary-search table — dl_iterate_phdr, which
//   takes the loader's write lock, only with an older glibc; the FDE's CFA program runs up to
//   the return address - 1. Nothing is allocated. (The write lock is one glibc leaves held in a
//   child forked while another thread walked the modules: profiler/README.md, "Fork".)
#include "profiler/capture/cfi_unwinder.h"

#include "alloc/common.h"
#include "profiler/capture/cfa_program.h"
#include "profiler/capture/eh_frame_reader.h"

#ifdef HEAPKIT_CFI_UNWINDER

#include <dlfcn.h>
#include <dwarf.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstring>

namespace heapkit::prof {
namespace {

// In .text.startup with the rest of the heap-growth capture (HEAPKIT_ALWAYS_RUN_CODE).
asm(R"(
  .section .text.startup,"ax",@progbits
  .p2align 4
  .globl heapkit_caller_regs
  .hidden heapkit_caller_regs
  .type heapkit_caller_regs, @function
heapkit_caller_regs:
  .cfi_startproc
  movq (%rsp), %rax
  movq %rax, 0(%rdi)
  leaq 8(%rsp), %rax
  movq %rax, 8(%rdi)
  movq %rbp, 16(%rdi)
  ret
  .cfi_endproc
  .size heapkit_caller_regs, .-heapkit_caller_regs
)");

// ---- packed frame rules ----
// bits 0-1 kind, bit 2 CFA base is rbp (else rsp), bits 3-8 k: rbp saved at CFA-8k (0: rbp
// unchanged), bits 9-31 CFA offset. The low 32 bits of a cache word; 0 = no entry.
// PackedRule is the one encoder and decoder; CallerFrameOf the one place a step's addresses are
// derived from a rule (Step and CfiFullWalk both use it).
enum RuleKind : uint32_t { kNone = 0, kStep = 1, kOutermost = 2, kUnsupported = 3 };
constexpr uint32_t kUnsupportedRule = kUnsupported;
constexpr uint32_t kOutermostRule = kOutermost;

struct PackedRule {
  uint32_t bits;

  static constexpr uint32_t kMaxRbpSlot = 63;
  static constexpr int64_t kCfaOffsetLimit = int64_t{1} << 23;
  // A kStep rule. rbp_slot <= kMaxRbpSlot, 0 <= cfa_offset < kCfaOffsetLimit.
  static uint32_t Step(bool cfa_from_rbp, uint32_t rbp_slot, uint32_t cfa_offset) {
    return kStep | (cfa_from_rbp ? 4u : 0u) | (rbp_slot << 3) | (cfa_offset << 9);
  }
  RuleKind kind() const { return static_cast<RuleKind>(bits & 3); }
  bool cfa_from_rbp() const { return (bits & 4) != 0; }
  uint32_t rbp_slot() const { return (bits >> 3) & kMaxRbpSlot; }  // 0: rbp unchanged
  uintptr_t cfa_offset() const { return bits >> 9; }
};

// Where a kStep rule puts the caller of the frame (sp, rbp).
struct CallerFrame {
  uintptr_t cfa;            // the caller's stack pointer
  const uintptr_t* ra_at;   // the return address (the caller's pc)
  const uintptr_t* rbp_at;  // the caller's rbp (nullptr: rbp unchanged)
};

// False if the CFA does not move up the stack: a caller's CFA is above its callee's stack
// pointer (and not absurdly far). A rule that says otherwise (a corrupt rbp) is left to
// libunwind.
inline bool CallerFrameOf(PackedRule rule, uintptr_t sp, uintptr_t rbp, CallerFrame* out) {
  const uintptr_t cfa = (rule.cfa_from_rbp() ? rbp : sp) + rule.cfa_offset();
  if (__builtin_expect(cfa - sp - 1 >= (uintptr_t{1} << 30), 0)) return false;
  const uint32_t k = rule.rbp_slot();
  out->cfa = cfa;
  out->ra_at = reinterpret_cast<const uintptr_t*>(cfa - 8);
  out->rbp_at = k != 0 ? reinterpret_cast<const uintptr_t*>(cfa - 8 * k) : nullptr;
  return true;
}

constexpr int kRuleCacheBits = 16;
std::atomic<uint64_t> g_rule_cache[1u << kRuleCacheBits];

inline size_t CacheIndex(uintptr_t pc) { return pc & ((1u << kRuleCacheBits) - 1); }
// The tag (pc's high bits) together with the index identifies pc. User-space pcs are below
// 2^47, so the tag fits in 32 bits.
inline uint64_t CacheTag(uintptr_t pc) { return static_cast<uint64_t>(pc) >> kRuleCacheBits; }

// ---- .eh_frame reading (eh_frame_reader.h, cfa_program.h) ----

#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
// The .eh_frame_hdr of the object holding pc, or nullptr.
HEAPKIT_ALWAYS_RUN_CODE const uint8_t* EhFrameHdrOf(uintptr_t pc) {
  dl_find_object found;
  if (_dl_find_object(reinterpret_cast<void*>(pc), &found) != 0) return nullptr;
  return static_cast<const uint8_t*>(found.dlfo_eh_frame);
}
#else
struct FindFde {
  uintptr_t pc;
  const uint8_t* hdr = nullptr;  // .eh_frame_hdr of the object holding pc
};

HEAPKIT_ALWAYS_RUN_CODE int FindObjectCallback(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<FindFde*>(data);
  const ElfW(Phdr)* eh = nullptr;
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD) {
      uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
      if (f->pc >= lo && f->pc < lo + ph.p_memsz) contains = true;
    } else if (ph.p_type == PT_GNU_EH_FRAME) {
      eh = &ph;
    }
  }
  if (!contains) return 0;
  if (eh != nullptr) f->hdr = reinterpret_cast<const uint8_t*>(info->dlpi_addr + eh->p_vaddr);
  return 1;
}

HEAPKIT_ALWAYS_RUN_CODE const uint8_t* EhFrameHdrOf(uintptr_t pc) {
  FindFde f;
  f.pc = pc;
  dl_iterate_phdr(&FindObjectCallback, &f);
  return f.hdr;
}
#endif

// The FDE covering pc, from the .eh_frame_hdr binary-search table of the object holding it;
// nullptr if there is none (or the table is not the datarel sdata4 kind every toolchain emits).
const uint8_t* FindFdeFor(uintptr_t pc) {
  const uint8_t* eh = EhFrameHdrOf(pc);
  if (eh == nullptr) return nullptr;
  // .eh_frame_hdr: version 1, eh_frame_ptr_enc, fde_count_enc, table_enc, then the table.
  const uintptr_t hdr = reinterpret_cast<uintptr_t>(eh);
  Reader h{eh, eh + 4 + 16};
  if (eh[0] != 1 || eh[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4)) return nullptr;
  h.p = eh + 4;
  h.Encoded(eh[1], hdr);
  const uint64_t count = h.Encoded(eh[2], hdr);
  if (!h.ok || count == 0) return nullptr;
  const auto* table = reinterpret_cast<const int32_t*>(h.p);
  uint64_t lo = 0, hi = count;  // last entry with initial location <= pc
  while (hi - lo > 1) {
    uint64_t mid = (lo + hi) / 2;
    if (hdr + static_cast<intptr_t>(table[2 * mid]) <= pc)
      lo = mid;
    else
      hi = mid;
  }
  if (hdr + static_cast<intptr_t>(table[2 * lo]) > pc) return nullptr;
  return reinterpret_cast<const uint8_t*>(hdr + static_cast<intptr_t>(table[2 * lo + 1]));
}

// What the CIE says that the FDE's instructions need.
struct Cie {
  Reader instructions{nullptr, nullptr};
  uint64_t code_align = 0;
  int64_t data_align = 0;
  uint8_t fde_enc = DW_EH_PE_absptr;
  bool augmented = false;  // 'z': FDEs carry augmentation data
};

// Parses the CIE that starts at `cie` (its length field). False for anything the fast unwinder
// does not take: a 64-bit CIE, a return address column other than kDwarfReturnAddress, an
// augmentation other than z/L/P/R ('S', signal frame, included).
bool ParseCie(const uint8_t* cie, Cie* out) {
  uint32_t cie_len;
  memcpy(&cie_len, cie, 4);
  if (cie_len == 0 || cie_len == 0xffffffffu) return false;
  Reader cr{cie + 4, cie + 4 + cie_len};
  if (cr.Fixed<uint32_t>() != 0) return false;  // CIE id
  const uint8_t version = cr.Fixed<uint8_t>();
  const char* aug = reinterpret_cast<const char*>(cr.p);
  const size_t aug_len = strnlen(aug, static_cast<size_t>(cr.end - cr.p));
  cr.p += aug_len + 1;
  if (aug[0] != '\0' && aug[0] != 'z') return false;
  out->code_align = cr.Uleb();
  out->data_align = cr.Sleb();
  const uint64_t ra_reg = version == 1 ? cr.Fixed<uint8_t>() : cr.Uleb();
  if (ra_reg != kDwarfReturnAddress) return false;
  out->augmented = aug[0] == 'z';
  if (out->augmented) {
    const uint64_t len = cr.Uleb();
    const uint8_t* data_end = cr.p + len;
    for (size_t i = 1; i < aug_len && cr.ok; ++i) {
      switch (aug[i]) {
        case 'L': cr.Fixed<uint8_t>(); break;
        case 'P': {
          const uint8_t enc = cr.Fixed<uint8_t>();
          cr.Encoded(enc & ~DW_EH_PE_indirect, 0);
          break;
        }
        case 'R': out->fde_enc = cr.Fixed<uint8_t>(); break;
        default: return false;  // 'S' (signal frame) and anything unknown
      }
    }
    if (!cr.ok || data_end > cr.end) return false;
    cr.p = data_end;
  }
  out->instructions = cr;
  return cr.ok;
}

// The packed rule for a CFA-program result, or kUnsupportedRule / kOutermostRule.
uint32_t PackState(const CfaState& st) {
  if (st.ra == RegRule::kUndefined) return kOutermostRule;
  if (!st.cfa_simple || (st.cfa_reg != kDwarfRsp && st.cfa_reg != kDwarfRbp) ||
      st.ra != RegRule::kOffset || st.ra_off != -8 || st.cfa_off < 8 ||
      st.cfa_off >= PackedRule::kCfaOffsetLimit)
    return kUnsupportedRule;
  uint32_t k = 0;
  if (st.rbp == RegRule::kOffset) {
    if (st.rbp_off > -8 || st.rbp_off % 8 != 0 || -st.rbp_off / 8 > PackedRule::kMaxRbpSlot)
      return kUnsupportedRule;
    k = static_cast<uint32_t>(-st.rbp_off / 8);
  } else if (st.rbp != RegRule::kSameValue) {
    return kUnsupportedRule;
  }
  return PackedRule::Step(st.cfa_reg == kDwarfRbp, k, static_cast<uint32_t>(st.cfa_off));
}

// Computes the packed rule for return address `ra` (looks up ra - 1, inside the call).
uint32_t ComputeRule(uintptr_t ra) {
  const uintptr_t pc = ra - 1;
  const uint8_t* fde = FindFdeFor(pc);
  if (fde == nullptr) return kUnsupportedRule;
  // FDE: length, CIE pointer, pc begin, pc range, [augmentation data], instructions.
  uint32_t fde_len;
  memcpy(&fde_len, fde, 4);
  if (fde_len == 0 || fde_len == 0xffffffffu) return kUnsupportedRule;
  Reader fr{fde + 4, fde + 4 + fde_len};
  const uint8_t* cie_ptr_field = fr.p;
  const int32_t cie_off = fr.Fixed<int32_t>();
  if (cie_off == 0) return kUnsupportedRule;
  Cie cie;
  if (!ParseCie(cie_ptr_field - cie_off, &cie)) return kUnsupportedRule;
  const uintptr_t pc_begin = fr.Encoded(cie.fde_enc, 0);
  const uintptr_t pc_range = fr.Encoded(cie.fde_enc & kEhPeFormatMask, 0);
  if (!fr.ok || pc < pc_begin || pc >= pc_begin + pc_range) return kUnsupportedRule;
  if (cie.augmented) {
    const uint64_t len = fr.Uleb();
    if (!fr.Has(len)) return kUnsupportedRule;
    fr.p += len;
  }
  CfaState st;
  if (!RunCfa(cie.instructions, 0, UINTPTR_MAX, cie.code_align, cie.data_align, cie.fde_enc,
              nullptr, &st))
    return kUnsupportedRule;
  const CfaState initial = st;
  if (!RunCfa(fr, pc_begin, pc, cie.code_align, cie.data_align, cie.fde_enc, &initial, &st))
    return kUnsupportedRule;
  return PackState(st);
}

// Cache miss: computes the rule and stores it (out of line, so that the warm loop below keeps
// its state in registers).
__attribute__((noinline, cold)) uint32_t MissRule(uintptr_t ra) {
  const uint32_t rule = ComputeRule(ra);
  if (!tls_cfi_no_cache_fill)
    g_rule_cache[CacheIndex(ra)].store((CacheTag(ra) << 32) | rule, std::memory_order_relaxed);
  return rule;
}

inline uint32_t RuleFor(uintptr_t ra) {
  const uint64_t v = g_rule_cache[CacheIndex(ra)].load(std::memory_order_relaxed);
  // An empty entry (0) never matches: user-space pcs are above 2^16, so their tags are not 0.
  if (__builtin_expect((v >> 32) == CacheTag(ra), 1)) return static_cast<uint32_t>(v);
  return MissRule(ra);
}

// One step from the frame (pc, sp, rbp) to its caller. False at the outermost frame or when
// the frame needs libunwind (*unsupported set).
inline bool Step(uintptr_t& pc, uintptr_t& sp, uintptr_t& rbp, bool* unsupported) {
  const PackedRule rule{RuleFor(pc)};
  if (__builtin_expect(rule.kind() != kStep, 0)) {
    *unsupported = rule.kind() != kOutermost;
    return false;
  }
  CallerFrame caller;
  if (!CallerFrameOf(rule, sp, rbp, &caller)) {
    *unsupported = true;
    return false;
  }
  if (caller.rbp_at != nullptr) rbp = *caller.rbp_at;
  pc = *caller.ra_at;
  sp = caller.cfa;
  return pc != 0;
}

// The walk below the memo's depth limit: frames stepped one by one, nothing recorded.
int PlainWalk(const CallerRegs& regs, int drop, void** out, int max) {
  uintptr_t pc = regs.pc, sp = regs.sp, rbp = regs.rbp;
  bool unsupported = false;
  for (int i = 0; i < drop; ++i) {
    if (!Step(pc, sp, rbp, &unsupported)) return unsupported ? -1 : 0;
  }
  int n = 0;
  while (n < max) {
    out[n++] = reinterpret_cast<void*>(pc);
    if (!Step(pc, sp, rbp, &unsupported)) return unsupported ? -1 : n;
  }
  return n;
}

// Walks up to kMemoFrames frames into the (reset) memo `m`, recording the words they depend on
// (cfi_unwinder.h, "What the frames depend on"). Returns the frame count if the walk reached
// the outermost frame, 0 if the stack is deeper than the memo, -1 if a frame needs libunwind.
int RecordWalk(const CallerRegs& regs, WalkMemo& m) {
  uintptr_t pc = regs.pc, sp = regs.sp, rbp = regs.rbp;
  int frames = 0;
  // Where the current rbp came from: nullptr = regs.rbp, else the stack word it was restored
  // from; rbp_checked: that dependency is already recorded.
  const uintptr_t* rbp_from = nullptr;
  bool rbp_checked = false;
  while (frames < kMemoFrames) {
    m.pcs[frames] = pc;
    const PackedRule rule{RuleFor(pc)};
    if (rule.kind() != kStep) return rule.kind() == kOutermost ? frames + 1 : -1;
    if (rule.cfa_from_rbp() && !rbp_checked) {  // this CFA uses the current rbp
      rbp_checked = true;
      if (rbp_from == nullptr) {
        m.check_rbp0 = true;
      } else {
        m.check[m.checks++] = {rbp_from, rbp};
      }
    }
    CallerFrame caller;
    if (!CallerFrameOf(rule, sp, rbp, &caller)) return -1;
    if (caller.rbp_at != nullptr) {
      rbp_from = caller.rbp_at;
      rbp = *rbp_from;
      rbp_checked = false;
    }
    pc = *caller.ra_at;
    m.check[m.checks++] = {caller.ra_at, pc};
    sp = caller.cfa;
    ++frames;
    if (pc == 0) return frames;
  }
  return 0;
}

}  // namespace

// The walk memo (WalkMemo, MemoStillValid, ...) is in cfi_unwinder.h, where CfiBacktrace's memo
// hit is inline.

// A full walk, recorded in the memo for next time when the stack ends within kMemoFrames
// frames. Out of line, so that the memo hit needs no register saves.
HEAPKIT_ALWAYS_RUN_CODE __attribute__((noinline)) int CfiFullWalk(const CallerRegs& regs, int drop,
                                                                  void** out, int max,
                                                                  uint64_t* walk_id, WalkMemo& m) {
  if (walk_id != nullptr) *walk_id = 0;
  // First: a memo under rewrite never matches (CaptureWouldRepeat reads it unguarded).
  m.pc0 = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  m.frames = 0;
  m.checks = 0;
  m.groups = 0;
  m.check_rbp0 = false;
  m.id = ++m.next_id;
  const int frames = RecordWalk(regs, m);
  if (frames < 0) return -1;
  if (frames == 0) return PlainWalk(regs, drop, out, max);  // deeper than the memo
  while (m.checks == 0 || m.checks % kCheckGroup != 0) m.check[m.checks++] = {&kMemoPadWord, 0};
  m.groups = m.checks / kCheckGroup;
  m.pc0 = regs.pc;
  m.sp0 = regs.sp;
  // Kept only when a CFA uses it (then it is a frame pointer): in code without frame pointers
  // rbp may hold a heap pointer, and the leak checker scans this TLS.
  m.rbp0 = m.check_rbp0 ? regs.rbp : 0;
  m.frames = frames;
  if (walk_id != nullptr) *walk_id = WalkId(m, drop, max);
  return CfiCopyFrames(m, drop, out, max);
}

__thread WalkMemo tls_cfi_memo __attribute__((tls_model("initial-exec")));
__thread WalkMemo tls_cfi_free_memo __attribute__((tls_model("initial-exec")));
__thread bool tls_cfi_no_cache_fill __attribute__((tls_model("initial-exec"))) = false;

int CfiCopyFrames(const WalkMemo& m, int drop, void** out, int max) {
  int n = 0;
  for (int i = drop; i < m.frames && n < max; ++i) out[n++] = reinterpret_cast<void*>(m.pcs[i]);
  return n;
}

}  // namespace heapkit::prof

#endif  // HEAPKIT_CFI_UNWINDER
