#include "profiler/symbolize/module_index.h"

#include <dwarf.h>
#include <gelf.h>

#include <algorithm>
#include <cstring>

#include "profiler/symbolize/function_name.h"

namespace heapkit::pprof {

ModuleIndex::ModuleIndex(Dwfl_Module* mod, std::string path) : mod_(mod), path_(std::move(path)) {}

Dwarf* ModuleIndex::GetDwarf() {
  if (!dwarf_loaded_) {
    dwarf_loaded_ = true;
    dwarf_ = dwfl_module_getdwarf(mod_, &dwarf_bias_);
  }
  return dwarf_;
}

ModuleIndex::~ModuleIndex() = default;

void ModuleIndex::LoadSymbols() {
  int n = dwfl_module_getsymtab(mod_);
  if (n <= 0) return;
  symbols_.reserve(size_t(n));
  struct Cand {
    Symbol s;
    int rank;
  };
  std::vector<Cand> cands;
  cands.reserve(size_t(n));
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    Elf* elf = nullptr;
    Dwarf_Addr bias = 0;
    const char* name = dwfl_module_getsym_info(mod_, i, &sym, &addr, &shndx, &elf, &bias);
    if (name == nullptr || *name == '\0') continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    if (sym.st_shndx == SHN_UNDEF || addr == 0) continue;
    int bind = GELF_ST_BIND(sym.st_info);
    // Prefer global over weak over local; then names without a leading '_'.
    int rank = (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2) * 2 + (name[0] == '_' ? 1 : 0);
    cands.push_back({{addr, addr + sym.st_size, name}, rank});
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.s.start != b.s.start) return a.s.start < b.s.start;
    if (a.rank != b.rank) return a.rank < b.rank;
    size_t la = strlen(a.s.name), lb = strlen(b.s.name);
    if (la != lb) return la < lb;
    return strcmp(a.s.name, b.s.name) < 0;
  });
  for (const Cand& c : cands) {
    if (!symbols_.empty() && symbols_.back().start == c.s.start) {
      if (symbols_.back().end < c.s.end) symbols_.back().end = c.s.end;
      continue;
    }
    symbols_.push_back(c.s);
  }
}

const ModuleIndex::Symbol* ModuleIndex::FindSymbol(uint64_t pc) {
  if (!symbols_loaded_) {
    symbols_loaded_ = true;
    LoadSymbols();
  }
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), pc,
                             [](uint64_t a, const Symbol& s) { return a < s.start; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  if (it->end > it->start) {
    if (pc < it->end) return &*it;
    // pc is in a gap after a sized symbol: look back a little for an enclosing larger one.
    for (int k = 0; k < 4 && it != symbols_.begin(); ++k) {
      --it;
      if (pc < it->end) return &*it;
    }
    return nullptr;
  }
  return &*it;  // size-0 symbol: nearest preceding
}

const std::string& ModuleIndex::Clean(const char* raw) {
  auto it = clean_names_.find(raw);
  if (it != clean_names_.end()) return it->second;
  return clean_names_.emplace(raw, CleanFunctionName(raw)).first->second;
}

std::string ModuleIndex::FileName(CuIndex* cu, int index) {
  if (index < 0) return std::string();
  if (cu->files == nullptr) {
    if (dwarf_getsrcfiles(&cu->cudie, &cu->files, &cu->nfiles) != 0) {
      cu->files = nullptr;
      cu->nfiles = 0;
    }
  }
  if (cu->files == nullptr || size_t(index) >= cu->nfiles) return std::string();
  const char* f = dwarf_filesrc(cu->files, size_t(index), nullptr, nullptr);
  return f ? std::string(f) : std::string();
}

namespace {

const char* EntryName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  const char* n = nullptr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) != nullptr ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr) != nullptr) {
    n = dwarf_formstring(&attr);
  }
  if (n == nullptr && dwarf_attr_integrate(die, DW_AT_name, &attr) != nullptr) {
    n = dwarf_formstring(&attr);
  }
  return n;
}

}  // namespace

