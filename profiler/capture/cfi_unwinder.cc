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
//   child forked while another thread walked the modules: profiler/capture/README.md, "Fork".)
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

// ---- recording a walk in the memo ----

// The state of a walk under way: the frame's registers, and where its rbp came from.
struct WalkState {
  uintptr_t pc, sp, rbp;
  const uintptr_t* rbp_from = nullptr;  // the stack word rbp was restored from; nullptr: regs.rbp
  int rbp_slot = -1;  // the check that pins this rbp, once a CFA used it (-1: none yet)
  int rbp_mark = 0;   // the first frame with this incoming rbp not yet marked as using it
  explicit WalkState(const CallerRegs& r) : pc(r.pc), sp(r.sp), rbp(r.rbp) {}
};

enum class StepEnd { kStepped, kOutermost, kUnsupported };

// While frames are recorded, tail_checks[i] holds frame i's first check and rbp_dep[i] its rbp
// slot + 1 (0: none), as indices from the start; EndRelative turns them into distances from
// the end once the walk's checks are all known.
inline __attribute__((always_inline)) void MarkRbpUse(WalkMemo& m, WalkState& s, int upto) {
  for (int f = s.rbp_mark; f < upto; ++f) {
    m.rbp_dep[f] = static_cast<uint16_t>(s.rbp_slot + 1);
    m.rbp_in[f] = s.rbp;
  }
  s.rbp_mark = upto;
}

void EndRelative(WalkMemo& m, int lo, int hi) {
  const int total = m.walk_checks;
  for (int i = lo; i < hi; ++i) {
    m.tail_checks[i] = static_cast<uint16_t>(total - m.tail_checks[i]);
    if (m.rbp_dep[i] != 0) m.rbp_dep[i] = static_cast<uint16_t>(total - (m.rbp_dep[i] - 1));
  }
}

// Records frame m.frames (the state's) in the memo and steps to its caller: the words the
// step read become checks, and when the frame's CFA uses rbp, the frames since rbp was last
// restored are marked as using it (cfi_unwinder.h, rbp_dep). kOutermost: the frame is the
// last one (counted); kUnsupported: libunwind is needed.
inline __attribute__((always_inline)) StepEnd RecordStep(WalkState& s, WalkMemo& m) {
  const int i = m.frames;
  m.pcs[i] = s.pc;
  m.sps[i] = s.sp;
  m.tail_checks[i] = static_cast<uint16_t>(m.walk_checks);
  m.rbp_dep[i] = 0;
  m.rbp_in[i] = 0;
  const PackedRule rule{RuleFor(s.pc)};
  if (rule.kind() != kStep) {
    if (rule.kind() != kOutermost) return StepEnd::kUnsupported;
    m.frames = i + 1;
    return StepEnd::kOutermost;
  }
  if (rule.cfa_from_rbp()) {  // this CFA uses the current rbp
    if (s.rbp_slot < 0) {
      s.rbp_slot = m.walk_checks++;
      // The start rbp is compared apart (check_rbp0); its slot holds the pad word, so that a
      // walk that later reuses these frames has a place for its own rbp's check.
      if (s.rbp_from == nullptr) {
        m.check_rbp0 = true;
        m.check[s.rbp_slot] = {&kMemoPadWord, 0};
      } else {
        m.check[s.rbp_slot] = {s.rbp_from, s.rbp};
      }
    }
    MarkRbpUse(m, s, i + 1);
  }
  CallerFrame caller;
  if (!CallerFrameOf(rule, s.sp, s.rbp, &caller)) return StepEnd::kUnsupported;
  if (caller.rbp_at != nullptr) {
    s.rbp_from = caller.rbp_at;
    s.rbp = *s.rbp_from;
    s.rbp_slot = -1;
    s.rbp_mark = i + 1;
  }
  s.pc = *caller.ra_at;
  m.check[m.walk_checks++] = {caller.ra_at, s.pc};
  s.sp = caller.cfa;
  m.frames = i + 1;
  return s.pc == 0 ? StepEnd::kOutermost : StepEnd::kStepped;
}

// Walks up to kMemoFrames frames into the (reset) memo `m`. Returns the frame count if the
// walk reached the outermost frame, 0 if the stack is deeper than the memo (*beyond: the state
// of the frame after the memo's last, where the walk goes on), -1 if a frame needs libunwind.
int RecordWalk(const CallerRegs& regs, WalkMemo& m, CallerRegs* beyond) {
  WalkState s(regs);
  while (m.frames < kMemoFrames) {
    const StepEnd end = RecordStep(s, m);
    if (end == StepEnd::kUnsupported) return -1;
    if (end == StepEnd::kOutermost) {
      EndRelative(m, 0, m.frames);
      return m.frames;
    }
  }
  *beyond = {s.pc, s.sp, s.rbp};
  return 0;
}