void ModuleIndex::Walk(CuIndex* cu, Dwarf_Die* parent_die, int parent, int depth) {
  if (depth > 256) return;  // malformed DWARF: never recurse without bound
  Dwarf_Die child;
  if (dwarf_child(parent_die, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    switch (tag) {
      case DW_TAG_subprogram:
      case DW_TAG_inlined_subroutine: {
        Entry e;
        Dwarf_Addr base = 0, lo = 0, hi = 0;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
          if (hi > lo) e.ranges.emplace_back(lo, hi);
        }
        int me = parent;
        if (!e.ranges.empty()) {
          e.raw_name = EntryName(&child);
          // Integrates DW_AT_abstract_origin/DW_AT_specification: an inlined instance or an
          // out-of-line copy gets the line of the function's own definition.
          if (dwarf_decl_line(&child, &e.decl_line) != 0) e.decl_line = 0;
          if (tag == DW_TAG_inlined_subroutine) {
            Dwarf_Attribute attr;
            Dwarf_Word w = 0;
            if (dwarf_attr(&child, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0) {
              e.call_file = int(w);
            }
            if (dwarf_attr(&child, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0) {
              e.call_line = int(w);
            }
          }
          me = int(cu->entries.size());
          bool top = tag == DW_TAG_subprogram || parent < 0;
          if (top) {
            for (auto& r : e.ranges) cu->tops.push_back({r.first, r.second, uint32_t(me)});
          } else {
            cu->entries[size_t(parent)].children.push_back(uint32_t(me));
          }
          cu->entries.push_back(std::move(e));
        }
        Walk(cu, &child, me, depth + 1);
        break;
      }
      case DW_TAG_namespace:
      case DW_TAG_lexical_block:
      case DW_TAG_try_block:
      case DW_TAG_catch_block:
      case DW_TAG_module: Walk(cu, &child, parent, depth + 1); break;
      case DW_TAG_structure_type:
      case DW_TAG_class_type:
        // Only declarations live here for GCC, but clang may nest definitions' scopes; cheap.
        if (parent < 0) Walk(cu, &child, parent, depth + 1);
        break;
      default: break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

ModuleIndex::CuIndex* ModuleIndex::GetCu(Dwarf_Die* cudie) {
  uint64_t key = dwarf_dieoffset(cudie);
  auto it = cus_.find(key);
  if (it != cus_.end()) return it->second.get();
  auto cu = std::make_unique<CuIndex>();
  cu->cudie = *cudie;
  Walk(cu.get(), cudie, -1, 0);
  std::sort(cu->tops.begin(), cu->tops.end(), [](const Top& a, const Top& b) {
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.hi > b.hi;
  });
  CuIndex* raw = cu.get();
  cus_.emplace(key, std::move(cu));
  return raw;
}

// A frame named by the symbol table alone (no DWARF subprogram covers the address): no
// declaration line.
SourceFrame ModuleIndex::SymbolFrame(const Symbol* sym, const std::string& name, std::string file,
                                     int line) const {
  SourceFrame f;
  f.function = name;
  f.file = std::move(file);
  f.line = line;
  f.module = path_;
  f.linkage_name = sym->name;
  return f;
}

std::vector<uint32_t> ModuleIndex::InlineChain(const CuIndex& cu, uint64_t dpc) {
  // Containing top-level entry: the last top with lo <= dpc that contains it.
  auto it = std::upper_bound(cu.tops.begin(), cu.tops.end(), dpc,
                             [](uint64_t a, const Top& t) { return a < t.lo; });
  int top = -1;
  for (int k = 0; k < 64 && it != cu.tops.begin(); ++k) {
    --it;
    if (dpc >= it->lo && dpc < it->hi) {
      top = int(it->entry);
      break;
    }
  }
  if (top < 0) return {};
  std::vector<uint32_t> chain{uint32_t(top)};
  for (int guard = 0; guard < 256; ++guard) {
    const Entry& cur = cu.entries[chain.back()];
    int next = -1;
    for (uint32_t c : cur.children) {
      if (cu.entries[c].Contains(dpc)) {
        next = int(c);
        break;
      }
    }
    if (next < 0) break;
    chain.push_back(uint32_t(next));
  }
  return chain;
}

void ModuleIndex::AppendInlineFrames(CuIndex* cu, const std::vector<uint32_t>& chain, uint64_t pc,
                                     std::string file, int line, std::vector<SourceFrame>* out) {
  // An entry without a name takes the symbol's, looked up once.
  bool sym_found = false;
  const Symbol* sym = nullptr;
  for (size_t i = chain.size(); i-- > 0;) {
    const Entry& e = cu->entries[chain[i]];
    SourceFrame f;
    if (e.raw_name) {
      f.function = Clean(e.raw_name);
      f.linkage_name = e.raw_name;
      f.start_line = e.decl_line;
    }
    if (f.function.empty()) {
      if (!sym_found) {
        sym_found = true;
        sym = FindSymbol(pc);
      }
      if (sym) {
        f.function = Clean(sym->name);
        f.linkage_name = sym->name;
      }
    }
    f.file = file;
    f.line = line;
    f.inlined = i != 0;
    f.module = path_;
    out->push_back(std::move(f));
    file = FileName(cu, e.call_file);
    line = e.call_line;
  }
}

bool ModuleIndex::LookupDwarf(uint64_t pc, std::vector<SourceFrame>* out) {
  const Dwarf_Addr dpc = pc - dwarf_bias_;
  Dwarf_Die cudie;
  if (dwarf_addrdie(dwarf_, dpc, &cudie) == nullptr) return false;
  CuIndex* cu = GetCu(&cudie);
  std::string line_file;
  int line_no = 0;
  if (Dwarf_Line* line = dwarf_getsrc_die(&cudie, dpc)) {
    const char* f = dwarf_linesrc(line, nullptr, nullptr);
    if (f) line_file = f;
    int l = 0;
    if (dwarf_lineno(line, &l) == 0) line_no = l;
  }
  const std::vector<uint32_t> chain = InlineChain(*cu, dpc);
  if (!chain.empty()) {
    AppendInlineFrames(cu, chain, pc, std::move(line_file), line_no, out);
    return true;
  }
  // No function entry holds the address: the symbol's name, with the line table's line.
  const Symbol* sym = FindSymbol(pc);
  if (sym == nullptr) return false;
  out->push_back(SymbolFrame(sym, Clean(sym->name), line_file, line_no));
  return true;
}

bool ModuleIndex::Lookup(uint64_t pc, std::vector<SourceFrame>* out) {
  // The symbol table is read only when DWARF does not name the address (most lookups in a
  // module with debug info never need it).
  if (GetDwarf() != nullptr && LookupDwarf(pc, out)) return true;
  const Symbol* sym = FindSymbol(pc);
  if (sym == nullptr) return false;
  out->push_back(SymbolFrame(sym, Clean(sym->name), std::string(), 0));
  return true;
}

}  // namespace heapkit::pprof