// ---- Reusing the outer frames ----
// A walk from regs steps (recording nothing) until it reaches a frame j of the memo's walk at
// the same pc and sp — the memo's sps rise, so one index follows the walk up — with the same
// rbp where the walk from j uses it, and the memo's checks of the walk from j (all but
// rbp_dep[j]'s, which pins an rbp the new walk has of its own) still hold. Then the memo's
// frames j... and their checks move to follow the new walk's k frames below the junction,
// which are walked again, recorded this time (the frames below a junction are few, and
// stepping them twice needs no buffer on the stack, which may be a small signal stack), and
// rbp_dep[j]'s slot takes the new walk's check of that rbp.

// The point where a walk from regs joins the memo's walk.
struct Junction {
  int k;       // frames of the new walk below it
  int j;       // the memo's frame it is
  int checks;  // the checks the new walk records for its k frames
  // The whole walk has more frames than the memo holds.
  bool Deeper(const WalkMemo& m) const { return k + (m.frames - j) > kMemoFrames; }
};

// Whether the checks [lo, *ok_from) hold: a group at a time from the top, then one by one
// (within a group that differs, down to the first check that does). *ok_from moves down over
// the checks found to hold.
bool HoldDown(const WordCheck* c, int lo, int* ok_from) {
  int i = *ok_from;
  if (i <= lo) return true;
  while (i - lo >= kCheckGroup && !GroupDiffers(c + i - kCheckGroup)) i -= kCheckGroup;
  while (i > lo && *c[i - 1].at == c[i - 1].value) --i;
  *ok_from = i;
  return i == lo;
}

// True if the memo's checks of the walk from frame j hold, but for rbp_dep[j]'s (not read:
// its word is below frame j, in frames the new walk replaces). *ok_from: every check from
// there on is known to hold (junctions are tried upwards, so most words are read once).
bool OuterChecksHold(const WalkMemo& m, int j, int* ok_from) {
  const int lo = m.walk_checks - m.tail_checks[j];
  const int skip = m.rbp_dep[j] != 0 ? m.walk_checks - m.rbp_dep[j] : -1;
  if (skip < lo) return HoldDown(m.check, lo, ok_from);
  if (!HoldDown(m.check, skip + 1, ok_from)) return false;
  int below = skip;  // the checks under the slot: not contiguous with *ok_from's
  return HoldDown(m.check, lo, &below);
}

bool FindJunction(const CallerRegs& regs, const WalkMemo& m, Junction* out) {
  if (m.frames == 0) return false;
  WalkState s(regs);
  int checks = 0;
  int j = 0;
  int ok_from = m.walk_checks;
  for (int k = 0; k < kMemoFrames; ++k) {
    while (m.sps[j] < s.sp)
      if (++j == m.frames) return false;  // above the memo's outermost frame
    // The walk from j uses its incoming rbp: the same one, and pinned by a slot of the walk
    // from j (else by a check in the frames below, when a CFA there used that rbp too: rare,
    // not taken).
    const int dep = m.rbp_dep[j];
    if (m.sps[j] == s.sp && m.pcs[j] == s.pc &&
        (dep == 0 || (dep <= m.tail_checks[j] && m.rbp_in[j] == s.rbp)) &&
        OuterChecksHold(m, j, &ok_from)) {
      *out = {k, j, checks};
      return true;
    }
    const PackedRule rule{RuleFor(s.pc)};
    if (rule.kind() != kStep) return false;
    if (rule.cfa_from_rbp() && s.rbp_slot < 0) {
      s.rbp_slot = checks;
      ++checks;
    }
    CallerFrame caller;
    if (!CallerFrameOf(rule, s.sp, s.rbp, &caller)) return false;
    if (caller.rbp_at != nullptr) {
      s.rbp = *caller.rbp_at;
      s.rbp_slot = -1;
    }
    s.pc = *caller.ra_at;
    ++checks;
    s.sp = caller.cfa;
    if (s.pc == 0) return false;
  }
  return false;
}

// The memo (being rewritten, its walk still in place) made the walk from regs that joins it at
// `at`. False if the result would be deeper than the memo (nothing of it is then usable).
bool RecordJoinedWalk(const CallerRegs& regs, const Junction& at, WalkMemo& m) {
  const int tail = m.frames - at.j;
  const int tail_checks = m.tail_checks[at.j];
  const int from = m.walk_checks - tail_checks;
  if (at.Deeper(m)) return false;
  const int total = at.checks + tail_checks;
  const int joined_slot = m.rbp_dep[at.j] != 0 ? total - m.rbp_dep[at.j] : -1;
  // The memo's frames from j on, to follow the k new ones (memmove: either way may overlap);
  // their check positions, from the end, stay.
  if (at.k != at.j) {
    memmove(&m.check[at.checks], &m.check[from], sizeof(m.check[0]) * tail_checks);
    memmove(&m.pcs[at.k], &m.pcs[at.j], sizeof(m.pcs[0]) * tail);
    memmove(&m.sps[at.k], &m.sps[at.j], sizeof(m.sps[0]) * tail);
    memmove(&m.tail_checks[at.k], &m.tail_checks[at.j], sizeof(m.tail_checks[0]) * tail);
    memmove(&m.rbp_dep[at.k], &m.rbp_dep[at.j], sizeof(m.rbp_dep[0]) * tail);
    memmove(&m.rbp_in[at.k], &m.rbp_in[at.j], sizeof(m.rbp_in[0]) * tail);
  } else if (at.checks != from) {
    memmove(&m.check[at.checks], &m.check[from], sizeof(m.check[0]) * tail_checks);
  }
  // The k frames below the junction, recorded.
  m.frames = 0;
  m.walk_checks = 0;
  m.check_rbp0 = false;
  WalkState s(regs);
  for (int i = 0; i < at.k; ++i)
    if (RecordStep(s, m) != StepEnd::kStepped) return false;
  // The same walk as FindJunction's (the stack below a running frame does not change under it).
  if (m.walk_checks != at.checks || s.pc != m.pcs[at.k] || s.sp != m.sps[at.k]) return false;
  if (joined_slot >= 0) {
    // The walk from the junction uses its incoming rbp, s.rbp (== rbp_in[j]): pinned by the
    // new walk's own check of it, or by the slot, now holding that check.
    if (s.rbp_slot >= 0) {
      m.check[joined_slot] = {&kMemoPadWord, 0};
    } else if (s.rbp_from != nullptr) {
      m.check[joined_slot] = {s.rbp_from, s.rbp};
      s.rbp_slot = joined_slot;
    } else {
      m.check[joined_slot] = {&kMemoPadWord, 0};
      m.check_rbp0 = true;
      s.rbp_slot = joined_slot;
    }
    MarkRbpUse(m, s, at.k);
  }
  m.walk_checks = total;
  EndRelative(m, 0, at.k);
  m.frames = at.k + tail;
  ++m.outer_reuses;
  return true;
}

}  // namespace

// The walk memo (WalkMemo, MemoStillValid, ...) is in cfi_unwinder.h, where CfiBacktrace's memo
// hit is inline.

// A full walk (or one that joins the memo's walk), recorded in the memo for next time when the
// stack ends within kMemoFrames frames. Out of line, so that the memo hit needs no register
// saves.
HEAPKIT_ALWAYS_RUN_CODE __attribute__((noinline)) int CfiFullWalk(const CallerRegs& regs, int drop,
                                                                  void** out, int max,
                                                                  uint64_t* walk_id, WalkMemo& m) {
  if (walk_id != nullptr) *walk_id = 0;
  Junction at{};
  const bool joins = FindJunction(regs, m, &at);
  const bool deeper = joins && at.Deeper(m);  // known deeper than the memo: no recording
  // First: a memo under rewrite never matches (CaptureWouldRepeat reads it unguarded).
  m.pc0 = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  m.groups = 0;
  m.checks = 0;
  m.id = ++m.next_id;
  int frames;
  CallerRegs beyond = {0, 0, 0};  // pc 0: not reached
  if (deeper) {
    frames = 0;
  } else if (joins && RecordJoinedWalk(regs, at, m)) {
    frames = m.frames;
  } else {
    m.frames = 0;
    m.walk_checks = 0;
    m.check_rbp0 = false;
    frames = RecordWalk(regs, m, &beyond);
  }
  if (frames <= 0) {
    if (frames < 0) {
      m.frames = 0;
      return -1;
    }
    // Deeper than the memo: the frames recorded, then a plain walk from the next one on.
    int n = 0;
    if (beyond.pc != 0) {
      n = CfiCopyFrames(m, drop, out, max);
      drop = drop > m.frames ? drop - m.frames : 0;
    }
    m.frames = 0;
    if (beyond.pc == 0) return PlainWalk(regs, drop, out, max);
    if (n == max) return n;
    const int rest = PlainWalk(beyond, drop, out + n, max - n);
    return rest < 0 ? -1 : n + rest;
  }
  m.checks = m.walk_checks;
  while (m.checks == 0 || m.checks % kCheckGroup != 0) m.check[m.checks++] = {&kMemoPadWord, 0};
  m.groups = m.checks / kCheckGroup;
  m.pc0 = regs.pc;
  m.sp0 = regs.sp;
  // Kept only when a CFA uses it (then it is a frame pointer): in code without frame pointers
  // rbp may hold a heap pointer, and the leak checker scans this TLS.
  m.rbp0 = m.check_rbp0 ? regs.rbp : 0;
  if (walk_id != nullptr) *walk_id = WalkId(m, drop, max);
  return CfiCopyFrames(m, drop, out, max);
}

__thread WalkMemo tls_cfi_memo __attribute__((tls_model("initial-exec")));
__thread WalkMemo tls_cfi_free_memo __attribute__((tls_model("initial-exec")));
__thread bool tls_cfi_no_cache_fill __attribute__((tls_model("initial-exec"))) = false;

int CfiCopyFrames(const WalkMemo& m, int drop, void** out, int max) {
  const int n = FrameCount(m, drop, max);
  if (n > 0) memcpy(out, &m.pcs[drop], sizeof(void*) * static_cast<size_t>(n));
  return n;
}

}  // namespace heapkit::prof

#endif  // HEAPKIT_CFI_UNWINDER
